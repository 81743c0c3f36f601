"""Compiles an exported ONNX model with IREE (PyPI iree-base-compiler) for the host CPU, and times it
with IREE's runtime (iree-base-runtime).

    python benchmarks/runners/iree_runner.py compile MODEL_DIR -o MODEL.vmfb
    python benchmarks/runners/iree_runner.py run MODEL_DIR --module MODEL.vmfb [--warmup N]
        [--iterations N] [--threads N] [--max-seconds S] [--json FILE] [--output-dir DIR]

`compile` imports model.onnx into MLIR with iree-import-onnx, then runs iree-compile with the llvm-cpu
backend for the host CPU (--iree-hal-target-device=local
--iree-hal-local-target-device-backends=llvm-cpu --iree-llvmcpu-target-cpu=host); both are the
installed package's tools beside this interpreter. `run` loads the module on the `local-task`
driver (--threads: the task topology's group count) and calls its `main_graph` on the export's
seeded inputs; compile_s is the module load. See measure.py for the JSON written.
"""

import subprocess
import sys
import tempfile
import time
from pathlib import Path

import measure

COMPILE_FLAGS = ["--iree-hal-target-device=local", "--iree-hal-local-target-device-backends=llvm-cpu",
                 "--iree-llvmcpu-target-cpu=host"]


def tool(name: str) -> str:
    path = Path(sys.executable).parent / name
    return str(path) if path.exists() else name


def compile_model(model_dir: Path, output: Path) -> int:
    with tempfile.TemporaryDirectory(prefix="kiln-bench-iree-", dir=output.parent) as scratch:
        imported = Path(scratch) / "model.mlir"
        for command in ([tool("iree-import-onnx"), str(model_dir / "model.onnx"), "-o", str(imported)],
                        [tool("iree-compile"), str(imported), *COMPILE_FLAGS, "-o", str(output)]):
            print("iree_runner: " + " ".join(command), flush=True)
            completed = subprocess.run(command)
            if completed.returncode != 0:
                print(f"iree_runner: {Path(command[0]).name} failed (exit {completed.returncode})",
                      file=sys.stderr)
                return 1
    return 0


def main() -> int:
    args = measure.ahead_of_time_arguments(__doc__, "iree_runner.py", compile_model,
                                           "the .vmfb from `compile`")
    if isinstance(args, int):
        return args

    import importlib.metadata
    import iree.runtime as rt

    if args.threads > 0:
        rt.flags.parse_flags(f"--task_topology_max_group_count={args.threads}")
    start = time.perf_counter()
    config = rt.Config("local-task")
    context = rt.SystemContext(config=config)
    context.add_vm_module(rt.VmModule.mmap(config.vm_instance, str(args.module)))
    function = context.modules.module["main_graph"]
    compile_s = time.perf_counter() - start
    inputs = list(measure.load_inputs(args.model_dir).values())

    def run_once():
        outputs = function(*inputs)
        outputs = outputs if isinstance(outputs, (tuple, list)) else (outputs,)
        return [o.to_host() for o in outputs]

    version = importlib.metadata.version("iree-base-runtime")
    return measure.measure(args, f"IREE {version} (llvm-cpu, host CPU, local-task)", compile_s,
                           run_once, args.threads, {"compile_flags": COMPILE_FLAGS})


if __name__ == "__main__":
    sys.exit(main())
