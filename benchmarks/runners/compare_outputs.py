"""Compares each runtime's outputs with ONNX Runtime's and with PyTorch's for the same inputs.

    python benchmarks/runners/compare_outputs.py --torch REFERENCE_DIR [--ort ORT_DIR]
        RUNTIME=DIR [RUNTIME=DIR ...]

Every directory holds one NAME.npy per model output (REFERENCE_DIR: the export's reference/, PyTorch
eager's fp32 outputs). Prints one JSON line: {RUNTIME: {"max_abs_error_vs_torch": E,
"max_abs_error_vs_ort": E, "errors_per_output": {NAME: {...}}, "output_max_abs": A}}, the errors
being the largest absolute elementwise differences over all outputs; an output whose shape differs
or that holds NaN or infinity is reported as such (error "inf"), never skipped.
"""

import argparse
import json
import sys
from pathlib import Path

import numpy as np


def max_abs_error(value: np.ndarray, reference: np.ndarray) -> float:
    if value.shape != reference.shape:
        return float("inf")
    value = value.astype(np.float64)
    reference = reference.astype(np.float64)
    if not np.isfinite(value).all():
        return float("inf")
    return float(np.max(np.abs(value - reference))) if value.size else 0.0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--torch", type=Path, required=True)
    parser.add_argument("--ort", type=Path, default=None)
    parser.add_argument("outputs", nargs="+", help="RUNTIME=DIR")
    args = parser.parse_args()

    names = sorted(p.stem for p in args.torch.glob("*.npy"))
    if not names:
        parser.error(f"no reference outputs in {args.torch}")
    references = {"torch": args.torch, "ort": args.ort}
    report = {}
    for item in args.outputs:
        runtime, _, directory = item.partition("=")
        per_output = {}
        largest = 0.0
        for name in names:
            path = Path(directory) / f"{name}.npy"
            if not path.is_file():
                per_output[name] = {"missing": True}
                continue
            value = np.load(path)
            largest = max(largest, float(np.max(np.abs(value))) if value.size else 0.0)
            per_output[name] = {
                f"vs_{peer}": max_abs_error(value, np.load(base / f"{name}.npy"))
                for peer, base in references.items() if base is not None}
        figures = {"errors_per_output": per_output, "output_max_abs": largest}
        for peer, base in references.items():
            values = [o.get(f"vs_{peer}") for o in per_output.values()]
            figures[f"max_abs_error_vs_{peer}"] = (
                None if base is None else float("inf") if any(v is None for v in values) else max(values))
        report[runtime] = figures
    # json writes inf as Infinity, which Python's json reads back.
    print(json.dumps(report))
    return 0


if __name__ == "__main__":
    sys.exit(main())
