"""nv.optimizer: MXNet 1.9.1's optimizers, each driving registered update ops.

    opt = nv.optimizer.create("adam", learning_rate=0.01, wd=1e-4)
    updater = nv.optimizer.get_updater(opt)
    updater(0, grad, weight)              # weight updated in place

optimizer.py has the base class (learning rate, schedules, lr/wd multipliers, update
counts, multi-precision); sgd.py the SGD family (SGD, NAG, Signum, LARS, LBSGD); adaptive.py
Adam, RMSProp, Ftrl, FTML and LAMB; composed.py the optimizers MXNet writes as nd
arithmetic (AdaGrad, AdaDelta, Adamax, Nadam, SGLD, DCASGD, Test); updater.py the Updater
that keeps states; contrib.py MXNet's contrib optimizers (GroupAdaGrad).
"""

from . import contrib
from .adaptive import FTML, FTRL, LAMB, Adam, Ftrl, RMSProp
from .composed import DCASGD, SGLD, AdaDelta, AdaGrad, Adamax, Nadam, Test
from .optimizer import Optimizer, create, register
from .sgd import LARS, LBSGD, NAG, SGD, Signum, ccSGD
from .updater import Updater, get_updater

__all__ = [
    "DCASGD",
    "FTML",
    "FTRL",
    "LAMB",
    "LARS",
    "LBSGD",
    "NAG",
    "SGD",
    "SGLD",
    "AdaDelta",
    "AdaGrad",
    "Adam",
    "Adamax",
    "Ftrl",
    "Nadam",
    "Optimizer",
    "RMSProp",
    "Signum",
    "Test",
    "Updater",
    "ccSGD",
    "contrib",
    "create",
    "get_updater",
    "register",
]
