"""Train the MLP of train_mlp.py imperatively: nd ops under autograd.record(), backward(),
and sgd_mom_update on every weight, instead of a bound executor.

The network (784-512-512-10), the synthetic data, the initial weights, the learning rate
and the update are those of examples/train_mlp.py, so both styles reach the same held-out
accuracy; only the way a step is written differs (nnvmpy/training_imperative.py):

    with autograd.record():
        out = forward(data, label)      # FullyConnected, Activation, ..., SoftmaxOutput
    out.backward()
    for w in weights:
        nd.sgd_mom_update(w, w.grad, mom[w], out=w, lr=..., momentum=..., wd=...)

    python examples/train_mlp_autograd.py [--epochs N] [--train SAMPLES] [--batch-size B]
    nnvmpy launch -n 2 -- python examples/train_mlp_autograd.py --kvstore dist_sync
"""

import argparse

import nnvmpy as nv
from nnvmpy.training_imperative import train_mlp_imperative


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--train", type=int, default=8000, help="training samples")
    parser.add_argument("--batch-size", type=int, default=64, help="per worker")
    parser.add_argument(
        "--kvstore",
        default=None,
        choices=["local", "device", "dist_sync", "dist_device_sync"],
        help="update through a KVStore; dist_*: under `nnvmpy launch -n N -- ...`",
    )
    args = parser.parse_args(argv)
    kv = nv.kv.create(args.kvstore) if args.kvstore else None
    hist = train_mlp_imperative(
        n_train=args.train,
        epochs=args.epochs,
        batch_size=args.batch_size,
        progress=kv is None or kv.rank == 0,
        kvstore=kv,
    )
    if kv is not None and kv.rank != 0:
        return
    print(
        f"loss {hist.losses[0]:.3f} -> {hist.losses[-1]:.3f} in {hist.steps} steps "
        f"({1000 * hist.seconds / max(hist.steps, 1):.1f} ms/step)"
    )
    print(f"accuracy: train {hist.train_accuracy:.1%}, held-out {hist.test_accuracy:.1%}")


if __name__ == "__main__":
    main()
