"""im2col of 'same'-size windows (output ceil(H / stride) x ceil(W / stride): ResNet's
padded 3x3 layers, its strided ones and its stem) through _im2col._im2col_same (stride
1) and _im2col_phases: against a NumPy gather from a zero-padded copy, and through the
convolution against the float64 reference."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

# isort: off
import op_db  # noqa: F401  (first: it loads every cases_*.py, so cases_conv is complete)
from cases_conv import TempSpace, conv_reference

# isort: on

from nnvmpy.base import OpReqType
from nnvmpy.ops.nn import _conv_cpu, _im2col
from nnvmpy.ops.nn._geometry import Window

# (h, w, kh, kw, sh, sw, ph, pw, dh, dw): each window's output is ceil(h/sh) x ceil(w/sw)
SAME = [
    (7, 7, 3, 3, 1, 1, 1, 1, 1, 1),  # ResNet's last stage
    (5, 9, 5, 3, 1, 1, 2, 1, 1, 1),
    (6, 4, 3, 3, 1, 1, 2, 2, 2, 2),  # dilated
    (1, 8, 1, 3, 1, 1, 0, 1, 1, 1),  # 1-D
    (2, 2, 5, 5, 1, 1, 2, 2, 1, 1),  # windows wider than the image
    (8, 8, 3, 3, 2, 2, 1, 1, 1, 1),  # ResNet's 3x3/2
    (8, 6, 1, 1, 2, 2, 0, 0, 1, 1),  # its 1x1/2
    (12, 10, 7, 7, 2, 2, 3, 3, 1, 1),  # its 7x7/2 stem
    (7, 9, 3, 3, 2, 3, 1, 0, 1, 1),  # odd sizes, unequal strides
    (9, 5, 3, 3, 3, 2, 2, 1, 2, 1),  # strided and dilated
]


def _columns_reference(x: Any, n0: int, m: int, c0: int, cg: int, win: Window) -> Any:
    """col[(c*kh + i)*kw + j, b*H*W + y*W + z] from a zero-padded copy of x."""
    xp = np.pad(x[n0 : n0 + m, c0 : c0 + cg], ((0, 0), (0, 0), (win.ph,) * 2, (win.pw,) * 2))
    rows = []
    for c in range(cg):
        for i in range(win.kh):
            for j in range(win.kw):
                y0, z0 = i * win.dh, j * win.dw
                taps = xp[:, c, y0 :: win.sh, z0 :: win.sw][:, : win.ho, : win.wo]
                rows.append(taps.reshape(-1))
    return np.stack(rows)


def _shape(n: int, c: int, case: Any, groups: int = 1) -> Any:
    h, w, kh, kw, sh, sw, ph, pw, dh, dw = case
    ho, wo = -(-h // sh), -(-w // sw)
    assert (ho, wo) == (
        (h + 2 * ph - dh * (kh - 1) - 1) // sh + 1,
        (w + 2 * pw - dw * (kw - 1) - 1) // sw + 1,
    )
    window = Window(kh, kw, sh, sw, ph, pw, dh, dw, ho, wo)
    return _conv_cpu.ConvShape(n, c, h, w, 6, groups, window, 1)


@pytest.mark.parametrize("case", SAME)
def test_same_size_columns_match_the_padded_gather(case: Any, monkeypatch: Any) -> None:
    calls: list[str] = []
    for name in ("_im2col_same", "_im2col_phases", "_im2col_valid"):
        real = getattr(_im2col, name)
        monkeypatch.setattr(_im2col, name, lambda *a, r=real, n=name: calls.append(n) or r(*a))
    rng = np.random.default_rng(sum(case))
    n, c, n0, m = 3, 6, 1, 2  # a chunk of images, not the first
    s = _shape(n, c, case, groups=2)
    cg, c0 = s.cg, s.cg  # the second group's channels
    x = rng.standard_normal((n, c, 1, s.h, s.w)).astype(np.float32)
    col = np.full((cg * s.win.kh * s.win.kw, m * s.hw), np.nan, np.float32)  # all written
    _conv_cpu.to_columns(s, x, col, n0, m, c0)
    np.testing.assert_array_equal(col, _columns_reference(x[:, :, 0], n0, m, c0, cg, s.win))
    if s.win.ph == s.win.pw == 0:
        assert calls == ["_im2col_valid"]  # unpadded windows keep their own loops
    else:
        assert calls == ["_im2col_same" if s.win.sh == s.win.sw == 1 else "_im2col_phases"]


@pytest.mark.parametrize("case", SAME)
def test_same_size_convolution_matches_the_reference(case: Any) -> None:
    rng = np.random.default_rng(sum(case) + 1)
    s = _shape(2, 4, case, groups=2)
    x = rng.standard_normal((2, 4, 1, s.h, s.w)).astype(np.float32)
    w = rng.standard_normal((6, 2, 1, s.win.kh, s.win.kw)).astype(np.float32)
    out = np.empty((2, 6, 1, s.win.ho, s.win.wo), np.float32)
    _conv_cpu.forward(s, x, w, None, out, OpReqType.kWriteTo, TempSpace(), gemm_only=True)
    params = {
        "kernel": (s.win.kh, s.win.kw),
        "stride": (s.win.sh, s.win.sw),
        "pad": (s.win.ph, s.win.pw),
        "dilate": (s.win.dh, s.win.dw),
        "num_group": 2,
    }
    want = conv_reference(x[:, :, 0].astype(np.float64), w[:, :, 0].astype(np.float64), **params)
    assert np.abs(out[:, :, 0] - want).max() <= 1e-5 * max(1.0, np.abs(want).max())


@pytest.mark.parametrize("case", SAME)
def test_team_columns_are_the_serial_ones(case: Any, monkeypatch: Any) -> None:
    """to_columns(team=True): the parallel twins over (image, channel) ranges write the
    serial loops' columns, for any granted width (1 keeps the serial loop)."""
    import contextlib

    from nnvmpy import threads

    rng = np.random.default_rng(sum(case) + 2)
    n, c, n0, m = 3, 6, 1, 2
    s = _shape(n, c, case, groups=2)
    cg, c0 = s.cg, s.cg
    x = rng.standard_normal((n, c, 1, s.h, s.w)).astype(np.float32)
    want = _columns_reference(x[:, :, 0], n0, m, c0, cg, s.win)
    for width in (1, 2, 3, 7):
        monkeypatch.setattr(threads, "region", lambda w=0, k=width: contextlib.nullcontext(k))
        col = np.full((cg * s.win.kh * s.win.kw, m * s.hw), np.nan, np.float32)
        _conv_cpu.to_columns(s, x, col, n0, m, c0, team=True)
        np.testing.assert_array_equal(col, want)


# (channels, case): a 3x3/2 layer, and a 3-channel 7x7/2 stem with enough positions per
# filter that OpenBLAS would deal it in bands of rows (_conv_cpu.BAND_RATIO)
TEAM_FORWARD = [(8, SAME[5]), (3, (40, 36, 7, 7, 2, 2, 3, 3, 1, 1))]


@pytest.mark.parametrize(("c", "case"), TEAM_FORWARD, ids=["3x3s2", "stem"])
def test_one_partition_under_one_openmp_runs_team_columns(
    c: int, case: Any, monkeypatch: Any
) -> None:
    """Batch 1 where numba and the BLAS share one OpenMP runtime (forced here for any
    BLAS): the forward is one chunk whose im2col runs as a team twin, and the result is
    the reference."""
    import contextlib

    from nnvmpy import threads
    from nnvmpy.ops.nn import _lanes

    monkeypatch.setattr(_lanes, "one_openmp", lambda: True)
    monkeypatch.setattr(threads, "region", lambda want=0: contextlib.nullcontext(2))
    ran: list[str] = []
    for name in ("_im2col_same_team", "_im2col_phases_team", "_im2col_valid_team"):
        real = getattr(_im2col, name)
        monkeypatch.setattr(_im2col, name, lambda *a, r=real, n=name: ran.append(n) or r(*a))
    rng = np.random.default_rng(5)
    s = _shape(1, c, case)
    win = s.win
    x = rng.standard_normal((1, c, 1, s.h, s.w)).astype(np.float32)
    w = rng.standard_normal((6, c, 1, win.kh, win.kw)).astype(np.float32)
    b = rng.standard_normal(6).astype(np.float32)
    out = np.empty((1, 6, 1, win.ho, win.wo), np.float32)
    _conv_cpu.forward(s, x, w, b, out, OpReqType.kWriteTo, TempSpace(), gemm_only=True)
    assert ran == ["_im2col_phases_team"]
    want = conv_reference(x[:, :, 0].astype(np.float64), w[:, :, 0].astype(np.float64), b,
                          kernel=(win.kh, win.kw), stride=(win.sh, win.sw),
                          pad=(win.ph, win.pw))  # fmt: skip
    assert np.abs(out[:, :, 0] - want).max() <= 1e-5 * max(1.0, np.abs(want).max())
