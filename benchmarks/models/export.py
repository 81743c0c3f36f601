#!/usr/bin/env python3
"""Exports Kiln's real benchmark and test models to ONNX, with seeded inputs and PyTorch references.

    .venv/bin/python benchmarks/models/export.py MODEL [--batch N] [--seed S] [--cache DIR]
        [--exporter torchscript|dynamo] [--dynamic] [--force]

Run it with the project's environment (.venv, from scripts/requirements.txt). MODEL is one of
MODEL_NAMES (or `all`): the four original ones (resnet50, mobilenetv2, bert, gpt2) and the current
architectures of current.py. Each export lands in CACHE/MODEL-bN-EXPORTER/ (CACHE defaults to
${KILN_MODEL_CACHE:-$HOME/.cache/kiln/models}):

    model.onnx          the model, static shapes, fp32 weights: opset 17 from the TorchScript
                        exporter (torch.onnx.export(dynamo=False)), opset 18 from the dynamo
                        exporter (dynamo=True, which writes no opset below 18). With --dynamic
                        (into CACHE/MODEL-bN-EXPORTER-dynamic/) the batch axis of every input
                        and output and the sequence axis of token inputs stay dynamic, as
                        deployed exports declare them; the exporter then writes the shape
                        arithmetic on them into the graph (`kiln compile --shape` binds them)
    model.pt            the eager PyTorch module (torch.save), for the PyTorch benchmark runner
    inputs/NAME.npy     seeded inputs, one per model input
    reference/NAME.npy  PyTorch's fp32 outputs for those inputs, one per model output
    meta.json           inputs and outputs (names, shapes, dtypes), opset, seed, batch, torch
                        version, and the fingerprint the cache is keyed on

An export is skipped when meta.json's fingerprint matches: a hash of these scripts, the model's
parameters (name, batch, seed, exporter, opset) and the torch, torchvision, transformers, onnx
and onnxscript versions, so that a new exporter, opset or library version never reuses a stale
file. The directory's path is printed on stdout. Exports are written to a temporary directory and renamed into place, so an
interrupted export never leaves a half-written model that looks up to date.
"""

import argparse
import hashlib
import inspect
import json
import os
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

HERE = Path(__file__).resolve().parent
# The model definitions (and the modules model.pt pickles refer to) live beside this script.
sys.path.insert(0, str(HERE))
# The opset each exporter writes.
OPSETS = {"torchscript": 17, "dynamo": 18}
EXPORTERS = tuple(OPSETS)
DEFAULT_SEED = 1234


@dataclass(frozen=True)
class ModelSpec:
    """How one model is built: its seeded module, its seeded inputs, and its output names."""
    build: Callable  # (seed) -> torch.nn.Module in eval mode
    inputs: Callable  # (batch, seed) -> {name: torch.Tensor}, in the forward's argument order
    outputs: tuple


def model_specs() -> dict:
    # Imported here so that `--help` and the cache lookup work without torch.
    import current
    import language
    import vision
    return {
        "resnet50": ModelSpec(vision.resnet50, vision.image_inputs, ("logits",)),
        "mobilenetv2": ModelSpec(vision.mobilenetv2, vision.image_inputs, ("logits",)),
        "bert": ModelSpec(language.bert, language.bert_inputs,
                          ("last_hidden_state", "pooled_output")),
        "gpt2": ModelSpec(language.gpt2, language.gpt2_inputs, ("logits",)),
        "llama": ModelSpec(current.llama, current.llama_inputs, ("logits",)),
        "vit": ModelSpec(current.vit, current.image_inputs, ("last_hidden_state",)),
        "swin": ModelSpec(current.swin, current.image_inputs, ("last_hidden_state",)),
        "whisper_enc": ModelSpec(current.whisper_enc, current.whisper_inputs,
                                 ("last_hidden_state",)),
        "distilbert": ModelSpec(current.distilbert, current.distilbert_inputs,
                                ("last_hidden_state",)),
        "efficientnet_b0": ModelSpec(current.efficientnet_b0, vision.image_inputs, ("logits",)),
        "regnet_y_400mf": ModelSpec(current.regnet_y_400mf, vision.image_inputs, ("logits",)),
        "convnext_tiny": ModelSpec(current.convnext_tiny, vision.image_inputs, ("logits",)),
        "googlenet": ModelSpec(current.googlenet, vision.image_inputs, ("logits",)),
    }


MODEL_NAMES = ("resnet50", "mobilenetv2", "bert", "gpt2", "llama", "vit", "swin", "whisper_enc",
               "distilbert", "efficientnet_b0", "regnet_y_400mf", "convnext_tiny", "googlenet")


def default_cache() -> Path:
    env = os.environ.get("KILN_MODEL_CACHE")
    return Path(env) if env else Path.home() / ".cache" / "kiln" / "models"


def model_dir(name: str, batch: int, cache: Path, exporter: str = "torchscript",
              dynamic: bool = False) -> Path:
    return cache / f"{name}-b{batch}-{exporter}{'-dynamic' if dynamic else ''}"


def dynamic_axes(inputs: dict) -> dict:
    """The axes a dynamic export leaves open, per input: the batch (axis 0) of every input, and
    the sequence (axis 1) of token inputs (integer tensors of rank 2 or more)."""
    axes = {}
    for name, value in inputs.items():
        axes[name] = {0: "batch"}
        if value.dim() >= 2 and not value.is_floating_point():
            axes[name][1] = "sequence"
    return axes


def library_versions() -> dict:
    """The versions of the libraries an export depends on (None for one not installed)."""
    from importlib import metadata
    versions = {}
    for package in ("torch", "torchvision", "transformers", "onnx", "onnxscript"):
        try:
            versions[package] = metadata.version(package)
        except metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def fingerprint(name: str, batch: int, seed: int, exporter: str = "torchscript",
                dynamic: bool = False) -> str:
    digest = hashlib.sha256()
    for script in ("export.py", "vision.py", "language.py", "current.py"):
        digest.update((HERE / script).read_bytes())
    parameters = {"name": name, "batch": batch, "seed": seed, "exporter": exporter,
                  "opset": OPSETS[exporter], "dynamic": dynamic, **library_versions()}
    digest.update(json.dumps(parameters, sort_keys=True).encode())
    return digest.hexdigest()


def is_up_to_date(directory: Path, expected_fingerprint: str) -> bool:
    try:
        meta = json.loads((directory / "meta.json").read_text())
    except (OSError, ValueError):
        return False
    if meta.get("fingerprint") != expected_fingerprint:
        return False
    files = ["model.onnx", "model.pt"]
    files += [f"inputs/{entry['name']}.npy" for entry in meta["inputs"]]
    files += [f"reference/{entry['name']}.npy" for entry in meta["outputs"]]
    return all((directory / f).is_file() for f in files)


def _describe(name: str, array) -> dict:
    return {"name": name, "shape": list(array.shape), "dtype": str(array.dtype)}


def _write_export(name: str, batch: int, seed: int, destination: Path, stamp: str,
                  exporter: str, dynamic: bool = False) -> None:
    import numpy as np
    import torch

    spec = model_specs()[name]
    torch.manual_seed(seed)
    model = spec.build(seed)
    inputs = spec.inputs(batch, seed)
    with torch.no_grad():
        outputs = model(*inputs.values())
    if isinstance(outputs, torch.Tensor):
        outputs = (outputs,)
    assert len(outputs) == len(spec.outputs), f"{name}: {len(outputs)} outputs"

    (destination / "inputs").mkdir()
    (destination / "reference").mkdir()
    for input_name, value in inputs.items():
        np.save(destination / "inputs" / f"{input_name}.npy", value.numpy())
    for output_name, value in zip(spec.outputs, outputs):
        array = value.numpy()
        if not np.isfinite(array).all():
            raise RuntimeError(f"{name}: reference output '{output_name}' is not finite")
        np.save(destination / "reference" / f"{output_name}.npy", array)

    opset = OPSETS[exporter]
    if exporter == "dynamo":
        # torch.export traces the module; onnxscript's optimizer folds constants. The weights stay
        # inside model.onnx (external_data=False): the cache holds one self-contained file.
        shapes = None
        if dynamic:
            # Dim.AUTO: torch.export decides which of the marked axes stay symbolic (and which
            # equal each other); one entry per positional input, nested where the module takes
            # them as *inputs.
            shapes = tuple({axis: torch.export.Dim.AUTO for axis in axes}
                           for axes in dynamic_axes(inputs).values())
            parameters = list(inspect.signature(model.forward).parameters.values())
            if len(parameters) == 1 and parameters[0].kind == inspect.Parameter.VAR_POSITIONAL:
                shapes = (shapes,)
        program = torch.onnx.export(model, tuple(inputs.values()), dynamo=True,
                                    input_names=list(inputs), output_names=list(spec.outputs),
                                    opset_version=opset, optimize=True, dynamic_shapes=shapes)
        program.save(str(destination / "model.onnx"), external_data=False)
    else:
        legacy = ({"dynamo": False} if "dynamo" in inspect.signature(torch.onnx.export).parameters
                  else {})
        # Dynamic: the batch and sequence axes stay symbolic in the graph (the outputs' batch
        # too), and the exporter writes the shape arithmetic that depends on them.
        axes = None
        if dynamic:
            axes = dynamic_axes(inputs)
            axes.update({output: {0: "batch"} for output in spec.outputs})
        torch.onnx.export(model, tuple(inputs.values()), str(destination / "model.onnx"),
                          input_names=list(inputs), output_names=list(spec.outputs),
                          opset_version=opset, do_constant_folding=True, dynamic_axes=axes,
                          **legacy)
    torch.save(model, destination / "model.pt")

    meta = {
        "model": name,
        "batch": batch,
        "seed": seed,
        "exporter": exporter,
        "opset": opset,
        "dynamic": dynamic,
        **library_versions(),
        "inputs": [_describe(n, v.numpy()) for n, v in inputs.items()],
        "outputs": [_describe(n, v.numpy()) for n, v in zip(spec.outputs, outputs)],
        "reference_stats": {n: {"min": float(v.min()), "max": float(v.max()),
                                "mean_abs": float(v.abs().mean())}
                            for n, v in zip(spec.outputs, outputs)},
        "fingerprint": stamp,
    }
    (destination / "meta.json").write_text(json.dumps(meta, indent=2) + "\n")


def ensure_exported(name: str, batch: int = 1, seed: int = DEFAULT_SEED, cache: Path = None,
                    force: bool = False, log=sys.stderr, exporter: str = "torchscript",
                    dynamic: bool = False) -> Path:
    """Returns the directory holding an up-to-date export of the model, exporting it if needed."""
    if name not in MODEL_NAMES:
        raise ValueError(f"unknown model '{name}' (known: {', '.join(MODEL_NAMES)})")
    if exporter not in EXPORTERS:
        raise ValueError(f"unknown exporter '{exporter}' (known: {', '.join(EXPORTERS)})")
    if batch < 1:
        raise ValueError("batch must be at least 1")
    cache = Path(cache) if cache else default_cache()
    directory = model_dir(name, batch, cache, exporter, dynamic)
    stamp = fingerprint(name, batch, seed, exporter, dynamic)
    if not force and is_up_to_date(directory, stamp):
        return directory

    cache.mkdir(parents=True, exist_ok=True)
    print(f"export: {name} (batch {batch}, seed {seed}, {exporter} exporter"
          f"{', dynamic axes' if dynamic else ''}) -> {directory}", file=log, flush=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{directory.name}-", dir=cache))
    staging.chmod(0o755)
    try:
        _write_export(name, batch, seed, staging, stamp, exporter, dynamic)
        if directory.exists():
            shutil.rmtree(directory)
        os.replace(staging, directory)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return directory


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", choices=MODEL_NAMES + ("all",))
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--seed", type=int, default=DEFAULT_SEED)
    parser.add_argument("--cache", type=Path, default=None,
                        help="cache directory (default: $KILN_MODEL_CACHE or ~/.cache/kiln/models)")
    parser.add_argument("--exporter", choices=EXPORTERS, default="torchscript")
    parser.add_argument("--dynamic", action="store_true",
                        help="leave the batch (and token inputs' sequence) axes dynamic")
    parser.add_argument("--force", action="store_true", help="export even when up to date")
    args = parser.parse_args()
    names = MODEL_NAMES if args.model == "all" else (args.model,)
    for name in names:
        print(ensure_exported(name, args.batch, args.seed, args.cache, args.force,
                              exporter=args.exporter, dynamic=args.dynamic))
    return 0

if __name__ == "__main__":
    sys.exit(main())
