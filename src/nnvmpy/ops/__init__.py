"""Every built-in op family; importing this package registers them all, in this order."""

from . import (  # noqa: F401 - imported for their registrations
    broadcast,
    concat,
    elemwise_binary,
    elemwise_scalar,
    elemwise_unary,
    init,
    matrix,
    nn,
    optimizer,
    quadratic,
    reduce,
    shape,
)
