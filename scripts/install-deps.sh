#!/usr/bin/env bash
# Installs everything Kiln needs to build and test on Debian 12, from Debian's packages (and npm
# where a peer runtime is needed). Idempotent: packages already present are not reinstalled, and the
# package lists are refreshed only when something is missing.
#
#   scripts/install-deps.sh            build + test dependencies
#   scripts/install-deps.sh --models   also PyTorch/torchvision (model export) and ONNX Runtime
#                                      (npm onnxruntime-node, the CPU peer for benchmarks)
#
# The CUDA toolkit (nvcc, ptxas, cuBLASLt, cuDNN, NCCL) is expected under /usr/local/cuda; the build
# turns the CUDA code paths on when it finds it and off otherwise.
set -euo pipefail

with_models=0
for arg in "$@"; do
  case "$arg" in
    --models) with_models=1 ;;
    -h|--help) sed -n '2,12p' "$0"; exit 0 ;;
    *) echo "install-deps: unknown option '$arg' (see --help)" >&2; exit 2 ;;
  esac
done

packages=(
  # Toolchain and build.
  g++ cmake ninja-build ccache git pkg-config
  # LLVM/MLIR 22 (static libraries, tablegen, lit and FileCheck).
  llvm-22-dev llvm-22-tools libmlir-22-dev mlir-22-tools zlib1g-dev libzstd-dev
  # ONNX, protobuf, command line, tests.
  libprotobuf-dev protobuf-compiler libonnx-dev libonnx-testdata
  libcli11-dev nlohmann-json3-dev libgtest-dev libgmock-dev
  # The .kiln artifact schema (flatc and the header-only library); oneDNN for the CPU runtime's
  # library calls (convolution and matmul).
  flatbuffers-compiler libflatbuffers-dev libdnnl-dev
  # Fuzzing the loaders (clang's libFuzzer runtime).
  clang-14 libclang-rt-14-dev
  # Test-time helpers: numpy references, ONNX model construction.
  python3 python3-numpy python3-onnx
)
if [[ $with_models == 1 ]]; then
  packages+=(python3-torch python3-torchvision python3-matplotlib nodejs)
  # Debian's npm package conflicts with a nodejs that bundles npm (nodesource); ask for it only
  # when no npm command exists.
  if ! command -v npm >/dev/null 2>&1; then
    packages+=(npm)
  fi
fi

sudo_cmd=()
if [[ $(id -u) != 0 ]]; then
  sudo_cmd=(sudo)
fi

missing=()
for package in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$package")
  fi
done

if (( ${#missing[@]} )); then
  echo "install-deps: installing ${#missing[@]} package(s): ${missing[*]}"
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
    "${missing[@]}" >/dev/null
else
  echo "install-deps: all ${#packages[@]} Debian packages present"
fi

if [[ $with_models == 1 ]]; then
  root="$(cd "$(dirname "$0")/.." && pwd)"
  if [[ ! -d "$root/node_modules/onnxruntime-node" ]]; then
    # Its install script would download a GPU build; the CPU library ships inside the package.
    # Only the benchmarks need it: a registry that cannot be reached is a warning, not a failure.
    if ! (cd "$root" && npm install --no-save --ignore-scripts onnxruntime-node >/dev/null); then
      echo "install-deps: warning: npm could not install onnxruntime-node;" \
           "benchmarks/run will measure without ONNX Runtime" >&2
    fi
  fi
  if [[ -d "$root/node_modules/onnxruntime-node" ]]; then
    echo "install-deps: onnxruntime-node present"
  fi
fi
