"""Resize with antialias (opset 18) shrinking a [1,2,37,29] image, and the check of what `kiln
run` wrote against antialiased interpolation written out as ONNX's reference defines it: per
output element, the n input elements nearest its coordinate (the left one on a tie; edges
repeated), weighed by the linear or cubic kernel stretched by 1 / scale and normalized.

usage: resize_antialias_case.py make DIR | check DIR CASE OUT_DIR

Cases:
  linear_sizes  mode linear, sizes [1,2,9,11] (a constant)
  cubic_sizes   mode cubic, sizes [1,2,9,11] (a constant)
  linear_scales mode linear, scales of the run [1,1,0.25,0.25] -> the declared [1,2,9,7]
  cubic_scales  mode cubic, scales of the run [1,1,0.25,0.25] -> the declared [1,2,9,7]
"""
import math
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h

X = np.random.default_rng(5).standard_normal((1, 2, 37, 29)).astype(np.float32)
SCALES = [1, 1, 0.25, 0.25]


def make(directory):
    for mode in ["linear", "cubic"]:
        sizes = h.make_tensor("sizes", T.INT64, [4], [1, 2, 9, 11])
        node = h.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode=mode, antialias=1,
                           name=f"{mode}_sizes")
        graph = h.make_graph([node], f"{mode}_sizes", [h.make_tensor_value_info("x", T.FLOAT, X.shape)],
                             [h.make_tensor_value_info("y", T.FLOAT, [1, 2, 9, 11])],
                             initializer=[sizes])
        onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 18)]),
                  f"{directory}/{mode}_sizes.onnx")
        node = h.make_node("Resize", ["x", "", "scales"], ["y"], mode=mode, antialias=1,
                           name=f"{mode}_scales")
        graph = h.make_graph([node], f"{mode}_scales",
                             [h.make_tensor_value_info("x", T.FLOAT, X.shape),
                              h.make_tensor_value_info("scales", T.FLOAT, [4])],
                             [h.make_tensor_value_info("y", T.FLOAT, [1, 2, 9, 7])])
        onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 18)]),
                  f"{directory}/{mode}_scales.onnx")
    np.save(f"{directory}/x.npy", X)
    np.save(f"{directory}/scales.npy", np.array(SCALES, dtype=np.float32))


def kernel(mode, s, a=-0.75):
    s = abs(s)
    if mode == "linear":
        return max(1 - s, 0.0)
    if s <= 1:
        return (a + 2) * s**3 - (a + 3) * s**2 + 1
    if s < 2:
        return a * s**3 - 5 * a * s**2 + 8 * a * s - 4 * a
    return 0.0


def resize_1d(row, scale, size, mode):
    stretch = min(scale, 1.0)
    first = math.floor((-1 if mode == "linear" else -2) / stretch) + 1
    count = 2 - 2 * first
    out = np.empty(size)
    for i in range(size):
        x = (i + 0.5) / scale - 0.5  # half_pixel
        base = math.floor(x) if not float(x).is_integer() else int(x) - 1
        ratio = x - base
        weights = [kernel(mode, stretch * (first + k - ratio)) for k in range(count)]
        taps = [row[min(max(base + first + k, 0), len(row) - 1)] for k in range(count)]
        out[i] = np.dot(weights, taps) / sum(weights)
    return out


def reference(case):
    mode, given = case.split("_")
    sizes = [9, 11] if given == "sizes" else [9, 7]
    scales = [s / n for s, n in zip(sizes, X.shape[2:])] if given == "sizes" else SCALES[2:]
    out = X.astype(np.float64)
    for axis, (scale, size) in zip([2, 3], zip(scales, sizes)):
        out = np.apply_along_axis(resize_1d, axis, out, np.float32(scale), size, mode)
    return out


def check(directory, case, out_dir):
    got = np.load(f"{out_dir}/y.npy")
    want = reference(case)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    print(f"{case} {list(got.shape)} matches the antialiased reference "
          f"(largest difference {np.abs(got - want).max():.1e})")


if sys.argv[1] == "make":
    make(sys.argv[2])
else:
    check(sys.argv[2], sys.argv[3], sys.argv[4])
