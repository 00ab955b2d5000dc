"""The interleaved attention matmuls against a NumPy multi-head attention, both ways.

The reference computes attention the plain way (separate q/k/v per head, matmul,
softmax-free scores) from the interleaved projections; gradients are checked against
NumPy's formulas for the products and, on the GPU simulator, against the CPU.
"""

from __future__ import annotations

import numpy as np
import pytest
from fcompute_call import run_fcompute

import nnvmpy as nv
from nnvmpy.base import InferError, ParamError

B, H, D = 2, 3, 4


def _heads(x: np.ndarray, slots: int, slot: int, b: int = B, h: int = H) -> np.ndarray:
    seq = x.shape[0]
    part = x.reshape(seq, b, h, slots, -1)[:, :, :, slot]
    return part.transpose(1, 2, 0, 3).reshape(b * h, seq, -1)


def _interleave(parts: list[np.ndarray], b: int = B, h: int = H) -> np.ndarray:
    """Per-slot (b*h, seq, d) stacks -> (seq, b, h*len(parts)*d), as the op lays them out."""
    seq, d = parts[0].shape[1:]
    per = [p.reshape(b, h, seq, d).transpose(2, 0, 1, 3) for p in parts]
    return np.stack(per, axis=3).reshape(seq, b, h * len(parts) * d)


def _run(sym: nv.sym.Symbol, args: dict, head: np.ndarray, ctx: nv.Context) -> tuple:
    exe = sym.bind(
        ctx,
        args={k: nv.nd.array(v, ctx=ctx, dtype=v.dtype) for k, v in args.items()},
        args_grad={k: nv.nd.zeros(v.shape, ctx=ctx, dtype=v.dtype) for k, v in args.items()},
    )
    exe.forward(is_train=True)
    exe.backward([nv.nd.array(head, ctx=ctx, dtype=head.dtype)])
    grads = {k: g.asnumpy() for k, g in exe.grad_dict.items()}
    return exe.outputs[0].asnumpy(), grads


def _cases(dtype: str) -> list:
    rng = np.random.default_rng(7)

    def r(*shape: int) -> np.ndarray:
        return rng.standard_normal(shape).astype(dtype)

    lq, lk = 3, 5
    qkv, att_s, q = r(lk, B, 3 * H * D), r(B * H, lk, lk), r(lq, B, H * D)
    kv, att_e = r(lk, B, 2 * H * D), r(B * H, lq, lk)
    s = 1 / np.sqrt(D)
    sq, sk, sv = (_heads(qkv, 3, i) for i in range(3))
    eq, ek, ev = _heads(q, 1, 0), _heads(kv, 2, 0), _heads(kv, 2, 1)
    contrib, x0, x1 = nv.sym.contrib, nv.sym.var("x0"), nv.sym.var("x1")
    g_ss, g_sv, g_es, g_ev = r(B * H, lk, lk), r(lk, B, H * D), r(B * H, lq, lk), r(lq, B, H * D)
    hs, he = _heads(g_sv, 1, 0), _heads(g_ev, 1, 0)
    zero_s, zero_e = np.zeros_like(sq), np.zeros_like(ek)
    return [
        (  # selfatt_qk: y = s q k^T; dq = s g k, dk = s g^T q
            contrib.interleaved_matmul_selfatt_qk(x0, heads=H),
            {"x0": qkv},
            g_ss,
            sq @ sk.transpose(0, 2, 1) * s,
            {"x0": _interleave([s * g_ss @ sk, s * g_ss.transpose(0, 2, 1) @ sq, zero_s])},
        ),
        (  # selfatt_valatt: y = att v; dv = att^T g, d att = g v^T
            contrib.interleaved_matmul_selfatt_valatt(x0, x1, heads=H),
            {"x0": qkv, "x1": att_s},
            g_sv,
            _interleave([att_s @ sv]),
            {
                "x0": _interleave([zero_s, zero_s, att_s.transpose(0, 2, 1) @ hs]),
                "x1": hs @ sv.transpose(0, 2, 1),
            },
        ),
        (
            contrib.interleaved_matmul_encdec_qk(x0, x1, heads=H),
            {"x0": q, "x1": kv},
            g_es,
            eq @ ek.transpose(0, 2, 1) * s,
            {
                "x0": _interleave([s * g_es @ ek]),
                "x1": _interleave([s * g_es.transpose(0, 2, 1) @ eq, zero_e]),
            },
        ),
        (
            contrib.interleaved_matmul_encdec_valatt(x0, x1, heads=H),
            {"x0": kv, "x1": att_e},
            g_ev,
            _interleave([att_e @ ev]),
            {
                "x0": _interleave([zero_e, att_e.transpose(0, 2, 1) @ he]),
                "x1": he @ ev.transpose(0, 2, 1),
            },
        ),
    ]


IDS = ["selfatt_qk", "selfatt_valatt", "encdec_qk", "encdec_valatt"]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("which", range(4), ids=IDS)
def test_forward_and_gradients_match_numpy(dtype: str, which: int) -> None:
    sym, args, head, want, want_grads = _cases(dtype)[which]
    tol = 1e-4 if dtype == "float32" else 1e-10
    y, grads = _run(sym, args, head, nv.cpu())
    np.testing.assert_allclose(y, want, rtol=tol, atol=tol)
    for k, g in want_grads.items():
        np.testing.assert_allclose(grads[k], g, rtol=tol, atol=tol, err_msg=k)


def test_gradient_adds_into_existing_gradient() -> None:
    sym, args, head, _, want_grads = _cases("float64")[0]
    start = np.ones_like(args["x0"])
    exe = sym.bind(
        nv.cpu(),
        args={"x0": nv.nd.array(args["x0"], dtype="float64")},
        args_grad={"x0": nv.nd.array(start, dtype="float64")},
        grad_req="add",
    )
    exe.forward(is_train=True)
    exe.backward([nv.nd.array(head, dtype="float64")])
    np.testing.assert_allclose(exe.grad_dict["x0"].asnumpy(), start + want_grads["x0"], rtol=1e-10)


def test_shape_errors_name_the_op() -> None:
    x = nv.nd.zeros((4, 2, 3 * H * D + 1))
    with pytest.raises(InferError, match="_contrib_interleaved_matmul_selfatt_qk: expected"):
        nv.nd.contrib.interleaved_matmul_selfatt_qk(x, heads=H)
    q, kv = nv.nd.zeros((3, B, H * D)), nv.nd.zeros((5, B + 1, 2 * H * D))
    with pytest.raises(InferError, match="interleaved_matmul_encdec_qk: input 'keys_values'"):
        nv.nd.contrib.interleaved_matmul_encdec_qk(q, kv, heads=H)
    with pytest.raises(ParamError, match="heads"):
        nv.nd.contrib.interleaved_matmul_selfatt_qk(nv.nd.zeros((4, 2, 6)), heads=0)
    y = nv.nd.contrib.interleaved_matmul_selfatt_qk(nv.nd.ones((4, 2, 3 * H * D)), heads=H)
    np.testing.assert_allclose(y.asnumpy(), np.full((B * H, 4, 4), D / np.sqrt(D)), rtol=1e-6)


@pytest.mark.gpu
@pytest.mark.parametrize("which", range(4), ids=IDS)
def test_gpu_forward_and_gradients_match_numpy(which: int) -> None:
    sym, args, head, want, want_grads = _cases("float32")[which]
    y, grads = _run(sym, args, head, nv.gpu(0))
    np.testing.assert_allclose(y, want, rtol=1e-4, atol=1e-4)
    for k, g in want_grads.items():
        np.testing.assert_allclose(grads[k], g, rtol=1e-4, atol=1e-4, err_msg=k)


# -- every req, several batches and heads: the FComputes called directly -------------------------

# (batch, heads, head_dim, query length, key length); head_dim 5: a scale that is no power of 2
SHAPES = [(2, 3, 4, 3, 5), (3, 2, 5, 4, 2), (1, 4, 1, 1, 3)]
# reqs of (forward or first gradient, second gradient): each output sees each req
REQS = [("write", "add"), ("add", "null"), ("null", "write")]
TOLS = {"float16": 2e-2, "float32": 1e-4, "float64": 1e-10}


def _problem(kind: str, shape: tuple, dtype: str, seed: int = 3) -> tuple:
    """(inputs, output gradient, output, input gradients) of op `kind`, in NumPy."""
    b, h, d, lq, lk = shape
    rng = np.random.default_rng(seed)

    def r(*dims: int) -> np.ndarray:
        return rng.standard_normal(dims).astype(dtype)

    def split(x: np.ndarray, slots: int, slot: int) -> np.ndarray:
        return _heads(x.astype(np.float64), slots, slot, b, h)

    def join(*parts: np.ndarray) -> np.ndarray:
        return _interleave(list(parts), b, h)

    s, z = 1 / np.sqrt(d), b * h
    if kind == "selfatt_qk":
        x, g = r(lk, b, 3 * h * d), r(z, lk, lk)
        q, k, g64 = split(x, 3, 0), split(x, 3, 1), g.astype(np.float64)
        dx = join(s * g64 @ k, s * g64.transpose(0, 2, 1) @ q, 0 * q)
        return [x], g, s * q @ k.transpose(0, 2, 1), [dx]
    if kind == "encdec_qk":
        x, kv, g = r(lq, b, h * d), r(lk, b, 2 * h * d), r(z, lq, lk)
        q, k, g64 = split(x, 1, 0), split(kv, 2, 0), g.astype(np.float64)
        dq, dk = join(s * g64 @ k), join(s * g64.transpose(0, 2, 1) @ q, 0 * k)
        return [x, kv], g, s * q @ k.transpose(0, 2, 1), [dq, dk]
    slots = 3 if kind == "selfatt_valatt" else 2
    rows = lk if kind == "selfatt_valatt" else lq
    x, att, g = r(lk, b, slots * h * d), r(z, rows, lk), r(rows, b, h * d)
    v, a64, gh = split(x, slots, slots - 1), att.astype(np.float64), split(g, 1, 0)
    dx = join(*[0 * v] * (slots - 1), a64.transpose(0, 2, 1) @ gh)
    return [x, att], g, join(a64 @ v), [dx, gh @ v.transpose(0, 2, 1)]


def _compute(name: str, heads: int, inputs: list, reqs: tuple, starts: list, device: str):
    """Op `name`'s FCompute<device> on outputs holding `starts`, as the executor calls it."""
    return run_fcompute(name, {"heads": heads}, inputs, starts, reqs, device)


def _check_reqs(name: str, heads: int, inputs: list, wants: list, reqs: tuple, device: str):
    """write overwrites NaNs, add adds to what was there, null leaves it bit for bit."""
    dtype = inputs[0].dtype
    rng = np.random.default_rng(11)
    starts = [
        np.full(w.shape, np.nan, dtype)
        if q == "write"
        else rng.standard_normal(w.shape).astype(dtype)
        for w, q in zip(wants, reqs)
    ]
    got = _compute(name, heads, inputs, reqs[: len(wants)], starts, device)
    tol = TOLS[str(dtype)]
    for j, (g, w, start, q) in enumerate(zip(got, wants, starts, reqs)):
        msg = f"{name} output {j} req={q}"
        if q == "null":
            np.testing.assert_array_equal(g, start, err_msg=msg)
        else:
            want = w + start.astype(np.float64) if q == "add" else w
            np.testing.assert_allclose(g, want, rtol=tol, atol=tol, err_msg=msg)


def _check(kind: str, shape: tuple, dtype: str, reqs: tuple, device: str) -> None:
    inputs, head, want, grads = _problem(kind, shape, dtype)
    heads = shape[1]
    _check_reqs(f"_contrib_interleaved_matmul_{kind}", heads, inputs, [want], reqs, device)
    bwd = f"_backward_interleaved_matmul_{kind}"
    _check_reqs(bwd, heads, [head, *inputs], grads, reqs, device)


@pytest.mark.parametrize("reqs", REQS, ids="-".join)
@pytest.mark.parametrize("shape", SHAPES, ids=str)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind", IDS)
def test_every_req_matches_numpy(kind: str, dtype: str, shape: tuple, reqs: tuple) -> None:
    _check(kind, shape, dtype, reqs, "cpu")


@pytest.mark.gpu
@pytest.mark.parametrize("reqs", REQS, ids="-".join)
@pytest.mark.parametrize("kind", IDS)
def test_gpu_every_req_matches_numpy(kind: str, reqs: tuple) -> None:
    """Two batch rows of two heads (the simulator's GEMM costs ~0.15 s per 16x16 block)."""
    _check(kind, (2, 2, 3, 2, 3), "float32", reqs, "gpu")


@pytest.mark.gpu
@pytest.mark.parametrize("dtype", ["float16", "float64"])
@pytest.mark.parametrize("kind", IDS)
def test_gpu_other_dtypes_match_numpy(kind: str, dtype: str) -> None:
    _check(kind, (1, 2, 4, 3, 2), dtype, ("write", "add"), "gpu")
