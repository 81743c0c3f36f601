"""An ONNX model whose Reshape target and Slice bounds are graph inputs, as exporters write
them, with seeded inputs, and the check of what `kiln run` wrote against NumPy.

usage: shape_input_case.py make DIR | check DIR
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper

mode, out = sys.argv[1], sys.argv[2]
rng = np.random.default_rng(7)
data = rng.standard_normal((2, 3, 4)).astype(np.float32)
shape = np.array([4, -1], dtype=np.int64)
starts, ends = np.array([1], dtype=np.int64), np.array([5], dtype=np.int64)

if mode == "make":
    nodes = [helper.make_node("Reshape", ["data", "shape"], ["reshaped"]),
             helper.make_node("Slice", ["reshaped", "starts", "ends", "axes"], ["sliced"]),
             helper.make_node("Tanh", ["sliced"], ["y"])]
    graph = helper.make_graph(
        nodes, "shape_inputs",
        [helper.make_tensor_value_info("data", TensorProto.FLOAT, ["b", 3, 4]),
         helper.make_tensor_value_info("shape", TensorProto.INT64, [2]),
         helper.make_tensor_value_info("starts", TensorProto.INT64, [1]),
         helper.make_tensor_value_info("ends", TensorProto.INT64, [1])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 4])],
        [helper.make_tensor("axes", TensorProto.INT64, [1], [1])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    onnx.save(model, f"{out}/model.onnx")
    for name, value in [("data", data), ("shape", shape), ("starts", starts), ("ends", ends)]:
        np.save(f"{out}/{name}.npy", value)
else:
    expected = np.tanh(data.reshape(4, -1)[:, 1:5])
    got = np.load(f"{out}/out/y.npy")
    assert got.shape == expected.shape, (got.shape, expected.shape)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
    print(f"y {got.shape} matches NumPy")
