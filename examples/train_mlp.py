"""Train the MLP of ../shared/models/mlp-symbol.json (784-512-512-10) with SGD + momentum.

The data is synthetic (classes made of clusters on a curved 12-d manifold inside 784-d
space, see nnvmpy.training.cluster_dataset), so this runs offline; it reaches > 95 %
held-out accuracy in a few epochs. Usage: python examples/train_mlp.py [--epochs N]
"""

from __future__ import annotations

import argparse

from nnvmpy import training


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=4)
    parser.add_argument("--train", type=int, default=8000, help="training samples")
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    hist = training.train_mlp(n_train=args.train, epochs=args.epochs, batch_size=args.batch_size)
    print(
        f"loss {hist.losses[0]:.3f} -> {hist.losses[-1]:.3f} in {hist.steps} steps "
        f"({1000 * hist.seconds / hist.steps:.1f} ms/step)"
    )
    print(f"accuracy: train {hist.train_accuracy:.1%}, held-out {hist.test_accuracy:.1%}")


if __name__ == "__main__":
    main()
