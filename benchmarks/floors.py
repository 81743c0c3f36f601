#!/usr/bin/env python3
"""Each model's fp32 floor on this CPU beside the measured latencies: how far a goal can go.

    .venv/bin/python benchmarks/floors.py --results benchmarks/results/MACHINE-DATE.json
        [--device-description HOST.json] [--batch 1] [--goal 0.8] [--json FILE] [--plot FILE]

A model's floor is max(FLOPs / peak, minimal bytes / bandwidth) (benchmarks/runners/roofline.py
counts the FLOPs of its convolutions and products from the ONNX graph, 2 per multiply-add, and
the bytes of its weights, inputs and outputs). The peak and the bandwidth are the host's as
`kiln calibrate` measures them (oneDNN's f32 matmul, a triad), from --device-description or
measured now: Debian's PyTorch multiplies far below the CPU's peak, so roofline.py's own
measurement does not serve on the CPU.

For each model of a `benchmarks/run` result: the floor, each runtime's p50 (the median over the
rounds) and its fraction of the floor, and the goal (--goal times the best peer's p50) against the
floor: a goal below the floor cannot be met in fp32 on this host by any implementation. A model
whose products shape inference could not size has a floor that is a lower bound (marked).
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "benchmarks" / "runners"))
sys.path.insert(0, str(REPO / "benchmarks" / "models"))


def description(args) -> dict:
    if args.device_description:
        return json.loads(args.device_description.read_text())
    with tempfile.TemporaryDirectory(prefix="kiln-floors-") as scratch:
        path = Path(scratch) / "host.json"
        subprocess.run([str(args.kiln), "calibrate", "-o", str(path)], check=True)
        return json.loads(path.read_text())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--results", type=Path, required=True, help="a benchmarks/run result")
    parser.add_argument("--device-description", type=Path,
                        help="kiln calibrate's description of this host (default: measure now)")
    parser.add_argument("--kiln", type=Path, default=REPO / "build" / "bin" / "kiln")
    parser.add_argument("--batch", default="1")
    parser.add_argument("--goal", type=float, default=0.8,
                        help="the goal as a fraction of the best peer's latency")
    parser.add_argument("--cache", type=Path, help="the model cache (as export.py's)")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--plot", type=Path, help="write a bar chart of the fractions (PNG)")
    args = parser.parse_args()

    import export
    from roofline import model_costs

    host = description(args)
    peak, bandwidth = host["fp32_flops_per_second"], host["bytes_per_second"]
    results = json.loads(args.results.read_text())
    print(f"host: {host.get('source', host['name'])}: {peak / 1e9:.1f} GFLOP/s fp32, "
          f"{bandwidth / 1e9:.1f} GB/s")
    print(f"{'model':16} {'GFLOP':>7} {'floor ms':>9} {'kiln ms':>8} {'of floor':>8} "
          f"{'best peer':>14} {'goal ms':>8} {'goal/floor':>10}")
    rows = []
    for model, entry in results["models"].items():
        batch = entry.get("batches", {}).get(args.batch)
        if not batch:
            continue
        p50 = {}
        for runtime, measured in batch.items():
            if isinstance(measured, dict) and measured.get("rounds"):
                p50[runtime] = statistics.median(r["latency_ms"]["p50"]
                                                 for r in measured["rounds"])
        if "kiln" not in p50 or len(p50) < 2:
            continue
        costs = model_costs(export.ensure_exported(model, int(args.batch), cache=args.cache)
                            / "model.onnx")
        floor_ms = max(costs["flops"] / peak, costs["minimal_bytes"] / bandwidth) * 1e3
        peer, peer_ms = min(((r, t) for r, t in p50.items() if r != "kiln"), key=lambda x: x[1])
        goal_ms = args.goal * peer_ms
        bound = "lower bound" if costs["unshaped_products"] else "exact"
        row = {"model": model, "gflop": costs["flops"] / 1e9, "floor_ms": floor_ms,
               "floor": bound, "p50_ms": p50, "best_peer": peer, "goal_ms": goal_ms,
               "kiln_floor_fraction": floor_ms / p50["kiln"],
               "goal_over_floor": goal_ms / floor_ms}
        rows.append(row)
        mark = "*" if costs["unshaped_products"] else " "
        print(f"{model:16} {row['gflop']:7.2f} {floor_ms:8.2f}{mark} {p50['kiln']:8.2f} "
              f"{row['kiln_floor_fraction']:8.2f} {peer + ' ' + format(peer_ms, '.2f'):>14} "
              f"{goal_ms:8.2f} {row['goal_over_floor']:10.2f}"
              + ("  goal below the fp32 floor" if row["goal_over_floor"] < 1 else ""))
    if any(r["floor"] != "exact" for r in rows):
        print("* products shape inference could not size: the floor is a lower bound")
    if args.json:
        args.json.write_text(json.dumps({"host": host, "results": str(args.results),
                                         "goal": args.goal, "models": rows}, indent=2) + "\n")
    if args.plot and rows:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        names = [r["model"] for r in rows]
        x = range(len(rows))
        figure, axis = plt.subplots(figsize=(max(6, len(rows) * 0.9), 4))
        axis.bar([i - 0.2 for i in x], [r["p50_ms"]["kiln"] / r["floor_ms"] for r in rows],
                 width=0.4, label="Kiln p50 / floor")
        axis.bar([i + 0.2 for i in x], [r["goal_over_floor"] for r in rows], width=0.4,
                 label=f"goal ({args.goal}x best peer) / floor")
        axis.axhline(1.0, color="black", linewidth=1)
        axis.set_xticks(list(x), names, rotation=30, ha="right")
        axis.set_ylabel("multiple of the fp32 floor")
        axis.set_title(f"batch {args.batch}: below 1.0 no fp32 implementation can reach")
        axis.legend()
        figure.tight_layout()
        figure.savefig(args.plot, dpi=120)
        print(f"wrote {args.plot}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
