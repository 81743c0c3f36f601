"""Writes the model of kiln_multi_output.test into DIR, with its inputs and reference outputs.

  python3 siblings_model.py DIR
  python3 siblings_model.py DIR --compare OUTPUTS   # every output in OUTPUTS against DIR's references

From x [4, 256, 64]: exp(x) + 1 and tanh(x) * 2 (two elementwise kernels reading x), softmax
and log-softmax over the last axis (two row kernels reading x); from u and v [64], sin(u) and
cos(v) (two small kernels reading nothing in common). References in float64 with numpy.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
if len(sys.argv) == 4 and sys.argv[2] == "--compare":
    for name in ("a", "b", "s", "l", "p", "q"):
        got = np.load(f"{sys.argv[3]}/{name}.npy")
        want = np.load(f"{out}/reference_{name}.npy")
        error = np.abs(got.astype(np.float64) - want)
        if got.shape != want.shape or not np.all(error <= 1e-6 + 1e-5 * np.abs(want)):
            sys.exit(f"{sys.argv[3]}/{name}.npy: max abs error {error.max():.3g}")
        print(f"{name}: max abs error {error.max():.3g}")
    sys.exit(0)
rng = np.random.default_rng(23)
x = rng.standard_normal((4, 256, 64)).astype(np.float32)
u = rng.standard_normal(64).astype(np.float32)
v = rng.standard_normal(64).astype(np.float32)
nodes = [
    helper.make_node("Exp", ["x"], ["ex"], name="exp"),
    helper.make_node("Add", ["ex", "one"], ["a"], name="add_one"),
    helper.make_node("Tanh", ["x"], ["th"], name="tanh"),
    helper.make_node("Mul", ["th", "two"], ["b"], name="times_two"),
    helper.make_node("Softmax", ["x"], ["s"], name="softmax", axis=-1),
    helper.make_node("LogSoftmax", ["x"], ["l"], name="log_softmax", axis=-1),
    helper.make_node("Sin", ["u"], ["p"], name="sin"),
    helper.make_node("Cos", ["v"], ["q"], name="cos"),
]
constants = [numpy_helper.from_array(np.array(1, np.float32), "one"),
             numpy_helper.from_array(np.array(2, np.float32), "two")]
big = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, [4, 256, 64])
small = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, [64])
graph = helper.make_graph(nodes, "siblings", [big("x"), small("u"), small("v")],
                          [big("a"), big("b"), big("s"), big("l"), small("p"), small("q")],
                          initializer=constants)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
onnx.checker.check_model(model)
onnx.save(model, f"{out}/siblings.onnx")

for name, value in (("x", x), ("u", u), ("v", v)):
    np.save(f"{out}/{name}.npy", value)
x64 = x.astype(np.float64)
shifted = x64 - x64.max(axis=-1, keepdims=True)
total = np.exp(shifted).sum(axis=-1, keepdims=True)
reference = {"a": np.exp(x64) + 1, "b": np.tanh(x64) * 2, "s": np.exp(shifted) / total,
             "l": shifted - np.log(total), "p": np.sin(u.astype(np.float64)),
             "q": np.cos(v.astype(np.float64))}
for name, value in reference.items():
    np.save(f"{out}/reference_{name}.npy", value)
