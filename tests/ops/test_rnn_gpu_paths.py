"""The fused RNN's device schedule (_rnn_device.py) for what once went through the host:
LSTM projection, state clipping, sequence lengths and float16 (issue 12).

Each case runs forward and backward through an executor and is compared with the CPU's
NumPy path (itself checked against the formulas and finite differences in test_rnn.py)
and, for the forward, with the step-by-step reference. The same schedule runs on the
CPU when FORCE_DEVICE_PATH is set (float64, fast, with finite differences too) and on
the GPU, or numba's simulator (NUMBA_ENABLE_CUDASIM=1: tiny sizes, kernels run in
Python), where `no_host_trips` makes any host copy of the data raise.
"""

from __future__ import annotations

import numpy as np
import pytest
from rnn_reference import param_size, rnn_reference

import nnvmpy as nv
from nnvmpy.ops.nn import _rnn_device, rnn
from nnvmpy.test_utils import check_numeric_gradient

MODES = ["rnn_relu", "rnn_tanh", "lstm", "gru"]
STEPS, BATCH, INP, HID = 3, 3, 2, 3
LENGTHS = np.array([3, 1, 2])


def _inputs(seed, mode, layers, bidir, proj=0):
    rng = np.random.default_rng(seed)
    dirs = 2 if bidir else 1
    data = rng.uniform(-1, 1, (STEPS, BATCH, INP))
    params = rng.uniform(-0.5, 0.5, param_size(mode, layers, INP, HID, bidir, proj))
    hx = rng.uniform(-1, 1, (layers * dirs, BATCH, proj or HID))
    if mode == "rnn_relu":  # pre-activations away from the kink
        params, data, hx = np.abs(params) + 0.05, np.abs(data) + 0.1, np.abs(hx) + 0.1
    arrays = {"data": data, "parameters": params, "state": hx}
    if mode == "lstm":
        arrays["state_cell"] = rng.uniform(-1, 1, (layers * dirs, BATCH, HID))
    return arrays


def _symbol(arrays, lengths, **kw):
    names = list(arrays)
    if lengths is not None:
        names.append("len")
        kw["use_sequence_length"] = True
    return nv.sym.RNN(*[nv.sym.Variable(n) for n in names], state_outputs=True, **kw)


def _run(ctx, arrays, lengths, dtype, grad_req="write", **kw):
    """Outputs and input gradients (float64 NumPy) of forward + backward on ctx."""
    s = _symbol(arrays, lengths, **kw)
    args = {n: nv.nd.array(a, ctx=ctx, dtype=dtype) for n, a in arrays.items()}
    grads = {
        n: nv.nd.array(np.full(a.shape, 0.25), ctx=ctx, dtype=dtype) for n, a in arrays.items()
    }
    if lengths is not None:
        args["len"] = nv.nd.array(lengths, ctx=ctx, dtype=np.int32)
    exe = s.bind(ctx, args, args_grad=grads, grad_req=grad_req)
    outs = exe.forward(is_train=True)
    rng = np.random.default_rng(99)
    heads = [rng.uniform(-1, 1, o.shape) for o in outs]
    exe.backward([nv.nd.array(h, ctx=ctx, dtype=dtype) for h in heads])
    got = [o.asnumpy().astype(np.float64) for o in outs]
    return got, {n: exe.grad_dict[n].asnumpy().astype(np.float64) for n in arrays}


def _reference(arrays, lengths, clip=None, **kw):
    kw = {k: v for k, v in kw.items() if not k.startswith("lstm_state_clip")}
    if kw.get("projection_size") is None:
        kw.pop("projection_size", None)
    a = arrays
    return rnn_reference(
        a["data"], a["parameters"], a["state"], a.get("state_cell"), lengths, clip=clip, **kw
    )


def _compare(ctx, arrays, lengths, dtype=np.float64, rtol=1e-9, atol=1e-11, clip=None, **kw):
    """ctx's device schedule against the CPU's NumPy path and the reference."""
    got, grads = _run(ctx, arrays, lengths, dtype, **kw)
    if dtype == np.float16:  # the CPU path computes float16 in float32 too
        want, want_grads = _run(nv.cpu(), arrays, lengths, dtype, **kw)
    else:
        with pytest.MonkeyPatch.context() as m:
            m.setattr(rnn, "FORCE_DEVICE_PATH", False)
            want, want_grads = _run(nv.cpu(), arrays, lengths, dtype, **kw)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=rtol, atol=atol)
    for n in arrays:
        np.testing.assert_allclose(grads[n], want_grads[n], rtol=rtol, atol=atol, err_msg=n)
    ref = _reference(arrays, lengths, clip, **kw)
    ref_tol = {"rtol": 1e-9, "atol": 1e-11} if dtype == np.float64 else {"atol": 2e-2}
    for g, w in zip(got, ref):
        np.testing.assert_allclose(g, w, **ref_tol)
    return got, grads


@pytest.fixture
def device_schedule(monkeypatch):
    """The GPU's schedule (device GEMMs + gate kernels) on the CPU."""
    monkeypatch.setattr(rnn, "FORCE_DEVICE_PATH", True)


@pytest.fixture
def no_host_trips(monkeypatch):
    """The GPU path may not go through the host: run_on_host raises for a GPU context,
    host_copy reads nothing but the (N,) lengths, nothing is uploaded (to_device)."""
    real_run_on_host = rnn.run_on_host
    real_host_copy = rnn.host_copy

    def run_on_host(compute, attrs, ctx, *rest):
        assert not rnn.is_gpu(ctx), "the GPU RNN went through the host"
        return real_run_on_host(compute, attrs, ctx, *rest)

    def host_copy(ctx, a):
        assert tuple(a.shape) == (BATCH,), f"host copy of a {tuple(a.shape)} array"
        return real_host_copy(ctx, a)

    def to_device(self, a):
        raise AssertionError("the GPU RNN uploaded an array")

    monkeypatch.setattr(rnn, "run_on_host", run_on_host)
    monkeypatch.setattr(rnn, "host_copy", host_copy)
    monkeypatch.setattr(_rnn_device.Device, "to_device", to_device)


# -- the device schedule on the CPU (float64: tight tolerances, finite differences) ------


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("bidir", [False, True])
def test_schedule_sequence_lengths(device_schedule, mode, bidir):
    arrays = _inputs(1, mode, 2, bidir)
    kw = {"mode": mode, "state_size": HID, "num_layers": 2, "bidirectional": bidir}
    out = _compare(nv.cpu(), arrays, LENGTHS, **kw)[0][0]
    assert not out[1:, 1].any()  # zero past each row's length
    assert not out[2:, 2].any()


@pytest.mark.parametrize("bidir", [False, True])
@pytest.mark.parametrize("lengths", [None, LENGTHS])
def test_schedule_projection(device_schedule, bidir, lengths):
    arrays = _inputs(2, "lstm", 2, bidir, proj=2)
    kw = {"mode": "lstm", "state_size": HID, "num_layers": 2, "bidirectional": bidir}
    _compare(nv.cpu(), arrays, lengths, projection_size=2, **kw)


def test_schedule_clipping(device_schedule):
    arrays = _inputs(3, "lstm", 1, True)
    arrays["parameters"] *= 6
    kw = {"mode": "lstm", "state_size": HID, "num_layers": 1, "bidirectional": True}
    clip = {"lstm_state_clip_min": -0.3, "lstm_state_clip_max": 0.4}
    got = _compare(nv.cpu(), arrays, LENGTHS, clip=(-0.3, 0.4), **clip, **kw)[0]
    assert got[2].max() <= 0.4
    assert got[2].min() >= -0.3


def test_schedule_finite_differences_projection_and_lengths(device_schedule):
    arrays = _inputs(4, "lstm", 1, True, proj=2)
    s = _symbol(arrays, LENGTHS, mode="lstm", state_size=HID, num_layers=1, bidirectional=True,
                projection_size=2)  # fmt: skip
    loc = {**arrays, "len": LENGTHS.astype(np.float64)}
    check_numeric_gradient(s, loc, grad_nodes=list(arrays), numeric_eps=1e-6, rtol=1e-4,
                           atol=1e-6, dtype=np.float64)  # fmt: skip


def test_schedule_sequence_length_grad_is_zero(device_schedule):
    arrays = _inputs(5, "gru", 1, False)
    s = _symbol(arrays, LENGTHS, mode="gru", state_size=HID, num_layers=1)
    args = {n: nv.nd.array(a, dtype=np.float64) for n, a in arrays.items()}
    args["len"] = nv.nd.array(LENGTHS, dtype=np.float64)
    grads = {n: nv.nd.ones(a.shape, dtype=np.float64) for n, a in args.items()}
    exe = s.bind(nv.cpu(), args, args_grad=grads)
    outs = exe.forward(is_train=True)
    exe.backward([nv.nd.ones(o.shape, dtype=np.float64) for o in outs])
    assert not exe.grad_dict["len"].asnumpy().any()


# -- the GPU (or its simulator): no host copies ------------------------------------------

gpu = pytest.mark.gpu


@gpu
@pytest.mark.parametrize("mode", MODES)
def test_gpu_sequence_lengths(no_host_trips, mode):
    layers = 2 if mode == "gru" else 1  # the layers' plumbing is the CPU tests' business
    arrays = _inputs(6, mode, layers, True)
    kw = {"mode": mode, "state_size": HID, "num_layers": layers, "bidirectional": True}
    _compare(nv.gpu(0), arrays, LENGTHS, **kw)


@gpu
def test_gpu_projection(no_host_trips):
    arrays = _inputs(7, "lstm", 2, True, proj=2)
    kw = {"mode": "lstm", "state_size": HID, "num_layers": 2, "bidirectional": True}
    _compare(nv.gpu(0), arrays, LENGTHS, projection_size=2, **kw)


@gpu
def test_gpu_clipping_and_nan(no_host_trips):
    arrays = _inputs(8, "lstm", 1, False)
    arrays["parameters"] *= 6
    kw = {"mode": "lstm", "state_size": HID, "num_layers": 1}
    clip = {"lstm_state_clip_min": -0.3, "lstm_state_clip_max": 0.4}
    _compare(nv.gpu(0), arrays, None, clip=(-0.3, 0.4), **clip, **kw)
    arrays["data"][1, 0, 0] = np.nan  # row 0 turns NaN at step 1: its cell stops at min
    s = _symbol(arrays, None, lstm_state_clip_nan=True, **clip, **kw)
    outs = [
        s.bind(ctx, {n: nv.nd.array(a, ctx=ctx, dtype=np.float64) for n, a in arrays.items()})
        .forward()[2]
        .asnumpy()
        for ctx in (nv.gpu(0), nv.cpu())
    ]
    np.testing.assert_allclose(outs[0], outs[1], rtol=1e-9)
    np.testing.assert_array_equal(outs[0][0, 0], -0.3)


@gpu
@pytest.mark.parametrize(
    ("mode", "extra"),
    [("gru", {}), ("lstm", {"projection_size": 2})],
)
def test_gpu_float16(no_host_trips, mode, extra):
    """float16 in float32 device buffers; the CPU computes float16 in float32 as well, so
    the two agree to float16's rounding (the reserve is float16 on both)."""
    arrays = _inputs(9, mode, 1, True, proj=extra.get("projection_size", 0))
    kw = {"mode": mode, "state_size": HID, "num_layers": 1, "bidirectional": True, **extra}
    _compare(nv.gpu(0), arrays, LENGTHS, dtype=np.float16, rtol=5e-3, atol=5e-3, **kw)


@gpu
def test_gpu_float16_adds_to_gradients(no_host_trips):
    """grad_req='add' with float16 gradients: the float32 result is added in place."""
    arrays = _inputs(10, "rnn_tanh", 1, False)
    kw = {"mode": "rnn_tanh", "state_size": HID, "num_layers": 1}
    _, added = _run(nv.gpu(0), arrays, None, np.float16, grad_req="add", **kw)
    _, written = _run(nv.gpu(0), arrays, None, np.float16, **kw)
    for n in arrays:
        np.testing.assert_allclose(added[n], written[n] + 0.25, atol=2e-3, err_msg=n)


@gpu
def test_gpu_sequence_length_out_of_range_is_named(no_host_trips):
    arrays = _inputs(11, "rnn_tanh", 1, False)
    args = [nv.nd.array(a, ctx=nv.gpu(0), dtype=np.float64) for a in arrays.values()]
    kw = {"mode": "rnn_tanh", "state_size": HID, "num_layers": 1, "use_sequence_length": True}
    bad = nv.nd.array([3, 4, 1], ctx=nv.gpu(0), dtype=np.int32)
    with pytest.raises(nv.NNVMError, match=r"RNN.*sequence_length\[1\] = 4"):
        nv.nd.RNN(*args, bad, **kw).asnumpy()
    good = nv.nd.array(LENGTHS, ctx=nv.gpu(0), dtype=np.int32)  # the engine still runs
    want = _reference(arrays, LENGTHS, mode="rnn_tanh", state_size=HID, num_layers=1)[0]
    np.testing.assert_allclose(nv.nd.RNN(*args, good, **kw).asnumpy(), want, rtol=1e-9)


# -- dropout between layers: kRandom's Philox stream, drawn where the data is ------------


def _check_dropout(ctx, mode, bidir, p=0.4, seed=21):
    """The training output is the reference with Dropout's masks, drawn after the same
    seed from the same stream: one (T, N, dirs*H) mask per layer boundary, in order."""
    layers, dirs = 3, 2 if bidir else 1
    arrays = _inputs(12, mode, layers, bidir)
    nv.random.seed(seed)
    ones = nv.nd.ones((STEPS, BATCH, dirs * HID), ctx=ctx, dtype=np.float64)
    masks = [nv.nd.Dropout(ones, p=p, mode="always").asnumpy() for _ in range(layers - 1)]
    assert all(m.min() == 0 and m.max() == 1 / (1 - p) for m in masks)
    nv.random.seed(seed)
    kw = {"mode": mode, "state_size": HID, "num_layers": layers, "bidirectional": bidir}
    got, grads = _run(ctx, arrays, None, np.float64, p=p, **kw)
    want = _reference(arrays, None, masks=masks, **kw)
    for g, w in zip(got, want, strict=False):
        np.testing.assert_allclose(g, w, rtol=1e-9, atol=1e-11)
    return grads


@pytest.mark.parametrize(("mode", "bidir"), [("lstm", True), ("rnn_tanh", False)])
def test_dropout_masks_come_from_the_philox_stream_on_the_host_path(mode, bidir):
    _check_dropout(nv.cpu(), mode, bidir)


@pytest.mark.parametrize(("mode", "bidir"), [("gru", True), ("rnn_relu", False)])
def test_schedule_dropout_masks_come_from_the_philox_stream(device_schedule, mode, bidir):
    _check_dropout(nv.cpu(), mode, bidir)


@gpu
def test_gpu_dropout_draws_on_the_device_and_backward_matches_the_cpu(no_host_trips):
    """No mask is drawn on the host or uploaded (no_host_trips); with the same seed both
    devices drop the same elements, so the gradients agree too."""
    on_gpu = _check_dropout(nv.gpu(0), "lstm", True)
    on_cpu = _check_dropout(nv.cpu(), "lstm", True)
    for n in on_cpu:
        np.testing.assert_allclose(on_gpu[n], on_cpu[n], rtol=1e-9, atol=1e-11, err_msg=n)
