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
# The CUDA code paths, the simulated CUDA device's included, are built.
if config.kiln_cuda:
    config.available_features.add("cuda-toolkit")
# CUDA's libdevice bitcode, which kernels link for math functions.
if config.kiln_libdevice and os.path.exists(config.kiln_libdevice):
    config.available_features.add("libdevice")
    config.substitutions.append(("%libdevice", config.kiln_libdevice))

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
