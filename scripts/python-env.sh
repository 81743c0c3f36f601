#!/usr/bin/env bash
# Prints the interpreter that builds the Python package from a build tree: BUILD_DIR/python-env, a
# virtual environment over Debian's python3 (its numpy and onnx) whose build tools (nanobind,
# scikit-build-core) are the project's pinned ones: .venv's, read through a path file, when
# scripts/install-deps.sh --models has made it, else installed into it from PyPI.
#
# scripts/test.sh and scripts/run-example.sh both build through it, whichever runs first and
# however often: scikit-build-core records where it was imported from and clears a build tree's
# CMake cache when another copy configures the tree, which would rebuild everything.
#
#   scripts/python-env.sh BUILD_DIR
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
build="${1:?usage: scripts/python-env.sh BUILD_DIR}"
venv="${KILN_VENV:-$root/.venv}"
pyenv="$build/python-env"
mkdir -p "$build"
[[ -x "$pyenv/bin/python" ]] || /usr/bin/python3 -m venv --system-site-packages "$pyenv"
if ! "$pyenv/bin/python" -c 'import nanobind, scikit_build_core' 2>/dev/null; then
  site="$("$pyenv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  if [[ -x "$venv/bin/python" ]]; then
    "$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])' \
      > "$site/kiln-project-venv.pth"
  else
    "$pyenv/bin/python" -m pip install --quiet --disable-pip-version-check \
      $(grep -E '^(nanobind|scikit-build-core|pathspec)==' "$root/scripts/requirements.txt") >&2
  fi
fi
echo "$pyenv/bin/python"
