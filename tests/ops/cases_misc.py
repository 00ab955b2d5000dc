"""OpCase rows for misc.py: the graph-shaping identities.

Forward is the identity of the first input (NumPy copy). BlockGrad's gradient is zero by
design, so finite differences (which see the identity) do not apply: test_misc.py checks
the zero. _identity_with_attr_like_rhs passes dy to lhs, and rhs only lends its shape,
so only lhs is differentiated here.
"""

from __future__ import annotations

from op_db import OpCase

CASES = [
    OpCase("BlockGrad", shapes=[(3, 4)], reference=lambda x: x, grad=False),
    OpCase("stop_gradient", shapes=[(2, 3, 2)], reference=lambda x: x, grad=False),
    OpCase(
        "_identity_with_attr_like_rhs",
        shapes=[(3, 4), (3, 4)],
        reference=lambda lhs, rhs: lhs,
        grad_inputs=[0],
    ),
]
