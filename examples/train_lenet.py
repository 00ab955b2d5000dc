"""Train LeNet (../shared/models/lenet-symbol.json) on synthetic 28x28 stroke images.

Each image holds one noisy, randomly shifted stroke; the class is its orientation (ten
angles 18 degrees apart, see nnvmpy.training.stroke_dataset); > 95 % held-out accuracy
in a few epochs, with a progress bar on stderr.

    python examples/train_lenet.py [--epochs N] [--train SAMPLES] [--batch-size B]
    nnvmpy launch -n 2 -- python examples/train_lenet.py --kvstore dist_sync   # 2 workers
"""

from nnvmpy import training

if __name__ == "__main__":
    training.main("lenet")
