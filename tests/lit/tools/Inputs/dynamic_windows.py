"""Window attention as Swin's exporters write it over a dynamic batch, and NumPy's results for
it (kiln_shape_range_windows.test).

x [batch, 16, 4] is a 4 x 4 grid of tokens cut into 4 windows of 2 x 2 (reshape, transpose,
reshape to [batch * 4, 4, 4]). The scores of each window get a constant per-window mask the way
Swin adds its shifted-window mask: they are viewed as [windows / 4, 4, 4, 4], the first entry
computed as Div(Gather(Shape(scores), 0), Gather(Shape(mask), 0)), and the mask is expanded to
that shape (Concat of the same arithmetic); the windows are merged back with a batch computed as
Div(Gather(Shape(windows), 0), 4).

  dynamic_windows.py write DIR      model.onnx, negative.onnx and seeded inputs x_B.npy
  dynamic_windows.py check DIR B    compares DIR/out_B/y.npy with NumPy; exits 1 on a mismatch
"""
import sys

import numpy as np

from graph_writer import GraphWriter

BATCHES = [1, 3, 4]
GRID, WINDOW, CHANNELS = 4, 2, 4
WINDOWS = (GRID // WINDOW) ** 2
TOKENS = WINDOW * WINDOW


def mask():
    rng = np.random.default_rng(20261127)
    return rng.standard_normal((WINDOWS, TOKENS, TOKENS)).astype(np.float32)


def partition(x):
    b = x.shape[0]
    g = GRID // WINDOW
    x = x.reshape(b, g, WINDOW, g, WINDOW, CHANNELS).transpose(0, 1, 3, 2, 4, 5)
    return x.reshape(-1, TOKENS, CHANNELS)


def reference(x):
    w = partition(x)
    scores = w @ w.transpose(0, 2, 1)
    scores = scores.reshape(-1, WINDOWS, TOKENS, TOKENS) + mask()[None]
    scores = scores.reshape(-1, TOKENS, TOKENS)
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    out = (scores / scores.sum(-1, keepdims=True)) @ w
    g = GRID // WINDOW
    out = out.reshape(-1, g, g, WINDOW, WINDOW, CHANNELS).transpose(0, 1, 3, 2, 4, 5)
    return out.reshape(-1, GRID * GRID, CHANNELS)


def write(out):
    from onnx import TensorProto, helper, numpy_helper
    graph_writer = GraphWriter([numpy_helper.from_array(mask(), "mask")])
    inits, nodes = graph_writer.inits, graph_writer.nodes
    const, node = graph_writer.const, graph_writer.node

    g = GRID // WINDOW
    const("zero", 0)
    const("axis0", [0])
    const("four", WINDOWS)
    const("grid", [-1, g, WINDOW, g, WINDOW, CHANNELS])
    const("windows_shape", [-1, TOKENS, CHANNELS])
    const("rest", [WINDOWS, TOKENS, TOKENS])
    const("flat_scores", [-1, TOKENS, TOKENS])
    const("merged_rest", [g, g, WINDOW, WINDOW, CHANNELS])
    const("image", [GRID * GRID, CHANNELS])
    w = node("Reshape", ["x", "grid"], "grid_x")
    w = node("Transpose", [w], "grid_t", perm=[0, 1, 3, 2, 4, 5])
    w = node("Reshape", [w, "windows_shape"], "windows")
    s = node("MatMul", [w, node("Transpose", [w], "windows_t", perm=[0, 2, 1])], "scores")
    # Swin: scores.view(windows // mask_windows, mask_windows, heads, n, n) + mask.
    count = node("Gather", [node("Shape", [s], "scores_shape"), "zero"], "window_count")
    mask_windows = node("Gather", [node("Shape", ["mask"], "mask_shape"), "zero"], "mask_windows")
    images = node("Div", [count, mask_windows], "images")
    view = node("Concat", [node("Unsqueeze", [images, "axis0"], "images_1"), "rest"], "view",
                axis=0)
    s = node("Reshape", [s, view], "scores_view")
    m = node("Expand", [node("Unsqueeze", ["mask", "axis0"], "mask_1"), view], "mask_expanded")
    s = node("Add", [s, m], "masked")
    s = node("Reshape", [s, "flat_scores"], "masked_flat")
    p = node("Softmax", [s], "probabilities", axis=-1)
    o = node("MatMul", [p, w], "attended")
    # Windows merged back: the batch is the windows over 4.
    batch = node("Div", [node("Gather", [node("Shape", [o], "attended_shape"), "zero"],
                              "attended_count"), "four"], "batch")
    merged = node("Concat", [node("Unsqueeze", [batch, "axis0"], "batch_1"), "merged_rest"],
                  "merged_shape", axis=0)
    o = node("Reshape", [o, merged], "merged")
    o = node("Transpose", [o], "merged_t", perm=[0, 1, 3, 2, 4, 5])
    image = node("Concat", ["batch_1", "image"], "image_shape", axis=0)
    node("Reshape", [o, image], "y")
    graph = helper.make_graph(
        nodes, "windows",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", GRID * GRID, CHANNELS])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["batch", GRID * GRID, CHANNELS])],
        inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    with open(f"{out}/model.onnx", "wb") as f:
        f.write(model.SerializeToString())

    # A reshape to [batch - 2, ...]: arithmetic that may be negative at run time.
    nodes.clear()
    inits.clear()
    const("zero", 0)
    const("axis0", [0])
    const("two", 2)
    const("rest", [-1])
    batch = node("Gather", [node("Shape", ["x"], "x_shape"), "zero"], "batch")
    fewer = node("Unsqueeze", [node("Sub", [batch, "two"], "fewer"), "axis0"], "fewer_1")
    node("Reshape", ["x", node("Concat", [fewer, "rest"], "shape", axis=0)], "y")
    graph = helper.make_graph(
        nodes, "negative",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["batch", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["rows", "cols"])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    with open(f"{out}/negative.onnx", "wb") as f:
        f.write(model.SerializeToString())

    rng = np.random.default_rng(7)
    for b in BATCHES:
        np.save(f"{out}/x_{b}.npy",
                rng.standard_normal((b, GRID * GRID, CHANNELS)).astype(np.float32))


def check(out, b):
    x = np.load(f"{out}/x_{b}.npy")
    got = np.load(f"{out}/out_{b}/y.npy")
    want = reference(x)
    if got.shape != want.shape:
        print(f"batch {b}: shape {got.shape}, expected {want.shape}")
        return 1
    err = float(np.abs(got - want).max())
    if err > 1e-5:
        print(f"batch {b}: max abs err {err:.3g}")
        return 1
    print(f"batch {b}: ok {list(got.shape)}")
    return 0


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        sys.exit(check(sys.argv[2], int(sys.argv[3])))
