"""Type stubs for nnvmpy.ndarray.contrib, generated from the op registry by `nnvmpy stubs`.

Do not edit: `nnvmpy stubs` rewrites this file.
"""

from typing import Any, Literal, TypeAlias

import numpy as np

from nnvmpy.ndarray.ndarray import NDArray as NDArray
def _make(op: Any) -> Any: ...

_Shape: TypeAlias = tuple[int, ...] | list[int] | int
_FloatTuple: TypeAlias = tuple[float, ...] | list[float] | float
_IntOrNoneTuple: TypeAlias = tuple[int | None, ...] | list[int | None]

def CTCLoss(
    data: NDArray | None = None,
    label: NDArray | None = None,
    data_lengths: NDArray | None = None,
    label_lengths: NDArray | None = None,
    *,
    use_data_lengths: bool | int = False,
    use_label_lengths: bool | int = False,
    blank_label: Literal['first', 'last'] | str = 'first',
    out: NDArray | list[NDArray] | None = None,
) -> Any:
    """Connectionist Temporal Classification Loss: -log p(label | data) per sequence, for data (sequence_length, batch_size, alphabet_size) of unnormalised activations and label (batch_size, label_sequence_length). See nnvmpy.ops.nn.ctc for the blank, padding and length conventions.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input ndarray
    label : NDArray-or-Symbol
        Ground-truth labels for the loss.
    data_lengths : NDArray-or-Symbol
        Lengths of data for each of the samples. Only required when use_data_lengths is true.
    label_lengths : NDArray-or-Symbol
        Lengths of labels for each of the samples. Only required when use_label_lengths is true.
    use_data_lengths : boolean, optional, default=0
        Whether the data lenghts are decided by `data_lengths`. If false, the lengths are equal to the max sequence length.
    use_label_lengths : boolean, optional, default=0
        Whether the label lenghts are decided by `label_lengths`, or derived from `padding_mask`. If false, the lengths are derived from the first occurrence of the value of `padding_mask`. The value of `padding_mask` is ``0`` when first CTC label is reserved for blank, and ``-1`` when last label is reserved for blank. See `blank_label`.
    blank_label : {'first', 'last'}, optional, default='first'
        Set the label that is reserved for blank label. If "first", 0-th label is reserved, and label values for tokens in the vocabulary are between ``1`` and ``alphabet_size-1``, and the padding mask is ``0``. If "last", last label value ``alphabet_size-1`` is reserved for blank label instead, and label values for tokens in the vocabulary are between ``0`` and ``alphabet_size-2``, and the padding mask is ``-1``.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/aliases.py.
    """

def SyncBatchNorm(
    data: NDArray | None = None,
    gamma: NDArray | None = None,
    beta: NDArray | None = None,
    moving_mean: NDArray | None = None,
    moving_var: NDArray | None = None,
    *,
    eps: float = 0.001,
    momentum: float = 0.9,
    fix_gamma: bool | int = True,
    use_global_stats: bool | int = False,
    output_mean_var: bool | int = False,
    ndev: int = 1,
    key: str = '',
    out: NDArray | list[NDArray] | None = None,
) -> Any:
    """Batch normalization with statistics synchronized across devices (MXNet's SyncBatchNorm). On nnvmpy's single device per executor it normalizes with the local batch's statistics, as BatchNorm over axis 1; its 'var' output is the variance.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to batch normalization
    gamma : NDArray-or-Symbol
        gamma array
    beta : NDArray-or-Symbol
        beta array
    moving_mean : NDArray-or-Symbol
        running mean of input
    moving_var : NDArray-or-Symbol
        running variance of input
    eps : float, optional, default=0.001
        Epsilon to prevent div 0
    momentum : float, optional, default=0.9
        Momentum for moving average
    fix_gamma : boolean, optional, default=1
        Fix gamma while training
    use_global_stats : boolean, optional, default=0
        Whether use global moving statistics instead of local batch-norm. This will force change batch-norm into a scale shift operator.
    output_mean_var : boolean, optional, default=0
        Output All,normal mean and var
    ndev : int (non-negative), optional, default=1
        The count of GPU devices
    key : string, optional, default=''
        Hash key for synchronization, please set the same hash key for same layer, Block.prefix is typically used as in :class:`gluon.nn.contrib.SyncBatchNorm`.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/nn/sync_batch_norm.py.
    """

def allclose(
    a: NDArray | None = None,
    b: NDArray | None = None,
    *,
    rtol: float = 1e-05,
    atol: float = 1e-08,
    equal_nan: bool | int = True,
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
    """Compares all elements of two arrays: 1 if |a - b| <= atol + rtol * |b| everywhere (NaN equal to NaN with equal_nan), else 0; a 0-d uint8 array.

    Parameters
    ----------
    a : NDArray-or-Symbol
        Input array a
    b : NDArray-or-Symbol
        Input array b
    rtol : float, optional, default=1e-05
        Relative tolerance.
    atol : float, optional, default=1e-08
        Absolute tolerance.
    equal_nan : boolean, optional, default=1
        Whether to compare NaN's as equal. If True, NaN's in A will be considered equal to NaN's in B in the output array.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/allclose.py.
    """

def ctc_loss(
    data: NDArray | None = None,
    label: NDArray | None = None,
    data_lengths: NDArray | None = None,
    label_lengths: NDArray | None = None,
    *,
    use_data_lengths: bool | int = False,
    use_label_lengths: bool | int = False,
    blank_label: Literal['first', 'last'] | str = 'first',
    out: NDArray | list[NDArray] | None = None,
) -> Any:
    """Connectionist Temporal Classification Loss: -log p(label | data) per sequence, for data (sequence_length, batch_size, alphabet_size) of unnormalised activations and label (batch_size, label_sequence_length). See nnvmpy.ops.nn.ctc for the blank, padding and length conventions.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input ndarray
    label : NDArray-or-Symbol
        Ground-truth labels for the loss.
    data_lengths : NDArray-or-Symbol
        Lengths of data for each of the samples. Only required when use_data_lengths is true.
    label_lengths : NDArray-or-Symbol
        Lengths of labels for each of the samples. Only required when use_label_lengths is true.
    use_data_lengths : boolean, optional, default=0
        Whether the data lenghts are decided by `data_lengths`. If false, the lengths are equal to the max sequence length.
    use_label_lengths : boolean, optional, default=0
        Whether the label lenghts are decided by `label_lengths`, or derived from `padding_mask`. If false, the lengths are derived from the first occurrence of the value of `padding_mask`. The value of `padding_mask` is ``0`` when first CTC label is reserved for blank, and ``-1`` when last label is reserved for blank. See `blank_label`.
    blank_label : {'first', 'last'}, optional, default='first'
        Set the label that is reserved for blank label. If "first", 0-th label is reserved, and label values for tokens in the vocabulary are between ``1`` and ``alphabet_size-1``, and the padding mask is ``0``. If "last", last label value ``alphabet_size-1`` is reserved for blank label instead, and label values for tokens in the vocabulary are between ``0`` and ``alphabet_size-2``, and the padding mask is ``-1``.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/aliases.py.
    """

def div_sqrt_dim(
    data: NDArray | None = None,
    *,
    out: NDArray | list[NDArray] | None = None,
    **kwargs: Any,
) -> NDArray:
    """Rescale the input by the square root of its last dimension: x / sqrt(x.shape[-1]).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/contrib_math.py.
    """

def gradientmultiplier(
    data: NDArray | None = None,
    *,
    scalar: float = 1.0,
    is_int: bool | int = True,
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
    """The identity in the forward pass; multiplies the gradient by `scalar` in the backward pass (e.g. -1 for a gradient reversal layer).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.
    scalar : float, optional, default=1.0
        Scalar input value
    is_int : boolean, optional, default=1
        Indicate whether scalar input is int type (MXNet 1.9: with False, an integer array gives a float64 result)

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/contrib_math.py.
    """

def interleaved_matmul_encdec_qk(
    queries: NDArray | None = None,
    keys_values: NDArray | None = None,
    *,
    heads: int,
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
    """Compute the matrix multiplication between the projections of queries and keys in multihead attention use as encoder-decoder. The inputs must be the queries (qseq_length, batch_size, num_heads * head_dim) and a tensor of interleaved projections of keys and values (kseq_length, batch_size, num_heads * head_dim * 2). Returns (batch_size * num_heads, qseq_length, kseq_length), queries scaled by 1/sqrt(head_dim).

    Parameters
    ----------
    queries : NDArray-or-Symbol
        Queries
    keys_values : NDArray-or-Symbol
        Keys values
    heads : int (non-negative), required
        Set number of heads

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/contrib_attention.py.
    """

def interleaved_matmul_encdec_valatt(
    keys_values: NDArray | None = None,
    attention: NDArray | None = None,
    *,
    heads: int,
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
    """Compute the matrix multiplication between the projections of values and the attention weights in multihead attention use as encoder-decoder. The inputs must be a tensor of interleaved projections of keys and values (kseq_length, batch_size, num_heads * head_dim * 2) and the attention weights (batch_size * num_heads, qseq_length, kseq_length). Returns (qseq_length, batch_size, num_heads * head_dim).

    Parameters
    ----------
    keys_values : NDArray-or-Symbol
        Keys values
    attention : NDArray-or-Symbol
        Attention
    heads : int (non-negative), required
        Set number of heads

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/contrib_attention.py.
    """

def interleaved_matmul_selfatt_qk(
    queries_keys_values: NDArray | None = None,
    *,
    heads: int,
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
    """Compute the matrix multiplication between the projections of queries and keys in multihead attention use as self attention. The input must be a single tensor of interleaved projections of queries, keys and values following the layout: (seq_length, batch_size, num_heads * head_dim * 3). Returns (batch_size * num_heads, seq_length, seq_length), the queries scaled by 1 / sqrt(head_dim).

    Parameters
    ----------
    queries_keys_values : NDArray-or-Symbol
        Queries keys values
    heads : int (non-negative), required
        Set number of heads

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/contrib_attention.py.
    """

def interleaved_matmul_selfatt_valatt(
    queries_keys_values: NDArray | None = None,
    attention: NDArray | None = None,
    *,
    heads: int,
    out: NDArray | list[NDArray] | None = None,
) -> NDArray:
    """Compute the matrix multiplication between the projections of values and the attention weights in multihead attention use as self attention. The inputs must be a tensor of interleaved projections of queries, keys and values following the layout (seq_length, batch_size, num_heads * head_dim * 3) and the attention weights (batch_size * num_heads, seq_length, seq_length). Returns (seq_length, batch_size, num_heads * head_dim).

    Parameters
    ----------
    queries_keys_values : NDArray-or-Symbol
        Queries keys values
    attention : NDArray-or-Symbol
        Attention
    heads : int (non-negative), required
        Set number of heads

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/contrib_attention.py.
    """

def isfinite(
    data: NDArray | None = None,
    *,
    out: NDArray | list[NDArray] | None = None,
    **kwargs: Any,
) -> NDArray:
    """1 where x is neither NaN nor infinite, else 0, in x's dtype.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/contrib_math.py.
    """

def isinf(
    data: NDArray | None = None,
    *,
    out: NDArray | list[NDArray] | None = None,
    **kwargs: Any,
) -> NDArray:
    """1 where x is +inf or -inf, else 0, in x's dtype.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/contrib_math.py.
    """

def isnan(
    data: NDArray | None = None,
    *,
    out: NDArray | list[NDArray] | None = None,
    **kwargs: Any,
) -> NDArray:
    """1 where x is NaN, else 0, in x's dtype.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/contrib_math.py.
    """

def round_ste(
    data: NDArray | None = None,
    *,
    out: NDArray | list[NDArray] | None = None,
    **kwargs: Any,
) -> NDArray:
    """Round half away from zero, with a straight-through gradient (dy passes unchanged).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/contrib_math.py.
    """

def sign_ste(
    data: NDArray | None = None,
    *,
    out: NDArray | list[NDArray] | None = None,
    **kwargs: Any,
) -> NDArray:
    """Sign of x, with a straight-through gradient (dy passes unchanged).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : NDArray or list of NDArrays

    Defined in nnvmpy/ops/contrib_math.py.
    """
