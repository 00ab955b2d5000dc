"""Type stubs for nnvmpy.symbol.contrib, generated from the op registry by `nnvmpy stubs`.

Do not edit: `nnvmpy stubs` rewrites this file.
"""

from typing import Any, Literal, TypeAlias

import numpy as np

from nnvmpy.symbol.symbol import Symbol as Symbol
def _make(op: Any) -> Any: ...
def rand_zipfian(true_classes: Any, num_sampled: Any, range_max: Any) -> Any: ...

_Shape: TypeAlias = tuple[int, ...] | list[int] | int
_FloatTuple: TypeAlias = tuple[float, ...] | list[float] | float
_IntOrNoneTuple: TypeAlias = tuple[int | None, ...] | list[int | None]

def CTCLoss(
    data: Symbol | None = None,
    label: Symbol | None = None,
    data_lengths: Symbol | None = None,
    label_lengths: Symbol | None = None,
    *,
    use_data_lengths: bool | int = False,
    use_label_lengths: bool | int = False,
    blank_label: Literal['first', 'last'] | str = 'first',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
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
    out : Symbol

    Defined in nnvmpy/ops/aliases.py.
    """

def MultiBoxDetection(
    cls_prob: Symbol | None = None,
    loc_pred: Symbol | None = None,
    anchor: Symbol | None = None,
    *,
    clip: bool | int = True,
    threshold: float = 0.01,
    background_id: int = 0,
    nms_threshold: float = 0.5,
    force_suppress: bool | int = False,
    variances: _FloatTuple = (0.1, 0.1, 0.2, 0.2),
    nms_topk: int = -1,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Convert multibox detection predictions.

    Parameters
    ----------
    cls_prob : NDArray-or-Symbol
        Class probabilities.
    loc_pred : NDArray-or-Symbol
        Location regression predictions.
    anchor : NDArray-or-Symbol
        Multibox prior anchor boxes
    clip : boolean, optional, default=1
        Clip out-of-boundary boxes.
    threshold : float, optional, default=0.01
        Threshold to be a positive prediction.
    background_id : int, optional, default=0
        Background id.
    nms_threshold : float, optional, default=0.5
        Non-maximum suppression threshold.
    force_suppress : boolean, optional, default=0
        Suppress all detections regardless of class_id.
    variances : tuple of <float>, optional, default=(0.1, 0.1, 0.2, 0.2)
        Variances to be decoded from box regression output.
    nms_topk : int, optional, default=-1
        Keep maximum top k detections before nms, -1 for no limit.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_multibox.py.
    """

def MultiBoxPrior(
    data: Symbol | None = None,
    *,
    sizes: _FloatTuple = (1.0,),
    ratios: _FloatTuple = (1.0,),
    clip: bool | int = False,
    steps: _FloatTuple = (-1.0, -1.0),
    offsets: _FloatTuple = (0.5, 0.5),
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Generate prior(anchor) boxes from data, sizes and ratios.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data.
    sizes : tuple of <float>, optional, default=(1.0,)
        List of sizes of generated MultiBoxPriores.
    ratios : tuple of <float>, optional, default=(1.0,)
        List of aspect ratios of generated MultiBoxPriores.
    clip : boolean, optional, default=0
        Whether to clip out-of-boundary boxes.
    steps : tuple of <float>, optional, default=(-1.0, -1.0)
        Priorbox step across y and x, -1 for auto calculation.
    offsets : tuple of <float>, optional, default=(0.5, 0.5)
        Priorbox center offsets, y and x respectively

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_multibox.py.
    """

def MultiBoxTarget(
    anchor: Symbol | None = None,
    label: Symbol | None = None,
    cls_pred: Symbol | None = None,
    *,
    overlap_threshold: float = 0.5,
    ignore_label: float = -1.0,
    negative_mining_ratio: float = -1.0,
    negative_mining_thresh: float = 0.5,
    minimum_negative_samples: int = 0,
    variances: _FloatTuple = (0.1, 0.1, 0.2, 0.2),
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Compute Multibox training targets

    Parameters
    ----------
    anchor : NDArray-or-Symbol
        Generated anchor boxes.
    label : NDArray-or-Symbol
        Object detection labels.
    cls_pred : NDArray-or-Symbol
        Class predictions.
    overlap_threshold : float, optional, default=0.5
        Anchor-GT overlap threshold to be regarded as a positive match.
    ignore_label : float, optional, default=-1.0
        Label for ignored anchors.
    negative_mining_ratio : float, optional, default=-1.0
        Max negative to positive samples ratio, use -1 to disable mining
    negative_mining_thresh : float, optional, default=0.5
        Threshold used for negative mining.
    minimum_negative_samples : int, optional, default=0
        Minimum number of negative samples.
    variances : tuple of <float>, optional, default=(0.1, 0.1, 0.2, 0.2)
        Variances to be encoded in box regression target.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_multibox.py.
    """

def SyncBatchNorm(
    data: Symbol | None = None,
    gamma: Symbol | None = None,
    beta: Symbol | None = None,
    moving_mean: Symbol | None = None,
    moving_var: Symbol | None = None,
    *,
    eps: float = 0.001,
    momentum: float = 0.9,
    fix_gamma: bool | int = True,
    use_global_stats: bool | int = False,
    output_mean_var: bool | int = False,
    ndev: int = 1,
    key: str = '',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
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
    out : Symbol

    Defined in nnvmpy/ops/nn/sync_batch_norm.py.
    """

def allclose(
    a: Symbol | None = None,
    b: Symbol | None = None,
    *,
    rtol: float = 1e-05,
    atol: float = 1e-08,
    equal_nan: bool | int = True,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
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
    out : Symbol

    Defined in nnvmpy/ops/allclose.py.
    """

def bipartite_matching(
    data: Symbol | None = None,
    *,
    is_ascend: bool | int = False,
    threshold: float,
    topk: int = -1,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Compute bipartite matching.
      The matching is performed on score matrix with shape [B, N, M]
      - B: batch_size
      - N: number of rows to match
      - M: number of columns as reference to be matched against.

      Returns:
      x : matched column indices. -1 indicating non-matched elements in rows.
      y : matched row indices.

      Note::

        Zero gradients are back-propagated in this op for now.

      Example::

        s = [[0.5, 0.6], [0.1, 0.2], [0.3, 0.4]]
        x, y = bipartite_matching(x, threshold=1e-12, is_ascend=False)
        x = [1, -1, 0]
        y = [2, 0]

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input
    is_ascend : boolean, optional, default=0
        Use ascend order for scores instead of descending. Please set threshold accordingly.
    threshold : float, required
        Ignore matching when score < thresh, if is_ascend=false, or ignore score > thresh, if is_ascend=true.
    topk : int, optional, default=-1
        Limit the number of matches to topk, set -1 for no limit

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_bbox.py.
    """

def box_decode(
    data: Symbol | None = None,
    anchors: Symbol | None = None,
    *,
    std0: float = 1.0,
    std1: float = 1.0,
    std2: float = 1.0,
    std3: float = 1.0,
    clip: float = -1.0,
    format: Literal['center', 'corner'] | str = 'center',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Decode bounding boxes training target with normalized center offsets.
        Input bounding boxes are using corner type: `x_{min}, y_{min}, x_{max}, y_{max}`
        or center type: `x, y, width, height.) array

    Parameters
    ----------
    data : NDArray-or-Symbol
        (B, N, 4) predicted bbox offset
    anchors : NDArray-or-Symbol
        (1, N, 4) encoded in corner or center
    std0 : float, optional, default=1.0
        value to be divided from the 1st encoded values
    std1 : float, optional, default=1.0
        value to be divided from the 2nd encoded values
    std2 : float, optional, default=1.0
        value to be divided from the 3rd encoded values
    std3 : float, optional, default=1.0
        value to be divided from the 4th encoded values
    clip : float, optional, default=-1.0
        If larger than 0, bounding box target will be clipped to this value.
    format : {'center', 'corner'}, optional, default='center'
        The box encoding type. 
     "corner" means boxes are encoded as [xmin, ymin, xmax, ymax], "center" means boxes are encodes as [x, y, width, height].

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_bbox.py.
    """

def box_encode(
    samples: Symbol | None = None,
    matches: Symbol | None = None,
    anchors: Symbol | None = None,
    refs: Symbol | None = None,
    means: Symbol | None = None,
    stds: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Encode bounding boxes training target with normalized center offsets.
        Input bounding boxes are using corner type: `x_{min}, y_{min}, x_{max}, y_{max}`.

    Parameters
    ----------
    samples : NDArray-or-Symbol
        (B, N) value +1 (positive), -1 (negative), 0 (ignore)
    matches : NDArray-or-Symbol
        (B, N) value range [0, M)
    anchors : NDArray-or-Symbol
        (B, N, 4) encoded in corner
    refs : NDArray-or-Symbol
        (B, M, 4) encoded in corner
    means : NDArray-or-Symbol
        (4,) Mean value to be subtracted from encoded values
    stds : NDArray-or-Symbol
        (4,) Std value to be divided from encoded values

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_bbox.py.
    """

def box_iou(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    format: Literal['center', 'corner'] | str = 'corner',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Bounding box overlap of two arrays.

    The overlap is defined as Intersection-over-Union, aka, IOU.
    - lhs: (a_1, a_2, ..., a_n, 4) array
    - rhs: (b_1, b_2, ..., b_n, 4) array
    - output: (a_1, a_2, ..., a_n, b_1, b_2, ..., b_n) array

    Example::

      x = [[0.5, 0.5, 1.0, 1.0], [0.0, 0.0, 0.5, 0.5]]
      y = [[0.25, 0.25, 0.75, 0.75]]
      box_iou(x, y, format='corner') = [[0.1428], [0.1428]]

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        The first input
    rhs : NDArray-or-Symbol
        The second input
    format : {'center', 'corner'}, optional, default='corner'
        The box encoding type. 
     "corner" means boxes are encoded as [xmin, ymin, xmax, ymax], "center" means boxes are encodes as [x, y, width, height].

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_bbox.py.
    """

def box_nms(
    data: Symbol | None = None,
    *,
    overlap_thresh: float = 0.5,
    valid_thresh: float = 0.0,
    topk: int = -1,
    coord_start: int = 2,
    score_index: int = 1,
    id_index: int = -1,
    background_id: int = -1,
    force_suppress: bool | int = False,
    in_format: Literal['center', 'corner'] | str = 'corner',
    out_format: Literal['center', 'corner'] | str = 'corner',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Apply non-maximum suppression to input.

    The output will be sorted in descending order according to `score`. Boxes with overlaps larger than `overlap_thresh`, smaller scores and background boxes will be removed and filled with -1, the corresponding position will be recorded for backward propogation.

    During back-propagation, the gradient will be copied to the original position according to the input index. For positions that have been suppressed, the in_grad will be assigned 0.
    In summary, gradients are sticked to its boxes, will either be moved or discarded according to its original index in input.

    Input requirements::

      1. Input tensor have at least 2 dimensions, (n, k), any higher dims will be regarded as batch, e.g. (a, b, c, d, n, k) == (a*b*c*d, n, k)
      2. n is the number of boxes in each batch
      3. k is the width of each box item.

    By default, a box is [id, score, xmin, ymin, xmax, ymax, ...], additional elements are allowed.

    - `id_index`: optional, use -1 to ignore, useful if `force_suppress=False`, which means we will skip highly overlapped boxes if one is `apple` while the other is `car`.
    - `background_id`: optional, default=-1, class id for background boxes, useful when `id_index >= 0` which means boxes with background id will be filtered before nms.
    - `coord_start`: required, default=2, the starting index of the 4 coordinates.
    - `score_index`: required, default=1, box score/confidence.
    - `in_format` and `out_format`: default='corner', specify in/out box formats.

    Example::

      x = [[0, 0.5, 0.1, 0.1, 0.2, 0.2], [1, 0.4, 0.1, 0.1, 0.2, 0.2],
           [0, 0.3, 0.1, 0.1, 0.14, 0.14], [2, 0.6, 0.5, 0.5, 0.7, 0.8]]
      box_nms(x, overlap_thresh=0.1, coord_start=2, score_index=1, id_index=0,
          force_suppress=True, in_format='corner', out_typ='corner') =
          [[2, 0.6, 0.5, 0.5, 0.7, 0.8], [0, 0.5, 0.1, 0.1, 0.2, 0.2],
           [-1, -1, -1, -1, -1, -1], [-1, -1, -1, -1, -1, -1]]

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input
    overlap_thresh : float, optional, default=0.5
        Overlapping(IoU) threshold to suppress object with smaller score.
    valid_thresh : float, optional, default=0.0
        Filter input boxes to those whose scores greater than valid_thresh.
    topk : int, optional, default=-1
        Apply nms to topk boxes with descending scores, -1 to no restriction.
    coord_start : int, optional, default=2
        Start index of the consecutive 4 coordinates.
    score_index : int, optional, default=1
        Index of the scores/confidence of boxes.
    id_index : int, optional, default=-1
        Optional, index of the class categories, -1 to disable.
    background_id : int, optional, default=-1
        Optional, id of the background class which will be ignored in nms.
    force_suppress : boolean, optional, default=0
        Optional, if set false and id_index is provided, nms will only apply to boxes belongs to the same category
    in_format : {'center', 'corner'}, optional, default='corner'
        The input box encoding type. 
     "corner" means boxes are encoded as [xmin, ymin, xmax, ymax], "center" means boxes are encodes as [x, y, width, height].
    out_format : {'center', 'corner'}, optional, default='corner'
        The output box encoding type. 
     "corner" means boxes are encoded as [xmin, ymin, xmax, ymax], "center" means boxes are encodes as [x, y, width, height].

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_bbox.py.
    """

def box_non_maximum_suppression(
    data: Symbol | None = None,
    *,
    overlap_thresh: float = 0.5,
    valid_thresh: float = 0.0,
    topk: int = -1,
    coord_start: int = 2,
    score_index: int = 1,
    id_index: int = -1,
    background_id: int = -1,
    force_suppress: bool | int = False,
    in_format: Literal['center', 'corner'] | str = 'corner',
    out_format: Literal['center', 'corner'] | str = 'corner',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Apply non-maximum suppression to input.

    The output will be sorted in descending order according to `score`. Boxes with overlaps larger than `overlap_thresh`, smaller scores and background boxes will be removed and filled with -1, the corresponding position will be recorded for backward propogation.

    During back-propagation, the gradient will be copied to the original position according to the input index. For positions that have been suppressed, the in_grad will be assigned 0.
    In summary, gradients are sticked to its boxes, will either be moved or discarded according to its original index in input.

    Input requirements::

      1. Input tensor have at least 2 dimensions, (n, k), any higher dims will be regarded as batch, e.g. (a, b, c, d, n, k) == (a*b*c*d, n, k)
      2. n is the number of boxes in each batch
      3. k is the width of each box item.

    By default, a box is [id, score, xmin, ymin, xmax, ymax, ...], additional elements are allowed.

    - `id_index`: optional, use -1 to ignore, useful if `force_suppress=False`, which means we will skip highly overlapped boxes if one is `apple` while the other is `car`.
    - `background_id`: optional, default=-1, class id for background boxes, useful when `id_index >= 0` which means boxes with background id will be filtered before nms.
    - `coord_start`: required, default=2, the starting index of the 4 coordinates.
    - `score_index`: required, default=1, box score/confidence.
    - `in_format` and `out_format`: default='corner', specify in/out box formats.

    Example::

      x = [[0, 0.5, 0.1, 0.1, 0.2, 0.2], [1, 0.4, 0.1, 0.1, 0.2, 0.2],
           [0, 0.3, 0.1, 0.1, 0.14, 0.14], [2, 0.6, 0.5, 0.5, 0.7, 0.8]]
      box_nms(x, overlap_thresh=0.1, coord_start=2, score_index=1, id_index=0,
          force_suppress=True, in_format='corner', out_typ='corner') =
          [[2, 0.6, 0.5, 0.5, 0.7, 0.8], [0, 0.5, 0.1, 0.1, 0.2, 0.2],
           [-1, -1, -1, -1, -1, -1], [-1, -1, -1, -1, -1, -1]]

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input
    overlap_thresh : float, optional, default=0.5
        Overlapping(IoU) threshold to suppress object with smaller score.
    valid_thresh : float, optional, default=0.0
        Filter input boxes to those whose scores greater than valid_thresh.
    topk : int, optional, default=-1
        Apply nms to topk boxes with descending scores, -1 to no restriction.
    coord_start : int, optional, default=2
        Start index of the consecutive 4 coordinates.
    score_index : int, optional, default=1
        Index of the scores/confidence of boxes.
    id_index : int, optional, default=-1
        Optional, index of the class categories, -1 to disable.
    background_id : int, optional, default=-1
        Optional, id of the background class which will be ignored in nms.
    force_suppress : boolean, optional, default=0
        Optional, if set false and id_index is provided, nms will only apply to boxes belongs to the same category
    in_format : {'center', 'corner'}, optional, default='corner'
        The input box encoding type. 
     "corner" means boxes are encoded as [xmin, ymin, xmax, ymax], "center" means boxes are encodes as [x, y, width, height].
    out_format : {'center', 'corner'}, optional, default='corner'
        The output box encoding type. 
     "corner" means boxes are encoded as [xmin, ymin, xmax, ymax], "center" means boxes are encodes as [x, y, width, height].

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/aliases.py.
    """

def ctc_loss(
    data: Symbol | None = None,
    label: Symbol | None = None,
    data_lengths: Symbol | None = None,
    label_lengths: Symbol | None = None,
    *,
    use_data_lengths: bool | int = False,
    use_label_lengths: bool | int = False,
    blank_label: Literal['first', 'last'] | str = 'first',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
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
    out : Symbol

    Defined in nnvmpy/ops/aliases.py.
    """

def div_sqrt_dim(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Rescale the input by the square root of its last dimension: x / sqrt(x.shape[-1]).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_math.py.
    """

def gradientmultiplier(
    data: Symbol | None = None,
    *,
    scalar: float = 1.0,
    is_int: bool | int = True,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
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
    out : Symbol

    Defined in nnvmpy/ops/contrib_math.py.
    """

def interleaved_matmul_encdec_qk(
    queries: Symbol | None = None,
    keys_values: Symbol | None = None,
    *,
    heads: int,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
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
    out : Symbol

    Defined in nnvmpy/ops/contrib_attention.py.
    """

def interleaved_matmul_encdec_valatt(
    keys_values: Symbol | None = None,
    attention: Symbol | None = None,
    *,
    heads: int,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
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
    out : Symbol

    Defined in nnvmpy/ops/contrib_attention.py.
    """

def interleaved_matmul_selfatt_qk(
    queries_keys_values: Symbol | None = None,
    *,
    heads: int,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Compute the matrix multiplication between the projections of queries and keys in multihead attention use as self attention. The input must be a single tensor of interleaved projections of queries, keys and values following the layout: (seq_length, batch_size, num_heads * head_dim * 3). Returns (batch_size * num_heads, seq_length, seq_length), the queries scaled by 1 / sqrt(head_dim).

    Parameters
    ----------
    queries_keys_values : NDArray-or-Symbol
        Queries keys values
    heads : int (non-negative), required
        Set number of heads

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_attention.py.
    """

def interleaved_matmul_selfatt_valatt(
    queries_keys_values: Symbol | None = None,
    attention: Symbol | None = None,
    *,
    heads: int,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
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
    out : Symbol

    Defined in nnvmpy/ops/contrib_attention.py.
    """

def isfinite(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """1 where x is neither NaN nor infinite, else 0, in x's dtype.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_math.py.
    """

def isinf(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """1 where x is +inf or -inf, else 0, in x's dtype.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_math.py.
    """

def isnan(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """1 where x is NaN, else 0, in x's dtype.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_math.py.
    """

def quadratic(
    data: Symbol | None = None,
    *,
    a: float = 0.0,
    b: float = 0.0,
    c: float = 0.0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """This operators implements the quadratic function:

        f(x) = a * x^2 + b * x + c

    where x is an input tensor and all operations in the function are element-wise.

    Example::

        x = [[1, 2], [3, 4]]
        y = quadratic(data=x, a=1, b=2, c=3)
        y = [[6, 11], [18, 27]]

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input ndarray
    a : float, optional, default=0.0
        Coefficient of the quadratic term in the equation.
    b : float, optional, default=0.0
        Coefficient of the linear term in the equation.
    c : float, optional, default=0.0
        Constant term in the quadratic equation.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/aliases.py.
    """

def round_ste(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Round half away from zero, with a straight-through gradient (dy passes unchanged).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_math.py.
    """

def sign_ste(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Sign of x, with a straight-through gradient (dy passes unchanged).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_math.py.
    """
