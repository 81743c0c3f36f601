"""One session from 16 Python threads at once, every result exact; every error a user can meet
raised as the Kiln exception class of its status code, naming the input, node or file."""
import threading

import numpy as np
import onnx
import pytest
from onnx import TensorProto

import kiln
from conftest import elementwise_model, images, matmul_model


def test_sixteen_threads_share_one_session_and_every_result_is_exact(tiny_cnn):
    session = kiln.Session(kiln.compile(tiny_cnn, shapes={"image": (2, 3, 32, 32)}), threads=2)
    inputs = [images(2, seed=100 + i) for i in range(16)]
    # The serial answers, then the same inputs from 16 threads at once, 8 runs each.
    expected = [session.run({"image": image})["probs"] for image in inputs]
    failures = []
    barrier = threading.Barrier(16)

    def worker(index):
        barrier.wait()
        for _ in range(8):
            got = session.run({"image": inputs[index]})["probs"]
            if not np.array_equal(got, expected[index]):
                failures.append(index)

    threads = [threading.Thread(target=worker, args=(i,)) for i in range(16)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []
    assert session.statistics()["runs"] == 16 + 16 * 8


@pytest.fixture(scope="module")
def mlp():
    return kiln.Session(kiln.compile(matmul_model()))


def test_input_errors_name_the_input(mlp):
    x = np.ones((16, 32), np.float32)
    with pytest.raises(kiln.InvalidArgument, match="no input named 'image'.*inputs are: x"):
        mlp.run({"image": x})
    with pytest.raises(kiln.InvalidArgument, match="input 'x' is not given"):
        mlp.run({})
    with pytest.raises(kiln.InvalidArgument, match="'x'.*f32.*16.*32"):
        mlp.run({"x": np.ones((16, 31), np.float32)})
    with pytest.raises(kiln.InvalidArgument, match="'x'"):
        mlp.run({"x": np.ones((16, 32), np.int32)})
    with pytest.raises(kiln.InvalidArgument, match="no output named 'z'"):
        mlp.run({"x": x}, outputs=["z"])
    # Kiln's errors are Python's too: an invalid argument is a ValueError.
    with pytest.raises(ValueError):
        mlp.run({"image": x})
    with pytest.raises(kiln.Error) as info:
        mlp.run({"image": x})
    assert info.value.code == "INVALID_ARGUMENT"


def test_file_errors(tmp_path):
    with pytest.raises(kiln.NotFound, match="missing.onnx"):
        kiln.compile(tmp_path / "missing.onnx")
    with pytest.raises(FileNotFoundError):
        kiln.load(tmp_path / "missing.kiln")
    corrupt = tmp_path / "corrupt.kiln"
    artifact = kiln.compile(matmul_model())
    data = bytearray(artifact.to_bytes())
    corrupt.write_bytes(bytes(data[: len(data) // 2]))
    with pytest.raises(kiln.DataLoss, match="corrupt.kiln"):
        kiln.load(corrupt)


def test_a_model_that_does_not_compile_names_its_node():
    model = elementwise_model("Add", TensorProto.FLOAT)
    model.graph.node[0].op_type = "NoSuchOperator"
    with pytest.raises(kiln.CompileError, match="add_node") as info:
        kiln.compile(model)
    assert "NoSuchOperator" in str(info.value)
    assert isinstance(info.value, kiln.InvalidArgument)
    with pytest.raises(kiln.CompileError):
        kiln.compile(b"not a model")


def test_option_errors():
    with pytest.raises(TypeError, match="no_such_option"):
        kiln.compile(matmul_model(), no_such_option=1)
    with pytest.raises(kiln.InvalidArgument, match="precision"):
        kiln.compile(matmul_model(), precision="fp13")
    with pytest.raises(TypeError, match="keep_io_types"):
        kiln.compile(matmul_model(), keep_io_types="yes")
    with pytest.raises(kiln.Unimplemented, match="accuracy budget"):
        kiln.compile(matmul_model(), precision="auto")


def test_device_errors():
    artifact = kiln.compile(matmul_model())
    with pytest.raises(kiln.InvalidArgument, match="'tpu'"):
        kiln.Session(artifact, device="tpu")
    # A CPU artifact on another device is refused naming both.
    with pytest.raises(kiln.InvalidArgument, match="cpu"):
        kiln.Session(artifact, device="cuda-sim")
    with pytest.raises(kiln.InvalidArgument, match="at least one"):
        kiln.Session(artifact, threads=0)
