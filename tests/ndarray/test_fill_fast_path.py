"""nd.zeros / ones / full (and the initialisers arange, linspace, eye) make their array as
the op's own output through invoke's cached call plans: values, dtype, shape and device
against NumPy, nothing cached leaking between dtypes, shapes, values or devices, errors
worded as before, autograd and the profiler seeing the _zeros / _ones / _full ops."""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import autograd, nd, profiler, util
from nnvmpy.base import NNVMError, current_context
from nnvmpy.profiler.recorder import RECORDER

DTYPES = ["float16", "float32", "float64", "uint8", "int8", "int32", "int64", "bool"]
SHAPES = [(64, 64), (5,), (2, 3, 4), (1000, 1000)]

# name -> (nd call, NumPy reference) for one shape, dtype and device
FILLS: dict[str, tuple[Callable[..., Any], Callable[..., np.ndarray]]] = {
    "zeros": (lambda s, d, c: nd.zeros(s, c, d), lambda s, d: np.zeros(s, d)),
    "ones": (lambda s, d, c: nd.ones(s, c, d), lambda s, d: np.ones(s, d)),
    "full": (lambda s, d, c: nd.full(s, 7.75, c, d), lambda s, d: np.full(s, 7.75).astype(d)),
}


def check_array(x: nd.NDArray, expected: np.ndarray, ctx: nv.Context) -> None:
    """x's shape, dtype, device and values are those of `expected` on `ctx`."""
    assert x.shape == expected.shape
    assert x.dtype == expected.dtype
    assert x.context == ctx
    np.testing.assert_array_equal(x.asnumpy(), expected)


@pytest.mark.parametrize("name", sorted(FILLS))
@pytest.mark.parametrize("dtype", DTYPES)
def test_fills_match_numpy_for_every_dtype(name: str, dtype: str) -> None:
    make, reference = FILLS[name]
    for shape in SHAPES[:3]:
        check_array(make(shape, dtype, None), reference(shape, dtype), nv.cpu())


@pytest.mark.parametrize("name", sorted(FILLS))
def test_a_large_fill_runs_on_the_engine_workers_and_matches_numpy(name: str) -> None:
    make, reference = FILLS[name]
    check_array(make((1000, 1000), "float32", None), reference((1000, 1000), "float32"), nv.cpu())


def test_the_default_dtype_is_float32_and_an_int_shape_is_one_dim() -> None:
    for x in (nd.zeros(4), nd.ones(4), nd.full(4, 2)):
        assert x.dtype == np.float32
        assert x.shape == (4,)
    assert nd.zeros(np.int64(3)).shape == (3,)
    assert nd.ones([2, np.int32(3)]).shape == (2, 3)


def test_nothing_cached_leaks_between_dtypes_shapes_values_or_ops() -> None:
    """The same calls in turns, each time checked: a cache keyed too coarsely would hand
    one call another's dtype, shape, value or op."""
    calls = [
        (lambda: nd.zeros((3, 4)), np.zeros((3, 4), np.float32)),
        (lambda: nd.zeros((3, 4), dtype="float16"), np.zeros((3, 4), np.float16)),
        (lambda: nd.zeros((3, 4), dtype=np.int32), np.zeros((3, 4), np.int32)),
        (lambda: nd.zeros((4, 3)), np.zeros((4, 3), np.float32)),
        (lambda: nd.ones((3, 4)), np.ones((3, 4), np.float32)),
        (lambda: nd.ones((3, 4), dtype="uint8"), np.ones((3, 4), np.uint8)),
        (lambda: nd.full((3, 4), 1.5), np.full((3, 4), 1.5, np.float32)),
        (lambda: nd.full((3, 4), 2.5), np.full((3, 4), 2.5, np.float32)),
        (lambda: nd.full((3, 4), 2.5, dtype="int64"), np.full((3, 4), 2, np.int64)),
        (lambda: nd.full((3, 4), -1, dtype="bool"), np.full((3, 4), True)),
    ]
    for _ in range(3):
        for make, expected in calls:
            check_array(make(), expected, nv.cpu())


def test_each_call_gets_its_own_array() -> None:
    a, b = nd.zeros((2, 2)), nd.zeros((2, 2))
    a[:] = 5
    np.testing.assert_array_equal(b.asnumpy(), np.zeros((2, 2)))
    np.testing.assert_array_equal(nd.zeros((2, 2)).asnumpy(), np.zeros((2, 2)))


def test_ctx_argument_with_block_and_default_each_pick_the_device() -> None:
    assert nd.zeros((2, 3)).context == nv.cpu(0)
    check_array(nd.zeros((2, 3), ctx=nv.cpu(1)), np.zeros((2, 3), np.float32), nv.cpu(1))
    assert nd.zeros((2, 3)).context == nv.cpu(0)  # the plan made for cpu(1) is not reused
    with nv.cpu(2):
        check_array(nd.ones((2, 3)), np.ones((2, 3), np.float32), nv.cpu(2))
        check_array(nd.full((2, 3), 4, nv.cpu(3)), np.full((2, 3), 4, np.float32), nv.cpu(3))
        assert current_context() == nv.cpu(2)
    assert current_context() == nv.cpu(0)
    check_array(nd.full((2, 3), 4), np.full((2, 3), 4, np.float32), nv.cpu(0))


def test_ctx_blocks_are_per_thread() -> None:
    seen: list[nv.Context] = []

    def other() -> None:
        seen.append(nd.zeros((2,)).context)

    with nv.cpu(1):
        worker = threading.Thread(target=other)
        worker.start()
        worker.join()
        assert nd.zeros((2,)).context == nv.cpu(1)
    assert seen == [nv.cpu(0)]


def test_an_error_inside_a_ctx_call_leaves_the_current_context_alone() -> None:
    # int16 is an NDArray dtype but not one of the initialisers' (MXNet's enum): invoke's
    # parameter check refuses it while the ctx block is entered
    with pytest.raises(NNVMError, match="int16"):
        nd.zeros((2,), ctx=nv.cpu(1), dtype="int16")
    assert current_context() == nv.cpu(0)


def test_out_writes_into_the_array_and_ignores_the_shape_argument() -> None:
    out = nd.zeros((2, 3), dtype="int32")
    assert nd.full((9, 9), 3.7, out=out) is out
    check_array(out, np.full((2, 3), 3, np.int32), nv.cpu())
    assert nd.ones(5, out=out) is out
    check_array(out, np.ones((2, 3), np.int32), nv.cpu())
    out[:] = 2
    check_array(out, np.full((2, 3), 2, np.int32), nv.cpu())


def test_np_shape_makes_scalars_and_empty_arrays() -> None:
    with util.np_shape(True):
        check_array(nd.full((), 3.0), np.array(3.0, np.float32), nv.cpu())
        check_array(nd.ones((2, 0), dtype="int8"), np.ones((2, 0), np.int8), nv.cpu())
        check_array(nd.zeros(0), np.zeros(0, np.float32), nv.cpu())


# MXNet's legacy shapes, bad shapes, dtypes, devices and values: the words of nd.empty
# and full_into, which the fills checked through before (and still do, in that order)
ERRORS: list[tuple[Callable[[], Any], str]] = [
    (lambda: nd.zeros(()), "full/zeros/ones: shape () has an unknown (0) dim or is ()"),
    (lambda: nd.ones((2, 0)), "full/zeros/ones: shape (2, 0) has an unknown (0) dim"),
    (lambda: nd.zeros((2, -1)), "full: shape cannot have negative dimensions, got (2, -1)"),
    (lambda: nd.zeros((2.0, 3)), "full: shape must be an int or a tuple of non-negative ints"),
    (lambda: nd.zeros((True, 3)), "full: shape must be an int or a tuple of non-negative ints"),
    (lambda: nd.zeros("23"), "full: shape must be an int or a tuple of non-negative ints"),
    (lambda: nd.zeros((2,), dtype="complex64"), "empty: dtype complex64 is not supported"),
    (lambda: nd.zeros((2,), dtype="nope"), "empty: unknown dtype 'nope'"),
    (lambda: nd.zeros((2,), ctx="cpu"), "empty: ctx must be a Context such as mx.cpu()"),
    (lambda: nd.zeros((1,) * 33), "empty: 33 dimensions; at most 32 are supported"),
    (lambda: nd.zeros((2**40, 2**40)), "empty: shape (1099511627776, 1099511627776) of "),
    (lambda: nd.full((2,), "abc"), "full: the fill value must be a number, got 'abc'"),
    (lambda: nd.full((2,), None, dtype="x"), "empty: unknown dtype 'x'"),  # dtype first
    (lambda: nd.zeros((2,), stype="csr"), "zeros: stype 'csr' is not supported"),
    (lambda: nd.arange(3, dtype="complex64"), "dtype: dtype complex64 is not supported"),
    (lambda: nd.eye(3, ctx="gpu"), "eye: ctx must be a Context such as mx.cpu(), got 'gpu'"),
]


@pytest.mark.parametrize(("call", "message"), ERRORS, ids=[m[:40] for _, m in ERRORS])
def test_errors_keep_their_words(call: Callable[[], Any], message: str) -> None:
    with pytest.raises(NNVMError, match=re.escape(message)):
        call()
    check_array(nd.zeros((2,)), np.zeros(2, np.float32), nv.cpu())  # still usable


def test_fills_inside_record_feed_the_gradient() -> None:
    """y = x * full(2) + ones * x + zeros: dy/dx = 3 everywhere (the fills need none)."""
    x = nd.array([1.0, -2.0, 3.0])
    x.attach_grad()
    with autograd.record():
        two, one, zero = nd.full((3,), 2.0), nd.ones((3,)), nd.zeros((3,))
        y = x * two + one * x + zero
    y.backward()
    np.testing.assert_array_equal(y.asnumpy(), 3 * np.array([1.0, -2.0, 3.0], np.float32))
    np.testing.assert_array_equal(x.grad.asnumpy(), np.full(3, 3.0, np.float32))
    check_array(two, np.full(3, 2.0, np.float32), nv.cpu())
    check_array(zero, np.zeros(3, np.float32), nv.cpu())


def test_out_inside_record_is_refused_for_a_recorded_array() -> None:
    x = nd.array([1.0, 2.0])
    x.attach_grad()
    with autograd.record():
        y = x * 2
        with pytest.raises(NNVMError, match="_zeros"):
            nd.zeros((2,), out=y)


@pytest.fixture
def aggregate_profiler(tmp_path: Path) -> Iterator[None]:
    """The profiler collecting aggregate statistics, put back to its defaults after."""

    def reset() -> None:
        profiler.set_state("stop")
        profiler.set_config(filename=str(tmp_path / "profile.json"))
        RECORDER.clear()

    reset()
    profiler.set_config(
        profile_imperative=True, aggregate_stats=True, filename=str(tmp_path / "p.json")
    )
    try:
        yield
    finally:
        reset()


def test_the_profiler_names_the_fill_ops(aggregate_profiler: None) -> None:
    profiler.set_state("run")
    nd.zeros((3, 3))
    nd.ones((3, 3))
    nd.ones((3, 3))
    nd.full((3, 3), 5)
    nd.waitall()
    profiler.set_state("stop")
    ops = json.loads(profiler.dumps(format="json"))["Time"]["operator"]
    assert {name: ops[name]["Count"] for name in ("_zeros", "_ones", "_full")} == {
        "_zeros": 1,
        "_ones": 2,
        "_full": 1,
    }


def test_initialisers_match_numpy_on_their_device_and_dtype() -> None:
    check_array(nd.arange(2, 6, 1.5), np.arange(2, 6, 1.5, dtype=np.float32), nv.cpu())
    check_array(nd.arange(5, dtype="int32"), np.arange(5, dtype=np.int32), nv.cpu())
    check_array(
        nd.linspace(0, 1, 5, ctx=nv.cpu(1)), np.linspace(0, 1, 5, dtype=np.float32), nv.cpu(1)
    )
    with nv.cpu(2):
        check_array(nd.eye(3, 4, 1), np.eye(3, 4, 1, dtype=np.float32), nv.cpu(2))
    assert current_context() == nv.cpu(0)
    out = nd.zeros((3, 3), ctx=nv.cpu(1), dtype="float64")
    assert nd.eye(3, dtype="float64", out=out) is out
    check_array(out, np.eye(3), nv.cpu(1))
    check_array(nd.eye(3, dtype="float16"), np.eye(3, dtype=np.float16), nv.cpu())


@pytest.mark.gpu
@pytest.mark.parametrize("name", sorted(FILLS))
def test_fills_on_the_gpu_match_numpy(name: str) -> None:
    make, reference = FILLS[name]
    gpu = nv.gpu(0)
    for dtype in ("float32", "float16", "int32", "float32", "bool"):
        check_array(make((4, 5), dtype, gpu), reference((4, 5), dtype), gpu)
        check_array(make((4, 5), dtype, None), reference((4, 5), dtype), nv.cpu())
    with gpu:
        check_array(make((3,), "float64", None), reference((3,), "float64"), gpu)


LIKES = {"zeros_like": np.zeros_like, "ones_like": np.ones_like}


@pytest.fixture
def fill_launches(monkeypatch: pytest.MonkeyPatch) -> list[Any]:
    """Calls of the fill kernel's checked launch(): a cached call plan skips it."""
    from nnvmpy.ops import init

    calls: list[Any] = []
    checked = init._fill.launch

    def launch(*args: Any, **kwargs: Any) -> Any:
        calls.append(args)
        return checked(*args, **kwargs)

    monkeypatch.setattr(init._fill, "launch", launch)
    return calls


@pytest.mark.parametrize("dtype", ["float32", "float64", "int32", "uint8"])
def test_repeated_fills_run_the_compiled_loop_pre_checked(
    dtype: str, fill_launches: list[Any]
) -> None:
    """A repeated nd.zeros / ones / full / zeros_like / ones_like runs the fill loop its
    call plan checked once, with the plan's value and no input read."""
    x = nd.array(np.arange(12.0).reshape(3, 4) - 5, dtype=dtype)
    for _ in range(3):
        for make, reference in FILLS.values():
            check_array(make((3, 4), dtype, None), reference((3, 4), dtype), nv.cpu())
        for name, reference in LIKES.items():
            check_array(getattr(nd, name)(x), reference(x.asnumpy()), nv.cpu())
    assert fill_launches == []


@pytest.mark.parametrize("dtype", ["bool", "float16"])
def test_fills_off_the_plain_path_still_launch_checked(
    dtype: str, fill_launches: list[Any]
) -> None:
    """bool (filled through a uint8 view) and float16 keep the checked launch()."""
    x = nd.array(np.ones((2, 3)), dtype=dtype)
    for _ in range(2):
        check_array(nd.ones((2, 3), dtype=dtype), np.ones((2, 3), dtype), nv.cpu())
        check_array(nd.zeros_like(x), np.zeros((2, 3), dtype), nv.cpu())
    assert len(fill_launches) == 4


@pytest.mark.gpu
def test_like_fills_on_the_gpu_read_no_input() -> None:
    gpu = nv.gpu(0)
    for dtype in ("float32", "int32", "float32"):
        x = nd.array(np.arange(6.0).reshape(2, 3), ctx=gpu, dtype=dtype)
        for name, reference in LIKES.items():
            check_array(getattr(nd, name)(x), reference(x.asnumpy()), gpu)
