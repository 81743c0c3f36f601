#!/usr/bin/env python3
"""Steps, fusion groups and modeled bytes of every zoo model, for both targets.

Compiles each model (exported on first use by benchmarks/models/export.py, cached like the model
tests) with `kiln compile --report` for the CPU and for CUDA (no GPU needed) and reads

    fusion: K kernels from N ops (DEVICE device model...): B MiB moved, T us modeled (unfused: ...)
    program: S steps

and, from the step list, the steps of one transformer layer (from the first to the last step
whose ONNX nodes sit under `layers.1`, `h.1`, `layer.1`, `blocks.1`: the second layer, so that
the first layer's embedding and the last layer's outputs are not counted). Prints a table, writes it as JSON with
--json. With --cost-model (a name or a `kiln calibrate` file), the CPU compiles use that device
description; comparing two runs shows what a description changes.

    .venv/bin/python benchmarks/fusion.py --kiln build/bin/kiln [--json FILE] [--models ...]
        [--targets cpu cuda] [--cost-model FILE]
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ZOO = ["resnet50", "mobilenetv2", "bert", "gpt2", "regnet_y_400mf", "whisper_enc", "distilbert",
       "llama", "vit", "efficientnet_b0", "convnext_tiny"]
# Models without transformer layers: no steps per layer (their `blocks.1` is a stage).
CONVOLUTIONAL = {"resnet50", "mobilenetv2", "regnet_y_400mf", "efficientnet_b0", "convnext_tiny"}
FUSION = re.compile(r"fusion: (\d+) kernels from (\d+) ops \((.*)\): ([0-9.]+) MiB moved, "
                    r"([0-9.]+) us modeled \(unfused: ([0-9.]+) MiB, ([0-9.]+) us\)")
STEPS = re.compile(r"program: (\d+) steps")
STEP = re.compile(r"^\s+\d+ (kernel|library|copy|view)\b(.*)$")
SECOND_LAYER = re.compile(r"[/.](?:layers|h|layer|blocks|block)\.1[/.]")


def compile_report(kiln: Path, onnx: Path, target: str, scratch: Path,
                   cost_model: str | None) -> dict:
    artifact = scratch / f"{onnx.parent.name}-{target}.kiln"
    command = [str(kiln), "compile", str(onnx), "-o", str(artifact), "--target", target,
               "--force", "--report", "--quiet"]
    if target == "cuda":
        command += ["--gpu-arch", "sm_80"]
    if cost_model and target == "cpu":
        command += ["--cost-model", cost_model]
    completed = subprocess.run(command, capture_output=True, text=True)
    output = completed.stdout + completed.stderr
    if completed.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{output[-2000:]}")
    fusion, steps = FUSION.search(output), STEPS.search(output)
    if not fusion or not steps:
        raise RuntimeError(f"no fusion or step line in the report of {' '.join(command)}")
    kinds = {"kernel": 0, "library": 0}
    layer_steps = []
    for index, line in enumerate(line for line in output.splitlines() if STEP.match(line)):
        step = STEP.match(line)
        kinds[step.group(1)] = kinds.get(step.group(1), 0) + 1
        if SECOND_LAYER.search(step.group(2)):
            layer_steps.append(index)
    # The layer's span: a step without a node name of its own (a fused projection) in between
    # is the layer's too.
    layer = layer_steps[-1] - layer_steps[0] + 1 if layer_steps else 0
    return {"steps": int(steps.group(1)), "kernels": kinds["kernel"],
            "library_calls": kinds["library"], "steps_per_layer": layer or None,
            "fusion_groups": int(fusion.group(1)), "linalg_ops": int(fusion.group(2)),
            "device_model": fusion.group(3), "modeled_mib": float(fusion.group(4)),
            "modeled_us": float(fusion.group(5)), "unfused_mib": float(fusion.group(6)),
            "unfused_us": float(fusion.group(7))}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", type=Path, default=REPO / "build" / "bin" / "kiln")
    parser.add_argument("--models", nargs="+", default=ZOO)
    parser.add_argument("--targets", nargs="+", default=["cpu", "cuda"])
    parser.add_argument("--cost-model", help="kiln compile --cost-model for the CPU compiles")
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--cache", type=Path, help="the model cache (as export.py's)")
    args = parser.parse_args()

    sys.path.insert(0, str(REPO / "benchmarks" / "models"))
    import export

    results, failures = [], []
    print(f"{'model':16} {'target':6} {'steps':>5} {'kernels':>7} {'library':>7} "
          f"{'/layer':>6} {'MiB moved':>9} {'us modeled':>10}  device model", flush=True)
    with tempfile.TemporaryDirectory(prefix="kiln-fusion-") as scratch:
        for model in args.models:
            directory = export.ensure_exported(model, 1, cache=args.cache)
            for target in args.targets:
                try:
                    row = compile_report(args.kiln, directory / "model.onnx", target,
                                         Path(scratch), args.cost_model)
                except RuntimeError as error:
                    print(f"{model:16} {target:6} FAILED: {error}", flush=True)
                    failures.append(f"{model} ({target}): does not compile")
                    continue
                row.update(model=model, target=target)
                if model in CONVOLUTIONAL:
                    row["steps_per_layer"] = None
                results.append(row)
                per_layer = row["steps_per_layer"] or ""
                print(f"{model:16} {target:6} {row['steps']:5} {row['kernels']:7} "
                      f"{row['library_calls']:7} {per_layer:>6} {row['modeled_mib']:9.1f} "
                      f"{row['modeled_us']:10.1f}  {row['device_model']}", flush=True)
    if args.json:
        args.json.write_text(json.dumps({"cost_model": args.cost_model, "results": results},
                                        indent=2) + "\n")
    for failure in failures:
        print(f"fusion: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
