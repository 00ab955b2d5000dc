"""nv.test_utils.compare_optimizer / compare_ndarray_tuple: MXNet's helpers that check one
optimizer step against a reference optimizer (MXNet's test_optimizer.py uses them)."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.test_utils import compare_ndarray_tuple, compare_optimizer


class NumpySGD(nv.optimizer.Optimizer):
    """SGD with momentum written in NumPy: mom = m * mom - lr * (rg * g + wd * w); w += mom.
    `bias` perturbs the step so a wrong reference can be made on purpose."""

    def __init__(self, momentum: float = 0.0, bias: float = 0.0, **kwargs: object) -> None:
        super().__init__(**kwargs)
        self.momentum, self.bias = momentum, bias

    def create_state(self, index, weight):
        if self.momentum == 0.0:
            return None
        return nv.nd.zeros(weight.shape, weight.context, dtype=weight.dtype)

    def update(self, index, weight, grad, state):
        self._update_count(index)
        lr, wd = self._get_lr(index), self._get_wd(index)
        w, g = weight.asnumpy().astype(np.float64), grad.asnumpy().astype(np.float64)
        step = -lr * (self.rescale_grad * g + wd * w) + self.bias
        if state is not None:
            mom = self.momentum * state.asnumpy() + step
            state[:] = mom.astype(state.dtype)
            step = mom
        weight[:] = (w + step).astype(weight.dtype)


@pytest.mark.parametrize("momentum", [0.0, 0.9])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_compare_optimizer_agrees_with_a_numpy_sgd(momentum: float, dtype: type) -> None:
    kw = {"learning_rate": 0.1, "wd": 0.03, "rescale_grad": 0.8, "momentum": momentum}
    compare_optimizer(NumpySGD(**kw), nv.optimizer.SGD(**kw), (3, 4, 5), dtype)


def test_compare_optimizer_catches_a_wrong_step() -> None:
    kw = {"learning_rate": 0.1, "momentum": 0.9}
    with pytest.raises(AssertionError):
        compare_optimizer(NumpySGD(bias=1e-2, **kw), nv.optimizer.SGD(**kw), (4, 3), np.float32)


def test_compare_optimizer_compares_states() -> None:
    """A state mismatch fails even when the check of states is the only one that differs."""

    class WrongState(NumpySGD):
        def update(self, index, weight, grad, state):
            super().update(index, weight, grad, state)
            state[:] = state + 1.0

    kw = {"learning_rate": 0.1, "momentum": 0.9}
    with pytest.raises(AssertionError):
        compare_optimizer(WrongState(**kw), nv.optimizer.SGD(**kw), (4, 3), np.float32)
    compare_optimizer(WrongState(**kw), NumpySGD(**kw), (4, 3), np.float32, compare_states=False)


def test_compare_optimizer_multi_tensor_path() -> None:
    """A list of shapes: the second optimizer updates all weights in one call (SGD's
    aggregated multi_sgd_* path), the reference one weight at a time."""
    shapes = [(3, 4), (5,), (2, 2, 2)]
    kw = {"learning_rate": 0.05, "wd": 0.01, "momentum": 0.9}
    compare_optimizer(
        NumpySGD(**kw), nv.optimizer.SGD(**kw), shapes, np.float32, ntensors=len(shapes)
    )
    with pytest.raises(nv.NNVMError, match="ntensors"):
        compare_optimizer(NumpySGD(), nv.optimizer.SGD(), shapes, np.float32, ntensors=2)
    with pytest.raises(nv.NNVMError, match="ntensors"):
        compare_optimizer(NumpySGD(), nv.optimizer.SGD(), (3,), np.float32, ntensors=2)


def test_compare_optimizer_sparse_storage_is_a_named_error() -> None:
    with pytest.raises(nv.NNVMError, match="row_sparse"):
        compare_optimizer(NumpySGD(), nv.optimizer.SGD(), (3, 4), np.float32, g_stype="row_sparse")


def test_compare_ndarray_tuple() -> None:
    a = nv.nd.array(np.arange(6.0).reshape(2, 3))
    b = nv.nd.array(np.arange(6.0).reshape(2, 3) + 1e-7)
    compare_ndarray_tuple(a, b)
    compare_ndarray_tuple((a, (a, None)), (b, (b, a)))  # None on either side is skipped
    compare_ndarray_tuple(None, a)
    with pytest.raises(AssertionError):
        compare_ndarray_tuple((a, a), (b, b + 1.0))
    compare_ndarray_tuple((a,), (b + 1e-3,), rtol=1e-2, atol=1e-2)


def test_star_import_gives_array() -> None:
    """`from mxnet.test_utils import *` brings `array` (MXNet's test files call it)."""
    scope: dict[str, object] = {}
    exec("from nnvmpy.test_utils import *", scope)  # the star import itself
    got = scope["array"]([1, 2, 3], dtype=np.float16)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got.asnumpy(), [1, 2, 3])


class NumpyLAMB(nv.optimizer.Optimizer):
    """LAMB as MXNet documents lamb_update_phase1/2, in NumPy, one weight at a time."""

    def __init__(self, beta1=0.9, beta2=0.999, epsilon=1e-6, lower_bound=None, upper_bound=None,
                 **kwargs):  # fmt: skip
        super().__init__(**kwargs)
        self.beta1, self.beta2, self.epsilon = beta1, beta2, epsilon
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def create_state(self, index, weight):
        return (
            nv.nd.zeros(weight.shape, dtype=weight.dtype),
            nv.nd.zeros(weight.shape, dtype=weight.dtype),
        )

    def update(self, index, weight, grad, state):
        self._update_count(index)
        lr, wd, t = self._get_lr(index), self._get_wd(index), self._index_update_count[index]
        w, g = weight.asnumpy().astype(np.float64), grad.asnumpy().astype(np.float64)
        g = g * self.rescale_grad
        if self.clip_gradient:
            g = np.clip(g, -self.clip_gradient, self.clip_gradient)
        mean, var = state
        m = self.beta1 * mean.asnumpy() + (1 - self.beta1) * g
        v = self.beta2 * var.asnumpy() + (1 - self.beta2) * g * g
        mean[:], var[:] = m, v
        m_hat, v_hat = m / (1 - self.beta1**t), v / (1 - self.beta2**t)
        step = m_hat / (np.sqrt(v_hat) + self.epsilon) + wd * w
        r1, r2 = np.linalg.norm(w), np.linalg.norm(step)
        if self.lower_bound:
            r1 = max(r1, self.lower_bound)
        if self.upper_bound:
            r1 = min(r1, self.upper_bound)
        ratio = r1 / r2 if r1 != 0 and r2 != 0 else 1.0
        weight[:] = w - lr * ratio * step


@pytest.mark.parametrize(
    "kw",
    [{}, {"wd": 0.03, "clip_gradient": 0.4, "rescale_grad": 0.5},
     {"lower_bound": 1e-3, "upper_bound": 0.5, "wd": 0.01}],
)  # fmt: skip
def test_lamb_updates_a_list_of_weights(kw) -> None:
    """LAMB takes a group of weights in one call (MXNet's aggregated path), each weight with
    its own trust ratio ||w|| / ||step||: the same as one call per weight."""
    shapes = [(3, 4, 5), (10, 4), (7,)]
    kw = {"learning_rate": 0.01, **kw}
    compare_optimizer(NumpyLAMB(**kw), nv.optimizer.LAMB(**kw), shapes, np.float32,
                      ntensors=3)  # fmt: skip
    compare_optimizer(NumpyLAMB(**kw), nv.optimizer.LAMB(**kw), (3, 4, 5), np.float32)


def test_lamb_aggregates_like_mxnet(monkeypatch) -> None:
    """aggregate_num: MXNET_OPTIMIZER_AGGREGATION_SIZE clamped to [1, 45], default 45; the
    Updater's groups give the same weights as single updates."""
    assert nv.optimizer.LAMB().aggregate_num == 45
    monkeypatch.setenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "100")
    assert nv.optimizer.LAMB().aggregate_num == 45
    monkeypatch.setenv("MXNET_OPTIMIZER_AGGREGATION_SIZE", "2")
    grouped, single = nv.optimizer.LAMB(wd=0.01), NumpyLAMB(wd=0.01, learning_rate=0.001)
    rng = np.random.default_rng(3)
    ws = [rng.uniform(-1, 1, s).astype(np.float32) for s in [(4,), (2, 3), (5,)]]
    gs = [rng.uniform(-1, 1, w.shape).astype(np.float32) for w in ws]
    a = [nv.nd.array(w) for w in ws]
    b = [nv.nd.array(w) for w in ws]
    up_a, up_b = nv.optimizer.get_updater(grouped), nv.optimizer.get_updater(single)
    for _ in range(2):
        up_a([0, 1, 2], [nv.nd.array(g) for g in gs], a)
        up_b([0, 1, 2], [nv.nd.array(g) for g in gs], b)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_allclose(x.asnumpy(), y.asnumpy(), rtol=1e-5, atol=1e-6)
    with pytest.raises(nv.NNVMError, match="same length"):
        grouped.update([0, 1], a[:2], gs[:1], [None, None])


class NumpyLARS(nv.optimizer.Optimizer):
    """LARS as MXNet documents it, in NumPy: SGD with momentum whose lr is scaled by
    eta * ||w|| / (||rescale_grad * g|| + wd * ||w|| + eps) (not for *bias/*gamma/*beta);
    the momentum is scaled by lr_now / lr_before (momentum_correction)."""

    def __init__(self, momentum=0.0, eta=0.001, eps=0.0, **kwargs):
        super().__init__(**kwargs)
        self.momentum, self.eta, self.eps = momentum, eta, eps
        self.lr_before = None

    def set_wd_mult(self, args_wd_mult):
        super().set_wd_mult(args_wd_mult)  # then: only *_weight is decayed by default
        for n in self.idx2name.values():
            if not n.endswith("_weight") and n not in args_wd_mult:
                self.wd_mult[n] = 0.0

    def create_state(self, index, weight):
        return nv.nd.zeros(weight.shape, dtype=weight.dtype) if self.momentum else None

    def update(self, index, weight, grad, state):
        self._update_count(index)
        lr_now = self.learning_rate
        before, self.lr_before = self.lr_before or lr_now, lr_now
        lr, wd = self._get_lr(index), self._get_wd(index)
        w, g = weight.asnumpy().astype(np.float64), grad.asnumpy().astype(np.float64)
        name = self.idx2name.get(index, str(index))
        if not name.endswith(("bias", "gamma", "beta")):
            w_norm, g_norm = np.linalg.norm(w), np.linalg.norm(g * self.rescale_grad)
            if w_norm > 0 and g_norm > 0:
                lr *= self.eta * w_norm / (g_norm + wd * w_norm + self.eps)
        g = g * self.rescale_grad
        if self.clip_gradient:
            g = np.clip(g, -self.clip_gradient, self.clip_gradient)
        step = -lr * (g + wd * w)
        if state is not None:
            mom = self.momentum * (lr_now / before) * state.asnumpy() + step
            state[:] = mom
            step = mom
        weight[:] = w + step


@pytest.mark.parametrize(
    "kw",
    [{}, {"momentum": 0.9, "wd": 0.03}, {"clip_gradient": 0.4, "rescale_grad": 0.14},
     {"eta": 0.01, "eps": 1e-3, "wd": 0.05, "momentum": 0.9}],
)  # fmt: skip
def test_lars_matches_the_rule(kw) -> None:
    kw = {"learning_rate": 0.1, **kw}
    compare_optimizer(NumpyLARS(**kw), nv.optimizer.LARS(**kw), (3, 4, 5), np.float32)
    shapes = [(3, 4), (7,), (2, 2, 2), (5,), (4, 1)]  # more than aggregate_num (4)
    compare_optimizer(NumpyLARS(**kw), nv.optimizer.LARS(**kw), shapes, np.float32,
                      ntensors=len(shapes))  # fmt: skip


@pytest.mark.parametrize("scheduled", [False, True])
def test_lars_exempts_biases_and_batchnorm_and_corrects_momentum(scheduled) -> None:
    """*bias / *gamma / *beta keep the global lr (and get no weight decay by default); with
    a scheduler the momentum is scaled by lr_now / lr_before (one weight here: the ratio is
    per update call, as in MXNet)."""
    names = {0: "fc_weight", 1: "fc_bias", 2: "bn_gamma", 3: "bn_beta", 4: "conv_weight"}
    kw = {"learning_rate": 0.5, "momentum": 0.9, "wd": 0.01, "param_idx2name": names}
    shapes = [(4, 3), (3,), (3,), (3,), (2, 2)]
    if scheduled:
        sched = nv.lr_scheduler.FactorScheduler
        ours = nv.optimizer.LARS(lr_scheduler=sched(step=1, factor=0.5), **kw)
        ref = NumpyLARS(lr_scheduler=sched(step=1, factor=0.5), **kw)
        shapes = shapes[:1]
    else:
        ours, ref = nv.optimizer.LARS(**kw), NumpyLARS(**kw)
        assert ours.wd_mult == {"fc_bias": 0.0, "bn_gamma": 0.0, "bn_beta": 0.0}
    rng = np.random.default_rng(2)
    ws = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
    a, b = [nv.nd.array(w) for w in ws], [nv.nd.array(w) for w in ws]
    up_a, up_b = nv.optimizer.get_updater(ours), nv.optimizer.get_updater(ref)
    ids = list(range(len(shapes)))
    for _ in range(3):
        gs = [rng.uniform(-1, 1, s).astype(np.float32) for s in shapes]
        up_a(ids, [nv.nd.array(g) for g in gs], a)
        up_b(ids, [nv.nd.array(g) for g in gs], b)
    for x, y in zip(a, b, strict=True):
        np.testing.assert_allclose(x.asnumpy(), y.asnumpy(), rtol=1e-5, atol=1e-6)
    assert nv.optimizer.create("lars").__class__ is nv.optimizer.LARS


def numpy_lbsgd(w, grads, lr, momentum, wd, batch_scale, strategy, n_warm):
    """LBSGD as documented: accumulate batch_scale gradients, then an SGD step with the mean
    and lr * mult (mult: the warm-up, or the clipped layer-wise ratio for 'lars')."""
    mom, total, count = np.zeros_like(w), np.zeros_like(w), 0
    for g in grads:
        count += 1
        total = total + g
        if count % batch_scale:
            continue
        g_mean, total = total / batch_scale, np.zeros_like(w)
        if strategy == "lars":
            w2, g2 = (w * w).sum(), (g_mean * g_mean).sum()
            mult = min(max(np.sqrt(w2 / (g2 + wd * w2 + 1e-18)), 0.01), 100)
        elif count >= n_warm:
            mult = batch_scale
        else:
            frac = count / n_warm
            mult = (
                1
                + (batch_scale - 1)
                * {"linear": frac, "power2": frac**2, "sqrt": frac**0.5}[strategy]
            )
        mom = momentum * mom - lr * mult * (g_mean + wd * w)
        w = w + mom
    return w


@pytest.mark.parametrize(
    ("strategy", "batch_scale", "momentum"),
    [("linear", 1, 0.0), ("linear", 3, 0.9), ("power2", 2, 0.0), ("sqrt", 2, 0.5),
     ("lars", 2, 0.9)],
)  # fmt: skip
def test_lbsgd_accumulates_and_warms_up(strategy, batch_scale, momentum) -> None:
    rng = np.random.default_rng(4)
    w0 = rng.uniform(-1, 1, (3, 4))
    grads = [rng.uniform(-1, 1, (3, 4)) for _ in range(9)]
    opt = nv.optimizer.LBSGD(learning_rate=0.1, momentum=momentum, wd=0.02,
                             warmup_strategy=strategy, batch_scale=batch_scale,
                             warmup_epochs=2, updates_per_epoch=4)  # fmt: skip
    updater = nv.optimizer.get_updater(opt)
    weight = nv.nd.array(w0, dtype=np.float64)
    for k, g in enumerate(grads):
        before = weight.asnumpy()
        updater(0, nv.nd.array(g, dtype=np.float64), weight)
        if (k + 1) % batch_scale:  # mid large batch: the weight stays
            np.testing.assert_array_equal(weight.asnumpy(), before)
    want = numpy_lbsgd(w0, grads, 0.1, momentum, 0.02, batch_scale, strategy, 8)
    np.testing.assert_allclose(weight.asnumpy(), want, rtol=1e-10, atol=1e-12)
    assert isinstance(nv.optimizer.create("lbsgd"), nv.optimizer.LBSGD)


@pytest.mark.parametrize("kw", [{}, {"clip_gradient": 0.3, "rescale_grad": 0.5, "eps": 1e-8}])
def test_group_adagrad_has_one_rate_per_row(kw) -> None:
    """GroupAdaGrad (nv.optimizer.contrib): history += mean(g^2, axis=1);
    weight -= lr * g / sqrt(history + eps), over several steps, against NumPy."""
    rng = np.random.default_rng(8)
    w0 = rng.uniform(-1, 1, (4, 3))
    opt = nv.optimizer.contrib.GroupAdaGrad(learning_rate=0.1, **kw)
    assert isinstance(nv.optimizer.create("groupadagrad"), nv.optimizer.contrib.GroupAdaGrad)
    updater = nv.optimizer.get_updater(opt)
    weight = nv.nd.array(w0, dtype=np.float64)
    w, hist = w0, np.zeros((4, 1))
    for _ in range(3):
        g = rng.uniform(-1, 1, (4, 3))
        updater(0, nv.nd.array(g, dtype=np.float64), weight)
        g = g * kw.get("rescale_grad", 1.0)
        if "clip_gradient" in kw:
            g = np.clip(g, -kw["clip_gradient"], kw["clip_gradient"])
        hist = hist + (g * g).mean(axis=1, keepdims=True)
        w = w - 0.1 * g / np.sqrt(hist + kw.get("eps", 1e-5))
    np.testing.assert_allclose(weight.asnumpy(), w, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(updater.states[0].asnumpy(), hist, rtol=1e-10)


def test_group_adagrad_bad_input_is_a_named_error() -> None:
    opt = nv.optimizer.contrib.GroupAdaGrad()
    with pytest.raises(nv.NNVMError, match="2-D weight"):
        opt.create_state(0, nv.nd.zeros((2, 3, 4)))
    w = nv.nd.zeros((2, 3))
    with pytest.raises(nv.NNVMError, match="weight decay is not supported"):
        nv.optimizer.contrib.GroupAdaGrad(wd=0.1).update(0, w, w, opt.create_state(0, w))
