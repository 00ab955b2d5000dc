"""OpCase rows for ops/copyto.py (_copyto: a copy, gradient dy) and
ops/zeros_without_dtype.py (zeros of a type flag's dtype)."""

from __future__ import annotations

import numpy as np
from op_db import OpCase

CASES = [
    OpCase("_copyto", [(3, 4)], lambda x: x.copy(), dtypes=(np.float32, np.float64, np.int32)),
    OpCase(
        "_zeros_without_dtype",
        [],
        lambda shape, dtype: np.zeros(shape),
        params={"shape": (2, 3), "dtype": 6},  # MXNet's type flag of int64
        dtypes=(np.int64,),
        grad=False,
    ),
    OpCase(
        "_zeros_without_dtype",
        [],
        lambda shape, dtype: np.zeros(shape),
        params={"shape": (4,), "dtype": 2},  # float16
        dtypes=(np.float16,),
        grad=False,
        id="float16",
    ),
]
