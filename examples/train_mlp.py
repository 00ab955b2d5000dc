"""Train the MLP of ../shared/models/mlp-symbol.json (784-512-512-10) with SGD + momentum.

The data is synthetic (classes made of clusters on a curved 12-d manifold inside 784-d
space, see nnvmpy.training.cluster_dataset), so this runs offline; it reaches > 95 %
held-out accuracy in a few epochs, with a progress bar on stderr.

    python examples/train_mlp.py [--epochs N] [--train SAMPLES] [--batch-size B]
    nnvmpy launch -n 2 -- python examples/train_mlp.py --kvstore dist_sync   # 2 workers
"""

from nnvmpy import training

if __name__ == "__main__":
    training.main("mlp")
