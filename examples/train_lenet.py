"""Train LeNet (../shared/models/lenet-symbol.json) on synthetic 28x28 stroke images.

Each image holds one noisy, randomly shifted stroke; the class is its orientation (ten
angles 18 degrees apart, see nnvmpy.training.stroke_dataset). Usage:
python examples/train_lenet.py [--epochs N]
"""

from __future__ import annotations

import argparse

from nnvmpy import training


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--train", type=int, default=4000, help="training samples")
    parser.add_argument("--batch-size", type=int, default=64)
    args = parser.parse_args()
    hist = training.train_lenet(n_train=args.train, epochs=args.epochs, batch_size=args.batch_size)
    print(
        f"loss {hist.losses[0]:.3f} -> {hist.losses[-1]:.3f} in {hist.steps} steps "
        f"({1000 * hist.seconds / hist.steps:.1f} ms/step)"
    )
    print(f"accuracy: train {hist.train_accuracy:.1%}, held-out {hist.test_accuracy:.1%}")


if __name__ == "__main__":
    main()
