#!/usr/bin/env bash
# Installs everything Kiln needs to build and test on Debian 12: the C++ side from Debian's
# packages, the Python side of the model tests and benchmarks from PyPI into the project-local
# virtual environment .venv (pinned in scripts/requirements.txt). Idempotent: packages already
# present are not reinstalled, the package lists are refreshed only when something is missing, and
# the virtual environment is rebuilt only when scripts/requirements.txt changed.
#
#   scripts/install-deps.sh            build + test dependencies (Debian's packages)
#   scripts/install-deps.sh --models   also .venv: PyTorch 2.x, torchvision, timm, transformers,
#                                      onnx (today's node tests), ONNX Runtime, IREE, TVM, for the
#                                      model tests, the current conformance suite and benchmarks/run
#
# KILN_VENV moves the virtual environment (default: .venv in the repository). docs/dependencies.md
# says why PyTorch comes from PyPI and what that costs.
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
  # Collectives between the CPU devices of a split model (kiln compile --devices N).
  libgloo-dev
  # Fibers for the threads of a block on the simulated CUDA device.
  libboost-context-dev
  # Fuzzing the loaders (clang's libFuzzer runtime).
  clang-14 libclang-rt-14-dev
  # Test-time helpers of the lit tests and the example: numpy references, ONNX model construction;
  # pip fetches the cuDNN frontend's headers (below).
  python3 python3-numpy python3-onnx python3-pip
  # The Python package's native module (python/, nanobind) builds against the interpreter's headers.
  python3-dev
)
if [[ $with_models == 1 ]]; then
  # The interpreter the virtual environment is made from.
  packages+=(python3-venv)
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

root="$(cd "$(dirname "$0")/.." && pwd)"

# The cuDNN frontend: NVIDIA's header-only C++ graph API over cuDNN, which the CUDA attention call
# builds its scaled-dot-product-attention graph with (runtime/src/cuda/cudnn_attention.cpp).
# Debian has no package of it; its PyPI wheel carries the headers. Pinned by version and hash,
# unpacked into .deps/, where CMake looks for it.
frontend_version=1.32.0
frontend_sha256=c6006556017a4d1c914c52a556c71b1267f2d6a0500f742e7b4edef539878df0
frontend_dir="$root/.deps/cudnn-frontend-$frontend_version"
if [[ -f "$frontend_dir/include/cudnn_frontend.h" ]]; then
  echo "install-deps: cuDNN frontend $frontend_version present"
else
  download="$(mktemp -d)"
  trap 'rm -rf "$download"' EXIT
  /usr/bin/python3 -m pip download --quiet --disable-pip-version-check --no-input --no-deps \
    --only-binary=:all: --python-version 3.11 --implementation cp \
    --platform manylinux_2_28_x86_64 --dest "$download" "nvidia-cudnn-frontend==$frontend_version"
  wheel="$(ls "$download"/nvidia_cudnn_frontend-*.whl)"
  if ! echo "$frontend_sha256  $wheel" | sha256sum --check --quiet; then
    echo "install-deps: $(basename "$wheel") does not have the pinned sha256 $frontend_sha256" >&2
    exit 1
  fi
  rm -rf "$frontend_dir.partial"
  /usr/bin/python3 - "$wheel" "$frontend_dir.partial" <<'PYTHON'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel:
    wheel.extractall(sys.argv[2], [n for n in wheel.namelist() if n.startswith("include/")])
PYTHON
  mv "$frontend_dir.partial" "$frontend_dir"
  echo "install-deps: cuDNN frontend $frontend_version headers in $frontend_dir"
fi

if [[ $with_models == 1 ]]; then
  venv="${KILN_VENV:-$root/.venv}"
  requirements="$root/scripts/requirements.txt"
  stamp="$venv/.kiln-requirements.sha256"
  want="$(sha256sum < "$requirements" | cut -d' ' -f1)"
  if [[ -x "$venv/bin/python" && -f "$stamp" && "$(cat "$stamp")" == "$want" ]]; then
    echo "install-deps: $venv matches scripts/requirements.txt"
  else
    count=$(grep -c '==' "$requirements")
    # The environment takes 6.6 GB once installed, and pip unpacks each wheel beside it while it
    # works: refuse early, with the numbers, rather than fail half-way with "No space left".
    mkdir -p "$(dirname "$venv")"
    need_kb=$(( 8 * 1024 * 1024 ))
    free_kb=$(df -Pk "$(dirname "$venv")" | awk 'NR == 2 { print $4 }')
    if (( free_kb < need_kb )); then
      echo "install-deps: $(dirname "$venv") has $(( free_kb / 1024 )) MiB free; the virtual" \
           "environment needs about 8 GiB while it installs (6.6 GB once installed)." \
           "Free space, or set KILN_VENV to a directory on a larger disk." >&2
      exit 3
    fi
    echo "install-deps: installing $count pinned PyPI packages into $venv" \
         "(about 3 GB to download and 6.6 GB on disk; a few minutes)"
    venv_start=$(date +%s)
    # Debian's interpreter, whatever python3 comes first on PATH: the same 3.11 on every machine.
    /usr/bin/python3 -m venv "$venv"
    # --no-cache-dir: pip's wheel cache would keep a second 3 GB copy of the downloads in
    # ~/.cache/pip; the environment is remade only when the pins change, so the cache saves little.
    "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-input \
      --no-cache-dir --requirement "$requirements"
    echo "$want" > "$stamp"
    echo "install-deps: $venv ready in $(( $(date +%s) - venv_start )) s"
  fi
fi
