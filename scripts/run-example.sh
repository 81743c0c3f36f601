#!/usr/bin/env bash
# Sets up Kiln on a fresh Debian 12 machine and runs its main job on the example models shipped in
# examples/:
#   1. write the ONNX model of examples/tiny_cnn_onnx.py (a small CNN, seeded weights);
#   2. compile it ahead of time for the CPU into a .kiln artifact and print the artifact's
#      signature, steps (generated kernels and oneDNN calls) and memory plan;
#   3. run the artifact on a seeded input written as .npy, writing its output as .npy, and check it
#      against a NumPy evaluation of the same ONNX graph (examples/reference.py);
#   4. measure it (kiln bench);
#   5. run the graph-dialect program examples/tiny_cnn.mlir (the same network written in Kiln's
#      graph dialect) just in time on the same input, and check it against the same reference;
#   6. compile the ONNX model for CUDA (batch 4): kernels through NVVM to sm_80/sm_90 cubins
#      (ptxas) and PTX, cuDNN and cuBLASLt calls, and the same kernels retargeted to the simulated
#      CUDA device, when the CUDA toolkit is installed;
#   7. run that CUDA artifact on the simulated CUDA device (the CUDA device's code on the CPU) and
#      check it against the same reference;
#   8. install the Python package (pip install . from this build tree, into build/python-env) and
#      run examples/python_quickstart.py (kiln.compile, kiln.Session.run) on the same input,
#      checked against the same reference.
#
# BUILD_DIR (default build/) is where Kiln is built and the example's files are written.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${BUILD_DIR:-$root/build}"

"$root/scripts/install-deps.sh"
# ccache keys on paths relative to the checkout, so a fresh clone elsewhere reuses the cache.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
if [[ ! -f "$build/build.ninja" ]]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
fi
echo "== building kiln (log: $build/build-kiln.log)"
ninja -C "$build" kiln kiln-opt > "$build/build-kiln.log" 2>&1 ||
  { tail -n 60 "$build/build-kiln.log"; exit 1; }
kiln="$build/bin/kiln"
out="$build/examples"
mkdir -p "$out"

echo "== 1. ONNX model: examples/tiny_cnn_onnx.py -> $out/tiny_cnn.onnx"
/usr/bin/python3 "$root/examples/tiny_cnn_onnx.py" "$out/tiny_cnn.onnx"

echo "== 2. kiln compile (batch 4) -> $out/tiny_cnn.kiln"
"$kiln" compile "$out/tiny_cnn.onnx" --shape image=4x3x32x32 -o "$out/tiny_cnn.kiln" --force
"$kiln" inspect "$out/tiny_cnn.kiln"

echo "== 3. kiln run on a seeded input, checked against NumPy"
/usr/bin/python3 - "$out/image.npy" <<'EOF'
import sys
import numpy as np
# Four noise images, each with its own colour cast (a per-channel offset), so they differ.
rng = np.random.default_rng(7)
image = rng.standard_normal((4, 3, 32, 32)) + rng.normal(0, 1.5, (4, 3, 1, 1))
np.save(sys.argv[1], image.astype(np.float32))
EOF
"$kiln" run "$out/tiny_cnn.kiln" --input image=@"$out/image.npy" --output-dir "$out/outputs" \
  --force --summary
/usr/bin/python3 "$root/examples/reference.py" "$out/tiny_cnn.onnx" "$out/image.npy" \
  "$out/outputs/probs.npy"

echo "== 4. kiln bench"
"$kiln" bench "$out/tiny_cnn.kiln" --iterations 200 --json "$out/tiny_cnn.bench.json" --force

echo "== 5. kiln run examples/tiny_cnn.mlir (graph dialect, compiled just in time), checked against NumPy"
"$kiln" run "$root/examples/tiny_cnn.mlir" --input image=@"$out/image.npy" \
  --output-dir "$out/outputs-mlir" --force --summary
/usr/bin/python3 "$root/examples/reference.py" "$out/tiny_cnn.onnx" "$out/image.npy" \
  "$out/outputs-mlir/probs.npy"

if [[ -x /usr/local/cuda/bin/ptxas ]]; then
  echo "== 6. kiln compile --target cuda (batch 4): sm_80 and sm_90 cubins (ptxas), PTX, cuDNN/cuBLASLt calls, the simulated device's code"
  "$kiln" compile "$out/tiny_cnn.onnx" --shape image=4x3x32x32 -o "$out/tiny_cnn.cuda.kiln" \
    --target cuda --gpu-arch sm_80,sm_90,cuda-sim --force
  "$kiln" inspect "$out/tiny_cnn.cuda.kiln"

  echo "== 7. kiln run the CUDA artifact on the simulated CUDA device, checked against NumPy"
  "$kiln" run "$out/tiny_cnn.cuda.kiln" --device cuda-sim --input image=@"$out/image.npy" \
    --output-dir "$out/outputs-cuda-sim" --force --summary
  /usr/bin/python3 "$root/examples/reference.py" "$out/tiny_cnn.onnx" "$out/image.npy" \
    "$out/outputs-cuda-sim/probs.npy"
fi
echo "== 8. the Python package: pip install . into build/python-env, then examples/python_quickstart.py, checked against NumPy"
# The wheel is made from this build tree (only the Python module is built in it), in the
# environment scripts/python-env.sh gives (Debian's numpy and onnx, the pinned build tools).
python="$("$root/scripts/python-env.sh" "$build")"
cache_flag() { grep -oP "^$1:BOOL=\K.*" "$build/CMakeCache.txt" || echo OFF; }
"$python" -m pip install --quiet --disable-pip-version-check --no-build-isolation \
  --no-deps --force-reinstall "$root" --config-settings=build-dir="$build" \
  --config-settings=cmake.define.KILN_BUILD_TESTS="$(cache_flag KILN_BUILD_TESTS)" \
  --config-settings=cmake.define.KILN_BUILD_FUZZERS="$(cache_flag KILN_BUILD_FUZZERS)" \
  > "$build/example-wheel.log" 2>&1 || { tail -n 40 "$build/example-wheel.log"; exit 1; }
(cd "$out" && "$python" "$root/examples/python_quickstart.py" "$out/tiny_cnn.onnx" \
  "$out/image.npy" "$out/outputs-python-probs.npy")
/usr/bin/python3 "$root/examples/reference.py" "$out/tiny_cnn.onnx" "$out/image.npy" \
  "$out/outputs-python-probs.npy"
echo "== run-example: every step passed"
