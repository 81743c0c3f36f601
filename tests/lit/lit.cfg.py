# lit configuration for Kiln's MLIR tests.
import os
import lit.formats

config.name = "Kiln"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py.in"]

config.environment["PATH"] = os.pathsep.join(
    [config.kiln_tools_dir, os.path.dirname(config.filecheck), config.environment.get("PATH", "")])
config.substitutions.append(("%kiln_source_dir", config.kiln_source_dir))
if config.kiln_cuda:
    config.available_features.add("cuda-toolkit")
# CUDA's libdevice bitcode, which kernels link for math functions.
if config.kiln_libdevice and os.path.exists(config.kiln_libdevice):
    config.available_features.add("libdevice")
    config.substitutions.append(("%libdevice", config.kiln_libdevice))

# Execution tests lower graph programs through Kiln's conversion and upstream passes to LLVM and
# run them with mlir-runner on the CPU.
config.substitutions.append((
    "%lower_to_llvm",
    "mlir-opt --linalg-fuse-elementwise-ops --one-shot-bufferize=bufferize-function-boundaries "
    "--convert-linalg-to-loops --convert-scf-to-cf --expand-strided-metadata --lower-affine "
    "--convert-math-to-llvm --convert-math-to-libm --convert-to-llvm --reconcile-unrealized-casts"))
config.substitutions.append((
    "%run_main",
    "mlir-runner -e main -entry-point-result=void -shared-libs="
    + os.path.join(config.llvm_lib_dir, "libmlir_c_runner_utils.so") + ","
    + os.path.join(config.llvm_lib_dir, "libmlir_runner_utils.so")))

# The ONNX importer's tests build their models at test time with onnx.helper, which the system
# Python provides (the python3 on PATH may lack onnx and numpy).
config.suffixes.append(".test")
config.excludes.append("Inputs")
python = "/usr/bin/python3"
config.substitutions.append(("%python", python))
import subprocess
if os.path.exists(python) and subprocess.run(
        [python, "-c", "import onnx, numpy"], capture_output=True).returncode == 0:
    config.available_features.add("onnx-python")
if os.path.isdir("/usr/share/libonnx-testdata/data/node"):
    config.available_features.add("onnx-node-testdata")
