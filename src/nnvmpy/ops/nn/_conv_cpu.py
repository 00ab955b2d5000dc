"""CPU Convolution: GEMMs on NumPy's BLAS, chunk by chunk of images, in the temp space.

Which algorithm runs:

    depthwise (num_group == C), 1-D/2-D direct numba loops (_depthwise_cpu.py)
    1x1(x1), stride 1, no padding       y[n] = W @ x[n], no copy at all (np.matmul)
    stride 1, 1-D/2-D, little padding   shifted GEMMs over the padded input (_conv_shift.py)
    everything else (3-D included)      im2col + GEMM, below

Arrays arrive as 5-D (N, C, D, H, W) views, 1-D and 2-D convolutions with D = 1 (the
2-D-only paths take their 4-D views). Deconvolution runs on the same functions: its
forward is `backward` with only the data gradient, its backward is `forward` and the
weight gradient of `backward` (see deconvolution.py).

im2col forward, for each chunk of nb images and each group g:

    col            = im2col(x[chunk, channels of g])            (cg*kd*kh*kw, nb*Do*Ho*Wo)
    y[chunk, g]    = W_g (Fg, cg*kh*kw) @ col  (+ bias)         scattered back to NCHW

Backward, with dY_g the chunk's output gradients as an (Fg, nb*Ho*Wo) matrix:

    dW_g += dY_g @ col^T          dcol = W_g^T @ dY_g  -> col2im -> dX     db = sum_{n,h,w} dY

The chunk size keeps the scratch memory under the `workspace` parameter (MB, capped by
MAX_WORKSPACE_BYTES) and the GEMM wide enough for BLAS to run near its peak.

Imported on the first CPU launch (it imports numba through _im2col).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ... import threads
from ...base import OpReqType
from . import _blas, _conv_algo, _conv_shift, _conv_winograd, _lanes
from . import _im2col as k
from ._geometry import Window

#: scratch memory cap in bytes, whatever `workspace` allows (MXNet's default is 1024 MB).
MAX_WORKSPACE_BYTES = 64 << 20
#: a chunk takes whole images until its GEMM has about this many columns.
TARGET_COLUMNS = 2048
#: ... and while its scratch (column matrix and GEMM output) fits in this many bytes, half
#: a core's L2 here: the copies and the GEMM then work in cache. LeNet's conv2 (20->50,
#: 5x5 on 12x12, batch 64): 8 images a chunk instead of 32 make im2col and col2im 2x
#: faster and its GEMMs 5-10%. Only for small weights (at most CACHE_BYTES / 8).
CACHE_BYTES = 1 << 20
#: ... but a chunk keeps at least this many GEMM columns (narrower GEMMs lose more).
MIN_COLUMNS = 512

_NULL, _ADD = OpReqType.kNullOp, OpReqType.kAddTo


@dataclass(frozen=True)
class DepthWindow:
    """The depth axis of a 3-D window: kernel, stride, pad, dilation, output size."""

    kd: int = 1
    sd: int = 1
    pd: int = 0
    dd: int = 1
    do: int = 1


@dataclass(frozen=True)
class ConvShape:
    """The sizes of one convolution: 2-D (1-D ones arrive as H = 1), or 3-D with a depth."""

    n: int
    c: int
    h: int
    w: int
    f: int
    groups: int
    win: Window
    workspace_mb: int
    d: int = 1
    depth: DepthWindow = DepthWindow()

    @property
    def cg(self) -> int:
        return self.c // self.groups

    @property
    def fg(self) -> int:
        return self.f // self.groups

    @property
    def planar(self) -> bool:
        """No depth: the 2-D-only paths (depthwise loops, shifted GEMMs) apply."""
        return self.d == 1 and self.depth == DepthWindow()

    @property
    def rows(self) -> int:
        """Rows of one group's column matrix: cg * kd * kh * kw."""
        return self.cg * self.depth.kd * self.win.kh * self.win.kw

    @property
    def hw(self) -> int:
        """Output positions per image and channel: Do * Ho * Wo."""
        return self.depth.do * self.win.ho * self.win.wo

    @property
    def depthwise(self) -> bool:
        return self.groups == self.c and self.groups > 1 and self.planar

    @property
    def pointwise(self) -> bool:
        """1x1(x1), stride 1, no padding, one group: the input already is the column matrix."""
        win, dep = self.win, self.depth
        return (
            self.groups == 1
            and (win.kh, win.kw, win.sh, win.sw, win.ph, win.pw) == (1, 1, 1, 1, 0, 0)
            and (dep.kd, dep.sd, dep.pd) == (1, 1, 0)
        )

    def small_weights(self, itemsize: int) -> bool:
        """The weights take at most CACHE_BYTES / 8: cheap to copy and re-read per chunk."""
        return self.rows * self.f * itemsize <= CACHE_BYTES // 8

    def chunk(self, itemsize: int, per_column: int) -> int:
        """Images per chunk: scratch of per_column values per GEMM column fits the budget."""
        budget = min(self.workspace_mb << 20, MAX_WORKSPACE_BYTES)
        by_memory = budget // max(1, per_column * self.hw * itemsize)
        by_width = TARGET_COLUMNS // max(1, self.hw)
        if not self.small_weights(itemsize):
            # every chunk reads the weights and adds into their gradient once: with big
            # weights (ResNet-18: 0.3-4.7 MB) fewer, wider chunks win (measured)
            return max(1, min(self.n, by_memory, by_width))
        by_cache = max(
            CACHE_BYTES // max(1, per_column * self.hw * itemsize), -(-MIN_COLUMNS // self.hw)
        )
        return max(1, min(self.n, by_memory, by_width, by_cache))


def _depthwise_args(s: ConvShape, tasks: int) -> tuple[int, ...]:
    """The trailing arguments of the _depthwise_cpu kernels: the window, the buffer's
    geometry and the task ranges (a few per thread of the budget)."""
    from nnvmpy.ops.nn import _depthwise_cpu as dwk

    hq, qn = dwk.geometry(s.h, s.w, *s.win.args())
    return (*s.win.args(), hq, qn, max(1, min(tasks, 4 * threads.budget())))


def _depthwise_forward(s: ConvShape, x: Any, w: Any, beta: Any, has_bias: bool, out: Any,
                       add: bool) -> None:  # fmt: skip
    """out (+)= the depthwise convolution (_depthwise_cpu.dw_forward)."""
    from nnvmpy.ops.nn import _depthwise_cpu as dwk

    y = out if out.flags.c_contiguous else np.ascontiguousarray(out)  # (kernels: flat)
    dwk.dw_forward(planar(np.ascontiguousarray(x)), planar(np.ascontiguousarray(w)), beta,
                   planar(y), has_bias, add, *_depthwise_args(s, s.n * s.f))  # fmt: skip
    if y is not out:
        out[...] = y


def _depthwise_backward(
    s: ConvShape, dy: Any, x: Any, w: Any, dx: Any, dw: Any, req_x: Any, req_w: Any
) -> None:
    """Both depthwise gradients in one pass over dy (_depthwise_cpu.dw_backward); an
    array not asked for goes in as an empty placeholder."""
    from nnvmpy.ops.nn import _depthwise_cpu as dwk

    do_x, do_w = req_x != _NULL, req_w != _NULL
    if not (do_x or do_w):
        return
    none = np.empty(0, dy.dtype)
    # the kernels take flat views: a strided output is computed in a copy, copied back
    gx = none if not do_x else dx if dx.flags.c_contiguous else np.ascontiguousarray(dx)
    gw = none if not do_w else dw if dw.flags.c_contiguous else np.ascontiguousarray(dw)
    dwk.dw_backward(
        np.ascontiguousarray(dy).reshape(-1), np.ascontiguousarray(w).reshape(-1),
        np.ascontiguousarray(x).reshape(-1) if do_w else none, gx.reshape(-1),
        gw.reshape(-1), s.n, s.c, s.f, s.h, s.w, do_x, req_x == _ADD, do_w, req_w == _ADD,
        *_depthwise_args(s, s.n * s.c),
    )  # fmt: skip
    for grad, flat in ((dx, gx), (dw, gw)):
        if flat is not none and flat is not grad:
            grad[...] = flat


def planar(a: Any) -> Any:
    """The 4-D (N, C, H, W) view of a 5-D array whose depth is 1."""
    return a.reshape(a.shape[0], a.shape[1], a.shape[3], a.shape[4])


def _depth_blocks(s: ConvShape) -> Any:
    """(a, v, u) for every depth tap a and output depth v: u is the input depth read, or
    None where the tap falls in the padding."""
    dep = s.depth
    for a in range(dep.kd):
        for v in range(dep.do):
            u = v * dep.sd - dep.pd + a * dep.dd
            yield a, v, (u if 0 <= u < s.d else None)


def _valid_args(win: Window) -> tuple[int, ...]:
    """sh, sw, dh, dw, ho, wo: the trailing arguments of _im2col_valid / _col2im_valid."""
    return (win.sh, win.sw, win.dh, win.dw, win.ho, win.wo)


def _same_size(s: ConvShape) -> bool:
    """An output of ceil(H / sh) x ceil(W / sw): for stride 1 the input's size (see
    _im2col._im2col_same and _im2col_phases)."""
    win = s.win
    return (win.ho, win.wo) == (-(-s.h // win.sh), -(-s.w // win.sw))


def to_columns(
    s: ConvShape, x: Any, col: Any, n0: int, m: int, c0: int, team: bool = False
) -> None:
    """col = im2col of images n0..n0+m-1, channels c0..c0+cg-1 of x (N, C, D, H, W).
    team: the 2-D loops as numba parallel loops over (image, channel) ranges, on the
    width nnvmpy.threads.region grants (between all-thread GEMMs: see _forward_chunks)."""
    win = s.win
    x4 = x.reshape(s.n, s.c * s.d, s.h, s.w)
    if team and s.planar and m * s.cg > 1:
        with threads.region() as width:
            parts = min(width, m * s.cg)
            if parts > 1:
                _team_columns(s, x4, col, n0, m, c0, parts)
                return
    if s.planar and win.ph == 0 and win.pw == 0:
        k._im2col_valid(x4, col, n0, m, c0, s.cg, win.kh, win.kw, *_valid_args(win))
        return
    if s.planar and _same_size(s):
        if (win.sh, win.sw) == (1, 1):
            k._im2col_same(x4, col, n0, m, c0, s.cg, win.kh, win.kw, win.ph, win.pw, win.dh, win.dw)
        else:
            k._im2col_phases(x4, col, n0, m, c0, s.cg, *win.args())
        return
    if s.planar:
        args = (*win.args(), *k.planar_args(win.kh, win.kw, s.hw), 1)
        k._im2col(x4, col, n0, m, c0, s.cg, *args)
        return
    plane, taps = win.ho * win.wo, win.kh * win.kw
    for a, v, u in _depth_blocks(s):
        if u is None:  # the whole (a, v) block reads padding
            blocks = col.reshape(s.cg, s.depth.kd, taps, m, s.depth.do, plane)
            blocks[:, a, :, :, v, :] = 0
            continue
        place = (s.d, u, a * taps, s.depth.kd * taps, v * plane, s.hw, 1)
        k._im2col(x4, col, n0, m, c0, s.cg, *win.args(), *place)


def _team_columns(s: ConvShape, x4: Any, col: Any, n0: int, m: int, c0: int, parts: int) -> None:
    """to_columns' 2-D loops, each as its team twin over `parts` ranges."""
    win = s.win
    if win.ph == 0 and win.pw == 0:
        args = (win.kh, win.kw, *_valid_args(win), parts)
        k._im2col_valid_team(x4, col, n0, m, c0, s.cg, *args)
    elif _same_size(s) and (win.sh, win.sw) == (1, 1):
        args = (win.kh, win.kw, win.ph, win.pw, win.dh, win.dw, parts)
        k._im2col_same_team(x4, col, n0, m, c0, s.cg, *args)
    elif _same_size(s):
        k._im2col_phases_team(x4, col, n0, m, c0, s.cg, *win.args(), parts)
    else:  # the general loop has no twin
        k._im2col(x4, col, n0, m, c0, s.cg, *win.args(), *k.planar_args(win.kh, win.kw, s.hw), 1)


def from_columns(s: ConvShape, col: Any, dx: Any, n0: int, m: int, c0: int, add: bool) -> None:
    """dx (=|+=) col2im of the column matrix of images n0..n0+m-1, channels c0..c0+cg-1."""
    win = s.win
    dx4 = dx.reshape(s.n, s.c * s.d, s.h, s.w)
    if s.planar and win.ph == 0 and win.pw == 0:
        k._col2im_valid(col, dx4, n0, m, c0, s.cg, win.kh, win.kw, *_valid_args(win), add)
        return
    if s.planar:
        args = (*win.args(), *k.planar_args(win.kh, win.kw, s.hw), add)
        k._col2im(col, dx4, n0, m, c0, s.cg, *args)
        return
    if not add:  # several (a, v) blocks add into one depth slice: clear the chunk first
        dx[n0 : n0 + m, c0 : c0 + s.cg] = 0
    plane, taps = win.ho * win.wo, win.kh * win.kw
    for a, v, u in _depth_blocks(s):
        if u is not None:
            place = (s.d, u, a * taps, s.depth.kd * taps, v * plane, s.hw)
            k._col2im(col, dx4, n0, m, c0, s.cg, *win.args(), *place, True)


def _bias_or_dummy(bias: Any, dtype: Any) -> tuple[Any, bool]:
    # the kernels take an array either way, so one compiled signature serves both cases
    return (bias, True) if bias is not None else (np.zeros(1, dtype), False)


def forward(
    s: ConvShape,
    x: Any,
    w: Any,
    bias: Any,
    out: Any,
    req: OpReqType,
    res: Any,
    epilogue: tuple[Any, bool] | None = None,
    gemm_only: bool = False,
    training: bool = True,
    shifted: bool = True,
) -> None:
    """out (=|+=) conv(x, w) + bias, x (N, C, D, H, W) and out (N, F, Do, Ho, Wo) contiguous.

    `epilogue` = (residual or None, relu): out = relu?(conv + bias + residual) instead, the
    bias, residual and relu applied to each chunk of images right after its GEMMs wrote it
    (while it is still in cache), in one pass with the bias where the GEMM writes `out`
    directly. Not with req 'add'. gemm_only: never Winograd; shifted=False: not the
    shifted GEMMs either (_conv_algo times these paths); training: the output feeds
    gradients (_conv_algo.forward_algo: no F(4x4) then).
    """
    if req == _NULL:
        return
    # -- Winograd hook (issue 17): 3x3 stride-1 layers where _conv_algo picks it --------
    algo = "gemm" if gemm_only else _conv_algo.forward_algo(s, x, w, bias, res, training)
    tile = _conv_algo.TILE_OF.get(algo, 0)
    if tile:
        _conv_winograd.forward(s, x, w, bias, out, req == _ADD, res, epilogue, tile)
        return
    shifted = shifted and algo != _conv_algo.IM2COL
    # -- end of the Winograd hook -------------------------------------------------------
    if epilogue is None and not gemm_only and direct(s):
        beta, has_bias = _bias_or_dummy(bias, x.dtype)
        k._direct_forward(planar(x), planar(w), beta, planar(out), has_bias, req == _ADD,
                          s.win.kh, s.win.kw, s.win.ho, s.win.wo)  # fmt: skip
        return
    if epilogue is not None:
        _forward_epilogue(s, x, w, bias, out, res, *epilogue, shifted)
        return
    add = req == _ADD
    beta, has_bias = _bias_or_dummy(bias, x.dtype)
    if s.depthwise:
        _depthwise_forward(s, x, w, beta, has_bias, out, add)
        return
    if shifted and not s.pointwise and s.planar and _conv_shift.supported(s, x.dtype):
        _conv_shift.forward(s, planar(x), planar(w), beta, has_bias, planar(out), add, res)
        return
    out3 = out.reshape(s.n, s.f, s.hw)
    w2 = w.reshape(s.f, s.rows)
    if s.pointwise and not add:
        _blas.mm(w2, x.reshape(s.n, s.c, s.hw), out3)
        if has_bias:
            k._add_bias(out3, beta, 0, s.n)
        return
    _forward_chunks(s, x, w2, beta, has_bias, out3, add, res, None)


#: The direct loops (_im2col._direct_forward / _direct_weight) run where a window holds at
#: most this many input values (channels x kh x kw): LeNet's first layer (1 x 5 x 5, batch
#: 64, 20 filters) forward 1.62 ms through the GEMM, 0.4 direct; filter gradient ~1.9 and
#: 0.4 (the loops as whole-width runs, 2026-11-29; 1.05 and 1.3 as rows before). Its
#: second (20 x 5 x 5) was 12x slower direct than through the GEMM.
DIRECT_MAX_WINDOW = 32


def direct(s: ConvShape) -> bool:
    """A 2-D, one-group, stride-1, unpadded, undilated layer with small windows."""
    win = s.win
    return (
        s.planar
        and s.groups == 1
        and (win.sh, win.sw, win.ph, win.pw, win.dh, win.dw) == (1, 1, 0, 0, 1, 1)
        and s.c * win.kh * win.kw <= DIRECT_MAX_WINDOW
    )


def _forward_chunks(
    s: ConvShape,
    x: Any,
    w2: Any,
    beta: Any,
    has_bias: bool,
    out3: Any,
    add: bool,
    res: Any,
    after: Any,
) -> None:
    """im2col + GEMM chunk by chunk of images; `after(r0, r1, cols, biased)` runs after
    each chunk is written, on its rows [r0, r1) of out (N*F, HW) and `cols` (None: all;
    biased: the bias is in already). The chunks are dealt into _lanes'
    partitions, each with its own scratch and one-thread GEMMs (one partition where the
    BLAS cannot do that: the code as before)."""
    banded = s.n == 1 and s.groups == 1 and s.planar and not add and s.hw >= BAND_RATIO * s.f
    if banded and not _lanes.one_openmp():
        n_parts = _lanes.parts(s.win.ho)
        if n_parts > 1:
            _forward_one_image(s, x, w2, beta, has_bias, out3, res, after, n_parts)
            return
    nb = s.chunk(out3.itemsize, s.rows + s.fg)
    per_part = (s.rows + s.fg) * nb * s.hw
    starts = range(0, s.n, nb)
    n_parts = _lanes.parts(len(starts))
    space = res.get_space((n_parts * per_part,), out3.dtype)
    # one partition: its GEMMs run on every BLAS thread; where those are numba's OpenMP
    # runtime too, im2col runs as a parallel loop between them (warm teams)
    team = n_parts == 1 and _lanes.one_openmp()

    def work(p: int) -> None:
        part = space[p * per_part : (p + 1) * per_part]
        for n0 in starts[p::n_parts]:
            m = min(nb, s.n - n0)
            _forward_chunk(s, x, w2, beta, has_bias, out3, add, part, n0, m, after, team)

    _lanes.run(n_parts, work)


#: batch 1 deals bands of output rows to lanes where the output has at least this many
#: positions per filter: there im2col's copy is most of the work (ResNet-18's 7x7 stem,
#: 12544 positions for 64 filters: 2.0 -> 1.7 ms, MKL, two threads). With fewer (its
#: 3x3/2 and 1x1/2 layers: 6 per filter) the lanes' start and join cost more than they
#: save: 0.95 -> 1.0-1.3 ms, 0.42 -> 0.48-0.59. Not where numba and the BLAS share one
#: OpenMP runtime: one image is one chunk there, its im2col a team loop and its GEMM on
#: all threads (the stem in the network: 1.63-1.87 -> 1.52 ms, alternating processes).
BAND_RATIO = 32


def _even(n: int, parts: int, p: int) -> tuple[int, int]:
    """Part p of [0, n) cut into `parts` ranges as even as whole numbers allow."""
    return n * p // parts, n * (p + 1) // parts


def _forward_one_image(
    s: ConvShape,
    x: Any,
    w2: Any,
    beta: Any,
    has_bias: bool,
    out3: Any,
    res: Any,
    after: Any,
    n_parts: int,
) -> None:
    """Batch 1 on `n_parts` lanes (a chunk of images is one image then, nothing to deal):
    each lane takes a band of output rows, its own im2col of the band (the window's
    padding shifted by the band's first row) and a one-thread GEMM into the band's
    columns of out, then the bias (or `after`'s epilogue) on what it wrote."""
    win = s.win
    band = -(-win.ho // n_parts) * win.wo
    space = res.get_space((n_parts * s.rows * band,), out3.dtype)
    kh, kw, sh, sw, ph, pw, dh, dw, _, wo = win.args()
    x4 = x.reshape(1, s.c, s.h, s.w)

    def work(p: int) -> None:
        y0, y1 = _even(win.ho, n_parts, p)
        cols = (y1 - y0) * wo
        col = space[p * s.rows * band : p * s.rows * band + s.rows * cols]
        col = col.reshape(s.rows, cols)
        args = (kh, kw, sh, sw, ph - y0 * sh, pw, dh, dw, y1 - y0, wo)
        k._im2col(x4, col, 0, 1, 0, s.cg, *args, *k.planar_args(kh, kw, cols), 1)
        _blas.mm(w2, col, out3[0, :, y0 * wo : y1 * wo])
        if after is not None:
            after(0, s.f, (y0 * wo, y1 * wo), False)
        elif has_bias:
            from nnvmpy.ops.nn.inference import apply_epilogue

            apply_epilogue(None, out3, beta, None, False, (0, s.f), (y0 * wo, y1 * wo))

    _lanes.run(n_parts, work)


#: MKL runs GEMMs with few output positions and many filters faster as out^T = col^T w^T
#: (then a transposing copy into out) where out has at least this many filters per
#: position, and at least TURNED_MIN_ROWS values per window. ResNet-18 at batch 1, two
#: threads: 512x4608x49 (its 3x3 512-filter layers) 1.35 -> 1.03 ms, 512x2304x49 (the
#: strided one) 0.65 -> 0.55; 512x256x49 (its 1x1) even; 256x2304x196 0.82 -> 0.89.
#: OpenBLAS is slower turned on every one of these (1.15 -> 1.61 ms for the first).
TURNED_RATIO = 8
TURNED_MIN_ROWS = 1024
TURNED_BLAS = ("mkl",)


def _turned(s: ConvShape, cols: int) -> bool:
    """Whether one image's GEMM runs turned (see TURNED_RATIO)."""
    return s.fg >= TURNED_RATIO * cols and s.rows >= TURNED_MIN_ROWS and _blas.name() in TURNED_BLAS


def _forward_chunk(
    s: ConvShape,
    x: Any,
    w2: Any,
    beta: Any,
    has_bias: bool,
    out3: Any,
    add: bool,
    space: Any,
    n0: int,
    m: int,
    after: Any,
    team: bool = False,
) -> None:
    """Images n0..n0+m-1 of `_forward_chunks`, in the scratch `space` (team: to_columns')."""
    cols = m * s.hw
    col = space[: s.rows * cols].reshape(s.rows, cols)
    tmp = space[s.rows * cols : (s.rows + s.fg) * cols].reshape(s.fg, cols)
    direct = m == 1 and not add  # one image: the GEMM writes straight into out
    turned = direct and _turned(s, cols)
    for g in range(s.groups):
        to_columns(s, x, col, n0, m, g * s.cg, team)
        wg = w2[g * s.fg : (g + 1) * s.fg]
        if turned:
            turned_out = tmp.reshape(cols, s.fg)
            _blas.matmul(col.T, wg.T, turned_out)
            np.copyto(out3[n0, g * s.fg : (g + 1) * s.fg], turned_out.T)
        elif direct:
            _blas.mm(wg, col, out3[n0, g * s.fg : (g + 1) * s.fg])
        else:
            _blas.mm(wg, col, tmp)
            k._scatter(tmp, out3, beta, n0, m, g * s.fg, s.fg, has_bias, add)
    if after is not None:
        after(n0 * s.f, (n0 + m) * s.f, None, not direct)
    elif direct and has_bias:
        k._add_bias(out3, beta, n0, 1)


def _forward_epilogue(
    s: ConvShape,
    x: Any,
    w: Any,
    bias: Any,
    out: Any,
    res: Any,
    residual: Any,
    relu: bool,
    shifted: bool = True,
) -> None:
    """out = relu?(conv(x, w) + bias + residual): see `forward`."""
    from nnvmpy.ops.nn.inference import apply_epilogue

    out3 = out.reshape(s.n, s.f, s.hw)
    res3 = None if residual is None else residual.reshape(s.n, s.f, s.hw)
    shift = shifted and not s.pointwise and s.planar and _conv_shift.supported(s, x.dtype)
    if s.depthwise or shift:
        # these kernels write whole images with the bias: one pass over the output after
        forward(s, x, w, bias, out, OpReqType.kWriteTo, res, gemm_only=True)
        apply_epilogue(None, out3, None, res3, relu)
        return
    w2 = w.reshape(s.f, s.rows)
    if s.pointwise:
        _blas.mm(w2, x.reshape(s.n, s.c, s.hw), out3)
        apply_epilogue(None, out3, bias, res3, relu)
        return
    beta, has_bias = _bias_or_dummy(bias, x.dtype)

    def after(r0: int, r1: int, cols: tuple[int, int] | None, biased: bool) -> None:
        apply_epilogue(None, out3, None if biased else bias, res3, relu, (r0, r1), cols)

    _forward_chunks(s, x, w2, beta, has_bias, out3, False, res, after)


def bias_grad(dy3: Any) -> Any:
    """db = sum over images and positions of dy3 (N, F, HW), in dy3's dtype.

    One BLAS matrix-vector product per image row (N*F, HW) @ ones, then the N partial
    sums in float64: 2.5-6x faster than NumPy's float64 sum over two axes (LeNet's conv1
    gradient: 355 -> 130 us), and as accurate as the GEMMs beside it.
    """
    n, f, hw = dy3.shape
    rows = dy3.reshape(n * f, hw) @ np.ones(hw, dy3.dtype)
    return rows.reshape(n, f).sum(axis=0, dtype=np.float64).astype(dy3.dtype)


def backward(
    s: ConvShape,
    dy: Any,
    x: Any,
    w: Any,
    grads: list[Any],
    reqs: list[OpReqType],
    res: Any,
    gemm_only: bool = False,
    shifted: bool = True,
) -> None:
    """grads = [dx, dw, db or None] written per reqs from dy (N, F, Do, Ho, Wo).

    x (and dw) may be None when req[1] is null, dx when req[0] is: only the gradients
    asked for are computed (Deconvolution's forward is the data gradient alone).
    gemm_only: never Winograd; shifted=False: not the shifted GEMMs either, im2col chunks
    (_conv_algo times these paths).
    """
    dx, dw, db = [*grads, None][:3]
    req_x, req_w = reqs[0], reqs[1]
    req_b = reqs[2] if len(reqs) > 2 else _NULL
    dy3 = dy.reshape(s.n, s.f, s.hw)
    if db is not None and req_b != _NULL:
        total = bias_grad(dy3)
        if req_b == _ADD:
            db += total
        else:
            db[...] = total
    if s.depthwise:
        _depthwise_backward(s, dy, x, w, dx, dw, req_x, req_w)
        return
    # -- Winograd hook (issue 17): the data gradient as a 3x3 conv of dy ... ----------
    w2 = w.reshape(s.f, s.rows)
    if req_x != _NULL and not gemm_only:
        algo = _conv_algo.backward_data_algo(s, dy, w, res)
        tile = _conv_algo.TILE_OF.get(algo, 0)
        if tile:
            _conv_winograd.backward_data(s, dy, w, dx, req_x == _ADD, res, tile)
            req_x = _NULL
        elif algo == _conv_algo.IM2COL:  # measured faster than the shifted GEMMs here
            _backward_chunks(s, dy3, None, w2, dx, None, req_x, _NULL, res)
            req_x = _NULL
    if req_w != _NULL and not gemm_only:  # ... and the filter gradient, F(3x3, m x m)
        algo = _conv_algo.backward_weight_algo(s, dy, x, w, res)
        tile = _conv_algo.TILE_OF.get(algo, 0)
        if tile:
            _conv_winograd.backward_weight(s, dy, x, dw, req_w == _ADD, res, tile)
            req_w = _NULL
        elif algo == _conv_algo.IM2COL:  # measured faster than the shifted GEMMs here
            _backward_chunks(s, dy3, x, w2, None, dw, _NULL, req_w, res)
            req_w = _NULL
    # -- end of the Winograd hook -------------------------------------------------------
    if req_w != _NULL and not gemm_only and direct(s):
        win = s.win
        k._direct_weight(planar(x), planar(dy), planar(dw), req_w == _ADD,
                         win.kh, win.kw, win.ho, win.wo)  # fmt: skip
        req_w = _NULL
    if s.pointwise and req_x not in (_NULL, _ADD):
        _blas.mm(w2.T, dy3, dx.reshape(s.n, s.c, s.hw))
        req_x = _NULL
    if req_x == _NULL and req_w == _NULL:
        return
    if shifted and s.planar and _conv_shift.supported(s, dy.dtype):
        dy4, x4, w4, dx4, dw4 = (None if a is None else planar(a) for a in (dy, x, w, dx, dw))
        _conv_shift.backward(s, dy4, x4, w4, dx4, dw4, req_x, req_w, res)
        return
    _backward_chunks(s, dy3, x, w2, dx, dw, req_x, req_w, res)


def _backward_chunks(
    s: ConvShape,
    dy3: Any,
    x: Any,
    w2: Any,
    dx: Any,
    dw: Any,
    req_x: OpReqType,
    req_w: OpReqType,
    res: Any,
) -> None:
    # Small weights: the GEMMs run on transposed weights, (rows, Fg) per group: dW^T = col
    # @ dY^T summed over the chunks, then dW = its transpose once; dcol = W^T @ dY from a
    # contiguous W^T. OpenBLAS runs these shapes 10-15% faster than dY @ col^T and W.T @ dY
    # (LeNet's conv2); with big weights the transposing copies cost more (ResNet's layer4).
    # The chunks are dealt into partitions as in the forward (_lanes); partition 0 sums dW
    # where one would, every other partition into its own accumulator, added in order.
    nb = s.chunk(dy3.itemsize, s.rows + s.fg)
    small = s.small_weights(dy3.itemsize)
    per_group = s.rows * s.fg
    n_acc = s.rows * s.f if small else 0  # dW^T and W^T: only for small weights
    n_grad = s.rows * s.f if req_w != _NULL else 0  # another partition's dW (or dW^T)
    per_part = (s.rows + s.fg) * nb * s.hw + per_group
    starts = range(0, s.n, nb)
    n_parts = _lanes.parts(len(starts))
    shared = 2 * n_acc
    space = res.get_space((shared + n_parts * (per_part + n_grad),), dy3.dtype)
    acc = space[:n_acc].reshape(-1, s.rows, s.fg)
    wt = space[n_acc:shared].reshape(-1, s.rows, s.fg)
    if small and req_x != _NULL:
        np.copyto(wt, w2.reshape(s.groups, s.fg, s.rows).transpose(0, 2, 1))
    dw2 = dw.reshape(s.f, s.rows) if req_w != _NULL else None
    grads = space[shared + n_parts * per_part :]

    def own_sum(p: int) -> Any:
        """Where partition p sums dW: (groups, rows, Fg) or (F, rows)."""
        if p == 0:
            return acc if small else dw2
        mine = grads[p * n_grad : (p + 1) * n_grad]
        return mine.reshape(acc.shape) if small else mine.reshape(s.f, s.rows)

    def work(p: int) -> None:
        part = space[shared + p * per_part : shared + (p + 1) * per_part]
        into = None if dw2 is None else own_sum(p)
        for i, n0 in enumerate(starts[p::n_parts]):
            m = min(nb, s.n - n0)
            # a partition's first chunk writes its sum; partition 0 adds into dW for 'add'
            first = i == 0 and (p > 0 or small or req_w != _ADD)
            _backward_chunk(s, dy3, x, w2, wt, dx, into, req_x, small, part, n0, m, first)

    _lanes.run(n_parts, work)
    if dw2 is None:
        return
    for p in range(1, n_parts):
        if small:
            acc += own_sum(p)
        else:
            dw2 += own_sum(p)
    if small:
        grad = acc.transpose(0, 2, 1).reshape(s.f, s.rows)
        if req_w == _ADD:
            dw2 += grad
        else:
            np.copyto(dw2, grad)


def _backward_chunk(
    s: ConvShape,
    dy3: Any,
    x: Any,
    w2: Any,
    wt: Any,
    dx: Any,
    into: Any,
    req_x: OpReqType,
    small: bool,
    space: Any,
    n0: int,
    m: int,
    first: bool,
) -> None:
    """Images n0..n0+m-1 of `_backward_chunks`: dW summed into `into` (written when
    `first`), dx from their columns; scratch in `space`."""
    per_group = s.rows * s.fg
    tmp_w = space[:per_group]
    rest = space[per_group:]
    cols = m * s.hw
    col = rest[: s.rows * cols].reshape(s.rows, cols)
    for g in range(s.groups):
        fs = slice(g * s.fg, (g + 1) * s.fg)
        if m == 1:
            dyt = dy3[n0, fs]
        else:
            dyt = rest[s.rows * cols : (s.rows + s.fg) * cols].reshape(s.fg, cols)
            k._gather_rows(dy3, dyt, n0, m, g * s.fg, s.fg)
        if into is not None:
            to_columns(s, x, col, n0, m, g * s.cg)
            a, b, target = (col, dyt.T, into[g]) if small else (dyt, col.T, into[fs])
            if first:
                _blas.mm(a, b, target)
            else:
                _blas.mm_add(a, b, target, tmp_w.reshape(target.shape))
        if req_x != _NULL:
            _blas.mm(wt[g] if small else w2[fs].T, dyt, col)  # dcol reuses col
            from_columns(s, col, dx, n0, m, g * s.cg, req_x == _ADD)
