"""An attention layer written as exporters write it over dynamic batch and sequence axes, and
NumPy's results for it (kiln_shape_range_sequence.test).

The graph reads its sizes from the tokens with Shape, Gather, Unsqueeze and Concat: positions are
Range(0, sequence), the heads' reshapes keep two dynamic dimensions ([batch, sequence, 3, 2, 8]
and back to [batch, sequence, 16]), and a causal mask is a constant cut to [sequence, sequence]
with Slice.

  dynamic_sequence.py write DIR      model.onnx, seeded inputs x_B_S.npy and ids_B_S.npy
  dynamic_sequence.py check DIR B S  compares DIR/out_B_S/y.npy with NumPy; exits 1 on a mismatch
"""
import sys

import numpy as np

from graph_writer import GraphWriter

SHAPES = [(1, 1), (2, 5), (3, 17), (4, 32)]
WIDTH, HEADS, HEAD, VOCAB, MAX_POSITIONS = 16, 2, 8, 50, 64


def weights():
    rng = np.random.default_rng(20261128)
    return {
        "tokens": rng.standard_normal((VOCAB, WIDTH)).astype(np.float32),
        "positions": rng.standard_normal((MAX_POSITIONS, WIDTH)).astype(np.float32),
        "wqkv": (rng.standard_normal((WIDTH, 3 * WIDTH)) / 4).astype(np.float32),
        "causal": np.tril(np.ones((MAX_POSITIONS, MAX_POSITIONS), dtype=bool)),
    }


def write(out):
    from onnx import TensorProto, helper, numpy_helper
    w = weights()
    graph_writer = GraphWriter([numpy_helper.from_array(value, name) for name, value in w.items()])
    inits, nodes = graph_writer.inits, graph_writer.nodes
    const, node = graph_writer.const, graph_writer.node

    const("zero", 0)
    const("one", 1)
    const("axis0", [0])
    const("heads", [3, HEADS, HEAD])
    const("width", [WIDTH])
    const("starts", [0, 0])
    const("axes01", [0, 1])
    shape = node("Shape", ["ids"], "ids_shape")
    batch = node("Gather", [shape, "zero"], "batch")
    sequence = node("Gather", [shape, "one"], "sequence")
    # Positions 0..sequence-1, as exporters write torch.arange(tokens).
    positions = node("Range", ["zero", sequence, "one"], "position_ids")
    positions = node("Unsqueeze", [positions, "axis0"], "position_row")
    h = node("Add", [node("Gather", ["tokens", "ids"], "token_rows"),
                     node("Gather", ["positions", positions], "position_rows")], "embedded")
    h = node("Add", [h, "x"], "h")
    qkv = node("MatMul", [h, "wqkv"], "qkv")
    b1 = node("Unsqueeze", [batch, "axis0"], "b1")
    s1 = node("Unsqueeze", [sequence, "axis0"], "s1")
    split_shape = node("Concat", [b1, s1, "heads"], "split_shape", axis=0)
    qkv = node("Reshape", [qkv, split_shape], "qkv_heads")
    qkv = node("Transpose", [qkv], "qkv_t", perm=[2, 0, 3, 1, 4])
    q = node("Gather", [qkv, "zero"], "q")
    k = node("Gather", [qkv, "one"], "k")
    const("two", 2)
    v = node("Gather", [qkv, "two"], "v")
    scores = node("MatMul", [q, node("Transpose", [k], "kt", perm=[0, 1, 3, 2])], "scores")
    inits.append(numpy_helper.from_array(np.array(1 / np.sqrt(HEAD), np.float32), "scale"))
    scores = node("Mul", [scores, "scale"], "scaled")
    # The causal mask cut to [sequence, sequence].
    ends = node("Concat", [s1, s1], "mask_ends", axis=0)
    mask = node("Slice", ["causal", "starts", ends, "axes01"], "mask")
    inits.append(numpy_helper.from_array(np.array(-1e9, np.float32), "masked"))
    scores = node("Where", [mask, scores, "masked"], "masked_scores")
    probs = node("Softmax", [scores], "probs", axis=-1)
    context = node("MatMul", [probs, v], "context")
    context = node("Transpose", [context], "context_t", perm=[0, 2, 1, 3])
    merge_shape = node("Concat", [b1, s1, "width"], "merge_shape", axis=0)
    node("Reshape", [context, merge_shape], "y")
    graph = helper.make_graph(
        nodes, "dynamic_sequence",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", "sequence", WIDTH]),
         helper.make_tensor_value_info("ids", TensorProto.INT64, ["batch", "sequence"])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", "sequence", WIDTH])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    with open(f"{out}/model.onnx", "wb") as f:
        f.write(model.SerializeToString())
    rng = np.random.default_rng(7)
    for b, s in SHAPES + [(2, 33)]:
        np.save(f"{out}/x_{b}_{s}.npy", rng.standard_normal((b, s, WIDTH)).astype(np.float32))
        np.save(f"{out}/ids_{b}_{s}.npy", rng.integers(0, VOCAB, (b, s)).astype(np.int64))


def check(out, b, s):
    w = {name: value.astype(np.float64) for name, value in weights().items()}
    x = np.load(f"{out}/x_{b}_{s}.npy").astype(np.float64)
    ids = np.load(f"{out}/ids_{b}_{s}.npy")
    h = w["tokens"][ids] + w["positions"][np.arange(s)][None] + x
    qkv = (h @ w["wqkv"]).reshape(b, s, 3, HEADS, HEAD).transpose(2, 0, 3, 1, 4)
    q, k, v = qkv
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(HEAD)
    scores = np.where(np.tril(np.ones((s, s), dtype=bool)), scores, -1e9)
    e = np.exp(scores - scores.max(-1, keepdims=True))
    y = ((e / e.sum(-1, keepdims=True)) @ v).transpose(0, 2, 1, 3).reshape(b, s, WIDTH)
    got = np.load(f"{out}/out_{b}_{s}/y.npy")
    if got.shape != y.shape or not np.allclose(got, y, rtol=1e-4, atol=1e-4):
        err = np.abs(got - y).max() if got.shape == y.shape else "shape"
        print(f"y at {b}x{s}: got {got.shape}, expected {y.shape}, error {err}")
        sys.exit(1)
    print(f"y at {b}x{s}: ok {got.shape}")


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        check(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
