"""OpCase row for contrib_hawkes.py (the gradient: test_contrib_hawkes.py, since finite
differences through the generic check would also perturb the int32 marks)."""

from __future__ import annotations

from hawkes_reference import hawkes_inputs, hawkesll_ref
from op_db import OpCase

CASES = [
    OpCase(
        "_contrib_hawkesll",
        shapes=[(3, 2), (2,), (2,), (3, 2), (3, 6), (3, 6), (3,), (3,)],
        reference=hawkesll_ref,
        inputs=lambda rng, dt: hawkes_inputs(rng, dt),
        grad=False,
        check_op=False,  # check_op draws every input in one float dtype; marks is int32
    ),
]
