"""Compiles the cases graph_cases.py generated and runs them with the product's own commands.

  compile_and_run.py OUT_DIR DEVICE
      compiles OUT_DIR/cases.mlir into OUT_DIR/cases.kiln with `kiln compile`, binding each
      dynamically declared input with --shape, then runs the artifact once with `kiln run
      --device DEVICE`, every input given as OUT_DIR/inputs/NAME.npy, writing each output to
      OUT_DIR/out/NAME.npy. DEVICE is cpu (--target cpu) or cuda-sim (--target cuda --gpu-arch
      cuda-sim). Prints each command before running it; exits non-zero when one fails.

The inputs are too many for RUN lines to spell out (OUT_DIR/driver.json lists them). Needs no
NumPy, so that it starts fast.
"""
import json
import os
import subprocess
import sys

TARGETS = {"cpu": ["--target", "cpu"], "cuda-sim": ["--target", "cuda", "--gpu-arch", "cuda-sim"]}


def compile_and_run(out_dir, device):
    with open(os.path.join(out_dir, "driver.json")) as f:
        driver = json.load(f)
    artifact = os.path.join(out_dir, "cases.kiln")
    commands = [
        ["kiln", "compile", os.path.join(out_dir, "cases.mlir"), "-o", artifact, "--force",
         "--quiet"] + TARGETS[device] +
        [f"--shape={name}={dims}" for name, dims in driver["shapes"]],
        ["kiln", "run", artifact, "--device", device, "--output-dir",
         os.path.join(out_dir, "out"), "--force"] +
        [f"--input={name}=@{os.path.join(out_dir, 'inputs', name + '.npy')}"
         for name in driver["inputs"]],
    ]
    for command in commands:
        print(" ".join(command), flush=True)
        status = subprocess.run(command).returncode
        if status != 0:
            print(f"kiln {command[1]} exited with status {status}")
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(compile_and_run(sys.argv[1], sys.argv[2]))
