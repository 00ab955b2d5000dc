"""kernel.ufunc_loop: NumPy's inner loops found through the ufunc object give the ufunc's
own bits when run block by block across threads, streamed or not, at any alignment;
anything it cannot vouch for is refused; the ops take this path."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.kernel import _ufunc_parts, ufunc_loop
from nnvmpy.ops import _numpy_fast

F32, F64 = np.dtype(np.float32), np.dtype(np.float64)
BLOCK_ITEMS = _ufunc_parts.BLOCK // 4  # float32 items per streamed block


def _values(n: int, dtype: np.dtype, seed: int, low: float = -3.0, high: float = 3.0) -> np.ndarray:
    rng = np.random.default_rng(seed)
    x = rng.uniform(low, high, n)
    if n:
        special = [0.0, -0.0, np.inf, -np.inf, np.nan]
        count = max(1, n // 50)
        x[rng.integers(0, n, count)] = rng.choice(special, size=count)
    return x.astype(dtype)


def _same_bits(a: np.ndarray, b: np.ndarray) -> bool:
    kind = f"u{a.itemsize}"
    return a.shape == b.shape and np.array_equal(a.view(kind), b.view(kind))


@pytest.mark.parametrize("ufunc", [np.power, np.exp, np.sin, np.hypot, np.arctan2, np.expm1])
@pytest.mark.parametrize("dtype", [F32, F64])
def test_numpys_float_loops_are_found(ufunc: np.ufunc, dtype: np.dtype) -> None:
    """On this NumPy every float loop the ops use is reachable: were the struct read to
    stop working, the fast path would silently be gone, so this says so."""
    loop = ufunc_loop.find(ufunc, (dtype,) * ufunc.nargs)
    assert loop is not None
    assert loop.address
    assert loop.dtypes == (dtype,) * ufunc.nargs


@pytest.mark.parametrize(
    ("fn", "dtypes"),
    [
        (np.power, (F32, F64, F64)),  # no such loop
        (np.power, (np.dtype(np.int32),) * 3),  # not a float loop
        (np.power, (F32, F32)),  # the wrong arity
        (np.divmod, (F32,) * 4),  # two outputs
        (np.vectorize(abs), (F32, F32)),  # not a ufunc
        (np.frompyfunc(abs, 1, 1), (F32, F32)),  # a ufunc of Python objects
    ],
)
def test_what_it_cannot_vouch_for_is_refused(fn: object, dtypes: tuple[np.dtype, ...]) -> None:
    assert ufunc_loop.find(fn, dtypes) is None


def test_a_loop_that_disagrees_with_its_ufunc_is_refused(monkeypatch: pytest.MonkeyPatch) -> None:
    """The probe guards the struct read: exp's loop presented as log's is caught."""
    exp_loop = ufunc_loop._read(np.exp, (F32, F32))
    assert exp_loop is not None
    monkeypatch.setattr(ufunc_loop, "_found", {})
    monkeypatch.setattr(ufunc_loop, "_read", lambda ufunc, dtypes: exp_loop)
    assert ufunc_loop.find(np.log, (F32, F32)) is None


@pytest.mark.parametrize("parts", [1, 2, 3])
@pytest.mark.parametrize("stream", [False, True])
@pytest.mark.parametrize("offset", [0, 1, 5])  # the output's first item off a 64-byte line
def test_blocks_give_the_ufuncs_bits(parts: int, stream: bool, offset: int) -> None:
    n = 3 * BLOCK_ITEMS * parts + 37  # full blocks, a head and a ragged tail per part
    a = _values(n, F32, 0, 0.0, 4.0)
    b = _values(n, F32, 1)
    buffer = np.full(n + 16, 7.0, np.float32)
    out = buffer[offset : offset + n]
    loop = ufunc_loop.find(np.power, (F32, F32, F32))
    ufunc_loop.run(loop, [a, b], out, parts, stream)
    with np.errstate(all="ignore"):
        assert _same_bits(out, np.power(a, b))
    assert (buffer[:offset] == 7).all()
    assert (buffer[offset + n :] == 7).all()


@pytest.mark.parametrize("n", [0, 1, 15, BLOCK_ITEMS - 1, BLOCK_ITEMS + 3])
def test_sizes_below_a_block_and_scalars_broadcast(n: int) -> None:
    x = _values(n, F64, 2, 0.0, 5.0)
    out = np.full(n, 9.0)
    loop = ufunc_loop.find(np.power, (F64, F64, F64))
    ufunc_loop.run(loop, [x, 1.7], out, 2, stream=True)
    with np.errstate(all="ignore"):
        assert _same_bits(out, np.power(x, 1.7))
    ufunc_loop.run(loop, [2.5, x], out, 2, stream=True)  # the scalar first
    with np.errstate(all="ignore"):
        assert _same_bits(out, np.power(2.5, x))


def test_concurrent_runs_from_several_threads() -> None:
    """Engine workers launch at once, each with its own team."""
    n = 200_003
    loop = ufunc_loop.find(np.sin, (F32, F32))
    inputs = [_values(n, F32, seed) for seed in range(4)]
    outputs = [np.empty(n, np.float32) for _ in inputs]
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            for _ in range(5):
                ufunc_loop.run(loop, [inputs[k]], outputs[k], 2, stream=k % 2 == 0)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(inputs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    with np.errstate(all="ignore"):
        for x, y in zip(inputs, outputs):
            assert _same_bits(y, np.sin(x))


def test_power_ops_take_the_loop_and_match_numpy(monkeypatch: pytest.MonkeyPatch) -> None:
    n = _numpy_fast.PARALLEL_CUTOFF + 1001
    a, b = _values(n, F32, 3, 0.0, 4.0), _values(n, F32, 4)
    runs: list[str] = []
    real_run = ufunc_loop.run
    monkeypatch.setattr(
        ufunc_loop,
        "run",
        lambda loop, *args, **kw: runs.append(loop.ufunc_name) or real_run(loop, *args, **kw),
    )
    got = nv.nd._internal._power(nv.nd.array(a), nv.nd.array(b)).asnumpy()
    scalar = nv.nd._internal._power_scalar(nv.nd.array(a), scalar=1.5).asnumpy()
    with np.errstate(all="ignore"):
        assert _same_bits(got, np.power(a, b))
        assert _same_bits(scalar, np.power(a, np.float32(1.5)))
    assert runs == ["power", "power"]


def test_a_float64_scalar_with_float32_arrays_keeps_numpys_loop() -> None:
    """np.power(float32 array, np.float64 scalar) runs NumPy's float64 loop: not ours."""
    x = np.ones(4, np.float32)
    assert _numpy_fast._inner_loop(np.power, x, (x, np.float64(2.0))) is None
    assert _numpy_fast._inner_loop(np.power, x, (x, 2.0)) is not None
    assert _numpy_fast._inner_loop(np.power, x, (x.astype(np.float64), 2.0)) is None
