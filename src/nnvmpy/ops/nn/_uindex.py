"""`u(i)`: an array index numba need not check for negative wraparound (CPU kernels).

The CPU build of the kernel layer's `uindex` device function (see kernel/launch.py for
why it matters); one-body kernels call `uindex` itself. Importing this module compiles
the (tiny, disk-cached) function's dispatcher: the kernel modules using it are imported
on first launch.
"""

from __future__ import annotations

from ...kernel.launch import uindex

u = uindex.compiled("cpu")
