"""nv.test_utils structured inputs: row-index tensors, identities, matrices with known
eigenvalues, checked with NumPy's linear algebra."""

from __future__ import annotations

import numpy as np
import pytest

import nnvmpy as nv
from nnvmpy import test_utils as tu


def test_create_2d_tensor_fills_row_i_with_i() -> None:
    t = tu.create_2d_tensor(3, 4)
    assert isinstance(t, nv.nd.NDArray)
    assert t.dtype == np.int64
    np.testing.assert_array_equal(t.asnumpy(), np.repeat(np.arange(3)[:, None], 4, axis=1))
    assert tu.create_2d_tensor(2, 3, dtype=np.float32).dtype == np.float32


def test_create_vector_counts_from_zero() -> None:
    v = tu.create_vector(5)
    assert v.dtype == np.int64
    assert v.asnumpy().tolist() == [0, 1, 2, 3, 4]
    assert tu.create_vector(0).shape == (0,)


def test_identity_matrices_are_float32_ndarrays() -> None:
    eye = tu.get_identity_mat(3)
    assert isinstance(eye, nv.nd.NDArray)
    assert eye.dtype == np.float32
    np.testing.assert_array_equal(eye.asnumpy(), [[1, 0, 0], [0, 1, 0], [0, 0, 1]])
    batch = tu.get_identity_mat_batch(2)
    assert batch.shape == (2, 2, 2)
    assert batch.dtype == np.float32
    np.testing.assert_array_equal(batch.asnumpy(), [[[1, 0], [0, 1]], [[1, 0], [0, 1]]])


def test_orthonormal_matrix_times_its_transpose_is_the_identity() -> None:
    np.random.seed(3)  # noqa: NPY002 - the helpers draw from the global generator
    for n in (1, 2, 5):
        q = tu.new_orthonormal_matrix_2d(n)
        assert q.dtype == np.float64
        assert q.shape == (n, n)
        np.testing.assert_allclose(q @ q.T, np.eye(n), atol=1e-12)
        np.testing.assert_allclose(q.T @ q, np.eye(n), atol=1e-12)


def test_symmetric_matrix_has_real_eigenvalues_in_range() -> None:
    np.random.seed(4)  # noqa: NPY002 - the helpers draw from the global generator
    for _ in range(5):
        s = tu.new_sym_matrix_with_real_eigvals_2d(6)
        assert s.dtype == np.float64
        np.testing.assert_array_equal(s, s.T)
        magnitudes = np.abs(np.linalg.eigvalsh(s))
        assert np.all(magnitudes >= 1.0 - 1e-9)
        assert np.all(magnitudes <= 10.0 + 1e-9)


def test_general_matrix_has_real_eigenvalues_and_is_well_conditioned() -> None:
    np.random.seed(5)  # noqa: NPY002 - the helpers draw from the global generator
    for _ in range(5):
        m = tu.new_matrix_with_real_eigvals_2d(6)
        assert not np.allclose(m, m.T)  # generally not symmetric
        eig = np.linalg.eigvals(m)
        np.testing.assert_allclose(eig.imag, 0.0, atol=1e-8)
        assert np.all(np.abs(eig.real) >= 1.0 - 1e-8)
        assert np.all(np.abs(eig.real) <= 10.0 + 1e-8)
        # cond(P D P^-1) <= cond(P)^2 * max|D| / min|D| = 4 * 10
        assert np.linalg.cond(m) <= 40.0 + 1e-6


def test_batched_generators_give_one_matrix_per_batch_entry() -> None:
    np.random.seed(6)  # noqa: NPY002 - the helpers draw from the global generator
    batch = tu.new_matrix_with_real_eigvals_nd((2, 3, 4, 4))
    assert batch.shape == (2, 3, 4, 4)
    assert batch.dtype == np.float64
    eig = np.linalg.eigvals(batch)
    np.testing.assert_allclose(eig.imag, 0.0, atol=1e-8)
    assert not np.allclose(batch[0, 0], batch[1, 2])  # independent draws
    sym = tu.new_sym_matrix_with_real_eigvals_nd((3, 5, 5))
    np.testing.assert_array_equal(sym, np.swapaxes(sym, -1, -2))


def test_generators_follow_the_seeded_global_generator() -> None:
    np.random.seed(7)  # noqa: NPY002 - the helpers draw from the global generator
    first = tu.new_matrix_with_real_eigvals_2d(4)
    np.random.seed(7)  # noqa: NPY002 - the helpers draw from the global generator
    np.testing.assert_array_equal(first, tu.new_matrix_with_real_eigvals_2d(4))


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: tu.create_vector(-1), "create_vector: expects a size >= 0"),
        (
            lambda: tu.get_identity_mat(2.5),  # type: ignore[arg-type]
            "get_identity_mat: expects an int size",
        ),
        (lambda: tu.new_matrix_with_real_eigvals_nd((2, 3, 4)), "square matrices"),
        (lambda: tu.new_sym_matrix_with_real_eigvals_nd((4,)), "square matrices"),
    ],
)
def test_bad_sizes_are_named_errors(call: object, message: str) -> None:
    with pytest.raises(nv.NNVMError, match=message):
        call()  # type: ignore[operator]
