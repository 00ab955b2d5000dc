"""nd.image.resize / nd.image.crop: numbers measured on MXNet 1.9.1, shape rules, errors.

The literal arrays below were printed by MXNet 1.9.1 (OpenCV 3.4.2 underneath); the op
table (cases_image_resize.py) checks the same rules against NumPy formulas on more shapes.
"""

from __future__ import annotations

import numpy as np
import op_db  # noqa: F401  (first: it loads every cases_*.py)
import pytest
from cases_image_resize import _resize, _resize_u8

import nnvmpy as nv
from nnvmpy.base import InferError, NNVMError

nd = nv.nd

# x[h, w, 0] = 3 * (5h + w), resized from (4, 5) to (2, 3): channel 0 per interp
RAMP_DOWN = {
    ("float32", 0): [[0, 3, 9], [30, 33, 39]],
    ("float32", 1): [[8.5, 13.5, 18.5], [38.5, 43.5, 48.5]],
    ("float32", 2): [[6.8715277, 12.09375, 17.315969], [39.684025, 44.90625, 50.12847]],
    ("float32", 3): [[8.700001, 13.5, 18.300001], [38.700005, 43.5, 48.300003]],
    ("uint8", 0): [[0, 3, 9], [30, 33, 39]],
    ("uint8", 1): [[9, 14, 18], [39, 44, 48]],
    ("uint8", 2): [[7, 12, 17], [40, 45, 50]],
    ("uint8", 3): [[9, 14, 18], [39, 44, 48]],
}
# [[0, 100], [200, 255]] grown to 3 x 3
CORNERS_UP = {
    ("float32", 0): [[0, 0, 100], [0, 0, 100], [200, 200, 255]],
    ("float32", 1): [[0, 50, 100], [100, 138.75, 177.5], [200, 227.5, 255]],
    ("float32", 2): [
        [-26.380741, 34.592022, 95.56479],
        [93.27258, 138.75, 184.22743],
        [212.92592, 242.90799, 272.89005],
    ],
    ("float32", 3): [[0, 50, 100], [100, 138.75, 177.5], [200, 227.5, 255]],
    ("uint8", 0): [[0, 0, 100], [0, 0, 100], [200, 200, 255]],
    ("uint8", 1): [[0, 50, 100], [100, 139, 178], [200, 227, 255]],
    ("uint8", 2): [[0, 35, 95], [93, 139, 184], [213, 243, 255]],  # saturated at 0 and 255
    ("uint8", 3): [[0, 50, 100], [100, 139, 178], [200, 228, 255]],
}


def _check(got: np.ndarray, want: list, dtype: str) -> None:
    if dtype == "uint8":
        np.testing.assert_array_equal(got, np.array(want, np.uint8))
    else:
        np.testing.assert_allclose(got, np.array(want, np.float32), rtol=1e-6, atol=1e-5)


@pytest.mark.parametrize(("dtype", "interp"), sorted(RAMP_DOWN))
def test_resize_matches_mxnet_numbers(dtype: str, interp: int) -> None:
    ramp = nd.array(np.arange(60).reshape(4, 5, 3), dtype=dtype)
    down = nd.image.resize(ramp, (3, 2), interp=interp)
    assert down.dtype == np.dtype(dtype)
    _check(down.asnumpy()[:, :, 0], RAMP_DOWN[dtype, interp], dtype)
    corners = nd.array(np.array([[0, 100], [200, 255]]).reshape(2, 2, 1), dtype=dtype)
    _check(
        nd.image.resize(corners, 3, interp=interp).asnumpy()[:, :, 0],
        CORNERS_UP[dtype, interp],
        dtype,
    )


def test_resize_area_averages_partial_pixels_by_overlap() -> None:
    # MXNet: a row 0..5 shrunk to 4 pixels (boxes of 1.5 pixels)
    row = nd.array(np.arange(6.0).reshape(1, 6, 1), dtype=np.float32)
    got = nd.image.resize(row, (4, 1), interp=3).asnumpy().ravel()
    np.testing.assert_allclose(got, [1 / 3, 5 / 3, 10 / 3, 14 / 3], rtol=1e-6)


def test_resize_references_agree_on_a_batch_and_on_each_image() -> None:
    rng = np.random.default_rng(3)
    batch = rng.uniform(0, 255, (3, 9, 7, 3)).astype(np.uint8)
    for interp in (0, 1, 2):
        got = nd.image.resize(nd.array(batch, dtype=np.uint8), (10, 4), interp=interp).asnumpy()
        np.testing.assert_array_equal(got, _resize_u8(batch, (10, 4), interp))
        for k in range(3):
            np.testing.assert_array_equal(got[k], _resize_u8(batch[k], (10, 4), interp))
    x = batch.astype(np.float64)
    got = nd.image.resize(nd.array(x, dtype=np.float64), (3, 5), interp=3).asnumpy()
    np.testing.assert_allclose(got, _resize(x, (3, 5), 3), rtol=1e-12)


@pytest.mark.parametrize(
    ("shape", "size", "keep_ratio", "out"),
    [
        ((2, 4, 3), 3, False, (3, 3, 3)),
        ((2, 4, 3), 3, True, (3, 6, 3)),  # the short edge becomes 3, 4 * 3 // 2 = 6
        ((4, 2, 3), 3, True, (6, 3, 3)),
        ((5, 7, 3), 4, True, (4, 5, 3)),  # 7 * 4 // 5 = 5: integer division, as in MXNet
        ((3, 3, 3), 2, True, (2, 2, 3)),
        ((2, 7, 5, 1), (3, 2), True, (2, 2, 3, 1)),  # (width, height) ignores keep_ratio
        ((3, 5, 7), (2, 2), False, (2, 2, 7)),  # any channel count
    ],
)
def test_resize_output_shape(shape, size, keep_ratio, out) -> None:
    got = nd.image.resize(nd.zeros(shape), size, keep_ratio=keep_ratio)
    assert got.shape == out
    s = nv.sym.image.resize(nv.sym.var("d"), size=size, keep_ratio=keep_ratio)
    assert s.infer_shape(d=shape)[1] == [out]


def test_resize_shape_inference_carries_batch_and_channels_back() -> None:
    s = nv.sym.image.resize(nv.sym.var("d"), size=(3, 2))
    args, outs, _ = s.infer_shape_partial()
    assert (args, outs) == ([()], [()])
    d = nv.sym.var("d")
    y = nv.sym.image.resize(d, size=(3, 2)) + nv.sym.var("z", shape=(4, 2, 3, 1))
    args, outs, _ = y.infer_shape_partial()
    assert args[0] == (4, 0, 0, 1)  # height and width stay unknown
    assert outs == [(4, 2, 3, 1)]


def test_resize_refuses_what_it_cannot_do() -> None:
    img = nd.ones((3, 3, 3))
    for interp, why in ((4, "Lanczos is not provided"), (5, "bit-exact"), (-1, "got -1")):
        with pytest.raises(NNVMError, match=rf"_image_resize: parameter 'interp' must be .*{why}"):
            nd.image.resize(img, 2, interp=interp)
    with pytest.raises(InferError, match=r"parameter 'size' must be \(width, height\) or one int"):
        nd.image.resize(img)
    with pytest.raises(InferError, match=r"parameter 'size' must be \(width, height\)"):
        nd.image.resize(img, (1, 2, 3))
    with pytest.raises(InferError, match=r"parameter 'size' must be positive, got \(2, 0\)"):
        nd.image.resize(img, (2, 0))
    with pytest.raises(InferError, match=r"input 'data' must have shape \(height, width"):
        nd.image.resize(nd.ones((3, 3)), 2)
    with pytest.raises(InferError, match=r"must be float32, float64 or uint8 .* got int32"):
        nd.image.resize(nd.ones((3, 3, 3), dtype=np.int32), 2)
    for empty in ((0, 6, 3), (2, 4, 0, 1)):  # keep_ratio used to divide by the zero
        with pytest.raises(InferError, match=r"'data' must have a nonzero height and width"):
            nd.image.resize(nd.array(np.ones(empty)), 3, keep_ratio=True)
    # a batch of no images or pixels of no channels: an empty output of the right shape
    assert nd.image.resize(nd.array(np.ones((0, 4, 5, 3))), (2, 3)).shape == (0, 3, 2, 3)
    assert nd.image.resize(nd.array(np.ones((4, 5, 0))), (2, 3), interp=2).shape == (3, 2, 0)
    # the registry and engine stay usable
    assert nd.image.resize(img, 2).shape == (2, 2, 3)


def test_resize_has_no_gradient_and_says_so() -> None:
    # MXNet registers `_copy` of the head gradient, which fails on the shape mismatch
    x = nd.ones((4, 5, 3))
    x.attach_grad()
    with nv.autograd.record():
        y = nd.image.resize(x, (3, 2))
    with pytest.raises(NNVMError, match=r"_image_resize.*has no FGradient"):
        y.backward()


def test_crop_takes_the_window_and_its_gradient_is_zero_outside() -> None:
    img = np.arange(60.0).reshape(4, 5, 3)
    x = nd.array(img)
    np.testing.assert_array_equal(nd.image.crop(x, 1, 2, 3, 2).asnumpy(), img[2:4, 1:4])
    batch = np.arange(72.0).reshape(2, 3, 4, 3)
    got = nd.image.crop(nd.array(batch), 0, 1, 4, 1).asnumpy()
    np.testing.assert_array_equal(got, batch[:, 1:2, 0:4])
    # MXNet: crop(x, 1, 1, 2, 2) with head gradient 2 gives 2 inside, 0 outside
    x.attach_grad()
    with nv.autograd.record():
        y = nd.image.crop(x, 1, 1, 2, 2)
    y.backward(nd.ones(y.shape) * 2)
    want = np.zeros((4, 5, 3))
    want[1:3, 1:3] = 2
    np.testing.assert_array_equal(x.grad.asnumpy(), want)


def test_crop_backward_adds_only_inside_the_window() -> None:
    data = nv.sym.var("data")
    y = nv.sym.image.crop(data, x=1, y=0, width=2, height=1)
    grad = nd.ones((2, 3, 1))
    exe = y.bind(nv.cpu(), {"data": nd.zeros((2, 3, 1))}, args_grad={"data": grad}, grad_req="add")
    exe.forward(is_train=True)
    exe.backward([nd.array(np.array([[[5.0], [7.0]]]))])
    np.testing.assert_array_equal(grad.asnumpy()[:, :, 0], [[1, 6, 8], [1, 1, 1]])


def test_crop_errors_name_the_parameter() -> None:
    img = nd.ones((4, 5, 3))
    with pytest.raises(InferError, match=r"_image_crop: x \+ width = 3 \+ 3 = 6 exceeds .*width 5"):
        nd.image.crop(img, 3, 0, 3, 2)
    with pytest.raises(
        InferError, match=r"_image_crop: y \+ height = 1 \+ 4 = 5 exceeds .*height 4"
    ):
        nd.image.crop(img, 0, 1, 2, 4)
    with pytest.raises(InferError, match=r"_image_crop: parameter 'width' must be positive"):
        nd.image.crop(img, 0, 0, 0, 2)
    # MXNet reads outside the image for a negative x; we refuse it
    with pytest.raises(InferError, match=r"_image_crop: parameter 'x' must be >= 0, got -1"):
        nd.image.crop(img, -1, 0, 2, 2)
    with pytest.raises(InferError, match=r"channels with 1 or 3 elements"):
        nd.image.crop(nd.ones((3, 3, 4)), 0, 0, 2, 2)
    with pytest.raises(InferError, match=r"_image_crop: input 'data' must have shape"):
        nd.image.crop(nd.ones((3, 3)), 0, 0, 2, 2)
    assert nd.image.crop(img, 0, 0, 5, 4).shape == (4, 5, 3)


# symbol files as MXNet 1.9.1 writes them
MXNET_JSON = {
    "_image_crop": ('{"height": "2", "width": "2", "x": "1", "y": "1"}', "crop0", (2, 2, 3)),
    "_image_resize": ('{"size": "(3, 2)"}', "resize0", (2, 3, 3)),
}


@pytest.mark.parametrize("op", sorted(MXNET_JSON))
def test_symbol_json_round_trip_and_mxnet_files(op: str) -> None:
    attrs, name, out = MXNET_JSON[op]
    text = (
        '{"nodes": [{"op": "null", "name": "d", "inputs": []}, '
        f'{{"op": "{op}", "name": "{name}", "attrs": {attrs}, "inputs": [[0, 0, 0]]}}], '
        '"arg_nodes": [0], "node_row_ptr": [0, 1, 2], "heads": [[1, 0, 0]], '
        '"attrs": {"mxnet_version": ["int", 10901]}}'
    )
    s = nv.sym.load_json(text)
    assert s.infer_shape(d=(4, 5, 3))[1] == [out]
    again = nv.sym.load_json(s.tojson())
    x = np.random.default_rng(0).uniform(0, 255, (4, 5, 3)).astype(np.float32)
    outs = [t.bind(nv.cpu(), {"d": nd.array(x)}).forward()[0].asnumpy() for t in (s, again)]
    np.testing.assert_array_equal(outs[0], outs[1])
    assert outs[0].shape == out
