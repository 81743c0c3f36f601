#!/usr/bin/env python3
"""Roofline floors for benchmark results: how fast a model could run on this machine at best.

    python3 benchmarks/runners/roofline.py --device cuda|cpu --model MODEL.onnx
        --result NAME=BENCH.json [--result ...] [--json FILE]

Measures the machine's two ceilings with PyTorch on the device: the peak matrix-multiply rate
(fp32 and fp16, the best of a few large square products on random data) and the memory bandwidth
(a large device-to-device copy, counting bytes read and written). Counts the model's work from its
ONNX graph after shape inference: 2 FLOPs per multiply-add of every Conv, ConvTranspose, Gemm and
MatMul, and the minimal bytes any implementation must move (initializers, inputs and outputs,
each once). A case's floor is max(FLOPs / peak rate, bytes / bandwidth); its fraction is the floor
over its measured median latency (1.0 would be at the roofline). Each result is a `kiln bench
--json` file or a `torch_cuda.py` list; fp16 cases use the fp16 peak.

Made for GPUs, where PyTorch's products run at cuBLAS's peak. `--device cpu` works (scripts/
gpu-check.sh's dry run), but Debian's PyTorch multiplies with a generic BLAS far below the CPU's
peak, so its CPU ceiling is too low and fractions above 1 say so.
"""

import argparse
import json
import sys
import time
from pathlib import Path


def measure_peaks(device: str) -> dict:
    import torch

    def synchronize():
        if device == "cuda":
            torch.cuda.synchronize()

    peaks = {}
    size = 8192 if device == "cuda" else 2048
    dtypes = {"fp32": torch.float32, "fp16": torch.float16} if device == "cuda" else {
        "fp32": torch.float32}
    if device == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = False
    for name, dtype in dtypes.items():
        a = torch.randn(size, size, device=device, dtype=dtype)
        b = torch.randn(size, size, device=device, dtype=dtype)
        best = float("inf")
        for _ in range(5):
            synchronize()
            start = time.perf_counter()
            torch.mm(a, b)
            synchronize()
            best = min(best, time.perf_counter() - start)
        peaks[f"{name}_flops_per_s"] = 2.0 * size ** 3 / best
    count = (1 << 28) if device == "cuda" else (1 << 25)  # 1 GiB or 128 MiB of fp32
    source = torch.randn(count, device=device)
    target = torch.empty_like(source)
    best = float("inf")
    for _ in range(5):
        synchronize()
        start = time.perf_counter()
        target.copy_(source)
        synchronize()
        best = min(best, time.perf_counter() - start)
    peaks["bytes_per_s"] = 2.0 * source.numel() * source.element_size() / best
    return peaks


def model_costs(path: Path) -> dict:
    import numpy as np
    import onnx
    from onnx import numpy_helper, shape_inference

    # Data propagation follows the Shape -> Reshape chains exporters write.
    model = shape_inference.infer_shapes(onnx.load(str(path)), data_prop=True)
    graph = model.graph
    shapes = {}
    for value in list(graph.input) + list(graph.output) + list(graph.value_info):
        dims = [d.dim_value for d in value.type.tensor_type.shape.dim]
        shapes[value.name] = dims
    initializers = {t.name: numpy_helper.to_array(t) for t in graph.initializer}
    for name, array in initializers.items():
        shapes[name] = list(array.shape)

    def elements(dims):
        return int(np.prod(dims)) if dims else 1

    def known(dims):
        return dims is not None and len(dims) > 0 and all(d > 0 for d in dims)

    flops = 0
    unshaped = 0  # products whose shapes inference left unknown: the count is a lower bound
    for node in graph.node:
        if node.op_type in ("Conv", "ConvTranspose"):
            out = shapes.get(node.output[0])
            weight = shapes.get(node.input[1])
            if known(out) and known(weight):
                # Each output element takes (C / groups) * kernel multiply-adds: the weight's
                # per-filter size.
                flops += 2 * elements(out) * elements(weight[1:])
            else:
                unshaped += 1
        elif node.op_type in ("Gemm", "MatMul"):
            a = shapes.get(node.input[0])
            out = shapes.get(node.output[0])
            if known(a) and known(out):
                trans_a = any(att.name == "transA" and att.i for att in node.attribute)
                k = a[0] if (node.op_type == "Gemm" and trans_a) else a[-1]
                flops += 2 * elements(out) * k
            else:
                unshaped += 1
    itemsize = 4
    minimal = sum(a.nbytes for a in initializers.values())
    for value in list(graph.input) + list(graph.output):
        if value.name not in initializers:
            minimal += elements(shapes[value.name]) * itemsize
    return {"flops": flops, "minimal_bytes": minimal, "unshaped_products": unshaped}


def cases_of(name: str, path: Path) -> list:
    data = json.loads(path.read_text())
    entries = data if isinstance(data, list) else [data]
    cases = []
    for entry in entries:
        label = name if len(entries) == 1 else f"{name} {entry.get('peer', '')} {entry.get('dtype', '')}"
        cases.append({"case": label.strip(), "dtype": entry.get("dtype", "fp32"),
                      "p50_ms": entry["latency_ms"]["p50"]})
    return cases


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--device", choices=["cpu", "cuda"], required=True)
    parser.add_argument("--model", type=Path, required=True, help="the ONNX model measured")
    parser.add_argument("--result", action="append", default=[], help="NAME=BENCH.json")
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    peaks = measure_peaks(args.device)
    costs = model_costs(args.model)
    report = {"device": args.device, "peaks": peaks, "model": str(args.model), **costs,
              "cases": []}
    print(f"roofline: peaks {', '.join(f'{k} {v:.3g}' for k, v in peaks.items())}; model "
          f"{costs['flops'] / 1e9:.2f} GFLOP, {costs['minimal_bytes'] / 2**20:.1f} MiB minimal")
    for spec in args.result:
        name, _, file = spec.partition("=")
        path = Path(file)
        if not path.is_file():
            continue
        for case in cases_of(name, path):
            rate = peaks.get(f"{case['dtype']}_flops_per_s", peaks["fp32_flops_per_s"])
            bytes_per = 2 if case["dtype"] == "fp16" else 4
            compute_s = costs["flops"] / rate
            memory_s = costs["minimal_bytes"] * bytes_per / 4 / peaks["bytes_per_s"]
            floor_ms = max(compute_s, memory_s) * 1e3
            case.update({"floor_ms": floor_ms, "compute_floor_ms": compute_s * 1e3,
                         "memory_floor_ms": memory_s * 1e3,
                         "fraction_of_roofline": floor_ms / case["p50_ms"]})
            report["cases"].append(case)
            print(f"roofline: {case['case']}: p50 {case['p50_ms']:.3f} ms, floor {floor_ms:.3f} ms "
                  f"({'compute' if compute_s >= memory_s else 'memory'}-bound), "
                  f"{100 * case['fraction_of_roofline']:.1f}% of the roofline")
    if args.json:
        args.json.write_text(json.dumps(report, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
