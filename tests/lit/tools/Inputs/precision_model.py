"""An overflow-prone model for `--precision`: twelve Linear+Tanh blocks, then exp(SCALE·h), which
goes past fp16's largest value (65504), and its log: the blocks are harmless in fp16, exp and
log are not.

  precision_model.py DIR              writes DIR/deep.onnx and DIR/x.npy (seeded)
  precision_model.py DIR OUT.npy R A  checks OUT.npy against NumPy's fp32 result within
                                      |got - ref| <= A + R·|ref|, with no NaN or infinity
"""
import sys

import numpy as np

BLOCKS = 12
WIDTH = 32
SCALE = 40


def weights():
    rng = np.random.default_rng(7)
    return [(rng.normal(0, 0.18, (WIDTH, WIDTH)).astype(np.float32),
             rng.normal(0, 0.1, (WIDTH,)).astype(np.float32)) for _ in range(BLOCKS)]


def reference(x):
    h = x
    for w, b in weights():
        h = np.tanh(h @ w + b)
    return np.log(np.exp(np.float32(SCALE) * h))


def write(directory):
    import onnx
    from onnx import TensorProto, helper, numpy_helper
    nodes, inits = [], []
    previous = "x"
    for i, (w, b) in enumerate(weights()):
        inits += [numpy_helper.from_array(w, f"w{i}"), numpy_helper.from_array(b, f"b{i}")]
        nodes += [helper.make_node("MatMul", [previous, f"w{i}"], [f"m{i}"], name=f"matmul{i}"),
                  helper.make_node("Add", [f"m{i}", f"b{i}"], [f"a{i}"], name=f"bias{i}"),
                  helper.make_node("Tanh", [f"a{i}"], [f"h{i}"], name=f"tanh{i}")]
        previous = f"h{i}"
    inits.append(numpy_helper.from_array(np.array(SCALE, np.float32), "scale"))
    nodes += [helper.make_node("Mul", [previous, "scale"], ["t"], name="scale"),
              helper.make_node("Exp", ["t"], ["e"], name="exp"),
              helper.make_node("Log", ["e"], ["y"], name="log")]
    graph = helper.make_graph(
        nodes, "deep", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, WIDTH])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, WIDTH])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, f"{directory}/deep.onnx")
    x = np.random.default_rng(3).uniform(-1, 1, (4, WIDTH)).astype(np.float32)
    np.save(f"{directory}/x.npy", x)


def check(directory, output, rtol, atol):
    got = np.load(output)
    expected = reference(np.load(f"{directory}/x.npy"))
    assert np.isfinite(got).all(), "a NaN or infinity in the output"
    # The test is meaningful only if fp16 storage of exp's result overflows.
    assert np.exp(expected).max() > 65504
    error = np.abs(got - expected) - (atol + rtol * np.abs(expected))
    assert error.max() <= 0, f"worst excess {error.max()} at {np.unravel_index(error.argmax(), got.shape)}"
    print(f"within the budget: max |error| {np.abs(got - expected).max():.3g}")


if __name__ == "__main__":
    if len(sys.argv) == 2:
        write(sys.argv[1])
    else:
        check(sys.argv[1], sys.argv[2], float(sys.argv[3]), float(sys.argv[4]))
