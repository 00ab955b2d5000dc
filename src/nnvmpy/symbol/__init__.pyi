"""Type stubs for nnvmpy.symbol, generated from the op registry by `nnvmpy stubs`.

Do not edit: `nnvmpy stubs` rewrites this file.
"""

from typing import Any, Literal, TypeAlias

import numpy as np

from nnvmpy.symbol.symbol import Symbol as Symbol
from nnvmpy.symbol.compose import Group as Group
from nnvmpy.symbol.compose import Variable as Variable
def _P(name: Any, kind: Any, *, default: Any, annotation: Any) -> Any: ...
from nnvmpy.symbol import _internal as _internal
from nnvmpy import _symbol_fluent as _symbol_fluent
from nnvmpy.symbol.functions import arange as arange
from nnvmpy.symbol import arith as arith
from nnvmpy.symbol import attr_keys as attr_keys
def call_op(op: Any, args: Any, kwargs: Any, hint: Any = ...) -> Any: ...
from nnvmpy.symbol import compose as compose
from nnvmpy.symbol import contrib as contrib
from nnvmpy.symbol import debug as debug
from nnvmpy.symbol.functions import eye as eye
from nnvmpy.symbol.functions import full as full
from nnvmpy.symbol import functions as functions
from nnvmpy.symbol.histogram import histogram as histogram
from nnvmpy.symbol.functions import hypot as hypot
from nnvmpy.symbol import image as image
from nnvmpy.symbol import infer as infer
from nnvmpy.symbol import linalg as linalg
from nnvmpy.symbol.functions import linspace as linspace
from nnvmpy.symbol.symbol import load as load
from nnvmpy.symbol.symbol import load_json as load_json
def make(op: Any, name: Any = ..., prefix: Any = ...) -> Any: ...
from nnvmpy.symbol.functions import maximum as maximum
from nnvmpy.symbol.functions import minimum as minimum
from nnvmpy.symbol.functions import ones as ones
from nnvmpy.symbol import optimize as optimize
from nnvmpy.symbol.functions import pow as pow
from nnvmpy.symbol.functions import power as power
from nnvmpy.symbol import random as random
from nnvmpy.symbol.functions import split_v2 as split_v2
from nnvmpy.symbol import symbol as symbol
from nnvmpy.symbol.compose import var as var
from nnvmpy.symbol.functions import zeros as zeros

_Shape: TypeAlias = tuple[int, ...] | list[int] | int
_FloatTuple: TypeAlias = tuple[float, ...] | list[float] | float
_IntOrNoneTuple: TypeAlias = tuple[int | None, ...] | list[int | None]

def Activation(
    data: Symbol | None = None,
    *,
    act_type: Literal['relu', 'sigmoid', 'softrelu', 'softsign', 'tanh'] | str,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Applies an activation function element-wise to the input.

    - relu: y = max(x, 0)
    - sigmoid: y = 1 / (1 + exp(-x))
    - tanh: y = tanh(x)
    - softrelu: y = log(1 + exp(x))
    - softsign: y = x / (1 + |x|)

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input array.
    act_type : {'relu', 'sigmoid', 'softrelu', 'softsign', 'tanh'}, required
        Activation function to be applied.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/activation.py.
    """

def BatchNorm(
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
    """Batch normalization: normalizes a data batch by mean and variance per channel, then applies a scale gamma and an offset beta.

        out = (data - mean) / sqrt(var + eps) * gamma + beta

    Training uses the batch's statistics and updates moving_mean/moving_var in place (auxiliary states); inference, or use_global_stats, uses the moving ones.

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

    Defined in nnvmpy/ops/nn/batch_norm.py.
    """

def BatchNorm_v1(
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
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """This operator is DEPRECATED. Perform BatchNorm on the input.

    BatchNorm (see there) over axis 1: batch statistics and moving averages while training, the moving statistics at inference.

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

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/legacy_v1.py.
    """

def BilinearSampler(
    data: Symbol | None = None,
    grid: Symbol | None = None,
    *,
    cudnn_off: bool | int | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Applies bilinear sampling to the input feature map: output[n, c, h, w] is data[n, c] interpolated at the point grid[n, :, h, w], whose two channels are x and y normalised to [-1, 1] (GridGenerator makes such grids). Points outside the map read zeros.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to the BilinearsamplerOp.
    grid : NDArray-or-Symbol
        Input grid to the BilinearsamplerOp.grid has two channels: x_src, y_src
    cudnn_off : boolean or None, optional, default=None
        whether to turn cudnn off (accepted; nnvmpy has no cuDNN)

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/bilinear_sampler.py.
    """

def BlockGrad(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Stops gradient computation: the output is the input, and the gradient flowing back through it is zero.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/misc.py.
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

def Cast(
    data: Symbol | None = None,
    *,
    dtype: Literal['bool', 'float16', 'float32', 'float64', 'int32', 'int64', 'int8', 'uint8'] | str | type | np.dtype[Any],
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Casts all elements of the input to a new type.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input.
    dtype : {'bool', 'float16', 'float32', 'float64', 'int32', 'int64', 'int8', 'uint8'}, required
        Output data type.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/init.py.
    """

def Concat(
    *data: Symbol,
    num_args: int | None = None,
    dim: int = 1,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Joins input arrays along a given axis (dim). All inputs must have the same shape except along dim; e.g. (2, 2) and (2, 3) along dim=1 give (2, 5).

    Parameters
    ----------
    data : NDArray-or-Symbol[]
        List of arrays to concatenate
    num_args : int (non-negative), required
        Number of inputs to be concated.
    dim : int, optional, default=1
        the dimension to be concated.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/concat.py.
    """

def Convolution(
    data: Symbol | None = None,
    weight: Symbol | None = None,
    bias: Symbol | None = None,
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
    """Compute *N*-D convolution on *(N+2)*-D input (N = 1, 2 or 3).

    For 2-D convolution, the shapes are

    - **data**: *(batch_size, channel, height, width)*
    - **weight**: *(num_filter, channel/num_group, kernel[0], kernel[1])*
    - **bias**: *(num_filter,)*
    - **out**: *(batch_size, num_filter, out_height, out_width)*, with::

        out_height = (height + 2*pad[0] - dilate[0]*(kernel[0]-1) - 1) // stride[0] + 1

    With num_group > 1 the channels split into num_group groups convolved separately (num_group == channel is depthwise convolution). 1-D convolution takes *(batch_size, channel, width)*, 3-D *(batch_size, channel, depth, height, width)*.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to the ConvolutionOp.
    weight : NDArray-or-Symbol
        Weight matrix.
    bias : NDArray-or-Symbol
        Bias parameter.
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

    Defined in nnvmpy/ops/nn/convolution.py.
    """

def Convolution_v1(
    data: Symbol | None = None,
    weight: Symbol | None = None,
    bias: Symbol | None = None,
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
    layout: Literal['NCDHW', 'NCHW', 'NDHWC', 'NHWC'] | str | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """This operator is DEPRECATED. Apply convolution to input then add a bias.

    Computes Convolution (see there) over 2-D or 3-D windows.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to the ConvolutionV1Op.
    weight : NDArray-or-Symbol
        Weight matrix.
    bias : NDArray-or-Symbol
        Bias parameter.
    kernel : Shape(tuple), required
        convolution kernel size: (h, w) or (d, h, w)
    stride : Shape(tuple), optional, default=()
        convolution stride: (h, w) or (d, h, w)
    dilate : Shape(tuple), optional, default=()
        convolution dilate: (h, w) or (d, h, w)
    pad : Shape(tuple), optional, default=()
        pad for convolution: (h, w) or (d, h, w)
    num_filter : int (non-negative), required
        convolution filter(channel) number
    num_group : int (non-negative), optional, default=1
        Number of group partitions. Equivalent to slicing input into num_group partitions, apply convolution on each, then concatenate the results
    workspace : int (non-negative), optional, default=1024
        Maximum temporary workspace allowed for convolution (MB). nnvmpy caps it at 64 MB.
    no_bias : boolean, optional, default=0
        Whether to disable bias parameter.
    cudnn_tune : {None, 'fastest', 'limited_workspace', 'off'}, optional, default=None
        Whether to pick convolution algo by running performance test (ignored).
    cudnn_off : boolean, optional, default=0
        Turn off cudnn for this layer (ignored).
    layout : {None, 'NCDHW', 'NCHW', 'NDHWC', 'NHWC'}, optional, default=None
        Set layout for input, output and weight. Empty for default layout: NCHW for 2d and NCDHW for 3d. Only the default layouts are supported.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/legacy_v1.py.
    """

def Correlation(
    data1: Symbol | None = None,
    data2: Symbol | None = None,
    *,
    kernel_size: int = 1,
    max_displacement: int = 1,
    stride1: int = 1,
    stride2: int = 1,
    pad_size: int = 0,
    is_multiply: bool | int = True,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Applies correlation to the inputs (FlowNet): every patch of data1 is compared with the patches of data2 displaced by up to max_displacement, by multiplication or absolute difference averaged over the patch and the channels; each displacement is one output channel.

    Parameters
    ----------
    data1 : NDArray-or-Symbol
        Input data1 to the correlation.
    data2 : NDArray-or-Symbol
        Input data2 to the correlation.
    kernel_size : int (non-negative), optional, default=1
        kernel size for Correlation must be an odd number
    max_displacement : int (non-negative), optional, default=1
        Max displacement of Correlation 
    stride1 : int (non-negative), optional, default=1
        stride1 quantize data1 globally
    stride2 : int (non-negative), optional, default=1
        stride2 quantize data2 within the neighborhood centered around data1
    pad_size : int (non-negative), optional, default=0
        pad for Correlation
    is_multiply : boolean, optional, default=1
        operation type is either multiplication or subduction

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/correlation.py.
    """

def Crop(
    *data: Symbol,
    num_args: int | None = None,
    offset: _Shape = (0, 0),
    h_w: _Shape = (0, 0),
    center_crop: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Crops a 2-D window from every (batch, channel) plane of 4-D data.

    With ``num_args=1`` the window is ``h_w`` = (h, w); with ``num_args=2`` it takes the height and width of the second input (``crop_like``). It starts at ``offset`` = (y, x), or is centred with ``center_crop=True``. The output is *(batch, channel, h, w)*.

    Parameters
    ----------
    data : NDArray-or-Symbol[]
        Tensor or List of Tensors, the second input will be used as crop_like shape reference
    num_args : int (non-negative), required
        Number of inputs for crop, if equals one, then we will use the h_w for crop height and width, else if equals two, then we will use the height and width of the second input symbol, we name crop_like here
    offset : Shape(tuple), optional, default=(0, 0)
        crop offset coordinate: (y, x)
    h_w : Shape(tuple), optional, default=(0, 0)
        crop height and width: (h, w)
    center_crop : boolean, optional, default=0
        If set to true, then it will use be the center_crop, or it will crop using the shape of crop_like

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/crop.py.
    """

def Custom(
    *data: Symbol,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Apply a custom operator implemented in Python (a CustomOpProp registered with @nv.operator.register(op_type)). Extra keyword arguments reach the prop's __init__ as strings.

    Parameters
    ----------
    data : NDArray-or-Symbol[]
        Input data for the custom operator.
    op_type : string
        Name of the registered custom operator.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/operator/custom.py.
    """

def Deconvolution(
    data: Symbol | None = None,
    weight: Symbol | None = None,
    bias: Symbol | None = None,
    *,
    kernel: _Shape,
    stride: _Shape = (),
    dilate: _Shape = (),
    pad: _Shape = (),
    adj: _Shape = (),
    target_shape: _Shape = (),
    num_filter: int,
    num_group: int = 1,
    workspace: int = 512,
    no_bias: bool | int = True,
    cudnn_tune: Literal['fastest', 'limited_workspace', 'off'] | str | None = None,
    cudnn_off: bool | int = False,
    layout: Literal['NCDHW', 'NCHW', 'NCW', 'NDHWC', 'NHWC'] | str | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes 1-D, 2-D or 3-D transposed convolution (aka fractionally strided convolution) of the input tensor: the gradient of Convolution with respect to its input, so it upsamples.

    - **data**: *(batch_size, channel, [depth,] [height,] width)*
    - **weight**: *(channel, num_filter/num_group, *kernel)*
    - **bias**: *(num_filter,)* (only with no_bias=False; the default has no bias)
    - **out**: *(batch_size, num_filter, *out_size)*, with::

        out_size = stride*(size-1) + dilate*(kernel-1) + 1 - 2*pad + adj

    or ``target_shape`` when given (pad and adj then follow from it).

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input tensor to the deconvolution operation.
    weight : NDArray-or-Symbol
        Weights representing the kernel.
    bias : NDArray-or-Symbol
        Bias added to the result after the deconvolution operation.
    kernel : Shape(tuple), required
        Deconvolution kernel size: (w,), (h, w) or (d, h, w). This is same as the kernel size used for the corresponding convolution
    stride : Shape(tuple), optional, default=()
        The stride used for the corresponding convolution: (w,), (h, w) or (d, h, w). Defaults to 1 for each dimension.
    dilate : Shape(tuple), optional, default=()
        Dilation factor for each dimension of the input: (w,), (h, w) or (d, h, w). Defaults to 1 for each dimension.
    pad : Shape(tuple), optional, default=()
        The amount of implicit zero padding added during convolution for each dimension of the input: (w,), (h, w) or (d, h, w). ``(kernel-1)/2`` is usually a good choice. If `target_shape` is set, `pad` will be ignored and a padding that will generate the target shape will be used. Defaults to no padding.
    adj : Shape(tuple), optional, default=()
        Adjustment for output shape: (w,), (h, w) or (d, h, w). If `target_shape` is set, `adj` will be ignored and computed accordingly.
    target_shape : Shape(tuple), optional, default=()
        Shape of the output tensor: (w,), (h, w) or (d, h, w).
    num_filter : int (non-negative), required
        Number of output filters.
    num_group : int (non-negative), optional, default=1
        Number of groups partition.
    workspace : int (non-negative), optional, default=512
        Maximum temporary workspace allowed (MB) in deconvolution. nnvmpy caps it at 64 MB and sizes its chunks of images to fit.
    no_bias : boolean, optional, default=1
        Whether to disable bias parameter.
    cudnn_tune : {None, 'fastest', 'limited_workspace', 'off'}, optional, default=None
        Whether to pick convolution algorithm by running performance test. Accepted and ignored (nnvmpy has no cuDNN).
    cudnn_off : boolean, optional, default=0
        Turn off cudnn for this layer (ignored).
    layout : {None, 'NCDHW', 'NCHW', 'NCW', 'NDHWC', 'NHWC'}, optional, default=None
        Set layout for input, output and weight. Empty for default layout, NCW for 1d, NCHW for 2d and NCDHW for 3d. Only the default layouts are supported.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/deconvolution.py.
    """

def Dropout(
    data: Symbol | None = None,
    *,
    p: float = 0.5,
    mode: Literal['always', 'training'] | str = 'training',
    axes: _Shape = (),
    cudnn_off: bool | int | None = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Applies dropout operation to input array.

    During training, each element of the input is set to zero with probability p and the rest are scaled by 1/(1-p); at inference the input passes unchanged (unless mode='always').

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input array to which dropout will be applied.
    p : float, optional, default=0.5
        Fraction of the input that gets dropped out during training time.
    mode : {'always', 'training'}, optional, default='training'
        Whether to only turn on dropout during training or to also turn on for inference.
    axes : Shape(tuple), optional, default=()
        Axes for variational dropout kernel.
    cudnn_off : boolean or None, optional, default=0
        Accepted for MXNet compatibility; ignored.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/dropout.py.
    """

def ElementWiseSum(
    *data: Symbol,
    num_args: int | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Adds all input arguments element-wise: y = x_0 + x_1 + ... + x_{n-1}.

    Parameters
    ----------
    args : NDArray-or-Symbol[]
        Positional input arrays
    num_args : int (non-negative), required
        Number of inputs to be summed.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_binary.py.
    """

def Embedding(
    data: Symbol | None = None,
    weight: Symbol | None = None,
    *,
    input_dim: int,
    output_dim: int,
    dtype: Literal['float16', 'float32', 'float64', 'int32', 'int64', 'int8', 'uint8'] | str | type | np.dtype[Any] = 'float32',
    sparse_grad: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Maps integer indices to vector representations (embeddings).

    Looks up rows of `weight` (input_dim, output_dim) by the indices in `data`: the output has shape data.shape + (output_dim,). Indices outside [0, input_dim) are clipped. The gradient of weight is dense (nnvmpy has no row_sparse storage).

    Example::

        weight = [[0., 1.], [2., 3.], [4., 5.]]
        Embedding([[0, 2], [1, 1]], weight, input_dim=3, output_dim=2)
            = [[[0., 1.], [4., 5.]], [[2., 3.], [2., 3.]]]

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input array to the embedding operator.
    weight : NDArray-or-Symbol
        The embedding weight matrix.
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

    Defined in nnvmpy/ops/indexing.py.
    """

def Flatten(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Flattens the input into a 2-D array, collapsing all axes but the first: (d1, d2, ..., dk) -> (d1, d2*...*dk). The output may share the input's memory.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/shape.py.
    """

def FullyConnected(
    data: Symbol | None = None,
    weight: Symbol | None = None,
    bias: Symbol | None = None,
    *,
    num_hidden: int,
    no_bias: bool | int = False,
    flatten: bool | int = True,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Applies a linear transformation: Y = X W^T + b.

    With flatten=True (the default) data (N, d1, ..., dk) is treated as (N, d1*...*dk); with flatten=False the transformation applies to the last axis and keeps the others: (x1, ..., xn, K) -> (x1, ..., xn, num_hidden). weight has shape (num_hidden, K) and bias (num_hidden,); both are inferred from data and num_hidden.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data.
    weight : NDArray-or-Symbol
        Weight matrix.
    bias : NDArray-or-Symbol
        Bias parameter.
    num_hidden : int (non-negative), required
        Number of hidden nodes of the output.
    no_bias : boolean, optional, default=0
        Whether to disable bias parameter.
    flatten : boolean, optional, default=1
        Whether to collapse all but the first axis of the input data tensor.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/fully_connected.py.
    """

def GridGenerator(
    data: Symbol | None = None,
    *,
    transform_type: Literal['affine', 'warp'] | str,
    target_shape: _Shape = (0, 0),
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Generates a sampling grid for BilinearSampler (normalised source coordinates in [-1, 1]; channel 0 is x, channel 1 is y).

    - affine: data (N, 6) holds a 2x3 affine matrix per sample, applied to the target grid of shape target_shape
    - warp: data (N, 2, H, W) is an optical flow in pixels added to each position

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to the function.
    transform_type : {'affine', 'warp'}, required
        The type of transformation. For `affine`, input data should be an affine matrix of size (batch, 6). For `warp`, input data should be an optical flow of size (batch, 2, h, w).
    target_shape : Shape(tuple), optional, default=(0, 0)
        Specifies the output shape (H, W). This is required if transformation type is `affine`. If transformation type is `warp`, this parameter is ignored.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/grid_generator.py.
    """

def GroupNorm(
    data: Symbol | None = None,
    gamma: Symbol | None = None,
    beta: Symbol | None = None,
    *,
    num_groups: int = 1,
    eps: float = 1e-05,
    output_mean_var: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Group normalization: the channels of each sample are split into num_groups groups, each normalized by its own mean and standard deviation, then scaled by gamma and shifted by beta (one value per group).

        out = (data - mean) / sqrt(var + eps) * gamma + beta

    data has shape (N, C, ...) with C divisible by num_groups; with output_mean_var the mean and std, shape (N, num_groups), are outputs too.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data
    gamma : NDArray-or-Symbol
        gamma array
    beta : NDArray-or-Symbol
        beta array
    num_groups : int (non-negative), optional, default=1
        Total number of groups.
    eps : float, optional, default=1e-05
        An `epsilon` parameter to prevent division by 0.
    output_mean_var : boolean, optional, default=0
        Output the mean and std calculated along the given axis.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/group_norm.py.
    """

def IdentityAttachKLSparseReg(
    data: Symbol | None = None,
    *,
    sparseness_target: float = 0.1,
    penalty: float = 0.001,
    momentum: float = 0.9,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Apply a sparse regularization to the output of a sigmoid activation function: the forward pass is the identity, and the backward pass adds the gradient of a KL divergence between sparseness_target and the moving average of the activations (an auxiliary state, updated during backward).

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data.
    sparseness_target : float, optional, default=0.1
        The sparseness target
    penalty : float, optional, default=0.001
        The tradeoff parameter for the sparseness penalty
    momentum : float, optional, default=0.9
        The momentum for running average

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/kl_sparse.py.
    """

def InstanceNorm(
    data: Symbol | None = None,
    gamma: Symbol | None = None,
    beta: Symbol | None = None,
    *,
    eps: float = 0.001,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Instance normalization: each channel of each sample is normalized by the mean and variance of its spatial positions, then scaled by gamma and shifted by beta (one value per channel).

        out = (data - mean) / sqrt(var + eps) * gamma + beta

    data has shape (N, C, d1, ...) with at least one spatial dimension.

    Parameters
    ----------
    data : NDArray-or-Symbol
        An n-dimensional input array (n > 2) of the form [batch, channel, spatial_dim1, spatial_dim2, ...].
    gamma : NDArray-or-Symbol
        A vector of length 'channel', which multiplies the normalized input.
    beta : NDArray-or-Symbol
        A vector of length 'channel', which is added to the product of the normalized input and the weight.
    eps : float, optional, default=0.001
        An `epsilon` parameter to prevent division by 0.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/instance_norm.py.
    """

def L2Normalization(
    data: Symbol | None = None,
    *,
    eps: float = 1e-10,
    mode: Literal['channel', 'instance', 'spatial'] | str = 'instance',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Normalizes the input by its L2 norm: out = data / sqrt(sum(data ** 2) + eps).

    - instance: one norm per sample (all axes but the first)
    - channel: one norm per position, across axis 1
    - spatial: one norm per (sample, channel), across the axes after 1

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input array to normalize.
    eps : float, optional, default=1e-10
        A small constant for numerical stability.
    mode : {'channel', 'instance', 'spatial'}, optional, default='instance'
        Specify the dimension along which to compute L2 norm.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/l2_normalization.py.
    """

def LRN(
    data: Symbol | None = None,
    *,
    alpha: float = 0.0001,
    beta: float = 0.75,
    knorm: float = 2.0,
    nsize: int,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Applies local response normalization to the input, across channels (axis 1).

        out[n, c] = data[n, c] / (knorm + alpha / nsize * sum(data[n, c']^2))^beta

    where c' runs over the nsize channels centred on c (odd nsize).

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to LRN
    alpha : float, optional, default=0.0001
        The variance scaling parameter alpha in the LRN expression.
    beta : float, optional, default=0.75
        The power parameter beta in the LRN expression.
    knorm : float, optional, default=2.0
        The parameter k in the LRN expression.
    nsize : int (non-negative), required
        normalization window width in elements.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/lrn.py.
    """

def LayerNorm(
    data: Symbol | None = None,
    gamma: Symbol | None = None,
    beta: Symbol | None = None,
    *,
    axis: int = -1,
    eps: float = 1e-05,
    output_mean_var: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Layer normalization: normalizes the input along `axis` by its mean and standard deviation there, then scales by gamma and shifts by beta.

        out = (data - mean(data, axis)) / sqrt(var(data, axis) + eps) * gamma + beta

    With output_mean_var the mean and std (axis kept, of size 1) are outputs too.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to layer normalization
    gamma : NDArray-or-Symbol
        gamma array
    beta : NDArray-or-Symbol
        beta array
    axis : int, optional, default=-1
        The axis to perform layer normalization. Usually, this should be be axis of the channel dimension. Negative values means indexing from right to left.
    eps : float, optional, default=1e-05
        An `epsilon` parameter to prevent division by 0.
    output_mean_var : boolean, optional, default=0
        Output the mean and std calculated along the given axis.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/layer_norm.py.
    """

def LeakyReLU(
    data: Symbol | None = None,
    gamma: Symbol | None = None,
    *,
    act_type: Literal['elu', 'gelu', 'leaky', 'prelu', 'rrelu', 'selu'] | str = 'leaky',
    slope: float = 0.25,
    lower_bound: float = 0.125,
    upper_bound: float = 0.334,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Leaky rectified linear units and their relatives, element-wise.

    - leaky: y = x if x > 0 else slope * x
    - elu: y = x if x > 0 else slope * (exp(x) - 1)
    - selu: y = lambda * (x if x > 0 else alpha * (exp(x) - 1))
    - gelu: y = 0.5 * x * (1 + erf(x / sqrt(2)))
    - prelu: y = x if x > 0 else gamma * x, gamma a learned input (channel-wise)
    - rrelu: y = x if x > 0 else s * x, s uniform in [lower_bound, upper_bound) while training (the second output), their mean at inference

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to activation function.
    gamma : NDArray-or-Symbol
        Input data to activation function.
    act_type : {'elu', 'gelu', 'leaky', 'prelu', 'rrelu', 'selu'}, optional, default='leaky'
        Activation function to be applied.
    slope : float, optional, default=0.25
        Init slope for the activation. (For leaky and elu only)
    lower_bound : float, optional, default=0.125
        Lower bound of random slope. (For rrelu only)
    upper_bound : float, optional, default=0.334
        Upper bound of random slope. (For rrelu only)

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/leaky_relu.py.
    """

def LinearRegressionOutput(
    data: Symbol | None = None,
    label: Symbol | None = None,
    *,
    grad_scale: float = 1.0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Regression loss head: the output is data; the backward pass gives data the gradient of the loss against `label` (it needs no head gradient). See nnvmpy.ops.nn.regression.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to the function.
    label : NDArray-or-Symbol
        Input label to the function.
    grad_scale : float, optional, default=1.0
        Scale the gradient by a float factor

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/regression.py.
    """

def LogisticRegressionOutput(
    data: Symbol | None = None,
    label: Symbol | None = None,
    *,
    grad_scale: float = 1.0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Regression loss head: the output is sigmoid(data) = 1 / (1 + exp(-data)); the backward pass gives data the gradient of the loss against `label` (it needs no head gradient). See nnvmpy.ops.nn.regression.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to the function.
    label : NDArray-or-Symbol
        Input label to the function.
    grad_scale : float, optional, default=1.0
        Scale the gradient by a float factor

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/regression.py.
    """

def MAERegressionOutput(
    data: Symbol | None = None,
    label: Symbol | None = None,
    *,
    grad_scale: float = 1.0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Regression loss head: the output is data; the backward pass gives data the gradient of the loss against `label` (it needs no head gradient). See nnvmpy.ops.nn.regression.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to the function.
    label : NDArray-or-Symbol
        Input label to the function.
    grad_scale : float, optional, default=1.0
        Scale the gradient by a float factor

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/regression.py.
    """

def MakeLoss(
    data: Symbol | None = None,
    *,
    grad_scale: float = 1.0,
    valid_thresh: float = 0.0,
    normalization: Literal['batch', 'null', 'valid'] | str = 'null',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Make your own loss function in network construction: the output is data, and the backward pass gives data grad_scale / norm (see `normalization`) without a head gradient, so the wrapped expression is trained as the loss.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input array.
    grad_scale : float, optional, default=1.0
        Gradient scale as a supplement to unary and binary operators
    valid_thresh : float, optional, default=0.0
        clip each element in the array to 0 when it is less than ``valid_thresh``. This is used when ``normalization`` is set to ``'valid'``.
    normalization : {'batch', 'null', 'valid'}, optional, default='null'
        If this is set to null, the output gradient will not be normalized. If this is set to batch, the output gradient will be divided by the batch size. If this is set to valid, the output gradient will be divided by the number of valid input elements.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/make_loss.py.
    """

def Pad(
    data: Symbol | None = None,
    *,
    mode: Literal['constant', 'edge', 'reflect'] | str,
    pad_width: _Shape,
    constant_value: float = 0.0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Pads an input array with a constant or edge values of the array.

    `pad_width` is a tuple of integer padding widths for each axis of the format (before_1, after_1, ... , before_N, after_N), of length 2*N for an N-d input.

    x = [[1, 2], [3, 4]]
    pad(x, mode='constant', pad_width=(0, 0, 1, 1)) = [[0, 1, 2, 0], [0, 3, 4, 0]]
    pad(x, mode='edge', pad_width=(0, 0, 1, 1)) = [[1, 1, 2, 2], [3, 3, 4, 4]]
    pad(x, mode='reflect', pad_width=(0, 0, 1, 1)) = [[2, 1, 2, 1], [4, 3, 4, 3]]

    MXNet 1.9.1 pads only the last two or three axes of 4-d and 5-d arrays; nnvmpy pads any axis of any rank.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data array
    mode : {'constant', 'edge', 'reflect'}, required
        Padding type to use. "constant" pads with `constant_value` "edge" pads using the edge values of the input array "reflect" pads by reflecting values with respect to the edges.
    pad_width : Shape(tuple), required
        Widths of the padding regions applied to the edges of each axis. It is a tuple of integer padding widths for each axis of the format ``(before_1, after_1, ... , before_N, after_N)``. It should be of length ``2*N`` where ``N`` is the number of dimensions of the array.This is equivalent to pad_width in numpy.pad, but flattened.
    constant_value : float, optional, default=0.0
        The value used for padding when `mode` is 'constant'.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/pad.py.
    """

def Pooling(
    data: Symbol | None = None,
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
    """Performs pooling on the input.

    The shapes for 2-D pooling are

    - **data** and **out**: *(batch_size, channel, height, width)*, with::

        out_height = f(height, kernel[0], pad[0], stride[0])

    where f is, by ``pooling_convention``: valid (default) ``floor((x+2*p-k)/s)+1``, full (Caffe) ``ceil((x+2*p-k)/s)+1``, same ``ceil(x/s)``. ``global_pool`` pools each whole plane (kernel = (height, width)).
    ``pool_type`` is avg, max, sum or lp (``(sum x^p)^(1/p)``, p = ``p_value``). 1-D pooling takes *(batch_size, channel, width)*.

    Max pooling has a second, hidden output (an int32 argmax mask for backward). It skips NaN, as MXNet's CPU pooling does: a window's value is its largest non-NaN element (NaN only when the whole window is NaN; MXNet gives the lowest float there), and the gradient goes to the first position holding it.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to the pooling operator.
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

    Defined in nnvmpy/ops/nn/pooling.py.
    """

def Pooling_v1(
    data: Symbol | None = None,
    *,
    kernel: _Shape = (),
    pool_type: Literal['avg', 'max', 'sum'] | str = 'max',
    global_pool: bool | int = False,
    pooling_convention: Literal['full', 'valid'] | str = 'valid',
    stride: _Shape = (),
    pad: _Shape = (),
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """This operator is DEPRECATED. Perform pooling on the input.

    Max, average or sum pooling over 2-D or 3-D windows (valid or full convention, or global_pool). The average divides by the whole kernel size.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to the pooling operator.
    kernel : Shape(tuple), optional, default=()
        pooling kernel size: (y, x) or (d, y, x)
    pool_type : {'avg', 'max', 'sum'}, optional, default='max'
        Pooling type to be applied.
    global_pool : boolean, optional, default=0
        Ignore kernel size, do global pooling based on current input feature map.
    pooling_convention : {'full', 'valid'}, optional, default='valid'
        Pooling convention to be applied.
    stride : Shape(tuple), optional, default=()
        stride: for pooling (y, x) or (d, y, x)
    pad : Shape(tuple), optional, default=()
        pad for pooling: (y, x) or (d, y, x)

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/legacy_v1.py.
    """

def RNN(
    data: Symbol | None = None,
    parameters: Symbol | None = None,
    state: Symbol | None = None,
    state_cell: Symbol | None = None,
    sequence_length: Symbol | None = None,
    *,
    state_size: int,
    num_layers: int,
    bidirectional: bool | int = False,
    mode: Literal['gru', 'lstm', 'rnn_relu', 'rnn_tanh'] | str,
    p: float = 0.0,
    state_outputs: bool | int = False,
    projection_size: int | None = None,
    lstm_state_clip_min: float | None = None,
    lstm_state_clip_max: float | None = None,
    lstm_state_clip_nan: bool | int = False,
    use_sequence_length: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Applies recurrent layers to input data. Currently, vanilla RNN, LSTM and GRU are implemented, with both multi-layer and bidirectional support.

    data is (seq_len, batch, input_size); parameters is MXNet's packed vector (all weights, layer by layer and direction by direction, then all biases); gates are ordered i, f, g, o (lstm) and r, z, n (gru).

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to RNN
    parameters : NDArray-or-Symbol
        Vector of all RNN trainable parameters concatenated
    state : NDArray-or-Symbol
        initial hidden state of the RNN
    state_cell : NDArray-or-Symbol
        initial cell state for LSTM networks (only for LSTM)
    sequence_length : NDArray-or-Symbol
        Vector of valid sequence lengths for each element in batch. (Only used if use_sequence_length kwarg is True)
    state_size : int (non-negative), required
        size of the state for each layer
    num_layers : int (non-negative), required
        number of stacked layers
    bidirectional : boolean, optional, default=0
        whether to use bidirectional recurrent layers
    mode : {'gru', 'lstm', 'rnn_relu', 'rnn_tanh'}, required
        the type of RNN to compute
    p : float, optional, default=0.0
        drop rate of the dropout on the outputs of each RNN layer, except the last layer.
    state_outputs : boolean, optional, default=0
        Whether to have the states as symbol outputs.
    projection_size : int or None, optional, default=None
        size of project size
    lstm_state_clip_min : float or None, optional, default=None
        Minimum clip value of LSTM states. This option must be used together with lstm_state_clip_max.
    lstm_state_clip_max : float or None, optional, default=None
        Maximum clip value of LSTM states. This option must be used together with lstm_state_clip_min.
    lstm_state_clip_nan : boolean, optional, default=0
        Whether to stop NaN from propagating in state by clipping it to min/max. If clipping range is not specified, this option is ignored.
    use_sequence_length : boolean, optional, default=0
        If set to true, this layer takes in an extra input parameter `sequence_length` to specify variable length sequence

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/rnn.py.
    """

def ROIPooling(
    data: Symbol | None = None,
    rois: Symbol | None = None,
    *,
    pooled_size: _Shape,
    spatial_scale: float,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Performs region of interest pooling: each roi [batch_index, x1, y1, x2, y2] (scaled by spatial_scale onto data) is divided into a pooled_size grid of bins, and each bin takes the maximum of data over it (0 for an empty bin).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input array to the pooling operator,  a 4D Feature maps 
    rois : NDArray-or-Symbol
        Bounding box coordinates, a 2D array of [[batch_index, x1, y1, x2, y2]], where (x1, y1) and (x2, y2) are top left and bottom right corners of designated region of interest. `batch_index` indicates the index of corresponding image in the input array
    pooled_size : Shape(tuple), required
        ROI pooling output shape (h,w)
    spatial_scale : float, required
        Ratio of input feature map height (or w) to raw image height (or w). Equals the reciprocal of total stride in convolutional layers

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/roi_pooling.py.
    """

def Reshape(
    data: Symbol | None = None,
    *,
    shape: _Shape = (),
    reverse: bool | int = False,
    target_shape: _Shape = (),
    keep_highest: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Reshapes the input array without copying (the output may share its memory).

    Special values in `shape`: 0 copies this dimension from the input, -1 infers it from the remaining size, -2 copies all remaining input dimensions, -3 merges two consecutive input dimensions, -4 splits one input dimension into the two that follow (one of them may be -1). With reverse=True the special values are matched from right to left.

    Examples for an input of shape (2, 3, 4): shape=(0, -1) -> (2, 12); (-3, 4) -> (6, 4); (-2,) -> (2, 3, 4); (-4, 1, 2, -2) -> (1, 2, 3, 4).

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data.
    shape : Shape(tuple), optional, default=()
        The target shape
    reverse : boolean, optional, default=0
        If true then the special values are inferred from right to left
    target_shape : Shape(tuple), optional, default=()
        (Deprecated! Use ``shape`` instead.) Target new shape. One and only one dim can be 0, in which case it will be inferred from the rest of dims
    keep_highest : boolean, optional, default=0
        (Deprecated! Use ``shape`` instead.) Whether keep the highest dim unchanged.If set to true, then the first dim in target_shape is ignored,and always fixed as input

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/shape.py.
    """

def SVMOutput(
    data: Symbol | None = None,
    label: Symbol | None = None,
    *,
    margin: float = 1.0,
    regularization_coefficient: float = 1.0,
    use_linear: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes support vector machine based transformation of the input: the output is data; backward gives data the gradient of the (L2, or with use_linear L1) one-vs-rest hinge loss against `label`, without a head gradient.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data for SVM transformation.
    label : NDArray-or-Symbol
        Class label for the input data.
    margin : float, optional, default=1.0
        The loss function penalizes outputs that lie outside this margin. Default margin is 1.
    regularization_coefficient : float, optional, default=1.0
        Regularization parameter for the SVM. This balances the tradeoff between coefficient size and error.
    use_linear : boolean, optional, default=0
        Whether to use L1-SVM objective. L2-SVM objective is used by default.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/svm.py.
    """

def SequenceLast(
    data: Symbol | None = None,
    sequence_length: Symbol | None = None,
    *,
    use_sequence_length: bool | int = False,
    axis: int = 0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Takes the last element of a sequence: data (T, N, ...) with axis=0, or (N, T, ...) with axis=1, gives (N, ...). With use_sequence_length, sequence b's last element is at step sequence_length[b] - 1 (lengths must be in [1, T]).

    Parameters
    ----------
    data : NDArray-or-Symbol
        n-dimensional input array of the form [max_sequence_length, batch_size, other dims] (axis=0)
    sequence_length : NDArray-or-Symbol
        vector of sequence lengths of the form [batch_size]
    use_sequence_length : boolean, optional, default=0
        If set to true, this layer takes in an extra input parameter `sequence_length` to specify variable length sequence
    axis : int (non-negative), optional, default=0
        The sequence axis. Only values of 0 and 1 are currently supported.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/sequence.py.
    """

def SequenceMask(
    data: Symbol | None = None,
    sequence_length: Symbol | None = None,
    *,
    use_sequence_length: bool | int = False,
    value: float = 0.0,
    axis: int = 0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Sets all elements outside the sequence to a constant value: with use_sequence_length, the steps t >= sequence_length[b] of sequence b become `value` (lengths in [0, T]); without it the data is returned unchanged.

    Parameters
    ----------
    data : NDArray-or-Symbol
        n-dimensional input array of the form [max_sequence_length, batch_size, other dims] (axis=0)
    sequence_length : NDArray-or-Symbol
        vector of sequence lengths of the form [batch_size]
    use_sequence_length : boolean, optional, default=0
        If set to true, this layer takes in an extra input parameter `sequence_length` to specify variable length sequence
    value : float, optional, default=0.0
        The value to be used as a mask.
    axis : int (non-negative), optional, default=0
        The sequence axis. Only values of 0 and 1 are currently supported.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/sequence.py.
    """

def SequenceReverse(
    data: Symbol | None = None,
    sequence_length: Symbol | None = None,
    *,
    use_sequence_length: bool | int = False,
    axis: int = 0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Reverses the elements of each sequence: with use_sequence_length only the first sequence_length[b] steps of sequence b are reversed (lengths in [0, T]), the padding after them stays in place.

    Parameters
    ----------
    data : NDArray-or-Symbol
        n-dimensional input array of the form [max_sequence_length, batch_size, other dims] (axis=0)
    sequence_length : NDArray-or-Symbol
        vector of sequence lengths of the form [batch_size]
    use_sequence_length : boolean, optional, default=0
        If set to true, this layer takes in an extra input parameter `sequence_length` to specify variable length sequence
    axis : int (non-negative), optional, default=0
        The sequence axis. Only values of 0 and 1 are currently supported.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/sequence.py.
    """

def SliceChannel(
    data: Symbol | None = None,
    *,
    num_outputs: int,
    axis: int = 1,
    squeeze_axis: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Splits an array along an axis into num_outputs equal parts; e.g. (2, 6) with num_outputs=3 gives three (2, 2) arrays. squeeze_axis=True drops the split axis when each part has length 1 there.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input
    num_outputs : int (non-negative), required
        Number of splits. Note that this should evenly divide the length of the `axis`.
    axis : int, optional, default=1
        Axis along which to split.
    squeeze_axis : boolean, optional, default=0
        If true, Removes the axis with length 1 from the shapes of the output arrays. **Note** that setting `squeeze_axis` to ``true`` removes axis with length 1 only along the `axis` which it is split. Also `squeeze_axis` can be set to ``true`` only if ``input.shape[axis] == num_outputs``.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/concat.py.
    """

def Softmax(
    data: Symbol | None = None,
    label: Symbol | None = None,
    *,
    grad_scale: float = 1.0,
    ignore_label: float = -1.0,
    multi_output: bool | int = False,
    use_ignore: bool | int = False,
    preserve_shape: bool | int = False,
    normalization: Literal['batch', 'null', 'valid'] | str = 'null',
    out_grad: bool | int = False,
    smooth_alpha: float = 0.0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes the gradient of cross entropy loss with respect to softmax output.

    The forward output is softmax(data); the backward gives (softmax(data) - one_hot(label)) * grad_scale / norm to data, ignoring the head gradient unless out_grad is set. See the module docstring of nnvmpy.ops.nn.loss for the layouts.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input array.
    label : NDArray-or-Symbol
        Ground truth label.
    grad_scale : float, optional, default=1.0
        Scales the gradient by a float factor.
    ignore_label : float, optional, default=-1.0
        The instances whose labels == ignore_label are ignored during backward, if use_ignore is set to true.
    multi_output : boolean, optional, default=0
        If set to true, the softmax function is computed along axis 1: data (n, k, x_1, ..., x_n) gives n*x_1*...*x_n softmax outputs of k classes.
    use_ignore : boolean, optional, default=0
        If true, the labels equal to ignore_label get no gradient.
    preserve_shape : boolean, optional, default=0
        If true, softmax is computed along the last axis.
    normalization : {'batch', 'null', 'valid'}, optional, default='null'
        Normalizes the gradient: 'null' not at all, 'batch' by the batch size, 'valid' by the number of labels that are not ignore_label.
    out_grad : boolean, optional, default=0
        Multiplies the gradient with the output gradient.
    smooth_alpha : float, optional, default=0.0
        Label smoothing: subtracted from the one-hot target of the gold label and spread uniformly over the other labels.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/loss.py.
    """

def SoftmaxActivation(
    data: Symbol | None = None,
    *,
    mode: Literal['channel', 'instance'] | str = 'instance',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Applies softmax activation to the input: over the last axis (each instance of (N, K) data) with mode='instance', or across channels (axis 1) at each position with mode='channel'.

    The softmax op with an `axis` is the newer, more general form.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input array.
    mode : {'channel', 'instance'}, optional, default='instance'
        Specifies how to compute the softmax. If set to ``instance``, it computes softmax for each instance. If set to ``channel``, It computes cross channel softmax for each position of each instance.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/softmax_activation.py.
    """

def SoftmaxOutput(
    data: Symbol | None = None,
    label: Symbol | None = None,
    *,
    grad_scale: float = 1.0,
    ignore_label: float = -1.0,
    multi_output: bool | int = False,
    use_ignore: bool | int = False,
    preserve_shape: bool | int = False,
    normalization: Literal['batch', 'null', 'valid'] | str = 'null',
    out_grad: bool | int = False,
    smooth_alpha: float = 0.0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes the gradient of cross entropy loss with respect to softmax output.

    The forward output is softmax(data); the backward gives (softmax(data) - one_hot(label)) * grad_scale / norm to data, ignoring the head gradient unless out_grad is set. See the module docstring of nnvmpy.ops.nn.loss for the layouts.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input array.
    label : NDArray-or-Symbol
        Ground truth label.
    grad_scale : float, optional, default=1.0
        Scales the gradient by a float factor.
    ignore_label : float, optional, default=-1.0
        The instances whose labels == ignore_label are ignored during backward, if use_ignore is set to true.
    multi_output : boolean, optional, default=0
        If set to true, the softmax function is computed along axis 1: data (n, k, x_1, ..., x_n) gives n*x_1*...*x_n softmax outputs of k classes.
    use_ignore : boolean, optional, default=0
        If true, the labels equal to ignore_label get no gradient.
    preserve_shape : boolean, optional, default=0
        If true, softmax is computed along the last axis.
    normalization : {'batch', 'null', 'valid'}, optional, default='null'
        Normalizes the gradient: 'null' not at all, 'batch' by the batch size, 'valid' by the number of labels that are not ignore_label.
    out_grad : boolean, optional, default=0
        Multiplies the gradient with the output gradient.
    smooth_alpha : float, optional, default=0.0
        Label smoothing: subtracted from the one-hot target of the gold label and spread uniformly over the other labels.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/loss.py.
    """

def SpatialTransformer(
    data: Symbol | None = None,
    loc: Symbol | None = None,
    *,
    target_shape: _Shape = (0, 0),
    transform_type: Literal['affine'] | str,
    sampler_type: Literal['bilinear'] | str,
    cudnn_off: bool | int | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Applies a spatial transformer: an affine sampling grid of shape target_shape is made from loc (N, 6), one 2x3 matrix per sample, and data is sampled on it bilinearly (GridGenerator then BilinearSampler in one op).

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data to the SpatialTransformerOp.
    loc : NDArray-or-Symbol
        localisation net, the output dim should be 6 when transform_type is affine. You shold initialize the weight and bias with identity tranform.
    target_shape : Shape(tuple), optional, default=(0, 0)
        output shape(h, w) of spatial transformer: (y, x)
    transform_type : {'affine'}, required
        transformation type
    sampler_type : {'bilinear'}, required
        sampling type
    cudnn_off : boolean or None, optional, default=None
        whether to turn cudnn off (accepted; nnvmpy has no cuDNN)

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/spatial_transformer.py.
    """

def SwapAxis(
    data: Symbol | None = None,
    *,
    dim1: int = 0,
    dim2: int = 0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Interchanges two axes of an array.

    x = [[1, 2, 3]]
    swapaxes(x, dim1=0, dim2=1) = [[1], [2], [3]]
    Negative axes count from the end.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data array
    dim1 : int, optional, default=0
        the first axis to be swapped.
    dim2 : int, optional, default=0
        the second axis to be swapped.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/flip.py.
    """

def UpSampling(
    *data: Symbol,
    scale: int,
    num_filter: int = 0,
    sample_type: Literal['bilinear', 'nearest'] | str,
    multi_input_mode: Literal['concat', 'sum'] | str = 'concat',
    num_args: int | None = None,
    workspace: int = 512,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Upsamples the given input data.

    Two algorithms (``sample_type``) are available:

    - **nearest**: every input is repeated ``scale`` (times its size ratio to the first input) along height and width; several inputs are concatenated along the channels (``multi_input_mode='concat'``) or summed (``'sum'``). The output is *(batch, channels, scale*height_0, scale*width_0)*.
    - **bilinear**: a depthwise Deconvolution of ``data`` with ``weight`` of shape *(channels, 1, 2*scale - scale%2, same)*, stride ``scale`` and pad ``ceil((scale-1)/2)``; initialise the weight with the bilinear filter (``nv.init.Bilinear``). ``num_filter`` is the number of channels.

    Example::

        x = [[[[1, 1, 1], [1, 1, 1], [1, 1, 1]]]]
        UpSampling(x, scale=2, sample_type='nearest') = 6x6 ones

    Parameters
    ----------
    data : NDArray-or-Symbol[]
        Array of tensors to upsample. For bilinear upsampling, there should be 2 inputs - 1 data and 1 weight.
    scale : int (non-negative), required
        Up sampling scale
    num_filter : int (non-negative), optional, default=0
        Input filter. Only used by bilinear sample_type. Since bilinear upsampling uses deconvolution, num_filters is set to the number of channels.
    sample_type : {'bilinear', 'nearest'}, required
        upsampling method
    multi_input_mode : {'concat', 'sum'}, optional, default='concat'
        How to handle multiple input. concat means concatenate upsampled images along the channel dimension. sum means add all images together, only available for nearest neighbor upsampling.
    num_args : int (non-negative), required
        Number of inputs to be upsampled. For nearest neighbor upsampling, this can be 1-N; the size of output will be(scale*h_0,scale*w_0) and all other inputs will be upsampled to thesame size. For bilinear upsampling this must be 2; 1 input and 1 weight.
    workspace : int (non-negative), optional, default=512
        Tmp workspace for deconvolution (MB)

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/upsampling.py.
    """

def abs(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Absolute value, element-wise.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_unary.py.
    """

def adam_update(
    weight: Symbol | None = None,
    grad: Symbol | None = None,
    mean: Symbol | None = None,
    var: Symbol | None = None,
    *,
    lr: float,
    beta1: float = 0.9,
    beta2: float = 0.999,
    epsilon: float = 1e-08,
    wd: float = 0.0,
    rescale_grad: float = 1.0,
    clip_gradient: float = -1.0,
    lazy_update: bool | int = True,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Update function for Adam optimizer. Adam is seen as a generalization of AdaGrad.

        g = clip(rescale_grad * grad + wd * weight, clip_gradient)
        mean = beta1 * mean + (1 - beta1) * g
        var = beta2 * var + (1 - beta2) * g^2
        weight = weight - lr * mean / (sqrt(var) + epsilon)

    The bias correction of Adam is the optimizer's (it scales lr). `mean` and `var` are
    updated in place; returns the new weight (call with out=weight).

    Parameters
    ----------
    weight : NDArray-or-Symbol
        Weight
    grad : NDArray-or-Symbol
        Grad
    mean : NDArray-or-Symbol
        Mean
    var : NDArray-or-Symbol
        Var
    lr : float, required
        Learning rate
    beta1 : float, optional, default=0.9
        The decay rate for the 1st moment estimates.
    beta2 : float, optional, default=0.999
        The decay rate for the 2nd moment estimates.
    epsilon : float, optional, default=1e-08
        A small constant for numerical stability.
    wd : float, optional, default=0.0
        Weight decay augments the objective function with a regularization term that penalizes large weights. The penalty scales with the square of the magnitude of each weight.
    rescale_grad : float, optional, default=1.0
        Rescale gradient to grad = rescale_grad*grad.
    clip_gradient : float, optional, default=-1.0
        Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).
    lazy_update : boolean, optional, default=1
        If true, lazy updates are applied if gradient's stype is row_sparse (nnvmpy has dense arrays only, so this has no effect).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/_common.py.
    """

def add_n(
    *data: Symbol,
    num_args: int | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Adds all input arguments element-wise: y = x_0 + x_1 + ... + x_{n-1}.

    Parameters
    ----------
    args : NDArray-or-Symbol[]
        Positional input arrays
    num_args : int (non-negative), required
        Number of inputs to be summed.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_binary.py.
    """

def all_finite(
    data: Symbol | None = None,
    *,
    init_output: bool | int = True,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Check if all the float numbers in the array are finite (used for AMP): the output, a float32 array of shape (1,), is 1 if they all are and 0 otherwise. With init_output=False the output is only ever cleared to 0, so a flag can be carried across several calls with out=.

    Parameters
    ----------
    init_output : boolean, optional, default=1
        Initialize output to 1.
    data : NDArray
        Array

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/gradient_stats.py.
    """

def amp_cast(
    data: Symbol | None = None,
    *,
    dtype: Literal['bool', 'float16', 'float32', 'float64', 'int32', 'int64', 'int8', 'uint8'] | str | type | np.dtype[Any],
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Cast function between low precision float/FP32 used by AMP. It casts only between low precision float/FP32 and does not do anything for other types.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input.
    dtype : {'bool', 'float16', 'float32', 'float64', 'int32', 'int64', 'int8', 'uint8'}, required
        Output data type.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/amp.py.
    """

def amp_multicast(
    *data: Symbol,
    num_outputs: int | None = None,
    cast_narrow: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Cast function used by AMP, that casts its inputs to the common widest type (the narrowest with cast_narrow=True). It casts only between low precision float/FP32 and does not do anything for other types.

    Parameters
    ----------
    data : NDArray-or-Symbol[]
        Weights
    num_outputs : int (non-negative), required
        Number of input/output pairs to be casted to the widest type.
    cast_narrow : boolean, optional, default=0
        Whether to cast to the narrowest type

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/amp.py.
    """

def arccos(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Inverse cosine, in [0, pi].

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/unary_math.py.
    """

def arccosh(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Inverse hyperbolic cosine.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/unary_math.py.
    """

def arcsin(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Inverse sine, in [-pi/2, pi/2].

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/unary_math.py.
    """

def arcsinh(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Inverse hyperbolic sine.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/unary_math.py.
    """

def arctan(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Inverse tangent, in (-pi/2, pi/2).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/unary_math.py.
    """

def arctanh(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Inverse hyperbolic tangent.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/unary_math.py.
    """

def argmax(
    data: Symbol | None = None,
    *,
    axis: int | None = None,
    keepdims: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Returns indices of the maximum values along an axis. The first occurrence wins a tie; NaN counts as the extreme value.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input
    axis : int or None, optional, default=None
        The axis along which to perform the reduction. Negative values means indexing from right to left. ``Requires axis to be set as int, because global reduction is not supported yet.``
    keepdims : boolean, optional, default=0
        If this is set to `True`, the reduced axis is left in the result as dimension with size one.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/argmax.py.
    """

def argmax_channel(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Returns argmax indices of each channel (along axis 1) of the input array. The first occurrence wins a tie; NaN counts as the extreme value.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/argmax.py.
    """

def argmin(
    data: Symbol | None = None,
    *,
    axis: int | None = None,
    keepdims: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Returns indices of the minimum values along an axis. The first occurrence wins a tie; NaN counts as the extreme value.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input
    axis : int or None, optional, default=None
        The axis along which to perform the reduction. Negative values means indexing from right to left. ``Requires axis to be set as int, because global reduction is not supported yet.``
    keepdims : boolean, optional, default=0
        If this is set to `True`, the reduced axis is left in the result as dimension with size one.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/argmax.py.
    """

def argsort(
    data: Symbol | None = None,
    *,
    axis: int | None = -1,
    is_ascend: bool | int = True,
    dtype: Literal['float16', 'float32', 'float64', 'int32', 'int64', 'uint8'] | str | type | np.dtype[Any] = 'float32',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Returns the indices that would sort an input array along the given axis.

    Examples::

        x = [[0.3, 0.2, 0.4], [0.1, 0.3, 0.2]]
        argsort(x) = [[1., 0., 2.], [0., 2., 1.]]
        argsort(x, axis=0) = [[1., 0., 1.], [0., 1., 0.]]
        argsort(x, axis=None) = [3., 1., 5., 0., 4., 2.]

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input array
    axis : int or None, optional, default=-1
        Axis along which to choose sort the input tensor. If not given, the flattened array is used. Default is -1.
    is_ascend : boolean, optional, default=1
        Whether to sort in ascending or descending order.
    dtype : {'float16', 'float32', 'float64', 'int32', 'int64', 'uint8'}, optional, default='float32'
        DType of the output indices. It is only valid when ret_typ is 'indices' or 'both'. An error will be raised if the selected data type cannot precisely represent the indices.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/sort.py.
    """

def batch_dot(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    transpose_a: bool | int = False,
    transpose_b: bool | int = False,
    forward_stype: Literal['csr', 'default', 'row_sparse'] | str | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Batchwise dot product of two 3-D arrays: out[i] = dot(lhs[i], rhs[i]).

    lhs (batch, M, K) and rhs (batch, K, N) give (batch, M, N); transpose_a and
    transpose_b transpose the last two axes of an operand first.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        The first input
    rhs : NDArray-or-Symbol
        The second input
    transpose_a : boolean, optional, default=0
        If true then transpose the first input before dot.
    transpose_b : boolean, optional, default=0
        If true then transpose the second input before dot.
    forward_stype : {None, 'csr', 'default', 'row_sparse'}, optional, default=None
        The desired storage type of the forward output. nnvmpy stores every array densely, so this hint is accepted for MXNet compatibility and has no effect.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/matrix.py.
    """

def batch_take(
    a: Symbol | None = None,
    indices: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Takes elements from a data batch: given a of shape (d0, d1) and indices of shape (d0,), output[i] = a[i, indices[i]]. Indices outside [0, d1) are clipped. (Deprecated in MXNet in favour of pick; like MXNet's, it has no gradient.)

    Example::

        x = [[1., 2.], [3., 4.], [5., 6.]]
        batch_take(x, [0, 1, 0]) = [1., 4., 5.]

    Parameters
    ----------
    a : NDArray-or-Symbol
        The input array
    indices : NDArray-or-Symbol
        The index array

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/indexing.py.
    """

def broadcast_add(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Returns lhs + rhs, element-wise. The shapes of lhs and rhs broadcast as in NumPy.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        First input to the function
    rhs : NDArray-or-Symbol
        Second input to the function

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/broadcast.py.
    """

def broadcast_axes(
    data: Symbol | None = None,
    *,
    axis: _Shape = (),
    size: _Shape = (),
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Broadcasts the input array over particular axes, which must have size 1.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input
    axis : Shape(tuple), optional, default=()
        The axes to perform the broadcasting.
    size : Shape(tuple), optional, default=()
        Target sizes of the broadcasting axes.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/broadcast.py.
    """

def broadcast_axis(
    data: Symbol | None = None,
    *,
    axis: _Shape = (),
    size: _Shape = (),
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Broadcasts the input array over particular axes, which must have size 1.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input
    axis : Shape(tuple), optional, default=()
        The axes to perform the broadcasting.
    size : Shape(tuple), optional, default=()
        Target sizes of the broadcasting axes.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/broadcast.py.
    """

def broadcast_div(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Returns lhs / rhs, element-wise. The shapes of lhs and rhs broadcast as in NumPy.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        First input to the function
    rhs : NDArray-or-Symbol
        Second input to the function

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/broadcast.py.
    """

def broadcast_equal(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Returns 1 where lhs == rhs and 0 elsewhere. The shapes of lhs and rhs broadcast as in NumPy.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        First input to the function
    rhs : NDArray-or-Symbol
        Second input to the function

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/broadcast.py.
    """

def broadcast_greater(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Returns 1 where lhs > rhs and 0 elsewhere. The shapes of lhs and rhs broadcast as in NumPy.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        First input to the function
    rhs : NDArray-or-Symbol
        Second input to the function

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/broadcast.py.
    """

def broadcast_greater_equal(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Returns 1 where lhs >= rhs and 0 elsewhere, element-wise, in the input's dtype. The shapes of lhs and rhs broadcast as in NumPy.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        First input to the function
    rhs : NDArray-or-Symbol
        Second input to the function

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/broadcast.py.
    """

def broadcast_hypot(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Returns sqrt(lhs^2 + rhs^2), element-wise. The shapes of lhs and rhs broadcast as in NumPy.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        First input to the function
    rhs : NDArray-or-Symbol
        Second input to the function

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/broadcast.py.
    """

def broadcast_lesser(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Returns 1 where lhs < rhs and 0 elsewhere. The shapes of lhs and rhs broadcast as in NumPy.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        First input to the function
    rhs : NDArray-or-Symbol
        Second input to the function

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/broadcast.py.
    """

def broadcast_lesser_equal(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Returns 1 where lhs <= rhs and 0 elsewhere, element-wise, in the input's dtype. The shapes of lhs and rhs broadcast as in NumPy.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        First input to the function
    rhs : NDArray-or-Symbol
        Second input to the function

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/broadcast.py.
    """

def broadcast_like(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    lhs_axes: _Shape | None = None,
    rhs_axes: _Shape | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Broadcasts lhs to the shape of rhs; with lhs_axes/rhs_axes, only lhs's size-1 axes lhs_axes take the sizes of rhs's axes rhs_axes.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        First input.
    rhs : NDArray-or-Symbol
        Second input.
    lhs_axes : Shape(tuple) or None, optional, default=None
        Axes to perform broadcast on in the first input array
    rhs_axes : Shape(tuple) or None, optional, default=None
        Axes to copy from the second input array

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/broadcast_like.py.
    """

def broadcast_logical_and(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Returns 1 where lhs and rhs are both non-zero and 0 elsewhere, element-wise, in the input's dtype. The shapes of lhs and rhs broadcast as in NumPy.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        First input to the function
    rhs : NDArray-or-Symbol
        Second input to the function

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/broadcast.py.
    """

def broadcast_logical_or(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Returns 1 where lhs or rhs is non-zero and 0 elsewhere, element-wise, in the input's dtype. The shapes of lhs and rhs broadcast as in NumPy.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        First input to the function
    rhs : NDArray-or-Symbol
        Second input to the function

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/broadcast.py.
    """

def broadcast_logical_xor(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Returns 1 where exactly one of lhs and rhs is non-zero and 0 elsewhere, element-wise, in the input's dtype. The shapes of lhs and rhs broadcast as in NumPy.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        First input to the function
    rhs : NDArray-or-Symbol
        Second input to the function

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/broadcast.py.
    """

def broadcast_maximum(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Returns max(lhs, rhs), element-wise. The shapes of lhs and rhs broadcast as in NumPy.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        First input to the function
    rhs : NDArray-or-Symbol
        Second input to the function

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/broadcast.py.
    """

def broadcast_minimum(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Returns min(lhs, rhs), element-wise. The shapes of lhs and rhs broadcast as in NumPy.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        First input to the function
    rhs : NDArray-or-Symbol
        Second input to the function

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/broadcast.py.
    """

def broadcast_minus(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Returns lhs - rhs, element-wise. The shapes of lhs and rhs broadcast as in NumPy.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        First input to the function
    rhs : NDArray-or-Symbol
        Second input to the function

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/broadcast.py.
    """

def broadcast_mod(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Returns lhs mod rhs (sign of rhs; 0 where rhs is 0), element-wise. The shapes of lhs and rhs broadcast as in NumPy.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        First input to the function
    rhs : NDArray-or-Symbol
        Second input to the function

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/broadcast.py.
    """

def broadcast_mul(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Returns lhs * rhs, element-wise. The shapes of lhs and rhs broadcast as in NumPy.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        First input to the function
    rhs : NDArray-or-Symbol
        Second input to the function

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/broadcast.py.
    """

def broadcast_not_equal(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Returns 1 where lhs != rhs and 0 elsewhere, element-wise, in the input's dtype. The shapes of lhs and rhs broadcast as in NumPy.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        First input to the function
    rhs : NDArray-or-Symbol
        Second input to the function

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/broadcast.py.
    """

def broadcast_plus(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Returns lhs + rhs, element-wise. The shapes of lhs and rhs broadcast as in NumPy.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        First input to the function
    rhs : NDArray-or-Symbol
        Second input to the function

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/broadcast.py.
    """

def broadcast_power(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Returns lhs ^ rhs, element-wise. The shapes of lhs and rhs broadcast as in NumPy.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        First input to the function
    rhs : NDArray-or-Symbol
        Second input to the function

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/broadcast.py.
    """

def broadcast_sub(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Returns lhs - rhs, element-wise. The shapes of lhs and rhs broadcast as in NumPy.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        First input to the function
    rhs : NDArray-or-Symbol
        Second input to the function

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/broadcast.py.
    """

def broadcast_to(
    data: Symbol | None = None,
    *,
    shape: _Shape = (),
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Broadcasts the input array to a new shape; dims of size 1 are repeated.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input
    shape : Shape(tuple), optional, default=()
        The shape of the desired array. A dim of 0 keeps the input's dim, so broadcast_to(B, shape=(10, 0, 0)) is broadcast_axis(B, axis=0, size=10).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/broadcast.py.
    """

def cast(
    data: Symbol | None = None,
    *,
    dtype: Literal['bool', 'float16', 'float32', 'float64', 'int32', 'int64', 'int8', 'uint8'] | str | type | np.dtype[Any],
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Casts all elements of the input to a new type.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input.
    dtype : {'bool', 'float16', 'float32', 'float64', 'int32', 'int64', 'int8', 'uint8'}, required
        Output data type.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/init.py.
    """

def cast_storage(
    data: Symbol | None = None,
    *,
    stype: Literal['csr', 'default', 'row_sparse'] | str,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Casts tensor storage type to the new type.

    nnvmpy arrays are dense: stype='default' gives a copy of the input; 'row_sparse' and 'csr' raise a ParamError.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input.
    stype : {'csr', 'default', 'row_sparse'}, required
        Output storage type.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/cast_storage.py.
    """

def cbrt(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Cube root, element-wise.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/unary_math.py.
    """

def ceil(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Smallest integer >= x.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_unary.py.
    """

def choose_element_0index(
    data: Symbol | None = None,
    index: Symbol | None = None,
    *,
    axis: int | None = -1,
    keepdims: bool | int = False,
    mode: Literal['clip', 'wrap'] | str = 'clip',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Picks elements from an input array according to the input indices along the given axis.

    Given an input array of shape (d0, d1) and indices of shape (i0,), the result will be an output array of shape (i0,) with output[i] = input[i, indices[i]]. By default, an index too large is replaced by the last index of the axis (the 'clip' mode); 'wrap' wraps indices around the axis. The index array has the output's shape.

    Example::

        x = [[1., 2.], [3., 4.], [5., 6.]]
        pick(x, y=[0, 1], axis=0) = [1., 4.]
        pick(x, y=[0, 1, 0], axis=1) = [1., 4., 5.]
        pick(x, y=[2, -1, -2], axis=1, mode='wrap') = [1., 4., 5.]
        pick(x, y=[[1.], [0.], [2.]], axis=1, keepdims=True) = [[2.], [3.], [6.]]

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input array
    index : NDArray-or-Symbol
        The index array
    axis : int or None, optional, default=-1
        int or None. The axis to picking the elements. Negative values means indexing from right to left. If is `None`, the elements in the index w.r.t the flattened input will be picked.
    keepdims : boolean, optional, default=0
        If true, the axis where we pick the elements is left in the result as dimension with size one.
    mode : {'clip', 'wrap'}, optional, default='clip'
        Specify how out-of-bound indices behave. Default is "clip". "clip" means clip to the range. So, if all indices mentioned are too large, they are replaced by the index that addresses the last element along an axis. "wrap" means to wrap around.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/pick.py.
    """

def clip(
    data: Symbol | None = None,
    *,
    a_min: float,
    a_max: float,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Clips (limits) the values in an array to [a_min, a_max].

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.
    a_min : float, required
        Minimum value
    a_max : float, required
        Maximum value

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/clip.py.
    """

def col2im(
    data: Symbol | None = None,
    *,
    output_size: _Shape,
    kernel: _Shape,
    stride: _Shape = (),
    dilate: _Shape = (),
    pad: _Shape = (),
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Combining the output column matrix of im2col back to image array.

    Like im2col, an input of shape (N, C * prod(kernel), W) gives (N, C, *output_size); overlapping values are summed (col2im is im2col's adjoint).

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input array to extract sliding blocks.
    output_size : Shape(tuple), required
        The spatial dimension of image array: (w,), (h, w) or (d, h, w).
    kernel : Shape(tuple), required
        Sliding kernel size: (w,), (h, w) or (d, h, w).
    stride : Shape(tuple), optional, default=()
        The stride between adjacent sliding blocks in spatial dimension: (w,), (h, w) or (d, h, w). Defaults to 1 for each dimension.
    dilate : Shape(tuple), optional, default=()
        The spacing between adjacent kernel points: (w,), (h, w) or (d, h, w). Defaults to 1 for each dimension.
    pad : Shape(tuple), optional, default=()
        The zero-value padding size on both sides of spatial dimension: (w,), (h, w) or (d, h, w). Defaults to no padding.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/im2col_ops.py.
    """

def concat(
    *data: Symbol,
    num_args: int | None = None,
    dim: int = 1,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Joins input arrays along a given axis (dim). All inputs must have the same shape except along dim; e.g. (2, 2) and (2, 3) along dim=1 give (2, 5).

    Parameters
    ----------
    data : NDArray-or-Symbol[]
        List of arrays to concatenate
    num_args : int (non-negative), required
        Number of inputs to be concated.
    dim : int, optional, default=1
        the dimension to be concated.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/concat.py.
    """

def cos(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Cosine, element-wise.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_unary.py.
    """

def cosh(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Hyperbolic cosine, element-wise.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/unary_math.py.
    """

def crop(
    data: Symbol | None = None,
    *,
    begin: _IntOrNoneTuple,
    end: _IntOrNoneTuple,
    step: _IntOrNoneTuple = (),
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Slices a region of the array: along axis i, indices range(begin[i], end[i], step[i]) as Python slicing reads them (None = from the start / to the end in the step's direction, negatives count from the end). Axes past len(begin) are kept whole.

    Example: x of shape (3, 4), begin=(0, 1), end=(2, 4) -> x[0:2, 1:4]; begin=(None,), end=(None,), step=(-1,) reverses axis 0.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Source input
    begin : tuple of <int or None>, required
        starting indices for the slice operation, supports negative indices.
    end : tuple of <int or None>, required
        ending indices for the slice operation, supports negative indices.
    step : tuple of <int or None>, optional, default=()
        step for the slice operation, supports negative values.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/slicing.py.
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

def cumsum(
    a: Symbol | None = None,
    *,
    axis: int | None = None,
    dtype: Literal['float16', 'float32', 'float64', 'int32', 'int64', 'int8'] | str | type | np.dtype[Any] | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Return the cumulative sum of the elements along a given axis (the flattened array when axis is None).

    Parameters
    ----------
    a : NDArray-or-Symbol
        Input ndarray
    axis : int or None, optional, default=None
        Axis along which the cumulative sum is computed. The default (None) is to compute the cumsum over the flattened array.
    dtype : {None, 'float16', 'float32', 'float64', 'int32', 'int64', 'int8'}, optional, default=None
        Type of the returned array and of the accumulator in which the elements are summed. If dtype is not specified, it defaults to the dtype of a.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/cumsum.py.
    """

def degrees(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Radians to degrees: y = x * 180 / pi.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/unary_math.py.
    """

def depth_to_space(
    data: Symbol | None = None,
    *,
    block_size: int,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Rearranges (permutes) data from depth into blocks of spatial data; the reverse of space_to_depth. An input of shape (N, C, H, W) gives (N, C / block_size^2, H * block_size, W * block_size): reshape to (N, b, b, C / b^2, H, W), transpose to (0, 3, 4, 1, 5, 2), reshape to the output shape.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data array
    block_size : int (non-negative), required
        Blocks of [block_size. block_size] are moved

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/depth_space.py.
    """

def diag(
    data: Symbol | None = None,
    *,
    k: int = 0,
    axis1: int = 0,
    axis2: int = 1,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Extracts a diagonal or constructs a diagonal array.

    A 1-d input gives a 2-d array with the input on diagonal k (numpy.diag); an N-d input gives the diagonal k of the matrices spanned by axis1 and axis2, as a new last axis after the remaining axes (numpy.diagonal).

    x = [[1, 2, 3], [4, 5, 6]]
    diag(x) = [1, 5]
    diag(x, k=1) = [2, 6]
    diag([1, 2]) = [[1, 0], [0, 2]]

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input ndarray
    k : int, optional, default=0
        Diagonal in question. The default is 0. Use k>0 for diagonals above the main diagonal, and k<0 for diagonals below the main diagonal. If input has shape (S0 S1) k must be between -S0 and S1
    axis1 : int, optional, default=0
        The first axis of the sub-arrays of interest. Ignored when the input is a 1-D array.
    axis2 : int, optional, default=1
        The second axis of the sub-arrays of interest. Ignored when the input is a 1-D array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/diag.py.
    """

def dot(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    transpose_a: bool | int = False,
    transpose_b: bool | int = False,
    forward_stype: Literal['csr', 'default', 'row_sparse'] | str | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Dot product of two arrays.

    - 1-D x 1-D: the inner product, of shape (1,).
    - 2-D x 2-D: the matrix product.
    - N-D x M-D: a sum product over the last axis of lhs and the first axis of rhs:
      dot(x, y)[i, j, k] = sum(x[i, j, :] * y[:, k]) for x (a, b, n) and y (n, k).
    transpose_a / transpose_b transpose the operands first (an N-D lhs (n, a...) then
    contracts its first axis, an N-D rhs (b..., n) its last).

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        The first input
    rhs : NDArray-or-Symbol
        The second input
    transpose_a : boolean, optional, default=0
        If true then transpose the first input before dot.
    transpose_b : boolean, optional, default=0
        If true then transpose the second input before dot.
    forward_stype : {None, 'csr', 'default', 'row_sparse'}, optional, default=None
        The desired storage type of the forward output. nnvmpy stores every array densely, so this hint is accepted for MXNet compatibility and has no effect.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/matrix.py.
    """

def elemwise_add(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """y = lhs + rhs, element-wise.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        The lhs array.
    rhs : NDArray-or-Symbol
        The rhs array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_binary.py.
    """

def elemwise_div(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """y = lhs / rhs, element-wise.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        The lhs array.
    rhs : NDArray-or-Symbol
        The rhs array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_binary.py.
    """

def elemwise_mul(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """y = lhs * rhs, element-wise.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        The lhs array.
    rhs : NDArray-or-Symbol
        The rhs array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_binary.py.
    """

def elemwise_sub(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """y = lhs - rhs, element-wise.

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        The lhs array.
    rhs : NDArray-or-Symbol
        The rhs array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_binary.py.
    """

def erf(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """The Gauss error function, element-wise.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/special.py.
    """

def erfinv(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """The inverse of erf, element-wise.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/special.py.
    """

def exp(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """y = e^x

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_unary.py.
    """

def expand_dims(
    data: Symbol | None = None,
    *,
    axis: int,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Inserts a new axis of size 1 into the array shape; e.g. axis=1 turns (2, 3) into (2, 1, 3). The output may share the input's memory.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data.
    axis : int, required
        Position where new axis is to be inserted. Suppose that the input `NDArray`'s dimension is `ndim`, the range of the inserted axis is `[-ndim, ndim]`

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/shape.py.
    """

def expm1(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """y = e^x - 1

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_unary.py.
    """

def fill_element_0index(
    lhs: Symbol | None = None,
    mhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Fill one element of each line(row for python, column for R/Julia) in lhs according to index indicated by rhs and values indicated by mhs. This function assume rhs uses 0-based index.

    The result is a copy of lhs (rows along its last axis) with out[r, rhs[r]] = mhs[r]; indices outside the row are clipped.

    Example::

        fill_element_0index([[1., 2.], [3., 4.]], [9., 8.], [1, 0]) = [[1., 9.], [8., 4.]]

    Parameters
    ----------
    lhs : NDArray
        Left operand to the function.
    mhs : NDArray
        Middle operand to the function.
    rhs : NDArray
        Right operand to the function.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/pick.py.
    """

def fix(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Rounds toward zero.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/unary_math.py.
    """

def flatten(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Flattens the input into a 2-D array, collapsing all axes but the first: (d1, d2, ..., dk) -> (d1, d2*...*dk). The output may share the input's memory.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/shape.py.
    """

def flip(
    data: Symbol | None = None,
    *,
    axis: _Shape,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Reverses the order of elements along the given axis (or axes) while preserving the array's shape.

    x = [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    reverse(x, axis=0) = [[5, 6, 7, 8, 9], [0, 1, 2, 3, 4]]
    reverse(x, axis=1) = [[4, 3, 2, 1, 0], [9, 8, 7, 6, 5]]

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data array
    axis : Shape(tuple), required
        The axis which to reverse elements.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/flip.py.
    """

def floor(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Largest integer <= x.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_unary.py.
    """

def ftml_update(
    weight: Symbol | None = None,
    grad: Symbol | None = None,
    d: Symbol | None = None,
    v: Symbol | None = None,
    z: Symbol | None = None,
    *,
    lr: float,
    beta1: float = 0.6,
    beta2: float = 0.999,
    epsilon: float = 1e-08,
    t: int,
    wd: float = 0.0,
    rescale_grad: float = 1.0,
    clip_grad: float = -1.0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """The FTML optimizer (Zheng & Kwok, "Follow the Moving Leader in Deep Learning").

        g = clip(rescale_grad * grad + wd * weight, clip_grad)
        v = beta2 * v + (1 - beta2) * g^2
        d_t = (1 - beta1^t) / lr * (sqrt(v / (1 - beta2^t)) + epsilon)
        z = beta1 * z + (1 - beta1) * g - (d_t - beta1 * d) * weight
        d = d_t;  weight = -z / d_t

    `d`, `v` and `z` are updated in place; returns the new weight (call with out=weight).

    Parameters
    ----------
    weight : NDArray-or-Symbol
        Weight
    grad : NDArray-or-Symbol
        Grad
    d : NDArray-or-Symbol
        D
    v : NDArray-or-Symbol
        V
    z : NDArray-or-Symbol
        Z
    lr : float, required
        Learning rate.
    beta1 : float, optional, default=0.6
        Generally close to 0.5.
    beta2 : float, optional, default=0.999
        Generally close to 1.
    epsilon : float, optional, default=1e-08
        Epsilon to prevent div 0.
    t : int, required
        Number of update.
    wd : float, optional, default=0.0
        Weight decay augments the objective function with a regularization term that penalizes large weights. The penalty scales with the square of the magnitude of each weight.
    rescale_grad : float, optional, default=1.0
        Rescale gradient to grad = rescale_grad*grad.
    clip_grad : float, optional, default=-1.0
        Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/_common.py.
    """

def ftrl_update(
    weight: Symbol | None = None,
    grad: Symbol | None = None,
    z: Symbol | None = None,
    n: Symbol | None = None,
    *,
    lr: float,
    lamda1: float = 0.01,
    beta: float = 1.0,
    wd: float = 0.0,
    rescale_grad: float = 1.0,
    clip_gradient: float = -1.0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Update function for Ftrl optimizer (McMahan et al., "Ad Click Prediction").

        g = clip(rescale_grad * grad, clip_gradient)
        z += g - (sqrt(n + g^2) - sqrt(n)) * weight / lr
        n += g^2
        weight = (sign(z) * lamda1 - z) / ((beta + sqrt(n)) / lr + wd) * (|z| > lamda1)

    `z` and `n` are updated in place; returns the new weight (call with out=weight).

    Parameters
    ----------
    weight : NDArray-or-Symbol
        Weight
    grad : NDArray-or-Symbol
        Grad
    z : NDArray-or-Symbol
        Z
    n : NDArray-or-Symbol
        N
    lr : float, required
        Learning rate
    lamda1 : float, optional, default=0.01
        The L1 regularization coefficient.
    beta : float, optional, default=1.0
        Per-Coordinate Learning Rate beta.
    wd : float, optional, default=0.0
        Weight decay augments the objective function with a regularization term that penalizes large weights. The penalty scales with the square of the magnitude of each weight.
    rescale_grad : float, optional, default=1.0
        Rescale gradient to grad = rescale_grad*grad.
    clip_gradient : float, optional, default=-1.0
        Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/_common.py.
    """

def gamma(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """The gamma function, element-wise.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/special.py.
    """

def gammaln(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """log |gamma(x)|, element-wise.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/special.py.
    """

def gather_nd(
    data: Symbol | None = None,
    indices: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Gathers elements or slices of data into an array of shape (Y0, ..., Yk, X_M, ..., X_n) by the coordinates in indices, of shape (M, Y0, ..., Yk):
    output[y_0, ..., y_k, x_M, ..., x_n] = data[indices[0, y], ..., indices[M-1, y], x_M, ..., x_n]. Negative indices count from the end of their axis.

    Example: data = [[0, 1], [2, 3]], indices = [[1, 1, 0], [0, 1, 0]] -> [2, 3, 0].

    Parameters
    ----------
    data : NDArray-or-Symbol
        data
    indices : NDArray-or-Symbol
        indices

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/gather_scatter.py.
    """

def hard_sigmoid(
    data: Symbol | None = None,
    *,
    alpha: float = 0.2,
    beta: float = 0.5,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Hard sigmoid: y = max(0, min(1, alpha * x + beta)), element-wise.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.
    alpha : float, optional, default=0.2
        Slope of hard sigmoid
    beta : float, optional, default=0.5
        Bias of hard sigmoid.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/unary_math.py.
    """

def identity(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """y = x (a copy).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_unary.py.
    """

def im2col(
    data: Symbol | None = None,
    *,
    kernel: _Shape,
    stride: _Shape = (),
    dilate: _Shape = (),
    pad: _Shape = (),
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Extract sliding blocks from input array.

    An input of shape (N, C, *) with * the spatial axes (1 to 3 of them, as many as in `kernel`) gives (N, C * prod(kernel), W): each column holds one block of every channel, in row-major order of the kernel positions, and W is the number of block positions: prod over the spatial axes of (size + 2 * pad - dilate * (kernel - 1) - 1) // stride + 1.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input array to extract sliding blocks.
    kernel : Shape(tuple), required
        Sliding kernel size: (w,), (h, w) or (d, h, w).
    stride : Shape(tuple), optional, default=()
        The stride between adjacent sliding blocks in spatial dimension: (w,), (h, w) or (d, h, w). Defaults to 1 for each dimension.
    dilate : Shape(tuple), optional, default=()
        The spacing between adjacent kernel points: (w,), (h, w) or (d, h, w). Defaults to 1 for each dimension.
    pad : Shape(tuple), optional, default=()
        The zero-value padding size on both sides of spatial dimension: (w,), (h, w) or (d, h, w). Defaults to no padding.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/im2col_ops.py.
    """

def khatri_rao(
    *data: Symbol,
    num_args: int | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes the Khatri-Rao product of the input matrices.

    Given matrices A_1 (M_1, N), ..., A_n (M_n, N), the (column-wise) Khatri-Rao product is the (M_1 * ... * M_n, N) matrix whose k-th column is the Kronecker product of the k-th columns of the A_i.

    A = [[1, -1], [2, -3]]
    B = [[1, 4], [2, 5], [3, 6]]
    khatri_rao(A, B) = [[1, -4], [2, -5], [3, -6], [2, -12], [4, -15], [6, -18]]

    Parameters
    ----------
    args : NDArray-or-Symbol[]
        Positional input matrices
    num_args : int (non-negative), required
        Number of input matrices.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/khatri_rao.py.
    """

def lamb_update_phase1(
    weight: Symbol | None = None,
    grad: Symbol | None = None,
    mean: Symbol | None = None,
    var: Symbol | None = None,
    *,
    beta1: float = 0.9,
    beta2: float = 0.999,
    epsilon: float = 1e-06,
    t: int,
    bias_correction: bool | int = True,
    wd: float,
    rescale_grad: float = 1.0,
    clip_gradient: float = -1.0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Phase I of lamb update: the Adam-like direction g, decayed.

        grad = clip(rescale_grad * grad, clip_gradient)
        mean = beta1 * mean + (1 - beta1) * grad
        var = beta2 * var + (1 - beta2) * grad^2
        if bias_correction: mean_hat = mean / (1 - beta1^t); var_hat = var / (1 - beta2^t)
        g = mean_hat / (sqrt(var_hat) + epsilon) + wd * weight

    `mean` and `var` are updated in place; returns g.

    Parameters
    ----------
    weight : NDArray-or-Symbol
        Weight
    grad : NDArray-or-Symbol
        Grad
    mean : NDArray-or-Symbol
        Mean
    var : NDArray-or-Symbol
        Var
    beta1 : float, optional, default=0.9
        The decay rate for the 1st moment estimates.
    beta2 : float, optional, default=0.999
        The decay rate for the 2nd moment estimates.
    epsilon : float, optional, default=1e-06
        A small constant for numerical stability.
    t : int, required
        Index update count.
    bias_correction : boolean, optional, default=1
        Whether to use bias correction.
    wd : float, required
        Weight decay augments the objective function with a regularization term that penalizes large weights. The penalty scales with the square of the magnitude of each weight.
    rescale_grad : float, optional, default=1.0
        Rescale gradient to grad = rescale_grad*grad.
    clip_gradient : float, optional, default=-1.0
        Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/_common.py.
    """

def lamb_update_phase2(
    weight: Symbol | None = None,
    g: Symbol | None = None,
    r1: Symbol | None = None,
    r2: Symbol | None = None,
    *,
    lr: float,
    lower_bound: float = -1.0,
    upper_bound: float = -1.0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Phase II of lamb update: the layer-wise trust ratio step.

        r1 = min(max(r1, lower_bound), upper_bound)   (each bound when >= 0)
        lr = lr * r1 / r2 if r1 != 0 and r2 != 0 else lr
        weight = weight - lr * g

    r1 = norm(weight) and r2 = norm(g) have shape (1,). Returns the new weight (out=weight).

    Parameters
    ----------
    weight : NDArray-or-Symbol
        Weight
    g : NDArray-or-Symbol
        G
    r1 : NDArray-or-Symbol
        R1
    r2 : NDArray-or-Symbol
        R2
    lr : float, required
        Learning rate
    lower_bound : float, optional, default=-1.0
        Lower limit of norm of weight. If lower_bound <= 0, Lower limit is not set
    upper_bound : float, optional, default=-1.0
        Upper limit of norm of weight. If upper_bound <= 0, Upper limit is not set

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/_common.py.
    """

def linalg_det(
    A: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Compute the determinant of a matrix.
    Input is a tensor *A* of dimension *n >= 2*. If *n=2*, *A* is a square matrix. We compute: *out* = *det(A)*.

    If *n>2*, the operator is performed separately on the trailing two dimensions for all
    inputs (batch mode); a single matrix gives shape (1,).

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of square matrix

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def linalg_extractdiag(
    A: Symbol | None = None,
    *,
    offset: int = 0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Extracts the diagonal entries of a square matrix.
    Input is a tensor *A* of dimension *n >= 2*: a square matrix, or a batch of them on the trailing two dimensions. The diagonals are returned as an *n-1*-dimensional tensor.

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of square matrices
    offset : int, optional, default=0
        Offset of the diagonal versus the main diagonal. 0 corresponds to the main diagonal, a negative/positive value to diagonals below/above the main diagonal.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def linalg_extracttrian(
    A: Symbol | None = None,
    *,
    offset: int = 0,
    lower: bool | int = True,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Extracts a triangular sub-matrix from a square matrix.
    Input is a tensor *A* of dimension *n >= 2*: a square matrix, or a batch of them on the trailing two dimensions. The triangles are returned as an *n-1*-dimensional tensor.

    The *offset* and *lower* parameters determine the triangle: *offset = 0* the lower or
    upper triangle with the main diagonal, depending on *lower*; *offset = k > 0* the upper
    triangle with respect to the k-th diagonal above the main diagonal; *offset = k < 0* the
    lower triangle with respect to the k-th diagonal below it. A lower triangle is packed
    row by row, an upper one column by column.

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of square matrices
    offset : int, optional, default=0
        Offset of the diagonal versus the main diagonal. 0 corresponds to the main diagonal, a negative/positive value to diagonals below/above the main diagonal.
    lower : boolean, optional, default=1
        Refer to the lower triangular matrix if lower=true, refer to the upper otherwise. Only relevant when offset=0

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def linalg_gelqf(
    A: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """LQ factorization for general matrix.
    Input is a tensor *A* of dimension *n >= 2*.

    If *n=2*, we compute the LQ factorization (LAPACK *gelqf*, followed by *orglq*). *A*
    must have shape *(x, y)* with *x <= y*, and must have full rank *=x*. The LQ
    factorization consists of *L* with shape *(x, x)* and *Q* with shape *(x, y)*, so
    that: *A* = *L* * *Q*. Here, *L* is lower triangular (upper triangle equal to zero)
    with nonzero diagonal, and *Q* is row-orthonormal, meaning that *Q* * *Q*^T is equal to
    the identity matrix of shape *(x, x)*.

    If *n>2*, *gelqf* is performed separately on the trailing two dimensions for all
    inputs (batch mode).

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of input matrices to be factorized

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def linalg_gemm(
    A: Symbol | None = None,
    B: Symbol | None = None,
    C: Symbol | None = None,
    *,
    transpose_a: bool | int = False,
    transpose_b: bool | int = False,
    alpha: float = 1.0,
    beta: float = 1.0,
    axis: int = -2,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Performs general matrix multiplication and accumulation.
    Input are tensors *A*, *B*, *C*, each of dimension *n >= 2* and having the same shape
    on the leading *n-2* dimensions.

    If *n=2*: *out* = *alpha* * *op*(*A*) * *op*(*B*) + *beta* * *C*, where *op()* is the
    identity or the transposition (*transpose_a*, *transpose_b*).

    If *n>2*, *gemm* is performed separately for a batch of matrices. The column indices of
    the matrices are given by the last dimensions of the tensors, the row indices by the
    axis specified with the *axis* parameter (by default the trailing two dimensions hold
    the matrices). A non-default axis is equivalent to swapaxes(axis, -2) on every input,
    gemm, and swapaxes back, without the copies.

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of input matrices
    B : NDArray-or-Symbol
        Tensor of input matrices
    C : NDArray-or-Symbol
        Tensor of input matrices
    transpose_a : boolean, optional, default=0
        Multiply with transposed of first input (A).
    transpose_b : boolean, optional, default=0
        Multiply with transposed of second input (B).
    alpha : float, optional, default=1.0
        Scalar factor multiplied with A*B.
    beta : float, optional, default=1.0
        Scalar factor multiplied with C.
    axis : int, optional, default=-2
        Axis corresponding to the matrix rows.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def linalg_gemm2(
    A: Symbol | None = None,
    B: Symbol | None = None,
    *,
    transpose_a: bool | int = False,
    transpose_b: bool | int = False,
    alpha: float = 1.0,
    axis: int = -2,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Performs general matrix multiplication .
    Input are tensors *A*, *B*, each of dimension *n >= 2* and having the same shape
    on the leading *n-2* dimensions.

    If *n=2*: *out* = *alpha* * *op*(*A*) * *op*(*B*), where *op()* is the
    identity or the transposition (*transpose_a*, *transpose_b*).

    If *n>2*, *gemm* is performed separately for a batch of matrices. The column indices of
    the matrices are given by the last dimensions of the tensors, the row indices by the
    axis specified with the *axis* parameter (by default the trailing two dimensions hold
    the matrices). A non-default axis is equivalent to swapaxes(axis, -2) on every input,
    gemm, and swapaxes back, without the copies.

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of input matrices
    B : NDArray-or-Symbol
        Tensor of input matrices
    transpose_a : boolean, optional, default=0
        Multiply with transposed of first input (A).
    transpose_b : boolean, optional, default=0
        Multiply with transposed of second input (B).
    alpha : float, optional, default=1.0
        Scalar factor multiplied with A*B.
    axis : int, optional, default=-2
        Axis corresponding to the matrix rows.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def linalg_inverse(
    A: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Compute the inverse of a matrix.
    Input is a tensor *A* of dimension *n >= 2*.

    If *n=2*, *A* is a square matrix. We compute: *out* = *A*^-1. A singular matrix raises
    an error.

    If *n>2*, *inverse* is performed separately on the trailing two dimensions for all inputs
    (batch mode).

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of square matrix

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def linalg_makediag(
    A: Symbol | None = None,
    *,
    offset: int = 0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Constructs a square matrix with the input as diagonal.
    Input is a tensor *A* of dimension *n >= 1*: the diagonal entries of a square matrix, or a batch of them. The matrices are returned as an *n+1*-dimensional tensor.

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of diagonal entries
    offset : int, optional, default=0
        Offset of the diagonal versus the main diagonal. 0 corresponds to the main diagonal, a negative/positive value to diagonals below/above the main diagonal.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def linalg_maketrian(
    A: Symbol | None = None,
    *,
    offset: int = 0,
    lower: bool | int = True,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Constructs a square matrix with the input representing a specific triangular sub-matrix.
    This is the inverse of *linalg.extracttrian*. Input is a tensor *A* of dimension *n >= 1*: a packed triangle, or a batch of them. The square matrices (zeros outside the triangle) are returned as an *n+1*-dimensional tensor.

    The *offset* and *lower* parameters determine the triangle: *offset = 0* the lower or
    upper triangle with the main diagonal, depending on *lower*; *offset = k > 0* the upper
    triangle with respect to the k-th diagonal above the main diagonal; *offset = k < 0* the
    lower triangle with respect to the k-th diagonal below it. A lower triangle is packed
    row by row, an upper one column by column.

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of triangular matrices stored as vectors
    offset : int, optional, default=0
        Offset of the diagonal versus the main diagonal. 0 corresponds to the main diagonal, a negative/positive value to diagonals below/above the main diagonal.
    lower : boolean, optional, default=1
        Refer to the lower triangular matrix if lower=true, refer to the upper otherwise. Only relevant when offset=0

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def linalg_potrf(
    A: Symbol | None = None,
    *,
    lower: bool | int = True,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Performs Cholesky factorization of a symmetric positive-definite matrix.
    Input is a tensor *A* of dimension *n >= 2*.

    If *n=2*, the Cholesky factor *B* of the symmetric, positive definite matrix *A* is
    computed. *B* is triangular (entries of upper or lower triangle are all zero), has
    positive diagonal entries, and: *A* = *B* * *B*^T if *lower* = *true*, *A* = *B*^T *
    *B* if *lower* = *false*. Only that triangle of *A* is read.

    If *n>2*, *potrf* is performed separately on the trailing two dimensions for all inputs
    (batch mode). A matrix that is not positive-definite raises an error.

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of input matrices to be decomposed
    lower : boolean, optional, default=1
        True if the triangular matrix is lower triangular, false if it is upper triangular.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def linalg_potri(
    A: Symbol | None = None,
    *,
    lower: bool | int = True,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Performs matrix inversion from a Cholesky factorization.
    Input is a tensor *A* of dimension *n >= 2*.

    If *n=2*, *A* is a triangular matrix (entries of upper or lower triangle are all zero)
    with positive diagonal. We compute: *out* = *A*^-T * *A*^-1 if *lower* = *true*,
    *out* = *A*^-1 * *A*^-T if *lower* = *false*. In other words, if *A* is the Cholesky
    factor of a symmetric positive definite matrix *B* (obtained by *potrf*), then
    *out* = *B*^-1. Only the triangle of *A* selected by *lower* is read.

    If *n>2*, *potri* is performed separately on the trailing two dimensions for all inputs
    (batch mode).

    .. note:: The operator supports float32 and float64 data types only.

    .. note:: Use this operator only if you are certain you need the inverse of *B*, and
              cannot use the Cholesky factor *A* (*potrf*), together with backsubstitution
              (*trsm*). The latter is numerically much safer, and also cheaper.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of lower triangular matrices
    lower : boolean, optional, default=1
        True if the triangular matrix is lower triangular, false if it is upper triangular.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def linalg_slogdet(
    A: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Compute the sign and log of the determinant of a matrix.
    Input is a tensor *A* of dimension *n >= 2*. If *n=2*, *A* is a square matrix. We compute: *sign* = *sign(det(A))*, *logabsdet* = *log(abs(det(A)))*. The gradient is not defined on sign, so it is not propagated back.

    If *n>2*, the operator is performed separately on the trailing two dimensions for all
    inputs (batch mode); a single matrix gives shape (1,).

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of square matrix

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def linalg_sumlogdiag(
    A: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Computes the sum of the logarithms of the diagonal elements of a square matrix.
    Input is a tensor *A* of dimension *n >= 2*.

    If *n=2*, *A* must be square with positive diagonal entries. We sum the natural
    logarithms of the diagonal elements, the result has shape (1,).

    If *n>2*, *sumlogdiag* is performed separately on the trailing two dimensions for all
    inputs (batch mode).

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of square matrices

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def linalg_syrk(
    A: Symbol | None = None,
    *,
    transpose: bool | int = False,
    alpha: float = 1.0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Multiplication of matrix with its transpose.
    Input is a tensor *A* of dimension *n >= 2*.

    If *n=2*: *out* = *alpha* * *A* * *A*^T if *transpose=False*, or *alpha* * *A*^T * *A*
    if *transpose=True*. If *n>2*, *syrk* is performed separately on the trailing two
    dimensions for all inputs (batch mode).

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of input matrices
    transpose : boolean, optional, default=0
        Use transpose of input matrix.
    alpha : float, optional, default=1.0
        Scalar factor to be applied to the result.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def linalg_trmm(
    A: Symbol | None = None,
    B: Symbol | None = None,
    *,
    transpose: bool | int = False,
    rightside: bool | int = False,
    lower: bool | int = True,
    alpha: float = 1.0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Performs multiplication with a lower triangular matrix.
    Input are tensors *A*, *B*, each of dimension *n >= 2* and having the same shape
    on the leading *n-2* dimensions.

    If *n=2*, *A* must be triangular. The operator performs the BLAS3 function *trmm*:
    *out* = *alpha* * *op*(*A*) * *B* if *rightside=False*, or *out* = *alpha* * *B* *
    *op*(*A*) if *rightside=True*. Here, *alpha* is a scalar parameter, and *op()* is either
    the identity or the matrix transposition (depending on *transpose*). Only the triangle
    of *A* selected by *lower* is read.

    If *n>2*, *trmm* is performed separately on the trailing two dimensions for all inputs
    (batch mode).

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of lower triangular matrices
    B : NDArray-or-Symbol
        Tensor of matrices
    transpose : boolean, optional, default=0
        Use transposed of the triangular matrix
    rightside : boolean, optional, default=0
        Multiply triangular matrix from the right to non-triangular one.
    lower : boolean, optional, default=1
        True if the triangular matrix is lower triangular, false if it is upper triangular.
    alpha : float, optional, default=1.0
        Scalar factor to be applied to the result.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def linalg_trsm(
    A: Symbol | None = None,
    B: Symbol | None = None,
    *,
    transpose: bool | int = False,
    rightside: bool | int = False,
    lower: bool | int = True,
    alpha: float = 1.0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Solves matrix equation involving a lower triangular matrix.
    Input are tensors *A*, *B*, each of dimension *n >= 2* and having the same shape
    on the leading *n-2* dimensions.

    If *n=2*, *A* must be triangular. The operator performs the BLAS3 function *trsm*,
    solving for *out* in: *op*(*A*) * *out* = *alpha* * *B* if *rightside=False*, or
    *out* * *op*(*A*) = *alpha* * *B* if *rightside=True*. Here, *alpha* is a scalar
    parameter, and *op()* is either the identity or the matrix transposition (depending on
    *transpose*). Only the triangle of *A* selected by *lower* is read; a zero on its
    diagonal raises an error.

    If *n>2*, *trsm* is performed separately on the trailing two dimensions for all inputs
    (batch mode).

    .. note:: The operator supports float32 and float64 data types only.

    Parameters
    ----------
    A : NDArray-or-Symbol
        Tensor of lower triangular matrices
    B : NDArray-or-Symbol
        Tensor of matrices
    transpose : boolean, optional, default=0
        Use transposed of the triangular matrix
    rightside : boolean, optional, default=0
        Multiply triangular matrix from the right to non-triangular one.
    lower : boolean, optional, default=1
        True if the triangular matrix is lower triangular, false if it is upper triangular.
    alpha : float, optional, default=1.0
        Scalar factor to be applied to the result.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/linalg/_base.py.
    """

def log(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Natural logarithm, element-wise.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_unary.py.
    """

def log10(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Base-10 logarithm, element-wise.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/unary_math.py.
    """

def log1p(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """y = log(1 + x)

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_unary.py.
    """

def log2(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Base-2 logarithm, element-wise.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/unary_math.py.
    """

def log_softmax(
    data: Symbol | None = None,
    *,
    axis: int = -1,
    temperature: float | None = None,
    dtype: Literal['float16', 'float32', 'float64'] | str | type | np.dtype[Any] | None = None,
    use_length: bool | int | None = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes the log of softmax along an axis: x/T - log(sum(exp(x/T))).

    More accurate than log(softmax(x)) for very small probabilities.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input array.
    axis : int, optional, default=-1
        The axis along which to compute softmax.
    temperature : float or None, optional, default=None
        Temperature parameter in softmax (None means 1.0).
    dtype : {None, 'float16', 'float32', 'float64'}, optional, default=None
        DType of the output in case this can't be inferred. Defaults to the same as input's dtype if not defined (dtype=None).
    use_length : boolean or None, optional, default=0
        Whether to use the length input as a mask over the data input.

    Returns
    -------
    out : Symbol

    Defined at <frozen importlib._bootstrap>:241.
    """

def logical_not(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """1 where x == 0, else 0, in x's dtype.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/unary_math.py.
    """

def make_loss(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Make your own loss function in network construction: the output is data, and its gradient is 1 for every element whatever the head gradient. Use MakeLoss for a scaled or normalized gradient.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/make_loss.py.
    """

def max(
    data: Symbol | None = None,
    *,
    axis: _Shape | None = None,
    keepdims: bool | int = False,
    exclude: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes the max of array elements over the given axes (all by default).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input
    axis : Shape(tuple) or None, optional, default=None
        The axis or axes along which to reduce: an int, a tuple of ints, or None for every axis. Negative values count from the last axis.
    keepdims : boolean, optional, default=0
        Keep reduced axes as dims of size 1.
    exclude : boolean, optional, default=0
        Reduce over the axes NOT in `axis` instead.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/reduce.py.
    """

def max_axis(
    data: Symbol | None = None,
    *,
    axis: _Shape | None = None,
    keepdims: bool | int = False,
    exclude: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes the max of array elements over the given axes (all by default).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input
    axis : Shape(tuple) or None, optional, default=None
        The axis or axes along which to reduce: an int, a tuple of ints, or None for every axis. Negative values count from the last axis.
    keepdims : boolean, optional, default=0
        Keep reduced axes as dims of size 1.
    exclude : boolean, optional, default=0
        Reduce over the axes NOT in `axis` instead.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/reduce.py.
    """

def mean(
    data: Symbol | None = None,
    *,
    axis: _Shape | None = None,
    keepdims: bool | int = False,
    exclude: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes the mean of array elements over the given axes (all by default).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input
    axis : Shape(tuple) or None, optional, default=None
        The axis or axes along which to reduce: an int, a tuple of ints, or None for every axis. Negative values count from the last axis.
    keepdims : boolean, optional, default=0
        Keep reduced axes as dims of size 1.
    exclude : boolean, optional, default=0
        Reduce over the axes NOT in `axis` instead.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/reduce.py.
    """

def min(
    data: Symbol | None = None,
    *,
    axis: _Shape | None = None,
    keepdims: bool | int = False,
    exclude: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes the min of array elements over the given axes (all by default).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input
    axis : Shape(tuple) or None, optional, default=None
        The axis or axes along which to reduce: an int, a tuple of ints, or None for every axis. Negative values count from the last axis.
    keepdims : boolean, optional, default=0
        Keep reduced axes as dims of size 1.
    exclude : boolean, optional, default=0
        Reduce over the axes NOT in `axis` instead.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/reduce.py.
    """

def min_axis(
    data: Symbol | None = None,
    *,
    axis: _Shape | None = None,
    keepdims: bool | int = False,
    exclude: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes the min of array elements over the given axes (all by default).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input
    axis : Shape(tuple) or None, optional, default=None
        The axis or axes along which to reduce: an int, a tuple of ints, or None for every axis. Negative values count from the last axis.
    keepdims : boolean, optional, default=0
        Keep reduced axes as dims of size 1.
    exclude : boolean, optional, default=0
        Reduce over the axes NOT in `axis` instead.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/reduce.py.
    """

def moments(
    data: Symbol | None = None,
    *,
    axes: _Shape | None = None,
    keepdims: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Calculate the mean and variance of `data` over `axes`: returns (mean, var), with var = mean((data - mean)^2).

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input ndarray
    axes : Shape(tuple) or None, optional, default=None
        Array of ints. Axes along which to compute mean and variance.
    keepdims : boolean, optional, default=0
        produce moments with the same dimensionality as the input.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/moments.py.
    """

def mp_lamb_update_phase1(
    weight: Symbol | None = None,
    grad: Symbol | None = None,
    mean: Symbol | None = None,
    var: Symbol | None = None,
    weight32: Symbol | None = None,
    *,
    beta1: float = 0.9,
    beta2: float = 0.999,
    epsilon: float = 1e-06,
    t: int,
    bias_correction: bool | int = True,
    wd: float,
    rescale_grad: float = 1.0,
    clip_gradient: float = -1.0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Mixed Precision version of Phase I of lamb update: the Adam-like direction g, decayed.

        grad = clip(rescale_grad * grad, clip_gradient)
        mean = beta1 * mean + (1 - beta1) * grad
        var = beta2 * var + (1 - beta2) * grad^2
        if bias_correction: mean_hat = mean / (1 - beta1^t); var_hat = var / (1 - beta2^t)
        g = mean_hat / (sqrt(var_hat) + epsilon) + wd * weight

    `mean` and `var` are updated in place; returns g.

    wd decays the float32 master copy weight32; g is float32.

    Parameters
    ----------
    weight : NDArray-or-Symbol
        Weight
    grad : NDArray-or-Symbol
        Grad
    mean : NDArray-or-Symbol
        Mean
    var : NDArray-or-Symbol
        Var
    weight32 : NDArray-or-Symbol
        Weight32
    beta1 : float, optional, default=0.9
        The decay rate for the 1st moment estimates.
    beta2 : float, optional, default=0.999
        The decay rate for the 2nd moment estimates.
    epsilon : float, optional, default=1e-06
        A small constant for numerical stability.
    t : int, required
        Index update count.
    bias_correction : boolean, optional, default=1
        Whether to use bias correction.
    wd : float, required
        Weight decay augments the objective function with a regularization term that penalizes large weights. The penalty scales with the square of the magnitude of each weight.
    rescale_grad : float, optional, default=1.0
        Rescale gradient to grad = rescale_grad*grad.
    clip_gradient : float, optional, default=-1.0
        Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/_common.py.
    """

def mp_lamb_update_phase2(
    weight: Symbol | None = None,
    g: Symbol | None = None,
    r1: Symbol | None = None,
    r2: Symbol | None = None,
    weight32: Symbol | None = None,
    *,
    lr: float,
    lower_bound: float = -1.0,
    upper_bound: float = -1.0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Mixed Precision version of Phase II of lamb update: the layer-wise trust ratio step.

        r1 = min(max(r1, lower_bound), upper_bound)   (each bound when >= 0)
        lr = lr * r1 / r2 if r1 != 0 and r2 != 0 else lr
        weight = weight - lr * g

    r1 = norm(weight) and r2 = norm(g) have shape (1,). Returns the new weight (out=weight).

    The step is applied to the float32 master copy weight32 (updated in place); the output is weight32 in weight's dtype.

    Parameters
    ----------
    weight : NDArray-or-Symbol
        Weight
    g : NDArray-or-Symbol
        G
    r1 : NDArray-or-Symbol
        R1
    r2 : NDArray-or-Symbol
        R2
    weight32 : NDArray-or-Symbol
        Weight32
    lr : float, required
        Learning rate
    lower_bound : float, optional, default=-1.0
        Lower limit of norm of weight. If lower_bound <= 0, Lower limit is not set
    upper_bound : float, optional, default=-1.0
        Upper limit of norm of weight. If upper_bound <= 0, Upper limit is not set

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/_common.py.
    """

def mp_nag_mom_update(
    weight: Symbol | None = None,
    grad: Symbol | None = None,
    mom: Symbol | None = None,
    weight32: Symbol | None = None,
    *,
    lr: float,
    momentum: float = 0.0,
    wd: float = 0.0,
    rescale_grad: float = 1.0,
    clip_gradient: float = -1.0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Update function for multi-precision Nesterov Accelerated Gradient (NAG) optimizer.

    Update function for Nesterov Accelerated Gradient (NAG) optimizer.

        state = momentum * state + grad + wd * weight
        weight = weight - lr * (grad + momentum * state)

    with grad = clip(rescale_grad * grad, clip_gradient). `mom` holds -lr * state and is
    updated in place; returns the new weight (call with out=weight).

    Mixed precision: the update runs on the float32 master copy `weight32`, which is updated in place; the output is weight32 cast to weight's dtype.

    Parameters
    ----------
    weight : NDArray-or-Symbol
        Weight
    grad : NDArray-or-Symbol
        Grad
    mom : NDArray-or-Symbol
        Mom
    weight32 : NDArray-or-Symbol
        Weight32
    lr : float, required
        Learning rate
    momentum : float, optional, default=0.0
        The decay rate of momentum estimates at each epoch.
    wd : float, optional, default=0.0
        Weight decay augments the objective function with a regularization term that penalizes large weights. The penalty scales with the square of the magnitude of each weight.
    rescale_grad : float, optional, default=1.0
        Rescale gradient to grad = rescale_grad*grad.
    clip_gradient : float, optional, default=-1.0
        Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/_common.py.
    """

def mp_sgd_mom_update(
    weight: Symbol | None = None,
    grad: Symbol | None = None,
    mom: Symbol | None = None,
    weight32: Symbol | None = None,
    *,
    lr: float,
    momentum: float = 0.0,
    wd: float = 0.0,
    rescale_grad: float = 1.0,
    clip_gradient: float = -1.0,
    lazy_update: bool | int = True,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Updater function for multi-precision sgd optimizer.

    Momentum update function for Stochastic Gradient Descent (SGD) optimizer.

        mom = momentum * mom - lr * (clip(rescale_grad * grad, clip_gradient) + wd * weight)
        weight = weight + mom

    `mom` is updated in place; returns the new weight (call with out=weight).

    Mixed precision: the update runs on the float32 master copy `weight32`, which is updated in place; the output is weight32 cast to weight's dtype.

    Parameters
    ----------
    weight : NDArray-or-Symbol
        Weight
    grad : NDArray-or-Symbol
        Grad
    mom : NDArray-or-Symbol
        Mom
    weight32 : NDArray-or-Symbol
        Weight32
    lr : float, required
        Learning rate
    momentum : float, optional, default=0.0
        The decay rate of momentum estimates at each epoch.
    wd : float, optional, default=0.0
        Weight decay augments the objective function with a regularization term that penalizes large weights. The penalty scales with the square of the magnitude of each weight.
    rescale_grad : float, optional, default=1.0
        Rescale gradient to grad = rescale_grad*grad.
    clip_gradient : float, optional, default=-1.0
        Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).
    lazy_update : boolean, optional, default=1
        If true, lazy updates are applied if gradient's stype is row_sparse (nnvmpy has dense arrays only, so this has no effect).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/_common.py.
    """

def mp_sgd_update(
    weight: Symbol | None = None,
    grad: Symbol | None = None,
    weight32: Symbol | None = None,
    *,
    lr: float,
    wd: float = 0.0,
    rescale_grad: float = 1.0,
    clip_gradient: float = -1.0,
    lazy_update: bool | int = True,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Updater function for multi-precision sgd optimizer.

    Update function for Stochastic Gradient Descent (SGD) optimizer.

        weight = weight - lr * (clip(rescale_grad * grad, clip_gradient) + wd * weight)

    Returns the new weight; call with out=weight to update in place.

    Mixed precision: the update runs on the float32 master copy `weight32`, which is updated in place; the output is weight32 cast to weight's dtype.

    Parameters
    ----------
    weight : NDArray-or-Symbol
        Weight
    grad : NDArray-or-Symbol
        Grad
    weight32 : NDArray-or-Symbol
        Weight32
    lr : float, required
        Learning rate
    wd : float, optional, default=0.0
        Weight decay augments the objective function with a regularization term that penalizes large weights. The penalty scales with the square of the magnitude of each weight.
    rescale_grad : float, optional, default=1.0
        Rescale gradient to grad = rescale_grad*grad.
    clip_gradient : float, optional, default=-1.0
        Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).
    lazy_update : boolean, optional, default=1
        If true, lazy updates are applied if gradient's stype is row_sparse (nnvmpy has dense arrays only, so this has no effect).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/_common.py.
    """

def multi_all_finite(
    *data: Symbol,
    num_arrays: int | None = None,
    init_output: bool | int = True,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Check if all the float numbers in the arrays are finite (used for AMP): the output, a float32 array of shape (1,), is 1 if they all are and 0 otherwise. With init_output=False the output is only ever cleared to 0, so a flag can be carried across several calls with out=.

    Parameters
    ----------
    num_arrays : int (non-negative), optional, default=1
        Number of arrays.
    init_output : boolean, optional, default=1
        Initialize output to 1.
    data : NDArray-or-Symbol[]
        Arrays

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/gradient_stats.py.
    """

def multi_lars(
    lrs: Symbol | None = None,
    weights_sum_sq: Symbol | None = None,
    grads_sum_sq: Symbol | None = None,
    wds: Symbol | None = None,
    *,
    eta: float,
    eps: float,
    rescale_grad: float = 1.0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Compute the LARS coefficients of multiple weights and grads from their sums of squares (multi_sum_sq):

        lr_i = lrs_i * eta * ||w_i|| / (||g_i|| * rescale_grad + wds_i * ||w_i|| + eps)

    where both norms are positive, else lrs_i.

    Parameters
    ----------
    lrs : NDArray-or-Symbol
        lrs
    weights_sum_sq : NDArray-or-Symbol
        weights_sum_sq
    grads_sum_sq : NDArray-or-Symbol
        grads_sum_sq
    wds : NDArray-or-Symbol
        wds
    eta : float, required
        LARS eta
    eps : float, required
        LARS eps
    rescale_grad : float, optional, default=1.0
        Gradient rescaling factor

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/gradient_stats.py.
    """

def multi_mp_sgd_mom_update(
    *data: Symbol,
    lrs: _FloatTuple,
    wds: _FloatTuple,
    momentum: float = 0.0,
    rescale_grad: float = 1.0,
    clip_gradient: float = -1.0,
    num_weights: int = 1,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Update function for multiple mixed precision SGD with momentum in one op. For each weight i, with g_i = clip(rescale_grad * grad_i, clip_gradient) and lr_i, wd_i from lrs, wds:

        mom_i = momentum * mom_i - lr_i * (g_i + wd_i * weight_i); weight_i += mom_i

    Inputs are groups (weight, grad, mom, weight32) per weight. The update runs on the float32 master copies weight32_i (updated in place); output i is weight32_i in weight_i's dtype.

    Parameters
    ----------
    data : NDArray-or-Symbol[]
        Weights, gradients, momentum states, float32 master weights
    lrs : tuple of <float>, required
        Learning rates.
    wds : tuple of <float>, required
        Weight decay augments the objective function with a regularization term that penalizes large weights. The penalty scales with the square of the magnitude of each weight.
    momentum : float, optional, default=0.0
        The decay rate of momentum estimates at each epoch.
    rescale_grad : float, optional, default=1.0
        Rescale gradient to grad = rescale_grad*grad.
    clip_gradient : float, optional, default=-1.0
        Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).
    num_weights : int (non-negative), optional, default=1
        Number of updated weights.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/multi_sgd.py.
    """

def multi_mp_sgd_update(
    *data: Symbol,
    lrs: _FloatTuple,
    wds: _FloatTuple,
    rescale_grad: float = 1.0,
    clip_gradient: float = -1.0,
    num_weights: int = 1,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Update function for multiple mixed precision SGD in one op. For each weight i, with g_i = clip(rescale_grad * grad_i, clip_gradient) and lr_i, wd_i from lrs, wds:

        weight_i = weight_i - lr_i * (g_i + wd_i * weight_i)

    Inputs are groups (weight, grad, weight32) per weight. The update runs on the float32 master copies weight32_i (updated in place); output i is weight32_i in weight_i's dtype.

    Parameters
    ----------
    data : NDArray-or-Symbol[]
        Weights, gradients, float32 master weights
    lrs : tuple of <float>, required
        Learning rates.
    wds : tuple of <float>, required
        Weight decay augments the objective function with a regularization term that penalizes large weights. The penalty scales with the square of the magnitude of each weight.
    rescale_grad : float, optional, default=1.0
        Rescale gradient to grad = rescale_grad*grad.
    clip_gradient : float, optional, default=-1.0
        Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).
    num_weights : int (non-negative), optional, default=1
        Number of updated weights.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/multi_sgd.py.
    """

def multi_sgd_mom_update(
    *data: Symbol,
    lrs: _FloatTuple,
    wds: _FloatTuple,
    momentum: float = 0.0,
    rescale_grad: float = 1.0,
    clip_gradient: float = -1.0,
    num_weights: int = 1,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Update function for multiple SGD with momentum in one op. For each weight i, with g_i = clip(rescale_grad * grad_i, clip_gradient) and lr_i, wd_i from lrs, wds:

        mom_i = momentum * mom_i - lr_i * (g_i + wd_i * weight_i); weight_i += mom_i

    Inputs are groups (weight, grad, mom) per weight.

    Parameters
    ----------
    data : NDArray-or-Symbol[]
        Weights, gradients, momentum states
    lrs : tuple of <float>, required
        Learning rates.
    wds : tuple of <float>, required
        Weight decay augments the objective function with a regularization term that penalizes large weights. The penalty scales with the square of the magnitude of each weight.
    momentum : float, optional, default=0.0
        The decay rate of momentum estimates at each epoch.
    rescale_grad : float, optional, default=1.0
        Rescale gradient to grad = rescale_grad*grad.
    clip_gradient : float, optional, default=-1.0
        Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).
    num_weights : int (non-negative), optional, default=1
        Number of updated weights.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/multi_sgd.py.
    """

def multi_sgd_update(
    *data: Symbol,
    lrs: _FloatTuple,
    wds: _FloatTuple,
    rescale_grad: float = 1.0,
    clip_gradient: float = -1.0,
    num_weights: int = 1,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Update function for multiple SGD in one op. For each weight i, with g_i = clip(rescale_grad * grad_i, clip_gradient) and lr_i, wd_i from lrs, wds:

        weight_i = weight_i - lr_i * (g_i + wd_i * weight_i)

    Inputs are groups (weight, grad) per weight.

    Parameters
    ----------
    data : NDArray-or-Symbol[]
        Weights, gradients
    lrs : tuple of <float>, required
        Learning rates.
    wds : tuple of <float>, required
        Weight decay augments the objective function with a regularization term that penalizes large weights. The penalty scales with the square of the magnitude of each weight.
    rescale_grad : float, optional, default=1.0
        Rescale gradient to grad = rescale_grad*grad.
    clip_gradient : float, optional, default=-1.0
        Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).
    num_weights : int (non-negative), optional, default=1
        Number of updated weights.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/multi_sgd.py.
    """

def multi_sum_sq(
    *data: Symbol,
    num_arrays: int | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Compute the sums of squares of multiple arrays: output i is sum(array_i ** 2), a float32 array of shape (num_arrays,) (for LARS/LAMB norms).

    Parameters
    ----------
    num_arrays : int (non-negative), required
        number of input arrays.
    data : NDArray-or-Symbol[]
        Arrays

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/gradient_stats.py.
    """

def nag_mom_update(
    weight: Symbol | None = None,
    grad: Symbol | None = None,
    mom: Symbol | None = None,
    *,
    lr: float,
    momentum: float = 0.0,
    wd: float = 0.0,
    rescale_grad: float = 1.0,
    clip_gradient: float = -1.0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Update function for Nesterov Accelerated Gradient (NAG) optimizer.

        state = momentum * state + grad + wd * weight
        weight = weight - lr * (grad + momentum * state)

    with grad = clip(rescale_grad * grad, clip_gradient). `mom` holds -lr * state and is
    updated in place; returns the new weight (call with out=weight).

    Parameters
    ----------
    weight : NDArray-or-Symbol
        Weight
    grad : NDArray-or-Symbol
        Grad
    mom : NDArray-or-Symbol
        Mom
    lr : float, required
        Learning rate
    momentum : float, optional, default=0.0
        The decay rate of momentum estimates at each epoch.
    wd : float, optional, default=0.0
        Weight decay augments the objective function with a regularization term that penalizes large weights. The penalty scales with the square of the magnitude of each weight.
    rescale_grad : float, optional, default=1.0
        Rescale gradient to grad = rescale_grad*grad.
    clip_gradient : float, optional, default=-1.0
        Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/_common.py.
    """

def nanprod(
    data: Symbol | None = None,
    *,
    axis: _Shape | None = None,
    keepdims: bool | int = False,
    exclude: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes the product, treating NaN as 1, of array elements over the given axes (all by default).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input
    axis : Shape(tuple) or None, optional, default=None
        The axis or axes along which to reduce: an int, a tuple of ints, or None for every axis. Negative values count from the last axis.
    keepdims : boolean, optional, default=0
        Keep reduced axes as dims of size 1.
    exclude : boolean, optional, default=0
        Reduce over the axes NOT in `axis` instead.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/reduce.py.
    """

def nansum(
    data: Symbol | None = None,
    *,
    axis: _Shape | None = None,
    keepdims: bool | int = False,
    exclude: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes the sum, treating NaN as 0, of array elements over the given axes (all by default).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input
    axis : Shape(tuple) or None, optional, default=None
        The axis or axes along which to reduce: an int, a tuple of ints, or None for every axis. Negative values count from the last axis.
    keepdims : boolean, optional, default=0
        Keep reduced axes as dims of size 1.
    exclude : boolean, optional, default=0
        Reduce over the axes NOT in `axis` instead.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/reduce.py.
    """

def negative(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """y = -x

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_unary.py.
    """

def norm(
    data: Symbol | None = None,
    *,
    ord: int = 2,
    axis: _Shape | None = None,
    out_dtype: Literal['float16', 'float32', 'float64', 'int32', 'int64', 'int8'] | str | type | np.dtype[Any] | None = None,
    keepdims: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes the norm of an array: the 2-norm sqrt(sum x^2) (ord=2) or the 1-norm sum |x| (ord=1), over the given axes (all by default).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input
    ord : int (non-negative), optional, default=2
        Order of the norm: 1 or 2.
    axis : Shape(tuple) or None, optional, default=None
        The axis or axes along which to compute the norm; None for every axis.
    out_dtype : {None, 'float16', 'float32', 'float64', 'int32', 'int64', 'int8'}, optional, default=None
        The data type of the output (default: the input's).
    keepdims : boolean, optional, default=0
        Keep reduced axes as dims of size 1.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/reduce.py.
    """

def normal(
    *,
    loc: float = 0.0,
    scale: float = 1.0,
    shape: _Shape = (),
    ctx: str = '',
    dtype: Literal['None', 'float16', 'float32', 'float64'] | str | type | np.dtype[Any] = 'None',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Draws random samples from a normal (Gaussian) distribution with mean loc and standard deviation scale.

    Parameters
    ----------
    loc : float, optional, default=0.0
        Mean of the distribution.
    scale : float, optional, default=1.0
        Standard deviation of the distribution.
    shape : Shape(tuple), optional, default=()
        Shape of the output.
    ctx : string, optional, default=''
        Context of output, in format [cpu|gpu|cpu_pinned](n). Only used for imperative calls.
    dtype : {'None', 'float16', 'float32', 'float64'}, optional, default='None'
        DType of the output in case this can't be inferred. Defaults to float32 if not defined (dtype=None).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/sample_op.py.
    """

def one_hot(
    indices: Symbol | None = None,
    *,
    depth: int,
    on_value: float = 1.0,
    off_value: float = 0.0,
    dtype: Literal['float16', 'float32', 'float64', 'int32', 'int64', 'int8', 'uint8'] | str | type | np.dtype[Any] = 'float32',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Returns a one-hot array.

    The locations represented by `indices` take value `on_value`, while all other locations take value `off_value`. The output has shape indices.shape + (depth,); an index outside [0, depth) gives a row of off_value.

    Examples::

        one_hot([1, 0, 2, 0], 3) = [[0, 1, 0], [1, 0, 0], [0, 0, 1], [1, 0, 0]]
        one_hot([1, 0, 2, 0], 3, on_value=8, off_value=1, dtype='int32')
            = [[1, 8, 1], [8, 1, 1], [1, 1, 8], [8, 1, 1]]

    Parameters
    ----------
    indices : NDArray-or-Symbol
        array of locations where to set on_value
    depth : int (non-negative), required
        Depth of the one hot dimension.
    on_value : float, optional, default=1.0
        The value assigned to the locations represented by indices.
    off_value : float, optional, default=0.0
        The value assigned to the locations not represented by indices.
    dtype : {'float16', 'float32', 'float64', 'int32', 'int64', 'int8', 'uint8'}, optional, default='float32'
        DType of the output

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/one_hot.py.
    """

def ones_like(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """An array of ones with the shape and dtype of the input.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input (only its shape is used).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/init.py.
    """

def pad(
    data: Symbol | None = None,
    *,
    mode: Literal['constant', 'edge', 'reflect'] | str,
    pad_width: _Shape,
    constant_value: float = 0.0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Pads an input array with a constant or edge values of the array.

    `pad_width` is a tuple of integer padding widths for each axis of the format (before_1, after_1, ... , before_N, after_N), of length 2*N for an N-d input.

    x = [[1, 2], [3, 4]]
    pad(x, mode='constant', pad_width=(0, 0, 1, 1)) = [[0, 1, 2, 0], [0, 3, 4, 0]]
    pad(x, mode='edge', pad_width=(0, 0, 1, 1)) = [[1, 1, 2, 2], [3, 3, 4, 4]]
    pad(x, mode='reflect', pad_width=(0, 0, 1, 1)) = [[2, 1, 2, 1], [4, 3, 4, 3]]

    MXNet 1.9.1 pads only the last two or three axes of 4-d and 5-d arrays; nnvmpy pads any axis of any rank.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data array
    mode : {'constant', 'edge', 'reflect'}, required
        Padding type to use. "constant" pads with `constant_value` "edge" pads using the edge values of the input array "reflect" pads by reflecting values with respect to the edges.
    pad_width : Shape(tuple), required
        Widths of the padding regions applied to the edges of each axis. It is a tuple of integer padding widths for each axis of the format ``(before_1, after_1, ... , before_N, after_N)``. It should be of length ``2*N`` where ``N`` is the number of dimensions of the array.This is equivalent to pad_width in numpy.pad, but flattened.
    constant_value : float, optional, default=0.0
        The value used for padding when `mode` is 'constant'.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/pad.py.
    """

def pick(
    data: Symbol | None = None,
    index: Symbol | None = None,
    *,
    axis: int | None = -1,
    keepdims: bool | int = False,
    mode: Literal['clip', 'wrap'] | str = 'clip',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Picks elements from an input array according to the input indices along the given axis.

    Given an input array of shape (d0, d1) and indices of shape (i0,), the result will be an output array of shape (i0,) with output[i] = input[i, indices[i]]. By default, an index too large is replaced by the last index of the axis (the 'clip' mode); 'wrap' wraps indices around the axis. The index array has the output's shape.

    Example::

        x = [[1., 2.], [3., 4.], [5., 6.]]
        pick(x, y=[0, 1], axis=0) = [1., 4.]
        pick(x, y=[0, 1, 0], axis=1) = [1., 4., 5.]
        pick(x, y=[2, -1, -2], axis=1, mode='wrap') = [1., 4., 5.]
        pick(x, y=[[1.], [0.], [2.]], axis=1, keepdims=True) = [[2.], [3.], [6.]]

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input array
    index : NDArray-or-Symbol
        The index array
    axis : int or None, optional, default=-1
        int or None. The axis to picking the elements. Negative values means indexing from right to left. If is `None`, the elements in the index w.r.t the flattened input will be picked.
    keepdims : boolean, optional, default=0
        If true, the axis where we pick the elements is left in the result as dimension with size one.
    mode : {'clip', 'wrap'}, optional, default='clip'
        Specify how out-of-bound indices behave. Default is "clip". "clip" means clip to the range. So, if all indices mentioned are too large, they are replaced by the index that addresses the last element along an axis. "wrap" means to wrap around.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/pick.py.
    """

def preloaded_multi_mp_sgd_mom_update(
    *data: Symbol,
    momentum: float = 0.0,
    rescale_grad: float = 1.0,
    clip_gradient: float = -1.0,
    num_weights: int = 1,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Update function for multiple mixed precision SGD with momentum in one op. For each weight i, with g_i = clip(rescale_grad * grad_i, clip_gradient) and lr_i, wd_i from the float32 arrays lrs, wds (last inputs):

        mom_i = momentum * mom_i - lr_i * (g_i + wd_i * weight_i); weight_i += mom_i

    Inputs are groups (weight, grad, mom, weight32) per weight. The update runs on the float32 master copies weight32_i (updated in place); output i is weight32_i in weight_i's dtype.

    Parameters
    ----------
    data : NDArray-or-Symbol[]
        Weights, gradients, momentum states, float32 master weights, then lrs and wds
    momentum : float, optional, default=0.0
        The decay rate of momentum estimates at each epoch.
    rescale_grad : float, optional, default=1.0
        Rescale gradient to grad = rescale_grad*grad.
    clip_gradient : float, optional, default=-1.0
        Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).
    num_weights : int (non-negative), optional, default=1
        Number of updated weights.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/multi_sgd.py.
    """

def preloaded_multi_mp_sgd_update(
    *data: Symbol,
    rescale_grad: float = 1.0,
    clip_gradient: float = -1.0,
    num_weights: int = 1,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Update function for multiple mixed precision SGD in one op. For each weight i, with g_i = clip(rescale_grad * grad_i, clip_gradient) and lr_i, wd_i from the float32 arrays lrs, wds (last inputs):

        weight_i = weight_i - lr_i * (g_i + wd_i * weight_i)

    Inputs are groups (weight, grad, weight32) per weight. The update runs on the float32 master copies weight32_i (updated in place); output i is weight32_i in weight_i's dtype.

    Parameters
    ----------
    data : NDArray-or-Symbol[]
        Weights, gradients, float32 master weights, then lrs and wds
    rescale_grad : float, optional, default=1.0
        Rescale gradient to grad = rescale_grad*grad.
    clip_gradient : float, optional, default=-1.0
        Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).
    num_weights : int (non-negative), optional, default=1
        Number of updated weights.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/multi_sgd.py.
    """

def preloaded_multi_sgd_mom_update(
    *data: Symbol,
    momentum: float = 0.0,
    rescale_grad: float = 1.0,
    clip_gradient: float = -1.0,
    num_weights: int = 1,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Update function for multiple SGD with momentum in one op. For each weight i, with g_i = clip(rescale_grad * grad_i, clip_gradient) and lr_i, wd_i from the float32 arrays lrs, wds (last inputs):

        mom_i = momentum * mom_i - lr_i * (g_i + wd_i * weight_i); weight_i += mom_i

    Inputs are groups (weight, grad, mom) per weight.

    Parameters
    ----------
    data : NDArray-or-Symbol[]
        Weights, gradients, momentum states, then lrs and wds
    momentum : float, optional, default=0.0
        The decay rate of momentum estimates at each epoch.
    rescale_grad : float, optional, default=1.0
        Rescale gradient to grad = rescale_grad*grad.
    clip_gradient : float, optional, default=-1.0
        Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).
    num_weights : int (non-negative), optional, default=1
        Number of updated weights.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/multi_sgd.py.
    """

def preloaded_multi_sgd_update(
    *data: Symbol,
    rescale_grad: float = 1.0,
    clip_gradient: float = -1.0,
    num_weights: int = 1,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Update function for multiple SGD in one op. For each weight i, with g_i = clip(rescale_grad * grad_i, clip_gradient) and lr_i, wd_i from the float32 arrays lrs, wds (last inputs):

        weight_i = weight_i - lr_i * (g_i + wd_i * weight_i)

    Inputs are groups (weight, grad) per weight.

    Parameters
    ----------
    data : NDArray-or-Symbol[]
        Weights, gradients, then lrs and wds
    rescale_grad : float, optional, default=1.0
        Rescale gradient to grad = rescale_grad*grad.
    clip_gradient : float, optional, default=-1.0
        Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).
    num_weights : int (non-negative), optional, default=1
        Number of updated weights.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/multi_sgd.py.
    """

def prod(
    data: Symbol | None = None,
    *,
    axis: _Shape | None = None,
    keepdims: bool | int = False,
    exclude: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes the product of array elements over the given axes (all by default).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input
    axis : Shape(tuple) or None, optional, default=None
        The axis or axes along which to reduce: an int, a tuple of ints, or None for every axis. Negative values count from the last axis.
    keepdims : boolean, optional, default=0
        Keep reduced axes as dims of size 1.
    exclude : boolean, optional, default=0
        Reduce over the axes NOT in `axis` instead.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/reduce.py.
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

    Defined in nnvmpy/ops/quadratic.py.
    """

def radians(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Degrees to radians: y = x * pi / 180.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/unary_math.py.
    """

def random_exponential(
    *,
    lam: float = 1.0,
    shape: _Shape = (),
    ctx: str = '',
    dtype: Literal['None', 'float16', 'float32', 'float64'] | str | type | np.dtype[Any] = 'None',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Draws random samples from an exponential distribution with rate lam.

    Parameters
    ----------
    lam : float, optional, default=1.0
        Lambda parameter (rate) of the exponential distribution.
    shape : Shape(tuple), optional, default=()
        Shape of the output.
    ctx : string, optional, default=''
        Context of output, in format [cpu|gpu|cpu_pinned](n). Only used for imperative calls.
    dtype : {'None', 'float16', 'float32', 'float64'}, optional, default='None'
        DType of the output in case this can't be inferred. Defaults to float32 if not defined (dtype=None).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/sample_op.py.
    """

def random_gamma(
    *,
    alpha: float = 1.0,
    beta: float = 1.0,
    shape: _Shape = (),
    ctx: str = '',
    dtype: Literal['None', 'float16', 'float32', 'float64'] | str | type | np.dtype[Any] = 'None',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Draws random samples from a gamma distribution with shape alpha and scale beta.

    Parameters
    ----------
    alpha : float, optional, default=1.0
        Alpha parameter (shape) of the gamma distribution.
    beta : float, optional, default=1.0
        Beta parameter (scale) of the gamma distribution.
    shape : Shape(tuple), optional, default=()
        Shape of the output.
    ctx : string, optional, default=''
        Context of output, in format [cpu|gpu|cpu_pinned](n). Only used for imperative calls.
    dtype : {'None', 'float16', 'float32', 'float64'}, optional, default='None'
        DType of the output in case this can't be inferred. Defaults to float32 if not defined (dtype=None).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/sample_op.py.
    """

def random_generalized_negative_binomial(
    *,
    mu: float = 1.0,
    alpha: float = 1.0,
    shape: _Shape = (),
    ctx: str = '',
    dtype: Literal['None', 'float16', 'float32', 'float64'] | str | type | np.dtype[Any] = 'None',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Draws random samples from a generalized negative binomial distribution with mean mu and dispersion alpha (variance mu + alpha mu^2). Samples are returned as floats.

    Parameters
    ----------
    mu : float, optional, default=1.0
        Mean of the negative binomial distribution.
    alpha : float, optional, default=1.0
        Alpha (dispersion) parameter of the negative binomial distribution.
    shape : Shape(tuple), optional, default=()
        Shape of the output.
    ctx : string, optional, default=''
        Context of output, in format [cpu|gpu|cpu_pinned](n). Only used for imperative calls.
    dtype : {'None', 'float16', 'float32', 'float64'}, optional, default='None'
        DType of the output in case this can't be inferred. Defaults to float32 if not defined (dtype=None).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/sample_op.py.
    """

def random_negative_binomial(
    *,
    k: int = 1,
    p: float = 1.0,
    shape: _Shape = (),
    ctx: str = '',
    dtype: Literal['None', 'float16', 'float32', 'float64'] | str | type | np.dtype[Any] = 'None',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Draws random samples from a negative binomial distribution: the number of failures before the k-th success, with success probability p (a Poisson-gamma mixture). Samples are returned as floats.

    Parameters
    ----------
    k : int, optional, default=1
        Limit of unsuccessful experiments.
    p : float, optional, default=1.0
        Failure probability in each experiment.
    shape : Shape(tuple), optional, default=()
        Shape of the output.
    ctx : string, optional, default=''
        Context of output, in format [cpu|gpu|cpu_pinned](n). Only used for imperative calls.
    dtype : {'None', 'float16', 'float32', 'float64'}, optional, default='None'
        DType of the output in case this can't be inferred. Defaults to float32 if not defined (dtype=None).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/sample_op.py.
    """

def random_normal(
    *,
    loc: float = 0.0,
    scale: float = 1.0,
    shape: _Shape = (),
    ctx: str = '',
    dtype: Literal['None', 'float16', 'float32', 'float64'] | str | type | np.dtype[Any] = 'None',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Draws random samples from a normal (Gaussian) distribution with mean loc and standard deviation scale.

    Parameters
    ----------
    loc : float, optional, default=0.0
        Mean of the distribution.
    scale : float, optional, default=1.0
        Standard deviation of the distribution.
    shape : Shape(tuple), optional, default=()
        Shape of the output.
    ctx : string, optional, default=''
        Context of output, in format [cpu|gpu|cpu_pinned](n). Only used for imperative calls.
    dtype : {'None', 'float16', 'float32', 'float64'}, optional, default='None'
        DType of the output in case this can't be inferred. Defaults to float32 if not defined (dtype=None).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/sample_op.py.
    """

def random_pdf_dirichlet(
    sample: Symbol | None = None,
    alpha: Symbol | None = None,
    *,
    is_log: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes the value of the PDF of *sample* of Dirichlet distributions with parameter alpha.

    The parameter arrays must have the same shape, which must match the leftmost subshape of *sample*. That is, *sample* can have the same shape as the parameters, in which case the output contains one density per distribution, or *sample* can be a tensor of tensors with that shape, in which case the output is a tensor of densities such that the densities at index *i* in the output are given by the samples at index *i* in *sample* parameterized by the values of the parameters at index *i*. For dirichlet, *alpha* has shape S x [k], *sample* S x [n...] x [k] and the output S x [n...]: one density per k-vector.

    Examples::

        sample = [[-2, -1, 0, 1, 2]]
        random_pdf_normal(sample=sample, mu=[0], sigma=[1]) =
            [[0.05399097, 0.24197073, 0.3989423, 0.24197073, 0.05399097]]

    Parameters
    ----------
    sample : NDArray-or-Symbol
        Samples from the distributions.
    alpha : NDArray-or-Symbol
        Concentration parameters of the distributions.
    is_log : boolean, optional, default=0
        If set, compute the density of the log-probability instead of the probability.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/pdf.py.
    """

def random_pdf_exponential(
    sample: Symbol | None = None,
    lam: Symbol | None = None,
    *,
    is_log: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes the value of the PDF of *sample* of exponential distributions with parameters lam (rate).

    The parameter arrays must have the same shape, which must match the leftmost subshape of *sample*. That is, *sample* can have the same shape as the parameters, in which case the output contains one density per distribution, or *sample* can be a tensor of tensors with that shape, in which case the output is a tensor of densities such that the densities at index *i* in the output are given by the samples at index *i* in *sample* parameterized by the values of the parameters at index *i*.

    Examples::

        sample = [[-2, -1, 0, 1, 2]]
        random_pdf_normal(sample=sample, mu=[0], sigma=[1]) =
            [[0.05399097, 0.24197073, 0.3989423, 0.24197073, 0.05399097]]

    Parameters
    ----------
    sample : NDArray-or-Symbol
        Samples from the distributions.
    lam : NDArray-or-Symbol
        Lambda (rate) parameters of the distributions.
    is_log : boolean, optional, default=0
        If set, compute the density of the log-probability instead of the probability.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/pdf.py.
    """

def random_pdf_gamma(
    sample: Symbol | None = None,
    alpha: Symbol | None = None,
    beta: Symbol | None = None,
    *,
    is_log: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes the value of the PDF of *sample* of gamma distributions with parameters alpha (shape) and beta (rate).

    The parameter arrays must have the same shape, which must match the leftmost subshape of *sample*. That is, *sample* can have the same shape as the parameters, in which case the output contains one density per distribution, or *sample* can be a tensor of tensors with that shape, in which case the output is a tensor of densities such that the densities at index *i* in the output are given by the samples at index *i* in *sample* parameterized by the values of the parameters at index *i*.

    Examples::

        sample = [[-2, -1, 0, 1, 2]]
        random_pdf_normal(sample=sample, mu=[0], sigma=[1]) =
            [[0.05399097, 0.24197073, 0.3989423, 0.24197073, 0.05399097]]

    Parameters
    ----------
    sample : NDArray-or-Symbol
        Samples from the distributions.
    alpha : NDArray-or-Symbol
        Alpha (shape) parameters of the distributions.
    beta : NDArray-or-Symbol
        Beta (rate) parameters of the distributions.
    is_log : boolean, optional, default=0
        If set, compute the density of the log-probability instead of the probability.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/pdf.py.
    """

def random_pdf_generalized_negative_binomial(
    sample: Symbol | None = None,
    mu: Symbol | None = None,
    alpha: Symbol | None = None,
    *,
    is_log: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes the value of the PDF of *sample* of generalized negative binomial distributions with parameters mu (mean) and alpha (dispersion).

    The parameter arrays must have the same shape, which must match the leftmost subshape of *sample*. That is, *sample* can have the same shape as the parameters, in which case the output contains one density per distribution, or *sample* can be a tensor of tensors with that shape, in which case the output is a tensor of densities such that the densities at index *i* in the output are given by the samples at index *i* in *sample* parameterized by the values of the parameters at index *i*.

    Examples::

        sample = [[-2, -1, 0, 1, 2]]
        random_pdf_normal(sample=sample, mu=[0], sigma=[1]) =
            [[0.05399097, 0.24197073, 0.3989423, 0.24197073, 0.05399097]]

    Parameters
    ----------
    sample : NDArray-or-Symbol
        Samples from the distributions.
    mu : NDArray-or-Symbol
        Means of the distributions.
    alpha : NDArray-or-Symbol
        Alpha (dispersion) parameters of the distributions.
    is_log : boolean, optional, default=0
        If set, compute the density of the log-probability instead of the probability.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/pdf.py.
    """

def random_pdf_negative_binomial(
    sample: Symbol | None = None,
    k: Symbol | None = None,
    p: Symbol | None = None,
    *,
    is_log: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes the value of the PDF of *sample* of negative binomial distributions with parameters k (failure limit) and p (failure probability).

    The parameter arrays must have the same shape, which must match the leftmost subshape of *sample*. That is, *sample* can have the same shape as the parameters, in which case the output contains one density per distribution, or *sample* can be a tensor of tensors with that shape, in which case the output is a tensor of densities such that the densities at index *i* in the output are given by the samples at index *i* in *sample* parameterized by the values of the parameters at index *i*.

    Examples::

        sample = [[-2, -1, 0, 1, 2]]
        random_pdf_normal(sample=sample, mu=[0], sigma=[1]) =
            [[0.05399097, 0.24197073, 0.3989423, 0.24197073, 0.05399097]]

    Parameters
    ----------
    sample : NDArray-or-Symbol
        Samples from the distributions.
    k : NDArray-or-Symbol
        Limits of unsuccessful experiments.
    p : NDArray-or-Symbol
        Failure probabilities in each experiment.
    is_log : boolean, optional, default=0
        If set, compute the density of the log-probability instead of the probability.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/pdf.py.
    """

def random_pdf_normal(
    sample: Symbol | None = None,
    mu: Symbol | None = None,
    sigma: Symbol | None = None,
    *,
    is_log: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes the value of the PDF of *sample* of normal distributions with parameters mu (mean) and sigma (standard deviation).

    The parameter arrays must have the same shape, which must match the leftmost subshape of *sample*. That is, *sample* can have the same shape as the parameters, in which case the output contains one density per distribution, or *sample* can be a tensor of tensors with that shape, in which case the output is a tensor of densities such that the densities at index *i* in the output are given by the samples at index *i* in *sample* parameterized by the values of the parameters at index *i*.

    Examples::

        sample = [[-2, -1, 0, 1, 2]]
        random_pdf_normal(sample=sample, mu=[0], sigma=[1]) =
            [[0.05399097, 0.24197073, 0.3989423, 0.24197073, 0.05399097]]

    Parameters
    ----------
    sample : NDArray-or-Symbol
        Samples from the distributions.
    mu : NDArray-or-Symbol
        Means of the distributions.
    sigma : NDArray-or-Symbol
        Standard deviations of the distributions.
    is_log : boolean, optional, default=0
        If set, compute the density of the log-probability instead of the probability.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/pdf.py.
    """

def random_pdf_poisson(
    sample: Symbol | None = None,
    lam: Symbol | None = None,
    *,
    is_log: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes the value of the PDF of *sample* of Poisson distributions with parameters lam (rate).

    The parameter arrays must have the same shape, which must match the leftmost subshape of *sample*. That is, *sample* can have the same shape as the parameters, in which case the output contains one density per distribution, or *sample* can be a tensor of tensors with that shape, in which case the output is a tensor of densities such that the densities at index *i* in the output are given by the samples at index *i* in *sample* parameterized by the values of the parameters at index *i*.

    Examples::

        sample = [[-2, -1, 0, 1, 2]]
        random_pdf_normal(sample=sample, mu=[0], sigma=[1]) =
            [[0.05399097, 0.24197073, 0.3989423, 0.24197073, 0.05399097]]

    Parameters
    ----------
    sample : NDArray-or-Symbol
        Samples from the distributions.
    lam : NDArray-or-Symbol
        Lambda (rate) parameters of the distributions.
    is_log : boolean, optional, default=0
        If set, compute the density of the log-probability instead of the probability.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/pdf.py.
    """

def random_pdf_uniform(
    sample: Symbol | None = None,
    low: Symbol | None = None,
    high: Symbol | None = None,
    *,
    is_log: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes the value of the PDF of *sample* of uniform distributions on the intervals given by [low,high).

    The parameter arrays must have the same shape, which must match the leftmost subshape of *sample*. That is, *sample* can have the same shape as the parameters, in which case the output contains one density per distribution, or *sample* can be a tensor of tensors with that shape, in which case the output is a tensor of densities such that the densities at index *i* in the output are given by the samples at index *i* in *sample* parameterized by the values of the parameters at index *i*.

    Examples::

        sample = [[-2, -1, 0, 1, 2]]
        random_pdf_normal(sample=sample, mu=[0], sigma=[1]) =
            [[0.05399097, 0.24197073, 0.3989423, 0.24197073, 0.05399097]]

    Parameters
    ----------
    sample : NDArray-or-Symbol
        Samples from the distributions.
    low : NDArray-or-Symbol
        Lower bounds of the distributions.
    high : NDArray-or-Symbol
        Upper bounds of the distributions.
    is_log : boolean, optional, default=0
        If set, compute the density of the log-probability instead of the probability.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/pdf.py.
    """

def random_poisson(
    *,
    lam: float = 1.0,
    shape: _Shape = (),
    ctx: str = '',
    dtype: Literal['None', 'float16', 'float32', 'float64'] | str | type | np.dtype[Any] = 'None',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Draws random samples from a Poisson distribution with mean lam. Samples are returned as floats.

    Parameters
    ----------
    lam : float, optional, default=1.0
        Lambda parameter (rate) of the Poisson distribution.
    shape : Shape(tuple), optional, default=()
        Shape of the output.
    ctx : string, optional, default=''
        Context of output, in format [cpu|gpu|cpu_pinned](n). Only used for imperative calls.
    dtype : {'None', 'float16', 'float32', 'float64'}, optional, default='None'
        DType of the output in case this can't be inferred. Defaults to float32 if not defined (dtype=None).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/sample_op.py.
    """

def random_randint(
    *,
    low: int,
    high: int,
    shape: _Shape = (),
    ctx: str = '',
    dtype: Literal['None', 'int32', 'int64'] | str | type | np.dtype[Any] = 'None',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Draws random integers uniformly from the half-open interval [low, high).

    Parameters
    ----------
    low : int, required
        Lower bound of the distribution.
    high : int, required
        Upper bound of the distribution.
    shape : Shape(tuple), optional, default=()
        Shape of the output.
    ctx : string, optional, default=''
        Context of output, in format [cpu|gpu|cpu_pinned](n). Only used for imperative calls.
    dtype : {'None', 'int32', 'int64'}, optional, default='None'
        DType of the output in case this can't be inferred. Defaults to int32 if not defined (dtype=None).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/sample_op.py.
    """

def random_uniform(
    *,
    low: float = 0.0,
    high: float = 1.0,
    shape: _Shape = (),
    ctx: str = '',
    dtype: Literal['None', 'float16', 'float32', 'float64'] | str | type | np.dtype[Any] = 'None',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Draws random samples from a uniform distribution on [low, high).

    Parameters
    ----------
    low : float, optional, default=0.0
        Lower bound of the distribution.
    high : float, optional, default=1.0
        Upper bound of the distribution.
    shape : Shape(tuple), optional, default=()
        Shape of the output.
    ctx : string, optional, default=''
        Context of output, in format [cpu|gpu|cpu_pinned](n). Only used for imperative calls.
    dtype : {'None', 'float16', 'float32', 'float64'}, optional, default='None'
        DType of the output in case this can't be inferred. Defaults to float32 if not defined (dtype=None).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/sample_op.py.
    """

def ravel_multi_index(
    data: Symbol | None = None,
    *,
    shape: _Shape = (),
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Converts a batch of index arrays into an array of flat indices. The operator follows numpy conventions so a single multi index is given by a column of the input matrix. The leading dimension may be left unspecified by using -1 as placeholder.

    Examples::

        A = [[3, 6, 6], [4, 5, 1]]
        ravel(A, shape=(7, 6)) = [22, 41, 37]
        ravel(A, shape=(-1, 6)) = [22, 41, 37]

    Parameters
    ----------
    data : NDArray-or-Symbol
        Batch of multi-indices
    shape : Shape(tuple), optional, default=()
        Shape of the array into which the multi-indices apply.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/ravel.py.
    """

def rcbrt(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Reciprocal cube root: 1 / cbrt(x).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/unary_math.py.
    """

def reciprocal(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """y = 1 / x

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_unary.py.
    """

def relu(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Rectified linear unit: y = max(x, 0).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_unary.py.
    """

def repeat(
    data: Symbol | None = None,
    *,
    repeats: int,
    axis: int | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Repeats each element of an array `repeats` times along `axis` (by default of the flattened array, giving a 1-d result).

    repeat(x=[[1, 2], [3, 4]], repeats=2) = [1, 1, 2, 2, 3, 3, 4, 4]; with axis=1 it is [[1, 1, 2, 2], [3, 3, 4, 4]]. repeats=0 gives an empty 1-d array.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data array
    repeats : int (non-negative), required
        The number of repetitions for each element.
    axis : int or None, optional, default=None
        The axis along which to repeat values. The negative numbers are interpreted counting from the backward. By default, use the flattened input array, and return a flat output array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/replicate.py.
    """

def reset_arrays(
    *data: Symbol,
    num_arrays: int | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Set to zero multiple arrays, in place (e.g. gradient buffers between steps).

    Parameters
    ----------
    data : NDArray-or-Symbol[]
        Arrays
    num_arrays : int (non-negative), required
        number of input arrays.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/gradient_stats.py.
    """

def reshape(
    data: Symbol | None = None,
    *,
    shape: _Shape = (),
    reverse: bool | int = False,
    target_shape: _Shape = (),
    keep_highest: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Reshapes the input array without copying (the output may share its memory).

    Special values in `shape`: 0 copies this dimension from the input, -1 infers it from the remaining size, -2 copies all remaining input dimensions, -3 merges two consecutive input dimensions, -4 splits one input dimension into the two that follow (one of them may be -1). With reverse=True the special values are matched from right to left.

    Examples for an input of shape (2, 3, 4): shape=(0, -1) -> (2, 12); (-3, 4) -> (6, 4); (-2,) -> (2, 3, 4); (-4, 1, 2, -2) -> (1, 2, 3, 4).

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data.
    shape : Shape(tuple), optional, default=()
        The target shape
    reverse : boolean, optional, default=0
        If true then the special values are inferred from right to left
    target_shape : Shape(tuple), optional, default=()
        (Deprecated! Use ``shape`` instead.) Target new shape. One and only one dim can be 0, in which case it will be inferred from the rest of dims
    keep_highest : boolean, optional, default=0
        (Deprecated! Use ``shape`` instead.) Whether keep the highest dim unchanged.If set to true, then the first dim in target_shape is ignored,and always fixed as input

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/shape.py.
    """

def reshape_like(
    lhs: Symbol | None = None,
    rhs: Symbol | None = None,
    *,
    lhs_begin: int | None = None,
    lhs_end: int | None = None,
    rhs_begin: int | None = None,
    rhs_end: int | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Reshape some or all dimensions of `lhs` to have the same shape as some or all dimensions of `rhs`: lhs's axes [lhs_begin, lhs_end) are replaced by rhs's axes [rhs_begin, rhs_end) (by default all of them, so the output has rhs's shape). The element count must not change; the output may share lhs's memory.

    lhs.shape = (30, 7), rhs.shape = (15, 2, 4), lhs_begin=0, lhs_end=1, rhs_begin=0, rhs_end=2: output shape (15, 2, 7).

    Parameters
    ----------
    lhs : NDArray-or-Symbol
        First input.
    rhs : NDArray-or-Symbol
        Second input.
    lhs_begin : int or None, optional, default=None
        Defaults to 0. The beginning index along which the lhs dimensions are to be reshaped. Supports negative indices.
    lhs_end : int or None, optional, default=None
        Defaults to None. The ending index along which the lhs dimensions are to be used for reshaping. Supports negative indices.
    rhs_begin : int or None, optional, default=None
        Defaults to 0. The beginning index along which the rhs dimensions are to be used for reshaping. Supports negative indices.
    rhs_end : int or None, optional, default=None
        Defaults to None. The ending index along which the rhs dimensions are to be used for reshaping. Supports negative indices.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/shape_info.py.
    """

def reverse(
    data: Symbol | None = None,
    *,
    axis: _Shape,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Reverses the order of elements along the given axis (or axes) while preserving the array's shape.

    x = [[0, 1, 2, 3, 4], [5, 6, 7, 8, 9]]
    reverse(x, axis=0) = [[5, 6, 7, 8, 9], [0, 1, 2, 3, 4]]
    reverse(x, axis=1) = [[4, 3, 2, 1, 0], [9, 8, 7, 6, 5]]

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data array
    axis : Shape(tuple), required
        The axis which to reverse elements.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/flip.py.
    """

def rint(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Rounds to the nearest integer; a tie goes to the lower one (MXNet: rint(2.5) = 2, rint(-2.5) = -3).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/unary_math.py.
    """

def rmsprop_update(
    weight: Symbol | None = None,
    grad: Symbol | None = None,
    n: Symbol | None = None,
    *,
    lr: float,
    gamma1: float = 0.95,
    epsilon: float = 1e-08,
    wd: float = 0.0,
    rescale_grad: float = 1.0,
    clip_gradient: float = -1.0,
    clip_weights: float = -1.0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Update function for the RMSProp optimizer (Tieleman & Hinton, 2012).

        g = clip(rescale_grad * grad + wd * weight, clip_gradient)
        n = (1 - gamma1) * g^2 + gamma1 * n
        weight = clip(weight - lr * g / sqrt(n + epsilon), clip_weights)

    `n` is updated in place; returns the new weight (call with out=weight).

    Parameters
    ----------
    weight : NDArray-or-Symbol
        Weight
    grad : NDArray-or-Symbol
        Grad
    n : NDArray-or-Symbol
        N
    lr : float, required
        Learning rate
    gamma1 : float, optional, default=0.95
        The decay rate of momentum estimates.
    epsilon : float, optional, default=1e-08
        A small constant for numerical stability.
    wd : float, optional, default=0.0
        Weight decay augments the objective function with a regularization term that penalizes large weights. The penalty scales with the square of the magnitude of each weight.
    rescale_grad : float, optional, default=1.0
        Rescale gradient to grad = rescale_grad*grad.
    clip_gradient : float, optional, default=-1.0
        Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).
    clip_weights : float, optional, default=-1.0
        Clip weights to the range of [-clip_weights, clip_weights] If clip_weights <= 0, weight clipping is turned off. weights = max(min(weights, clip_weights), -clip_weights).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/_common.py.
    """

def rmspropalex_update(
    weight: Symbol | None = None,
    grad: Symbol | None = None,
    n: Symbol | None = None,
    g: Symbol | None = None,
    delta: Symbol | None = None,
    *,
    lr: float,
    gamma1: float = 0.95,
    gamma2: float = 0.9,
    epsilon: float = 1e-08,
    wd: float = 0.0,
    rescale_grad: float = 1.0,
    clip_gradient: float = -1.0,
    clip_weights: float = -1.0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Update function for the centered RMSProp optimizer (Graves, 2013, eq. 38-45).

        grad = clip(rescale_grad * grad + wd * weight, clip_gradient)
        n = (1 - gamma1) * grad^2 + gamma1 * n
        g = (1 - gamma1) * grad + gamma1 * g
        delta = gamma2 * delta - lr * grad / sqrt(n - g^2 + epsilon)
        weight = clip(weight + delta, clip_weights)

    `n`, `g` and `delta` are updated in place; returns the new weight (call with out=weight).

    Parameters
    ----------
    weight : NDArray-or-Symbol
        Weight
    grad : NDArray-or-Symbol
        Grad
    n : NDArray-or-Symbol
        N
    g : NDArray-or-Symbol
        G
    delta : NDArray-or-Symbol
        Delta
    lr : float, required
        Learning rate
    gamma1 : float, optional, default=0.95
        The decay rate of momentum estimates.
    gamma2 : float, optional, default=0.9
        Decay rate.
    epsilon : float, optional, default=1e-08
        A small constant for numerical stability.
    wd : float, optional, default=0.0
        Weight decay augments the objective function with a regularization term that penalizes large weights. The penalty scales with the square of the magnitude of each weight.
    rescale_grad : float, optional, default=1.0
        Rescale gradient to grad = rescale_grad*grad.
    clip_gradient : float, optional, default=-1.0
        Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).
    clip_weights : float, optional, default=-1.0
        Clip weights to the range of [-clip_weights, clip_weights] If clip_weights <= 0, weight clipping is turned off. weights = max(min(weights, clip_weights), -clip_weights).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/_common.py.
    """

def round(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Round half away from zero.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_unary.py.
    """

def rsqrt(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """y = 1 / sqrt(x)

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_unary.py.
    """

def sample_exponential(
    lam: Symbol | None = None,
    *,
    shape: _Shape = (),
    dtype: Literal['None', 'float16', 'float32', 'float64'] | str | type | np.dtype[Any] = 'None',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Concurrent sampling from multiple exponential distributions with parameters lambda (rate).

    The parameters of the distributions are provided as input arrays of one shape [s]; with the shape parameter [t] the output has shape [s]x[t], and output[i] holds samples drawn from the distribution parameterised by the input values at index i. Without it one sample is drawn per distribution.

    Parameters
    ----------
    lam : NDArray-or-Symbol
        Lambda (rate) parameters of the distributions.
    shape : Shape(tuple), optional, default=()
        Shape to be sampled from each random distribution.
    dtype : {'None', 'float16', 'float32', 'float64'}, optional, default='None'
        DType of the output in case this can't be inferred. Defaults to float32 if not defined (dtype=None).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/multisample_op.py.
    """

def sample_gamma(
    alpha: Symbol | None = None,
    beta: Symbol | None = None,
    *,
    shape: _Shape = (),
    dtype: Literal['None', 'float16', 'float32', 'float64'] | str | type | np.dtype[Any] = 'None',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Concurrent sampling from multiple gamma distributions with parameters alpha (shape) and beta (scale).

    The parameters of the distributions are provided as input arrays of one shape [s]; with the shape parameter [t] the output has shape [s]x[t], and output[i] holds samples drawn from the distribution parameterised by the input values at index i. Without it one sample is drawn per distribution.

    Parameters
    ----------
    alpha : NDArray-or-Symbol
        Alpha (shape) parameters of the distributions.
    beta : NDArray-or-Symbol
        Beta (scale) parameters of the distributions.
    shape : Shape(tuple), optional, default=()
        Shape to be sampled from each random distribution.
    dtype : {'None', 'float16', 'float32', 'float64'}, optional, default='None'
        DType of the output in case this can't be inferred. Defaults to float32 if not defined (dtype=None).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/multisample_op.py.
    """

def sample_generalized_negative_binomial(
    mu: Symbol | None = None,
    alpha: Symbol | None = None,
    *,
    shape: _Shape = (),
    dtype: Literal['None', 'float16', 'float32', 'float64'] | str | type | np.dtype[Any] = 'None',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Concurrent sampling from multiple generalized negative binomial distributions with parameters mu (mean) and alpha (dispersion); samples are floats.

    The parameters of the distributions are provided as input arrays of one shape [s]; with the shape parameter [t] the output has shape [s]x[t], and output[i] holds samples drawn from the distribution parameterised by the input values at index i. Without it one sample is drawn per distribution.

    Parameters
    ----------
    mu : NDArray-or-Symbol
        Means of the distributions.
    alpha : NDArray-or-Symbol
        Alpha (dispersion) parameters of the distributions.
    shape : Shape(tuple), optional, default=()
        Shape to be sampled from each random distribution.
    dtype : {'None', 'float16', 'float32', 'float64'}, optional, default='None'
        DType of the output in case this can't be inferred. Defaults to float32 if not defined (dtype=None).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/multisample_op.py.
    """

def sample_multinomial(
    data: Symbol | None = None,
    *,
    shape: _Shape = (),
    get_prob: bool | int = False,
    dtype: Literal['float16', 'float32', 'float64', 'int32', 'uint8'] | str | type | np.dtype[Any] = 'int32',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Concurrent sampling from multiple multinomial distributions.

    data is an n-dimensional array whose last axis has length k: the probabilities of the k outcomes of each distribution (each row must sum to 1). One draw per distribution, or `shape` draws; with get_prob=True a second output holds the log likelihood of each draw.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Distribution probabilities. Must sum to one on the last axis.
    shape : Shape(tuple), optional, default=()
        Shape to be sampled from each random distribution.
    get_prob : boolean, optional, default=0
        Whether to also return the log probability of sampled result. This is usually used for differentiating through stochastic variables, e.g. in reinforcement learning.
    dtype : {'float16', 'float32', 'float64', 'int32', 'uint8'}, optional, default='int32'
        DType of the output in case this can't be inferred.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/multinomial.py.
    """

def sample_negative_binomial(
    k: Symbol | None = None,
    p: Symbol | None = None,
    *,
    shape: _Shape = (),
    dtype: Literal['None', 'float16', 'float32', 'float64'] | str | type | np.dtype[Any] = 'None',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Concurrent sampling from multiple negative binomial distributions with parameters k (failure limit) and p (failure probability); samples are floats.

    The parameters of the distributions are provided as input arrays of one shape [s]; with the shape parameter [t] the output has shape [s]x[t], and output[i] holds samples drawn from the distribution parameterised by the input values at index i. Without it one sample is drawn per distribution.

    Parameters
    ----------
    k : NDArray-or-Symbol
        Limits of unsuccessful experiments.
    p : NDArray-or-Symbol
        Failure probabilities in each experiment.
    shape : Shape(tuple), optional, default=()
        Shape to be sampled from each random distribution.
    dtype : {'None', 'float16', 'float32', 'float64'}, optional, default='None'
        DType of the output in case this can't be inferred. Defaults to float32 if not defined (dtype=None).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/multisample_op.py.
    """

def sample_normal(
    mu: Symbol | None = None,
    sigma: Symbol | None = None,
    *,
    shape: _Shape = (),
    dtype: Literal['None', 'float16', 'float32', 'float64'] | str | type | np.dtype[Any] = 'None',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Concurrent sampling from multiple normal distributions with parameters mu (mean) and sigma (standard deviation).

    The parameters of the distributions are provided as input arrays of one shape [s]; with the shape parameter [t] the output has shape [s]x[t], and output[i] holds samples drawn from the distribution parameterised by the input values at index i. Without it one sample is drawn per distribution.

    Parameters
    ----------
    mu : NDArray-or-Symbol
        Means of the distributions.
    sigma : NDArray-or-Symbol
        Standard deviations of the distributions.
    shape : Shape(tuple), optional, default=()
        Shape to be sampled from each random distribution.
    dtype : {'None', 'float16', 'float32', 'float64'}, optional, default='None'
        DType of the output in case this can't be inferred. Defaults to float32 if not defined (dtype=None).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/multisample_op.py.
    """

def sample_poisson(
    lam: Symbol | None = None,
    *,
    shape: _Shape = (),
    dtype: Literal['None', 'float16', 'float32', 'float64'] | str | type | np.dtype[Any] = 'None',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Concurrent sampling from multiple Poisson distributions with parameters lambda (rate); samples are floats.

    The parameters of the distributions are provided as input arrays of one shape [s]; with the shape parameter [t] the output has shape [s]x[t], and output[i] holds samples drawn from the distribution parameterised by the input values at index i. Without it one sample is drawn per distribution.

    Parameters
    ----------
    lam : NDArray-or-Symbol
        Lambda (rate) parameters of the distributions.
    shape : Shape(tuple), optional, default=()
        Shape to be sampled from each random distribution.
    dtype : {'None', 'float16', 'float32', 'float64'}, optional, default='None'
        DType of the output in case this can't be inferred. Defaults to float32 if not defined (dtype=None).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/multisample_op.py.
    """

def sample_uniform(
    low: Symbol | None = None,
    high: Symbol | None = None,
    *,
    shape: _Shape = (),
    dtype: Literal['None', 'float16', 'float32', 'float64'] | str | type | np.dtype[Any] = 'None',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Concurrent sampling from multiple uniform distributions on the intervals given by [low, high).

    The parameters of the distributions are provided as input arrays of one shape [s]; with the shape parameter [t] the output has shape [s]x[t], and output[i] holds samples drawn from the distribution parameterised by the input values at index i. Without it one sample is drawn per distribution.

    Parameters
    ----------
    low : NDArray-or-Symbol
        Lower bounds of the distributions.
    high : NDArray-or-Symbol
        Upper bounds of the distributions.
    shape : Shape(tuple), optional, default=()
        Shape to be sampled from each random distribution.
    dtype : {'None', 'float16', 'float32', 'float64'}, optional, default='None'
        DType of the output in case this can't be inferred. Defaults to float32 if not defined (dtype=None).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/multisample_op.py.
    """

def scatter_nd(
    data: Symbol | None = None,
    indices: Symbol | None = None,
    *,
    shape: _Shape,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Scatters data into a zero array of the given shape: the inverse of gather_nd. With duplicate indices one of the values is kept (which one is unspecified).

    Example: data = [2, 3, 0], indices = [[1, 1, 0], [0, 1, 0]], shape = (2, 2) -> [[0, 0], [2, 3]].

    Parameters
    ----------
    data : NDArray-or-Symbol
        data
    indices : NDArray-or-Symbol
        indices
    shape : Shape(tuple), required
        Shape of output.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/gather_scatter.py.
    """

def sgd_mom_update(
    weight: Symbol | None = None,
    grad: Symbol | None = None,
    mom: Symbol | None = None,
    *,
    lr: float,
    momentum: float = 0.0,
    wd: float = 0.0,
    rescale_grad: float = 1.0,
    clip_gradient: float = -1.0,
    lazy_update: bool | int = True,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Momentum update function for Stochastic Gradient Descent (SGD) optimizer.

        mom = momentum * mom - lr * (clip(rescale_grad * grad, clip_gradient) + wd * weight)
        weight = weight + mom

    `mom` is updated in place; returns the new weight (call with out=weight).

    Parameters
    ----------
    weight : NDArray-or-Symbol
        Weight
    grad : NDArray-or-Symbol
        Grad
    mom : NDArray-or-Symbol
        Mom
    lr : float, required
        Learning rate
    momentum : float, optional, default=0.0
        The decay rate of momentum estimates at each epoch.
    wd : float, optional, default=0.0
        Weight decay augments the objective function with a regularization term that penalizes large weights. The penalty scales with the square of the magnitude of each weight.
    rescale_grad : float, optional, default=1.0
        Rescale gradient to grad = rescale_grad*grad.
    clip_gradient : float, optional, default=-1.0
        Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).
    lazy_update : boolean, optional, default=1
        If true, lazy updates are applied if gradient's stype is row_sparse (nnvmpy has dense arrays only, so this has no effect).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/_common.py.
    """

def sgd_update(
    weight: Symbol | None = None,
    grad: Symbol | None = None,
    *,
    lr: float,
    wd: float = 0.0,
    rescale_grad: float = 1.0,
    clip_gradient: float = -1.0,
    lazy_update: bool | int = True,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Update function for Stochastic Gradient Descent (SGD) optimizer.

        weight = weight - lr * (clip(rescale_grad * grad, clip_gradient) + wd * weight)

    Returns the new weight; call with out=weight to update in place.

    Parameters
    ----------
    weight : NDArray-or-Symbol
        Weight
    grad : NDArray-or-Symbol
        Grad
    lr : float, required
        Learning rate
    wd : float, optional, default=0.0
        Weight decay augments the objective function with a regularization term that penalizes large weights. The penalty scales with the square of the magnitude of each weight.
    rescale_grad : float, optional, default=1.0
        Rescale gradient to grad = rescale_grad*grad.
    clip_gradient : float, optional, default=-1.0
        Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).
    lazy_update : boolean, optional, default=1
        If true, lazy updates are applied if gradient's stype is row_sparse (nnvmpy has dense arrays only, so this has no effect).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/_common.py.
    """

def shape_array(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Returns a 1D int64 array containing the shape of data.

    shape_array([[1, 2, 3, 4], [5, 6, 7, 8]]) = [2, 4]

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input Array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/shape_info.py.
    """

def shuffle(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Randomly shuffle the elements.

    This shuffles the array along the first axis. The order of the elements in each subarray does not change: for a 2-D array the order of the rows changes randomly, not the order within each row.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Data to be shuffled.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/shuffle.py.
    """

def sigmoid(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """y = 1 / (1 + exp(-x))

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_unary.py.
    """

def sign(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """y = -1, 0 or 1 by the sign of x.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_unary.py.
    """

def signsgd_update(
    weight: Symbol | None = None,
    grad: Symbol | None = None,
    *,
    lr: float,
    wd: float = 0.0,
    rescale_grad: float = 1.0,
    clip_gradient: float = -1.0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Update function for SignSGD optimizer.

        weight = (1 - lr * wd) * weight - lr * sign(grad)

    clip_gradient has no effect on a sign. Returns the new weight (call with out=weight).

    Parameters
    ----------
    weight : NDArray-or-Symbol
        Weight
    grad : NDArray-or-Symbol
        Grad
    lr : float, required
        Learning rate
    wd : float, optional, default=0.0
        Weight decay augments the objective function with a regularization term that penalizes large weights. The penalty scales with the square of the magnitude of each weight.
    rescale_grad : float, optional, default=1.0
        Rescale gradient to grad = rescale_grad*grad.
    clip_gradient : float, optional, default=-1.0
        Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/_common.py.
    """

def signum_update(
    weight: Symbol | None = None,
    grad: Symbol | None = None,
    mom: Symbol | None = None,
    *,
    lr: float,
    momentum: float = 0.0,
    wd: float = 0.0,
    rescale_grad: float = 1.0,
    clip_gradient: float = -1.0,
    wd_lh: float = 0.0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """SIGN momentUM (Signum) optimizer.

        mom = momentum * mom - (1 - momentum) * (clip(rescale_grad * grad) + wd * weight)
        weight = (1 - lr * wd_lh) * weight + lr * sign(mom)

    `mom` is updated in place; returns the new weight (call with out=weight).

    Parameters
    ----------
    weight : NDArray-or-Symbol
        Weight
    grad : NDArray-or-Symbol
        Grad
    mom : NDArray-or-Symbol
        Mom
    lr : float, required
        Learning rate
    momentum : float, optional, default=0.0
        The decay rate of momentum estimates at each epoch.
    wd : float, optional, default=0.0
        Weight decay augments the objective function with a regularization term that penalizes large weights. The penalty scales with the square of the magnitude of each weight.
    rescale_grad : float, optional, default=1.0
        Rescale gradient to grad = rescale_grad*grad.
    clip_gradient : float, optional, default=-1.0
        Clip gradient to the range of [-clip_gradient, clip_gradient] If clip_gradient <= 0, gradient clipping is turned off. grad = max(min(grad, clip_gradient), -clip_gradient).
    wd_lh : float, optional, default=0.0
        The amount of weight decay that does not go into gradient/momentum calculations otherwise do weight decay algorithmically only.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/optimizer/_common.py.
    """

def sin(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Sine, element-wise.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_unary.py.
    """

def sinh(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Hyperbolic sine, element-wise.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/unary_math.py.
    """

def size_array(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Returns a 1D int64 array containing the size of data.

    size_array([[1, 2, 3, 4], [5, 6, 7, 8]]) = [8]

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input Array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/shape_info.py.
    """

def slice(
    data: Symbol | None = None,
    *,
    begin: _IntOrNoneTuple,
    end: _IntOrNoneTuple,
    step: _IntOrNoneTuple = (),
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Slices a region of the array: along axis i, indices range(begin[i], end[i], step[i]) as Python slicing reads them (None = from the start / to the end in the step's direction, negatives count from the end). Axes past len(begin) are kept whole.

    Example: x of shape (3, 4), begin=(0, 1), end=(2, 4) -> x[0:2, 1:4]; begin=(None,), end=(None,), step=(-1,) reverses axis 0.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Source input
    begin : tuple of <int or None>, required
        starting indices for the slice operation, supports negative indices.
    end : tuple of <int or None>, required
        ending indices for the slice operation, supports negative indices.
    step : tuple of <int or None>, optional, default=()
        step for the slice operation, supports negative values.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/slicing.py.
    """

def slice_axis(
    data: Symbol | None = None,
    *,
    axis: int,
    begin: int,
    end: int | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Slices along a given axis: data[..., begin:end, ...]. begin and end may be negative (counted from the end); end=None means the length of the axis.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Source input
    axis : int, required
        Axis along which to be sliced, supports negative indexes.
    begin : int, required
        The beginning index along the axis to be sliced,  supports negative indexes.
    end : int or None, optional, default=None
        The ending index along the axis to be sliced,  supports negative indexes.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/concat.py.
    """

def slice_like(
    data: Symbol | None = None,
    shape_like: Symbol | None = None,
    *,
    axes: _Shape = (),
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Slices data like shape_like: along each axis in `axes` (all axes by default) the output keeps the first shape_like.shape[axis] elements of data.

    Example: data of shape (3, 4), shape_like of shape (2, 3) -> data[0:2, 0:3]; with axes=(1,) -> data[:, 0:3].

    Parameters
    ----------
    data : NDArray-or-Symbol
        Source input
    shape_like : NDArray-or-Symbol
        Shape like input
    axes : Shape(tuple), optional, default=()
        List of axes on which input data will be sliced according to the corresponding size of the second input. By default will slice on all axes. Negative axes are supported.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/slice_like.py.
    """

def smooth_l1(
    data: Symbol | None = None,
    *,
    scalar: float = 1.0,
    is_int: bool | int = True,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Calculate Smooth L1 Loss(lhs, scalar) element-wise:

        f(x) = 0.5 * (sigma * x)^2   if |x| < 1 / sigma^2
               |x| - 0.5 / sigma^2   otherwise

    where sigma is the scalar.

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

    Defined in nnvmpy/ops/nn/loss.py.
    """

def softmax(
    data: Symbol | None = None,
    length: Symbol | None = None,
    *,
    axis: int = -1,
    temperature: float | None = None,
    dtype: Literal['float16', 'float32', 'float64'] | str | type | np.dtype[Any] | None = None,
    use_length: bool | int | None = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Applies the softmax function along an axis: exp(x/T) / sum(exp(x/T)).

    The result sums to 1 along `axis`; computed stably by subtracting the maximum. With use_length, the second input gives each row's length (the data's shape without `axis`, integers): the softmax covers a row's first `length` elements, the rest is 0.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input array.
    length : NDArray-or-Symbol
        The length array.
    axis : int, optional, default=-1
        The axis along which to compute softmax.
    temperature : float or None, optional, default=None
        Temperature parameter in softmax (None means 1.0).
    dtype : {None, 'float16', 'float32', 'float64'}, optional, default=None
        DType of the output in case this can't be inferred. Defaults to the same as input's dtype if not defined (dtype=None).
    use_length : boolean or None, optional, default=0
        Whether to use the length input as a mask over the data input.

    Returns
    -------
    out : Symbol

    Defined at <frozen importlib._bootstrap>:241.
    """

def softmax_cross_entropy(
    data: Symbol | None = None,
    label: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Calculate cross entropy of softmax output and one-hot label: the sum over the batch of -log(softmax(data)[n, label[n]]), for data (N, K) and label (N,) of class ids; the output has shape (1,).

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data
    label : NDArray-or-Symbol
        Input label

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/nn/softmax_cross_entropy.py.
    """

def softmin(
    data: Symbol | None = None,
    *,
    axis: int = -1,
    temperature: float | None = None,
    dtype: Literal['float16', 'float32', 'float64'] | str | type | np.dtype[Any] | None = None,
    use_length: bool | int | None = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Applies the softmin function along an axis: exp(-x/T) / sum(exp(-x/T)).

    The result sums to 1 along `axis`; small inputs get large weights.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input array.
    axis : int, optional, default=-1
        The axis along which to compute softmax.
    temperature : float or None, optional, default=None
        Temperature parameter in softmax (None means 1.0).
    dtype : {None, 'float16', 'float32', 'float64'}, optional, default=None
        DType of the output in case this can't be inferred. Defaults to the same as input's dtype if not defined (dtype=None).
    use_length : boolean or None, optional, default=0
        Whether to use the length input as a mask over the data input.

    Returns
    -------
    out : Symbol

    Defined at <frozen importlib._bootstrap>:241.
    """

def softrelu(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """y = log(1 + e^x) (softplus)

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_unary.py.
    """

def softsign(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """y = x / (1 + |x|)

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_unary.py.
    """

def sort(
    data: Symbol | None = None,
    *,
    axis: int | None = -1,
    is_ascend: bool | int = True,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Returns a sorted copy of an input array along the given axis.

    Examples::

        x = [[1, 4], [3, 1]]
        sort(x) = [[1, 4], [1, 3]]
        sort(x, axis=0) = [[1, 1], [3, 4]]
        sort(x, axis=None) = [1, 1, 3, 4]
        sort(x, is_ascend=0) = [[4, 1], [3, 1]]

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input array
    axis : int or None, optional, default=-1
        Axis along which to choose sort the input tensor. If not given, the flattened array is used. Default is -1.
    is_ascend : boolean, optional, default=1
        Whether to sort in ascending or descending order.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/sort.py.
    """

def space_to_depth(
    data: Symbol | None = None,
    *,
    block_size: int,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Rearranges (permutes) blocks of spatial data into depth; the reverse of depth_to_space. An input of shape (N, C, H, W) gives (N, C * block_size^2, H / block_size, W / block_size): reshape to (N, C, H / b, b, W / b, b), transpose to (0, 3, 5, 1, 2, 4), reshape to the output shape.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data array
    block_size : int (non-negative), required
        Blocks of [block_size. block_size] are moved

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/depth_space.py.
    """

def split(
    data: Symbol | None = None,
    *,
    num_outputs: int,
    axis: int = 1,
    squeeze_axis: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Splits an array along an axis into num_outputs equal parts; e.g. (2, 6) with num_outputs=3 gives three (2, 2) arrays. squeeze_axis=True drops the split axis when each part has length 1 there.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input
    num_outputs : int (non-negative), required
        Number of splits. Note that this should evenly divide the length of the `axis`.
    axis : int, optional, default=1
        Axis along which to split.
    squeeze_axis : boolean, optional, default=0
        If true, Removes the axis with length 1 from the shapes of the output arrays. **Note** that setting `squeeze_axis` to ``true`` removes axis with length 1 only along the `axis` which it is split. Also `squeeze_axis` can be set to ``true`` only if ``input.shape[axis] == num_outputs``.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/concat.py.
    """

def sqrt(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Square root, element-wise.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_unary.py.
    """

def square(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """y = x^2

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_unary.py.
    """

def squeeze(
    data: Symbol | None = None,
    *,
    axis: _Shape | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Removes axes of size 1 (those in `axis`, or all of them): (1, 5, 1, 3) -> (5, 3). An array of only size-1 axes becomes shape (1,). The output may share the input's memory.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data.
    axis : Shape(tuple) or None, optional, default=None
        Selects a subset of the single-dimensional entries in the shape. If an axis is selected with shape entry greater than one, an error is raised.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/shape.py.
    """

def stack(
    *data: Symbol,
    axis: int = 0,
    num_args: int | None = None,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Joins a sequence of arrays of one shape along a new axis: n arrays of shape (2, 3) stacked on axis=1 give (2, n, 3).

    Parameters
    ----------
    data : NDArray-or-Symbol[]
        List of arrays to stack
    axis : int, optional, default=0
        The axis in the result array along which the input arrays are stacked.
    num_args : int (non-negative), required
        Number of inputs to be stacked.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/stack.py.
    """

def stop_gradient(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Stops gradient computation: the output is the input, and the gradient flowing back through it is zero.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/misc.py.
    """

def sum(
    data: Symbol | None = None,
    *,
    axis: _Shape | None = None,
    keepdims: bool | int = False,
    exclude: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes the sum of array elements over the given axes (all by default).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input
    axis : Shape(tuple) or None, optional, default=None
        The axis or axes along which to reduce: an int, a tuple of ints, or None for every axis. Negative values count from the last axis.
    keepdims : boolean, optional, default=0
        Keep reduced axes as dims of size 1.
    exclude : boolean, optional, default=0
        Reduce over the axes NOT in `axis` instead.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/reduce.py.
    """

def sum_axis(
    data: Symbol | None = None,
    *,
    axis: _Shape | None = None,
    keepdims: bool | int = False,
    exclude: bool | int = False,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Computes the sum of array elements over the given axes (all by default).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input
    axis : Shape(tuple) or None, optional, default=None
        The axis or axes along which to reduce: an int, a tuple of ints, or None for every axis. Negative values count from the last axis.
    keepdims : boolean, optional, default=0
        Keep reduced axes as dims of size 1.
    exclude : boolean, optional, default=0
        Reduce over the axes NOT in `axis` instead.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/reduce.py.
    """

def swapaxes(
    data: Symbol | None = None,
    *,
    dim1: int = 0,
    dim2: int = 0,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Interchanges two axes of an array.

    x = [[1, 2, 3]]
    swapaxes(x, dim1=0, dim2=1) = [[1], [2], [3]]
    Negative axes count from the end.

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data array
    dim1 : int, optional, default=0
        the first axis to be swapped.
    dim2 : int, optional, default=0
        the second axis to be swapped.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/flip.py.
    """

def take(
    a: Symbol | None = None,
    indices: Symbol | None = None,
    *,
    axis: int = 0,
    mode: Literal['clip', 'raise', 'wrap'] | str = 'clip',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Takes elements from an input array along the given axis.

    Slices the input along `axis` at the positions in `indices`: the output has shape a.shape[:axis] + indices.shape + a.shape[axis+1:]. Out-of-range indices are clipped (mode 'clip'), wrapped around ('wrap') or raise an IndexError ('raise').

    Example::

        x = [[1., 2.], [3., 4.], [5., 6.]]
        take(x, [[0, 1], [1, 2]]) = [[[1., 2.], [3., 4.]], [[3., 4.], [5., 6.]]]
        take(x, [0, 3], axis=0, mode='wrap') = [[1., 2.], [1., 2.]]

    Parameters
    ----------
    a : NDArray-or-Symbol
        The input array.
    indices : NDArray-or-Symbol
        The indices of the values to be extracted.
    axis : int, optional, default=0
        The axis of input array to be taken. For input tensor of rank r, it could be in the range of [-r, r-1]
    mode : {'clip', 'raise', 'wrap'}, optional, default='clip'
        Specify how out-of-bound indices bahave. Default is "clip". "clip" means clip to the range. So, if all indices mentioned are too large, they are replaced by the index that addresses the last element along an axis. "wrap" means to wrap around. "raise" means to raise an error when index out of range.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/indexing.py.
    """

def tan(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Tangent, element-wise (radians).

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/unary_math.py.
    """

def tanh(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Hyperbolic tangent, element-wise.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/elemwise_unary.py.
    """

def tile(
    data: Symbol | None = None,
    *,
    reps: _Shape,
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Repeats the whole array multiple times.

    If reps has length d and the input has a.ndim dimensions, the result has max(d, a.ndim) dimensions: a shorter input gets leading axes of size 1, shorter reps leading 1s. tile(x=[[1, 2], [3, 4]], reps=(2, 3)) has shape (4, 6): [[1, 2, 1, 2, 1, 2], [3, 4, 3, 4, 3, 4], [1, 2, 1, 2, 1, 2], [3, 4, 3, 4, 3, 4]].

    Parameters
    ----------
    data : NDArray-or-Symbol
        Input data array
    reps : Shape(tuple), required
        The number of times for repeating the tensor a. Each dim size of reps must be a positive integer. If reps has length d, the result will have dimension of max(d, a.ndim); If a.ndim < d, a is promoted to be d-dimensional by prepending new axes. If a.ndim > d, reps is promoted to a.ndim by pre-pending 1's to it.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/replicate.py.
    """

def topk(
    data: Symbol | None = None,
    *,
    axis: int | None = -1,
    k: int = 1,
    ret_typ: Literal['both', 'indices', 'mask', 'value'] | str = 'indices',
    is_ascend: bool | int = False,
    dtype: Literal['float16', 'float32', 'float64', 'int32', 'int64', 'uint8'] | str | type | np.dtype[Any] = 'float32',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Returns the indices of the top k elements in an input array along the given axis (by default). If ret_type is set to 'value' returns the value of top k elements (instead of indices). In case of ret_type = 'both', both value and index would be returned. The returned elements will be sorted.

    Examples::

        x = [[0.3, 0.2, 0.4], [0.1, 0.3, 0.2]]
        topk(x) = [[2.], [1.]]
        topk(x, ret_typ='value', k=2) = [[0.4, 0.3], [0.3, 0.2]]
        topk(x, ret_typ='value', k=2, is_ascend=1) = [[0.2, 0.3], [0.1, 0.2]]
        topk(x, axis=0, k=2) = [[0., 1., 0.], [1., 0., 1.]]
        topk(x, ret_typ='mask', k=2) = [[1., 0., 1.], [0., 1., 1.]]

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input array
    axis : int or None, optional, default=-1
        Axis along which to choose the top k indices. If not given, the flattened array is used. Default is -1.
    k : int, optional, default=1
        Number of top elements to select, should be always smaller than or equal to the element number in the given axis. A global sort is performed if set k < 1.
    ret_typ : {'both', 'indices', 'mask', 'value'}, optional, default='indices'
        The return type.
     "value" means to return the top k values, "indices" means to return the indices of the top k values, "mask" means to return a mask array containing 0 and 1. 1 means the top k values. "both" means to return a list of both values and indices of top k elements.
    is_ascend : boolean, optional, default=0
        Whether to choose k largest or k smallest elements. Top K largest elements will be chosen if set to false.
    dtype : {'float16', 'float32', 'float64', 'int32', 'int64', 'uint8'}, optional, default='float32'
        DType of the output indices. It is only valid when ret_typ is 'indices' or 'both'. An error will be raised if the selected data type cannot precisely represent the indices.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/sort.py.
    """

def transpose(
    data: Symbol | None = None,
    *,
    axes: _Shape = (),
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Permutes the dimensions of an array: out.shape[i] = data.shape[axes[i]]. Without axes the order is reversed (the matrix transpose for 2-D).

    Parameters
    ----------
    data : NDArray-or-Symbol
        Source input
    axes : Shape(tuple), optional, default=()
        Target axis order. By default the axes will be inverted.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/shape.py.
    """

def trunc(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Truncates toward zero: the integer part.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The data array.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/unary_math.py.
    """

def uniform(
    *,
    low: float = 0.0,
    high: float = 1.0,
    shape: _Shape = (),
    ctx: str = '',
    dtype: Literal['None', 'float16', 'float32', 'float64'] | str | type | np.dtype[Any] = 'None',
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Draws random samples from a uniform distribution on [low, high).

    Parameters
    ----------
    low : float, optional, default=0.0
        Lower bound of the distribution.
    high : float, optional, default=1.0
        Upper bound of the distribution.
    shape : Shape(tuple), optional, default=()
        Shape of the output.
    ctx : string, optional, default=''
        Context of output, in format [cpu|gpu|cpu_pinned](n). Only used for imperative calls.
    dtype : {'None', 'float16', 'float32', 'float64'}, optional, default='None'
        DType of the output in case this can't be inferred. Defaults to float32 if not defined (dtype=None).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/random/sample_op.py.
    """

def unravel_index(
    data: Symbol | None = None,
    *,
    shape: _Shape = (),
    name: str | None = None,
    attr: dict[str, str] | None = None,
) -> Symbol:
    """Converts an array of flat indices into a batch of index arrays. The operator follows numpy conventions so a single multi index is given by a column of the output matrix. The leading dimension may be left unspecified by using -1 as placeholder.

    Examples::

        A = [22, 41, 37]
        unravel(A, shape=(7, 6)) = [[3, 6, 6], [4, 5, 1]]
        unravel(A, shape=(-1, 6)) = [[3, 6, 6], [4, 5, 1]]

    Parameters
    ----------
    data : NDArray-or-Symbol
        Batch of multi-indices
    shape : Shape(tuple), optional, default=()
        Shape of the array into which the multi-indices apply.

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/ravel.py.
    """

def where(
    condition: Symbol | None = None,
    x: Symbol | None = None,
    y: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """Return the elements, either from x or y, depending on the condition.

    Given three ndarrays, condition, x, and y, return an ndarray with the elements from x or y, depending on the elements from condition are true or false. x and y must have the same shape. If condition has the same shape as x, each element in the output array is from x if the corresponding element in the condition is true, and from y if false. If condition does not have the same shape as x, it must be a 1D array whose size is the same as x's first dimension size. Each row of the output array is from x's row if the corresponding element from condition is true, and from y's row if false.

    Examples::

        x = [[1, 2], [3, 4]]
        y = [[5, 6], [7, 8]]
        cond = [[0, 1], [-1, 0]]
        where(cond, x, y) = [[5, 2], [3, 8]]
        where([0, 1], x, y) = [[5, 6], [3, 4]]

    Parameters
    ----------
    condition : NDArray-or-Symbol
        condition array
    x : NDArray-or-Symbol
    y : NDArray-or-Symbol

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/where.py.
    """

def zeros_like(
    data: Symbol | None = None,
    *,
    name: str | None = None,
    attr: dict[str, str] | None = None,
    **kwargs: Any,
) -> Symbol:
    """An array of zeros with the shape and dtype of the input.

    Parameters
    ----------
    data : NDArray-or-Symbol
        The input (only its shape is used).

    Returns
    -------
    out : Symbol

    Defined in nnvmpy/ops/init.py.
    """
