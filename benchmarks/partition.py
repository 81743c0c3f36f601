#!/usr/bin/env python3
"""Models split over devices: latency, weights per device and the cost model's prediction.

For each model, compiles one artifact per device count (`kiln compile --devices N --partition
MODE --report`; 1 is the unsplit model), checks that each split artifact's outputs on the same
seeded inputs match the unsplit one's, and times them with `kiln bench` in alternating rounds (each
round benches every artifact once, so drifts of the machine hit them alike). Every device of a
split model runs in this process, a thread each, sharing the machine's cores. Prints a table,
writes JSON with --json and a plot with --plot.

    .venv/bin/python benchmarks/partition.py --kiln build/bin/kiln [--models bert:tensor
        resnet50:pipeline resnet50:batch:4] [--devices 1 2 4] [--rounds 3] [--iterations 10]
        [--json F] [--plot F]

A model is MODEL:MODE[:BATCH[:MICRO]]: BATCH the batch it is exported with (1 by default), MODE
one of tensor, pipeline, batch or auto, MICRO the micro-batches a pipeline has in flight (1).
"""

import argparse
import json
import re
import statistics
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks"))
from streams import run  # noqa: E402  (runs a command, its output or an error with its stderr)
P50 = re.compile(r"p50 ([0-9.]+) ms")
# The report's predictions: tensor and batch parallel (one device, own hosts, sharing one host)
# and pipeline (a run through the stages in turn).
TENSOR = re.compile(r"one device ([0-9.]+) ms; \d+ devices, each on a host of its own, ([0-9.]+) ms"
                    r".*sharing one host ([0-9.]+) ms")
PIPELINE = re.compile(r"one run ([0-9.]+) ms through the stages in turn, each device on a host "
                      r"of its own \(.*?; ([0-9.]+) ms with the \d+ devices sharing one host\)")
MICRO = re.compile(r"one run ([0-9.]+) ms through the stages with \d+ micro-batches, each device "
                   r"on a host of its own .*?; ([0-9.]+) ms with the \d+ devices sharing one host; "
                   r"without micro-batches ([0-9.]+) ms")
STAGE = re.compile(r"stage \d+: .*?, ([0-9.]+) ms modeled")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", type=Path, default=REPO / "build" / "bin" / "kiln")
    parser.add_argument("--models", nargs="+", default=["bert:tensor", "resnet50:pipeline"],
                        help="MODEL:MODE[:BATCH] (MODE: tensor, pipeline, batch or auto)")
    parser.add_argument("--devices", nargs="+", type=int, default=[1, 2, 4])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=10)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--plot", type=Path)
    parser.add_argument("--cache", type=Path, help="the model cache (as export.py's)")
    args = parser.parse_args()
    if args.devices[0] != 1:
        parser.error("the first --devices value is the unsplit reference: 1")

    sys.path.insert(0, str(REPO / "benchmarks" / "models"))
    import export
    import numpy as np

    results = []
    print(f"{'model':10} {'mode':8} {'devices':>7} {'p50 ms':>8} {'vs 1':>6} {'predicted ms':>12} "
          f"{'dev0 weights MiB':>16} {'max diff':>9}", flush=True)
    with tempfile.TemporaryDirectory(prefix="kiln-partition-") as scratch:
        scratch = Path(scratch)
        for entry in args.models:
            model, mode, *rest = entry.split(":")
            batch = int(rest[0]) if rest else 1
            micro = int(rest[1]) if len(rest) > 1 else 1
            onnx = export.ensure_exported(model, batch, cache=args.cache) / "model.onnx"
            rows = []
            for devices in args.devices:
                artifact = scratch / f"{model}-{devices}.kiln"
                command = [str(args.kiln), "compile", str(onnx), "-o", str(artifact), "--force",
                           "--quiet", "--report"]
                if devices > 1:
                    command += ["--devices", str(devices), "--partition", mode]
                    if micro > 1:
                        command += ["--micro-batches", str(micro)]
                report = run(command)
                predicted = {}
                if match := TENSOR.search(report):
                    predicted = {"one_device_ms": float(match[1]), "own_hosts_ms": float(match[2]),
                                 "sharing_host_ms": float(match[3])}
                elif match := MICRO.search(report):
                    predicted = {"run_ms": float(match[1]), "sharing_host_ms": float(match[2]),
                                 "one_device_ms": float(match[3]),
                                 "stages_ms": [float(s) for s in STAGE.findall(report)]}
                elif match := PIPELINE.search(report):
                    predicted = {"run_ms": float(match[1]), "sharing_host_ms": float(match[2]),
                                 "stages_ms": [float(s) for s in STAGE.findall(report)]}
                outputs = scratch / f"{model}-{devices}-out"
                run([str(args.kiln), "run", str(artifact), "--seed", "7", "--output-dir",
                     str(outputs), "--force"])
                rows.append({"model": model, "mode": mode, "batch": batch,
                             "micro_batches": micro, "devices": devices,
                             "artifact": artifact, "outputs": outputs, "predicted": predicted,
                             "p50_ms": [], "device_times_ms": None})
            # The unsplit model's prediction is the one the split models' reports make for it.
            if not rows[0]["predicted"] and len(rows) > 1:
                first = rows[1]["predicted"]
                rows[0]["predicted"] = {"sharing_host_ms": first.get("one_device_ms",
                                                                     first.get("run_ms"))}
            reference = rows[0]["outputs"]
            for row in rows:
                diffs = [float(np.max(np.abs(np.load(f) - np.load(reference / f.name))))
                         for f in sorted(row["outputs"].glob("*.npy"))]
                row["max_abs_diff"] = max(diffs) if diffs else None
            for _ in range(args.rounds):
                for row in rows:
                    bench = row["artifact"].with_suffix(".json")
                    run([str(args.kiln), "bench", str(row["artifact"]), "--warmup", "2",
                         "--iterations", str(args.iterations), "--json", str(bench), "--force"])
                    measured = json.loads(bench.read_text())
                    row["p50_ms"].append(measured["latency_ms"]["p50"])
                    row["weights_bytes"] = measured["planned_memory_bytes"]["constants"]
                    row["device_times_ms"] = measured.get("device_times_ms")
            base = statistics.median(rows[0]["p50_ms"])
            for row in rows:
                p50 = statistics.median(row["p50_ms"])
                shown = (row["predicted"].get("sharing_host_ms") or row["predicted"].get("run_ms")
                         or row["predicted"].get("one_device_ms") or 0.0)
                print(f"{model:10} {mode:8} {row['devices']:>7} {p50:8.2f} {p50 / base:6.2f} "
                      f"{shown:12.2f} {row['weights_bytes'] / 2**20:16.1f} "
                      f"{row['max_abs_diff'] or 0:9.2e}", flush=True)
                results.append({key: value for key, value in row.items()
                                if key not in ("artifact", "outputs")} | {"p50_median_ms": p50})
    if args.json:
        args.json.write_text(json.dumps({"results": results}, indent=2) + "\n")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        def label(r):
            micro = r.get("micro_batches", 1)
            return (f"{r['model']} ({r['mode']}, batch {r.get('batch', 1)}"
                    + (f", {micro} micro-batches)" if micro > 1 else ")"))
        models = list(dict.fromkeys(label(r) for r in results))
        figure, axes = plt.subplots(1, len(models), figsize=(5 * len(models), 4), squeeze=False)
        for axis, name in zip(axes[0], models):
            rows = [r for r in results if label(r) == name]
            x = np.arange(len(rows))
            measured = [r["p50_median_ms"] for r in rows]
            predicted = [r["predicted"].get("sharing_host_ms") or r["predicted"].get("run_ms")
                         or r["predicted"].get("one_device_ms") or 0 for r in rows]
            axis.bar(x - 0.2, measured, 0.4, label="measured p50")
            axis.bar(x + 0.2, predicted, 0.4, label="cost model")
            axis.set_xticks(x, [str(r["devices"]) for r in rows])
            axis.set_xlabel("devices (sharing this host's cores)")
            axis.set_ylabel("ms per run")
            axis.set_title(name)
            axis.legend()
        figure.tight_layout()
        figure.savefig(args.plot, dpi=100)
    return 0


if __name__ == "__main__":
    sys.exit(main())
