#!/usr/bin/env python3
"""Times an exported model on an NVIDIA GPU with PyTorch eager and torch.compile, Kiln's GPU peers.

    python3 benchmarks/runners/torch_cuda.py MODEL_DIR [--modes eager,compile,max-autotune]
        [--dtypes fp32,fp16] [--warmup N] [--iterations N] [--json FILE]

MODEL_DIR is an export from benchmarks/models/export.py (model.pt, inputs/, meta.json) at the
batch being measured. Each (mode, dtype) case moves the module and its inputs to the GPU (fp16:
`.half()`, integer inputs kept), compiles it (torch.compile's time is `compile_s`, measured over
the first call), warms up, then times `--iterations` calls with CUDA events around each call
under torch.inference_mode(), after a synchronize. fp32 runs with TF32 off, as Kiln's fp32. The
JSON holds one entry per case with the same latency fields as `kiln bench --json`.
"""

import argparse
import json
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
# model.pt pickles the model classes defined beside the export script.
sys.path.insert(0, str(HERE.parent / "models"))


def cuda_event_samples(call, warmup: int, iterations: int) -> list:
    """The device time of each of `iterations` calls of `call` in ms, between two CUDA events
    around it, after `warmup` untimed calls and a synchronize (the GPU peers' timing, and the
    benchmarks' own PyTorch references)."""
    import torch

    for _ in range(warmup):
        call()
    torch.cuda.synchronize()
    samples = []
    for _ in range(iterations):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        call()
        end.record()
        end.synchronize()
        samples.append(begin.elapsed_time(end))
    return samples


def time_case(model, inputs, mode: str, warmup: int, iterations: int) -> dict:
    import numpy as np
    import torch

    torch._dynamo.reset()
    if mode == "eager":
        runner = model
    elif mode == "compile":
        runner = torch.compile(model)
    elif mode == "max-autotune":
        runner = torch.compile(model, mode="max-autotune")
    else:
        raise ValueError(f"unknown mode {mode}")
    with torch.inference_mode():
        torch.cuda.synchronize()
        start = time.perf_counter()
        runner(*inputs)
        torch.cuda.synchronize()
        first_call_s = time.perf_counter() - start
        samples = cuda_event_samples(lambda: runner(*inputs), warmup, iterations)
    ordered = np.array(samples)
    p50 = float(np.percentile(ordered, 50))
    return {
        "compile_s": first_call_s,
        "latency_ms": {"p50": p50, "p90": float(np.percentile(ordered, 90)),
                       "p99": float(np.percentile(ordered, 99)), "min": float(ordered.min()),
                       "max": float(ordered.max()), "mean": float(ordered.mean())},
        "samples_ms": samples,
        "peak_gpu_memory_bytes": int(torch.cuda.max_memory_allocated()),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("model_dir", type=Path)
    parser.add_argument("--modes", default="eager,compile")
    parser.add_argument("--dtypes", default="fp32,fp16")
    parser.add_argument("--warmup", type=int, default=10)
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()

    import numpy as np
    import torch

    if not torch.cuda.is_available():
        print("torch_cuda: no CUDA device", file=sys.stderr)
        return 1
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    meta = json.loads((args.model_dir / "meta.json").read_text())
    try:
        module = torch.load(args.model_dir / "model.pt", weights_only=False)
    except TypeError:  # PyTorch before weights_only
        module = torch.load(args.model_dir / "model.pt")
    host_inputs = [np.load(args.model_dir / "inputs" / f"{entry['name']}.npy")
                   for entry in meta["inputs"]]
    cases = []
    for dtype in args.dtypes.split(","):
        model = module.eval().cuda()
        model = model.half() if dtype == "fp16" else model.float()
        inputs = []
        for array in host_inputs:
            tensor = torch.from_numpy(array).cuda()
            if tensor.is_floating_point():
                tensor = tensor.half() if dtype == "fp16" else tensor.float()
            inputs.append(tensor)
        for mode in args.modes.split(","):
            torch.cuda.reset_peak_memory_stats()
            result = time_case(model, inputs, mode, args.warmup, args.iterations)
            result.update({"model": meta["model"], "batch": meta["batch"], "peer": f"torch-{mode}",
                           "dtype": dtype, "device": torch.cuda.get_device_name(),
                           "torch": torch.__version__})
            print(f"torch_cuda: {meta['model']} b{meta['batch']} {dtype} {mode}: "
                  f"p50 {result['latency_ms']['p50']:.3f} ms (first call {result['compile_s']:.1f} s)",
                  flush=True)
            cases.append(result)
    if args.json:
        args.json.write_text(json.dumps(cases, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
