"""Writes the model of kiln_epilogues.test into DIR, with its inputs and reference outputs.

  python3 epilogue_model.py DIR

Four matrix products, each followed by elementwise ops a library epilogue may take:
  s = (x W1) * 0.5                       a scale of the product
  h = relu((s W2 + b2) / 3)              a bias, a division by a constant, ReLU
  g = gelu(h W3 + b3)                    GELU in its exact (erf) form, as exporters write it
  y = clip(g W4 + r, 0, 6)               a residual add and a clip
s and y are the outputs. References in float64 with numpy.
"""
import math
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(29)
x = rng.standard_normal((64, 96)).astype(np.float32)
r = rng.standard_normal((64, 48)).astype(np.float32)
weights = {
    "W1": rng.standard_normal((96, 128)) / np.sqrt(96),
    "W2": rng.standard_normal((128, 80)) / np.sqrt(128) * 4,
    "b2": rng.standard_normal(80),
    "W3": rng.standard_normal((80, 48)) / np.sqrt(80) * 2,
    "b3": rng.standard_normal(48),
    "W4": rng.standard_normal((48, 48)) / np.sqrt(48) * 3,
}
weights = {name: value.astype(np.float32) for name, value in weights.items()}
scalars = {"half": 0.5, "three": 3.0, "zero": 0.0, "six": 6.0, "sqrt2": math.sqrt(2.0),
           "one": 1.0}
nodes = [
    helper.make_node("MatMul", ["x", "W1"], ["p1"], name="mm1"),
    helper.make_node("Mul", ["p1", "half"], ["s"], name="scale1"),
    helper.make_node("MatMul", ["s", "W2"], ["p2"], name="mm2"),
    helper.make_node("Add", ["p2", "b2"], ["a2"], name="bias2"),
    helper.make_node("Div", ["a2", "three"], ["d2"], name="div2"),
    helper.make_node("Relu", ["d2"], ["h"], name="relu2"),
    helper.make_node("MatMul", ["h", "W3"], ["p3"], name="mm3"),
    helper.make_node("Add", ["p3", "b3"], ["a3"], name="bias3"),
    helper.make_node("Div", ["a3", "sqrt2"], ["e0"], name="gelu_div"),
    helper.make_node("Erf", ["e0"], ["e1"], name="gelu_erf"),
    helper.make_node("Add", ["e1", "one"], ["e2"], name="gelu_add"),
    helper.make_node("Mul", ["a3", "e2"], ["e3"], name="gelu_mul"),
    helper.make_node("Mul", ["e3", "half"], ["g"], name="gelu_half"),
    helper.make_node("MatMul", ["g", "W4"], ["p4"], name="mm4"),
    helper.make_node("Add", ["p4", "r"], ["a4"], name="residual4"),
    helper.make_node("Clip", ["a4", "zero", "six"], ["y"], name="clip4"),
]
initializers = [numpy_helper.from_array(value, name) for name, value in weights.items()]
initializers += [numpy_helper.from_array(np.array(value, np.float32), name)
                 for name, value in scalars.items()]
info = lambda name, shape: helper.make_tensor_value_info(name, TensorProto.FLOAT, shape)
graph = helper.make_graph(nodes, "epilogues", [info("x", [64, 96]), info("r", [64, 48])],
                          [info("s", [64, 128]), info("y", [64, 48])],
                          initializer=initializers)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
onnx.checker.check_model(model)
onnx.save(model, f"{out}/epilogues.onnx")

np.save(f"{out}/x.npy", x)
np.save(f"{out}/r.npy", r)
w = {name: value.astype(np.float64) for name, value in weights.items()}
s = (x.astype(np.float64) @ w["W1"]) * 0.5
h = np.maximum((s @ w["W2"] + w["b2"]) / 3, 0)
a3 = h @ w["W3"] + w["b3"]
g = 0.5 * a3 * (1 + np.vectorize(math.erf)(a3 / math.sqrt(2)))
y = np.clip(g @ w["W4"] + r.astype(np.float64), 0, 6)
np.save(f"{out}/reference_s.npy", s)
np.save(f"{out}/reference_y.npy", y)
