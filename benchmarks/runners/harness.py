"""Measures Kiln next to its CPU peers, on the same ONNX files and the same seeded inputs.

Run it as `benchmarks/run [options]` (see --help). For every model of benchmarks/models/export.py
and every batch size: export it (cached; a child process), compile it ahead of time where the
runtime has such a step (Kiln, IREE, TVM; each compile a child process, timed, with its peak memory),
then run ROUNDS rounds; each round runs every runtime once, in turn, as its own process doing
WARMUP untimed and ITERATIONS timed inferences, so that load on a shared machine drifts over all
runtimes alike instead of biasing one. Each child process's peak resident set is its ru_maxrss
(os.wait4). A runtime's latency is the median over rounds of each round's median.

The first round also writes every runtime's outputs for the seeded inputs (Kiln's through
`kiln run ART --input ...`), and a child process compares them with ONNX Runtime's and with
PyTorch's reference outputs from the export: the largest absolute error of every runtime is recorded,
so that a runtime that is fast because it computes garbage shows up.

A runtime that fails (non-zero exit, or past its time limit) on a model is recorded as failed with the
last lines of its output and is not retried in later rounds of that model; nothing is dropped.
Results go to benchmarks/results/<machine>-<date>.json; docs/benchmarks.md's table and the plot are
regenerated from that file (report.py).

This module stays light (no numpy, no torch): with vfork, a child's ru_maxrss starts from this
process's resident set, which is recorded as `harness_rss_bytes`.
"""

import argparse
import datetime
import json
import os
import platform
import re
import resource
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
MODELS = REPO / "benchmarks" / "models"
sys.path.insert(0, str(MODELS))

import export  # noqa: E402  (found through the path set above; importing it loads no torch)

# The order in which a round runs them.
RUNTIMES = ("kiln", "ort", "iree", "torch-compile", "torch", "tvm")
# Runtimes with an ahead-of-time compile step the harness runs (and times) once per model and batch.
AHEAD_OF_TIME = ("kiln", "iree", "tvm")
COMMAND_TIMEOUT_S = 1800
OUTPUT_TAIL_CHARS = 2000


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


def _kill_group(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_command(command: list, log: list, timeout: float = COMMAND_TIMEOUT_S, env: dict = None) -> dict:
    """Runs a command in its own process group and records it in `log`.

    Returns its exit code (None when it could not start or ran past `timeout`; the whole group is
    then killed), wall time, output tail, peak resident set (ru_maxrss from os.wait4: the largest of
    the process and its waited-for children) and whether it timed out."""
    command = [str(c) for c in command]
    log.append(shlex.join(command))
    start = time.monotonic()
    with tempfile.TemporaryFile() as output:
        try:
            process = subprocess.Popen(command, stdout=output, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, start_new_session=True,
                                       env={**os.environ, **(env or {})})
        except OSError as error:
            return {"returncode": None, "wall_s": time.monotonic() - start, "output": str(error),
                    "peak_rss_bytes": None, "timed_out": False}
        timed_out = False
        try:
            while True:
                pid, status, usage = os.wait4(process.pid, os.WNOHANG)
                if pid:
                    break
                if time.monotonic() - start > timeout:
                    timed_out = True
                    _kill_group(process.pid)
                    pid, status, usage = os.wait4(process.pid, 0)
                    break
                time.sleep(0.02)
        except BaseException:
            # Interrupted (Ctrl-C, SIGTERM): the child is in its own session and would not see it.
            _kill_group(process.pid)
            os.wait4(process.pid, 0)
            process.returncode = -signal.SIGKILL
            raise
        wall_s = time.monotonic() - start
        code = os.waitstatus_to_exitcode(status)
        process.returncode = code  # Reaped here: Popen must not wait for it again.
        output.seek(0)
        text = output.read().decode(errors="replace")
    if timed_out:
        text = f"{text[-OUTPUT_TAIL_CHARS:]}\ntimed out after the limit of {timeout:g} s"
        code = None
    return {"returncode": code, "wall_s": wall_s, "output": text[-OUTPUT_TAIL_CHARS:],
            "peak_rss_bytes": usage.ru_maxrss * 1024, "timed_out": timed_out}


def failure(what: str, outcome: dict) -> str:
    """A failure's message: what failed, how, and the last lines of its output."""
    how = "timed out" if outcome.get("timed_out") else f"exit {outcome['returncode']}"
    tail = "\n".join(outcome["output"].strip().splitlines()[-12:])
    return f"{what} failed ({how}):\n{tail}"


def kiln_capabilities(kiln: Path) -> tuple:
    """Whether `kiln compile`, `kiln run` and `kiln bench` exist; the reason when they do not."""
    shown = kiln.relative_to(REPO) if kiln.is_relative_to(REPO) else kiln
    if not kiln.is_file():
        return False, f"no kiln executable at {shown}"
    listing = subprocess.run([str(kiln), "--help"], capture_output=True, text=True).stdout
    subcommands = set()
    if "Subcommands:" in listing:
        for line in listing.split("Subcommands:", 1)[1].splitlines():
            if line.strip():
                subcommands.add(line.split()[0])
    for needed in ("compile", "run", "bench"):
        if needed not in subcommands:
            return False, f"`kiln {needed}` is not available in {shown}"
    return True, None


def summarize(rounds: list) -> dict:
    """Medians over rounds of each round's latency percentiles and throughput; the peak memory."""
    def median_of(key, sub):
        values = [r[key][sub] for r in rounds if r.get(key, {}).get(sub) is not None]
        return statistics.median(values) if values else None
    return {
        "latency_ms": {q: median_of("latency_ms", q) for q in ("p50", "p90", "p99", "min")},
        "round_p50_ms": [r["latency_ms"]["p50"] for r in rounds],
        "throughput_per_s": statistics.median(r["throughput_per_s"] for r in rounds),
        "peak_memory_bytes": max(r["peak_memory_bytes"] for r in rounds),
    }


class ModelBenchmark:
    """One model at one batch size: its artifacts, the commands measuring it on each runtime, and
    their results."""

    def __init__(self, name, batch, directory, args, scratch, commands):
        self.name = name
        self.batch = batch
        self.directory = directory
        self.args = args
        self.scratch = scratch / f"{name}-b{batch}"
        self.scratch.mkdir(parents=True, exist_ok=True)
        self.commands = commands
        self.meta = json.loads((directory / "meta.json").read_text())
        self.artifacts = {}
        self.output_dirs = {}
        self.result = {"inputs": self.meta["inputs"], "outputs": self.meta["outputs"]}

    def tag(self, runtime: str) -> str:
        return f"{runtime} on {self.name} (batch {self.batch})"

    def entry(self, runtime: str) -> dict:
        return self.result.setdefault(runtime, {"rounds": []})

    def fail(self, runtime: str, message: str) -> None:
        self.entry(runtime)["error"] = message
        print(f"  {runtime}: FAILED: {message.strip().splitlines()[-1][:200]}", flush=True)

    def child_env(self, runtime: str) -> dict:
        env = {}
        if self.args.threads:
            env["OMP_NUM_THREADS"] = str(self.args.threads)
            env["TVM_NUM_THREADS"] = str(self.args.threads)
        if runtime == "torch-compile":
            # A fresh Inductor cache per model and batch: the first round's compile is cold.
            env["TORCHINDUCTOR_CACHE_DIR"] = str(self.scratch / "inductor-cache")
        return env

    def compile(self, runtime: str, kiln: Path) -> None:
        """The ahead-of-time compile of Kiln, IREE or TVM, timed, in its own process."""
        onnx = self.directory / "model.onnx"
        python = sys.executable
        if runtime == "kiln":
            artifact = self.scratch / "model.kiln"
            command = [kiln, "compile", onnx, "-o", artifact, "--target", "cpu"]
        elif runtime == "iree":
            artifact = self.scratch / "model.vmfb"
            command = [python, HERE / "iree_runner.py", "compile", self.directory, "-o", artifact]
        else:
            artifact = self.scratch / "model.so"
            command = [python, HERE / "tvm_runner.py", "compile", self.directory, "-o", artifact]
        outcome = run_command(command, self.commands, self.args.compile_timeout, self.child_env(runtime))
        entry = self.entry(runtime)
        entry["compile_command_wall_s"] = outcome["wall_s"]
        entry["compile_peak_memory_bytes"] = outcome["peak_rss_bytes"]
        if outcome["returncode"] != 0 or not artifact.is_file():
            self.fail(runtime, failure(f"compiling {self.tag(runtime)}", outcome))
            return
        entry["compile_s"] = outcome["wall_s"]
        entry["artifact_bytes"] = artifact.stat().st_size
        self.artifacts[runtime] = artifact
        print(f"  {runtime}: compiled in {outcome['wall_s']:.1f} s", flush=True)
        if runtime == "kiln" and (shutil.which("ptxas") or Path("/usr/local/cuda/bin/ptxas").exists()):
            # The CUDA target's compile time too (sm_80/sm_90 cubins with ptxas, and PTX): it needs
            # the CUDA toolkit, not a GPU.
            cuda = run_command([kiln, "compile", onnx, "-o", self.scratch / "model.cuda.kiln",
                                "--target", "cuda", "--gpu-arch", "sm_80,sm_90"], self.commands,
                               self.args.compile_timeout)
            entry["compile_cuda_s"] = cuda["wall_s"] if cuda["returncode"] == 0 else None

    def kiln_outputs(self, kiln: Path) -> None:
        """Kiln's outputs for the export's inputs (`kiln bench` draws its own seeded inputs)."""
        out = self.scratch / "outputs-kiln"
        command = [kiln, "run", self.artifacts["kiln"], "--device", "cpu", "--output-dir", out, "--force"]
        for entry in self.meta["inputs"]:
            command += ["--input", f"{entry['name']}=@{self.directory / 'inputs' / (entry['name'] + '.npy')}"]
        if self.args.threads:
            command += ["--threads", self.args.threads]
        outcome = run_command(command, self.commands, self.args.round_timeout, self.child_env("kiln"))
        if outcome["returncode"] != 0:
            self.entry("kiln")["check_error"] = failure(f"kiln run {self.tag('kiln')}", outcome)
        else:
            self.output_dirs["kiln"] = out

    def round_command(self, runtime: str, kiln: Path, json_path: Path, output_dir: Path) -> list:
        a = self.args
        if runtime == "kiln":
            command = [kiln, "bench", self.artifacts["kiln"], "--device", "cpu", "--warmup", a.warmup,
                       "--iterations", a.iterations, "--json", json_path, "--force"]
            if a.max_seconds:
                command += ["--max-seconds", a.max_seconds]
            return command + (["--threads", a.threads] if a.threads else [])
        python = sys.executable
        if runtime == "ort":
            command = [python, HERE / "ort_runner.py", self.directory]
        elif runtime == "iree":
            command = [python, HERE / "iree_runner.py", "run", self.directory,
                       "--module", self.artifacts["iree"]]
        elif runtime == "tvm":
            command = [python, HERE / "tvm_runner.py", "run", self.directory,
                       "--module", self.artifacts["tvm"]]
        else:
            mode = "compile" if runtime == "torch-compile" else "eager"
            command = [python, HERE / "torch_cpu.py", self.directory, "--mode", mode]
        command += ["--warmup", a.warmup, "--iterations", a.iterations, "--json", json_path,
                    "--max-seconds", a.max_seconds, "--threads", a.threads]
        return command + (["--output-dir", output_dir] if output_dir else [])

    def measure(self, runtime: str, round_index: int, kiln: Path) -> None:
        entry = self.entry(runtime)
        if "error" in entry or "single_round" in entry:
            return  # A runtime that failed once is not retried; a slow one runs one round.
        json_path = self.scratch / f"{runtime}-{round_index}.json"
        output_dir = self.scratch / f"outputs-{runtime}" if round_index == 0 and runtime != "kiln" else None
        # torch.compile compiles inside each round's process: it gets the compile limit.
        timeout = self.args.compile_timeout if runtime == "torch-compile" else self.args.round_timeout
        outcome = run_command(self.round_command(runtime, kiln, json_path, output_dir), self.commands,
                              timeout, self.child_env(runtime))
        if outcome["returncode"] != 0 or not json_path.is_file():
            self.fail(runtime, failure(f"round {round_index + 1} of {self.tag(runtime)}", outcome))
            return
        figures = json.loads(json_path.read_text())
        figures.pop("samples_ms", None)
        if "peak_memory_bytes" in figures:  # `kiln bench` measures its own.
            figures["self_peak_memory_bytes"] = figures.pop("peak_memory_bytes")
        figures["peak_memory_bytes"] = outcome["peak_rss_bytes"]
        figures["process_wall_s"] = outcome["wall_s"]
        entry["rounds"].append(figures)
        if output_dir:
            self.output_dirs[runtime] = output_dir
        # The time spent measuring, without torch.compile's compile inside the round.
        spent = outcome["wall_s"] - (figures.get("compile_s") or 0 if runtime == "torch-compile" else 0)
        if round_index == 0 and spent > self.args.slow_round:
            entry["single_round"] = (f"its first round took {spent:.0f} s, more than "
                                     f"--slow-round {self.args.slow_round:g} s: measured in that "
                                     f"round only")
            print(f"  {runtime}: one round only ({entry['single_round']})", flush=True)
        print(f"  round {round_index + 1}: {runtime:13s} p50 {figures['latency_ms']['p50']:10.2f} ms"
              f"  peak {outcome['peak_rss_bytes'] / 2**20:7.0f} MiB", flush=True)

    def check_outputs(self) -> None:
        """Every runtime's outputs against ONNX Runtime's and PyTorch's, in a child process."""
        if not self.output_dirs:
            return
        command = [sys.executable, HERE / "compare_outputs.py", "--torch", self.directory / "reference"]
        if "ort" in self.output_dirs:
            command += ["--ort", self.output_dirs["ort"]]
        for runtime, directory in self.output_dirs.items():
            command.append(f"{runtime}={directory}")
        outcome = run_command(command, self.commands, self.args.round_timeout)
        if outcome["returncode"] != 0:
            self.result["check_error"] = failure(f"comparing the outputs of {self.name}", outcome)
            print(f"  check: FAILED: {self.result['check_error'].splitlines()[-1]}", flush=True)
            return
        errors = json.loads(outcome["output"].strip().splitlines()[-1])
        for runtime, figures in errors.items():
            self.entry(runtime).update(figures)
            shown = ", ".join(f"{k} {v:.2e}" for k, v in figures.items()
                              if k.startswith("max_abs_error") and v is not None)
            print(f"  check: {runtime:13s} {shown}", flush=True)

    def finish(self, runtimes: list) -> dict:
        for runtime in runtimes:
            entry = self.entry(runtime)
            if entry["rounds"] and "error" not in entry:
                entry.update(summarize(entry["rounds"]))
                if runtime not in AHEAD_OF_TIME:
                    # ORT: the session creation; PyTorch: the module load (and torch.compile's
                    # first call); the first round's figure: Inductor's caches are cold then.
                    entry["compile_s"] = entry["rounds"][0]["compile_s"]
                    entry["compile_s_later_rounds"] = [r["compile_s"] for r in entry["rounds"][1:]]
            if entry["rounds"] and "error" in entry:
                entry["partial_rounds"] = len(entry["rounds"])
        kiln_p50 = (self.entry("kiln").get("latency_ms") or {}).get("p50")
        ratios = {}
        for peer in runtimes:
            if peer == "kiln":
                continue
            peer_p50 = (self.entry(peer).get("latency_ms") or {}).get("p50")
            ratios[peer] = peer_p50 / kiln_p50 if kiln_p50 and peer_p50 else None
        self.result["latency_ratio_peer_over_kiln"] = ratios
        return self.result


def export_model(name: str, batch: int, args, commands: list) -> tuple:
    """The export's directory (export.py in a child process: it imports torch), or the failure."""
    command = [sys.executable, MODELS / "export.py", name, "--batch", batch]
    if args.cache:
        command += ["--cache", args.cache]
    outcome = run_command(command, commands, args.compile_timeout)
    lines = outcome["output"].strip().splitlines()
    if outcome["returncode"] != 0 or not lines or not Path(lines[-1]).is_dir():
        return None, failure(f"exporting {name} (batch {batch})", outcome)
    return Path(lines[-1]), None


def runtime_versions() -> dict:
    """The installed versions of the peers (read from package metadata, without importing them)."""
    import importlib.metadata
    versions = {}
    for package in ("onnxruntime", "iree-base-compiler", "iree-base-runtime", "torch", "apache-tvm",
                    "onnx", "numpy"):
        try:
            versions[package] = importlib.metadata.version(package)
        except importlib.metadata.PackageNotFoundError:
            versions[package] = None
    return versions


def parse_arguments() -> argparse.Namespace:
    names = export.MODEL_NAMES
    parser = argparse.ArgumentParser(
        prog="benchmarks/run", formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Measures Kiln next to ONNX Runtime, IREE, torch.compile, PyTorch eager and\n"
                    "Apache TVM on the CPU, on the same ONNX files and seeded inputs, in alternating\n"
                    "rounds; writes benchmarks/results/<machine>-<date>.json, the plot and\n"
                    "docs/benchmarks.md's results section.",
        epilog="runtimes:\n"
               "  kiln           kiln compile --target cpu, then kiln bench\n"
               "  ort            onnxruntime, CPU execution provider, ORT_ENABLE_ALL\n"
               "  iree           iree-base-compiler (llvm-cpu, host CPU) and iree.runtime\n"
               "  torch-compile  torch.compile with Inductor\n"
               "  torch          PyTorch eager\n"
               "  tvm            apache-tvm: Relax ONNX frontend, llvm for the host, untuned\n"
               "With --device cuda, benchmarks/runners/gpu_harness.py runs instead (its own\n"
               "--help). Method and results: docs/benchmarks.md")
    parser.add_argument("--device", choices=["cpu"], default="cpu",
                        help="cpu here; --device cuda runs benchmarks/runners/gpu_harness.py")
    parser.add_argument("--models", default=",".join(names),
                        help="comma-separated models (default: all of benchmarks/models/export.py: "
                             "%(default)s)")
    parser.add_argument("--runtimes", default=",".join(RUNTIMES),
                        help="comma-separated runtimes (default: %(default)s)")
    parser.add_argument("--batches", default=None,
                        help="comma-separated batch sizes (default: 1,4; --quick: 1)")
    parser.add_argument("--quick", action="store_true",
                        help="a short check: batch 1, 2 rounds of 1 warm-up + 3 timed runs, 5 s "
                             "per runtime and round (each still overridable); the results file "
                             "gets a -quick suffix and docs/benchmarks.md is left alone")
    parser.add_argument("--rounds", type=int, default=None, help="alternating rounds (default 3)")
    parser.add_argument("--warmup", type=int, default=None, help="untimed runs per round (default 2)")
    parser.add_argument("--iterations", type=int, default=None,
                        help="timed runs per round (default 10)")
    parser.add_argument("--max-seconds", type=float, default=None,
                        help="each runtime stops its warm-up after half this time and its timed runs "
                             "after this time, once 1 warm-up and 3 timed runs (or 1 longer one) are "
                             "done (default 5; 0: no limit)")
    parser.add_argument("--round-timeout", type=float, default=180,
                        help="limit in seconds on one runtime's round (a process) before it is "
                             "killed and recorded as failed (default %(default)s)")
    parser.add_argument("--slow-round", type=float, default=90,
                        help="a runtime whose first round takes longer than this many seconds is "
                             "measured in that round only, which the results record (default "
                             "%(default)s)")
    parser.add_argument("--compile-timeout", type=float, default=600,
                        help="limit in seconds on one ahead-of-time compile, and on each "
                             "torch.compile round (default %(default)s)")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                        help="threads for every runtime (default: the usable cores, %(default)s; "
                             "0: each runtime's default)")
    parser.add_argument("--kiln", type=Path,
                        default=Path(os.environ.get("KILN", REPO / "build" / "bin" / "kiln")),
                        help="the kiln executable (default: $KILN or build/bin/kiln)")
    parser.add_argument("--cache", type=Path, default=None, help="model cache directory")
    parser.add_argument("--machine", default=None,
                        help="machine name for the results file (default: CPU model and cores)")
    parser.add_argument("--results-dir", type=Path, default=REPO / "benchmarks" / "results")
    parser.add_argument("--no-docs", action="store_true",
                        help="do not regenerate docs/benchmarks.md and the plot")
    args = parser.parse_args()

    quick = {"batches": "1", "rounds": 2, "warmup": 1, "iterations": 3, "max_seconds": 5.0}
    full = {"batches": "1,4", "rounds": 3, "warmup": 2, "iterations": 10, "max_seconds": 5.0}
    for key, value in (quick if args.quick else full).items():
        if getattr(args, key) is None:
            setattr(args, key, value)
    args.models = [m for m in args.models.split(",") if m]
    args.runtimes = [r for r in args.runtimes.split(",") if r]
    try:
        args.batches = [int(b) for b in args.batches.split(",") if b]
    except ValueError:
        parser.error(f"--batches takes comma-separated integers, not '{args.batches}'")
    for model in args.models:
        if model not in names:
            parser.error(f"unknown model '{model}' (known: {', '.join(names)})")
    for runtime in args.runtimes:
        if runtime not in RUNTIMES:
            parser.error(f"unknown runtime '{runtime}' (known: {', '.join(RUNTIMES)})")
    if not args.batches or min(args.batches) < 1 or min(args.rounds, args.iterations) < 1 \
            or args.warmup < 0:
        parser.error("--batches, --rounds and --iterations must be positive, --warmup not negative")
    return args


def main() -> int:
    args = parse_arguments()
    # SIGTERM unwinds like Ctrl-C: the running child's process group is killed on the way out.
    signal.signal(signal.SIGTERM, lambda number, frame: sys.exit(128 + number))
    machine = machine_info()
    machine_name = args.machine or _slug(f"{machine['cpu']}-{machine['cores']}c")
    now = datetime.datetime.now(datetime.timezone.utc)
    kiln = args.kiln.resolve()
    runtimes = args.runtimes
    kiln_ok, kiln_missing = kiln_capabilities(kiln) if "kiln" in runtimes else (False, "not requested")
    if "kiln" in runtimes and not kiln_ok:
        print(f"benchmarks/run: Kiln's figures will be missing: {kiln_missing}", flush=True)

    results = {
        "machine": {"name": machine_name, **machine},
        "date": now.isoformat(timespec="seconds"),
        **git_commit(),
        "settings": {"batches": args.batches, "rounds": args.rounds, "warmup": args.warmup,
                     "iterations": args.iterations, "threads": args.threads,
                     "max_seconds": args.max_seconds, "round_timeout_s": args.round_timeout,
                     "compile_timeout_s": args.compile_timeout, "slow_round_s": args.slow_round,
                     "quick": args.quick,
                     "runtimes": runtimes, "models": args.models,
                     "order": "alternating, one process per runtime and round",
                     "python": sys.executable, "argv": sys.argv[1:]},
        "versions": runtime_versions(),
        "load_average": {"start": list(os.getloadavg())},
        "harness_rss_bytes": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
        "kiln": str(kiln),
        "kiln_missing": None if kiln_ok or "kiln" not in runtimes else kiln_missing,
        "commands": [],
        "models": {},
    }
    if kiln_ok:
        version = subprocess.run([str(kiln), "--version"], capture_output=True, text=True)
        results["versions"]["kiln"] = version.stdout.strip() or None
    args.results_dir.mkdir(parents=True, exist_ok=True)
    path = args.results_dir / f"{machine_name}-{now.date().isoformat()}{'-quick' if args.quick else ''}.json"
    shown = path.relative_to(REPO) if path.is_relative_to(REPO) else path
    started = time.monotonic()

    def write_results(complete: bool) -> None:
        # Written after every model and batch too, marked incomplete, so that an interrupted run
        # keeps what it measured.
        results["complete"] = complete
        results["wall_s"] = time.monotonic() - started
        path.write_text(json.dumps(results, indent=2) + "\n")

    with tempfile.TemporaryDirectory(prefix="kiln-bench-") as scratch:
        for model in args.models:
            model_result = results["models"].setdefault(model, {"batches": {}})
            for batch in args.batches:
                print(f"benchmarks/run: {model} (batch {batch}), load average "
                      f"{os.getloadavg()[0]:.1f}", flush=True)
                directory, export_error = export_model(model, batch, args, results["commands"])
                if export_error:
                    print(f"  export: FAILED: {export_error.splitlines()[-1]}", flush=True)
                    model_result["batches"][str(batch)] = {
                        "export_error": export_error,
                        **{r: {"rounds": [], "error": export_error} for r in runtimes}}
                    write_results(False)
                    continue
                bench = ModelBenchmark(model, batch, directory, args, Path(scratch),
                                       results["commands"])
                if "kiln" in runtimes and not kiln_ok:
                    bench.entry("kiln")["error"] = kiln_missing
                for runtime in runtimes:
                    if runtime in AHEAD_OF_TIME and "error" not in bench.entry(runtime):
                        bench.compile(runtime, kiln)
                if "kiln" in bench.artifacts:
                    bench.kiln_outputs(kiln)
                for round_index in range(args.rounds):
                    for runtime in runtimes:
                        bench.measure(runtime, round_index, kiln)
                bench.check_outputs()
                model_result["batches"][str(batch)] = bench.finish(runtimes)
                results["load_average"][f"{model}-b{batch}"] = list(os.getloadavg())
                write_results(False)
    results["load_average"]["end"] = list(os.getloadavg())
    write_results(True)
    print(f"benchmarks/run: wrote {shown} ({results['wall_s'] / 60:.1f} min)")
    if not args.no_docs and not args.quick:
        import report
        report.regenerate(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
