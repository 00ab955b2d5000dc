"""Training on the executor: the MLP and LeNet networks, synthetic datasets and an SGD loop.

The loop is MXNet's Module.fit reduced to its parts: bind once with simple_bind, then
per batch copy the data in, forward(is_train=True), backward(), and update every weight
in place through an `nv.optimizer` Updater (SGD with momentum by default). The
datasets are synthetic so the examples run offline, but not trivial: the MLP's classes
are unions of clusters on a curved manifold (not linearly separable), and LeNet's are
noisy, randomly shifted strokes at ten orientations.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import initializer as init
from . import optimizer as opt
from . import sym
from .base import Context, cpu
from .optimizer import Optimizer
from .symbol.symbol import Symbol

# -- networks ---------------------------------------------------------------------------------


def mlp_symbol(hidden: tuple[int, ...] = (512, 512), classes: int = 10) -> Symbol:
    """784-512-512-10 by default: the network of ../shared/models/mlp-symbol.json."""
    net = sym.Variable("data")
    for i, width in enumerate(hidden, start=1):
        net = sym.FullyConnected(net, name=f"fc{i}", num_hidden=width)
        net = sym.Activation(net, name=f"relu{i}", act_type="relu")
    net = sym.FullyConnected(net, name=f"fc{len(hidden) + 1}", num_hidden=classes)
    return sym.SoftmaxOutput(net, name="softmax")


def lenet_symbol(classes: int = 10) -> Symbol:
    """LeNet-5 as in ../shared/models/lenet-symbol.json (tanh, max pooling)."""
    net = sym.Variable("data")
    net = sym.Convolution(net, name="conv1", kernel=(5, 5), num_filter=20)
    net = sym.Activation(net, act_type="tanh")
    net = sym.Pooling(net, pool_type="max", kernel=(2, 2), stride=(2, 2))
    net = sym.Convolution(net, name="conv2", kernel=(5, 5), num_filter=50)
    net = sym.Activation(net, act_type="tanh")
    net = sym.Pooling(net, pool_type="max", kernel=(2, 2), stride=(2, 2))
    net = sym.Flatten(net)
    net = sym.FullyConnected(net, name="fc1", num_hidden=500)
    net = sym.Activation(net, act_type="tanh")
    net = sym.FullyConnected(net, name="fc2", num_hidden=classes)
    return sym.SoftmaxOutput(net, name="softmax")


# -- synthetic data ---------------------------------------------------------------------------


def cluster_dataset(
    n: int,
    dim: int = 784,
    classes: int = 10,
    latent: int = 12,
    clusters_per_class: int = 3,
    noise: float = 0.3,
    seed: int = 0,
) -> tuple[np.ndarray, np.ndarray]:
    """Classes made of several clusters in a latent space, lifted by a random curved map."""
    rng = np.random.default_rng(seed)
    centers = rng.normal(0, 2.2, size=(classes * clusters_per_class, latent))
    which = rng.integers(0, classes * clusters_per_class, size=n)
    z = centers[which] + rng.normal(0, 1.0, size=(n, latent))
    lift = rng.normal(0, 1 / math.sqrt(latent), size=(latent, dim))
    x = np.tanh(z @ lift) + noise * rng.normal(size=(n, dim))
    return x.astype(np.float32), (which % classes).astype(np.float32)


def stroke_dataset(
    n: int, size: int = 28, classes: int = 10, seed: int = 0
) -> tuple[np.ndarray, np.ndarray]:
    """Images of one noisy stroke; the class is its orientation (ten angles, 18° apart)."""
    rng = np.random.default_rng(seed)
    labels = rng.integers(0, classes, size=n)
    ys, xs = np.mgrid[0:size, 0:size].astype(np.float32) - (size - 1) / 2
    images = np.empty((n, 1, size, size), dtype=np.float32)
    for i, label in enumerate(labels):
        angle = math.pi * label / classes + rng.normal(0, 0.04)
        dx, dy = rng.uniform(-4, 4, size=2)
        u = (xs - dx) * math.cos(angle) + (ys - dy) * math.sin(angle)
        v = -(xs - dx) * math.sin(angle) + (ys - dy) * math.cos(angle)
        stroke = np.exp(-(v**2) / 2.0) * (np.abs(u) < rng.uniform(7, 11))
        images[i, 0] = stroke + 0.25 * rng.normal(size=(size, size))
    return images, labels.astype(np.float32)


# -- the loop ---------------------------------------------------------------------------------


@dataclass
class History:
    losses: list[float]
    train_accuracy: float
    test_accuracy: float
    seconds: float
    steps: int


def batches(
    x: np.ndarray, y: np.ndarray, batch_size: int, rng: np.random.Generator | None
) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    order = rng.permutation(len(x)) if rng is not None else np.arange(len(x))
    for start in range(0, len(x) - batch_size + 1, batch_size):
        take = order[start : start + batch_size]
        yield x[take], y[take]


class _TrainLoop:
    """The loop shared by Trainer and training_imperative.ImperativeTrainer: fit() over
    shuffled batches, accuracy() over ordered ones, and the KVStore plumbing; a subclass
    gives step() (one update, returning the softmax output) and _predict()."""

    batch_size: int
    kvstore: Any

    def step(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _predict(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """The softmax output of one batch, not training."""
        raise NotImplementedError

    @staticmethod
    def _open_kvstore(kvstore: Any) -> Any:
        """kvstore ('local', 'device', 'dist_sync' or an nv.kv store): the weights live in
        the store, which sums the gradients (over workers too) and runs the optimizer."""
        if isinstance(kvstore, str):
            from nnvmpy import kvstore as kvs

            kvstore = kvs.create(kvstore)
        return kvstore

    def _init_kvstore(self, weights: list[Any], optimizer: Optimizer) -> None:
        keys = list(range(len(weights)))
        self.kvstore.init(keys, weights)  # dist: rank 0's initial weights everywhere
        self.kvstore.pull(keys, out=weights)
        self.kvstore.set_optimizer(optimizer)

    def _push_pull(self, grads: list[Any], weights: list[Any]) -> None:
        # MXNet's _update_params_on_kvstore: key i with priority -i. Backward makes the
        # later layers' gradients ready first, so their allreduces start first; among
        # pending ones the earlier layers go first (the next forward needs them first)
        for i, (g, w) in enumerate(zip(grads, weights)):
            self.kvstore.push(i, g, priority=-i)
            self.kvstore.pull(i, out=w, priority=-i)

    def accuracy(self, x: np.ndarray, y: np.ndarray) -> float:
        correct = total = 0
        for bx, by in batches(x, y, self.batch_size, None):
            prob = self._predict(bx, by)
            correct += int((prob.argmax(axis=1) == by).sum())
            total += len(by)
        return correct / max(total, 1)

    def fit(
        self,
        x: np.ndarray,
        y: np.ndarray,
        x_test: np.ndarray,
        y_test: np.ndarray,
        epochs: int,
        progress: bool = True,
        seed: int = 0,
    ) -> History:
        x, y = shard(x, y, self.kvstore)
        rng = np.random.default_rng(seed)
        losses: list[float] = []
        started, steps = time.perf_counter(), 0
        n_batches = len(x) // self.batch_size
        for epoch in range(epochs):
            for i, (bx, by) in enumerate(batches(x, y, self.batch_size, rng)):
                prob = self.step(bx, by)
                picked = prob[np.arange(len(by)), by.astype(np.int64)]
                losses.append(float(-np.log(np.maximum(picked, 1e-12)).mean()))
                steps += 1
                if progress:
                    _progress(epoch, epochs, i + 1, n_batches, losses[-1])
            if progress:
                sys.stderr.write("\n")
        seconds = time.perf_counter() - started
        return History(losses, self.accuracy(x, y), self.accuracy(x_test, y_test), seconds, steps)


class Trainer(_TrainLoop):
    """One network bound for a batch size, trained by an nv.optimizer (SGD + momentum default).

    Parameters start from `initializer` (MXNet's `nv.init`; Xavier by default: Glorot
    uniform weights, zero biases, BatchNorm's gamma 1 and moving variance 1), drawn after
    `nv.random.seed(seed)` so a seed gives the same starting weights (None: no seeding).
    """

    def __init__(
        self,
        net: Symbol,
        data_shape: tuple[int, ...],
        ctx: Context | None = None,
        lr: float = 0.1,
        momentum: float = 0.9,
        wd: float = 1e-4,
        seed: int | None = 0,
        initializer: init.Initializer | str | None = None,
        optimizer: Optimizer | str | None = None,
        kvstore: Any = None,
    ):
        self.ctx = ctx or cpu()
        self.kvstore = kvstore = self._open_kvstore(kvstore)
        self.batch_size = data_shape[0]
        self.exe = net.simple_bind(
            self.ctx,
            data=data_shape,
            grad_req={
                n: "write" for n in net.list_arguments() if n not in ("data", "softmax_label")
            },
        )
        self.params = [n for n in net.list_arguments() if n not in ("data", "softmax_label")]
        if seed is not None:
            from nnvmpy import random

            random.seed(seed)
        attrs = net.attr_dict() if hasattr(net, "attr_dict") else {}
        arrays = {n: self.exe.arg_dict[n] for n in self.params}
        arrays.update(self.exe.aux_dict)
        init.init_params(initializer or init.Xavier(), arrays, attrs)
        self.lr, self.momentum, self.wd = lr, momentum, wd
        # MXNet Module's defaults: gradients summed over the batch are averaged by
        # rescale_grad, and named non-weights (biases, beta) get no weight decay
        # (dist_sync: the gradient is summed over every worker's batch, MXNet Module's rule)
        workers = kvstore.num_workers if kvstore is not None and "_sync" in kvstore.type else 1
        kwargs: dict[str, Any] = {"rescale_grad": 1.0 / (self.batch_size * workers), "sym": net,
                  "param_idx2name": dict(enumerate(self.params))}  # fmt: skip
        if optimizer is None:
            optimizer = opt.SGD(learning_rate=lr, momentum=momentum, wd=wd, **kwargs)
        elif isinstance(optimizer, str):
            optimizer = opt.create(optimizer, learning_rate=lr, wd=wd, **kwargs)
        self.optimizer = optimizer
        self.updater = opt.get_updater(optimizer)
        if kvstore is not None:
            self._init_kvstore([self.exe.arg_dict[n] for n in self.params], optimizer)

    def step(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        """One forward/backward/update; returns the softmax output of the batch."""
        exe = self.exe
        out = exe.forward(is_train=True, data=x, softmax_label=y)[0]
        exe.backward()
        grads = [exe.grad_dict[n] for n in self.params]
        weights = [exe.arg_dict[n] for n in self.params]
        if self.kvstore is not None:
            self._push_pull(grads, weights)
        else:
            self.updater(list(range(len(self.params))), grads, weights)
        return out.asnumpy()

    def _predict(self, x: np.ndarray, y: np.ndarray) -> np.ndarray:
        return self.exe.forward(is_train=False, data=x, softmax_label=y)[0].asnumpy()


def shard(x: np.ndarray, y: np.ndarray, kvstore: Any) -> tuple[np.ndarray, np.ndarray]:
    """This worker's equal share of the data under a distributed KVStore (else all of it).

    Equal sizes keep every worker at the same number of steps (a worker with an extra
    step would wait for the others' push forever).
    """
    if kvstore is None or kvstore.num_workers == 1:
        return x, y
    n, rank = kvstore.num_workers, kvstore.rank
    per = len(x) // n
    return x[rank * per : (rank + 1) * per], y[rank * per : (rank + 1) * per]


def _progress(epoch: int, epochs: int, done: int, total: int, loss: float) -> None:
    if done != total and not sys.stderr.isatty():
        return  # a log file or pipe gets the finished bar of each epoch, not every redraw
    width = 30
    filled = int(width * done / max(total, 1))
    bar = "#" * filled + "-" * (width - filled)
    sys.stderr.write(f"\repoch {epoch + 1}/{epochs} [{bar}] {done}/{total} loss {loss:.4f}")
    sys.stderr.flush()


# -- entry points -------------------------------------------------------------------------------


def train_mlp(
    n_train: int = 8000,
    epochs: int = 5,
    batch_size: int = 64,
    progress: bool = True,
    hidden: tuple[int, ...] = (512, 512),
    kvstore: Any = None,
) -> History:
    x, y = cluster_dataset(n_train + 2000, seed=1)
    trainer = Trainer(mlp_symbol(hidden), (batch_size, x.shape[1]), lr=0.02, kvstore=kvstore)
    return trainer.fit(x[:n_train], y[:n_train], x[n_train:], y[n_train:], epochs, progress)


def train_lenet(
    n_train: int = 4000,
    epochs: int = 3,
    batch_size: int = 64,
    progress: bool = True,
    kvstore: Any = None,
) -> History:
    x, y = stroke_dataset(n_train + 1000, seed=2)
    trainer = Trainer(lenet_symbol(), (batch_size, *x.shape[1:]), lr=0.05, kvstore=kvstore)
    return trainer.fit(x[:n_train], y[:n_train], x[n_train:], y[n_train:], epochs, progress)


def main(net: str, argv: list[str] | None = None) -> History:
    """Command line of examples/train_<net>.py: parse options, train, print a summary."""
    import argparse

    runs: dict[str, tuple[Callable[..., History], tuple[int, int]]] = {
        "mlp": (train_mlp, (8000, 4)),
        "lenet": (train_lenet, (4000, 3)),
    }
    train, defaults = runs[net]
    parser = argparse.ArgumentParser(description=f"Train the {net} on synthetic data.")
    parser.add_argument("--epochs", type=int, default=defaults[1])
    parser.add_argument("--train", type=int, default=defaults[0], help="training samples")
    parser.add_argument("--batch-size", type=int, default=64, help="per worker")
    parser.add_argument(
        "--kvstore",
        default=None,
        choices=["local", "device", "dist_sync", "dist_device_sync"],
        help="update through a KVStore; dist_*: run under `nnvmpy launch -n N -- ...`, "
        "each worker on its shard of the data",
    )
    args = parser.parse_args(argv)
    progress = True
    if args.kvstore is not None:
        from nnvmpy import kvstore as kvs

        kv = kvs.create(args.kvstore)
        progress = kv.rank == 0
    else:
        kv = None
    hist = train(
        n_train=args.train,
        epochs=args.epochs,
        batch_size=args.batch_size,
        progress=progress,
        kvstore=kv,
    )
    if kv is not None and kv.rank != 0:
        return hist
    print(
        f"loss {hist.losses[0]:.3f} -> {hist.losses[-1]:.3f} in {hist.steps} steps "
        f"({1000 * hist.seconds / max(hist.steps, 1):.1f} ms/step)"
    )
    print(f"accuracy: train {hist.train_accuracy:.1%}, held-out {hist.test_accuracy:.1%}")
    return hist


def demo(quick: bool = False) -> str:
    """The training part of `nnvmpy demo`: a short MLP run on the synthetic clusters."""
    hist = train_mlp(n_train=2000 if quick else 6000, epochs=2 if quick else 3)
    return (
        f"\n== 6. training the MLP (784-512-512-10, SGD + momentum, synthetic clusters)\n"
        f"loss {hist.losses[0]:.3f} -> {hist.losses[-1]:.3f} over {hist.steps} steps "
        f"({1000 * hist.seconds / max(hist.steps, 1):.1f} ms/step); accuracy: train "
        f"{hist.train_accuracy:.1%}, held-out {hist.test_accuracy:.1%}"
    )


__all__ = [
    "History",
    "Trainer",
    "cluster_dataset",
    "demo",
    "lenet_symbol",
    "mlp_symbol",
    "stroke_dataset",
    "train_lenet",
    "train_mlp",
]
