#!/usr/bin/python3
"""Times an exported model's eager PyTorch module on the CPU, the second peer Kiln is measured against.

    /usr/bin/python3 benchmarks/runners/torch_eager.py MODEL_DIR [--warmup N] [--iterations N]
        [--threads N] [--max-seconds S] [--json FILE]

MODEL_DIR is an export from benchmarks/models/export.py (model.pt, inputs/, meta.json). The module
runs in eval mode under torch.inference_mode(), fp32. The JSON has the same core fields as
`kiln bench --json`; compile_s is the time to load the pickled module (eager mode compiles nothing)
and peak_memory_bytes the process's peak resident set.
"""

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# model.pt pickles the model classes defined beside the export script.
sys.path.insert(0, str(HERE.parent / "models"))


def peak_resident_bytes() -> int:
    """This process's peak resident set (VmHWM: unlike getrusage, not inherited across exec)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1]) * 1024
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--warmup", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--threads", type=int, default=0, help="intra-op threads (0: torch's default)")
    parser.add_argument("--max-seconds", type=float, default=0,
                        help="stop warming up after half this time and timing after this time, "
                             "once at least 1 warm-up and 3 timed runs are done (0: no limit)")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    if args.iterations < 1 or args.warmup < 0:
        parser.error("bad --warmup or --iterations")

    import numpy as np
    import torch

    if args.threads > 0:
        torch.set_num_threads(args.threads)
    meta = json.loads((args.model_dir / "meta.json").read_text())
    start = time.perf_counter()
    model = torch.load(args.model_dir / "model.pt").eval()
    load_seconds = time.perf_counter() - start
    inputs = [torch.from_numpy(np.load(args.model_dir / "inputs" / f"{entry['name']}.npy"))
              for entry in meta["inputs"]]

    samples = []
    warmups = 0
    with torch.inference_mode():
        begin = time.perf_counter()
        while warmups < args.warmup:
            model(*inputs)
            warmups += 1
            if args.max_seconds and time.perf_counter() - begin > args.max_seconds / 2:
                break
        begin = time.perf_counter()
        while len(samples) < args.iterations:
            start = time.perf_counter()
            model(*inputs)
            samples.append((time.perf_counter() - start) * 1e3)
            if (args.max_seconds and len(samples) >= 3
                    and time.perf_counter() - begin > args.max_seconds):
                break

    ordered = np.array(samples)
    p50 = float(np.percentile(ordered, 50))
    result = {
        "model": meta["model"],
        "device": "cpu",
        "runtime": f"torch {torch.__version__} (eager)",
        "compile_s": load_seconds,
        "latency_ms": {"p50": p50, "p90": float(np.percentile(ordered, 90)),
                       "p99": float(np.percentile(ordered, 99)), "min": float(ordered.min()),
                       "mean": float(ordered.mean())},
        "throughput_per_s": meta["batch"] * 1000.0 / p50,
        "peak_memory_bytes": peak_resident_bytes(),
        "threads": torch.get_num_threads(),
        "warmup": warmups,
        "iterations": len(samples),
        "samples_ms": samples,
    }
    text = json.dumps(result, indent=2) + "\n"
    if args.json:
        args.json.write_text(text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
