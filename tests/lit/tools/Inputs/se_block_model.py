"""Writes the model of kiln_se_block.test into DIR, with its input and reference output.

  python3 se_block_model.py DIR

EfficientNet's depthwise convolution and squeeze-and-excitation: x [1, 32, 14, 14], a 3x3
depthwise convolution, SiLU, a global average pool, two 1x1 convolutions (ReLU between), a
sigmoid, and the SiLU's result scaled per channel by it. Reference in float64 with numpy.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(37)
C, H, R = 32, 14, 8
x = rng.standard_normal((1, C, H, H)).astype(np.float32)
w = (rng.standard_normal((C, 1, 3, 3)) / 3).astype(np.float32)
f1 = (rng.standard_normal((R, C, 1, 1)) / np.sqrt(C)).astype(np.float32)
f2 = (rng.standard_normal((C, R, 1, 1)) / np.sqrt(R)).astype(np.float32)
nodes = [
    helper.make_node("Conv", ["x", "w"], ["c"], name="depthwise", group=C, pads=[1, 1, 1, 1]),
    helper.make_node("Sigmoid", ["c"], ["sc"], name="silu_sigmoid"),
    helper.make_node("Mul", ["c", "sc"], ["s"], name="silu"),
    helper.make_node("GlobalAveragePool", ["s"], ["g"], name="squeeze"),
    helper.make_node("Conv", ["g", "f1"], ["h"], name="fc1"),
    helper.make_node("Relu", ["h"], ["hr"], name="fc1_relu"),
    helper.make_node("Conv", ["hr", "f2"], ["e"], name="fc2"),
    helper.make_node("Sigmoid", ["e"], ["gate"], name="gate"),
    helper.make_node("Mul", ["s", "gate"], ["y"], name="excite"),
]
graph = helper.make_graph(
    nodes, "se_block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, C, H, H])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, C, H, H])],
    initializer=[numpy_helper.from_array(value, name)
                 for name, value in (("w", w), ("f1", f1), ("f2", f2))])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
onnx.checker.check_model(model)
onnx.save(model, f"{out}/se_block.onnx")

np.save(f"{out}/x.npy", x)
padded = np.pad(x.astype(np.float64)[0], ((0, 0), (1, 1), (1, 1)))
c = np.zeros((C, H, H))
for i in range(3):
    for j in range(3):
        c += padded[:, i:i + H, j:j + H] * w[:, 0, i, j].astype(np.float64)[:, None, None]
s = c / (1 + np.exp(-c))
g = s.mean(axis=(1, 2))
h = np.maximum(f1[:, :, 0, 0].astype(np.float64) @ g, 0)
gate = 1 / (1 + np.exp(-(f2[:, :, 0, 0].astype(np.float64) @ h)))
np.save(f"{out}/reference_y.npy", (s * gate[:, None, None])[None])
