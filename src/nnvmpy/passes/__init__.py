"""The graph passes, one per module; importing this package registers them all.

`nnvmpy.graph.apply_passes` imports it on first use, so `import nnvmpy` stays light and
nnvmpy.graph never imports the passes at module level (they import nnvmpy.graph).
"""

from . import (  # noqa: F401 - imported for their registrations
    amp_bfloat16,
    channels_last,
    eliminate_common_expr,
    fuse_bn_relu,
    fuse_epilogue,
    fuse_pointwise,
    gradient,
    infer_shape,
    infer_type,
    plan_memory,
    saveload_json,
    simplify_inference,
)
from .saveload_json import graph_from_json, graph_to_json

__all__ = ["graph_from_json", "graph_to_json"]
