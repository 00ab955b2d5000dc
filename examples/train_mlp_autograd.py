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
"""

import argparse

from nnvmpy.training_imperative import train_mlp_imperative


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--train", type=int, default=8000, help="training samples")
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args(argv)
    hist = train_mlp_imperative(n_train=args.train, epochs=args.epochs, batch_size=args.batch_size)
    print(
        f"loss {hist.losses[0]:.3f} -> {hist.losses[-1]:.3f} in {hist.steps} steps "
        f"({1000 * hist.seconds / max(hist.steps, 1):.1f} ms/step)"
    )
    print(f"accuracy: train {hist.train_accuracy:.1%}, held-out {hist.test_accuracy:.1%}")


if __name__ == "__main__":
    main()
