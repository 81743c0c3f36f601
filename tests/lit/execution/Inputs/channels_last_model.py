"""A small CNN for the channels-last CUDA convolutions (kiln-cuda-channels-last).

  channels_last_model.py generate DIR
      writes DIR/model.onnx, DIR/x.npy (seeded input) and DIR/expected_{y,features}.npy
      (NumPy's float64 results): convolution + bias + ReLU, max pool (3x3, stride 2, ceil
      mode), a depthwise convolution with a residual add, average pool (padding not counted),
      two branches concatenated along the channels, SiLU, and a global average pool
  channels_last_model.py check DIR A_DIR B_DIR RTOL ATOL
      A's outputs equal B's bit for bit, and are within RTOL/ATOL of NumPy's; prints 'ok'
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from numpy_reference import reference_conv, reference_pool  # noqa: E402

RNG = np.random.default_rng(20261126)


def weights():
    normal = lambda *shape: (RNG.standard_normal(shape) * 0.3).astype(np.float32)
    return {"w1": normal(8, 6, 3, 3), "b1": normal(8), "w2": normal(8, 1, 3, 3),
            "w3": normal(4, 8, 1, 1), "w4": normal(4, 8, 3, 3)}


def reference(x, w):
    x = x.astype(np.float64)
    c1 = np.maximum(reference_conv(x, w["w1"], w["b1"], [1, 1], [1, 1], [1, 1], [1, 1], 1), 0)
    p1 = reference_pool(c1, [3, 3], [2, 2], [1, 1], [1, 1], True, "max")
    a2 = reference_conv(p1, w["w2"], None, [1, 1], [1, 1], [1, 1], [1, 1], 8) + p1
    ap = reference_pool(a2, [3, 3], [1, 1], [1, 1], [1, 1], False, "avg")
    cat = np.concatenate([reference_conv(ap, w["w3"], None, [1, 1], [1, 1], [0, 0], [0, 0], 1),
                          reference_conv(ap, w["w4"], None, [1, 1], [1, 1], [1, 1], [1, 1], 1)],
                         axis=1)
    features = cat / (1 + np.exp(-cat))
    return features.mean(axis=(2, 3)), features


def generate(out):
    os.makedirs(out, exist_ok=True)
    w = weights()
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("MaxPool", ["r1"], ["p1"], kernel_shape=[3, 3], strides=[2, 2],
                         pads=[1, 1, 1, 1], ceil_mode=1),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], pads=[1, 1, 1, 1], group=8),
        helper.make_node("Add", ["c2", "p1"], ["a2"]),
        helper.make_node("AveragePool", ["a2"], ["ap"], kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         count_include_pad=0),
        helper.make_node("Conv", ["ap", "w3"], ["c3"]),
        helper.make_node("Conv", ["ap", "w4"], ["c4"], pads=[1, 1, 1, 1]),
        helper.make_node("Concat", ["c3", "c4"], ["cat"], axis=1),
        helper.make_node("Sigmoid", ["cat"], ["sig"]),
        helper.make_node("Mul", ["cat", "sig"], ["features"]),
        helper.make_node("GlobalAveragePool", ["features"], ["g"]),
        helper.make_node("Flatten", ["g"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "channels_last",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6, 11, 11])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 8]),
         helper.make_tensor_value_info("features", TensorProto.FLOAT, [2, 8, 6, 6])],
        [numpy_helper.from_array(value, name) for name, value in w.items()])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, os.path.join(out, "model.onnx"))
    x = RNG.standard_normal((2, 6, 11, 11)).astype(np.float32)
    np.save(os.path.join(out, "x.npy"), x)
    y, features = reference(x, w)
    np.save(os.path.join(out, "expected_y.npy"), y)
    np.save(os.path.join(out, "expected_features.npy"), features)


def check(out, a_dir, b_dir, rtol, atol):
    failures = 0
    for name in ("y", "features"):
        a = np.load(os.path.join(a_dir, name + ".npy"))
        b = np.load(os.path.join(b_dir, name + ".npy"))
        expected = np.load(os.path.join(out, "expected_" + name + ".npy"))
        if a.shape != expected.shape or a.tobytes() != b.tobytes():
            print(f"FAIL {name}: {a_dir} and {b_dir} differ ({a.shape} vs {b.shape})")
            failures += 1
            continue
        got = a.astype(np.float64)
        if not np.isfinite(got).all() or np.count_nonzero(expected) < expected.size // 2:
            print(f"FAIL {name}: not finite, or the reference is mostly zeros")
            failures += 1
            continue
        error = np.abs(got - expected) - (atol + rtol * np.abs(expected))
        if (error > 0).any():
            print(f"FAIL {name}: off by up to {np.abs(got - expected).max():.3g}")
            failures += 1
    print("ok" if failures == 0 else f"{failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    if sys.argv[1] == "generate":
        generate(sys.argv[2])
    else:
        check(sys.argv[2], sys.argv[3], sys.argv[4], float(sys.argv[5]), float(sys.argv[6]))
