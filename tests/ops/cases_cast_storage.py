"""OpCase row of cast_storage: with stype='default' (the only storage nnvmpy has) a copy."""

from __future__ import annotations

from op_db import OpCase

CASES: list[OpCase] = [
    OpCase("cast_storage", [(3, 4)], lambda x, **_: x, params={"stype": "default"}),
]
