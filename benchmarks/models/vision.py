"""Convolutional benchmark models: torchvision's ResNet-50 and MobileNetV2 with seeded weights.

No pretrained weights are downloaded. The architecture is torchvision's; its weights come from
torchvision's own initializers under a fixed seed. Batch norm is then made non-trivial: every
scale and shift is drawn from a seeded distribution, and the running statistics are calibrated on
seeded images (train-mode passes with a cumulative average), so each batch norm is a real affine
map and activations stay near unit variance through the depth of the network, as with trained
weights. The comparison against PyTorch is then made on values of sensible magnitude.
"""

import torch
import torchvision

IMAGE_SHAPE = (3, 224, 224)
CALIBRATION_BATCHES = 2
CALIBRATION_BATCH_SIZE = 8


def _randomize_batch_norm(model: torch.nn.Module, generator: torch.Generator) -> None:
    for module in model.modules():
        if isinstance(module, torch.nn.BatchNorm2d):
            channels = module.num_features
            with torch.no_grad():
                module.weight.copy_(0.5 + torch.rand(channels, generator=generator))
                module.bias.copy_(0.1 * torch.randn(channels, generator=generator))
            # A cumulative average over the calibration passes instead of an exponential one.
            module.momentum = None
            module.reset_running_stats()


def _calibrate(model: torch.nn.Module, generator: torch.Generator) -> None:
    model.train()
    with torch.no_grad():
        for _ in range(CALIBRATION_BATCHES):
            model(torch.randn((CALIBRATION_BATCH_SIZE,) + IMAGE_SHAPE, generator=generator))
    model.eval()


def build(constructor, seed: int) -> torch.nn.Module:
    torch.manual_seed(seed)
    model = constructor(weights=None)
    generator = torch.Generator().manual_seed(seed + 1)
    _randomize_batch_norm(model, generator)
    _calibrate(model, generator)
    return model


def resnet50(seed: int) -> torch.nn.Module:
    return build(torchvision.models.resnet50, seed)


def mobilenetv2(seed: int) -> torch.nn.Module:
    return build(torchvision.models.mobilenet_v2, seed)


def image_inputs(batch: int, seed: int) -> dict:
    """One batch of seeded images, normalized like ImageNet inputs (zero mean, unit variance)."""
    generator = torch.Generator().manual_seed(seed + 2)
    return {"input": torch.randn((batch,) + IMAGE_SHAPE, generator=generator)}
