"""Writes the two-tower model of kiln_streams.test into DIR, with its inputs.

  python3 towers_model.py DIR

Two inputs, each through a tower of its own (MatMul, Relu, MatMul, Relu with seeded weights),
joined at the end by a product: the towers share nothing, so their steps may run at the same
time.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(17)
nodes, weights = [], []
for tower in ("left", "right"):
    w1 = (rng.standard_normal((256, 512)) / 16).astype(np.float32)
    w2 = (rng.standard_normal((512, 128)) / 22).astype(np.float32)
    weights += [numpy_helper.from_array(w1, f"{tower}_w1"),
                numpy_helper.from_array(w2, f"{tower}_w2")]
    nodes += [helper.make_node("MatMul", [tower, f"{tower}_w1"], [f"{tower}_h"], name=f"{tower}_fc1"),
              helper.make_node("Relu", [f"{tower}_h"], [f"{tower}_r"], name=f"{tower}_relu1"),
              helper.make_node("MatMul", [f"{tower}_r", f"{tower}_w2"], [f"{tower}_o"],
                               name=f"{tower}_fc2"),
              helper.make_node("Relu", [f"{tower}_o"], [f"{tower}_y"], name=f"{tower}_relu2")]
nodes.append(helper.make_node("Mul", ["left_y", "right_y"], ["score"], name="join"))
graph = helper.make_graph(
    nodes, "towers",
    [helper.make_tensor_value_info(name, TensorProto.FLOAT, [64, 256]) for name in ("left", "right")],
    [helper.make_tensor_value_info("score", TensorProto.FLOAT, [64, 128])], weights)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
onnx.checker.check_model(model)
onnx.save(model, f"{out}/towers.onnx")
np.save(f"{out}/left.npy", rng.standard_normal((64, 256)).astype(np.float32))
np.save(f"{out}/right.npy", rng.standard_normal((64, 256)).astype(np.float32))
