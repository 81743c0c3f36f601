"""Shared models of the Python package's tests: small ONNX graphs with seeded contents, built
with onnx's helpers, and the example CNN of examples/tiny_cnn_onnx.py.

The tests import `kiln` from wherever it is installed: CI installs the wheel into a fresh
virtual environment and runs them there (scripts/test.sh), never against the build tree.
"""
import importlib.util
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto
from onnx import helper as h

REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def tiny_cnn(tmp_path_factory) -> Path:
    """examples/tiny_cnn_onnx.py's model (dynamic batch), written once."""
    spec = importlib.util.spec_from_file_location(
        "tiny_cnn_onnx", REPOSITORY / "examples" / "tiny_cnn_onnx.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    path = tmp_path_factory.mktemp("models") / "tiny_cnn.onnx"
    onnx.save(module.build_tiny_cnn(), str(path))
    return path


def images(batch: int, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    image = rng.standard_normal((batch, 3, 32, 32)) + rng.normal(0, 1.5, (batch, 3, 1, 1))
    return image.astype(np.float32)


def elementwise_model(op: str, elem_type: int, shape=(2, 3, 4), inputs: int = 2,
                      opset: int = 17) -> onnx.ModelProto:
    """y = op(x, z) (or op(x)) over tensors of `elem_type`."""
    names = ["x", "z"][:inputs]
    graph = h.make_graph(
        [h.make_node(op, names, ["y"], name=f"{op.lower()}_node")], f"{op.lower()}_graph",
        [h.make_tensor_value_info(n, elem_type, list(shape)) for n in names],
        [h.make_tensor_value_info("y", elem_type, list(shape))])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])


def matmul_model(m: int = 16, k: int = 32, n: int = 8) -> onnx.ModelProto:
    """y = relu(x @ w + b), seeded w and b."""
    rng = np.random.default_rng(3)
    w = onnx.numpy_helper.from_array(rng.standard_normal((k, n)).astype(np.float32), "w")
    b = onnx.numpy_helper.from_array(rng.standard_normal(n).astype(np.float32), "b")
    graph = h.make_graph(
        [h.make_node("MatMul", ["x", "w"], ["xw"], name="matmul"),
         h.make_node("Add", ["xw", "b"], ["xwb"], name="bias"),
         h.make_node("Relu", ["xwb"], ["y"], name="relu")],
        "mlp", [h.make_tensor_value_info("x", TensorProto.FLOAT, [m, k])],
        [h.make_tensor_value_info("y", TensorProto.FLOAT, [m, n])], initializer=[w, b])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def pytest_configure(config):
    """The package under test is an installed one, never the sources beside these tests."""
    import kiln

    location = Path(kiln.__file__).resolve()
    if (REPOSITORY / "python") in location.parents:
        raise pytest.UsageError(f"kiln is imported from the source tree ({location}); install "
                                "the wheel (scripts/test.sh does) and run the tests with it")
