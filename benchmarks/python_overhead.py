"""What a call from Python costs: `kiln.Session.run` beside the C API's own run of the same
artifact (`kiln bench`, which times kiln_session_run in C++) and beside ONNX Runtime's Python
`InferenceSession.run`, on models small enough that the call, not the arithmetic, is what is
timed. One thread each (Kiln's session and ONNX Runtime's intra-op pool), the same seeded inputs,
alternating rounds; medians of each round, then the median round.

    .venv/bin/python benchmarks/python_overhead.py [--kiln build/bin/kiln] [--rounds 5]
        [--calls 2000] [--json FILE]

Needs the kiln package installed (pip install ., or the wheel scripts/test.sh builds).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
from onnx import TensorProto
from onnx import helper as h

import kiln

ROOT = Path(__file__).resolve().parents[1]


def add_model():
    """y = x + z over 1 x 16 floats: nothing to compute, only the call."""
    graph = h.make_graph(
        [h.make_node("Add", ["x", "z"], ["y"], name="add")], "add",
        [h.make_tensor_value_info(n, TensorProto.FLOAT, [1, 16]) for n in ("x", "z")],
        [h.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def mlp_model():
    """relu(x @ w + b) then a second layer: 1 x 64 -> 64 -> 16."""
    rng = np.random.default_rng(3)
    inits = [onnx.numpy_helper.from_array(rng.standard_normal(s).astype(np.float32), n)
             for n, s in (("w1", (64, 64)), ("b1", (64,)), ("w2", (64, 16)), ("b2", (16,)))]
    nodes = [h.make_node("MatMul", ["x", "w1"], ["a"]), h.make_node("Add", ["a", "b1"], ["b"]),
             h.make_node("Relu", ["b"], ["c"]), h.make_node("MatMul", ["c", "w2"], ["d"]),
             h.make_node("Add", ["d", "b2"], ["y"])]
    graph = h.make_graph(nodes, "mlp", [h.make_tensor_value_info("x", TensorProto.FLOAT, [1, 64])],
                         [h.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16])], inits)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 17)])


def time_calls(call, calls):
    samples = []
    for _ in range(calls):
        start = time.perf_counter_ns()
        call()
        samples.append(time.perf_counter_ns() - start)
    return statistics.median(samples) / 1000.0  # microseconds


def c_api_median(kiln_tool, artifact_path, calls):
    with tempfile.TemporaryDirectory() as scratch:
        out = Path(scratch) / "bench.json"
        subprocess.run([kiln_tool, "bench", str(artifact_path), "--threads", "1", "--warmup", "100",
                        "--iterations", str(calls), "--json", str(out)], check=True,
                       stdout=subprocess.DEVNULL)
        return json.loads(out.read_text())["latency_ms"]["p50"] * 1000.0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kiln", default=str(ROOT / "build" / "bin" / "kiln"))
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()

    load = os.getloadavg()
    print(f"load average {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}; kiln {kiln.__version__}, "
          f"onnxruntime {onnxruntime.__version__}, {args.rounds} rounds of {args.calls} calls")
    results = {"load_average": load, "rounds": args.rounds, "calls": args.calls, "models": {}}
    rng = np.random.default_rng(0)
    with tempfile.TemporaryDirectory() as scratch:
        for name, model in (("add 1x16", add_model()), ("mlp 1x64", mlp_model())):
            feeds = {i.name: rng.standard_normal([d.dim_value for d in
                                                  i.type.tensor_type.shape.dim]).astype(np.float32)
                     for i in model.graph.input}
            artifact = kiln.compile(model)
            artifact_path = Path(scratch) / f"{name.split()[0]}.kiln"
            artifact.save(artifact_path)
            session = kiln.Session(artifact, threads=1)
            options = onnxruntime.SessionOptions()
            options.intra_op_num_threads = 1
            options.inter_op_num_threads = 1
            ort = onnxruntime.InferenceSession(model.SerializeToString(), options,
                                               providers=["CPUExecutionProvider"])
            got, (expected,) = session.run(feeds)["y"], ort.run(None, feeds)
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-5)
            rounds = {"kiln python": [], "kiln C API": [], "onnxruntime python": []}
            for _ in range(args.rounds):
                rounds["kiln python"].append(time_calls(lambda: session.run(feeds), args.calls))
                rounds["onnxruntime python"].append(
                    time_calls(lambda: ort.run(None, feeds), args.calls))
                rounds["kiln C API"].append(c_api_median(args.kiln, artifact_path, args.calls))
            medians = {k: statistics.median(v) for k, v in rounds.items()}
            overhead = medians["kiln python"] - medians["kiln C API"]
            results["models"][name] = {"median_us": medians, "rounds_us": rounds,
                                       "kiln_python_overhead_us": overhead}
            print(f"{name}: kiln Session.run {medians['kiln python']:.1f} us "
                  f"(C API {medians['kiln C API']:.1f} us, Python adds {overhead:.1f} us); "
                  f"onnxruntime InferenceSession.run {medians['onnxruntime python']:.1f} us; "
                  f"ratio kiln/onnxruntime {medians['kiln python'] / medians['onnxruntime python']:.2f}")
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
