"""Errors, OpReqType, devices and dtype names (nnvmpy.base)."""

from __future__ import annotations

import threading

import numpy as np
import pytest

from nnvmpy.base import (
    Context,
    EngineError,
    InferError,
    NNVMError,
    OpNotFoundError,
    OpReqType,
    ParamError,
    as_dtype,
    cpu,
    gpu,
    num_gpus,
)

# -- errors -----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("error", "also"),
    [
        (OpNotFoundError, KeyError),
        (ParamError, ValueError),
        (InferError, NNVMError),
        (EngineError, NNVMError),
    ],
)
def test_documented_errors_are_nnvm_errors(error: type[Exception], also: type[Exception]) -> None:
    assert issubclass(error, NNVMError)
    assert issubclass(error, also)
    with pytest.raises(NNVMError, match="boom"):
        raise error("boom")


def test_op_not_found_error_message_is_not_quoted_like_a_key_error() -> None:
    assert str(OpNotFoundError("operator 'x' is not registered")) == (
        "operator 'x' is not registered"
    )
    assert str(OpNotFoundError()) == ""


# -- OpReqType --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("alias", "expected"),
    [
        ("null", OpReqType.kNullOp),
        ("write", OpReqType.kWriteTo),
        ("inplace", OpReqType.kWriteInplace),
        ("add", OpReqType.kAddTo),
        ("kNullOp", OpReqType.kNullOp),
        ("kWriteTo", OpReqType.kWriteTo),
        ("kWriteInplace", OpReqType.kWriteInplace),
        ("kAddTo", OpReqType.kAddTo),
        (0, OpReqType.kNullOp),
        (1, OpReqType.kWriteTo),
        (2, OpReqType.kWriteInplace),
        (3, OpReqType.kAddTo),
        (np.int64(3), OpReqType.kAddTo),
        (OpReqType.kWriteInplace, OpReqType.kWriteInplace),
    ],
)
def test_op_req_type_parse_accepts_every_alias(alias: object, expected: OpReqType) -> None:
    parsed = OpReqType.parse(alias)  # type: ignore[arg-type]
    assert parsed is expected
    assert isinstance(parsed, OpReqType)


def test_op_req_type_values_match_mxnet() -> None:
    assert [int(r) for r in OpReqType] == [0, 1, 2, 3]
    assert [r.name for r in OpReqType] == ["kNullOp", "kWriteTo", "kWriteInplace", "kAddTo"]


@pytest.mark.parametrize("bad", ["writeto", "Write", "", " add", "2", 4, -1, 2.7, 1.0, None, [1]])
def test_op_req_type_parse_rejects_bad_values_naming_them(bad: object) -> None:
    with pytest.raises(NNVMError, match="unknown req") as info:
        OpReqType.parse(bad)  # type: ignore[arg-type]
    assert repr(bad) in str(info.value)


def test_op_req_type_parse_error_lists_the_string_aliases() -> None:
    with pytest.raises(NNVMError) as info:
        OpReqType.parse("writeto")
    for alias in ("null", "write", "inplace", "add"):
        assert repr(alias) in str(info.value)


# -- Context ----------------------------------------------------------------------------------


def test_equal_contexts_are_equal_and_hash_alike() -> None:
    assert cpu() == cpu(0) == Context("cpu", 0) == Context(cpu(0))
    assert gpu(1) == Context("gpu", 1) == Context(gpu(1))
    assert hash(gpu(1)) == hash(Context("gpu", 1))
    assert {gpu(1): "a"}[Context("gpu", 1)] == "a"
    assert len({cpu(0), cpu(), Context("cpu")}) == 1


@pytest.mark.parametrize(("a", "b"), [(cpu(0), gpu(0)), (cpu(0), cpu(1)), (gpu(0), gpu(1))])
def test_contexts_differing_in_type_or_id_are_different(a: Context, b: Context) -> None:
    assert a != b
    assert len({a, b}) == 2


def test_context_does_not_equal_other_objects() -> None:
    assert cpu() != "cpu(0)"
    assert cpu() != ("cpu", 0)


def test_context_repr_is_the_constructor_call() -> None:
    assert repr(gpu(1)) == "gpu(1)"
    assert str(cpu()) == "cpu(0)"
    assert (gpu(2).device_type, gpu(2).device_id) == ("gpu", 2)


def test_context_accepts_numpy_and_string_device_ids() -> None:
    assert Context("gpu", np.int64(3)) == gpu(3)  # type: ignore[arg-type]
    assert Context("cpu", "2") == cpu(2)  # type: ignore[arg-type]


def test_unknown_device_type_raises_naming_it() -> None:
    with pytest.raises(NNVMError, match="'tpu'"):
        Context("tpu", 0)
    assert Context("cpu_pinned", 0).device_type == "cpu_pinned"


def test_default_ctx_is_cpu0_outside_any_with_block() -> None:
    assert Context.default_ctx == cpu(0)


def test_with_gpu_sets_the_default_ctx_and_restores_it() -> None:
    with gpu(1) as ctx:
        assert ctx == gpu(1)
        assert Context.default_ctx == gpu(1)
    assert Context.default_ctx == cpu(0)


def test_nested_with_blocks_restore_the_outer_default() -> None:
    with gpu(1):
        with cpu(3):
            assert Context.default_ctx == cpu(3)
        assert Context.default_ctx == gpu(1)
    assert Context.default_ctx == cpu(0)


def test_with_block_restores_the_default_ctx_after_an_exception() -> None:
    with pytest.raises(RuntimeError), gpu(2):
        raise RuntimeError("inside")
    assert Context.default_ctx == cpu(0)


def test_default_ctx_is_per_thread() -> None:
    entered, release = threading.Event(), threading.Event()
    seen: dict[str, Context] = {}

    def other_thread() -> None:
        with gpu(7):
            entered.set()
            release.wait(10)
            seen["inside"] = Context.default_ctx
        seen["after"] = Context.default_ctx

    thread = threading.Thread(target=other_thread)
    with gpu(1):
        thread.start()
        assert entered.wait(10)
        seen["main"] = Context.default_ctx  # the other thread is inside `with gpu(7)`
        release.set()
        thread.join(10)
        assert Context.default_ctx == gpu(1)  # its exit did not pop our gpu(1)
    assert seen == {"main": gpu(1), "inside": gpu(7), "after": cpu(0)}
    assert Context.default_ctx == cpu(0)


def test_num_gpus_is_a_non_negative_int() -> None:
    count = num_gpus()
    assert isinstance(count, int)
    assert count >= 0


def test_num_gpus_is_zero_when_cuda_is_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    cuda = pytest.importorskip("numba.cuda")
    monkeypatch.setattr(cuda, "is_available", lambda: False)
    assert num_gpus() == 0


# -- dtypes -----------------------------------------------------------------------------------


@pytest.mark.parametrize("name", ["float32", np.float32, np.dtype("float32"), "f4"])
def test_as_dtype_accepts_names_types_and_dtypes(name: object) -> None:
    assert as_dtype(name) == np.dtype(np.float32)


@pytest.mark.parametrize("bad", ["float33", "nope"])
def test_as_dtype_rejects_unknown_names_with_nnvm_error(bad: str) -> None:
    with pytest.raises(NNVMError, match=repr(bad)):
        as_dtype(bad)
