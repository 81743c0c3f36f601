"""Writes the model of kiln_transposed_norm.test into DIR, with its input and reference output.

  python3 transposed_norm_model.py DIR

ConvNeXt's way into its layer norm: an NCHW value x [1, 96, 14, 14] transposed to NHWC and
normalized over its channels (LayerNormalization, axis -1, scale and bias), then the GELU-free
rest of the block left out. Reference in float64 with numpy.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(31)
x = (rng.standard_normal((1, 96, 14, 14)) * 3 + 1).astype(np.float32)
scale = (1 + 0.5 * rng.standard_normal(96)).astype(np.float32)
bias = rng.standard_normal(96).astype(np.float32)
nodes = [
    helper.make_node("Transpose", ["x"], ["t"], name="to_nhwc", perm=[0, 2, 3, 1]),
    helper.make_node("LayerNormalization", ["t", "scale", "bias"], ["y"], name="norm", axis=-1,
                     epsilon=1e-6),
]
graph = helper.make_graph(
    nodes, "transposed_norm",
    [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 96, 14, 14])],
    [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 14, 14, 96])],
    initializer=[numpy_helper.from_array(scale, "scale"), numpy_helper.from_array(bias, "bias")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
onnx.checker.check_model(model)
onnx.save(model, f"{out}/transposed_norm.onnx")

np.save(f"{out}/x.npy", x)
t = x.astype(np.float64).transpose(0, 2, 3, 1)
mean = t.mean(axis=-1, keepdims=True)
variance = ((t - mean) ** 2).mean(axis=-1, keepdims=True)
y = (t - mean) / np.sqrt(variance + 1e-6) * scale + bias
np.save(f"{out}/reference_y.npy", y)
