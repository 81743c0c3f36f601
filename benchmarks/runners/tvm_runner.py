"""Compiles an exported ONNX model with Apache TVM (PyPI apache-tvm: the Relax ONNX frontend, the
default Relax pipeline, LLVM for the host CPU), and times it with TVM's Relax virtual machine.

    python benchmarks/runners/tvm_runner.py compile MODEL_DIR -o MODEL.so
    python benchmarks/runners/tvm_runner.py run MODEL_DIR --module MODEL.so [--warmup N]
        [--iterations N] [--threads N] [--max-seconds S] [--json FILE] [--output-dir DIR]

`compile` runs tvm.relax.frontend.onnx.from_onnx (weights bound as constants), then tvm.compile for
the target `llvm -mcpu=<the host CPU as LLVM names it>` and exports the library. No auto-tuning
(MetaSchedule) is done: that takes hours per model; the figures are TVM's untuned default schedules.
`run` loads the library into a Relax VM on tvm.cpu() (--threads: TVM_NUM_THREADS, set by the
harness) and calls `main` on the export's seeded inputs; compile_s is the library load. See
measure.py for the JSON written.
"""

import sys
import time
from pathlib import Path

import measure


def host_target():
    import tvm
    from tvm.target import codegen
    return tvm.target.Target({"kind": "llvm", "mcpu": codegen.llvm_get_system_cpu()})


def compile_model(model_dir: Path, output: Path) -> int:
    import onnx
    import tvm
    from tvm.relax.frontend.onnx import from_onnx

    model = onnx.load(str(model_dir / "model.onnx"))
    module = from_onnx(model, keep_params_in_input=False)
    target = host_target()
    print(f"tvm_runner: tvm.compile for {target}", flush=True)
    executable = tvm.compile(module, target=target)
    executable.export_library(str(output))
    return 0


def main() -> int:
    args = measure.ahead_of_time_arguments(__doc__, "tvm_runner.py", compile_model,
                                           "the library from `compile`")
    if isinstance(args, int):
        return args

    import tvm
    from tvm import relax

    device = tvm.cpu()
    start = time.perf_counter()
    vm = relax.VirtualMachine(tvm.runtime.load_module(str(args.module)), device)
    main_function = vm["main"]
    compile_s = time.perf_counter() - start
    inputs = [tvm.runtime.tensor(value, device) for value in measure.load_inputs(args.model_dir).values()]

    def run_once():
        outputs = main_function(*inputs)
        outputs = list(outputs) if not hasattr(outputs, "numpy") else [outputs]
        return [o.numpy() for o in outputs]

    return measure.measure(args, f"Apache TVM {tvm.__version__} (Relax, {host_target()}, untuned)",
                           compile_s, run_once, args.threads)


if __name__ == "__main__":
    sys.exit(main())
