"""Neural-network layers, one op (with its backward op) per module."""

from . import (  # noqa: F401 - imported for their registrations
    activation,
    batch_norm,
    convolution,
    dropout,
    fully_connected,
    loss,
    pooling,
    softmax,
)
