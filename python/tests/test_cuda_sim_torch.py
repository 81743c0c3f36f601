"""A CUDA artifact run on the simulated CUDA device from Python; PyTorch models through
kiln.from_torch and torch.compile(backend="kiln"), checked against eager PyTorch."""
import numpy as np
import pytest
import torch
import torchvision

import kiln
from conftest import images


def test_a_cuda_artifact_runs_on_the_simulated_device(tiny_cnn):
    cpu = kiln.compile(tiny_cnn, shapes={"image": (2, 3, 32, 32)})
    try:
        cuda = kiln.compile(tiny_cnn, target="cuda", gpu_arch=["sm_80", "cuda-sim"],
                            shapes={"image": (2, 3, 32, 32)})
    except kiln.CompileError as error:
        if "CUDA" in str(error) and "not built" in str(error):
            pytest.skip("this build has no CUDA code paths")
        raise
    assert cuda.device == "cuda"
    image = images(2, seed=21)
    expected = kiln.Session(cpu).run({"image": image})["probs"]
    session = kiln.Session(cuda, device="cuda-sim")
    got = session.run({"image": image})["probs"]
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)
    # The CUDA device's download lands in an array the caller keeps (kiln_session_run_into).
    probs = np.full((2, 10), -1.0, np.float32)
    assert session.run({"image": image}, out={"probs": probs})["probs"] is probs
    np.testing.assert_allclose(probs, expected, rtol=1e-4, atol=1e-6)


def test_a_squeeze_and_excitation_cnn_compiles_and_matches_pytorch():
    # MobileNetV3's hard-swish and squeeze-and-excitation blocks, channels-last on the CPU.
    torch.manual_seed(0)
    model = torchvision.models.mobilenet_v3_small(weights=None, num_classes=10).eval()
    x = torch.randn(2, 3, 96, 96)
    artifact = kiln.from_torch(model, (x,), input_names=["image"], output_names=["logits"])
    got = kiln.Session(artifact).run({"image": x})["logits"]
    with torch.no_grad():
        expected = model(x).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-3, atol=1e-4)


@pytest.mark.parametrize("name", ["mobilenet_v2", "efficientnet_b0", "transformer_encoder_layer"])
def test_torch_compile_with_the_kiln_backend_matches_eager(name):
    import kiln.torch_backend  # registers the backend

    torch.manual_seed(1)
    torch._dynamo.reset()
    if name in ("mobilenet_v2", "efficientnet_b0"):
        # Two of the zoo's models (tests/models), smaller images.
        model = getattr(torchvision.models, name)(weights=None, num_classes=10).eval()
        x = torch.randn(1, 3, 64, 64)
    else:
        model = torch.nn.TransformerEncoderLayer(64, 4, 128, dropout=0.0, batch_first=True)
        model = model.eval()
        x = torch.randn(2, 16, 64)
    before = kiln.torch_backend.statistics()
    compiled = torch.compile(model, backend="kiln")
    # The fused fast path of torch.nn's attention layers is one ATen op no exporter writes; the
    # layer as its operations is what users export.
    fastpath = torch.backends.mha.get_fastpath_enabled()
    torch.backends.mha.set_fastpath_enabled(False)
    try:
        with torch.no_grad():
            expected = model(x)
            got = compiled(x)
            again = compiled(x + 1)
            expected_again = model(x + 1)
    finally:
        torch.backends.mha.set_fastpath_enabled(fastpath)
    after = kiln.torch_backend.statistics()
    # Kiln ran the graph: a fallback to eager would match eager whatever Kiln computes.
    assert after["compiled"] > before["compiled"]
    assert after["eager"] == before["eager"]
    torch.testing.assert_close(got, expected, rtol=1e-3, atol=1e-4)
    torch.testing.assert_close(again, expected_again, rtol=1e-3, atol=1e-4)
