"""Writes the model and input of kiln_memory_limit.test into DIR, and checks an output.

  python3 skip_model.py DIR            writes DIR/skip.onnx and DIR/x.npy
  python3 skip_model.py DIR OUT.npy    compares OUT.npy with a NumPy evaluation

out = Relu(x) * (Relu(x) @ W1 @ W2): Relu(x) (16 KiB) is live across the 256 KiB product, and
cheap to recompute from the input.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(11)
w1 = (rng.standard_normal((64, 1024)) / 8).astype(np.float32)
w2 = (rng.standard_normal((1024, 64)) / 32).astype(np.float32)
x = rng.standard_normal((64, 64)).astype(np.float32)

if len(sys.argv) == 2:
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["t"], name="relu"),
         helper.make_node("MatMul", ["t", "w1"], ["wide"], name="wide"),
         helper.make_node("MatMul", ["wide", "w2"], ["z"], name="narrow"),
         helper.make_node("Mul", ["z", "t"], ["y"], name="gate")],
        "skip",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [64, 64])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [64, 64])],
        [numpy_helper.from_array(w1, "w1"), numpy_helper.from_array(w2, "w2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    onnx.save(model, f"{out}/skip.onnx")
    np.save(f"{out}/x.npy", x)
else:
    t = np.maximum(x.astype(np.float64), 0)
    expected = t * (t @ w1 @ w2)
    got = np.load(sys.argv[2])
    error = np.max(np.abs(got - expected) / (1e-4 + np.abs(expected)))
    if got.shape != expected.shape or not error < 1e-3:
        sys.exit(f"{sys.argv[2]}: largest relative error {error}")
