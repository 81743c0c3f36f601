"""The measurement loop every Python peer runner shares: options, inputs, timing, outputs, JSON.

A runner (ort_runner.py, iree_runner.py, tvm_runner.py, torch_cpu.py) builds a `run_once()` callable
for an exported model and hands it to `measure()`, which does the warm-up and timed runs and writes
the same core fields as `kiln bench --json`:

    {"model", "device", "runtime", "compile_s", "latency_ms": {"p50", "p90", "p99", "min", "mean"},
     "throughput_per_s", "self_peak_memory_bytes", "threads", "warmup", "iterations", "samples_ms"}

`compile_s` is what the runner reports as its preparation (session creation, module load, the first
call of a just-in-time compiler). The process's peak resident set is measured by the harness from
the outside (ru_maxrss of the child); the runner adds its own VmHWM as `self_peak_memory_bytes`.
With --output-dir, the outputs of the last timed run are written as DIR/NAME.npy for the
correctness check.
"""

import argparse
import json
import sys
import time
from pathlib import Path


def argument_parser(description: str) -> argparse.ArgumentParser:
    """The options every runner takes; a runner may add its own."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("model_dir", type=Path,
                        help="an export from benchmarks/models/export.py (model.onnx, inputs/, meta.json)")
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--threads", type=int, default=0, help="intra-op threads (0: the runtime's default)")
    parser.add_argument("--max-seconds", type=float, default=0,
                        help="stop warming up after half this time and timing after this time, "
                             "once at least 1 warm-up and 3 timed runs are done, or 1 timed run "
                             "that alone took longer (0: no limit)")
    parser.add_argument("--json", type=Path, default=None, help="write the figures here (default: stdout)")
    parser.add_argument("--output-dir", type=Path, default=None,
                        help="write each output of the last run as DIR/NAME.npy")
    return parser


def check_counts(parser: argparse.ArgumentParser, args: argparse.Namespace) -> None:
    if args.iterations < 1 or args.warmup < 0:
        parser.error("--iterations must be positive and --warmup not negative")


def ahead_of_time_arguments(doc: str, program: str, compile_model, module_help: str):
    """The command line of a runner that compiles ahead of time (IREE, TVM).

    `PROGRAM compile MODEL_DIR -o OUT` calls compile_model(MODEL_DIR, OUT) and returns its exit
    code; `PROGRAM [run] MODEL_DIR --module OUT ...` returns the parsed measuring arguments (those of
    argument_parser, plus --module).
    """
    if len(sys.argv) > 1 and sys.argv[1] == "compile":
        parser = argparse.ArgumentParser(prog=f"{program} compile")
        parser.add_argument("model_dir", type=Path)
        parser.add_argument("-o", dest="output", type=Path, required=True)
        args = parser.parse_args(sys.argv[2:])
        return compile_model(args.model_dir, args.output.resolve())
    if len(sys.argv) > 1 and sys.argv[1] == "run":
        del sys.argv[1]
    parser = argument_parser(doc.split("\n\n")[0])
    parser.add_argument("--module", type=Path, required=True, help=module_help)
    args = parser.parse_args()
    check_counts(parser, args)
    return args


def load_meta(model_dir: Path) -> dict:
    return json.loads((model_dir / "meta.json").read_text())


def load_inputs(model_dir: Path) -> dict:
    """The export's seeded inputs, {name: numpy array}, in the model's argument order."""
    import numpy as np
    meta = load_meta(model_dir)
    return {entry["name"]: np.load(model_dir / "inputs" / f"{entry['name']}.npy")
            for entry in meta["inputs"]}


def self_peak_resident_bytes() -> int:
    """This process's peak resident set (VmHWM: unlike getrusage, not inherited across exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def time_runs(run_once, warmup: int, iterations: int, max_seconds: float) -> tuple:
    """Warm-up runs, then timed runs; returns (warm-ups done, samples in ms, last outputs)."""
    warmups = 0
    begin = time.perf_counter()
    while warmups < warmup:
        run_once()
        warmups += 1
        if max_seconds and time.perf_counter() - begin > max_seconds / 2:
            break
    samples = []
    outputs = None
    begin = time.perf_counter()
    while len(samples) < iterations:
        start = time.perf_counter()
        outputs = run_once()
        samples.append((time.perf_counter() - start) * 1e3)
        # Three timed runs at least; one when that run alone took longer than the limit.
        enough = len(samples) >= 3 or samples[0] > max_seconds * 1e3
        if max_seconds and enough and time.perf_counter() - begin > max_seconds:
            break
    return warmups, samples, outputs


def write_outputs(directory: Path, names: list, outputs: list) -> None:
    import numpy as np
    directory.mkdir(parents=True, exist_ok=True)
    if len(names) != len(outputs):
        raise RuntimeError(f"the model has {len(names)} outputs but the runtime returned {len(outputs)}")
    for name, value in zip(names, outputs):
        np.save(directory / f"{name}.npy", np.asarray(value))


def measure(args: argparse.Namespace, runtime: str, compile_s: float, run_once, threads: int,
            extra: dict = None) -> int:
    """Times `run_once` (which returns the outputs as a list of numpy arrays, in the model's
    output order) and writes the figures; returns the exit code."""
    import numpy as np
    meta = load_meta(args.model_dir)
    warmups, samples, outputs = time_runs(run_once, args.warmup, args.iterations, args.max_seconds)
    if args.output_dir:
        write_outputs(args.output_dir, [entry["name"] for entry in meta["outputs"]], outputs)
    ordered = np.array(samples)
    p50 = float(np.percentile(ordered, 50))
    result = {
        "model": meta["model"],
        "batch": meta["batch"],
        "device": "cpu",
        "runtime": runtime,
        "compile_s": compile_s,
        "latency_ms": {"p50": p50, "p90": float(np.percentile(ordered, 90)),
                       "p99": float(np.percentile(ordered, 99)), "min": float(ordered.min()),
                       "mean": float(ordered.mean())},
        "throughput_per_s": meta["batch"] * 1000.0 / p50,
        "self_peak_memory_bytes": self_peak_resident_bytes(),
        "threads": threads,
        "warmup": warmups,
        "iterations": len(samples),
        "samples_ms": samples,
        **(extra or {}),
    }
    text = json.dumps(result, indent=2) + "\n"
    if args.json:
        args.json.write_text(text)
    else:
        sys.stdout.write(text)
    return 0
