#!/usr/bin/env python3
"""Measures Kiln on an NVIDIA GPU next to PyTorch eager, torch.compile and ONNX Runtime.

    benchmarks/run --device cuda [--models M,...] [--batches 1,32] [--dtypes fp32,fp16]
        [--modes eager,compile,max-autotune] [--kiln PATH] [--json FILE]

For each model and batch (ResNet-50 also at 256): export it (cached), then in turn
  - Kiln: `kiln bench MODEL.onnx --device cuda` (compiled for the GPU first; fp32: Kiln compiles
    the model's own precision),
  - PyTorch: benchmarks/runners/torch_cuda.py, every --modes entry in every --dtypes entry,
  - ONNX Runtime: the `onnxruntime` package's CUDA execution provider, when it has one,
and the case's roofline floor (benchmarks/runners/roofline.py: FLOPs over the measured peak matrix
rate, minimal bytes over the measured bandwidth) with each runtime's fraction of it. Writes every
figure, the device, date, commit and commands to --json (default
benchmarks/results/<machine>-cuda-<date>.json) and prints a table.
"""

import argparse
import datetime
import json
import os
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(HERE.parent / "models"))

import export  # noqa: E402  (found through the path set above)
from harness import run_command  # noqa: E402  (beside this file)


def run(command: list, commands: list) -> dict:
    """harness.run_command, printing the command first."""
    command = [str(c) for c in command]
    print("gpu_harness: " + shlex.join(command), flush=True)
    return run_command(command, commands)


def device_figures(kiln_json: Path, name: str) -> list:
    """The `--result` spec of Kiln's device-only figures (`kiln bench`'s device_latency_ms: the
    steps alone, inputs and outputs left on the GPU, as PyTorch's CUDA events time its module),
    written beside `kiln_json`; empty when the run has none."""
    figures = json.loads(kiln_json.read_text())
    if "device_latency_ms" not in figures:
        return []
    device = {"latency_ms": figures["device_latency_ms"], "dtype": figures.get("dtype", "fp32")}
    path = kiln_json.with_name(kiln_json.stem + "-device.json")
    path.write_text(json.dumps(device))
    return [f"{name}={path}"]


def ort_case(directory: Path, warmup: int, iterations: int):
    """ONNX Runtime on its CUDA execution provider, or None when it has none."""
    try:
        import numpy as np
        import onnxruntime as ort
    except ImportError:
        return None
    if "CUDAExecutionProvider" not in ort.get_available_providers():
        return None
    meta = json.loads((directory / "meta.json").read_text())
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    start = time.perf_counter()
    session = ort.InferenceSession(str(directory / "model.onnx"), options,
                                   providers=["CUDAExecutionProvider"])
    compile_s = time.perf_counter() - start
    feeds = {e["name"]: np.load(directory / "inputs" / f"{e['name']}.npy") for e in meta["inputs"]}
    for _ in range(warmup):
        session.run(None, feeds)
    samples = []
    for _ in range(iterations):
        start = time.perf_counter()
        session.run(None, feeds)
        samples.append((time.perf_counter() - start) * 1e3)
    return {"peer": "onnxruntime-cuda", "dtype": "fp32", "compile_s": compile_s,
            "latency_ms": {"p50": statistics.median(samples), "min": min(samples),
                           "max": max(samples)}, "samples_ms": samples}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", default="cuda", choices=["cuda"])
    parser.add_argument("--models", default="resnet50,mobilenetv2,bert,gpt2")
    parser.add_argument("--batches", default="1,32",
                        help="comma-separated batches (ResNet-50 adds 256 unless --batches is given)")
    parser.add_argument("--dtypes", default="fp32,fp16")
    parser.add_argument("--modes", default="eager,compile,max-autotune")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--kiln", type=Path, default=Path(os.environ.get("KILN", ROOT / "build/bin/kiln")))
    parser.add_argument("--cache", type=Path, default=None)
    parser.add_argument("--machine", default=None)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args(sys.argv[1:])
    explicit_batches = any(a.startswith("--batches") for a in sys.argv[1:])

    try:
        device_name = subprocess.run(["nvidia-smi", "--query-gpu=name", "--format=csv,noheader"],
                                     capture_output=True, text=True).stdout.strip().splitlines()[0]
    except (OSError, IndexError):
        device_name = "unknown GPU"
    machine = args.machine or device_name.lower().replace("nvidia ", "").split()[0]
    date = datetime.date.today().isoformat()
    output = args.json or ROOT / "benchmarks" / "results" / f"{machine}-cuda-{date}.json"
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "HEAD"], capture_output=True,
                            text=True).stdout.strip() or "unknown"
    results = {"machine": machine, "device": device_name, "date": date, "commit": commit,
               "command": "benchmarks/run " + " ".join(sys.argv[1:]), "commands": [], "cases": []}

    with tempfile.TemporaryDirectory(prefix="kiln-gpu-bench-") as scratch:
        scratch = Path(scratch)
        for model in args.models.split(","):
            batches = [int(b) for b in args.batches.split(",")]
            if model == "resnet50" and not explicit_batches:
                batches.append(256)
            for batch in batches:
                directory = export.ensure_exported(model, batch, cache=args.cache)
                files = []
                kiln_json = scratch / f"kiln-{model}-b{batch}.json"
                outcome = run([args.kiln, "bench", directory / "model.onnx", "--device", "cuda",
                               "--warmup", args.warmup, "--iterations", args.iterations,
                               "--json", kiln_json, "--force"], results["commands"])
                if outcome["returncode"] == 0:
                    files.append(f"kiln={kiln_json}")
                    files += device_figures(kiln_json, "kiln-device")
                else:
                    results["cases"].append({"model": model, "batch": batch, "runtime": "kiln",
                                             "error": outcome["output"]})
                # fp16 beside PyTorch's fp16: Kiln converts the fp32 model (--precision fp16);
                # --keep-io-types keeps its inputs and outputs fp32, a cast at each end that
                # PyTorch's fp16 case, fed fp16 tensors, does not pay.
                if "fp16" in args.dtypes.split(","):
                    half_json = scratch / f"kiln-fp16-{model}-b{batch}.json"
                    outcome = run([args.kiln, "bench", directory / "model.onnx", "--device", "cuda",
                                   "--precision", "fp16", "--keep-io-types",
                                   "--warmup", args.warmup, "--iterations", args.iterations,
                                   "--json", half_json, "--force"], results["commands"])
                    if outcome["returncode"] == 0:
                        figures = json.loads(half_json.read_text())
                        figures["dtype"] = "fp16"
                        half_json.write_text(json.dumps(figures))
                        files.append(f"kiln-fp16={half_json}")
                        files += device_figures(half_json, "kiln-fp16-device")
                    else:
                        results["cases"].append({"model": model, "batch": batch,
                                                 "runtime": "kiln-fp16",
                                                 "error": outcome["output"]})
                torch_json = scratch / f"torch-{model}-b{batch}.json"
                outcome = run([sys.executable, HERE / "torch_cuda.py", directory, "--modes",
                               args.modes, "--dtypes", args.dtypes, "--warmup", args.warmup,
                               "--iterations", args.iterations, "--json", torch_json],
                              results["commands"])
                if outcome["returncode"] == 0:
                    files.append(f"torch={torch_json}")
                else:
                    results["cases"].append({"model": model, "batch": batch, "runtime": "torch",
                                             "error": outcome["output"]})
                ort = ort_case(directory, args.warmup, args.iterations)
                if ort:
                    ort_json = scratch / f"ort-{model}-b{batch}.json"
                    ort_json.write_text(json.dumps(ort))
                    files.append(f"ort={ort_json}")
                roof_json = scratch / f"roofline-{model}-b{batch}.json"
                command = [sys.executable, HERE / "roofline.py", "--device", "cuda", "--model",
                           directory / "model.onnx", "--json", roof_json]
                for spec in files:
                    command += ["--result", spec]
                outcome = run(command, results["commands"])
                print(outcome["output"], end="", flush=True)
                if outcome["returncode"] != 0:
                    continue
                roofline = json.loads(roof_json.read_text())
                results.setdefault("peaks", roofline["peaks"])
                for case in roofline["cases"]:
                    case.update({"model": model, "batch": batch, "flops": roofline["flops"],
                                 "minimal_bytes": roofline["minimal_bytes"]})
                    results["cases"].append(case)
                for spec in files:
                    name, _, path = spec.partition("=")
                    results.setdefault("raw", {})[f"{name}-{model}-b{batch}"] = json.loads(
                        Path(path).read_text())

    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(results, indent=1) + "\n")
    print(f"\n| model | batch | case | p50 (ms) | roofline floor (ms) | fraction |")
    print("| --- | ---: | --- | ---: | ---: | ---: |")
    for case in results["cases"]:
        if "p50_ms" in case:
            print(f"| {case['model']} | {case['batch']} | {case['case']} | {case['p50_ms']:.3f} "
                  f"| {case['floor_ms']:.3f} | {case['fraction_of_roofline']:.2f} |")
        else:
            print(f"| {case['model']} | {case['batch']} | {case['runtime']} | failed | | |")
    print(f"gpu_harness: wrote {output}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
