"""Training through a single-process KVStore gives the weights of the plain updater loop."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy.training import Trainer, cluster_dataset, mlp_symbol, shard
from nnvmpy.training_imperative import ImperativeTrainer


@pytest.mark.parametrize("kvstore", ["local", "device"])
def test_trainer_with_kvstore_matches_updater_loop(kvstore: str) -> None:
    x, y = cluster_dataset(48, dim=20, seed=3)
    plain = Trainer(mlp_symbol((16,)), (16, 20), seed=0)
    stored = Trainer(mlp_symbol((16,)), (16, 20), seed=0, kvstore=kvstore)
    assert stored.kvstore.type == kvstore
    for lo in range(0, 48, 16):
        plain.step(x[lo : lo + 16], y[lo : lo + 16])
        stored.step(x[lo : lo + 16], y[lo : lo + 16])
    for n in plain.params:
        np.testing.assert_allclose(
            stored.exe.arg_dict[n].asnumpy(), plain.exe.arg_dict[n].asnumpy(), rtol=1e-6, atol=1e-7
        )


def test_imperative_trainer_with_kvstore_matches_updater_loop() -> None:
    x, y = cluster_dataset(32, dim=20, seed=4)
    plain = ImperativeTrainer((16,), data_shape=(16, 20))
    stored = ImperativeTrainer((16,), data_shape=(16, 20), kvstore=nv.kv.create("local"))
    for lo in (0, 16):
        plain.step(x[lo : lo + 16], y[lo : lo + 16])
        stored.step(x[lo : lo + 16], y[lo : lo + 16])
    for n in plain.names:
        np.testing.assert_allclose(
            stored.params[n].asnumpy(), plain.params[n].asnumpy(), rtol=1e-6, atol=1e-7
        )


class _FakeDist:
    def __init__(self, rank: int, num_workers: int) -> None:
        self.rank, self.num_workers = rank, num_workers


def test_shard_gives_each_worker_an_equal_disjoint_part() -> None:
    x = np.arange(22, dtype=np.float32).reshape(11, 2)
    y = np.arange(11, dtype=np.float32)
    parts = [shard(x, y, _FakeDist(r, 3)) for r in range(3)]
    assert all(len(px) == len(py) == 3 for px, py in parts)
    ys = np.concatenate([py for _, py in parts])
    assert len(set(ys.tolist())) == 9
    for px, py in parts:
        np.testing.assert_array_equal(px[:, 0] / 2, py)
    sx, sy = shard(x, y, None)
    assert sx is x
    assert sy is y
