#!/usr/bin/env python3
"""Runs the ONNX node tests the way a user runs a model: through the `kiln` command line.

    .venv/bin/python tests/conformance/cli_node_tests.py --kiln build/bin/kiln
        [--data /usr/share/libonnx-testdata/data/node] [--filter REGEX] [--jobs N]
        [--compiled] [--device cpu|cuda-sim] [--json FILE] [--min-passed N]

For each test directory: `kiln run DIR/model.onnx --input NAME=@DIR/test_data_set_0/input_K.pb ...
--output-dir OUT` (compiled just in time, the import specialized for the given inputs as the
conformance suite's is), or with --compiled `kiln compile DIR/model.onnx` then `kiln run` on the
artifact (every input a value of the run). Each output K is compared with output_K.pb at the
suite's tolerances (|got - want| <= atol + rtol * |want|; NaN equals NaN; integers exactly).
Tests with values that are not tensors (sequences, optionals, maps), strings or subgraphs are
skipped, as `kiln conformance` skips them (docs/conformance.md).

Exit status: 0, or 1 when fewer than --min-passed tests pass; 77 without numpy and onnx.
"""

import argparse
import concurrent.futures
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

try:
    import numpy as np
    import onnx
    from onnx import numpy_helper
except ImportError:
    print("cli_node_tests.py: numpy and onnx are needed (scripts/install-deps.sh --models)",
          file=sys.stderr)
    sys.exit(77)


def skip_reason(model: onnx.ModelProto) -> str:
    """Why the conformance suite skips this test, or ''."""
    for value in list(model.graph.input) + list(model.graph.output):
        if not value.type.HasField("tensor_type"):
            return "a value that is not a tensor"
        if value.type.tensor_type.elem_type == onnx.TensorProto.STRING:
            return "strings"
    for node in model.graph.node:
        if any(a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS)
               for a in node.attribute):
            return "a subgraph"
    return ""


def compare(got: np.ndarray, want: np.ndarray, rtol: float, atol: float) -> str:
    """'' when `got` matches `want`, else what differs."""
    if got.shape != want.shape:
        return f"shape {list(got.shape)} instead of {list(want.shape)}"
    if got.dtype.kind == "V" or want.dtype.kind == "V" or want.dtype.name not in np.sctypeDict:
        # Types NumPy lacks (bfloat16, the float8s) are written as raw bytes: bfloat16 compared
        # as the floats its bits hold, the 8-bit codes exactly.
        if got.dtype.itemsize != want.dtype.itemsize:
            return f"{got.dtype.itemsize}-byte elements instead of {want.dtype.itemsize}"
        if got.dtype.itemsize == 2:
            def widen(a):
                return (np.ascontiguousarray(a).view(np.uint16).astype(np.uint32) << 16) \
                    .view(np.float32)
            got, want = widen(got), widen(want)
        else:
            got = np.ascontiguousarray(got).view(np.uint8)
            want = np.ascontiguousarray(want).view(np.uint8)
    if want.dtype.kind in "fc":
        bad = ~(np.isclose(got, want, rtol=rtol, atol=atol, equal_nan=True))
    else:
        bad = got != want
    if bad.any():
        return f"{int(bad.sum())} of {want.size} elements differ"
    return ""


def last_line(stderr: str, code: int) -> str:
    lines = [line for line in stderr.strip().splitlines() if "error" in line] or \
        stderr.strip().splitlines()
    return lines[-1] if lines else f"exit status {code}"


def run_test(kiln: str, directory: Path, compiled: bool, device: str, rtol: float,
             atol: float) -> tuple:
    """(name, 'pass' | 'fail' | 'skip', detail)."""
    try:
        return check_test(kiln, directory, compiled, device, rtol, atol)
    except subprocess.TimeoutExpired:
        return directory.name, "fail", "timed out after 120 s"


def check_test(kiln: str, directory: Path, compiled: bool, device: str, rtol: float,
               atol: float) -> tuple:
    name = directory.name
    try:
        model = onnx.load(str(directory / "model.onnx"))
    except Exception as error:  # noqa: BLE001  (a model onnx cannot read fails the test)
        return name, "fail", f"onnx cannot load the model: {error}"
    reason = skip_reason(model)
    if reason:
        return name, "skip", reason
    data = directory / "test_data_set_0"
    initializers = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in initializers]
    with tempfile.TemporaryDirectory(prefix="kiln-cli-node-") as scratch:
        out = Path(scratch) / "out"
        feeds = []
        for k, input_name in enumerate(inputs):
            path = data / f"input_{k}.pb"
            if path.exists():
                feeds += ["--input", f"{input_name}=@{path}"]
        target = ["--target", "cuda", "--gpu-arch", "cuda-sim"] if device == "cuda-sim" else []
        runnable = str(directory / "model.onnx")
        if compiled:
            artifact = Path(scratch) / "model.kiln"
            step = subprocess.run([kiln, "compile", runnable, "-o", str(artifact), "-q"] + target,
                                  capture_output=True, text=True, timeout=120)
            if step.returncode != 0:
                return name, "fail", "compile: " + last_line(step.stderr, step.returncode)
            runnable = str(artifact)
        step = subprocess.run([kiln, "run", runnable, "--device", device, "--output-dir", str(out)]
                              + feeds, capture_output=True, text=True, timeout=120)
        if step.returncode != 0:
            return name, "fail", "run: " + last_line(step.stderr, step.returncode)
        for k, output in enumerate(model.graph.output):
            want = numpy_helper.to_array(onnx.load_tensor(str(data / f"output_{k}.pb")))
            written = out / f"{output.name}.npy"
            if not written.exists():
                return name, "fail", f"no output '{output.name}'"
            problem = compare(np.load(written), want, rtol, atol)
            if problem:
                return name, "fail", f"output '{output.name}': {problem}"
    return name, "pass", ""


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kiln", default="build/bin/kiln")
    parser.add_argument("--data", type=Path,
                        default=Path("/usr/share/libonnx-testdata/data/node"))
    parser.add_argument("--filter", default="", help="only tests whose name matches this regex")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--compiled", action="store_true",
                        help="kiln compile, then kiln run on the artifact (inputs at run time)")
    parser.add_argument("--device", choices=["cpu", "cuda-sim"], default="cpu")
    parser.add_argument("--rtol", type=float, default=1e-3)
    parser.add_argument("--atol", type=float, default=1e-7)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--min-passed", type=int, default=0)
    args = parser.parse_args()

    pattern = re.compile(args.filter)
    directories = sorted(d for d in args.data.iterdir()
                         if (d / "model.onnx").exists() and pattern.search(d.name))
    results = []
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futures = [pool.submit(run_test, args.kiln, d, args.compiled, args.device, args.rtol,
                               args.atol) for d in directories]
        for done, future in enumerate(concurrent.futures.as_completed(futures), 1):
            name, status, detail = future.result()
            results.append({"test": name, "status": status, "detail": detail})
            if status == "fail":
                print(f"FAIL {name}: {detail}", flush=True)
            if done % 100 == 0:
                print(f"cli_node_tests: {done} of {len(futures)}", file=sys.stderr, flush=True)
    counts = {s: sum(r["status"] == s for r in results) for s in ("pass", "fail", "skip")}
    print(f"{counts['pass']} passed, {counts['fail']} failed, {counts['skip']} skipped of "
          f"{len(results)} ({'kiln compile + kiln run' if args.compiled else 'kiln run MODEL.onnx'}"
          f", {args.device})")
    if args.json:
        args.json.write_text(json.dumps({"command": " ".join(sys.argv), "counts": counts,
                                         "results": sorted(results, key=lambda r: r["test"])},
                                        indent=1))
    return 1 if counts["pass"] < args.min_passed else 0


if __name__ == "__main__":
    sys.exit(main())
