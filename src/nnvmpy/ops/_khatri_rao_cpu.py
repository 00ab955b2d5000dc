"""khatri_rao on the CPU: whole rows of the product, one pass, no scratch.

khatri_rao.py's one-body kernels multiply one factor into the output per launch (an
item per element, two divisions each), and the backward sums each gradient element down
a column of dX, ncol elements apart: (32768, 512) from three factors took 370 ms
forward and 1.3 s forward + backward. Here the factors are concatenated (they are
small: the output is their rows' product) and

    product_rows: task r writes output row r = (m_1, ..., m_n) as the product of the
                  factors' rows m_i, in factor order (the one-body kernels' order);
    factor_grad:  task m of factor i adds, over the output rows r with m_i(r) = m in
                  increasing r, dX[r] times the product of the other factors' rows.

The sums and products are taken in the one-body kernels' order, so both devices give
the same bits. Imported on the first CPU launch (it imports numba).
"""

from __future__ import annotations

import numpy as np
from numba import prange

from .. import kernel
from .nn._uindex import u as _u


@kernel.cpu_kernel
def product_rows(out, cat, starts, rows, inners, ncol):
    # out: (prod(rows), ncol) flat; factor i is cat[starts[i]:] as (rows[i], ncol)
    for r in prange(out.size // ncol):
        dst = r * ncol
        src = starts[0] + ((r // inners[0]) % rows[0]) * ncol
        for c in range(ncol):
            out[_u(dst + c)] = cat[_u(src + c)]
        for i in range(1, rows.size):
            src = starts[i] + ((r // inners[i]) % rows[i]) * ncol
            for c in range(ncol):
                out[_u(dst + c)] *= cat[_u(src + c)]


@kernel.cpu_kernel
def factor_grad(da, dy, cat, starts, rows, inners, ncol, skip, zero, add):
    # da: (rows[skip], ncol) flat; da[m] (+)= sum over rows r of dy with m_skip(r) = m of
    # dy[r] * (the product of the other factors' rows at r), summed in zero's dtype
    m = rows[skip]
    inner = inners[skip]
    outer = dy.size // (ncol * m * inner)
    for mi in prange(m):
        acc = np.full(ncol, zero)
        w = np.empty(ncol, dy.dtype)
        for o in range(outer):
            for q in range(inner):
                r = (o * m + mi) * inner + q
                first = True
                for i in range(rows.size):
                    if i == skip:
                        continue
                    src = starts[i] + ((r // inners[i]) % rows[i]) * ncol
                    if first:
                        for c in range(ncol):
                            w[_u(c)] = cat[_u(src + c)]
                        first = False
                    else:
                        for c in range(ncol):
                            w[_u(c)] *= cat[_u(src + c)]
                row = r * ncol
                if first:  # no other factor: the product is ones
                    for c in range(ncol):
                        acc[_u(c)] += dy[_u(row + c)]
                else:
                    for c in range(ncol):
                        acc[_u(c)] += dy[_u(row + c)] * w[_u(c)]
        dst = mi * ncol
        if add:
            for c in range(ncol):
                da[_u(dst + c)] += acc[_u(c)]
        else:
            for c in range(ncol):
                da[_u(dst + c)] = acc[_u(c)]
