"""Times an exported ONNX model under ONNX Runtime (PyPI `onnxruntime`), CPU execution provider.

    python benchmarks/runners/ort_runner.py MODEL_DIR [--warmup N] [--iterations N] [--threads N]
        [--max-seconds S] [--json FILE] [--output-dir DIR]

The session gets every graph optimization (ORT_ENABLE_ALL) and --threads intra-op threads;
compile_s is the session creation (model load and graph optimization). The inputs are the
export's seeded inputs/NAME.npy. See measure.py for the JSON written.
"""

import sys
import time

import measure


def main() -> int:
    parser = measure.argument_parser(__doc__.split("\n\n")[0])
    args = parser.parse_args()
    measure.check_counts(parser, args)

    import onnxruntime as ort

    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    if args.threads > 0:
        options.intra_op_num_threads = args.threads
    start = time.perf_counter()
    session = ort.InferenceSession(str(args.model_dir / "model.onnx"), options,
                                   providers=["CPUExecutionProvider"])
    compile_s = time.perf_counter() - start
    inputs = measure.load_inputs(args.model_dir)
    missing = [i.name for i in session.get_inputs() if i.name not in inputs]
    if missing:
        raise SystemExit(f"ort_runner: no inputs/{missing[0]}.npy in {args.model_dir}")
    feeds = {i.name: inputs[i.name] for i in session.get_inputs()}
    return measure.measure(args, f"onnxruntime {ort.__version__} (CPUExecutionProvider, ORT_ENABLE_ALL)",
                           compile_s, lambda: session.run(None, feeds), args.threads,
                           {"providers": session.get_providers()})


if __name__ == "__main__":
    sys.exit(main())
