#!/usr/bin/env python3
"""Row kernels over short and long rows on CUDA: softmax, layer norm and sums, beside PyTorch.

For each row length L, writes three ONNX models (onnx.helper, f32): Softmax over the last axis of
an input [R, L], LayerNormalization over it with seeded scale and bias, and ReduceSum of each row
(keepdims), where R * L is --elements (the same bytes at every length). Lengths where R is under
64 take the reductions split over the grid (kiln-split-reductions); rows over 1024 a block each. Each is compiled for CUDA (`kiln compile --target
cuda`), run once on a seeded input and compared with NumPy, then timed with `kiln bench` (the
steps alone on the device, CUDA events around a graph replay: `device_latency_ms`). Beside it,
where PyTorch has CUDA, torch.softmax and torch.nn.functional.layer_norm on the same shapes
(CUDA events), and the bytes each must move at the device's memory rate (--bandwidth-gbs).

--baseline DIR times, beside Kiln's artifacts, artifacts compiled earlier into DIR by
`--compile-only DIR` (by another Kiln, say, to measure a code-generation change on the same
GPU); they are checked against NumPy the same way.

    python3 benchmarks/long_rows.py --kiln build/bin/kiln [--device cuda] [--lengths 512 4096 32768]
        [--elements 16777216] [--baseline DIR] [--compile-only DIR] [--json FILE] [--plot FILE]

On --device cuda-sim (the simulated GPU) use small --elements: it checks the outputs, and its
timings mean nothing.
"""

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "runners"))
from torch_cuda import cuda_event_samples  # noqa: E402

try:
    import numpy as np
    import onnx
    from onnx import TensorProto, helper
except ImportError:
    print("long_rows.py: numpy and onnx are needed (scripts/install-deps.sh --models)",
          file=sys.stderr)
    sys.exit(77)

OPS = ("softmax", "layernorm", "reducesum")
EPSILON = 1e-5


def row_model(op: str, rows: int, length: int) -> onnx.ModelProto:
    """Softmax or LayerNormalization (scale and bias seeded) over the rows of X [rows, length]."""
    x = helper.make_tensor_value_info("X", TensorProto.FLOAT, [rows, length])
    y = helper.make_tensor_value_info("Y", TensorProto.FLOAT,
                                      [rows, 1 if op == "reducesum" else length])
    initializers = []
    if op == "softmax":
        nodes = [helper.make_node("Softmax", ["X"], ["Y"], axis=-1)]
    elif op == "reducesum":
        initializers = [helper.make_tensor("axes", TensorProto.INT64, [1], [1])]
        nodes = [helper.make_node("ReduceSum", ["X", "axes"], ["Y"], keepdims=1)]
    else:
        scale, bias = layer_norm_parameters(length)
        initializers = [helper.make_tensor("scale", TensorProto.FLOAT, [length], scale.tolist()),
                        helper.make_tensor("bias", TensorProto.FLOAT, [length], bias.tolist())]
        nodes = [helper.make_node("LayerNormalization", ["X", "scale", "bias"], ["Y"], axis=-1,
                                  epsilon=EPSILON)]
    graph = helper.make_graph(nodes, f"{op}_{rows}x{length}", [x], [y], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    onnx.checker.check_model(model)
    return model


def layer_norm_parameters(length: int):
    rng = np.random.default_rng(length)
    return (rng.uniform(0.5, 1.5, length).astype(np.float32),
            rng.uniform(-0.5, 0.5, length).astype(np.float32))


def reference(op: str, x: np.ndarray) -> np.ndarray:
    x64 = x.astype(np.float64)
    if op == "softmax":
        e = np.exp(x64 - x64.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True)).astype(np.float32)
    if op == "reducesum":
        return x64.sum(axis=-1, keepdims=True).astype(np.float32)
    scale, bias = layer_norm_parameters(x.shape[-1])
    mean = x64.mean(axis=-1, keepdims=True)
    var = ((x64 - mean) ** 2).mean(axis=-1, keepdims=True)
    return ((x64 - mean) / np.sqrt(var + EPSILON) * scale + bias).astype(np.float32)


def name(op: str, length: int) -> str:
    return f"{op}-L{length}"


def compile_all(kiln: str, lengths, elements: int, directory: Path, device: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for length in lengths:
        for op in OPS:
            model = directory / f"{name(op, length)}.onnx"
            onnx.save(row_model(op, elements // length, length), model)
            artifact = directory / f"{name(op, length)}.kiln"
            command = [kiln, "compile", str(model), "--target", "cuda", "-o", str(artifact),
                       "--force"] + (["--gpu-arch", "cuda-sim"] if device == "cuda-sim" else [])
            completed = subprocess.run(command, capture_output=True, text=True)
            if completed.returncode != 0:
                raise RuntimeError(f"{' '.join(command)} failed:\n{completed.stderr[-2000:]}")
            print(f"long_rows: compiled {artifact}", file=sys.stderr)


def check(kiln: str, artifact: Path, op: str, rows: int, length: int, device: str,
          scratch: Path) -> float:
    """Runs `artifact` once on a seeded input; the largest error against NumPy."""
    x = np.random.default_rng(rows + length).standard_normal((rows, length)).astype(np.float32) * 4
    np.save(scratch / "X.npy", x)
    out = scratch / f"out-{artifact.stem}"
    command = [kiln, "run", str(artifact), "--device", device, "--input",
               f"X=@{scratch / 'X.npy'}", "--output-dir", str(out), "--force"]
    completed = subprocess.run(command, capture_output=True, text=True)
    if completed.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{completed.stderr[-2000:]}")
    got = np.load(out / "Y.npy")
    want = reference(op, x)
    error = float(np.max(np.abs(got - want) / (np.abs(want) + 1e-3)))
    # A sum's f32 rounding grows with what it adds up, not with the (cancelling) result.
    atol = 1e-6 * float(np.abs(x).sum(axis=-1).max()) if op == "reducesum" else 1e-5
    if not np.allclose(got, want, rtol=1e-4, atol=atol):
        raise RuntimeError(f"{artifact}: output differs from NumPy (largest relative error "
                           f"{error:.3g})")
    return error


def bench(kiln: str, artifact: Path, device: str, iterations: int, scratch: Path) -> float:
    report = scratch / f"bench-{artifact.parent.name}-{artifact.stem}.json"
    command = [kiln, "bench", str(artifact), "--device", device, "--warmup", "10",
               "--iterations", str(iterations), "--max-seconds", "20", "--json", str(report),
               "--force"]
    completed = subprocess.run(command, capture_output=True, text=True)
    if completed.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{completed.stderr[-2000:]}")
    result = json.loads(report.read_text())
    timing = result.get("device_latency_ms") or result["latency_ms"]
    return timing["p50"]


def torch_ms(op: str, rows: int, length: int, iterations: int):
    """PyTorch's kernel on the GPU (CUDA events, median), or None without CUDA."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    x = torch.randn(rows, length, device="cuda", generator=torch.Generator("cuda").manual_seed(0))
    scale, bias = (torch.from_numpy(p).cuda() for p in layer_norm_parameters(length))
    if op == "softmax":
        def run():
            return torch.softmax(x, dim=-1)
    elif op == "reducesum":
        def run():
            return x.sum(dim=-1, keepdim=True)
    else:
        def run():
            return torch.nn.functional.layer_norm(x, (length,), scale, bias, EPSILON)
    return statistics.median(cuda_event_samples(run, 10, iterations))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kiln", default="build/bin/kiln")
    parser.add_argument("--device", default="cuda", choices=["cuda", "cuda-sim"])
    parser.add_argument("--lengths", type=int, nargs="+",
                        default=[128, 512, 1024, 2048, 4096, 16384, 65536, 1 << 20, 1 << 24])
    parser.add_argument("--elements", type=int, default=1 << 24,
                        help="R * L of every input (default 16 Mi: 64 MiB of f32)")
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--bandwidth-gbs", type=float, default=4800.0,
                        help="the device's memory rate for the floor (default: an H200's)")
    parser.add_argument("--baseline", type=Path,
                        help="artifacts compiled earlier by --compile-only, timed beside")
    parser.add_argument("--compile-only", type=Path, metavar="DIR",
                        help="write the models and their artifacts into DIR and stop")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--plot", type=Path)
    args = parser.parse_args()
    for length in args.lengths:
        if length <= 0 or args.elements % length:
            parser.error(f"--elements {args.elements} is not a multiple of the length {length}")
    if args.compile_only:
        compile_all(args.kiln, args.lengths, args.elements, args.compile_only, args.device)
        return 0

    results = []
    with tempfile.TemporaryDirectory() as tmp:
        scratch = Path(tmp)
        compile_all(args.kiln, args.lengths, args.elements, scratch / "kiln", args.device)
        for length in args.lengths:
            rows = args.elements // length
            for op in OPS:
                row = {"op": op, "rows": rows, "length": length}
                # Read X, write Y (layer norm's scale and bias are noise beside them; a sum
                # writes a value per row).
                moved = args.elements + (rows if op == "reducesum" else args.elements)
                row["floor_ms"] = moved * 4 / (args.bandwidth_gbs * 1e9) * 1e3
                for label, directory in (("kiln", scratch / "kiln"), ("baseline", args.baseline)):
                    if directory is None:
                        continue
                    artifact = directory / f"{name(op, length)}.kiln"
                    row[f"{label}_error"] = check(args.kiln, artifact, op, rows, length,
                                                  args.device, scratch)
                    row[f"{label}_ms"] = bench(args.kiln, artifact, args.device, args.iterations,
                                               scratch)
                if args.device == "cuda":
                    row["torch_ms"] = torch_ms(op, rows, length, args.iterations)
                results.append(row)
                print(f"long_rows: {json.dumps(row)}", file=sys.stderr)

    columns = ["kiln_ms"] + (["baseline_ms"] if args.baseline else []) + ["torch_ms", "floor_ms"]
    print("| op | rows x length | " + " | ".join(c[:-3] + " (ms)" for c in columns) + " |")
    print("| --- | --- |" + " ---: |" * len(columns))
    for row in results:
        cells = [f"{row[c]:.4f}" if row.get(c) is not None else "" for c in columns]
        print(f"| {row['op']} | {row['rows']} x {row['length']} | " + " | ".join(cells) + " |")
    if args.json:
        args.json.write_text(json.dumps({"device": args.device, "elements": args.elements,
                                         "command": " ".join(sys.argv), "results": results},
                                        indent=1))
    if args.plot:
        try:
            import matplotlib
        except ImportError:
            print("long_rows.py: no plot without matplotlib", file=sys.stderr)
            return 0
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        figure, axes = plt.subplots(1, len(OPS), figsize=(11, 4), sharey=True)
        for axis, op in zip(axes, OPS):
            rows = [r for r in results if r["op"] == op]
            lengths = [r["length"] for r in rows]
            for column in columns:
                values = [r.get(column) for r in rows]
                if any(v is not None for v in values):
                    axis.plot(lengths, values, marker="o", label=column[:-3])
            axis.set_xscale("log", base=2)
            axis.set_title(f"{op}, {args.elements} elements (f32)")
            axis.set_xlabel("row length")
            axis.grid(True, alpha=0.3)
        axes[0].set_ylabel("p50 (ms)")
        axes[0].legend()
        figure.tight_layout()
        figure.savefig(args.plot, dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
