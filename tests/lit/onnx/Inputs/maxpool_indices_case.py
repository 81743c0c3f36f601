"""MaxPool with its Indices output, and the check of what `kiln run` wrote against max pooling
written out window by window as ONNX defines it: each output element is its window's maximum
(padding never wins), its index the first such position in the window's row-major order,
counted over the whole tensor row-major ((n * C + c) * H * W + h * W + w), or with storage_order
1 column-major within the plane ((n * C + c) * H * W + h + w * H). (PyTorch's
max_pool2d(return_indices=True) gives the same, counted within each plane.)

usage: maxpool_indices_case.py make DIR | check DIR CASE OUT_DIR

Cases:
  padded   kernel 3x2, strides 2x2, pads 1, dilations 2x1, ceil_mode (opset 12)
  columns  kernel 2x2, strides 2x1, storage_order 1 (opset 12)
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h

X = np.random.default_rng(23).standard_normal((2, 3, 9, 8)).astype(np.float32)
CASES = {
    "padded": dict(kernel=[3, 2], strides=[2, 2], pads=[1, 1], dilations=[2, 1], ceil=True,
                   order=0),
    "columns": dict(kernel=[2, 2], strides=[2, 1], pads=[0, 0], dilations=[1, 1], ceil=False,
                    order=1),
}


def pool(case):
    c = CASES[case]
    n, channels, height, width = X.shape
    (kh, kw), (sh, sw), (ph, pw), (dh, dw) = c["kernel"], c["strides"], c["pads"], c["dilations"]
    sizes = []
    for size, k, s, p, d in [(height, kh, sh, ph, dh), (width, kw, sw, pw, dw)]:
        span = size + 2 * p - d * (k - 1) - 1
        count = (-(-span // s) if c["ceil"] else span // s) + 1
        if c["ceil"] and (count - 1) * s >= size + p:  # a window must start inside
            count -= 1
        sizes.append(count)
    values = np.empty((n, channels, *sizes), dtype=np.float32)
    indices = np.empty((n, channels, *sizes), dtype=np.int64)
    for b in range(n):
        for ch in range(channels):
            for oh in range(sizes[0]):
                for ow in range(sizes[1]):
                    best, where = None, None
                    for i in range(kh):
                        for j in range(kw):
                            y, x = oh * sh - ph + i * dh, ow * sw - pw + j * dw
                            if 0 <= y < height and 0 <= x < width and (
                                    best is None or X[b, ch, y, x] > best):
                                best = X[b, ch, y, x]
                                where = y + x * height if c["order"] else y * width + x
                    values[b, ch, oh, ow] = best
                    indices[b, ch, oh, ow] = (b * channels + ch) * height * width + where
    return values, indices


def make(directory):
    for case, c in CASES.items():
        values, _ = pool(case)
        node = h.make_node("MaxPool", ["x"], ["y", "indices"], kernel_shape=c["kernel"],
                           strides=c["strides"], pads=c["pads"] * 2, dilations=c["dilations"],
                           ceil_mode=int(c["ceil"]), storage_order=c["order"], name=case)
        graph = h.make_graph([node], case, [h.make_tensor_value_info("x", T.FLOAT, X.shape)],
                             [h.make_tensor_value_info("y", T.FLOAT, values.shape),
                              h.make_tensor_value_info("indices", T.INT64, values.shape)])
        onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 12)]),
                  f"{directory}/{case}.onnx")
    np.save(f"{directory}/x.npy", X)


def check(directory, case, out_dir):
    values, indices = pool(case)
    got_values = np.load(f"{out_dir}/y.npy")
    got_indices = np.load(f"{out_dir}/indices.npy")
    np.testing.assert_array_equal(got_values, values)
    np.testing.assert_array_equal(got_indices, indices)
    print(f"{case} {list(got_indices.shape)}: values and indices match")


if sys.argv[1] == "make":
    make(sys.argv[2])
else:
    check(sys.argv[2], sys.argv[3], sys.argv[4])
