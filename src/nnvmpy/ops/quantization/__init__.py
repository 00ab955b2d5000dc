"""MXNet's quantized ops (`_contrib_quantize_v2`, `_contrib_requantize`,
`_contrib_quantized_*`): int8/uint8 tensors that carry a float32 (min, max) range.
See _common for the range convention. quantize/dequantize live in ../contrib_quantize."""

from . import (  # noqa: F401 - imported for their registrations
    calibrate_entropy,
    quantize_v2,
    quantized_act,
    quantized_batch_norm,
    quantized_concat,
    quantized_conv,
    quantized_elemwise_add,
    quantized_elemwise_mul,
    quantized_embedding,
    quantized_fc,
    quantized_flatten,
    quantized_pooling,
    requantize,
)
