"""set_gradient_compression on a 'device' store: MXNet 1.9.1's 1bit/2bit quantization with
residuals, checked against an element-by-element NumPy simulation and hand-computed
sequences (the cases of MXNet's nightly test_kvstore.py, on CPU contexts)."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import NNVMError

nd = nv.nd
SHAPE = (3, 5)
NDEV = 4
RATE = 2.0


def _level_2bit(v: float, t: float) -> float:
    if v >= t:
        return t
    return -t if v <= -t else 0.0


def _simulate(kind: str, grad: np.ndarray, residual: np.ndarray, t: float):
    """(what is sent, the new residual), one element at a time as MXNet's test does."""
    sent = np.zeros_like(grad)
    new = np.zeros_like(grad)
    for idx, g in np.ndenumerate(grad):
        v = g + residual[idx]
        q = _level_2bit(v, t) if kind == "2bit" else (1.0 if v > t else -1.0)
        sent[idx], new[idx] = q, v - q
    return sent, new


def _store(params: dict) -> nv.kvstore.KVStore:
    kv = nv.kv.create("device")
    kv.set_gradient_compression(params)

    def updater(key, recv, local):  # MXNet's 'test' optimizer: w += rescale_grad * g
        local += recv * RATE

    kv.set_updater(updater)
    return kv


def _pull(kv, key) -> list[np.ndarray]:
    outs = [nd.zeros(SHAPE, nv.cpu(i)) for i in range(NDEV)]
    kv.pull(key, out=outs)
    return [o.asnumpy() for o in outs]


@pytest.mark.parametrize(
    ("kind", "threshold"), [("2bit", 0.5), ("1bit", -0.5), ("1bit", 0.0), ("1bit", 0.5)]
)
def test_random_pushes_match_the_simulation(kind: str, threshold: float) -> None:
    rng = np.random.default_rng(7)
    kv = _store({"type": kind, "threshold": threshold})
    kv.init(3, nd.zeros(SHAPE))
    residuals = [np.zeros(SHAPE, np.float32) for _ in range(NDEV)]
    want = np.zeros(SHAPE, np.float32)
    for _ in range(4):
        grads = [rng.uniform(-0.6, 0.6, SHAPE).astype(np.float32) for _ in range(NDEV)]
        kv.push(3, [nd.array(g, ctx=nv.cpu(i)) for i, g in enumerate(grads)])
        for i, g in enumerate(grads):
            sent, residuals[i] = _simulate(kind, g, residuals[i], threshold)
            want += RATE * sent
        for got in _pull(kv, 3):
            np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)


def test_2bit_residual_sequence() -> None:
    t = 0.5
    kv = _store({"type": "2bit", "threshold": t})
    kv.init(3, nd.zeros(SHAPE))

    def push(x: float) -> None:
        kv.push(3, [nd.ones(SHAPE, nv.cpu(i)) * x for i in range(NDEV)])

    push(0.4)  # below the threshold: nothing sent, 0.4 kept
    assert all(np.all(o == 0) for o in _pull(kv, 3))
    push(t - 0.3)  # 0.4 + 0.2 >= 0.5: t sent, 0.1 kept
    cur = t * RATE * NDEV
    assert all(np.allclose(o, cur) for o in _pull(kv, 3))
    push(0.2)  # 0.3: nothing
    assert all(np.allclose(o, cur) for o in _pull(kv, 3))
    push(t - 0.3)  # 0.5: t sent, residual 0
    cur += t * RATE * NDEV
    assert all(np.allclose(o, cur) for o in _pull(kv, 3))
    push(-t)  # exactly -t: -t sent
    cur -= t * RATE * NDEV
    assert all(np.allclose(o, cur) for o in _pull(kv, 3))


def test_1bit_sends_plus_or_minus_one() -> None:
    kv = _store({"type": "1bit", "threshold": 0.5})
    kv.init("w", nd.zeros(SHAPE))
    kv.push("w", [nd.ones(SHAPE, nv.cpu(i)) * 2 for i in range(NDEV)])  # 2 > .5: +1, r=1
    assert all(np.allclose(o, RATE * NDEV) for o in _pull(kv, "w"))
    kv.push("w", [nd.zeros(SHAPE, nv.cpu(i)) for i in range(NDEV)])  # 0+1 > .5: +1, r=0
    assert all(np.allclose(o, 2 * RATE * NDEV) for o in _pull(kv, "w"))
    kv.push("w", [nd.zeros(SHAPE, nv.cpu(i)) for i in range(NDEV)])  # 0 <= .5: -1, r=1
    assert all(np.allclose(o, RATE * NDEV) for o in _pull(kv, "w"))


def test_init_and_pull_are_not_compressed() -> None:
    kv = nv.kv.create("device")
    kv.set_gradient_compression({"type": "2bit", "threshold": 0.5})
    kv.init(9, nd.ones(SHAPE) * 0.25)
    assert all(np.allclose(o, 0.25) for o in _pull(kv, 9))
    kv.push(9, nd.ones(SHAPE) * 0.3)  # no updater: the stored value becomes the sum sent
    assert all(np.allclose(o, 0.0) for o in _pull(kv, 9))


def test_type_none_pushes_full_precision() -> None:
    kv = nv.kv.create("device")
    kv.set_gradient_compression({"type": "none"})
    kv.init(1, nd.zeros(SHAPE))
    kv.push(1, [nd.ones(SHAPE, nv.cpu(i)) * 0.1 for i in range(NDEV)])
    assert all(np.allclose(o, 0.4) for o in _pull(kv, 1))


def test_only_device_stores_compress() -> None:
    with pytest.raises(NNVMError, match="not supported for a 'local' store"):
        nv.kv.create("local").set_gradient_compression({"type": "2bit"})
    nv.kv.create("local_allreduce_device").set_gradient_compression({"type": "2bit"})


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"threshold": 0.5}, "'type' is required"),
        ({"type": "3bit"}, "unknown type '3bit'"),
        ({"type": "2bit", "threshold": 0}, "threshold > 0"),
        ({"type": "2bit", "threshold": "high"}, "threshold must be a number"),
        ({"type": "2bit", "ratio": 2}, r"unknown parameters \['ratio'\]"),
        ("2bit", "must be a dict"),
    ],
)
def test_bad_parameters_are_named(params, match: str) -> None:
    with pytest.raises(NNVMError, match=match):
        nv.kv.create("device").set_gradient_compression(params)
