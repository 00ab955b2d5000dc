"""The MLP of training.py trained imperatively: nd ops under autograd.record(), backward,
and the same in-place `sgd_mom_update` per weight.

`ImperativeTrainer` mirrors `training.Trainer` (same parameter names, initializer, seed,
data, hyper-parameters and optimizer: SGD with momentum, whose update is the in-place
`sgd_mom_update` op per weight, MXNet's default of no weight decay on biases), so the two
styles train the same network to the same accuracy; only the way the step is written
differs:

    with autograd.record():
        out = forward(x, label)       # FullyConnected, Activation, ..., SoftmaxOutput
    out.backward()
    updater(indices, [w.grad for w in weights], weights)   # sgd_mom_update on each
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import autograd, nd
from . import initializer as init
from . import optimizer as opt
from .base import Context, cpu
from .training import History, _TrainLoop, cluster_dataset, mlp_symbol


class ImperativeTrainer(_TrainLoop):
    """The MLP (784-512-512-10 by default) as nd calls, trained with SGD + momentum."""

    def __init__(
        self,
        hidden: tuple[int, ...] = (512, 512),
        classes: int = 10,
        data_shape: tuple[int, int] = (64, 784),
        ctx: Context | None = None,
        lr: float = 0.1,
        momentum: float = 0.9,
        wd: float = 1e-4,
        seed: int | None = 0,
        initializer: init.Initializer | str | None = None,
        kvstore: Any = None,
    ) -> None:
        self.ctx = ctx or cpu()
        self.kvstore = kvstore = self._open_kvstore(kvstore)
        workers = kvstore.num_workers if kvstore is not None and "_sync" in kvstore.type else 1
        self.batch_size = data_shape[0]
        self.widths = [*hidden, classes]
        # the symbol only names the parameters and gives their shapes, in the executor's
        # order, so that a seed draws the same initial weights as training.Trainer's
        net = mlp_symbol(hidden, classes)
        arg_shapes, _, _ = net.infer_shape(data=data_shape)
        shapes = dict(zip(net.list_arguments(), arg_shapes))
        self.names = [n for n in net.list_arguments() if n not in ("data", "softmax_label")]
        self.params = {n: nd.zeros(shapes[n], self.ctx) for n in self.names}
        if seed is not None:
            from nnvmpy import random

            random.seed(seed)
        attrs = net.attr_dict() if hasattr(net, "attr_dict") else {}
        init.init_params(initializer or init.Xavier(), dict(self.params), attrs)
        for w in self.params.values():
            w.attach_grad()
        self.lr, self.momentum, self.wd = lr, momentum, wd
        self.optimizer = opt.SGD(
            learning_rate=lr,
            momentum=momentum,
            wd=wd,
            rescale_grad=1.0 / (self.batch_size * workers),
            sym=net,
            param_idx2name=dict(enumerate(self.names)),
        )
        self.updater = opt.get_updater(self.optimizer)
        if kvstore is not None:
            self._init_kvstore([self.params[n] for n in self.names], self.optimizer)

    def forward(self, x: Any, label: Any) -> Any:
        h = x
        p = self.params
        last = len(self.widths)
        for i, width in enumerate(self.widths, start=1):
            h = nd.FullyConnected(h, p[f"fc{i}_weight"], p[f"fc{i}_bias"], num_hidden=width)
            if i < last:
                h = nd.Activation(h, act_type="relu")
        return nd.SoftmaxOutput(h, label)

    def step(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """One recorded forward, backward and update; returns the softmax output."""
        data, label = nd.array(x, self.ctx), nd.array(y, self.ctx)
        with autograd.record():
            out = self.forward(data, label)
        out.backward()
        weights = [self.params[n] for n in self.names]
        if self.kvstore is not None:  # priority -i, as training.Trainer (MXNet's rule)
            self._push_pull([w.grad for w in weights], weights)
        else:
            self.updater(list(range(len(weights))), [w.grad for w in weights], weights)
        result: np.ndarray = out.asnumpy()
        return result

    def _predict(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        prob: np.ndarray = self.forward(nd.array(x, self.ctx), nd.array(y, self.ctx)).asnumpy()
        return prob


def train_mlp_imperative(
    n_train: int = 8000,
    epochs: int = 5,
    batch_size: int = 64,
    progress: bool = True,
    hidden: tuple[int, ...] = (512, 512),
    kvstore: Any = None,
) -> History:
    """training.train_mlp's run (same data, seed, lr), written imperatively."""
    x, y = cluster_dataset(n_train + 2000, seed=1)
    trainer = ImperativeTrainer(
        hidden, data_shape=(batch_size, x.shape[1]), lr=0.02, kvstore=kvstore
    )
    return trainer.fit(x[:n_train], y[:n_train], x[n_train:], y[n_train:], epochs, progress)


__all__ = ["ImperativeTrainer", "train_mlp_imperative"]
