"""Control-flow ops holding subgraphs: `_foreach`, `_while_loop`, `_cond` (MXNet's), and
`_CachedOp`, which graph partitioning (passes/partition.py) makes.

Their front-ends (nd/sym.contrib.foreach, while_loop, cond) are in
nnvmpy/contrib/control_flow.py; the subgraphs run inside the op's compute
(runner.py), so the executor and the passes treat these as ordinary ops.
"""

from . import cached_op, cond, foreach, while_loop  # noqa: F401 - imported for their registrations
