"""kiln.compile, kiln.load, Artifact and Session on the example CNN, checked against ONNX
Runtime; the three forms a model is given in; saving and loading; ONNX Runtime's run order."""
import numpy as np
import onnx
import onnxruntime
import pytest

import kiln
from conftest import images, matmul_model


def reference(model_path, image):
    session = onnxruntime.InferenceSession(str(model_path), providers=["CPUExecutionProvider"])
    return session.run(None, {"image": image})[0]


def test_the_example_cnn_compiles_and_matches_onnx_runtime(tiny_cnn):
    artifact = kiln.compile(tiny_cnn, shapes={"image": (4, 3, 32, 32)})
    assert artifact.device == "cpu"
    assert [i.name for i in artifact.inputs] == ["image"]
    assert artifact.inputs[0].shape == (4, 3, 32, 32)
    assert artifact.inputs[0].dtype == "float32"
    assert [o.name for o in artifact.outputs] == ["probs"]
    # The compile report names the library calls the CNN became.
    assert "onednn.convolution" in artifact.report
    session = kiln.Session(artifact)
    image = images(4, seed=7)
    probs = session.run({"image": image})["probs"]
    assert isinstance(probs, np.ndarray) and probs.shape == (4, 10)
    np.testing.assert_allclose(probs, reference(tiny_cnn, image), rtol=1e-4, atol=1e-6)
    # Each image its own answer: the run did not mix the batch.
    assert len({tuple(np.round(row, 4)) for row in probs}) == 4


def test_a_model_is_taken_as_a_path_bytes_or_a_model_proto(tiny_cnn):
    image = images(2, seed=11)
    expected = reference(tiny_cnn, image)
    proto = onnx.load(str(tiny_cnn))
    for model in (str(tiny_cnn), tiny_cnn, tiny_cnn.read_bytes(), proto):
        artifact = kiln.compile(model, shapes={"image": (2, 3, 32, 32)})
        got = kiln.Session(artifact).run({"image": image})["probs"]
        np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)


def test_an_artifact_for_a_range_of_shapes_runs_every_batch(tiny_cnn):
    artifact = kiln.compile(tiny_cnn, shape_ranges={"image": [(1, 8), 3, 32, 32]})
    assert artifact.inputs[0].shape == (None, 3, 32, 32)
    assert artifact.inputs[0].ranges[0] == (1, 8)
    session = kiln.Session(artifact, threads=2)
    for batch in (1, 5, 8):
        image = images(batch, seed=batch)
        got = session.run({"image": image})["probs"]
        np.testing.assert_allclose(got, reference(tiny_cnn, image), rtol=1e-4, atol=1e-6)


def test_saved_artifacts_load_and_a_file_is_not_overwritten_unless_asked(tiny_cnn, tmp_path):
    artifact = kiln.compile(tiny_cnn, shapes={"image": (1, 3, 32, 32)})
    path = tmp_path / "tiny.kiln"
    artifact.save(path)
    assert path.read_bytes() == artifact.to_bytes()
    with pytest.raises(kiln.AlreadyExists, match="overwrite=True"):
        artifact.save(path)
    path.write_bytes(b"mine")
    with pytest.raises(kiln.AlreadyExists):
        artifact.save(path)
    assert path.read_bytes() == b"mine"
    artifact.save(path, overwrite=True)
    loaded = kiln.load(path)
    assert loaded.inputs == artifact.inputs and loaded.outputs == artifact.outputs
    image = images(1, seed=3)
    np.testing.assert_allclose(kiln.Session(str(path)).run({"image": image})["probs"],
                               kiln.Session(artifact).run({"image": image})["probs"], rtol=0,
                               atol=0)


def test_onnx_runtimes_run_order_and_chosen_outputs():
    artifact = kiln.compile(matmul_model())
    session = kiln.Session(artifact)
    x = np.random.default_rng(5).standard_normal((16, 32)).astype(np.float32)
    ours = session.run({"x": x})
    ort = onnxruntime.InferenceSession(matmul_model().SerializeToString(),
                                       providers=["CPUExecutionProvider"])
    (expected,) = ort.run(None, {"x": x})
    np.testing.assert_allclose(ours["y"], expected, rtol=1e-5, atol=1e-5)
    listed = session.run(None, {"x": x})
    assert isinstance(listed, list) and len(listed) == 1
    np.testing.assert_array_equal(listed[0], ours["y"])
    np.testing.assert_array_equal(session.run(["y"], {"x": x})[0], ours["y"])
    assert list(session.run({"x": x}, outputs=["y"])) == ["y"]


def test_every_compile_option_of_the_command_line_is_a_keyword():
    options = kiln.compile_options()
    for keyword in ("target", "gpu_arch", "precision", "memory_limit", "conv_layout",
                    "attention", "streams", "keep_io_types", "dump_ir", "shapes",
                    "shape_ranges"):
        assert keyword in options, keyword
    artifact = kiln.compile(matmul_model(), memory_limit="1MiB", streams=2, keep_io_types=True,
                            attention="unfused")
    assert artifact.inputs[0].shape == (16, 32)


def test_the_version_is_the_runtimes():
    assert kiln.__version__.count(".") == 2
