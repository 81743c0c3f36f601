#!/usr/bin/env python3
"""Serial against concurrent streams: latency, arena and results of zoo models side by side.

For each model, compiles one artifact per --streams value (`kiln compile --streams N`), checks
that every artifact's outputs on the same seeded inputs are bitwise those of --streams 1, and
times them with `kiln bench` in alternating rounds (each round benches every artifact once, so
drifts of the machine hit them alike). Prints a table and writes JSON with --json.

    .venv/bin/python benchmarks/streams.py --kiln build/bin/kiln [--models googlenet resnet50]
        [--streams 1 2 4] [--rounds 3] [--iterations 50] [--json FILE]
"""

import argparse
import json
import re
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
P50 = re.compile(r"p50 ([0-9.]+) ms")
ARENA = re.compile(r"memory plan: arena (\d+) bytes")


def run(command: list) -> str:
    completed = subprocess.run(command, capture_output=True, text=True)
    if completed.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{completed.stderr[-2000:]}")
    return completed.stdout + completed.stderr


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", type=Path, default=REPO / "build" / "bin" / "kiln")
    parser.add_argument("--models", nargs="+", default=["googlenet", "resnet50", "bert"])
    parser.add_argument("--streams", nargs="+", type=int, default=[1, 2, 4])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--cache", type=Path, help="the model cache (as export.py's)")
    args = parser.parse_args()
    if args.streams[0] != 1:
        parser.error("the first --streams value is the serial reference: 1")

    sys.path.insert(0, str(REPO / "benchmarks" / "models"))
    import export

    results, failures = [], []
    print(f"{'model':12} {'streams':>7} {'p50 ms':>8} {'vs 1':>6} {'arena MiB':>9} {'bitwise':>7}",
          flush=True)
    with tempfile.TemporaryDirectory(prefix="kiln-streams-") as scratch:
        scratch = Path(scratch)
        for model in args.models:
            onnx = export.ensure_exported(model, 1, cache=args.cache) / "model.onnx"
            rows = []
            for streams in args.streams:
                artifact = scratch / f"{model}-{streams}.kiln"
                report = run([str(args.kiln), "compile", str(onnx), "-o", str(artifact), "--force",
                              "--quiet", "--report", "--streams", str(streams)])
                outputs = scratch / f"{model}-{streams}-out"
                run([str(args.kiln), "run", str(artifact), "--seed", "7", "--output-dir",
                     str(outputs), "--force"])
                rows.append({"model": model, "streams": streams, "artifact": artifact,
                             "outputs": outputs, "samples": [],
                             "arena": int(ARENA.search(report).group(1))})
            reference = rows[0]["outputs"]
            for row in rows:
                row["bitwise_equal"] = all(
                    (row["outputs"] / f.name).read_bytes() == f.read_bytes()
                    for f in sorted(reference.glob("*.npy")))
                if not row["bitwise_equal"]:
                    failures.append(f"{model} --streams {row['streams']}: outputs differ")
            for _ in range(args.rounds):
                for row in rows:
                    text = run([str(args.kiln), "bench", str(row["artifact"]), "--warmup", "3",
                                "--iterations", str(args.iterations)])
                    row["samples"].append(float(P50.search(text).group(1)))
            serial = statistics.median(rows[0]["samples"])
            for row in rows:
                p50 = statistics.median(row["samples"])
                print(f"{model:12} {row['streams']:7d} {p50:8.2f} {p50 / serial:6.3f} "
                      f"{row['arena'] / 2**20:9.2f} {str(row['bitwise_equal']):>7}", flush=True)
                results.append({"model": model, "streams": row["streams"], "p50_ms": p50,
                                "round_p50s_ms": row["samples"], "ratio_to_serial": p50 / serial,
                                "arena_bytes": row["arena"],
                                "bitwise_equal_to_serial": row["bitwise_equal"]})
    if args.json:
        args.json.write_text(json.dumps({"rounds": args.rounds, "iterations": args.iterations,
                                         "results": results}, indent=2) + "\n")
    for failure in failures:
        print(f"streams: {failure}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
