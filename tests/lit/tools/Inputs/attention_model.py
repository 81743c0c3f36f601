"""Writes the model of kiln_attention_cuda.test into DIR, with its inputs and NumPy's outputs.

  python3 attention_model.py DIR

Three f32 attentions in the forms exporters write, shaped to reach every edge of the generated
CUDA kernel:
  o1: 2 x 3 heads, 70 queries (two full tiles of 32 rows and a partial one), 40 keys (a full and
      a partial tile of 32), head dim 24 and value dim 20; Kᵀ an input [B, H, D, S] (the keys
      contiguous: the kernel copies its tiles along them), the scores divided by sqrt(24), an additive padding mask [B, 1, 1, 40] (the last
      keys of batch 1 masked with -1e9) broadcast over heads and queries;
  o2: grouped-query attention (Llama's export): 4 query heads and 2 key and value heads sliced
      out of one projection [1, 20, 96], K and V repeated per group (reshape, expand, reshape),
      a causal mask of -inf [20, 20], the scores scaled by a multiplication; the result written
      back as [1, 20, 64] through a transpose and a reshape;
  o3: 132 heads of 130 queries and keys, heads of 4 (enough warps to fill a large GPU: blocks of
      64 rows), K [1, 132, 130, 4] through a transpose, no mask.
Reference in float64 with numpy.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

out = sys.argv[1]
rng = np.random.default_rng(47)
B, H, SQ, SKV, D, DV = 2, 3, 70, 40, 24, 20
q = rng.standard_normal((B, H, SQ, D)).astype(np.float32)
kt = rng.standard_normal((B, H, D, SKV)).astype(np.float32)
v = rng.standard_normal((B, H, SKV, DV)).astype(np.float32)
padding = np.zeros((B, 1, 1, SKV), np.float32)
padding[1, :, :, 33:] = -1e9
S2, HQ, HKV, D2 = 20, 4, 2, 16
qkv = rng.standard_normal((1, S2, (HQ + 2 * HKV) * D2)).astype(np.float32)
causal = np.triu(np.full((S2, S2), -np.inf, np.float32), 1)
H3, S3, D3 = 132, 130, 4
q3 = rng.standard_normal((1, H3, S3, D3)).astype(np.float32)
k3 = rng.standard_normal((1, H3, S3, D3)).astype(np.float32)
v3 = rng.standard_normal((1, H3, S3, D3)).astype(np.float32)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


initializers = [
    const("root_d", np.float32(np.sqrt(D))), const("padding", padding),
    const("scale2", np.float32(D2 ** -0.5)), const("causal", causal),
    const("q_starts", np.array([0], np.int64)), const("q_ends", np.array([HQ * D2], np.int64)),
    const("k_ends", np.array([(HQ + HKV) * D2], np.int64)),
    const("v_ends", np.array([(HQ + 2 * HKV) * D2], np.int64)), const("axis2", np.array([2], np.int64)),
    const("q_shape", np.array([1, S2, HQ, D2], np.int64)),
    const("kv_shape", np.array([1, S2, HKV, D2], np.int64)),
    const("kv_unsqueezed", np.array([1, HKV, 1, S2, D2], np.int64)),
    const("kv_expanded", np.array([1, HKV, HQ // HKV, S2, D2], np.int64)),
    const("kv_repeated", np.array([1, HQ, S2, D2], np.int64)),
    const("o2_shape", np.array([1, S2, HQ * D2], np.int64)), const("half", np.float32(0.5)),
]
nodes = [
    # o1: softmax(Q Kᵀ / sqrt(d) + padding) V
    helper.make_node("MatMul", ["q", "kt"], ["s1"], name="scores1"),
    helper.make_node("Div", ["s1", "root_d"], ["s1_scaled"], name="scale1"),
    helper.make_node("Add", ["s1_scaled", "padding"], ["s1_masked"], name="mask1"),
    helper.make_node("Softmax", ["s1_masked"], ["p1"], name="softmax1", axis=-1),
    helper.make_node("MatMul", ["p1", "v"], ["o1"], name="context1"),
    # o2: grouped-query attention out of one projection
    helper.make_node("Slice", ["qkv", "q_starts", "q_ends", "axis2"], ["q2s"], name="q2_slice"),
    helper.make_node("Slice", ["qkv", "q_ends", "k_ends", "axis2"], ["k2s"], name="k2_slice"),
    helper.make_node("Slice", ["qkv", "k_ends", "v_ends", "axis2"], ["v2s"], name="v2_slice"),
    helper.make_node("Reshape", ["q2s", "q_shape"], ["q2r"], name="q2_heads"),
    helper.make_node("Reshape", ["k2s", "kv_shape"], ["k2r"], name="k2_heads"),
    helper.make_node("Reshape", ["v2s", "kv_shape"], ["v2r"], name="v2_heads"),
    helper.make_node("Transpose", ["q2r"], ["q2"], name="q2_t", perm=[0, 2, 1, 3]),
    helper.make_node("Transpose", ["k2r"], ["k2"], name="k2_t", perm=[0, 2, 1, 3]),
    helper.make_node("Transpose", ["v2r"], ["v2"], name="v2_t", perm=[0, 2, 1, 3]),
    helper.make_node("Reshape", ["k2", "kv_unsqueezed"], ["k2u"], name="k2_unsqueeze"),
    helper.make_node("Expand", ["k2u", "kv_expanded"], ["k2e"], name="k2_expand"),
    helper.make_node("Reshape", ["k2e", "kv_repeated"], ["k2x"], name="k2_repeat"),
    helper.make_node("Reshape", ["v2", "kv_unsqueezed"], ["v2u"], name="v2_unsqueeze"),
    helper.make_node("Expand", ["v2u", "kv_expanded"], ["v2e"], name="v2_expand"),
    helper.make_node("Reshape", ["v2e", "kv_repeated"], ["v2x"], name="v2_repeat"),
    helper.make_node("Transpose", ["k2x"], ["k2t"], name="k2_kt", perm=[0, 1, 3, 2]),
    helper.make_node("MatMul", ["q2", "k2t"], ["s2"], name="scores2"),
    helper.make_node("Mul", ["s2", "scale2"], ["s2_scaled"], name="scale2_mul"),
    helper.make_node("Add", ["s2_scaled", "causal"], ["s2_masked"], name="mask2"),
    helper.make_node("Softmax", ["s2_masked"], ["p2"], name="softmax2", axis=-1),
    helper.make_node("MatMul", ["p2", "v2x"], ["o2h"], name="context2"),
    helper.make_node("Transpose", ["o2h"], ["o2t"], name="o2_t", perm=[0, 2, 1, 3]),
    helper.make_node("Reshape", ["o2t", "o2_shape"], ["o2"], name="o2_merge"),
    # o3: many heads
    helper.make_node("Transpose", ["k3"], ["k3t"], name="k3_t", perm=[0, 1, 3, 2]),
    helper.make_node("MatMul", ["q3", "k3t"], ["s3"], name="scores3"),
    helper.make_node("Mul", ["half", "s3"], ["s3_scaled"], name="scale3"),
    helper.make_node("Softmax", ["s3_scaled"], ["p3"], name="softmax3", axis=-1),
    helper.make_node("MatMul", ["p3", "v3"], ["o3"], name="context3"),
]
graph = helper.make_graph(
    nodes, "attention",
    [helper.make_tensor_value_info("q", TensorProto.FLOAT, [B, H, SQ, D]),
     helper.make_tensor_value_info("kt", TensorProto.FLOAT, [B, H, D, SKV]),
     helper.make_tensor_value_info("v", TensorProto.FLOAT, [B, H, SKV, DV]),
     helper.make_tensor_value_info("qkv", TensorProto.FLOAT, [1, S2, (HQ + 2 * HKV) * D2])] +
    [helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, H3, S3, D3])
     for name in ("q3", "k3", "v3")],
    [helper.make_tensor_value_info("o1", TensorProto.FLOAT, [B, H, SQ, DV]),
     helper.make_tensor_value_info("o2", TensorProto.FLOAT, [1, S2, HQ * D2]),
     helper.make_tensor_value_info("o3", TensorProto.FLOAT, [1, H3, S3, D3])],
    initializer=initializers)
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
onnx.checker.check_model(model)
onnx.save(model, f"{out}/attention.onnx")
for name, array in (("q", q), ("kt", kt), ("v", v), ("qkv", qkv), ("q3", q3),
                    ("k3", k3), ("v3", v3)):
    np.save(f"{out}/{name}.npy", array)


def softmax(x):
    e = np.exp(x - x.max(axis=-1, keepdims=True))
    return e / e.sum(axis=-1, keepdims=True)


f = np.float64
o1 = softmax(q.astype(f) @ kt.astype(f) / np.sqrt(D) + padding) @ v.astype(f)
np.save(f"{out}/reference_o1.npy", o1)
x = qkv.astype(f)
q2 = x[..., :HQ * D2].reshape(1, S2, HQ, D2).transpose(0, 2, 1, 3)
k2 = x[..., HQ * D2:(HQ + HKV) * D2].reshape(1, S2, HKV, D2).transpose(0, 2, 1, 3)
v2 = x[..., (HQ + HKV) * D2:].reshape(1, S2, HKV, D2).transpose(0, 2, 1, 3)
k2, v2 = np.repeat(k2, HQ // HKV, axis=1), np.repeat(v2, HQ // HKV, axis=1)
o2 = softmax(q2 @ k2.transpose(0, 1, 3, 2) * D2 ** -0.5 + causal) @ v2
np.save(f"{out}/reference_o2.npy", o2.transpose(0, 2, 1, 3).reshape(1, S2, HQ * D2))
o3 = softmax(0.5 * (q3.astype(f) @ k3.astype(f).transpose(0, 1, 3, 2))) @ v3.astype(f)
np.save(f"{out}/reference_o3.npy", o3)
