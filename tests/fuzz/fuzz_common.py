"""What every fuzz target shares: a source of choices, the outcome rule, a health check.

The property every target checks: a call either works or raises NNVMError (a subclass
included) whose message says what was wrong; afterwards the engine, the registry and an
executor built before still work. A kernel failure reaches the caller at wait time as
an EngineError; it is a named error only when its message names the op.

Generators take a `Chooser`, so the same code draws from hypothesis (CI: shrinking,
a bounded budget) and from `random.Random` (tools/fuzz.py: a long soak).
"""

from __future__ import annotations

import random
import traceback
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

import nnvmpy as nv
from nnvmpy.base import EngineError, NNVMError

T = TypeVar("T")


class Chooser:
    """Random choices from a random.Random (the soak tool)."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng

    def integer(self, lo: int, hi: int) -> int:
        """An int in [lo, hi]."""
        return self.rng.randint(lo, hi)

    def choice(self, items: Sequence[T]) -> T:
        return items[self.integer(0, len(items) - 1)]

    def chance(self, p: float) -> bool:
        """True with probability about p."""
        return self.integer(0, 999) < int(p * 1000)


class DrawChooser(Chooser):
    """Choices drawn from hypothesis' `st.data()`, so failures shrink."""

    def __init__(self, data: Any) -> None:
        from hypothesis import strategies as st

        self.data = data
        self.st = st

    def integer(self, lo: int, hi: int) -> int:
        return int(self.data.draw(self.st.integers(lo, hi)))


# -- outcomes ---------------------------------------------------------------------------------


@dataclass
class Finding:
    """A call that broke the property: where, what raised and how to repeat it."""

    target: str  # "sym.load", "nd.load", "op Convolution (nd)", ...
    kind: str  # the exception type, or "unnamed EngineError", "health"
    message: str
    repro: str

    @property
    def key(self) -> tuple[str, str]:
        return (self.target, self.kind)

    def __str__(self) -> str:
        return f"{self.target}: {self.kind}: {self.message[:300]}\n  repro: {self.repro[:600]}"


def run_case(
    target: str, fn: Callable[[], Any], repro: str, names: Sequence[str] = ()
) -> Finding | None:
    """Run fn(); None if it worked or raised a named NNVMError, else the Finding.

    `names`: strings an EngineError's message must contain one of (the op's names).
    """
    try:
        fn()
    except EngineError as e:
        text = str(e)
        if names and not any(n in text for n in names):
            return Finding(target, "unnamed EngineError", _describe(e), repro)
        return None
    except NNVMError as e:
        if not str(e).strip():
            return Finding(target, f"empty {type(e).__name__}", "", repro)
        return None
    except RecursionError as e:  # before Exception: a deep file must not overflow the stack
        return Finding(target, "RecursionError", str(e), repro)
    except Exception as e:
        return Finding(target, type(e).__name__, _describe(e), repro)
    return None


def _describe(e: BaseException) -> str:
    cause = e.__cause__
    lines = traceback.format_exception(cause if cause is not None else e)
    where = "".join(lines[-3:]).strip().replace("\n", " | ")
    return f"{e} [{where}]"


# -- health -----------------------------------------------------------------------------------


class Health:
    """An executor bound before fuzzing and the registry's size; `check` proves both alive."""

    def __init__(self) -> None:
        from nnvmpy.registry import Op
        from nnvmpy.stubs import load_all_ops

        # ops registered on first use (the fusion pass's _FusedOp, the lazy modules') in
        # first: otherwise the first fused bind reads as the registry changing under a call
        load_all_ops()
        self.n_ops = len(Op.list_op_names())
        data = nv.sym.Variable("data")
        net = nv.sym.FullyConnected(data, num_hidden=3, name="fc")
        self.exe = net.simple_bind(nv.cpu(), data=(2, 4))
        self.exe.arg_dict["fc_weight"][:] = 1.0
        self.exe.arg_dict["fc_bias"][:] = 0.5

    def check(self) -> str | None:
        """None if everything still works, else what does not."""
        from nnvmpy.registry import Op

        try:
            nv.nd.waitall()
        except NNVMError:
            pass  # a failure of the fuzzed call, reported once: not a health problem
        try:
            if len(Op.list_op_names()) != self.n_ops:
                return f"registry changed size: {self.n_ops} -> {len(Op.list_op_names())}"
            got = (nv.nd.ones((2, 3)) * 2 + 1).asnumpy()
            if not np.array_equal(got, np.full((2, 3), 3.0, np.float32)):
                return f"nd arithmetic after the call gave {got}"
            out = self.exe.forward(is_train=False, data=np.ones((2, 4), np.float32))[0]
            if not np.allclose(out.asnumpy(), 4.5):
                return f"the executor bound before gave {out.asnumpy()}"
            nv.nd.waitall()
        except Exception as e:
            return f"{type(e).__name__}: {e}"
        return None


def checked(
    health: Health, target: str, fn: Callable[[], Any], repro: str, names: Sequence[str] = ()
) -> list[Finding]:
    """run_case, then the health check; every problem as a Finding."""
    found = []
    finding = run_case(target, fn, repro, names)
    if finding is not None:
        found.append(finding)
    problem = health.check()
    if problem is not None:
        found.append(Finding(target, "health", problem, repro))
    return found


__all__ = ["Chooser", "DrawChooser", "Finding", "Health", "checked", "run_case"]
