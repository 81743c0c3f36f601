#!/usr/bin/env python3
"""Mixed precision on the zoo's models: accuracy against fp32, weights, latency, both targets.

For each (model, precision) pair (ResNet-50 and MobileNetV2 in fp16 and bf16, BERT and GPT-2 in
fp16 by default) the model (exported on first use by benchmarks/models/export.py) is compiled
for the CPU twice with `--keep-io-types`, in fp32 and in the low precision, and both artifacts
run on the same seeded inputs:

- classifiers: --images seeded images (standard normal, 1x3x224x224); the top-1 class of each
  image in the low precision against fp32's (the agreement), and the largest logit difference,
  beside PyTorch's own fp16/bf16 (model.pt cast with .half() or .bfloat16()) on the same images:
  the zoo's weights are seeded, not trained, so many images have nearly equal top logits and
  flip under any low precision;
- language models: --sequences seeded token sequences (the export's inputs first); every
  output element within |low - fp32| <= atol + rtol·|fp32| (--rtol, --atol: 1e-2), the largest
  error, and for GPT-2 the agreement of the next-token arg max at every position;
- every output checked for NaN and infinity.

Beside the accuracy: the constants (weights) of both artifacts from `--report`, the program's
steps, and `kiln bench` latency of both (the CPU's speed is recorded, not a goal). With --cuda,
the low-precision model is also compiled for CUDA (cubins for sm_80 and sm_90, and the simulated
device's code object) and its first input run on the simulated CUDA device, against the CPU's
low-precision result.

Exits 1 when an output is not finite, a language model misses the tolerance, a classifier's
agreement is under --min-top1, or under PyTorch's own by more than the noise of the sample: one
standard error of the difference of two agreement rates over n images, sqrt(0.5 / n) (22 points
for 10 images, 7 for 100), and at least 3 points. The seeded models' logits are nearly flat, so
each image is close to a coin flip for both.

    .venv/bin/python benchmarks/precision.py --kiln build/bin/kiln [--json FILE]
        [--cases resnet50:fp16 ...] [--images 100] [--sequences 8] [--cuda]
"""

import argparse
import json
import math
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

try:
    import numpy as np
except ImportError:  # the project's .venv is missing: the ctest model_precision skips
    print("precision.py: numpy is not installed (run scripts/install-deps.sh --models)",
          file=sys.stderr)
    sys.exit(77)

REPO = Path(__file__).resolve().parents[1]
DEFAULT_CASES = ["resnet50:fp16", "resnet50:bf16", "mobilenetv2:fp16", "mobilenetv2:bf16",
                 "bert:fp16", "gpt2:fp16"]
CLASSIFIERS = {"resnet50", "mobilenetv2", "regnet_y_400mf", "efficientnet_b0", "convnext_tiny",
               "googlenet", "vit"}
PLAN = re.compile(r"memory plan: arena (\d+) bytes .*constants (\d+) bytes")
STEPS = re.compile(r"^program: (\d+) steps", re.M)


def run(command, **kwargs):
    completed = subprocess.run([str(part) for part in command], capture_output=True, text=True,
                               **kwargs)
    if completed.returncode != 0:
        raise RuntimeError(f"{' '.join(map(str, command))} failed:\n"
                           f"{(completed.stdout + completed.stderr)[-3000:]}")
    return completed.stdout + completed.stderr


def compile_model(kiln, onnx, output, precision, target="cpu"):
    command = [kiln, "compile", onnx, "-o", output, "--force", "--quiet", "--report",
               "--keep-io-types", "--target", target]
    if precision != "fp32":
        command += ["--precision", precision]
    if target == "cuda":
        command += ["--gpu-arch", "sm_80,sm_90,cuda-sim"]
    start = time.monotonic()
    report = run(command)
    seconds = time.monotonic() - start
    plan = PLAN.search(report)
    steps = STEPS.search(report)
    low = len(re.findall(rf"^\s+\d+\s+{precision}\s", report, re.M)) if precision != "fp32" else 0
    candidates = re.search(r"precision: \w+, (\d+) candidate ops", report)
    return {"compile_seconds": round(seconds, 2), "arena": int(plan.group(1)),
            "constants": int(plan.group(2)), "steps": int(steps.group(1)),
            "low_ops": low, "candidates": int(candidates.group(1)) if candidates else None,
            "artifact_bytes": Path(output).stat().st_size}


def run_model(kiln, artifact, inputs: dict, scratch: Path, device="cpu"):
    """Runs `artifact` on `inputs` (name -> array); returns name -> array."""
    arguments = []
    for name, array in inputs.items():
        path = scratch / f"in-{name}.npy"
        np.save(path, array)
        arguments += ["--input", f"{name}=@{path}"]
    out = scratch / "out"
    run([kiln, "run", artifact, "--device", device, "--output-dir", out, "--force"] + arguments)
    return {path.stem: np.load(path) for path in out.glob("*.npy")}


def bench(kiln, artifact, scratch: Path):
    report = scratch / "bench.json"
    run([kiln, "bench", artifact, "--iterations", "20", "--warmup", "3", "--json", report,
         "--force"])
    return round(json.loads(report.read_text())["latency_ms"]["p50"], 2)


def torch_reference(directory: Path, precision: str, images):
    """PyTorch's own low precision on the same images (model.pt cast with .half() or
    .bfloat16()): its top-1 agreement with its fp32 and its largest logit difference."""
    import copy

    import torch
    model = torch.load(directory / "model.pt", weights_only=False).eval()
    dtype = torch.float16 if precision == "fp16" else torch.bfloat16
    low = copy.deepcopy(model).to(dtype)
    agreeing, worst = 0, 0.0
    with torch.no_grad():
        for image in images:
            x = torch.from_numpy(image)
            reference = model(x)
            got = low(x.to(dtype)).float()
            agreeing += int(reference.argmax() == got.argmax())
            worst = max(worst, float((got - reference).abs().max()))
    return {"top1_agreement": agreeing / len(images), "max_abs_error": worst}


def samples(model: str, meta: dict, directory: Path, count: int, seed: int):
    rng = np.random.default_rng(seed)
    if model in CLASSIFIERS:
        shape = meta["inputs"][0]["shape"]
        for _ in range(count):
            yield {meta["inputs"][0]["name"]: rng.standard_normal(shape).astype(np.float32)}
        return
    given = {spec["name"]: np.load(directory / "inputs" / f"{spec['name']}.npy")
             for spec in meta["inputs"]}
    yield given
    for _ in range(count - 1):
        sample = {}
        for name, array in given.items():
            if name == "input_ids":
                sample[name] = rng.integers(0, 1000, array.shape, dtype=array.dtype)
            else:
                sample[name] = array.copy()
        yield sample


def compare(model, low, fp32, rtol, atol, record):
    finite = all(np.isfinite(array).all() for array in low.values())
    record["finite"] = record.get("finite", True) and bool(finite)
    for name, reference in fp32.items():
        got = low[name]
        error = np.abs(got.astype(np.float64) - reference)
        record["max_abs_error"] = max(record.get("max_abs_error", 0.0), float(error.max()))
        record["max_abs_reference"] = max(record.get("max_abs_reference", 0.0),
                                          float(np.abs(reference).max()))
        excess = error - (atol + rtol * np.abs(reference))
        record["within_tolerance"] = record.get("within_tolerance", True) and bool(
            (excess <= 0).all())
        if model in CLASSIFIERS or model == "gpt2":
            rows_low = got.reshape(-1, got.shape[-1]).argmax(axis=1)
            rows_ref = reference.reshape(-1, reference.shape[-1]).argmax(axis=1)
            record["rows"] = record.get("rows", 0) + int(rows_ref.size)
            record["agreeing"] = record.get("agreeing", 0) + int((rows_low == rows_ref).sum())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--kiln", type=Path, default=REPO / "build" / "bin" / "kiln")
    parser.add_argument("--cases", nargs="+", default=DEFAULT_CASES, help="MODEL:PRECISION")
    parser.add_argument("--images", type=int, default=100)
    parser.add_argument("--sequences", type=int, default=8)
    parser.add_argument("--rtol", type=float, default=1e-2)
    parser.add_argument("--atol", type=float, default=1e-2)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--cuda", action="store_true", help="also compile for CUDA and run on "
                        "the simulated CUDA device")
    parser.add_argument("--no-torch", action="store_true", help="skip PyTorch's own fp16/bf16 "
                        "on the classifiers (model.pt .half() / .bfloat16(), same images)")
    parser.add_argument("--min-top1", type=float, default=0.0, help="fail when a case's top-1 "
                        "agreement is below this (and below PyTorch's own by more than the "
                        "sample's noise, see above, fails too)")
    parser.add_argument("--cache", type=Path, help="the model cache (as export.py's)")
    parser.add_argument("--json", type=Path, help="write the results here")
    args = parser.parse_args()
    sys.path.insert(0, str(REPO / "benchmarks" / "models"))
    import export

    results = []
    with tempfile.TemporaryDirectory(prefix="kiln-precision-") as temporary:
        scratch = Path(temporary)
        compiled = {}
        for case in args.cases:
            model, precision = case.split(":")
            directory = export.ensure_exported(model, 1, cache=args.cache)
            onnx = directory / "model.onnx"
            meta = json.loads((directory / "meta.json").read_text())
            if model not in compiled:
                artifact = scratch / f"{model}-fp32.kiln"
                compiled[model] = (artifact, compile_model(args.kiln, onnx, artifact, "fp32"))
            fp32_artifact, fp32_info = compiled[model]
            low_artifact = scratch / f"{model}-{precision}.kiln"
            low_info = compile_model(args.kiln, onnx, low_artifact, precision)
            record = {"model": model, "precision": precision, "fp32": fp32_info,
                      "low": low_info}
            count = args.images if model in CLASSIFIERS else args.sequences
            first_low = first_input = None
            images = []
            for index, sample in enumerate(samples(model, meta, directory, count, args.seed)):
                fp32 = run_model(args.kiln, fp32_artifact, sample, scratch)
                low = run_model(args.kiln, low_artifact, sample, scratch)
                compare(model, low, fp32, args.rtol, args.atol, record)
                if index == 0:
                    first_low, first_input = low, sample
                if model in CLASSIFIERS:
                    images.append(next(iter(sample.values())))
                print(f"\r{model} {precision}: {index + 1}/{count}", end="", file=sys.stderr,
                      flush=True)
            print(file=sys.stderr)
            record["samples"] = count
            if "rows" in record:
                record["top1_agreement"] = record["agreeing"] / record["rows"]
            if model in CLASSIFIERS and not args.no_torch:
                record["pytorch"] = torch_reference(directory, precision, images)
            record["fp32_latency_ms"] = bench(args.kiln, fp32_artifact, scratch)
            record["low_latency_ms"] = bench(args.kiln, low_artifact, scratch)
            if args.cuda:
                cuda_artifact = scratch / f"{model}-{precision}-cuda.kiln"
                record["cuda"] = compile_model(args.kiln, onnx, cuda_artifact, precision, "cuda")
                simulated = run_model(args.kiln, cuda_artifact, first_input, scratch, "cuda-sim")
                record["cuda"]["sim_vs_cpu_max_abs"] = max(
                    float(np.abs(simulated[name].astype(np.float64) - first_low[name]).max())
                    for name in first_low)
                record["cuda"]["sim_finite"] = all(
                    bool(np.isfinite(array).all()) for array in simulated.values())
            results.append(record)
            agreement = record.get("top1_agreement")
            print(f"{model:12} {precision}: "
                  + (f"top-1 {agreement:.1%} " if agreement is not None else "")
                  + (f"(PyTorch's own {precision}: {record['pytorch']['top1_agreement']:.1%}, max "
                     f"|err| {record['pytorch']['max_abs_error']:.3g}) " if "pytorch" in record
                     else "")
                  + f"max |err| {record['max_abs_error']:.3g} (max |fp32| "
                  f"{record['max_abs_reference']:.3g}), within rtol/atol "
                  f"{record['within_tolerance']}, finite {record['finite']}; weights "
                  f"{fp32_info['constants'] / 2**20:.1f} -> {low_info['constants'] / 2**20:.1f} MiB;"
                  f" {low_info['low_ops']}/{low_info['candidates']} ops low; latency "
                  f"{record['fp32_latency_ms']} -> {record['low_latency_ms']} ms"
                  + (f"; cuda-sim vs CPU {record['cuda']['sim_vs_cpu_max_abs']:.3g}"
                     if args.cuda else ""))
    if args.json:
        args.json.write_text(json.dumps({"cases": results, "rtol": args.rtol, "atol": args.atol,
                                         "seed": args.seed}, indent=1) + "\n")
    failed = [f"{r['model']}:{r['precision']}" for r in results
              if not r["finite"]
              or r.get("top1_agreement", 1.0) < args.min_top1
              or ("pytorch" in r and r["top1_agreement"]
                  < r["pytorch"]["top1_agreement"] - max(0.03, math.sqrt(0.5 / r["rows"])))
              or (r["model"] not in CLASSIFIERS and not r["within_tolerance"])]
    if failed:
        print(f"precision.py: out of bounds: {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
