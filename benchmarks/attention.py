#!/usr/bin/env python3
"""Attention as one call against two products and a softmax, over sequence lengths, on CUDA.

For each sequence length S, writes one self-attention layer as an ONNX model (onnx.helper, f32,
BERT's form: the input [1, S, H*D] projected to Q, K and V by seeded weights, split into heads,
softmax(Q Kᵀ / sqrt(D) + mask) V with an additive padding mask [1, 1, 1, S] as an input, the heads
merged), compiles it with `--precision fp16 --keep-io-types` (or `--precision fp32`) twice,
`--attention fused` (one step: cuDNN's fused flash attention, cudnn.attention, in fp16; the
kernel Kiln generates, kiln-generate-cuda-attention, in fp32) and `--attention unfused` (two
cuBLASLt products and the softmax kernels between them, the S x S scores in device memory), and
times both with `kiln bench` (the steps alone on the device, CUDA events around a
graph replay: `device_latency_ms`), in alternating rounds. Beside them, where PyTorch has CUDA,
PyTorch's own fused attention on the same shapes in the same precision
(torch.nn.functional.scaled_dot_product_attention, CUDA events; the attention alone, without the
projections). Also records each artifact's
arena (`planned_memory_bytes`): the unfused one holds the scores.

Prints a table, writes JSON with --json and a plot with --plot (matplotlib).

    python3 benchmarks/attention.py --kiln build/bin/kiln [--device cuda] [--seqs 512 1024 2048 4096]
        [--heads 16] [--head-dim 64] [--precision fp16|fp32] [--rounds 2] [--iterations 50]
        [--json FILE] [--plot FILE]
"""

import argparse
import json
import math
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent / "runners"))
from torch_cuda import cuda_event_samples  # noqa: E402

try:
    import onnx
    from onnx import TensorProto, helper
except ImportError:
    print("attention.py: the onnx package is missing (scripts/install-deps.sh --models)",
          file=sys.stderr)
    sys.exit(77)


def attention_model(seq: int, heads: int, head_dim: int) -> onnx.ModelProto:
    """A self-attention layer in f32 as exporters write BERT's: X [1, S, H*D] projected by three
    seeded weights, split into heads (reshape, transpose; Kᵀ by a transpose), softmax(Q Kᵀ *
    1/sqrt(D) + mask) V, and the heads merged back. The mask [1, 1, 1, S] is an input."""
    import numpy as np
    width = heads * head_dim
    rng = np.random.default_rng(seq)
    weights = [helper.make_tensor(name, TensorProto.FLOAT, [width, width],
                                  (rng.standard_normal((width, width)) * 0.02)
                                  .astype(np.float32).ravel().tolist())
               for name in ("Wq", "Wk", "Wv")]
    constants = weights + [
        helper.make_tensor("scale", TensorProto.FLOAT, [], [1.0 / math.sqrt(head_dim)]),
        helper.make_tensor("heads_shape", TensorProto.INT64, [4], [1, seq, heads, head_dim]),
        helper.make_tensor("merged_shape", TensorProto.INT64, [3], [1, seq, width]),
    ]
    inputs = [helper.make_tensor_value_info("X", TensorProto.FLOAT, [1, seq, width]),
              helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 1, 1, seq])]
    output = helper.make_tensor_value_info("Y", TensorProto.FLOAT, [1, seq, width])
    nodes = []
    for name, perm in (("q", [0, 2, 1, 3]), ("k", [0, 2, 3, 1]), ("v", [0, 2, 1, 3])):
        nodes += [
            helper.make_node("MatMul", ["X", "W" + name], [name + "_projected"]),
            helper.make_node("Reshape", [name + "_projected", "heads_shape"], [name + "_heads"]),
            helper.make_node("Transpose", [name + "_heads"], [name + "_t"], perm=perm),
        ]
    nodes += [
        helper.make_node("MatMul", ["q_t", "k_t"], ["scores"]),
        helper.make_node("Mul", ["scores", "scale"], ["scaled"]),
        helper.make_node("Add", ["scaled", "mask"], ["masked"]),
        helper.make_node("Softmax", ["masked"], ["probabilities"], axis=-1),
        helper.make_node("MatMul", ["probabilities", "v_t"], ["context"]),
        helper.make_node("Transpose", ["context"], ["context_t"], perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["context_t", "merged_shape"], ["Y"]),
    ]
    graph = helper.make_graph(nodes, f"attention_s{seq}", inputs, [output], initializer=constants)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model


def kiln_bench(kiln: str, model: Path, device: str, attention: str, precision: str,
               iterations: int, scratch: Path) -> dict:
    report = scratch / f"{model.stem}-{attention}.json"
    command = [kiln, "bench", str(model), "--device", device, "--precision", precision]
    if precision != "fp32":
        command.append("--keep-io-types")
    command += ["--attention", attention, "--warmup", "10",
               "--iterations", str(iterations), "--max-seconds", "20", "--json", str(report),
               "--force"]
    completed = subprocess.run(command, capture_output=True, text=True)
    if completed.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{completed.stderr[-2000:]}")
    return json.loads(report.read_text())


def torch_sdpa_ms(seq: int, heads: int, head_dim: int, precision: str, iterations: int):
    """PyTorch's fused attention on the GPU (CUDA events), or None without CUDA."""
    try:
        import torch
    except ImportError:
        return None
    if not torch.cuda.is_available():
        return None
    dtype = torch.float16 if precision == "fp16" else torch.float32
    generator = torch.Generator(device="cuda").manual_seed(0)
    q, k, v = (torch.randn(1, heads, seq, head_dim, device="cuda", dtype=dtype,
                           generator=generator) for _ in range(3))
    mask = torch.zeros(1, 1, 1, seq, device="cuda", dtype=dtype)
    mask[..., seq * 7 // 8:] = -10000.0
    attend = torch.nn.functional.scaled_dot_product_attention
    return statistics.median(
        cuda_event_samples(lambda: attend(q, k, v, attn_mask=mask), 10, iterations))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--device", default="cuda", choices=["cuda", "cuda-sim"])
    parser.add_argument("--seqs", nargs="+", type=int, default=[512, 1024, 2048, 4096])
    parser.add_argument("--heads", type=int, default=16)
    parser.add_argument("--head-dim", type=int, default=64)
    parser.add_argument("--precision", default="fp16", choices=["fp16", "fp32"])
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--iterations", type=int, default=50)
    parser.add_argument("--json", type=Path)
    parser.add_argument("--plot", type=Path)
    args = parser.parse_args()

    rows = []
    with tempfile.TemporaryDirectory(prefix="kiln-attention-") as directory:
        scratch = Path(directory)
        for seq in args.seqs:
            model = scratch / f"attention_s{seq}.onnx"
            onnx.save(attention_model(seq, args.heads, args.head_dim), model)
            runs = {"fused": [], "unfused": []}
            arena = {}
            for round_index in range(args.rounds):
                for attention in ("fused", "unfused"):
                    print(f"attention.py: S {seq}, {attention}, round {round_index + 1}/"
                          f"{args.rounds}", file=sys.stderr, flush=True)
                    result = kiln_bench(args.kiln, model, args.device, attention,
                                        args.precision, args.iterations, scratch)
                    runs[attention].append(result["device_latency_ms"]["p50"])
                    arena[attention] = result["planned_memory_bytes"]["arena"]
            row = {"seq": seq, "heads": args.heads, "head_dim": args.head_dim,
                   "precision": args.precision,
                   "fused_ms": statistics.median(runs["fused"]),
                   "unfused_ms": statistics.median(runs["unfused"]),
                   "fused_rounds_ms": runs["fused"], "unfused_rounds_ms": runs["unfused"],
                   "fused_arena_bytes": arena["fused"], "unfused_arena_bytes": arena["unfused"],
                   "torch_sdpa_ms": (torch_sdpa_ms(seq, args.heads, args.head_dim,
                                                   args.precision, args.iterations)
                                     if args.device == "cuda" else None)}
            rows.append(row)

    print(f"| S | fused (ms) | unfused (ms) | unfused / fused | PyTorch SDPA {args.precision} (ms) | "
          "arena fused / unfused (MiB) |")
    print("| ---: | ---: | ---: | ---: | ---: | ---: |")
    for row in rows:
        torch_ms = f"{row['torch_sdpa_ms']:.3f}" if row["torch_sdpa_ms"] else ""
        arenas = (f"{(row['fused_arena_bytes'] or 0) / 2**20:.1f} / "
                  f"{(row['unfused_arena_bytes'] or 0) / 2**20:.1f}")
        print(f"| {row['seq']} | {row['fused_ms']:.3f} | {row['unfused_ms']:.3f} | "
              f"{row['unfused_ms'] / row['fused_ms']:.2f}x | {torch_ms} | {arenas} |")
    if args.json:
        args.json.write_text(json.dumps({"device": args.device, "rows": rows}, indent=1) + "\n")
    if args.plot:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        seqs = [row["seq"] for row in rows]
        figure, axis = plt.subplots(figsize=(6, 4))
        fused = "cudnn.attention" if args.precision == "fp16" else "generated kernel"
        axis.plot(seqs, [row["fused_ms"] for row in rows], "o-", label=f"Kiln, {fused}")
        axis.plot(seqs, [row["unfused_ms"] for row in rows], "s-",
                  label="Kiln, products + softmax")
        if all(row["torch_sdpa_ms"] for row in rows):
            axis.plot(seqs, [row["torch_sdpa_ms"] for row in rows], "^--",
                      label="PyTorch SDPA")
        axis.set_xscale("log", base=2)
        axis.set_yscale("log")
        axis.set_xlabel("sequence length")
        axis.set_ylabel("ms (device, p50)")
        axis.set_title(f"{args.precision} attention, {args.heads} heads of {args.head_dim}")
        axis.legend()
        figure.tight_layout()
        figure.savefig(args.plot, dpi=120)
    return 0


if __name__ == "__main__":
    sys.exit(main())
