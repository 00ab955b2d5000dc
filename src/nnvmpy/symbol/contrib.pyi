"""Type stubs for nnvmpy.symbol.contrib, generated from the op registry by `nnvmpy stubs`.

Do not edit: `nnvmpy stubs` rewrites this file.
"""

from typing import Any, Literal, TypeAlias

import numpy as np

from nnvmpy.symbol.symbol import Symbol as Symbol
def _make(op: Any, name: Any) -> Any: ...
def cond(pred: Any, then_func: Any, else_func: Any, name: Any = ...) -> Any: ...
def foreach(body: Any, data: Any, init_states: Any, name: Any = ...) -> Any: ...
def rand_zipfian(true_classes: Any, num_sampled: Any, range_max: Any) -> Any: ...
def while_loop(cond: Any, func: Any, loop_vars: Any, max_iterations: Any = ..., name: Any = ...) -> Any: ...

_Shape: TypeAlias = tuple[int, ...] | list[int] | int
_FloatTuple: TypeAlias = tuple[float, ...] | list[float] | float
_IntOrNoneTuple: TypeAlias = tuple[int | None, ...] | list[int | None]

def AdaptiveAvgPooling2D(
    data: Symbol | None = None,
    *,
    output_size: _Shape = (),
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Applies a 2D adaptive average pooling over a 4D input with the shape of (NCHW). The pooling kernel and stride sizes are automatically chosen for desired output sizes.

    - If a single integer is provided for output_size, the output size is (N x C x output_size x output_size) for any input (NCHW).

    - If a tuple of integers (height, width) are provided for output_size, the output size is (N x C x height x width) for any input (NCHW).

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data
    output_size : Shape(tuple), optional, default=()
        int (output size) or a tuple of int for output (height, width).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_adaptive_avg_pool.py.
    """

def BatchNormWithReLU(
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
    axis: int = 1,
    cudnn_off: bool | int = False,
    min_calib_range: float | None = None,
    max_calib_range: float | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Batch normalization with ReLU fusion: BatchNorm, then max(0, x) on its output.

        out = relu((data - mean) / sqrt(var + eps) * gamma + beta)

    Takes BatchNorm's inputs and parameters; training uses the batch's statistics and updates moving_mean/moving_var in place, inference (or use_global_stats) the moving ones.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to batch normalization.
    gamma : NDArray-or-Symbol
        gamma array
    beta : NDArray-or-Symbol
        beta array
    moving_mean : NDArray-or-Symbol
        running mean of input
    moving_var : NDArray-or-Symbol
        running variance of input
    eps : float, optional, default=0.001
        Epsilon to prevent div 0.
    momentum : float, optional, default=0.9
        Momentum for moving average.
    fix_gamma : boolean, optional, default=1
        Fix gamma while training.
    use_global_stats : boolean, optional, default=0
        Whether use global moving statistics instead of local batch-norm. This will force change batch-norm into a scale shift operator.
    output_mean_var : boolean, optional, default=0
        Output the mean and var as well.
    axis : int, optional, default=1
        Specify which shape axis the channel is specified.
    cudnn_off : boolean, optional, default=0
        Accepted for MXNet compatibility; ignored.
    min_calib_range : float or None, optional, default=None
        Quantization calibration minimum (MXNet 1.9); accepted and ignored.
    max_calib_range : float or None, optional, default=None
        Quantization calibration maximum (MXNet 1.9); accepted and ignored.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/batch_norm_relu.py.
    """

def BilinearResize2D(
    data: Symbol | None = None,
    like: Symbol | None = None,
    *,
    height: int = 1,
    width: int = 1,
    scale_height: float | None = None,
    scale_width: float | None = None,
    mode: Literal['like', 'odd_scale', 'size', 'to_even_down', 'to_even_up', 'to_odd_down', 'to_odd_up'] | str = 'size',
    align_corners: bool | int = True,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Perform 2D resizing (upsampling or downsampling) for 4D input using bilinear interpolation.

    Expected input is a 4 dimensional NDArray (NCHW) and the output with the shape of (N x C x height x width). The key idea of bilinear interpolation is to perform linear interpolation first in one direction, and then again in the other direction. See the wikipedia of `Bilinear interpolation <https://en.wikipedia.org/wiki/Bilinear_interpolation>`_ for more details.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data
    like : NDArray-or-Symbol
        Resize data to it's shape
    height : int (non-negative), optional, default=1
        output height (required, but ignored if scale_height is defined or mode is not "size")
    width : int (non-negative), optional, default=1
        output width (required, but ignored if scale_width is defined or mode is not "size")
    scale_height : float or None, optional, default=None
        sampling scale of the height (optional, used in modes "scale" and "odd_scale")
    scale_width : float or None, optional, default=None
        sampling scale of the width (optional, used in modes "scale" and "odd_scale")
    mode : {'like', 'odd_scale', 'size', 'to_even_down', 'to_even_up', 'to_odd_down', 'to_odd_up'}, optional, default='size'
        resizing mode. "size" - output height equals parameter "height" if "scale_height" parameter is not defined or input height multiplied by "scale_height" otherwise. Same for width; "odd_scale" - if original height or width is odd, then result height is calculated like result_h = (original_h - 1) * scale + 1; "like" - resize first input to the height and width of second input; "to_even_down" / "to_even_up" / "to_odd_down" / "to_odd_up" - resize input to the nearest even (odd) height and width below (above) the original ones.
    align_corners : boolean, optional, default=1
        With align_corners = True, the corner pixels of input and output are aligned; otherwise pixel centres are, and the output values can depend on the input size.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_bilinear_resize.py.
    """

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

    Defined in nnvmpy/ops/nn/ctc.py.
    """

def DeformableConvolution(
    data: Symbol | None = None,
    offset: Symbol | None = None,
    weight: Symbol | None = None,
    bias: Symbol | None = None,
    *,
    kernel: _Shape,
    stride: _Shape = (),
    dilate: _Shape = (),
    pad: _Shape = (),
    num_filter: int,
    num_group: int = 1,
    num_deformable_group: int = 1,
    workspace: int = 1024,
    no_bias: bool | int = False,
    layout: Literal['NCHW'] | str | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Compute 2-D deformable convolution on 4-D input.

    The deformable convolution operation is described in https://arxiv.org/abs/1703.06211

    For 2-D deformable convolution, the shapes are

    - **data**: *(batch_size, channel, height, width)*
    - **offset**: *(batch_size, num_deformable_group * kernel[0] * kernel[1] * 2, height, width)*
    - **weight**: *(num_filter, channel / num_group, kernel[0], kernel[1])*
    - **bias**: *(num_filter,)*
    - **out**: *(batch_size, num_filter, out_height, out_width)*.

    Define::

      f(x,k,p,s,d) = floor((x+2*p-d*(k-1)-1)/s)+1

    then out_height=f(height, kernel[0], pad[0], stride[0], dilate[0]) and out_width=f(width, kernel[1], pad[1], stride[1], dilate[1]).

    If ``num_group`` is larger than 1, the data channels and the weight's filters are split into that many groups, convolved group by group and concatenated. If ``num_deformable_group`` is larger than 1, the offset and the data channels are split into that many groups, the i-th offset part moving the i-th data part.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to the DeformableConvolutionOp.
    offset : NDArray-or-Symbol
        Input offset to the DeformableConvolutionOp.
    weight : NDArray-or-Symbol
        Weight matrix.
    bias : NDArray-or-Symbol
        Bias parameter.
    kernel : Shape(tuple), required
        Convolution kernel size: (h, w)
    stride : Shape(tuple), optional, default=()
        Convolution stride: (h, w). Defaults to 1.
    dilate : Shape(tuple), optional, default=()
        Convolution dilate: (h, w). Defaults to 1.
    pad : Shape(tuple), optional, default=()
        Zero pad for convolution: (h, w). Defaults to 0.
    num_filter : int (non-negative), required
        Convolution filter(channel) number
    num_group : int (non-negative), optional, default=1
        Number of group partitions.
    num_deformable_group : int (non-negative), optional, default=1
        Number of deformable group partitions.
    workspace : int (non-negative), optional, default=1024
        Maximum temperal workspace allowed for convolution (MB). Accepted and ignored.
    no_bias : boolean, optional, default=0
        Whether to disable bias parameter.
    layout : {None, 'NCHW'}, optional, default=None
        Set layout for input, output and weight. Only NCHW (the default) is supported.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_deformable_conv.py.
    """

def DeformablePSROIPooling(
    data: Symbol | None = None,
    rois: Symbol | None = None,
    trans: Symbol | None = None,
    *,
    spatial_scale: float,
    output_dim: int,
    group_size: int,
    pooled_size: int,
    part_size: int = 0,
    sample_per_part: int = 1,
    trans_std: float = 0.0,
    no_trans: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Performs deformable position-sensitive region-of-interest pooling on inputs.
    The DeformablePSROIPooling operation is described in https://arxiv.org/abs/1703.06211 .batch_size will change to the number of region bounding boxes after DeformablePSROIPooling

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to the pooling operator, a 4D Feature maps
    rois : NDArray-or-Symbol
        Bounding box coordinates, a 2D array of [[batch_index, x1, y1, x2, y2]]. (x1, y1) and (x2, y2) are top left and down right corners of designated region of interest. batch_index indicates the index of corresponding image in the input data
    trans : NDArray-or-Symbol
        transition parameter
    spatial_scale : float, required
        Ratio of input feature map height (or w) to raw image height (or w). Equals the reciprocal of total stride in convolutional layers
    output_dim : int (non-negative), required
        fix output dim
    group_size : int (non-negative), required
        fix group size
    pooled_size : int (non-negative), required
        fix pooled size
    part_size : int (non-negative), optional, default=0
        fix part size
    sample_per_part : int (non-negative), optional, default=1
        fix samples per part
    trans_std : float, optional, default=0.0
        fix transition std
    no_trans : boolean, optional, default=0
        Whether to disable trans parameter.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_deformable_psroi_pooling.py.
    """

def ModulatedDeformableConvolution(
    data: Symbol | None = None,
    offset: Symbol | None = None,
    mask: Symbol | None = None,
    weight: Symbol | None = None,
    bias: Symbol | None = None,
    *,
    kernel: _Shape,
    stride: _Shape = (),
    dilate: _Shape = (),
    pad: _Shape = (),
    num_filter: int,
    num_group: int = 1,
    num_deformable_group: int = 1,
    workspace: int = 1024,
    no_bias: bool | int = False,
    im2col_step: int = 64,
    layout: Literal['NCHW'] | str | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """2-D convolution whose sampling grid is shifted per output position by learned offsets and whose samples are weighted by a learned mask (Deformable ConvNets v2, Zhu et al. 2018, arXiv:1811.11168).

    Shapes:

    - **data**: *(batch_size, channel, height, width)*
    - **offset**: *(batch_size, num_deformable_group * kernel[0] * kernel[1] * 2, out_height, out_width)*
    - **mask**: *(batch_size, num_deformable_group * kernel[0] * kernel[1], out_height, out_width)*
    - **weight**: *(num_filter, channel / num_group, kernel[0], kernel[1])*
    - **bias**: *(num_filter,)*
    - **out**: *(batch_size, num_filter, out_height, out_width)*.

    Define::

      f(x,k,p,s,d) = floor((x+2*p-d*(k-1)-1)/s)+1

    then out_height=f(height, kernel[0], pad[0], stride[0], dilate[0]) and out_width=f(width, kernel[1], pad[1], stride[1], dilate[1]).

    Each tap is sampled bilinearly at its offset position, as in DeformableConvolution, and multiplied by its mask value before the convolution's weights apply. ``num_group`` and ``num_deformable_group`` split the channels as in DeformableConvolution; the i-th part of the offset and the mask moves and scales the i-th part of the data.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to the ModulatedDeformableConvolutionOp.
    offset : NDArray-or-Symbol
        Input offset to ModulatedDeformableConvolutionOp.
    mask : NDArray-or-Symbol
        Input mask to the ModulatedDeformableConvolutionOp.
    weight : NDArray-or-Symbol
        Weight matrix.
    bias : NDArray-or-Symbol
        Bias parameter.
    kernel : Shape(tuple), required
        Convolution kernel size: (h, w)
    stride : Shape(tuple), optional, default=()
        Convolution stride: (h, w). Defaults to 1.
    dilate : Shape(tuple), optional, default=()
        Convolution dilate: (h, w). Defaults to 1.
    pad : Shape(tuple), optional, default=()
        Zero pad for convolution: (h, w). Defaults to 0.
    num_filter : int (non-negative), required
        Convolution filter(channel) number
    num_group : int (non-negative), optional, default=1
        Number of group partitions.
    num_deformable_group : int (non-negative), optional, default=1
        Number of deformable group partitions.
    workspace : int (non-negative), optional, default=1024
        Maximum temperal workspace allowed for convolution (MB). Accepted and ignored.
    no_bias : boolean, optional, default=0
        Whether to disable bias parameter.
    im2col_step : int (non-negative), optional, default=64
        Maximum number of images per im2col computation; the batch size must be at most this value or divisible by it. Checked, otherwise no effect here.
    layout : {None, 'NCHW'}, optional, default=None
        Set layout for input, output and weight. Only NCHW (the default) is supported.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_modulated_deformable_conv.py.
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

def MultiProposal(
    cls_prob: Symbol | None = None,
    bbox_pred: Symbol | None = None,
    im_info: Symbol | None = None,
    *,
    rpn_pre_nms_top_n: int = 6000,
    rpn_post_nms_top_n: int = 300,
    threshold: float = 0.7,
    rpn_min_size: int = 16,
    scales: _FloatTuple = (4.0, 8.0, 16.0, 32.0),
    ratios: _FloatTuple = (0.5, 1.0, 2.0),
    feature_stride: int = 16,
    output_score: bool | int = False,
    iou_loss: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Generate region proposals via RPN

    cls_prob (N, 2 * A, H, W), bbox_pred (N, 4 * A, H, W), im_info (N, 3) rows [height, width, scale], A = len(scales) * len(ratios). Outputs the rois (N * rpn_post_nms_top_n, 5) rows [batch index, x1, y1, x2, y2] and, with output_score, their scores (N * rpn_post_nms_top_n, 1).

    Parameters
    ----------
    cls_prob : NDArray-or-Symbol
        Score of how likely proposal is object.
    bbox_pred : NDArray-or-Symbol
        BBox Predicted deltas from anchors for proposals
    im_info : NDArray-or-Symbol
        Image size and scale.
    rpn_pre_nms_top_n : int, optional, default=6000
        Number of top scoring boxes to keep before applying NMS to RPN proposals
    rpn_post_nms_top_n : int, optional, default=300
        Number of top scoring boxes to keep after applying NMS to RPN proposals
    threshold : float, optional, default=0.7
        NMS value, below which to suppress.
    rpn_min_size : int, optional, default=16
        Minimum height or width in proposal
    scales : tuple of <float>, optional, default=(4.0, 8.0, 16.0, 32.0)
        Used to generate anchor windows by enumerating scales
    ratios : tuple of <float>, optional, default=(0.5, 1.0, 2.0)
        Used to generate anchor windows by enumerating ratios
    feature_stride : int, optional, default=16
        The size of the receptive field each unit in the convolution layer of the rpn,for example the product of all stride's prior to this layer.
    output_score : boolean, optional, default=0
        Add score to outputs
    iou_loss : boolean, optional, default=0
        Usage of IoU Loss

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_proposal.py.
    """

def PSROIPooling(
    data: Symbol | None = None,
    rois: Symbol | None = None,
    *,
    spatial_scale: float,
    output_dim: int,
    pooled_size: int,
    group_size: int = 0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Performs position-sensitive region-of-interest pooling on inputs (R-FCN). Resize bounding box coordinates by spatial_scale and crop input feature maps accordingly. Each bin of the cropped region is average-pooled from its own group of channels to a fixed size output indicated by pooled_size. batch_size will change to the number of region bounding boxes after PSROIPooling

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to the pooling operator, a 4D Feature maps
    rois : NDArray-or-Symbol
        Bounding box coordinates, a 2D array of [[batch_index, x1, y1, x2, y2]]. (x1, y1) and (x2, y2) are top left and down right corners of designated region of interest. batch_index indicates the index of corresponding image in the input data
    spatial_scale : float, required
        Ratio of input feature map height (or w) to raw image height (or w). Equals the reciprocal of total stride in convolutional layers
    output_dim : int (non-negative), required
        fix output dim
    pooled_size : int (non-negative), required
        fix pooled size
    group_size : int (non-negative), optional, default=0
        fix group size

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_psroi_pooling.py.
    """

def Proposal(
    cls_prob: Symbol | None = None,
    bbox_pred: Symbol | None = None,
    im_info: Symbol | None = None,
    *,
    rpn_pre_nms_top_n: int = 6000,
    rpn_post_nms_top_n: int = 300,
    threshold: float = 0.7,
    rpn_min_size: int = 16,
    scales: _FloatTuple = (4.0, 8.0, 16.0, 32.0),
    ratios: _FloatTuple = (0.5, 1.0, 2.0),
    feature_stride: int = 16,
    output_score: bool | int = False,
    iou_loss: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Generate region proposals via RPN

    cls_prob (N, 2 * A, H, W), bbox_pred (N, 4 * A, H, W), im_info (N, 3) rows [height, width, scale], A = len(scales) * len(ratios). Outputs the rois (N * rpn_post_nms_top_n, 5) rows [batch index, x1, y1, x2, y2] and, with output_score, their scores (N * rpn_post_nms_top_n, 1).
    Proposal takes one image (N = 1).

    Parameters
    ----------
    cls_prob : NDArray-or-Symbol
        Score of how likely proposal is object.
    bbox_pred : NDArray-or-Symbol
        BBox Predicted deltas from anchors for proposals
    im_info : NDArray-or-Symbol
        Image size and scale.
    rpn_pre_nms_top_n : int, optional, default=6000
        Number of top scoring boxes to keep before applying NMS to RPN proposals
    rpn_post_nms_top_n : int, optional, default=300
        Number of top scoring boxes to keep after applying NMS to RPN proposals
    threshold : float, optional, default=0.7
        NMS value, below which to suppress.
    rpn_min_size : int, optional, default=16
        Minimum height or width in proposal
    scales : tuple of <float>, optional, default=(4.0, 8.0, 16.0, 32.0)
        Used to generate anchor windows by enumerating scales
    ratios : tuple of <float>, optional, default=(0.5, 1.0, 2.0)
        Used to generate anchor windows by enumerating ratios
    feature_stride : int, optional, default=16
        The size of the receptive field each unit in the convolution layer of the rpn,for example the product of all stride's prior to this layer.
    output_score : boolean, optional, default=0
        Add score to outputs
    iou_loss : boolean, optional, default=0
        Usage of IoU Loss

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_proposal.py.
    """

def ROIAlign(
    data: Symbol | None = None,
    rois: Symbol | None = None,
    *,
    pooled_size: _Shape,
    spatial_scale: float,
    sample_ratio: int = -1,
    position_sensitive: bool | int = False,
    aligned: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """This operator takes a 4D feature map as an input array and region proposals as `rois`, then align the feature map over sub-regions of input and produces a fixed-sized output array. This operator is typically used in Faster R-CNN & Mask R-CNN networks. If roi batchid is less than 0, it will be ignored, and the corresponding output will be set to 0.

    Different from ROI pooling, ROI Align removes the harsh quantization, properly aligning the extracted features with the input. RoIAlign computes the value of each sampling point by bilinear interpolation from the nearby grid points on the feature map. No quantization is performed on any coordinates involved in the RoI, its bins, or the sampling points. Then the feature map can be aggregated by avgpooling.

    References: He, Kaiming, et al. "Mask R-CNN." ICCV, 2017

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to the pooling operator, a 4D Feature maps
    rois : NDArray-or-Symbol
        Bounding box coordinates, a 2D array, if batchid is less than 0, it will be ignored.
    pooled_size : Shape(tuple), required
        ROI Align output roi feature map height and width: (h, w)
    spatial_scale : float, required
        Ratio of input feature map height (or w) to raw image height (or w). Equals the reciprocal of total stride in convolutional layers
    sample_ratio : int, optional, default=-1
        Optional sampling ratio of ROI align, using adaptive size by default.
    position_sensitive : boolean, optional, default=0
        Whether to perform position-sensitive RoI pooling. PSRoIPooling is first proposaled by R-FCN and it can reduce the input channels by ph*pw times, where (ph, pw) is the pooled_size
    aligned : boolean, optional, default=0
        Center-aligned ROIAlign introduced in Detectron2. To enable, set aligned to True.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_roi_align.py.
    """

def RROIAlign(
    data: Symbol | None = None,
    rois: Symbol | None = None,
    *,
    pooled_size: _Shape,
    spatial_scale: float,
    sampling_ratio: int = -1,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Performs Rotated ROI Align on the input array.

    This operator takes a 4D feature map as an input array and region proposals as `rois`, then align the feature map over sub-regions of input and produces a fixed-sized output array.

    Different from ROI Align, RROI Align uses rotated rois, which is suitable for text detection. RRoIAlign computes the value of each sampling point by bilinear interpolation from the nearby grid points on the rotated feature map. No quantization is performed on any coordinates involved in the RoI, its bins, or the sampling points. Then the feature map can be aggregated by avgpooling.

    References: Ma, Jianqi, et al. "Arbitrary-Oriented Scene Text Detection via Rotation Proposals." IEEE Transactions on Multimedia, 2018.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to the pooling operator, a 4D Feature maps
    rois : NDArray-or-Symbol
        Bounding box coordinates, a 2D array
    pooled_size : Shape(tuple), required
        RROI align output shape (h,w) 
    spatial_scale : float, required
        Ratio of input feature map height (or width) to raw image height (or width). Equals the reciprocal of total stride in convolutional layers
    sampling_ratio : int, optional, default=-1
        Optional sampling ratio of RROI align, using adaptive size by default.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_rroi_align.py.
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

def arange_like(
    data: Symbol | None = None,
    *,
    start: float = 0.0,
    step: float = 1.0,
    repeat: int = 1,
    ctx: str = '',
    axis: int | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Return an array with evenly spaced values. If axis is not given, the output will have the same shape as the input array. Otherwise, the output will be a 1-D array with size of the specified axis in input shape.

    Examples::

      x = [[0.14883883 0.7772398  0.94865847 0.7225052 ]
           [0.23729339 0.6112595  0.66538996 0.5132841 ]
           [0.30822644 0.9912457  0.15502319 0.7043658 ]]

      arange_like(x, start=0) = [[ 0.  1.  2.  3.]
                                 [ 4.  5.  6.  7.]
                                 [ 8.  9. 10. 11.]]

      arange_like(x, start=0, axis=-1) = [0. 1. 2. 3.]

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input
    start : float, optional, default=0.0
        Start of interval. The interval includes this value. The default start value is 0.
    step : float, optional, default=1.0
        Spacing between values.
    repeat : int (non-negative), optional, default=1
        The repeating time of all elements. E.g repeat=3, the element a will be repeated three times --> a, a, a.
    ctx : string, optional, default=''
        Context of output, in format [cpu|gpu|cpu_pinned](n).Only used for imperative calls.
    axis : int or None, optional, default=None
        Arange elements according to the size of a certain axis of input array. The negative numbers are interpreted counting from the backward. If not provided, will arange elements according to the input shape.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_arange_like.py.
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

def boolean_mask(
    data: Symbol | None = None,
    index: Symbol | None = None,
    *,
    axis: int = 0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """The slices of data along `axis` whose entry in the 1-d index is non-zero, in order: the output's length along axis is the number of non-zero entries, so its shape depends on index's values.

    The output shape is known only once index is computed, so the op runs imperatively (nd.contrib.boolean_mask); a bound symbol graph cannot plan memory for it, as in MXNet.

    Example::

        data = mx.nd.array([[1, 2, 3], [4, 5, 6], [7, 8, 9]])
        index = mx.nd.array([0, 1, 0])
        mx.nd.contrib.boolean_mask(data, index)
        [[4. 5. 6.]]

    Parameters
    ----------
    data : NDArray-or-Symbol
        Data
    index : NDArray-or-Symbol
        Mask
    axis : int, optional, default=0
        An integer that represents the axis in NDArray to mask from.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_boolean_mask.py.
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

    Defined in nnvmpy/ops/contrib_bbox.py.
    """

def calibrate_entropy(
    hist: Symbol | None = None,
    hist_edges: Symbol | None = None,
    *,
    num_quantized_bins: int = 255,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Provide calibrated min/max for input histogram: the threshold whose quantized histogram has the least KL divergence from the original, and that divergence.

    .. Note::
        This operator only supports forward propagation. DO NOT use it in training.

    Parameters
    ----------
    hist : NDArray-or-Symbol
        A ndarray/symbol of type `float32`
    hist_edges : NDArray-or-Symbol
        A ndarray/symbol of type `float32`
    num_quantized_bins : int (non-negative), optional, default=255
        The number of quantized bins.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/quantization/calibrate_entropy.py.
    """

def count_sketch(
    data: Symbol | None = None,
    h: Symbol | None = None,
    s: Symbol | None = None,
    *,
    out_dim: int,
    processing_batch_size: int = 32,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Projects each row of d features onto out_dim buckets with random signs (a count sketch): out[..., h[j]] += s[j] * data[..., j] for every feature j, where h (1, d) holds bucket indices in [0, out_dim) and s (1, d) the signs.

    With data [[1, 2, 3]], h [[2, 0, 2]], s [[1, -1, -1]] and out_dim 3 the output is [[-2, 0, -2]].

    MXNet runs this on the GPU only; nnvmpy on both devices.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to the CountSketchOp.
    h : NDArray-or-Symbol
        The index vector
    s : NDArray-or-Symbol
        The sign vector
    out_dim : int (non-negative), required
        The output dimension.
    processing_batch_size : int (non-negative), optional, default=32
        How many sketch vectors to process at one time.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_count_sketch.py.
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

    Defined in nnvmpy/ops/nn/ctc.py.
    """

def dequantize(
    data: Symbol | None = None,
    min_range: Symbol | None = None,
    max_range: Symbol | None = None,
    *,
    out_type: Literal['float32'] | str = 'float32',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Dequantize the input tensor into a float tensor. min_range and max_range are scalar floats that specify the range for the output data.

    When input data type is `uint8`: `out[i] = min_range + in[i] * (max_range - min_range) / 255.0`.

    When input data type is `int8` (zero stays zero): `out[i] = in[i] * MaxAbs(min_range, max_range) / 127.0`.

    .. Note::
        This operator only supports forward propagation. DO NOT use it in training.

    Parameters
    ----------
    data : NDArray-or-Symbol
        A ndarray/symbol of type `uint8` or `int8`
    min_range : NDArray-or-Symbol
        The minimum scalar value possibly produced for the input in float32
    max_range : NDArray-or-Symbol
        The maximum scalar value possibly produced for the input in float32
    out_type : {'float32'}, optional, default='float32'
        Output data type.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_quantize.py.
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

def fft(
    data: Symbol | None = None,
    *,
    compute_size: int = 128,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Apply 1D FFT to input along the last axis.

    The input is real, shape (..., d); the output has shape (..., 2d) and holds the complex results with real and imaginary parts interleaved: [Re y_0, Im y_0, Re y_1, Im y_1, ...], y_k = sum_j x_j exp(-2 pi i jk / d).

    MXNet runs this on the GPU only, for 2-D and 4-D input; nnvmpy on both devices and any rank.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to the FFTOp.
    compute_size : int (non-negative), optional, default=128
        Maximum size of sub-batch to be forwarded at one time

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_fft.py.
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

def group_adagrad_update(
    weight: Symbol | None = None,
    grad: Symbol | None = None,
    history: Symbol | None = None,
    *,
    lr: float,
    rescale_grad: float = 1.0,
    clip_gradient: float = -1.0,
    epsilon: float = 1e-05,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Update function for Group AdaGrad optimizer: AdaGrad (Duchi et al., 2011) with a
    single learning rate for every row of the parameter array.

        grad = clip(grad * rescale_grad, clip_gradient)
        history += mean(square(grad), axis=1, keepdims=True)
        div = grad / sqrt(history + epsilon)
        weight -= div * lr

    `history` (one value per row) is updated in place; returns the new weight (call with
    out=weight). Weight decay is not supported.

    Parameters
    ----------
    weight : NDArray-or-Symbol
        Weight
    grad : NDArray-or-Symbol
        Grad
    history : NDArray-or-Symbol
        History
    lr : float, required
        Learning rate
    rescale_grad : float, optional, default=1.0
        Rescale gradient to grad = rescale_grad*grad.
    clip_gradient : float, optional, default=-1.0
        Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).
    epsilon : float, optional, default=1e-05
        Epsilon for numerical stability

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/_common.py.
    """

def hawkesll(
    lda: Symbol | None = None,
    alpha: Symbol | None = None,
    beta: Symbol | None = None,
    state: Symbol | None = None,
    lags: Symbol | None = None,
    marks: Symbol | None = None,
    valid_length: Symbol | None = None,
    max_time: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Computes the log likelihood of a univariate Hawkes process.

    The log likelihood is calculated on point process observations represented as *ragged* matrices for *lags* (interarrival times w.r.t. the previous point), and *marks* (identifiers for the process ID). Each mark is an independent process with the conditional intensity

      lambda_k^*(t) = lambda_k + alpha_k sum_{t_i < t, y_i = k} beta_k exp(-beta_k (t - t_i))

    ``lags`` and ``marks`` have shape (N, T); ``valid_length`` (N,) gives the number of valid points of each row; ``max_time`` (N,) the length of the observation period (0, max_time]. ``state`` (N, K) is the memory s_k(0) of the process, s_k(t) = sum_{t_i < t} exp(-beta_k (t - t_i)); the second output is s_k(max_time).

    Example::

      lda = nd.array([1.5, 2.0, 3.0]).tile((N, 1))
      alpha = nd.array([0.2, 0.3, 0.4])
      beta = nd.array([1.0, 2.0, 3.0])
      ia_times = nd.array([[6, 7, 8, 9], [1, 2, 3, 4], [3, 4, 5, 6], [8, 9, 10, 11]])
      marks = nd.zeros((N, T)).astype(np.int32)
      states = nd.zeros((N, K))
      valid_length = nd.array([1, 2, 3, 4])
      max_time = nd.ones((N,)) * 100.0
      A = nd.contrib.hawkesll(lda, alpha, beta, states, ia_times, marks, valid_length, max_time)

    Parameters
    ----------
    lda : NDArray-or-Symbol
        Shape (N, K) The intensity for each of the K processes, for each sample
    alpha : NDArray-or-Symbol
        Shape (K,) The infectivity factor (branching ratio) for each process
    beta : NDArray-or-Symbol
        Shape (K,) The decay parameter for each process
    state : NDArray-or-Symbol
        Shape (N, K) the Hawkes state for each process
    lags : NDArray-or-Symbol
        Shape (N, T) the interarrival times
    marks : NDArray-or-Symbol
        Shape (N, T) the marks (process ids)
    valid_length : NDArray-or-Symbol
        The number of valid points in the process
    max_time : NDArray-or-Symbol
        the length of the interval where the processes were sampled

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_hawkes.py.
    """

def ifft(
    data: Symbol | None = None,
    *,
    compute_size: int = 128,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Apply 1D inverse FFT to input along the last axis.

    The input, shape (..., 2d), holds complex numbers with real and imaginary parts interleaved; the output, shape (..., d), is the real part of the inverse transform, NOT divided by d (as Caffe): sum_k z_k exp(+2 pi i jk / d).

    MXNet runs this on the GPU only, for 2-D and 4-D input; nnvmpy on both devices and any rank.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to the FFTOp.
    compute_size : int (non-negative), optional, default=128
        Maximum size of sub-batch to be forwarded at one time

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_fft.py.
    """

def index_array(
    data: Symbol | None = None,
    *,
    axes: _Shape | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Returns an array of indexes of the input array.

    For an input array with shape  :math:`(d_1, d_2, ..., d_n)`, `index_array` returns a :math:`(d_1, d_2, ..., d_n, n)` array `idx`, where :math:`idx[i_1, i_2, ..., i_n, :] = [i_1, i_2, ..., i_n]`.

    Additionally, when the parameter `axes` is specified, `idx` will be a :math:`(d_1, d_2, ..., d_n, m)` array where `m` is the length of `axes`, and the following equality will hold: :math:`idx[i_1, i_2, ..., i_n, j] = i_{axes[j]}`.

    Examples::

        x = mx.nd.ones((3, 2))

        mx.nd.contrib.index_array(x) = [[[0 0]
                                         [0 1]]

                                        [[1 0]
                                         [1 1]]

                                        [[2 0]
                                         [2 1]]]

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data
    axes : Shape(tuple) or None, optional, default=None
        The axes to include in the index array. Axes not specified will be excluded from the output. Negative axes count from the end. None (the default) includes every axis in order.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_index_array.py.
    """

def index_copy(
    old_tensor: Symbol | None = None,
    index_vector: Symbol | None = None,
    new_tensor: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Copies the elements of a `new_tensor` into the `old_tensor`.

    This operator copies the elements by selecting the indices in the order given in `index`. The output will be a new tensor containing the rest elements of old tensor and the copied elements of new tensor. For example, if `index[i] == j`, then the `i` th row of `new_tensor` is copied to the `j` th row of output.

    The `index` must be a vector and it must have the same size with the `0` th dimension of `new_tensor`. Also, the `0` th dimension of old_tensor must `>=` the `0` th dimension of `new_tensor`, or an error will be raised.

    Examples::

        x = mx.nd.zeros((5,3))
        t = mx.nd.array([[1,2,3],[4,5,6],[7,8,9]])
        index = mx.nd.array([0,4,2])

        mx.nd.contrib.index_copy(x, index, t)

        [[1. 2. 3.]
         [0. 0. 0.]
         [7. 8. 9.]
         [0. 0. 0.]
         [4. 5. 6.]]

    Parameters
    ----------
    old_tensor : NDArray-or-Symbol
        Old tensor
    index_vector : NDArray-or-Symbol
        Index vector
    new_tensor : NDArray-or-Symbol
        New tensor to be copied

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_index_copy.py.
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

def quantize(
    data: Symbol | None = None,
    min_range: Symbol | None = None,
    max_range: Symbol | None = None,
    *,
    out_type: Literal['int8', 'uint8'] | str = 'uint8',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Quantize a input tensor from float to `out_type`, with user-specified `min_range` and `max_range`.

    When out_type is `uint8`: `out[i] = (in[i] - min_range) * 255 / (max_range - min_range) + 0.5`, clipped to [0, 255].

    When out_type is `int8` (zero stays zero): `out[i] = sign(in[i]) * min(abs(in[i]) * scale + 0.5, 127)`, where `scale = 127 / MaxAbs(min_range, max_range)`.

    .. Note::
        This operator only supports forward propagation. DO NOT use it in training.

    Parameters
    ----------
    data : NDArray-or-Symbol
        A ndarray/symbol of type `float32`
    min_range : NDArray-or-Symbol
        The minimum scalar value possibly produced for the input
    max_range : NDArray-or-Symbol
        The maximum scalar value possibly produced for the input
    out_type : {'int8', 'uint8'}, optional, default='uint8'
        Output data type.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_quantize.py.
    """

def quantize_asym(
    data: Symbol | None = None,
    *,
    min_calib_range: float | None = None,
    max_calib_range: float | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Quantize a float32 tensor to uint8 with a scale and a shift.

    `out[i] = in[i] * scale + shift + 0.5` (truncated), where `scale = 255 / (max_range - min_range)` and `shift = 255 - max_range * scale`; the range is (min_calib_range, max_calib_range) when both are given, else the data's minimum and maximum. Values outside the range saturate to 0 or 255. The outputs `scale` and `shift` are (1,) float32 arrays.

    .. Note::
        This operator only supports forward propagation. DO NOT use it in training.

    Parameters
    ----------
    data : NDArray-or-Symbol
        A ndarray/symbol of type `float32`
    min_calib_range : float or None, optional, default=None
        The minimum scalar value in the form of float32. If present, it will be used to quantize the fp32 data.
    max_calib_range : float or None, optional, default=None
        The maximum scalar value in the form of float32. If present, it will be used to quantize the fp32 data.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/contrib_quantize_asym.py.
    """

def quantize_v2(
    data: Symbol | None = None,
    *,
    out_type: Literal['auto', 'int8', 'uint8'] | str = 'int8',
    min_calib_range: float | None = None,
    max_calib_range: float | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Quantize a input tensor from float to `out_type`, with user-specified `min_calib_range` and `max_calib_range` or the input range collected at runtime.

    When out_type is `uint8`: `out[i] = (in[i] - min_range) * 255 / (max_range - min_range) + 0.5`, clipped to [0, 255].

    When out_type is `int8` (zero stays zero): `out[i] = sign(in[i]) * min(abs(in[i]) * scale + 0.5, 127)`, where `scale = 127 / MaxAbs(min_range, max_range)`.

    When out_type is `auto`, the output type is uint8 if min_calib_range >= 0 is given, int8 otherwise. Input that is already int8/uint8 passes through.

    .. Note::
        This operator only supports forward propagation. DO NOT use it in training.

    Parameters
    ----------
    data : NDArray-or-Symbol
        A ndarray/symbol of type `float32`
    out_type : {'auto', 'int8', 'uint8'}, optional, default='int8'
        Output data type. `auto` can be specified to automatically determine output type according to min_calib_range.
    min_calib_range : float or None, optional, default=None
        The minimum scalar value in the form of float32. If present, it will be used to quantize the fp32 data into int8 or uint8.
    max_calib_range : float or None, optional, default=None
        The maximum scalar value in the form of float32. If present, it will be used to quantize the fp32 data into int8 or uint8.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/quantization/quantize_v2.py.
    """

def quantized_act(
    data: Symbol | None = None,
    min_data: Symbol | None = None,
    max_data: Symbol | None = None,
    *,
    act_type: Literal['relu'] | str,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Activation operator for input and output data type of int8 or uint8. The input and output data comes with min and max thresholds for quantizing the float32 data into int8; only `act_type='relu'` is supported, and the range passes through.

    .. Note::
        This operator only supports forward propagation. DO NOT use it in training.

    Parameters
    ----------
    data : NDArray-or-Symbol
        A ndarray/symbol of type `int8` or `uint8`
    min_data : NDArray-or-Symbol
        The minimum scalar value possibly produced for the data
    max_data : NDArray-or-Symbol
        The maximum scalar value possibly produced for the data
    act_type : {'relu'}, required
        Activation function to be applied (quantized: relu only).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/quantization/_passthrough.py.
    """

def quantized_batch_norm(
    data: Symbol | None = None,
    gamma: Symbol | None = None,
    beta: Symbol | None = None,
    moving_mean: Symbol | None = None,
    moving_var: Symbol | None = None,
    min_data: Symbol | None = None,
    max_data: Symbol | None = None,
    *,
    eps: float = 0.001,
    momentum: float = 0.9,
    fix_gamma: bool | int = True,
    use_global_stats: bool | int = False,
    output_mean_var: bool | int = False,
    axis: int = 1,
    cudnn_off: bool | int = False,
    min_calib_range: float | None = None,
    max_calib_range: float | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Inference BatchNorm on quantized data: the int8 (or uint8) input with its float32 (min_data, max_data) range is normalised with the moving statistics, scaled by gamma and shifted by beta, and quantized to int8 over the calibrated (min_calib_range, max_calib_range), which is also returned as the output's range.

    Forward only: it has no gradient and is meant for inference graphs.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data.
    gamma : NDArray-or-Symbol
        gamma.
    beta : NDArray-or-Symbol
        beta.
    moving_mean : NDArray-or-Symbol
        moving_mean.
    moving_var : NDArray-or-Symbol
        moving_var.
    min_data : NDArray-or-Symbol
        Minimum value of data.
    max_data : NDArray-or-Symbol
        Maximum value of data.
    eps : float, optional, default=0.001
        Epsilon to prevent div 0.
    momentum : float, optional, default=0.9
        Momentum for moving average.
    fix_gamma : boolean, optional, default=1
        Fix gamma while training.
    use_global_stats : boolean, optional, default=0
        Whether use global moving statistics instead of local batch-norm. This will force change batch-norm into a scale shift operator.
    output_mean_var : boolean, optional, default=0
        Output the mean and var as well.
    axis : int, optional, default=1
        Specify which shape axis the channel is specified.
    cudnn_off : boolean, optional, default=0
        Accepted for MXNet compatibility; ignored.
    min_calib_range : float or None, optional, default=None
        The minimum scalar value in the form of float32 obtained through calibration: the range of the int8 output (required).
    max_calib_range : float or None, optional, default=None
        The maximum scalar value in the form of float32 obtained through calibration: the range of the int8 output (required).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/quantization/quantized_batch_norm.py.
    """

def quantized_concat(
    *data: Symbol,
    num_args: int,
    dim: int = 1,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Joins input arrays of type int8 or uint8 along a given axis. The inputs may have different min/max ranges: the output range is (smallest min, largest max) and every input is rescaled into it. The output is int8 if any input is int8, else uint8.

    .. Note::
        This operator only supports forward propagation. DO NOT use it in training.

    Parameters
    ----------
    data : NDArray-or-Symbol[]
        All data inputs, then the min and max of each
    num_args : int (non-negative), required
        Number of inputs to be concated.
    dim : int, optional, default=1
        the dimension to be concated.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/quantization/quantized_concat.py.
    """

def quantized_conv(
    data: Symbol | None = None,
    weight: Symbol | None = None,
    bias: Symbol | None = None,
    min_data: Symbol | None = None,
    max_data: Symbol | None = None,
    min_weight: Symbol | None = None,
    max_weight: Symbol | None = None,
    min_bias: Symbol | None = None,
    max_bias: Symbol | None = None,
    *,
    kernel: _Shape,
    stride: _Shape = (),
    dilate: _Shape = (),
    pad: _Shape = (),
    num_filter: int,
    num_group: int = 1,
    workspace: int = 1024,
    no_bias: bool | int = False,
    cudnn_tune: Literal['fastest', 'limited_workspace', 'off'] | str | None = None,
    cudnn_off: bool | int = False,
    layout: Literal['NCDHW', 'NCHW', 'NCW', 'NDHWC', 'NHWC'] | str | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Convolution on int8 (data: int8 or uint8) operands with exact int32 sums. Each operand comes with a float32 (min, max) pair giving the real range its codes stand for; the outputs are the int32 result and the real range of that result's codes (one int32 step = the product of the operands' steps), for requantize / dequantize.

    .. Note::
        This operator only supports forward propagation. DO NOT use it in training.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Int8 or uint8 input data.
    weight : NDArray-or-Symbol
        Int8 weight.
    bias : NDArray-or-Symbol
        Int8 bias.
    min_data : NDArray-or-Symbol
        Minimum value of data.
    max_data : NDArray-or-Symbol
        Maximum value of data.
    min_weight : NDArray-or-Symbol
        Minimum value of weight.
    max_weight : NDArray-or-Symbol
        Maximum value of weight.
    min_bias : NDArray-or-Symbol
        Minimum value of bias.
    max_bias : NDArray-or-Symbol
        Maximum value of bias.
    kernel : Shape(tuple), required
        Convolution kernel size: (w,), (h, w) or (d, h, w)
    stride : Shape(tuple), optional, default=()
        Convolution stride: (w,), (h, w) or (d, h, w). Defaults to 1.
    dilate : Shape(tuple), optional, default=()
        Convolution dilate: (w,), (h, w) or (d, h, w). Defaults to 1.
    pad : Shape(tuple), optional, default=()
        Zero pad for convolution: (w,), (h, w) or (d, h, w). Defaults to 0.
    num_filter : int (non-negative), required
        Convolution filter(channel) number
    num_group : int (non-negative), optional, default=1
        Number of group partitions.
    workspace : int (non-negative), optional, default=1024
        Maximum temporary workspace allowed (MB) in convolution. nnvmpy caps it at 64 MB and sizes its chunks of images (column matrices, padded copies) to fit.
    no_bias : boolean, optional, default=0
        Whether to disable bias parameter.
    cudnn_tune : {None, 'fastest', 'limited_workspace', 'off'}, optional, default=None
        Whether to pick convolution algo by running performance test. Accepted and ignored (nnvmpy has no cuDNN).
    cudnn_off : boolean, optional, default=0
        Turn off cudnn for this layer (ignored).
    layout : {None, 'NCDHW', 'NCHW', 'NCW', 'NDHWC', 'NHWC'}, optional, default=None
        Set layout for input, output and weight. Empty for default layout: NCW for 1d, NCHW for 2d. Only the default layouts are supported.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/quantization/_int32_op.py.
    """

def quantized_elemwise_add(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    lhs_min: Symbol | None = None,
    lhs_max: Symbol | None = None,
    rhs_min: Symbol | None = None,
    rhs_max: Symbol | None = None,
    *,
    min_calib_range: float | None = None,
    max_calib_range: float | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Element-wise sum of two int8/uint8 arrays, each with its own float32 (min, max) range: both are brought to a common scale and summed exactly in int32, with the real range of the int32 codes as the last two outputs; given min_calib_range / max_calib_range the sum is requantized to int8 (uint8 if min_calib_range >= 0) over that range instead.

    .. Note::
        This operator only supports forward propagation. DO NOT use it in training.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        first input
    rhs : NDArray-or-Symbol
        second input
    lhs_min : NDArray-or-Symbol
        3rd input
    lhs_max : NDArray-or-Symbol
        4th input
    rhs_min : NDArray-or-Symbol
        5th input
    rhs_max : NDArray-or-Symbol
        6th input
    min_calib_range : float or None, optional, default=None
        The minimum scalar value in the form of float32 obtained through calibration. If present, it will be used to requantize the int32 sum.
    max_calib_range : float or None, optional, default=None
        The maximum scalar value in the form of float32 obtained through calibration. If present, it will be used to requantize the int32 sum.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/quantization/quantized_elemwise_add.py.
    """

def quantized_elemwise_mul(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    lhs_min: Symbol | None = None,
    lhs_max: Symbol | None = None,
    rhs_min: Symbol | None = None,
    rhs_max: Symbol | None = None,
    *,
    min_calib_range: float | None = None,
    max_calib_range: float | None = None,
    enable_float_output: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Element-wise product of two int8 arrays, each with its own float32 (min, max) range. By default the exact int32 products are returned with the real range of the int32 codes as the last two outputs; given min_calib_range / max_calib_range the products are requantized to int8 over that range; with enable_float_output the real products are returned in float32 (one output).

    .. Note::
        This operator only supports forward propagation. DO NOT use it in training.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        first input
    rhs : NDArray-or-Symbol
        second input
    lhs_min : NDArray-or-Symbol
        Minimum value of first input.
    lhs_max : NDArray-or-Symbol
        Maximum value of first input.
    rhs_min : NDArray-or-Symbol
        Minimum value of second input.
    rhs_max : NDArray-or-Symbol
        Maximum value of second input.
    min_calib_range : float or None, optional, default=None
        The minimum scalar value in the form of float32 obtained through calibration. If present, it will be used to requantize the int8 output data.
    max_calib_range : float or None, optional, default=None
        The maximum scalar value in the form of float32 obtained through calibration. If present, it will be used to requantize the int8 output data.
    enable_float_output : boolean, optional, default=0
        Whether to enable float32 output

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/quantization/quantized_elemwise_mul.py.
    """

def quantized_embedding(
    data: Symbol | None = None,
    weight: Symbol | None = None,
    min_weight: Symbol | None = None,
    max_weight: Symbol | None = None,
    *,
    input_dim: int,
    output_dim: int,
    dtype: Literal['float16', 'float32', 'float64', 'int32', 'int64', 'int8', 'uint8'] | str | type | np.dtype[Any] = 'float32',
    sparse_grad: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Maps integer indices to int8 vector representations (embeddings); the weight's min/max range passes through.

    .. Note::
        This operator only supports forward propagation. DO NOT use it in training.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input array to the embedding operator.
    weight : NDArray-or-Symbol
        The embedding weight matrix (int8).
    min_weight : NDArray-or-Symbol
        Minimum value of weight.
    max_weight : NDArray-or-Symbol
        Maximum value of weight.
    input_dim : int (non-negative), required
        Vocabulary size of the input indices.
    output_dim : int (non-negative), required
        Dimension of the embedding vectors.
    dtype : {'float16', 'float32', 'float64', 'int32', 'int64', 'int8', 'uint8'}, optional, default='float32'
        Data type of weight.
    sparse_grad : boolean, optional, default=0
        Compute row_sparse gradient in the backward calculation. nnvmpy has no sparse storage: the gradient is dense either way.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/quantization/quantized_embedding.py.
    """

def quantized_flatten(
    data: Symbol | None = None,
    min_data: Symbol | None = None,
    max_data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Flatten a quantized (int8 or uint8) input into a 2-D array, keeping the first axis; the min/max range passes through unchanged.

    Parameters
    ----------
    data : NDArray-or-Symbol
        A ndarray/symbol of type `int8` or `uint8`
    min_data : NDArray-or-Symbol
        The minimum scalar value possibly produced for the data
    max_data : NDArray-or-Symbol
        The maximum scalar value possibly produced for the data

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/quantization/_passthrough.py.
    """

def quantized_fully_connected(
    data: Symbol | None = None,
    weight: Symbol | None = None,
    bias: Symbol | None = None,
    min_data: Symbol | None = None,
    max_data: Symbol | None = None,
    min_weight: Symbol | None = None,
    max_weight: Symbol | None = None,
    min_bias: Symbol | None = None,
    max_bias: Symbol | None = None,
    *,
    num_hidden: int,
    no_bias: bool | int = False,
    flatten: bool | int = True,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """FullyConnected on int8 (data: int8 or uint8) operands with exact int32 sums. Each operand comes with a float32 (min, max) pair giving the real range its codes stand for; the outputs are the int32 result and the real range of that result's codes (one int32 step = the product of the operands' steps), for requantize / dequantize.

    .. Note::
        This operator only supports forward propagation. DO NOT use it in training.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Int8 or uint8 input data.
    weight : NDArray-or-Symbol
        Int8 weight.
    bias : NDArray-or-Symbol
        Int8 bias.
    min_data : NDArray-or-Symbol
        Minimum value of data.
    max_data : NDArray-or-Symbol
        Maximum value of data.
    min_weight : NDArray-or-Symbol
        Minimum value of weight.
    max_weight : NDArray-or-Symbol
        Maximum value of weight.
    min_bias : NDArray-or-Symbol
        Minimum value of bias.
    max_bias : NDArray-or-Symbol
        Maximum value of bias.
    num_hidden : int (non-negative), required
        Number of hidden nodes of the output.
    no_bias : boolean, optional, default=0
        Whether to disable bias parameter.
    flatten : boolean, optional, default=1
        Whether to collapse all but the first axis of the input data tensor.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/quantization/_int32_op.py.
    """

def quantized_pooling(
    data: Symbol | None = None,
    min_data: Symbol | None = None,
    max_data: Symbol | None = None,
    *,
    kernel: _Shape = (),
    pool_type: Literal['avg', 'lp', 'max', 'sum'] | str = 'max',
    global_pool: bool | int = False,
    cudnn_off: bool | int = False,
    pooling_convention: Literal['full', 'same', 'valid'] | str = 'valid',
    stride: _Shape = (),
    pad: _Shape = (),
    p_value: int | None = None,
    count_include_pad: bool | int | None = None,
    layout: Literal['NCDHW', 'NCHW', 'NCW', 'NDHWC', 'NHWC', 'NWC'] | str | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Pooling operator for input and output data type of int8 or uint8. The input and output data comes with min and max thresholds for quantizing the float32 data into int8; they pass through. Supports pool_type 'max' and 'avg' (rounded to the nearest code).

    .. Note::
        This operator only supports forward propagation. DO NOT use it in training.

    Parameters
    ----------
    data : NDArray-or-Symbol
        A ndarray/symbol of type `int8` or `uint8`
    min_data : NDArray-or-Symbol
        Minimum value of data.
    max_data : NDArray-or-Symbol
        Maximum value of data.
    kernel : Shape(tuple), optional, default=()
        Pooling kernel size: (y, x) or (d, y, x)
    pool_type : {'avg', 'lp', 'max', 'sum'}, optional, default='max'
        Pooling type to be applied.
    global_pool : boolean, optional, default=0
        Ignore kernel size, do global pooling based on current input feature map.
    cudnn_off : boolean, optional, default=0
        Turn off cudnn pooling (ignored).
    pooling_convention : {'full', 'same', 'valid'}, optional, default='valid'
        Pooling convention to be applied.
    stride : Shape(tuple), optional, default=()
        Stride: for pooling (y, x) or (d, y, x). Defaults to 1.
    pad : Shape(tuple), optional, default=()
        Pad for pooling: (y, x) or (d, y, x). Defaults to 0.
    p_value : int or None, optional, default=None
        Value of p for Lp pooling, can be 1 or 2.
    count_include_pad : boolean or None, optional, default=None
        Only used for AvgPool, specify whether to count padding elements for average calculation. None (the default) means True.
    layout : {None, 'NCDHW', 'NCHW', 'NCW', 'NDHWC', 'NHWC', 'NWC'}, optional, default=None
        Set layout for input and output. Empty for default layout: NCW for 1d, NCHW for 2d. Only the default layouts are supported.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/quantization/quantized_pooling.py.
    """

def requantize(
    data: Symbol | None = None,
    min_range: Symbol | None = None,
    max_range: Symbol | None = None,
    *,
    out_type: Literal['auto', 'int8', 'uint8'] | str = 'int8',
    min_calib_range: float | None = None,
    max_calib_range: float | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Converts int32 codes (with the real range they stand for) to int8 codes: over min_calib_range / max_calib_range when given (calibrated, the cheaper and more accurate way), else over the largest magnitude actually present, found at run time.

    .. Note::
        This operator only supports forward propagation. DO NOT use it in training.

    Parameters
    ----------
    data : NDArray-or-Symbol
        A ndarray/symbol of type `int32`
    min_range : NDArray-or-Symbol
        The original minimum scalar value in the form of float32 used for quantizing data into int32.
    max_range : NDArray-or-Symbol
        The original maximum scalar value in the form of float32 used for quantizing data into int32.
    out_type : {'auto', 'int8', 'uint8'}, optional, default='int8'
        Output data type. `auto`: uint8 when min_calib_range >= 0 is given, int8 otherwise.
    min_calib_range : float or None, optional, default=None
        The minimum scalar value in the form of float32 obtained through calibration. If present, it will be used to requantize the int32 data into int8.
    max_calib_range : float or None, optional, default=None
        The maximum scalar value in the form of float32 obtained through calibration. If present, it will be used to requantize the int32 data into int8.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/quantization/requantize.py.
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
