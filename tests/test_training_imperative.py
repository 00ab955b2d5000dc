"""The MLP trained imperatively (autograd) against the same MLP on a bound executor."""

from __future__ import annotations

import numpy as np
import pytest

from nnvmpy.training import Trainer, cluster_dataset, mlp_symbol, train_mlp
from nnvmpy.training_imperative import ImperativeTrainer, train_mlp_imperative


def test_imperative_steps_match_the_executor_steps() -> None:
    """Same seed, same initial weights, same ops: the two styles compute the same numbers."""
    x, y = cluster_dataset(64, dim=20, seed=3)
    symbolic = Trainer(mlp_symbol((16,), 10), (8, 20), lr=0.1, seed=5)
    imperative = ImperativeTrainer((16,), 10, data_shape=(8, 20), lr=0.1, seed=5)
    for name in imperative.names:
        np.testing.assert_array_equal(
            imperative.params[name].asnumpy(), symbolic.exe.arg_dict[name].asnumpy()
        )
    for i in range(4):
        bx, by = x[8 * i : 8 * (i + 1)], y[8 * i : 8 * (i + 1)]
        np.testing.assert_allclose(imperative.step(bx, by), symbolic.step(bx, by), rtol=1e-5)
    for name in imperative.names:
        np.testing.assert_allclose(
            imperative.params[name].asnumpy(),
            symbolic.exe.arg_dict[name].asnumpy(),
            rtol=1e-5,
            atol=1e-7,
            err_msg=name,
        )
    assert imperative.accuracy(x, y) == pytest.approx(symbolic.accuracy(x, y))


@pytest.mark.slow
def test_imperative_training_reaches_the_executors_held_out_accuracy() -> None:
    sym = train_mlp(n_train=2000, epochs=2, progress=False, hidden=(64, 64))
    imp = train_mlp_imperative(n_train=2000, epochs=2, progress=False, hidden=(64, 64))
    assert imp.test_accuracy > 0.8
    assert imp.test_accuracy == pytest.approx(sym.test_accuracy, abs=0.01)
