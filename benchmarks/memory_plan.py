#!/usr/bin/env python3
"""The static memory plan of every zoo model, for both targets: arena, lower bound, naive sum.

Compiles each model (exported on first use by benchmarks/models/export.py, cached like the model
tests) with `kiln compile --report` for the CPU and for CUDA (no GPU needed), and reads the
plan's line

    memory plan: arena A bytes (lower bound L, R x; without reuse N), constants C bytes

where L is the most bytes of intermediates live at one step (no arena can be smaller), and its
floor line

    memory floor: F bytes bound by step S (...) alone

where F is what the largest step binds at once (no order of the steps and no recomputation of
whole values plans less than F). Prints a
table, writes it as JSON with --json, and fails when a plan is above --max-ratio times its bound
(1.10 by default). Each compile's wall time and peak resident memory (from /usr/bin/time) are
recorded beside the plan, with that peak as a multiple of the model's weights (the artifact's
constants), and once the peak resident memory of `kiln --version`: what the process takes before
it reads a model (its code and libraries, LLVM's and MLIR's registrations).

With --rematerialize, each model is also compiled with `--memory-limit 1`, a limit no program
meets: the compile fails, saying the smallest arena recomputing values reached
(kiln-rematerialize), which is recorded beside the plan as how far a memory limit can go.

    .venv/bin/python benchmarks/memory_plan.py --kiln build/bin/kiln [--json FILE] [--models ...]
        [--rematerialize]
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
ZOO = ["resnet50", "mobilenetv2", "bert", "gpt2", "regnet_y_400mf", "whisper_enc", "distilbert",
       "llama", "vit", "efficientnet_b0", "convnext_tiny"]
FLOOR = re.compile(r"memory floor: (\d+) bytes bound by step \d+ \((.*)\) alone")
SMALLEST = re.compile(r"the smallest arena reached is [^(]*\((\d+) bytes")
PLAN = re.compile(r"memory plan: arena (\d+) bytes \(lower bound (\d+)(?:, [0-9.]+x)?; "
                  r"without reuse (\d+)\), constants (\d+) bytes")


def compile_plan(kiln: Path, onnx: Path, target: str, scratch: Path) -> dict:
    artifact = scratch / f"{onnx.parent.name}-{target}.kiln"
    command = [str(kiln), "compile", str(onnx), "-o", str(artifact), "--target", target,
               "--force", "--report"]
    if target == "cuda":
        command += ["--gpu-arch", "sm_80,sm_90"]
    timed = ["/usr/bin/time", "-f", "kiln-peak-rss-kib %M"] + command
    start = time.monotonic()
    completed = subprocess.run(timed, capture_output=True, text=True)
    seconds = time.monotonic() - start
    output = completed.stdout + completed.stderr
    if completed.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{output[-2000:]}")
    match = PLAN.search(output)
    rss = re.search(r"kiln-peak-rss-kib (\d+)", output)
    if not match:
        raise RuntimeError(f"no memory plan in the report of {' '.join(command)}")
    arena, bound, naive, constants = (int(group) for group in match.groups())
    floor = FLOOR.search(output)
    return {"arena": arena, "lower_bound": bound, "naive": naive, "constants": constants,
            "floor": int(floor.group(1)) if floor else None,
            "floor_step": floor.group(2) if floor else None,
            "ratio": arena / bound if bound else 1.0, "compile_s": round(seconds, 2),
            "peak_rss_bytes": int(rss.group(1)) * 1024 if rss else None}


def smallest_arena(kiln: Path, onnx: Path, target: str, scratch: Path) -> int:
    """The smallest arena recomputation reaches: the error of a compile under a 1-byte limit."""
    command = [str(kiln), "compile", str(onnx), "-o", str(scratch / "unreachable.kiln"),
               "--target", target, "--force", "--quiet", "--memory-limit", "1"]
    if target == "cuda":
        command += ["--gpu-arch", "sm_80,sm_90"]
    completed = subprocess.run(command, capture_output=True, text=True)
    match = SMALLEST.search(completed.stderr)
    if completed.returncode != 1 or not match:
        raise RuntimeError(f"{' '.join(command)} did not fail with the smallest arena:\n"
                           f"{completed.stderr[-2000:]}")
    return int(match.group(1))


def mib(value: int) -> str:
    return f"{value / 2**20:8.2f}"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", type=Path, default=REPO / "build" / "bin" / "kiln")
    parser.add_argument("--models", nargs="+", default=ZOO)
    parser.add_argument("--targets", nargs="+", default=["cpu", "cuda"])
    parser.add_argument("--json", type=Path, help="write the results here")
    parser.add_argument("--max-ratio", type=float, default=1.10,
                        help="fail when an arena is above this multiple of its lower bound")
    parser.add_argument("--cache", type=Path, help="the model cache (as export.py's)")
    parser.add_argument("--rematerialize", action="store_true",
                        help="also record the smallest arena a memory limit can reach")
    args = parser.parse_args()

    sys.path.insert(0, str(REPO / "benchmarks" / "models"))
    import export

    results, failures = [], []
    startup = subprocess.run(["/usr/bin/time", "-f", "kiln-peak-rss-kib %M", str(args.kiln),
                              "--version"], capture_output=True, text=True)
    startup_match = re.search(r"kiln-peak-rss-kib (\d+)", startup.stderr)
    startup_rss = int(startup_match.group(1)) * 1024 if startup_match else None
    if startup_rss:
        print(f"kiln --version: peak RSS {mib(startup_rss).strip()} MiB", flush=True)
    print(f"{'model':16} {'target':6} {'arena MiB':>10} {'bound MiB':>10} {'naive MiB':>10} "
          f"{'ratio':>6} {'compile s':>9} {'peak RSS MiB':>12} {'x weights':>9}"
          + f" {'floor MiB':>10}"
          + (f" {'recomputed MiB':>14} {'of arena':>8}" if args.rematerialize else ""),
          flush=True)
    with tempfile.TemporaryDirectory(prefix="kiln-plan-") as scratch:
        for model in args.models:
            directory = export.ensure_exported(model, 1, cache=args.cache)
            for target in args.targets:
                try:
                    plan = compile_plan(args.kiln, directory / "model.onnx", target, Path(scratch))
                except RuntimeError as error:
                    print(f"{model:16} {target:6} FAILED: {error}", flush=True)
                    failures.append(f"{model} ({target}): does not compile")
                    continue
                plan.update(model=model, target=target)
                rss = plan["peak_rss_bytes"]
                plan["peak_rss_per_weight"] = (round(rss / plan["constants"], 3)
                                               if rss and plan["constants"] else None)
                results.append(plan)
                weights = plan["peak_rss_per_weight"]
                smallest = ""
                if args.rematerialize:
                    try:
                        plan["smallest_with_limit"] = smallest_arena(
                            args.kiln, directory / "model.onnx", target, Path(scratch))
                        share = plan["smallest_with_limit"] / plan["arena"]
                        smallest = f" {mib(plan['smallest_with_limit']):>14} {share:8.1%}"
                    except RuntimeError as error:
                        failures.append(f"{model} ({target}): {error}")
                print(f"{model:16} {target:6} {mib(plan['arena']):>10} "
                      f"{mib(plan['lower_bound']):>10} {mib(plan['naive']):>10} "
                      f"{plan['ratio']:6.3f} {plan['compile_s']:9.2f} "
                      f"{(mib(rss) if rss else '?'):>12} "
                      f"{(f'{weights:9.2f}' if weights else '?'):>9} "
                      f"{(mib(plan['floor']) if plan['floor'] else '?'):>10}{smallest}", flush=True)
                if plan["ratio"] > args.max_ratio:
                    failures.append(f"{model} ({target}): arena {plan['ratio']:.3f}x its bound")
    if args.json:
        args.json.write_text(json.dumps({"max_ratio": args.max_ratio,
                                         "startup_rss_bytes": startup_rss, "results": results},
                                        indent=2) + "\n")
    for failure in failures:
        print(f"memory_plan: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
