"""Writes a two-layer transformer encoder (hidden 16, four heads of 4, eight tokens, a fused QKV
projection, an MLP of 32, post layer norms) as a graph program with seeded weights, its input and
NumPy's output into DIR: the model of kiln_devices.test. A second argument sets the batch (1)."""
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(11)
batch = int(sys.argv[2]) if len(sys.argv) > 2 else 1
hidden, heads, tokens, mlp, layers = 16, 4, 8, 32, 2
head = hidden // heads


def dense(array):
    return "dense<" + np.array2string(array, separator=", ", threshold=1 << 30,
                                      floatmode="unique", max_line_width=1 << 30) + ">"


def ttype(shape):
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


lines = []
counter = [0]


def fresh():
    counter[0] += 1
    return f"%v{counter[0]}"


def const(array):
    name = fresh()
    lines.append(f"  {name} = graph.constant {dense(array)} : {ttype(array.shape)}")
    return name


def op(text):
    name = fresh()
    lines.append(f"  {name} = {text}")
    return name


def linear(x, shape, weight, bias):
    """x @ weight + bias for x of `shape`; returns the value and its shape."""
    out = shape[:-1] + (weight.shape[1],)
    product = op(f"graph.matmul {x}, {const(weight)} : ({ttype(shape)}, {ttype(weight.shape)}) -> {ttype(out)}")
    return op(f"graph.add {product}, {const(bias)} : ({ttype(out)}, {ttype(bias.shape)}) -> {ttype(out)}"), out


def add_and_norm(a, b, shape):
    """layer_norm(a + b) over the last dimension, without scale or shift."""
    total = op(f"graph.add {a}, {b} : ({ttype(shape)}, {ttype(shape)}) -> {ttype(shape)}")
    scale = const(np.ones(shape[-1], np.float32))
    return op(f"graph.layer_norm {total}, {scale} {{axis = {len(shape) - 1} : i64}} : ({ttype(shape)}, {ttype((shape[-1],))}) -> {ttype(shape)}")


def layer_norm(x):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) / np.sqrt(var + 1e-5)


x = rng.standard_normal((batch, tokens, hidden)).astype(np.float32)
np.save(f"{out}/x.npy", x)
ref = x.astype(np.float64)
value = "%x"
S = (batch, tokens, hidden)
for _ in range(layers):
    wqkv = (rng.standard_normal((hidden, 3 * hidden)) / 4).astype(np.float32)
    bqkv = (rng.standard_normal(3 * hidden) / 4).astype(np.float32)
    wo = (rng.standard_normal((hidden, hidden)) / 4).astype(np.float32)
    bo = (rng.standard_normal(hidden) / 4).astype(np.float32)
    wup = (rng.standard_normal((hidden, mlp)) / 4).astype(np.float32)
    bup = (rng.standard_normal(mlp) / 4).astype(np.float32)
    wdown = (rng.standard_normal((mlp, hidden)) / 4).astype(np.float32)
    bdown = (rng.standard_normal(hidden) / 4).astype(np.float32)

    # NumPy's layer, in float64.
    qkv = ref @ wqkv + bqkv
    q, k, v = qkv.reshape(batch, tokens, 3, heads, head).transpose(2, 0, 3, 1, 4)
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(head)
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    probs = scores / scores.sum(-1, keepdims=True)
    context = (probs @ v).transpose(0, 2, 1, 3).reshape(S)
    h = layer_norm(ref + context @ wo + bo)
    up = h @ wup + bup
    ref = layer_norm(h + np.tanh(up) @ wdown + bdown)

    # The same layer in the graph dialect.
    qkv_b, _ = linear(value, S, wqkv, bqkv)
    r = op(f"graph.reshape {qkv_b} to [{batch}, {tokens}, 3, {heads}, {head}] : {ttype((batch, tokens, 3 * hidden))} -> {ttype((batch, tokens, 3, heads, head))}")
    t = op(f"graph.transpose {r}, [2, 0, 3, 1, 4] : {ttype((batch, tokens, 3, heads, head))} -> {ttype((3, batch, heads, tokens, head))}")
    part = ttype((1, batch, heads, tokens, head))
    split = fresh()
    lines.append(f"  {split}:3 = graph.split {t} {{axis = 0 : i64, sizes = array<i64: 1, 1, 1>}} : ({ttype((3, batch, heads, tokens, head))}) -> ({part}, {part}, {part})")
    hd = ttype((batch, heads, tokens, head))
    qv, kv, vv = (op(f"graph.squeeze {split}#{i} {{axes = array<i64: 0>}} : ({part}) -> {hd}") for i in range(3))
    kt = op(f"graph.transpose {kv}, [0, 1, 3, 2] : {hd} -> {ttype((batch, heads, head, tokens))}")
    sc_t = ttype((batch, heads, tokens, tokens))
    sc = op(f"graph.matmul {qv}, {kt} : ({hd}, {ttype((batch, heads, head, tokens))}) -> {sc_t}")
    scale = const(np.array(np.sqrt(head), np.float32))
    scd = op(f"graph.div {sc}, {scale} : ({sc_t}, tensor<f32>) -> {sc_t}")
    p = op(f"graph.softmax {scd} {{axis = 3 : i64}} : {sc_t}")
    ctx = op(f"graph.matmul {p}, {vv} : ({sc_t}, {hd}) -> {hd}")
    ctxt = op(f"graph.transpose {ctx}, [0, 2, 1, 3] : {hd} -> {ttype((batch, tokens, heads, head))}")
    merged = op(f"graph.reshape {ctxt} to [{batch}, {tokens}, {hidden}] : {ttype((batch, tokens, heads, head))} -> {ttype(S)}")
    attended, _ = linear(merged, S, wo, bo)
    hn = add_and_norm(value, attended, S)
    ub, U = linear(hn, S, wup, bup)
    ua = op(f"graph.tanh {ub} : {ttype(U)}")
    db, _ = linear(ua, U, wdown, bdown)
    value = add_and_norm(hn, db, S)

np.save(f"{out}/reference.npy", ref.astype(np.float32))
with open(f"{out}/layers.mlir", "w") as f:
    f.write(f'func.func @main(%x: {ttype(S)} {{kiln.name = "x"}}) -> ({ttype(S)} {{kiln.name = "y"}}) {{\n')
    f.write("\n".join(lines) + "\n")
    f.write(f"  return {value} : {ttype(S)}\n}}\n")
