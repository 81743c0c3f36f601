#!/usr/bin/env bash
# Sets up, builds and runs every test suite: installs the dependencies (idempotent: Debian's
# packages, and the pinned PyPI set in .venv for the model tests, today's ONNX node tests and the
# benchmarks), configures a Release build with Ninja (and ccache when present) in build/, builds it,
# and runs ctest, which runs the GoogleTest suites, the lit suite, the conformance suites and the
# model checks and prints the counts; then builds the Python wheel from that tree and runs the
# Python package's tests against it installed in a fresh virtual environment, builds the runtime
# alone and serves a compiled artifact with it, and runs README's first command
# (scripts/run-example.sh) on the built tree.
#
#   scripts/test.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:-$root/build}"

"$root/scripts/install-deps.sh" --models
# ccache keys on paths relative to the checkout, so a fresh clone elsewhere reuses the cache.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"

start=$(date +%s)
# Configured every time (a few seconds when nothing changed): a build tree that
# scripts/run-example.sh made first has neither the fuzzers nor, if .venv came later, the current
# ONNX release's node tests, which this configuration finds. The loader fuzzers need clang with
# libFuzzer, which install-deps.sh provides.
mkdir -p "$build"
# The Python package's native module builds here too, with the interpreter and nanobind the wheel
# below is built with (scripts/python-env.sh), so that the wheel is made from this tree without
# compiling anything again.
venv="${KILN_VENV:-$root/.venv}"
build_python="$("$root/scripts/python-env.sh" "$build")"
cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DKILN_BUILD_FUZZERS=ON \
  -DKILN_BUILD_TESTS=ON -DKILN_BUILD_PYTHON=ON -DPython_EXECUTABLE="$build_python" \
  > "$build/configure.log" 2>&1 || { tail -n 40 "$build/configure.log"; exit 1; }
# ninja prints a line per step; keep the log and show its tail, so CI output stays readable.
if ! ninja -C "$build" > "$build/build.log" 2>&1; then
  tail -n 80 "$build/build.log"
  echo "test.sh: build failed (full log: $build/build.log)" >&2
  exit 1
fi
echo "test.sh: built in $(( $(date +%s) - start )) s"
if command -v ccache >/dev/null; then
  ccache --show-stats 2>/dev/null | grep -Ei "hits|misses" | head -n 3 || true
fi

ctest --test-dir "$build" --output-on-failure -j "$(nproc)"

# The Python package as a user installs it: a wheel built by scikit-build-core from this build
# tree (pyproject.toml; --no-build-isolation takes the pinned nanobind and scikit-build-core of
# scripts/python-env.sh, which scripts/run-example.sh builds with too, and the module is already
# built, so nothing compiles again), installed into a fresh virtual environment, where the
# package's tests run against it, never against the build tree.
echo "test.sh: the Python wheel"
wheel_start=$(date +%s)
wheel_dir="$build/wheel"
rm -rf "$wheel_dir"
if ! "$build_python" -m pip wheel "$root" --no-build-isolation --no-deps --quiet \
    --wheel-dir "$wheel_dir" --config-settings=build-dir="$build" \
    --config-settings=cmake.define.KILN_BUILD_TESTS=ON \
    --config-settings=cmake.define.KILN_BUILD_FUZZERS=ON > "$build/wheel.log" 2>&1; then
  tail -n 40 "$build/wheel.log"
  echo "test.sh: the wheel did not build (full log: $build/wheel.log)" >&2
  exit 1
fi
wheel="$(ls "$wheel_dir"/kiln-*.whl)"
test_venv="$build/wheel-venv"
rm -rf "$test_venv"
/usr/bin/python3 -m venv "$test_venv"
# The fresh environment reads .venv's pinned packages (PyTorch, ONNX Runtime, pytest: 6 GB not
# installed twice) through a path file; kiln itself is only the wheel's.
site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
test_site="$("$test_venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
echo "$site" > "$test_site/kiln-test-dependencies.pth"
"$test_venv/bin/python" -m pip install --quiet --no-deps --no-index "$wheel"
echo "test.sh: $(basename "$wheel") ($(du -h "$wheel" | cut -f1)) built and installed in" \
  "$(( $(date +%s) - wheel_start )) s"
(cd "$build" && "$test_venv/bin/python" -m pytest -q -p no:cacheprovider "$root/python/tests")

# A runtime-only build (no MLIR, LLVM or protobuf) loads and serves an artifact the compiler wrote:
# the tiny CNN compiled by the ctest examples.serve.CompileTinyCnn, 8 threads x 50 requests.
runtime_build="$build/runtime-only"
if [[ ! -f "$runtime_build/build.ninja" ]]; then
  cmake -G Ninja -S "$root" -B "$runtime_build" -DCMAKE_BUILD_TYPE=Release \
    -DKILN_BUILD_COMPILER=OFF -DKILN_BUILD_TESTS=OFF > "$runtime_build.log" 2>&1 ||
    { tail -n 40 "$runtime_build.log"; exit 1; }
fi
ninja -C "$runtime_build" kiln-serve-example >> "$runtime_build.log" 2>&1 ||
  { tail -n 40 "$runtime_build.log"; exit 1; }
if ldd "$runtime_build/examples/serve/kiln-serve-example" | grep -Eq "libLLVM|libMLIR|libprotobuf"; then
  echo "test.sh: the runtime-only build links compiler libraries" >&2
  exit 1
fi
# Nor does what an application embeds carry the simulated CUDA device (kiln_cuda_sim) or the
# Boost.Context it runs on: neither linked (ldd) nor compiled in (the symbol tables, nm).
runtime_library="$(ldd "$runtime_build/examples/serve/kiln-serve-example" |
  awk '/libkiln_runtime\.so/ {print $3}')"
[[ -f "$runtime_library" ]] ||
  { echo "test.sh: kiln-serve-example does not link libkiln_runtime.so" >&2; exit 1; }
sim_symbols="boost::context|_fcontext|kiln::runtime::cuda::sim::|registerSimulatedCuda"
for binary in "$runtime_build/examples/serve/kiln-serve-example" "$runtime_library"; do
  # Captured first: with pipefail, `nm | grep -q` can fail on nm's SIGPIPE when grep matches.
  linked="$(ldd "$binary")"
  symbols="$(nm -C "$binary" 2>/dev/null || true; nm -C -D "$binary" 2>/dev/null || true)"
  if grep -q "libboost_context" <<< "$linked" || grep -Eq "$sim_symbols" <<< "$symbols"; then
    echo "test.sh: $binary carries the simulated CUDA device or Boost.Context" >&2
    exit 1
  fi
done
"$runtime_build/examples/serve/kiln-serve-example" "$build/examples/serve/tiny_cnn.kiln" \
  --threads 8 --requests 400 --pool-threads 2 | tail -n 2

# README's first command, on the tree just built: every step of the example must keep working.
echo "test.sh: scripts/run-example.sh"
example_log="$build/run-example.log"
if ! BUILD_DIR="$build" bash "$root/scripts/run-example.sh" > "$example_log" 2>&1; then
  tail -n 60 "$example_log"
  echo "test.sh: scripts/run-example.sh failed (full log: $example_log)" >&2
  exit 1
fi
grep -E "^== |^reference:" "$example_log"
