"""Optimizer update ops (MXNet's optimizer_op.cc and the contrib ops training steps use).

_common.py          gradient preprocessing, write modes, launching, registration chain
sgd.py              sgd / sgd_mom / nag_mom / signsgd / signum and their mp_* versions
multi_sgd.py        multi_(mp_)sgd(_mom)_update and the preloaded_* versions
adaptive.py         adam, rmsprop, rmspropalex, ftrl, ftml
lamb.py             lamb_update_phase1/2 and their mp_* versions
multi_lamb.py       _multi_lamb_update, _multi_mp_lamb_update (both phases, many tensors)
adamw.py            _adamw_update, _mp_adamw_update and their _multi_* versions (contrib)
group_adagrad.py    _contrib_group_adagrad_update (one AdaGrad rate per row)
gradient_stats.py   multi_sum_sq, multi_lars, all_finite, multi_all_finite, reset_arrays
"""

from . import (  # noqa: F401 - registrations
    adamw,
    adaptive,
    gradient_stats,
    group_adagrad,
    lamb,
    multi_lamb,
    multi_sgd,
    sgd,
)
