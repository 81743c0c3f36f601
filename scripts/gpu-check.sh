#!/usr/bin/env bash
# Checks Kiln on an NVIDIA GPU in one command: the ONNX conformance suite and the real models with
# --device cuda against their references, then ResNet-50 benchmarks beside PyTorch eager and
# torch.compile with each case's roofline floor (`benchmarks/run --device cuda`). The GPU machine has CUDA, cuDNN/cuBLAS (PyTorch's wheels) and PyTorch but no
# LLVM/MLIR, oneDNN or ONNX libraries, so the check runs from a bundle packed here:
#
#   scripts/gpu-check.sh pack [BUNDLE]        here, from a built tree (build/): writes the bundle
#                                             (default BUNDLE: .gpu-bundle): kiln, stripped
#                                             (`kiln conformance` is the suite), the shared
#                                             libraries it needs that the GPU machine lacks and
#                                             the ONNX node tests, xz-compressed and split into
#                                             parts BUNDLE/1, BUNDLE/2, ... of at most 50 MiB
#   scripts/gpu-check.sh stage PART_DIR       on the GPU machine: keeps one part in the work
#                                             folder ($TMPDIR/kiln-gpu-check) for a later run
#   scripts/gpu-check.sh run [BUNDLE] [--out DIR] [--device cuda|cpu] [--quick]
#                            [--budget SECONDS] [--archive FILE.tar.gz] [--steps LIST]
#                            [--zoo MODELS] [--beside]
#                                             on the GPU machine, from the repository root: takes
#                                             the parts under BUNDLE and those staged, unpacks,
#                                             runs every check, writes DIR/gpu-check.json (every
#                                             figure, the device, date, commit and commands) and
#                                             the logs, and with --archive all of DIR in one file
#
# The checks, in the order of what a GPU proves first: the runtime's CUDA tests; row kernels
# (softmax, layer norm, sums) over row lengths against NumPy, beside PyTorch
# (benchmarks/long_rows.py); the ONNX 1.12 node tests, as imported for their values and with every
# input fed at run time; ResNet-50 and MobileNetV2 against PyTorch; ResNet-50 benchmarks at batch 32 (fp32
# and fp16 beside PyTorch, and Kiln's fp16 in NCHW and NHWC) and batch 1; BERT and GPT-2 against
# PyTorch; the other models of the zoo against PyTorch (--zoo picks them, default all nine);
# ResNet-50, BERT and GPT-2 compiled once for a range of shapes (batches 1..3, the transformers'
# sequences 1..128) and run at the ends of the ranges against PyTorch; BERT and GPT-2 in fp16 with
# cuDNN's fused attention against PyTorch's fp32, and BERT, GPT-2 and Llama timed in fp16 and in
# fp32 (the generated attention kernel) against --attention unfused, and one attention layer over
# sequence lengths 512 to 4096 the same way in both precisions (benchmarks/attention.py, beside
# PyTorch's fused attention); BERT and GPT-2 beside PyTorch at batch 1 (fp32 and fp16); the
# current ONNX release's node tests (the machine's onnx package). With --budget, each step runs
# under a time limit cut to what the budget leaves, and the steps it cannot fit are skipped and
# named; a conformance run cut short is counted from its per-test lines.
# --steps picks some of them: tests,long-rows,conformance,conformance-run-time,models,bench,
# transformers,zoo,shape-range,attention,attention-sequences,bench-transformers,current (all).
# With --beside, the 1.12 node tests run in the background beside the model checks (which time
# nothing), and every timed step waits for them, so that one short lease can hold both.
#
# With the device tool, whose calls carry at most 64 MiB each and whose lease is short: when the
# bundle fits one call, carry [".gpu-bundle"] and run `bash scripts/gpu-check.sh run --out
# /tmp/gpu-check --budget 520 --archive $OUT/gpu-check.tar.gz` (about 9 minutes on an H200).
# Otherwise one call per part but the last, carrying [".gpu-bundle/N"] and running `bash
# scripts/gpu-check.sh stage .gpu-bundle/N`; then the last part and `run` (the machine keeps the
# work folder while it stays warm: each call must follow the last within its idle release).
# `--device cpu` runs the same checks on the host CPU (a dry run on a machine without a GPU);
# --quick skips BERT, GPT-2 and the torch.compile peers.
set -euo pipefail
root="$(cd "$(dirname "$0")/.." && pwd)"
command="${1:-}"
shift || true

say() { echo "gpu-check: $*" >&2; }
die() { say "error: $*"; exit 1; }

pack() {
  local bundle="${1:-$root/.gpu-bundle}" build="$root/build"
  [[ -x "$build/bin/kiln" ]] || die "no built tree at $build (run scripts/test.sh or ninja -C build first)"
  local stage
  stage="$(mktemp -d)"
  trap 'rm -rf "$stage"' RETURN
  mkdir -p "$stage/kiln/bin" "$stage/kiln/lib" "$stage/kiln/data"
  strip -o "$stage/kiln/bin/kiln" "$build/bin/kiln"
  # The runtime's CUDA test suites, whose GPU cases skip on a machine without one (not the
  # simulator's own suites: they run in CI).
  local test
  for test in "$build"/tests/runtime/kiln_runtime_cuda_*_test; do
    [[ -x "$test" && "$test" != *_cuda_sim_* ]] && strip -o "$stage/kiln/bin/$(basename "$test")" "$test"
  done
  # Every shared library kiln loads except the C runtime and the CUDA libraries, which the GPU
  # machine has (the CUDA toolkit, and cuDNN/cuBLAS/NCCL from PyTorch's wheels).
  ldd "$build/bin/kiln" | awk '/=> \//{print $3}' | sort -u |
    while read -r lib; do
      case "$(basename "$lib")" in
        libc.so*|libm.so*|libpthread.so*|libdl.so*|librt.so*|ld-linux*|libgcc_s.so*|libstdc++.so*) ;;
        libcuda.so*|libcudart.so*|libcublas*|libcudnn*|libnccl.so*|libnvrtc*|libnvJitLink*) ;;
        *) strip -o "$stage/kiln/lib/$(basename "$lib")" "$lib" ;;
      esac
    done
  cp -r /usr/share/libonnx-testdata/data/node "$stage/kiln/data/node"
  git -C "$root" rev-parse HEAD > "$stage/kiln/commit" 2>/dev/null || echo unknown > "$stage/kiln/commit"
  rm -rf "$bundle" && mkdir -p "$bundle"
  say "packing $(du -sh "$stage/kiln" | cut -f1) into $bundle"
  tar -C "$stage" -cf - kiln | xz -T0 -9e > "$stage/kiln-gpu.tar.xz"
  (cd "$stage" && split -b 50M -d -a 1 kiln-gpu.tar.xz kiln-gpu.part)
  local count=0 part
  for part in "$stage"/kiln-gpu.part*; do
    count=$((count + 1))
    mkdir -p "$bundle/$count"
    mv "$part" "$bundle/$count/"
  done
  # The manifest names every part and the whole file's checksum, so a run knows it has them all.
  (cd "$stage" && sha256sum kiln-gpu.tar.xz) > "$bundle/$count/manifest"
  for part in "$bundle"/*/kiln-gpu.part*; do basename "$part"; done >> "$bundle/$count/manifest"
  say "bundle: $(du -sh "$bundle" | cut -f1) in $count parts: $(ls -d "$bundle"/*/ | tr '\n' ' ')"
}

work_dir() { echo "${TMPDIR:-/tmp}/kiln-gpu-check"; }

stage_part() {
  local part_dir="${1:?stage needs a part folder}" work
  work="$(work_dir)"
  mkdir -p "$work/parts"
  cp "$part_dir"/kiln-gpu.part* "$part_dir"/manifest "$work/parts/" 2>/dev/null ||
    cp "$part_dir"/kiln-gpu.part* "$work/parts/"
  say "staged $(ls "$part_dir" | tr '\n' ' ')in $work/parts"
}

# The folders of the CUDA libraries PyTorch's wheels ship (cuDNN, cuBLAS, NCCL, the runtime).
wheel_library_path() {
  python3 - <<'EOF' 2>/dev/null || true
import glob, os, site
dirs = []
for base in site.getsitepackages() + [site.getusersitepackages()]:
    dirs += sorted(glob.glob(os.path.join(base, "nvidia", "*", "lib")))
print(":".join(d for d in dirs if os.path.isdir(d)))
EOF
}

run() {
  local bundle="$root/.gpu-bundle" out="$root/gpu-check-out" device=cuda quick=0 budget=0 archive=""
  local all_steps="tests,long-rows,conformance,conformance-run-time,models,bench,transformers,zoo,shape-range,attention,attention-sequences,bench-transformers,current"
  local zoo="llama,whisper_enc,convnext_tiny,efficientnet_b0,vit,swin,distilbert,regnet_y_400mf,googlenet"
  local beside=0
  local steps="$all_steps"
  while (($#)); do
    case "$1" in
      --out) out="$2"; shift 2 ;;
      --device) device="$2"; shift 2 ;;
      --quick) quick=1; shift ;;
      --budget) budget="$2"; shift 2 ;;
      --archive) archive="$2"; shift 2 ;;
      --steps) steps="$2"; shift 2 ;;
      --zoo) zoo="$2"; shift 2 ;;
      --beside) beside=1; shift ;;
      -*) die "unknown option $1" ;;
      *) bundle="$1"; shift ;;
    esac
  done
  [[ "$budget" =~ ^[0-9]+$ ]] || die "--budget takes whole seconds, not '$budget'"
  local step
  for step in ${steps//,/ }; do
    [[ ",$all_steps," == *",$step,"* ]] ||
      die "unknown step '$step' (--steps takes $all_steps)"
  done
  want() { [[ ",$steps," == *",$1,"* ]]; }
  mkdir -p "$out"
  local started=$SECONDS
  local work part
  work="$(work_dir)"
  for part in "$bundle"/*/; do
    [[ -d "$part" ]] && stage_part "$part"
  done
  [[ -f "$work/parts/manifest" ]] || die "no bundle manifest under $bundle or staged (scripts/gpu-check.sh pack)"
  while read -r part; do
    [[ -f "$work/parts/$part" ]] || die "bundle part $part is missing: stage it first"
  done < <(tail -n +2 "$work/parts/manifest")
  rm -rf "$work/kiln"
  (cd "$work/parts" && tail -n +2 manifest | xargs cat > ../kiln-gpu.tar.xz)
  (cd "$work" && head -1 parts/manifest | sha256sum -c --quiet) || die "the bundle's checksum does not match"
  tar -C "$work" -xJf "$work/kiln-gpu.tar.xz"
  local kiln_dir="$work/kiln"
  # The bundled libraries are Debian's: only Kiln's programs see them (through this wrapper), so
  # Python and PyTorch keep the machine's own.
  local library_path="$kiln_dir/lib:$(wheel_library_path):/usr/local/cuda/lib64"
  local kiln="$kiln_dir/kiln"
  printf '#!/bin/sh\nLD_LIBRARY_PATH="%s${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" exec "%s" "$@"\n' \
    "$library_path" "$kiln_dir/bin/kiln" > "$kiln"
  chmod +x "$kiln"
  if ! "$kiln" --version > "$out/kiln-version.log" 2>&1; then
    LD_LIBRARY_PATH="$library_path" ldd "$kiln_dir/bin/kiln" | grep "not found" >> "$out/kiln-version.log" || true
    cat "$out/kiln-version.log" >&2
    die "the bundled kiln does not start (missing libraries?)"
  fi
  # A path: benchmarks/run takes KILN_PYTHON only as one.
  local python
  python="$(command -v "${KILN_PYTHON:-python3}")" || die "no Python at ${KILN_PYTHON:-python3}"
  local models="resnet50 mobilenetv2 bert gpt2"
  ((quick)) && models="resnet50 mobilenetv2"

  # limited SECONDS COMMAND...: with --budget, COMMAND runs for at most SECONDS, fewer when the
  # budget ends sooner, and not at all when under 10 s of it are left; without, it runs unlimited.
  # The steps come in the order of what a GPU proves first, so a short lease loses the least.
  limited() {
    local want="$1"
    shift
    ((budget)) || { "$@"; return; }
    local left=$((started + budget - SECONDS))
    ((left < want)) && want=$left
    if ((want < 10)); then
      say "skipped (the budget of ${budget} s is spent): $(basename "$1") ${2:-}"
      return 124
    fi
    timeout -k 5 "$want" "$@"
  }

  say "device: $( (nvidia-smi -L 2>/dev/null || echo "no nvidia-smi") | head -1)"
  # 0. The runtime's CUDA tests: kernels, library calls, graphs, error paths.
  local test
  for test in "$kiln_dir"/bin/kiln_runtime_*_test; do
    want tests && [[ -x "$test" ]] || continue
    limited 60 env LD_LIBRARY_PATH="$library_path" "$test" --gtest_brief=1 \
      > "$out/$(basename "$test").log" 2>&1 || true
    say "$(basename "$test"): $(grep -E '^\[  (PASSED|FAILED|SKIPPED) ' "$out/$(basename "$test").log" | tr '\n' ' ')"
  done
  # 0b. Row kernels (softmax, layer norm, sums) over row lengths 128 .. 16 Mi against NumPy,
  # timed beside PyTorch: warp per row, block per row and reductions split over the grid.
  if want long-rows && [[ "$device" == cuda ]]; then
    local bandwidth=3350
    [[ "$(nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null)" == *H200* ]] && bandwidth=4800
    say "row kernels over row lengths on $device, beside PyTorch"
    limited 300 "$python" "$root/benchmarks/long_rows.py" --kiln "$kiln" --device cuda \
      --bandwidth-gbs "$bandwidth" --json "$out/long-rows.json" --plot "$out/long-rows.png" \
      > "$out/long-rows.log" 2>&1 || say "long_rows.py failed (see long-rows.log)"
    grep -E "^\|" "$out/long-rows.log" >&2 || true
  fi
  # conformance SET DATA SECONDS [OPTION...]: the ONNX node tests of DATA, compiled for the
  # device and compared with their reference outputs (one line per test in the log, so that a
  # run the budget cuts short still says which passed).
  conformance() {
    local set="$1" data="$2" seconds="$3"
    shift 3
    say "conformance ($set) on $device"
    limited "$seconds" "$kiln" conformance --data "$data" --device "$device" -j "$(nproc)" "$@" \
      --json "$out/conformance-$set-$device.json" > "$out/conformance-$set-$device.log" 2>&1 || true
    say "$(tail -1 "$out/conformance-$set-$device.log") ($(grep -c ' PASS ' "$out/conformance-$set-$device.log") PASS lines)"
  }
  # 1. The node tests of ONNX 1.12 (Debian's, in the bundle), then the same with every input
  # fed at run time as `kiln compile` imports a model: shape operands read on the device and
  # the checks of every run.
  # With --beside the first set runs in the background; wait_beside, before every step that times
  # something, waits for it.
  local beside_pid=""
  if want conformance && ((beside)); then
    conformance "1.12" "$kiln_dir/data/node" 180 &
    beside_pid=$!
  elif want conformance; then
    conformance "1.12" "$kiln_dir/data/node" 180
  fi
  wait_beside() {
    [[ -n "$beside_pid" ]] || return 0
    wait "$beside_pid" || true
    beside_pid=""
  }
  # The run-time set would compete with the first one for the CPU: it runs after it.
  want conformance-run-time && wait_beside
  want conformance-run-time && conformance "1.12-run-time" "$kiln_dir/data/node" 180 --inputs-at-run-time

  # 2. The real models, exported here by PyTorch and compared with PyTorch's outputs.
  local cache="$work/models"
  check_models() {
    local model
    for model in "$@"; do
      say "model $model on $device"
      limited 90 "$python" "$root/benchmarks/models/export.py" "$model" --cache "$cache" \
        > "$out/export-$model.log" 2>&1 || { say "export of $model failed (see export-$model.log)"; continue; }
      limited 120 "$python" "$root/tests/models/check_model.py" "$model" --kiln "$kiln" --device "$device" \
        --cache "$cache" > "$out/model-$model-$device.log" 2>&1 || true
      tail -1 "$out/model-$model-$device.log" >&2
    done
  }
  want models && check_models resnet50 mobilenetv2

  # 3. ResNet-50 beside PyTorch eager and torch.compile (fp32, fp16) and ONNX Runtime's CUDA
  # provider where it has one, with roofline floors: `benchmarks/run --device cuda`, at batch 32,
  # then 1, then 256. max-autotune compiles for minutes, so it is left to a run of its own.
  local modes="eager,compile"
  ((quick)) && modes="eager"
  want bench && wait_beside
  if ! want bench; then
    :
  elif [[ "$device" == cuda ]]; then
    bench_cuda() {
      say "bench resnet50 at batch $1: kiln, PyTorch $modes"
      limited "$2" env KILN_PYTHON="$python" "$root/benchmarks/run" --device cuda --kiln "$kiln" \
        --models resnet50 --batches "$1" --modes "$modes" --cache "$cache" \
        --json "$out/bench-cuda-b$1.json" > "$out/bench-cuda-b$1.log" 2>&1 ||
        say "benchmarks/run --device cuda failed at batch $1 (see bench-cuda-b$1.log)"
      grep -E '^\| resnet50' "$out/bench-cuda-b$1.log" >&2 || true
    }
    bench_cuda 32 200
    # fp16 convolutions in the model's NCHW against the NHWC tensor cores want
    # (kiln-cuda-channels-last, the default for fp16), side by side at batch 32.
    limited 90 "$python" "$root/benchmarks/models/export.py" resnet50 --batch 32 --cache "$cache" \
      > "$out/export-resnet50-b32.log" 2>&1 || say "export at batch 32 failed (see export-resnet50-b32.log)"
    local layout
    for layout in nchw auto; do
      say "bench resnet50 batch 32 fp16: kiln --conv-layout $layout"
      limited 60 "$kiln" bench "$cache/resnet50-b32-torchscript/model.onnx" --device cuda --precision fp16 \
        --keep-io-types --conv-layout "$layout" --warmup 10 --iterations 50 --max-seconds 20 \
        --json "$out/kiln-resnet50-b32-fp16-$layout.json" --force \
        > "$out/kiln-bench-fp16-$layout.log" 2>&1 ||
        say "kiln bench --conv-layout $layout failed (see kiln-bench-fp16-$layout.log)"
    done
    bench_cuda 1 150
  else
    # The dry run: Kiln alone, with the CPU's roofline.
    for batch in 1 32 256; do
      limited 120 "$python" "$root/benchmarks/models/export.py" resnet50 --batch "$batch" --cache "$cache" \
        > "$out/export-resnet50-b$batch.log" 2>&1 || { say "export at batch $batch failed"; continue; }
      local dir="$cache/resnet50-b$batch-torchscript"
      say "bench resnet50 batch $batch: kiln on $device"
      limited 120 "$kiln" bench "$dir/model.onnx" --device "$device" --warmup 10 --iterations 50 --max-seconds 30 \
        --json "$out/kiln-resnet50-b$batch-$device.json" --force > "$out/kiln-bench-b$batch.log" 2>&1 ||
        say "kiln bench failed at batch $batch (see kiln-bench-b$batch.log)"
      limited 120 "$python" "$root/benchmarks/runners/roofline.py" --device "$device" --model "$dir/model.onnx" \
        --result "kiln=$out/kiln-resnet50-b$batch-$device.json" \
        --json "$out/roofline-resnet50-b$batch.json" > "$out/roofline-b$batch.log" 2>&1 ||
        say "the roofline failed at batch $batch (see roofline-b$batch.log)"
      grep "kiln:" "$out/roofline-b$batch.log" >&2 || true
    done
  fi
  # 4. The transformers against PyTorch, then beside it at batch 1 (Kiln fp32 and fp16, PyTorch
  # eager and torch.compile in both), then the current release's node tests (the onnx package's
  # own).
  ((quick)) || ! want transformers || check_models bert gpt2
  # The rest of the zoo: the kernels of several results, row kernels and attention in the
  # forms Llama, Whisper, ViT and Swin export, and the CNNs' convolution epilogues.
  ((quick)) || ! want zoo || check_models ${zoo//,/ }
  # One artifact for a range of shapes (kiln compile --shape-range): kernels that read the run's
  # sizes, grids sized per run, library calls set up per shape, at batches 1 and 3 (sequences 9
  # and 128) against PyTorch's outputs for each.
  if ! ((quick)) && want shape-range; then
    local model sequences
    for model in resnet50 bert gpt2; do
      sequences=()
      [[ "$model" == resnet50 ]] || sequences=(--range-sequences 9,128)
      say "model $model on $device, one artifact for batches 1..3"
      limited 150 "$python" "$root/tests/models/check_model.py" "$model" --kiln "$kiln" \
        --device "$device" --cache "$cache" --dynamic --batch 2 --range-batches 1,3 \
        "${sequences[@]}" > "$out/model-$model-shape-range-$device.log" 2>&1 || true
      tail -1 "$out/model-$model-shape-range-$device.log" >&2
    done
  fi
  wait_beside
  # Attention in fp16 as cuDNN's fused attention (cudnn.attention) against PyTorch's fp32, then
  # timed against the same model with attention as two products and a softmax (--attention
  # unfused), both with the steps alone on the device.
  if ((quick)) || ! want attention || [[ "$device" != cuda ]]; then
    :
  else
    local model attention precision
    for model in bert gpt2 llama; do
      limited 90 "$python" "$root/benchmarks/models/export.py" "$model" --cache "$cache" \
        > "$out/export-$model.log" 2>&1 || { say "export of $model failed"; continue; }
      if [[ "$model" != llama ]]; then
        say "attention: $model fp16 on $device against PyTorch fp32"
        limited 120 "$python" "$root/tests/models/check_model.py" "$model" --kiln "$kiln" \
          --device "$device" --precision fp16 --cache "$cache" \
          > "$out/model-$model-fp16-$device.log" 2>&1 || true
        tail -1 "$out/model-$model-fp16-$device.log" >&2
      fi
      # fp16: cuDNN's fused attention; fp32: the kernel Kiln generates (Llama's grouped queries
      # among them), each against two products and a softmax.
      for precision in fp16 fp32; do
        for attention in fused unfused; do
          local tag="$model-$precision-$attention" keep=()
          [[ "$precision" == fp32 ]] || keep=(--keep-io-types)
          limited 60 "$kiln" bench "$cache/$model-b1-torchscript/model.onnx" --device cuda \
            --precision "$precision" "${keep[@]}" --attention "$attention" --warmup 20 \
            --iterations 200 --max-seconds 20 --json "$out/kiln-$tag.json" \
            --force > "$out/kiln-bench-$tag.log" 2>&1 ||
            say "kiln bench --precision $precision --attention $attention failed (see kiln-bench-$tag.log)"
          grep -iE "p50|device" "$out/kiln-bench-$tag.log" | head -3 >&2 || true
        done
      done
    done
  fi
  if ! ((quick)) && want attention-sequences && [[ "$device" == cuda ]]; then
    local precision suffix
    for precision in fp16 fp32; do
      say "attention over sequence lengths in $precision: fused against unfused, beside PyTorch"
      suffix=""
      [[ "$precision" == fp16 ]] || suffix="-$precision"
      limited 240 "$python" "$root/benchmarks/attention.py" --kiln "$kiln" --device cuda \
        --precision "$precision" --rounds 1 --json "$out/attention-sequences$suffix.json" \
        --plot "$out/attention-sequences$suffix.png" > "$out/attention-sequences$suffix.log" 2>&1 ||
        say "attention.py failed (see attention-sequences$suffix.log)"
      grep -E "^\|" "$out/attention-sequences$suffix.log" >&2 || true
    done
  fi
  if ((quick)) || ! want bench-transformers || [[ "$device" != cuda ]]; then
    :
  else
    say "bench bert, gpt2 at batch 1: kiln fp32/fp16, PyTorch $modes"
    limited 240 env KILN_PYTHON="$python" "$root/benchmarks/run" --device cuda --kiln "$kiln" \
      --models bert,gpt2 --batches 1 --modes "$modes" --cache "$cache" \
      --json "$out/bench-cuda-transformers-b1.json" > "$out/bench-cuda-transformers-b1.log" 2>&1 ||
      say "benchmarks/run --device cuda failed for the transformers (see bench-cuda-transformers-b1.log)"
    grep -E '^\| (bert|gpt2)' "$out/bench-cuda-transformers-b1.log" >&2 || true
  fi
  # The onnx wheel ships the node tests' generators: generate_node_tests.py writes them out.
  if ! want current; then
    :
  elif limited 120 "$python" "$root/tests/conformance/generate_node_tests.py" "$work/node-current" \
    > "$out/generate-node-tests.log" 2>&1; then
    say "the current release's node tests from $python's onnx"
    conformance "current" "$work/node-current" 300
  else
    say "no node tests of the current release (see generate-node-tests.log): that set is skipped"
  fi

  # Everything in one JSON.
  "$python" - "$out" "$device" "$(cat "$kiln_dir/commit")" "$((SECONDS - started))" "$budget" <<'EOF'
import datetime, glob, json, os, subprocess, sys
out, device, commit, seconds, budget = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5])
def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
name = subprocess.run(["nvidia-smi", "--query-gpu=name,driver_version", "--format=csv,noheader"],
                      capture_output=True, text=True).stdout.strip() if device == "cuda" else "cpu"
summary = {
    "device": name, "date": datetime.date.today().isoformat(), "commit": commit,
    "command": "scripts/gpu-check.sh run --device " + device + (f" --budget {budget}" if budget else ""),
    "seconds": seconds,
    "conformance": {},
    "models": {},
    "kiln_bench": {os.path.basename(p): load(p) for p in sorted(glob.glob(f"{out}/kiln-*.json"))},
    "bench_cuda": {os.path.basename(p): load(p) for p in sorted(glob.glob(f"{out}/bench-cuda-*.json"))},
    "roofline": {os.path.basename(p): load(p) for p in sorted(glob.glob(f"{out}/roofline-*.json"))},
}
# Each set's counts from its JSON, or from the per-test lines of a run the budget cut short.
for log in sorted(glob.glob(f"{out}/conformance-*.log")):
    name = os.path.basename(log)[len("conformance-"):-len(".log")]
    counts = load(log[:-4] + ".json")
    if counts:
        summary["conformance"][name] = {k: v for k, v in counts.items()
                                        if k in ("passed", "failed", "skipped", "total", "seconds")}
    else:
        text = open(log).read()
        summary["conformance"][name] = {"cut_short": True, "passed": text.count(" PASS "),
                                        "failed": text.count(" FAIL "), "skipped": text.count(" SKIP ")}
summary["runtime_tests"] = {}
for log in sorted(glob.glob(f"{out}/kiln_runtime_*_test.log")):
    lines = [l for l in open(log).read().splitlines() if l.startswith(("[  PASSED", "[  FAILED", "[  SKIPPED"))]
    summary["runtime_tests"][os.path.basename(log)[:-4]] = lines
for log in sorted(glob.glob(f"{out}/model-*.log")):
    lines = open(log).read().splitlines()
    summary["models"][os.path.basename(log)[:-4]] = lines[-1] if lines else ""
with open(f"{out}/gpu-check.json", "w") as f:
    json.dump(summary, f, indent=1)
print(json.dumps({k: summary[k] for k in ("device", "runtime_tests", "conformance", "models")}, indent=1))
EOF
  say "done in $((SECONDS - started)) s; results in $out/gpu-check.json"
  if [[ -n "$archive" ]]; then
    tar -C "$out" -czf "$archive" . && say "every log and result in $archive"
  fi
}

case "$command" in
  pack) pack "$@" ;;
  stage) stage_part "$@" ;;
  run) run "$@" ;;
  *) awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0" | sed 's/^# \{0,1\}//'; exit 2 ;;
esac
