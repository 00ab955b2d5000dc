"""One worker of the 2-process dist_sync tests (run by test_dist.py through `nnvmpy launch`).

    python dist_worker.py SCENARIO

Every rank regenerates every rank's data from seeds, so it can check the cross-worker sums
against NumPy by itself. Prints "rank R ok" on success.
"""

from __future__ import annotations

import os
import signal
import sys

import numpy as np

import nnvmpy as nv
from nnvmpy import NNVMError


def data(rank: int, shape: tuple[int, ...], salt: int, dtype: str = "float32") -> np.ndarray:
    return np.random.default_rng(1000 * rank + salt).standard_normal(shape).astype(dtype)


def sums() -> None:
    kv = nv.kv.create("dist_sync")
    r, n = kv.rank, kv.num_workers
    assert (kv.type, n) == ("dist_sync", 2), (kv.type, n)
    # init takes rank 0's value
    kv.init(0, nv.nd.array(data(r, (3, 4), 0)))
    out = nv.nd.empty((3, 4))
    kv.pull(0, out=out)
    np.testing.assert_array_equal(out.asnumpy(), data(0, (3, 4), 0))
    # a list of keys, each with values on two devices: sum over devices and workers; many
    # small keys (bucketed together), one large (alone), one float64 (its own bucket)
    shapes = {k: (5, k + 1) for k in range(1, 21)}
    shapes[21] = (600, 600)
    dtypes = {k: "float64" if k == 7 else "float32" for k in shapes}
    keys = list(shapes)
    kv.init(keys, [nv.nd.zeros(shapes[k], dtype=dtypes[k]) for k in keys])
    for step in range(2):
        vals = [
            [nv.nd.array(data(r, shapes[k], 10 * k + d + step), ctx=nv.cpu(d)) for d in range(2)]
            for k in keys
        ]
        outs = [nv.nd.empty(shapes[k], dtype=dtypes[k]) for k in keys]
        kv.pushpull(keys[::-1], vals[::-1], out=outs[::-1])  # any order
        for k, o in zip(keys, outs, strict=True):
            want = sum(
                data(w, shapes[k], 10 * k + d + step).astype(dtypes[k])
                for w in range(n)
                for d in range(2)
            )
            np.testing.assert_allclose(o.asnumpy(), want, rtol=1e-5, atol=1e-5)
    # pushpull without out: the sum over devices and workers lands in every value (in
    # place in the first), and the store holds it too; a second out list gets copies
    v0, v1 = (nv.nd.array(data(r, (7, 3), 90 + d), ctx=nv.cpu(d)) for d in range(2))
    kv.init(50, nv.nd.zeros((7, 3)))
    kv.pushpull(50, [v0, v1])
    want5 = sum(data(w, (7, 3), 90 + d) for w in range(n) for d in range(2))
    o5 = [nv.nd.empty((7, 3)), nv.nd.empty((7, 3), ctx=nv.cpu(1))]
    kv.pull(50, out=o5)
    for got in (v0, v1, *o5):
        np.testing.assert_allclose(got.asnumpy(), want5, rtol=1e-5, atol=1e-5)
    g5 = nv.nd.array(data(r, (7, 3), 95))
    kv.pushpull(50, g5, out=o5)
    np.testing.assert_array_equal(g5.asnumpy(), data(r, (7, 3), 95))  # the gradient is kept
    for got in o5:
        np.testing.assert_allclose(
            got.asnumpy(), sum(data(w, (7, 3), 95) for w in range(n)), rtol=1e-5, atol=1e-5
        )
    # the optimizer runs on every worker on the summed gradient
    w0 = data(0, (4, 4), 1)
    kv.init(100, nv.nd.array(w0))
    lr, mom = 0.1, 0.9
    kv.set_optimizer(nv.optimizer.SGD(learning_rate=lr, momentum=mom))
    m, w = np.zeros_like(w0), w0.copy()
    for step in range(3):
        kv.push(100, nv.nd.array(data(r, (4, 4), 50 + step)), priority=-step)
        g = sum(data(q, (4, 4), 50 + step) for q in range(n))
        m = mom * m - lr * g
        w = w + m
    out4 = nv.nd.empty((4, 4))
    kv.pull(100, out=out4)
    np.testing.assert_allclose(out4.asnumpy(), w, rtol=1e-5, atol=1e-5)
    # str keys in a second store on the same workers
    skv = nv.kvstore.create("dist_sync")
    skv.init(["a", "b"], [nv.nd.zeros((2,)), nv.nd.zeros((3,))])
    skv.push(["a", "b"], [nv.nd.full((2,), r + 1.0), nv.nd.full((3,), 2.0)])
    oa, ob = nv.nd.empty((2,)), nv.nd.empty((3,))
    skv.pull(["a", "b"], out=[oa, ob])
    np.testing.assert_array_equal(oa.asnumpy(), np.full(2, 3.0, np.float32))
    np.testing.assert_array_equal(ob.asnumpy(), np.full(3, 4.0, np.float32))
    # dist_device_sync keeps each key on its device; the sum still spans the workers
    dkv = nv.kv.create("dist_device_sync")
    dkv.init(0, nv.nd.zeros((3,), ctx=nv.cpu(1)))
    assert dkv._store[0].context == nv.cpu(1)
    od = nv.nd.empty((3,), ctx=nv.cpu(1))
    dkv.pushpull(0, nv.nd.full((3,), r + 1.0, ctx=nv.cpu(1)), out=od)
    np.testing.assert_array_equal(od.asnumpy(), np.full(3, 3.0, np.float32))
    kv.barrier()


def killed() -> None:
    kv = nv.kv.create("dist_sync")
    kv.init(3, nv.nd.zeros((3,)))
    if kv.rank == 1:
        os.kill(os.getpid(), signal.SIGKILL)
    out = nv.nd.empty((3,))
    try:
        kv.pushpull(3, nv.nd.ones((3,)), out=out)
        out.asnumpy()
    except NNVMError as exc:
        print(f"rank {kv.rank} named error: {exc}", flush=True)
        sys.exit(3)


def raised() -> None:
    kv = nv.kv.create("dist_sync")
    kv.init(3, nv.nd.zeros((3,)))
    if kv.rank == 1:
        raise RuntimeError("worker 1 fails on purpose")
    out = nv.nd.empty((3,))
    try:
        kv.pushpull(3, nv.nd.ones((3,)), out=out)
        out.asnumpy()
    except NNVMError as exc:
        print(f"rank {kv.rank} named error: {exc}", flush=True)
        sys.exit(3)


def mismatch() -> None:
    kv = nv.kv.create("dist_sync")
    try:
        kv.init(3, nv.nd.zeros((3 + kv.rank,)))
    except NNVMError as exc:
        print(f"rank {kv.rank} named error: {exc}", flush=True)
        sys.exit(3)


def keys() -> None:
    """The workers push different keys of one shape at the same point: a named error."""
    kv = nv.kv.create("dist_sync")
    kv.init([1, 2], [nv.nd.zeros((3,)), nv.nd.zeros((3,))])
    out = nv.nd.empty((3,))
    try:
        kv.pushpull(1 + kv.rank, nv.nd.ones((3,)), out=out)
        out.asnumpy()
    except NNVMError as exc:
        print(f"rank {kv.rank} named error: {exc}", flush=True)
        sys.exit(3)


MLP_BATCH, MLP_STEPS, MLP_DIM = 16, 3, 20  # per worker


def mlp_data() -> tuple[np.ndarray, np.ndarray]:
    from nnvmpy.training import cluster_dataset

    return cluster_dataset(2 * MLP_BATCH * MLP_STEPS, dim=MLP_DIM, seed=5)


def mlp() -> None:
    """Each worker trains on its half of every batch; rank 0 saves the weights."""
    from nnvmpy.training import Trainer, mlp_symbol

    kv = nv.kv.create("dist_sync")
    x, y = mlp_data()
    t = Trainer(mlp_symbol((32,)), (MLP_BATCH, MLP_DIM), kvstore=kv, seed=kv.rank)
    for step in range(MLP_STEPS):
        lo = (2 * step + kv.rank) * MLP_BATCH
        t.step(x[lo : lo + MLP_BATCH], y[lo : lo + MLP_BATCH])
    weights = {n: t.exe.arg_dict[n].asnumpy() for n in t.params}
    np.savez(os.environ["KV_TEST_OUT"] + f".{kv.rank}.npz", **weights)


MODULE_OPT = {"learning_rate": 0.1, "momentum": 0.9, "wd": 1e-3}


def module_for(batch: int, seed: int, kvstore: object) -> nv.mod.Module:
    """An MLP Module with Xavier weights drawn after nv.random.seed(seed), SGD + momentum."""
    from nnvmpy.training import mlp_symbol

    mod = nv.mod.Module(mlp_symbol((32,)))
    mod.bind(data_shapes=[("data", (batch, MLP_DIM))], label_shapes=[("softmax_label", (batch,))])
    nv.random.seed(seed)
    mod.init_params(nv.init.Xavier())
    mod.init_optimizer(kvstore=kvstore, optimizer="sgd", optimizer_params=MODULE_OPT)
    return mod


def module() -> None:
    """Module.fit's step on every worker's half of each batch through kvstore='dist_sync'.
    Each rank draws different initial weights: the store must start everyone from rank 0's."""
    rank = nv.kv.create("dist_sync").rank
    mod = module_for(MLP_BATCH, seed=rank, kvstore="dist_sync")
    assert mod._kvstore.type == "dist_sync"
    assert mod._update_on_kvstore
    x, y = mlp_data()
    for step in range(MLP_STEPS):
        lo = (2 * step + rank) * MLP_BATCH
        batch = nv.io.DataBatch([nv.nd.array(x[lo : lo + MLP_BATCH])],
                                [nv.nd.array(y[lo : lo + MLP_BATCH])])  # fmt: skip
        mod.forward(batch, is_train=True)
        mod.backward()
        mod.update()
    weights = {n: v.asnumpy() for n, v in mod.get_params()[0].items()}
    np.savez(os.environ["KV_TEST_OUT"] + f".{rank}.npz", **weights)


if __name__ == "__main__":
    scenarios = {"sums": sums, "killed": killed, "raised": raised, "mismatch": mismatch}
    scenarios.update(mlp=mlp, module=module, keys=keys)
    scenarios[sys.argv[1]]()
    print(f"rank {nv.kv.create('dist_sync').rank} ok", flush=True)
