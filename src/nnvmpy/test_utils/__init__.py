"""Testing helpers with MXNet 1.9.1's names, signatures and semantics, plus check_op.

- compare: same, almost_equal, assert_almost_equal (per-dtype tolerances, broadcasting),
  assert_exception, the tolerance tables;
- generate: random arrays and shapes (NumPy's seeded global generator), rand_ndarray,
  np_reduce, default_context / set_default_context;
- symbolic: check_symbolic_forward / check_symbolic_backward / check_numeric_gradient,
  simple_forward, check_speed;
- consistency: check_consistency across devices and dtypes;
- stats: mean/variance/chi-square checks of random generators;
- env: environment(), discard_stderr(), retry;
- opcheck: check_op, an op's registered attributes checked against each other;
- matrices: inputs with a known structure (row-index tensors, identities, matrices with
  known real eigenvalues);
- runtime_env: getenv/setenv, the machine and GPU the test runs on;
- graph_compare: same_symbol_structure; dummy_iter: DummyIter; download: download.

As in MXNet, `from test_utils import *` also brings Context, current_context, Symbol and
Features (MXNet's test files use `Context.default_ctx` through that import).

Sparse storage is out of scope: the sparse helpers (rand_sparse_ndarray, ...) are absent
and a sparse `stype` is a named NNVMError.
"""

from __future__ import annotations

from ..base import Context, current_context
from ..ndarray import array
from ..runtime import Features
from ..symbol import Symbol
from ..util import use_np, use_np_array, use_np_shape
from .compare import (
    almost_equal,
    almost_equal_ignore_nan,
    assert_allclose,
    assert_almost_equal,
    assert_almost_equal_ignore_nan,
    assert_almost_equal_with_err,
    assert_exception,
    checkShapes,
    collapse_sum_like,
    default_atols,
    default_numeric_eps,
    default_rtols,
    effective_dtype,
    find_max_violation,
    get_atol,
    get_etol,
    get_rtol,
    get_tolerance,
    get_tols,
    locationError,
    same,
)
from .consistency import check_consistency
from .download import download
from .dummy_iter import DummyIter
from .env import discard_stderr, environment, is_cd_run, retry, same_array, set_env_var
from .generate import (
    assign_each,
    assign_each2,
    default_context,
    default_dtype,
    list_gpus,
    np_reduce,
    rand_coord_2d,
    rand_ndarray,
    rand_shape_2d,
    rand_shape_3d,
    rand_shape_nd,
    random_arrays,
    random_sample,
    random_uniform_arrays,
    set_default_context,
)
from .graph_compare import same_symbol_structure
from .matrices import (
    create_2d_tensor,
    create_vector,
    get_identity_mat,
    get_identity_mat_batch,
    new_matrix_with_real_eigvals_2d,
    new_matrix_with_real_eigvals_nd,
    new_orthonormal_matrix_2d,
    new_sym_matrix_with_real_eigvals_2d,
    new_sym_matrix_with_real_eigvals_nd,
)
from .opcheck import _run_compute as _run_compute  # tests run kernels through it
from .opcheck import check_op
from .optimizer import compare_ndarray_tuple, compare_optimizer
from .runtime_env import (
    get_cuda_compute_capability,
    getenv,
    has_tvm_ops,
    is_aarch64_run,
    is_op_runnable,
    setenv,
)
from .stats import (
    chi_square_check,
    gen_buckets_probs_with_ppf,
    mean_check,
    var_check,
    verify_generator,
)
from .symbolic import (
    check_numeric_gradient,
    check_speed,
    check_symbolic_backward,
    check_symbolic_forward,
    numeric_grad,
    simple_forward,
)

__all__ = [
    "Context",
    "DummyIter",
    "Features",
    "Symbol",
    "almost_equal",
    "almost_equal_ignore_nan",
    "array",
    "assert_allclose",
    "assert_almost_equal",
    "assert_almost_equal_ignore_nan",
    "assert_almost_equal_with_err",
    "assert_exception",
    "assign_each",
    "assign_each2",
    "checkShapes",
    "check_consistency",
    "check_numeric_gradient",
    "check_op",
    "check_speed",
    "check_symbolic_backward",
    "check_symbolic_forward",
    "chi_square_check",
    "collapse_sum_like",
    "compare_ndarray_tuple",
    "compare_optimizer",
    "create_2d_tensor",
    "create_vector",
    "current_context",
    "default_atols",
    "default_context",
    "default_dtype",
    "default_numeric_eps",
    "default_rtols",
    "discard_stderr",
    "download",
    "effective_dtype",
    "environment",
    "find_max_violation",
    "gen_buckets_probs_with_ppf",
    "get_atol",
    "get_cuda_compute_capability",
    "get_etol",
    "get_identity_mat",
    "get_identity_mat_batch",
    "get_rtol",
    "get_tolerance",
    "get_tols",
    "getenv",
    "has_tvm_ops",
    "is_aarch64_run",
    "is_cd_run",
    "is_op_runnable",
    "list_gpus",
    "locationError",
    "mean_check",
    "new_matrix_with_real_eigvals_2d",
    "new_matrix_with_real_eigvals_nd",
    "new_orthonormal_matrix_2d",
    "new_sym_matrix_with_real_eigvals_2d",
    "new_sym_matrix_with_real_eigvals_nd",
    "np_reduce",
    "numeric_grad",
    "rand_coord_2d",
    "rand_ndarray",
    "rand_shape_2d",
    "rand_shape_3d",
    "rand_shape_nd",
    "random_arrays",
    "random_sample",
    "random_uniform_arrays",
    "retry",
    "same",
    "same_array",
    "same_symbol_structure",
    "set_default_context",
    "set_env_var",
    "setenv",
    "simple_forward",
    "use_np",
    "use_np_array",
    "use_np_shape",
    "var_check",
    "verify_generator",
]
