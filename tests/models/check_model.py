#!/usr/bin/env python3
"""Runs a real model through Kiln and compares every output with PyTorch's, element by element.

    .venv/bin/python tests/models/check_model.py MODEL --kiln PATH/TO/kiln [--batch N]
        [--exporter torchscript|dynamo] [--device cpu|cuda|cuda-sim] [--compile-only] [--cache DIR]
        [--rtol R] [--atol A] [--precision fp16|bf16] [--dynamic [--range-batches 1,3
        [--range-sequences 16,128] [--unbounded]]] [--keep DIR]

Run it with the project's environment (.venv, from scripts/requirements.txt). Exports MODEL with
benchmarks/models/export.py (cached, per exporter: TorchScript at opset 17 by default, or
torch.export at opset 18 with --exporter dynamo), runs
`kiln run model.onnx --device D --input NAME=@inputs/NAME.npy ... --output-dir OUT` (compiled just
in time) and checks |kiln - torch| <= atol + rtol * |torch| for every element of every output.
Prints, per output, the largest absolute and relative errors and the worst element (index, Kiln's
and PyTorch's values, the bound it broke).

--dynamic takes the export with dynamic batch (and sequence) axes (export.py --dynamic): the
exporter's shape arithmetic on those axes is in the graph, and `kiln run` binds them to the
inputs' shapes when it compiles.

--device cuda-sim runs the model's CUDA compilation (`--target cuda --gpu-arch cuda-sim`: the
generated kernels retargeted to the host, cuDNN and cuBLASLt calls as CPU references) on the
simulated CUDA device through the CUDA device's own code, at the same tolerances.

With --compile-only (no GPU needed for --device cuda) it instead compiles the model with
`kiln compile --target D`, which fails unless ptxas assembles every kernel, and checks with
`kiln inspect` that the artifact holds a cubin per architecture and the PTX fallback (cuda) and
the library calls expected of the model (EXPECTED_CALLS).

Tolerances (fp32 everywhere; PyTorch's outputs are the reference):
  resnet50, mobilenetv2   rtol 1e-3, atol 1e-4 (logits of magnitude ~0.1-1; different but exact
                          fp32 convolution algorithms differ by ~3e-6 here)
  bert, gpt2              rtol 1e-3, atol 1e-3: see TOLERANCES below for why they are wider.
  efficientnet_b0, regnet_y_400mf, convnext_tiny
                          rtol 1e-3, atol 1e-4, as the other CNNs.
  llama, vit, swin, whisper_enc, distilbert
                          rtol 1e-3, atol 1e-4: 2-4 layers only (see TOLERANCES).

Exit codes: 0 every output within tolerance; 1 a mismatch, a missing or malformed output, or kiln
failing; 2 a bad command line; 77 skipped because PyTorch/torchvision are not installed
(`scripts/install-deps.sh --models` installs them) or kiln has no `run` subcommand (ctest reads 77
as SKIP_RETURN_CODE).
"""

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

SKIP = 77
REPO = Path(__file__).resolve().parents[2]

# (rtol, atol) per model.
#
# The transformers' outputs pass through 12 layers of 768- and 3072-long dot products, each layer
# ending in a layer norm that divides by the row's standard deviation, and through erf/tanh/exp,
# which Kiln evaluates with its own approximations rather than libm's; a few ulp of difference per
# operation compounds over the depth. ONNX Runtime, an independent fp32 implementation, differs from
# PyTorch by up to 1e-5 on BERT's hidden states (|values| up to 7) and 6e-6 on GPT-2's logits (up
# to 2.8). atol 1e-3 leaves room for a different reduction order and approximations in every layer,
# and still catches any real error: a wrong mask, scale, bias, epsilon or GELU flavour moves these
# outputs by 1e-2 or more.
TOLERANCES = {
    "resnet50": (1e-3, 1e-4),
    "mobilenetv2": (1e-3, 1e-4),
    "bert": (1e-3, 1e-3),
    "gpt2": (1e-3, 1e-3),
    # The current architectures (benchmarks/models/current.py). The CNNs' logits have the
    # magnitude of ResNet-50's (|values| 0.3-2) and get its bounds. The transformers are reduced to
    # 2-4 layers, so the compounding that widens BERT's and GPT-2's bounds is mostly absent: their
    # outputs (hidden states up to ~5.6, Llama's logits up to ~1.4) differ from PyTorch's by at
    # most 2.4e-6 (every export that imports), and atol 1e-4 keeps a 40x margin for another
    # reduction order while catching a wrong RMSNorm epsilon, rotary table or mask (1e-3 or more).
    "efficientnet_b0": (1e-3, 1e-4),
    "regnet_y_400mf": (1e-3, 1e-4),
    "convnext_tiny": (1e-3, 1e-4),
    "llama": (1e-3, 1e-4),
    "vit": (1e-3, 1e-4),
    "swin": (1e-3, 1e-4),
    "whisper_enc": (1e-3, 1e-4),
    "distilbert": (1e-3, 1e-4),
}
# The models built with `transformers` (the others need only torch and torchvision).
TRANSFORMERS_MODELS = {"llama", "vit", "swin", "whisper_enc", "distilbert"}


# The library calls (and generated attention kernels) each model's convolutions, matrix products
# and attention become, per device.
EXPECTED_CALLS = {
    "cuda": {
        "resnet50": {"cudnn.convolution": 53, "cublaslt.matmul": 1},
        "mobilenetv2": {"cudnn.convolution": 52, "cublaslt.matmul": 1},
        # 12 layers x (QKV, output, two feed-forward) products, then BERT's pooler and GPT-2's
        # LM head; each layer's attention one generated kernel (kiln-generate-cuda-attention).
        "bert": {"cublaslt.matmul": 49, "generated attention": 12},
        "gpt2": {"cublaslt.matmul": 49, "generated attention": 12},
    },
    "cpu": {
        "resnet50": {"onednn.convolution": 53, "onednn.matmul": 1},
        "mobilenetv2": {"onednn.convolution": 52, "onednn.matmul": 1},
        "bert": {"onednn.matmul": 73},
        "gpt2": {"onednn.matmul": 73},
    },
}
GPU_ARCHS = ["sm_80", "sm_90"]


def check_compiled(kiln: Path, model: str, device: str, onnx: Path, scratch: Path) -> bool:
    """Compiles `onnx` for `device` and checks the artifact's code objects and library calls."""
    artifact = scratch / f"{model}-{device}.kiln"
    command = [str(kiln), "compile", str(onnx), "-o", str(artifact), "--target", device, "--force"]
    if device == "cuda":
        command += ["--gpu-arch", ",".join(GPU_ARCHS)]
    print("check_model: " + " ".join(command), flush=True)
    start = time.monotonic()
    if subprocess.run(command).returncode != 0:
        return False
    print(f"check_model: compiled in {time.monotonic() - start:.1f} s")
    listing = subprocess.run([str(kiln), "inspect", str(artifact)], capture_output=True,
                             text=True)
    if listing.returncode != 0:
        print(listing.stderr)
        return False
    lines = listing.stdout.splitlines()
    ok = True
    if device == "cuda":
        objects = [line.split(",")[:2] for line in lines if line.strip().startswith("#")]
        objects = {(o[0].split()[1], o[1].strip()) for o in objects}
        # The PTX fallback is built for the oldest architecture (it runs on every newer GPU).
        oldest = min(GPU_ARCHS, key=lambda arch: int(arch[3:]))
        wanted = {(arch, "cubin") for arch in GPU_ARCHS} | {(oldest, "PTX")}
        for target, form in sorted(wanted):
            found = (target, form) in objects
            print(f"  {form} for {target}: {'present' if found else 'MISSING'}")
            ok = ok and found
    calls = {}
    for line in lines:
        fields = line.split()
        if len(fields) >= 3 and fields[1] == "library":
            calls[fields[2]] = calls.get(fields[2], 0) + 1
        elif len(fields) >= 3 and fields[1] == "dispatch" and fields[2].startswith("attention_"):
            calls["generated attention"] = calls.get("generated attention", 0) + 1
    for name, count in EXPECTED_CALLS[device].get(model, {}).items():
        got = calls.get(name, 0)
        print(f"  {name}: {got} calls, expected {count}")
        ok = ok and got == count
    return ok


def kiln_subcommands(kiln: Path) -> set:
    """The subcommands `kiln --help` lists."""
    listing = subprocess.run([str(kiln), "--help"], capture_output=True, text=True).stdout
    names = set()
    if "Subcommands:" in listing:
        for line in listing.split("Subcommands:", 1)[1].splitlines():
            if line.strip():
                names.add(line.split()[0])
    return names


def compare(name: str, got, expected, rtol: float, atol: float) -> bool:
    """Prints how far `got` is from `expected` and returns whether every element is within bounds."""
    import numpy as np

    if got.shape != expected.shape:
        print(f"  {name}: shape {list(got.shape)}, expected {list(expected.shape)}")
        return False
    if got.dtype != expected.dtype:
        print(f"  {name}: dtype {got.dtype}, expected {expected.dtype}")
        return False
    got64 = got.astype(np.float64)
    expected64 = expected.astype(np.float64)
    error = np.abs(got64 - expected64)
    bound = atol + rtol * np.abs(expected64)
    # NaN compares false everywhere; make a non-finite value count as the worst possible error.
    ratio = np.where(np.isfinite(got64), error / bound, np.inf)
    worst = np.unravel_index(int(np.argmax(ratio)), ratio.shape)
    relative = error / np.maximum(np.abs(expected64), np.finfo(np.float32).tiny)
    ok = bool(np.all(ratio <= 1.0))
    mismatched = int(np.count_nonzero(~(ratio <= 1.0)))
    print(f"  {name} {list(got.shape)}: max abs err {error.max():.3e}, max rel err "
          f"{relative.max():.3e}, {mismatched} of {ratio.size} elements out of bounds")
    print(f"    worst element {list(map(int, worst))}: kiln {got64[worst]:.9g}, torch "
          f"{expected64[worst]:.9g}, |diff| {error[worst]:.3e} vs bound {bound[worst]:.3e} "
          f"({'ok' if ok else 'MISMATCH'})")
    return ok


def sequence_references(directory: Path, meta: dict, length: int) -> tuple:
    """The export's inputs cut to `length` tokens along the sequence axis (axis 1 of integer
    inputs of rank 2 or more, as export.py --dynamic leaves open) and the eager PyTorch module's
    fp32 outputs for them (model.pt), as {name: array} each."""
    import numpy as np
    import torch
    model = torch.load(directory / "model.pt", weights_only=False).eval()
    inputs = {}
    for entry in meta["inputs"]:
        value = np.load(directory / "inputs" / f"{entry['name']}.npy")
        if value.ndim >= 2 and value.dtype.kind in "iu":
            value = np.ascontiguousarray(value[:, :length])
        inputs[entry["name"]] = value
    with torch.inference_mode():
        outputs = model(*[torch.from_numpy(v) for v in inputs.values()])
    if isinstance(outputs, torch.Tensor):
        outputs = (outputs,)
    references = {entry["name"]: out.float().numpy()
                  for entry, out in zip(meta["outputs"], outputs)}
    return inputs, references


def check_range(args, export, directory: Path, meta: dict, batches: list, rtol: float,
                atol: float, sequences: list) -> int:
    """Compiles the dynamic export once for batches 1..max(batches) (and, with `sequences`, token
    lengths 1..max(sequences)) and checks that artifact at each batch (and length) against
    PyTorch: the inputs and references of the export at that batch, or, for a length, those
    inputs cut to it and the eager module's outputs for them."""
    import numpy as np
    with tempfile.TemporaryDirectory(prefix="kiln-model-") as scratch:
        out = args.keep if args.keep else Path(scratch)
        out.mkdir(parents=True, exist_ok=True)
        artifact = out / "model.kiln"
        command = [str(args.kiln), "compile", str(directory / "model.onnx"), "-o", str(artifact),
                   "--quiet", "--force"]
        if args.device != "cpu":
            # The CUDA compilation, real GPU code (through ptxas) beside the simulated device's.
            command += ["--target", "cuda", "--gpu-arch",
                        "sm_80,cuda-sim" if args.device == "cuda-sim" else "sm_80,sm_90"]
        if args.precision:
            command += ["--precision", args.precision, "--keep-io-types"]
        for entry in meta["inputs"]:
            # --unbounded: "?" (no upper bound; the artifact plans its memory per run).
            dims = ["?" if args.unbounded else f"1..{max(batches)}"] + \
                [str(d) for d in entry["shape"][1:]]
            if sequences and len(dims) >= 2 and entry["dtype"].startswith(("int", "uint")):
                dims[1] = "?" if args.unbounded else f"1..{max(sequences)}"
            command += ["--shape-range", f"{entry['name']}={'x'.join(dims)}"]
        print("check_model: " + " ".join(command), flush=True)
        start = time.monotonic()
        if subprocess.run(command).returncode != 0:
            return 1
        print(f"check_model: kiln compile took {time.monotonic() - start:.1f} s")
        ok = True
        for batch in batches:
            at = export.ensure_exported(args.model, batch, cache=args.cache,
                                        exporter=args.exporter, dynamic=True)
            for length in sequences or [None]:
                tag = f"b{batch}" + (f"-s{length}" if length else "")
                if length:
                    inputs, references = sequence_references(at, meta, length)
                    for name, value in inputs.items():
                        np.save(out / f"{tag}-{name}.npy", value)
                    paths = {name: out / f"{tag}-{name}.npy" for name in inputs}
                else:
                    paths = {entry["name"]: at / "inputs" / f"{entry['name']}.npy"
                             for entry in meta["inputs"]}
                    references = {entry["name"]: np.load(at / "reference" / f"{entry['name']}.npy")
                                  for entry in meta["outputs"]}
                run = [str(args.kiln), "run", str(artifact), "--device", args.device,
                       "--output-dir", str(out / tag)]
                for name, path in paths.items():
                    run += ["--input", f"{name}=@{path}"]
                print("check_model: " + " ".join(run), flush=True)
                if subprocess.run(run).returncode != 0:
                    return 1
                print(f"check_model: {args.model} at batch {batch}"
                      f"{f', sequence {length}' if length else ''} from the one artifact, "
                      f"rtol {rtol:g}, atol {atol:g}")
                for entry in meta["outputs"]:
                    got = np.load(out / tag / f"{entry['name']}.npy")
                    ok = compare(entry["name"], got, references[entry["name"]], rtol, atol) and ok
    print(f"check_model: {args.model} {'matches' if ok else 'DOES NOT MATCH'} PyTorch at batches "
          f"{', '.join(map(str, batches))}"
          f"{' and sequences ' + ', '.join(map(str, sequences)) if sequences else ''} "
          f"from one artifact")
    return 0 if ok else 1


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model", choices=sorted(TOLERANCES))
    parser.add_argument("--kiln", required=True, type=Path, help="the kiln executable")
    parser.add_argument("--batch", type=int, default=1)
    parser.add_argument("--exporter", choices=["torchscript", "dynamo"], default="torchscript",
                        help="torch.onnx.export(dynamo=False) at opset 17, or dynamo=True at 18")
    parser.add_argument("--device", choices=["cpu", "cuda", "cuda-sim"], default="cpu")
    parser.add_argument("--dynamic", action="store_true",
                        help="the export with dynamic batch (and sequence) axes")
    parser.add_argument("--compile-only", action="store_true",
                        help="compile for --device and check the artifact instead of running")
    parser.add_argument("--cache", type=Path, default=None, help="model cache directory")
    parser.add_argument("--rtol", type=float, default=None)
    parser.add_argument("--atol", type=float, default=None)
    parser.add_argument("--devices", type=int, default=1,
                        help="split the model over N CPU devices (kiln compile --devices N) and "
                             "run every device in one process")
    parser.add_argument("--partition", choices=["tensor", "pipeline", "batch", "auto"],
                        default="tensor", help="with --devices: how the devices share the model")
    parser.add_argument("--micro-batches", type=int, default=1,
                        help="with --partition pipeline: micro-batches in flight")
    parser.add_argument("--expect-mode", choices=["tensor", "pipeline", "batch"], default=None,
                        help="with --partition auto: the mode the compiler must choose")
    parser.add_argument("--processes", action="store_true",
                        help="with --devices: run each device as a process of its own (kiln run "
                             "--device-rank R --rendezvous DIR), every one checked")
    parser.add_argument("--expect-all-reduces", type=int, default=None,
                        help="with --devices: the all-reduces the split must have")
    parser.add_argument("--precision", choices=["fp16", "bf16"], default=None,
                        help="compile in this precision (--keep-io-types) and compare with "
                             "PyTorch's fp32 within rtol = atol = 1e-2 (fp16) or 3e-2 (bf16)")
    parser.add_argument("--range-batches", default=None,
                        help="with --dynamic: compile the export once for batches 1 to the "
                             "largest of these, comma-separated (kiln compile --shape-range), "
                             "and run that one artifact at each against PyTorch")
    parser.add_argument("--range-sequences", default=None,
                        help="with --range-batches: also leave the token inputs' sequence axis "
                             "open, 1 to the largest of these lengths, and run the artifact at "
                             "each (the export's inputs cut to the length; PyTorch's eager "
                             "outputs for them as the reference)")
    parser.add_argument("--unbounded", action="store_true",
                        help="with --range-batches: leave those axes without an upper bound "
                             "(--shape NAME=?x...) instead of ranges")
    parser.add_argument("--keep", type=Path, default=None,
                        help="write Kiln's outputs here instead of a temporary directory")
    args = parser.parse_args()

    try:
        import numpy as np
        import torch  # noqa: F401  (the export needs both)
        import torchvision  # noqa: F401
        if args.model in TRANSFORMERS_MODELS:
            import transformers  # noqa: F401
        if args.exporter == "dynamo":
            import onnxscript  # noqa: F401
    except ImportError as error:
        print(f"check_model: skipped, {error.name} is not installed "
              "(scripts/install-deps.sh --models installs it)")
        return SKIP
    if not args.kiln.is_file():
        print(f"check_model: no kiln executable at {args.kiln}", file=sys.stderr)
        return 2
    if "run" not in kiln_subcommands(args.kiln):
        print(f"check_model: skipped, {args.kiln} has no `run` subcommand yet")
        return SKIP

    sys.path.insert(0, str(REPO / "benchmarks" / "models"))
    import export

    rtol, atol = TOLERANCES[args.model]
    if args.precision:
        # What a low precision keeps of fp32 (benchmarks/precision.py holds the language models
        # to 1e-2 in fp16); bf16 has three fewer mantissa bits.
        rtol = atol = {"fp16": 1e-2, "bf16": 3e-2}[args.precision]
    rtol = args.rtol if args.rtol is not None else rtol
    atol = args.atol if args.atol is not None else atol

    directory = export.ensure_exported(args.model, args.batch, cache=args.cache,
                                       exporter=args.exporter, dynamic=args.dynamic)
    meta = json.loads((directory / "meta.json").read_text())
    if args.range_batches:
        if not args.dynamic:
            print("check_model: --range-batches needs --dynamic", file=sys.stderr)
            return 2
        batches = [int(b) for b in args.range_batches.split(",")]
        sequences = ([int(s) for s in args.range_sequences.split(",")]
                     if args.range_sequences else [])
        return check_range(args, export, directory, meta, batches, rtol, atol, sequences)

    with tempfile.TemporaryDirectory(prefix="kiln-model-") as scratch:
        out = args.keep if args.keep else Path(scratch)
        out.mkdir(parents=True, exist_ok=True)
        if args.compile_only:
            ok = check_compiled(args.kiln, args.model, args.device, directory / "model.onnx", out)
            print(f"check_model: {args.model} {'compiles' if ok else 'DOES NOT COMPILE'} for "
                  f"{args.device} as expected")
            return 0 if ok else 1
        model = directory / "model.onnx"
        if args.devices > 1:
            # Split ahead of time, so that the report says how: the regions and all-reduces.
            artifact = out / f"model-{args.devices}.kiln"
            compile_command = [str(args.kiln), "compile", str(model), "-o", str(artifact),
                               "--devices", str(args.devices), "--partition", args.partition,
                               "--report", "--quiet", "--force"]
            if args.micro_batches > 1:
                compile_command += ["--micro-batches", str(args.micro_batches)]
            if args.device != "cpu":
                # Simulated GPUs each, NCCL's collectives carried out on the host.
                compile_command += ["--target", "cuda", "--gpu-arch",
                                    "sm_80,cuda-sim" if args.device == "cuda-sim" else "sm_80,sm_90"]
            print("check_model: " + " ".join(compile_command), flush=True)
            start = time.monotonic()
            compiled = subprocess.run(compile_command, capture_output=True, text=True)
            print(f"check_model: kiln compile took {time.monotonic() - start:.1f} s, exit code "
                  f"{compiled.returncode}")
            if compiled.returncode != 0:
                print(compiled.stderr, file=sys.stderr)
                return 1
            lines = compiled.stdout.splitlines()
            # --partition auto: each mode's prediction, before the chosen mode's report.
            for i, line in enumerate(lines):
                if line.startswith("partition auto "):
                    print("check_model: " + line)
                    for more in lines[i + 1:]:
                        if not more.startswith("  "):
                            break
                        print("check_model: " + more.strip())
            first = next((i for i, line in enumerate(lines) if line.startswith("partition: ")), None)
            partition = lines[first] if first is not None else ""
            # The partition's lines: the first, then its indented ones (regions or stages).
            for line in lines[first:] if first is not None else []:
                if line != partition and not line.startswith("  "):
                    break
                print("check_model: " + line.strip())
            modes = {"tensor": "tensor parallel", "pipeline": "pipeline", "batch": "batch parallel"}
            if args.expect_mode and not partition.startswith(
                    f"partition: {modes[args.expect_mode]} "):
                print(f"check_model: expected the {args.expect_mode} mode, got: {partition}")
                return 1
            match = re.search(r"(\d+) all-reduces", partition)
            if args.expect_all_reduces is not None and (
                    not match or int(match.group(1)) != args.expect_all_reduces):
                print(f"check_model: expected {args.expect_all_reduces} all-reduces")
                return 1
            model = artifact
        command = [str(args.kiln), "run", str(model), "--device", args.device]
        if args.precision:
            command += ["--precision", args.precision, "--keep-io-types"]
        for entry in meta["inputs"]:
            command += ["--input", f"{entry['name']}=@{directory / 'inputs' / (entry['name'] + '.npy')}"]
        # One process per device meets the others in a new directory; each writes its outputs
        # (every device returns the model's) into a directory of its own.
        outputs = [out]
        if args.processes and args.devices > 1:
            rendezvous = out / "rendezvous"
            rendezvous.mkdir(mode=0o700)
            outputs = [out / f"device{rank}" for rank in range(args.devices)]
            commands = [command + ["--device-rank", str(rank), "--rendezvous", str(rendezvous),
                                   "--threads", "1", "--output-dir", str(outputs[rank])]
                        for rank in range(args.devices)]
        else:
            commands = [command + ["--output-dir", str(out)]]
        for each in commands:
            print("check_model: " + " ".join(each), flush=True)
        start = time.monotonic()
        processes = [subprocess.Popen(each) for each in commands]
        codes = [process.wait() for process in processes]
        print(f"check_model: kiln run took {time.monotonic() - start:.1f} s, exit code(s) {codes}")
        if any(codes):
            return 1

        print(f"check_model: {args.model} (batch {args.batch}, {args.exporter} exporter"
              f"{', dynamic axes' if args.dynamic else ''}, opset "
              f"{meta['opset']}{', ' + args.precision if args.precision else ''}) against "
              f"PyTorch {meta['torch']} fp32, "
              f"rtol {rtol:g}, atol {atol:g}")
        ok = True
        for written in outputs:
            for entry in meta["outputs"]:
                produced = written / f"{entry['name']}.npy"
                if not produced.is_file():
                    print(f"  {entry['name']}: kiln wrote no {produced}")
                    ok = False
                    continue
                expected = np.load(directory / "reference" / f"{entry['name']}.npy")
                ok = compare(entry["name"], np.load(produced), expected, rtol, atol) and ok
    print(f"check_model: {args.model} {'matches' if ok else 'DOES NOT MATCH'} PyTorch")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
