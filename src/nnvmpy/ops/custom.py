"""`Custom` among the built-in ops: registered on `import nnvmpy`, not first on nd.Custom.

The op itself (its FStatefulCompute hands forward/backward to Python CustomOp classes)
lives with its front-end in operator/custom.py; importing that module registers it.
"""

from ..operator import custom as _custom  # noqa: F401 - registers Custom and _backward_Custom
