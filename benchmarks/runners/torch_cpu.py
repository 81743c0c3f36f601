"""Times an exported model's PyTorch module on the CPU: eager, or compiled with torch.compile.

    python benchmarks/runners/torch_cpu.py MODEL_DIR [--mode eager|compile] [--warmup N]
        [--iterations N] [--threads N] [--max-seconds S] [--json FILE] [--output-dir DIR]

MODEL_DIR is an export from benchmarks/models/export.py (model.pt, inputs/, meta.json). The module
runs in eval mode under torch.inference_mode(), fp32, on the export's seeded inputs.
--mode eager: compile_s is the time to load the pickled module (eager mode compiles nothing).
--mode compile: torch.compile(backend="inductor") on the CPU; compile_s is the module load plus the
first call, which traces and compiles (Inductor's caches live where TORCHINDUCTOR_CACHE_DIR says; a
fresh directory makes it a cold compile). See measure.py for the JSON written.
"""

import sys
import time

import measure


def main() -> int:
    parser = measure.argument_parser(__doc__.split("\n\n")[0])
    parser.add_argument("--mode", choices=["eager", "compile"], default="eager")
    args = parser.parse_args()
    measure.check_counts(parser, args)

    import torch

    # model.pt pickles the model classes defined beside the export script.
    sys.path.insert(0, str(measure.Path(__file__).resolve().parent.parent / "models"))
    if args.threads > 0:
        torch.set_num_threads(args.threads)
    meta = measure.load_meta(args.model_dir)
    start = time.perf_counter()
    model = torch.load(args.model_dir / "model.pt", weights_only=False).eval()
    inputs = [torch.from_numpy(value) for value in measure.load_inputs(args.model_dir).values()]
    if args.mode == "compile":
        model = torch.compile(model, backend="inductor")
        with torch.inference_mode():
            model(*inputs)
    compile_s = time.perf_counter() - start

    def run_once():
        with torch.inference_mode():
            outputs = model(*inputs)
        outputs = (outputs,) if isinstance(outputs, torch.Tensor) else tuple(outputs)
        return [o.numpy() for o in outputs]

    label = "eager" if args.mode == "eager" else "torch.compile, inductor"
    return measure.measure(args, f"torch {torch.__version__} ({label})", compile_s, run_once,
                           torch.get_num_threads(), {"mode": args.mode, "model_name": meta["model"]})


if __name__ == "__main__":
    sys.exit(main())
