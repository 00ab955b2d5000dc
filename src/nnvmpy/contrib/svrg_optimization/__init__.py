"""SVRG, stochastic variance-reduced gradient (Johnson & Zhang, 2013): MXNet's
`mx.contrib.svrg_optimization`, on nnvmpy's Module.

    mod = SVRGModule(sym, data_names=["data"], label_names=["label"], update_freq=2)
    mod.fit(train_iter, num_epoch=10, optimizer="sgd")

Every `update_freq` epochs the module snapshots the weights (w~) and averages the
gradient at w~ over the whole data set (mu); each step then descends along
g(w) - g(w~) + mu, computed on the same batch: an unbiased gradient whose variance
shrinks as w approaches w~. svrg_module.py holds the module, svrg_optimizer.py the
optimizer that updates weights normally and stores the full gradients (the `<name>_full`
keys of a KVStore) by assignment.
"""

from .svrg_module import SVRGModule
from .svrg_optimizer import _AssignmentOptimizer, _SVRGOptimizer

__all__ = ["SVRGModule", "_AssignmentOptimizer", "_SVRGOptimizer"]
