#!/usr/bin/python3
"""Measures Kiln next to ONNX Runtime and PyTorch (eager) on the CPU, on the same models and inputs.

Run it as `benchmarks/run [options]` (see --help). For each model: export it (cached), compile it
with `kiln compile --target cpu` (timed), then run ROUNDS rounds; each round runs every runtime once,
in turn (kiln, ort, torch), as its own process with WARMUP untimed and ITERATIONS timed
inferences, so that load on a shared machine drifts over all runtimes alike instead of biasing one.
A runtime's figure is the median over rounds of each round's figure; ratios are Kiln's median
latency over the peer's (below 1: Kiln is faster). Results go to
benchmarks/results/<machine>-<date>.json with the machine, date, commit, every command and every
figure; then docs/benchmarks.md's table and the plot are regenerated from that file (report.py).

When the kiln executable is missing, or lacks `compile`/`bench`, the peers are measured alone and
Kiln's figures are recorded as missing with the reason.
"""

import argparse
import datetime
import json
import os
import platform
import re
import shlex
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO / "benchmarks" / "models"))

import export  # noqa: E402  (found through the path set above)

RUNTIMES = ("kiln", "ort", "torch")
COMMAND_TIMEOUT_S = 1800


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def machine_info() -> dict:
    cpu = platform.processor() or platform.machine()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    memory_bytes = None
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                memory_bytes = int(line.split()[1]) * 1024
    except OSError:
        pass
    os_name = platform.system()
    try:
        fields = dict(line.split("=", 1) for line in Path("/etc/os-release").read_text().splitlines()
                      if "=" in line)
        os_name = fields.get("PRETTY_NAME", os_name).strip('"')
    except OSError:
        pass
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
    return {"hostname": socket.gethostname(), "cpu": cpu, "cores": cores,
            "memory_bytes": memory_bytes, "os": os_name, "kernel": platform.release()}


def git_commit() -> dict:
    def git(*args):
        return subprocess.run(["git", "-C", str(REPO), *args], capture_output=True, text=True)
    head = git("rev-parse", "HEAD")
    dirty = git("diff", "--quiet", "HEAD", "--")
    return {"commit": head.stdout.strip() if head.returncode == 0 else None,
            "dirty": dirty.returncode == 1}


def run_command(command: list, log: list, timeout: int = COMMAND_TIMEOUT_S) -> dict:
    """Runs a command, records it in `log`, and returns its exit code, wall time and output tail."""
    log.append(shlex.join(command))
    start = time.monotonic()
    try:
        completed = subprocess.run(command, capture_output=True, text=True, timeout=timeout)
        code, output = completed.returncode, completed.stdout + completed.stderr
    except subprocess.TimeoutExpired as error:
        code, output = None, f"timed out after {timeout} s\n{error.stdout or ''}{error.stderr or ''}"
    except OSError as error:
        code, output = None, str(error)
    return {"returncode": code, "wall_s": time.monotonic() - start, "output": output[-2000:]}


def kiln_capabilities(kiln: Path) -> tuple:
    """Whether `kiln compile` and `kiln bench` exist; the reason when they do not."""
    shown = kiln.relative_to(REPO) if kiln.is_relative_to(REPO) else kiln
    if not kiln.is_file():
        return False, f"no kiln executable at {shown}"
    listing = subprocess.run([str(kiln), "--help"], capture_output=True, text=True).stdout
    subcommands = set()
    if "Subcommands:" in listing:
        for line in listing.split("Subcommands:", 1)[1].splitlines():
            if line.strip():
                subcommands.add(line.split()[0])
    for needed in ("compile", "bench"):
        if needed not in subcommands:
            return False, f"`kiln {needed}` is not available in {shown}"
    return True, None


def summarize(rounds: list) -> dict:
    """Medians over rounds of each round's latency percentiles, throughput and peak memory."""
    def median_of(key, sub=None):
        values = [r[key][sub] if sub else r[key] for r in rounds
                  if (r.get(key) if sub is None else r.get(key, {}).get(sub)) is not None]
        return statistics.median(values) if values else None
    return {
        "latency_ms": {q: median_of("latency_ms", q) for q in ("p50", "p90", "p99")},
        "round_p50_ms": [r["latency_ms"]["p50"] for r in rounds],
        "throughput_per_s": median_of("throughput_per_s"),
        "peak_memory_bytes": max((r.get("peak_memory_bytes") or 0 for r in rounds), default=None),
    }


class ModelBenchmark:
    """The commands measuring one model on each runtime, and their results."""

    def __init__(self, name, directory, args, scratch, commands):
        self.name = name
        self.directory = directory
        self.args = args
        self.scratch = scratch
        self.commands = commands
        self.meta = json.loads((directory / "meta.json").read_text())
        self.result = {"batch": self.meta["batch"],
                       "inputs": self.meta["inputs"], "outputs": self.meta["outputs"]}
        self.kiln_model = None

    def compile_kiln(self, kiln: Path) -> None:
        artifact = self.scratch / f"{self.name}.kiln"
        outcome = run_command([str(kiln), "compile", str(self.directory / "model.onnx"),
                               "-o", str(artifact), "--target", "cpu"], self.commands)
        entry = {"compile_s": outcome["wall_s"], "rounds": []}
        if outcome["returncode"] != 0 or not artifact.is_file():
            entry["compile_s"] = None
            entry["error"] = f"kiln compile failed (exit {outcome['returncode']}): {outcome['output']}"
        else:
            entry["artifact_bytes"] = artifact.stat().st_size
            self.kiln_model = artifact
        # The CUDA target's compile time too (kernels to sm_80/sm_90 cubins with ptxas, and PTX):
        # it needs the CUDA toolkit, not a GPU.
        if shutil.which("ptxas") or Path("/usr/local/cuda/bin/ptxas").exists():
            cuda_artifact = self.scratch / f"{self.name}.cuda.kiln"
            cuda = run_command([str(kiln), "compile", str(self.directory / "model.onnx"),
                                "-o", str(cuda_artifact), "--target", "cuda",
                                "--gpu-arch", "sm_80,sm_90"], self.commands)
            entry["compile_cuda_s"] = cuda["wall_s"] if cuda["returncode"] == 0 else None
        self.result["kiln"] = entry

    def command_for(self, runtime: str, kiln: Path, json_path: Path) -> list:
        a = self.args
        if runtime == "kiln":
            return [str(kiln), "bench", str(self.kiln_model), "--device", "cpu",
                    "--warmup", str(a.warmup), "--iterations", str(a.iterations),
                    "--json", str(json_path)]
        if runtime == "ort":
            command = [a.node, str(HERE / "ort.mjs"), "--model", str(self.directory / "model.onnx"),
                       "--inputs", str(self.directory / "inputs"), "--warmup", str(a.warmup),
                       "--iterations", str(a.iterations), "--json", str(json_path)]
        else:
            command = [sys.executable, str(HERE / "torch_eager.py"), str(self.directory),
                       "--warmup", str(a.warmup), "--iterations", str(a.iterations),
                       "--json", str(json_path)]
        if a.max_seconds:
            command += ["--max-seconds", str(a.max_seconds)]
        return command + ["--threads", str(a.threads)] if a.threads else command

    def measure(self, runtime: str, round_index: int, kiln: Path) -> None:
        entry = self.result.setdefault(runtime, {"rounds": []})
        if "error" in entry:
            return  # A runtime that failed once is not retried in later rounds.
        json_path = self.scratch / f"{self.name}-{runtime}-{round_index}.json"
        outcome = run_command(self.command_for(runtime, kiln, json_path), self.commands)
        if outcome["returncode"] != 0 or not json_path.is_file():
            entry["error"] = f"exit {outcome['returncode']}: {outcome['output']}"
            print(f"  {runtime}: FAILED ({entry['error'].strip().splitlines()[-1:]})", flush=True)
            return
        figures = json.loads(json_path.read_text())
        figures.pop("samples_ms", None)
        entry["rounds"].append(figures)
        print(f"  round {round_index + 1}: {runtime:5s} p50 {figures['latency_ms']['p50']:9.2f} ms",
              flush=True)

    def finish(self, runtimes) -> dict:
        for runtime in runtimes:
            entry = self.result.setdefault(runtime, {"rounds": []})
            if entry["rounds"] and "error" not in entry:
                entry.update(summarize(entry["rounds"]))
                if runtime != "kiln":
                    # A peer's "compile" is its session creation (ORT) or module load (PyTorch).
                    entry["compile_s"] = statistics.median(r["compile_s"] for r in entry["rounds"])
                elif entry.get("compile_s") is None:
                    entry["compile_s"] = entry["rounds"][0].get("compile_s")
        kiln_p50 = (self.result.get("kiln", {}).get("latency_ms") or {}).get("p50")
        ratios = {}
        for peer in ("ort", "torch"):
            peer_p50 = (self.result.get(peer, {}).get("latency_ms") or {}).get("p50")
            ratios[f"kiln_over_{peer}"] = kiln_p50 / peer_p50 if kiln_p50 and peer_p50 else None
        self.result["latency_ratio"] = ratios
        return self.result


def main() -> int:
    parser = argparse.ArgumentParser(prog="benchmarks/run", description=__doc__.split("\n\n")[0],
                                     epilog="Details: docs/benchmarks.md")
    parser.add_argument("--device", choices=["cpu"], default="cpu",
                        help="cpu here; --device cuda runs benchmarks/runners/gpu_harness.py")
    parser.add_argument("--models", default=",".join(export.MODEL_NAMES),
                        help="comma-separated models (default: all: %(default)s)")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--rounds", type=int, default=5, help="alternating rounds (default 5)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed runs per round (default 3)")
    parser.add_argument("--iterations", type=int, default=10,
                        help="timed runs per round (default 10)")
    parser.add_argument("--max-seconds", type=float, default=30,
                        help="a peer stops its warm-up after half this time and its timed runs "
                             "after this time, once 1 warm-up and 3 timed runs are done (default "
                             "%(default)s; 0: no limit)")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                        help="intra-op threads for ORT and PyTorch (default: the usable cores; 0: "
                             "each runtime's default)")
    parser.add_argument("--runtimes", default=",".join(RUNTIMES),
                        help="comma-separated runtimes to measure (default: %(default)s)")
    parser.add_argument("--kiln", type=Path,
                        default=Path(os.environ.get("KILN", REPO / "build" / "bin" / "kiln")),
                        help="the kiln executable (default: $KILN or build/bin/kiln)")
    parser.add_argument("--node", default="node", help="node executable for the ORT runner")
    parser.add_argument("--cache", type=Path, default=None, help="model cache directory")
    parser.add_argument("--machine", default=None,
                        help="machine name for the results file (default: CPU model and cores)")
    parser.add_argument("--results-dir", type=Path, default=REPO / "benchmarks" / "results")
    parser.add_argument("--no-docs", action="store_true",
                        help="do not regenerate docs/benchmarks.md and the plot")
    args = parser.parse_args()

    models = [m for m in args.models.split(",") if m]
    runtimes = [r for r in args.runtimes.split(",") if r]
    for model in models:
        if model not in export.MODEL_NAMES:
            parser.error(f"unknown model '{model}' (known: {', '.join(export.MODEL_NAMES)})")
    for runtime in runtimes:
        if runtime not in RUNTIMES:
            parser.error(f"unknown runtime '{runtime}' (known: {', '.join(RUNTIMES)})")
    if min(args.rounds, args.iterations, args.batch) < 1 or args.warmup < 0:
        parser.error("--rounds, --iterations and --batch must be positive, --warmup not negative")

    machine = machine_info()
    machine_name = args.machine or _slug(f"{machine['cpu']}-{machine['cores']}c")
    now = datetime.datetime.now(datetime.timezone.utc)
    kiln = args.kiln.resolve()
    kiln_ok, kiln_missing = kiln_capabilities(kiln) if "kiln" in runtimes else (False, "not requested")
    if "kiln" in runtimes and not kiln_ok:
        print(f"benchmarks/run: Kiln's figures will be missing: {kiln_missing}", flush=True)
    active = [r for r in runtimes if r != "kiln" or kiln_ok]

    results = {
        "machine": {"name": machine_name, **machine},
        "date": now.isoformat(timespec="seconds"),
        **git_commit(),
        "settings": {"batch": args.batch, "rounds": args.rounds, "warmup": args.warmup,
                     "iterations": args.iterations, "threads": args.threads,
                     "peer_max_seconds": args.max_seconds,
                     "runtimes": runtimes, "order": "alternating, one process per run"},
        "versions": {},
        "kiln_missing": None if kiln_ok or "kiln" not in runtimes else kiln_missing,
        "commands": [],
        "models": {},
    }
    with tempfile.TemporaryDirectory(prefix="kiln-bench-") as scratch:
        for model in models:
            print(f"benchmarks/run: {model} (batch {args.batch})", flush=True)
            directory = export.ensure_exported(model, args.batch, cache=args.cache)
            bench = ModelBenchmark(model, directory, args, Path(scratch), results["commands"])
            if kiln_ok:
                bench.compile_kiln(kiln)
                compile_s = bench.result["kiln"]["compile_s"]
                print(f"  kiln compile: {'FAILED' if compile_s is None else f'{compile_s:.1f} s'}",
                      flush=True)
            round_runtimes = [r for r in active if r != "kiln" or bench.kiln_model]
            for round_index in range(args.rounds):
                for runtime in round_runtimes:
                    bench.measure(runtime, round_index, kiln)
            results["models"][model] = bench.finish(runtimes)
            if "kiln" in runtimes and not kiln_ok:
                results["models"][model]["kiln"]["error"] = kiln_missing
            for runtime in ("ort", "torch"):
                rounds = results["models"][model].get(runtime, {}).get("rounds")
                if rounds:
                    results["versions"][runtime] = rounds[0].get("runtime")

    args.results_dir.mkdir(parents=True, exist_ok=True)
    path = args.results_dir / f"{machine_name}-{now.date().isoformat()}.json"
    path.write_text(json.dumps(results, indent=2) + "\n")
    print(f"benchmarks/run: wrote {path.relative_to(REPO) if path.is_relative_to(REPO) else path}")
    if not args.no_docs:
        import report
        report.regenerate(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
