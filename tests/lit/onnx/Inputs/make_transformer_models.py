"""Builds the ONNX models that the transformer operator lit test reads.

Usage: make_transformer_models.py OUT_DIR

Every model holds one RMSNormalization, RotaryEmbedding, Attention, Swish or SwiGLU node (opsets
23 to 28) and
is written to OUT_DIR/NAME.onnx at test time, so that no binary model is kept in the repository.
The node's inputs are graph inputs; its outputs are declared without their shapes.
"""

import sys

from onnx import TensorProto as T
from onnx import helper as h

from model_registry import Registry, tensor

MODELS = Registry()
model = MODELS.model


def single(op, inputs, outputs, opset, node_inputs=None, name="main", **attributes):
    """A model of one node named `name` reading `inputs` into `outputs` ((name, type, rank))."""
    names = node_inputs if node_inputs is not None else [i.name for i in inputs]
    node = h.make_node(op, names, [o[0] for o in outputs], name=name, **attributes)
    declared = [tensor(o[0], o[1], ["%s_%d" % (o[0], d) for d in range(o[2])])
                for o in outputs if o[0]]
    graph = h.make_graph([node], name, inputs, declared)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])


#===------------------------------------------------------------------------===#
# RMSNormalization
#===------------------------------------------------------------------------===#

@model("rms_norm")
def rms_norm():
    return single("RMSNormalization",
                  [tensor("x", T.FLOAT16, ["n", 3, 4]), tensor("scale", T.FLOAT16, [3, 4])],
                  [("y", T.FLOAT16, 3)], 23, axis=-2, epsilon=0.25)


@model("rms_norm_stash_int")
def rms_norm_stash_int():
    return single("RMSNormalization",
                  [tensor("x", T.FLOAT, [2, 4]), tensor("scale", T.FLOAT, [4])],
                  [("y", T.FLOAT, 2)], 23, name="rms", stash_type=T.INT64)


#===------------------------------------------------------------------------===#
# RotaryEmbedding
#===------------------------------------------------------------------------===#

@model("rotary_partial")
def rotary_partial():
    return single("RotaryEmbedding",
                  [tensor("x", T.FLOAT, [2, 4, 3, 8]), tensor("cos", T.FLOAT, [50, 2]),
                   tensor("sin", T.FLOAT, [50, 2]), tensor("pos", T.INT64, [2, 3])],
                  [("y", T.FLOAT, 4)], 23, rotary_embedding_dim=4)


@model("rotary_interleaved_3d")
def rotary_interleaved_3d():
    return single("RotaryEmbedding",
                  [tensor("x", T.FLOAT, [2, 3, 16]), tensor("cos", T.FLOAT, [2, 3, 4]),
                   tensor("sin", T.FLOAT, [2, 3, 4])],
                  [("y", T.FLOAT, 3)], 23, interleaved=1, num_heads=2)


@model("rotary_odd_dim")
def rotary_odd_dim():
    return single("RotaryEmbedding",
                  [tensor("x", T.FLOAT, [2, 4, 3, 8]), tensor("cos", T.FLOAT, [2, 3, 4]),
                   tensor("sin", T.FLOAT, [2, 3, 4])],
                  [("y", T.FLOAT, 4)], 23, name="rope", rotary_embedding_dim=3)


#===------------------------------------------------------------------------===#
# Attention
#===------------------------------------------------------------------------===#

ATTENTION_OUTPUTS = [("y", T.FLOAT, 4)]


@model("attention_gqa_3d_causal")
def attention_gqa_3d_causal():
    """3D inputs with 4 query and 2 key/value heads of size 8, causal."""
    return single("Attention",
                  [tensor("q", T.FLOAT, ["b", 3, 32]), tensor("k", T.FLOAT, ["b", 3, 16]),
                   tensor("v", T.FLOAT, ["b", 3, 16])],
                  [("y", T.FLOAT, 3)], 23, q_num_heads=4, kv_num_heads=2, is_causal=1)


@model("attention_past_bool_mask")
def attention_past_bool_mask():
    """A key/value cache of 2 positions, a boolean mask shorter than the 5 keys, softcap,
    the present outputs and qk_matmul_output mode 2."""
    return single("Attention",
                  [tensor("q", T.FLOAT, [1, 2, 2, 4]), tensor("k", T.FLOAT, [1, 2, 3, 4]),
                   tensor("v", T.FLOAT, [1, 2, 3, 6]), tensor("mask", T.BOOL, [2, 4]),
                   tensor("past_k", T.FLOAT, [1, 2, 2, 4]),
                   tensor("past_v", T.FLOAT, [1, 2, 2, 6])],
                  [("y", T.FLOAT, 4), ("present_k", T.FLOAT, 4), ("present_v", T.FLOAT, 4),
                   ("qk", T.FLOAT, 4)],
                  23, scale=0.25, softcap=2.0, qk_matmul_output_mode=2)


@model("attention_nonpad_causal")
def attention_nonpad_causal():
    """An external cache: per-batch valid key counts shift the causal band; float16 softmax."""
    return single("Attention",
                  [tensor("q", T.FLOAT, [2, 1, 2, 4]), tensor("k", T.FLOAT, [2, 1, 4, 4]),
                   tensor("v", T.FLOAT, [2, 1, 4, 4]), tensor("lengths", T.INT64, [2])],
                  ATTENTION_OUTPUTS, 24, node_inputs=["q", "k", "v", "", "", "", "lengths"],
                  is_causal=1, softmax_precision=T.FLOAT16)


@model("attention_window")
def attention_window():
    """A sliding window two keys back and one ahead, with a float mask."""
    return single("Attention",
                  [tensor("q", T.FLOAT, [1, 1, 3, 4]), tensor("k", T.FLOAT, [1, 1, 3, 4]),
                   tensor("v", T.FLOAT, [1, 1, 3, 4]), tensor("mask", T.FLOAT, [3, 3])],
                  ATTENTION_OUTPUTS, 25, left_window_size=2, right_window_size=1)


@model("attention_int_mask")
def attention_int_mask():
    return single("Attention",
                  [tensor("q", T.FLOAT, [1, 1, 2, 4]), tensor("k", T.FLOAT, [1, 1, 2, 4]),
                   tensor("v", T.FLOAT, [1, 1, 2, 4]), tensor("mask", T.INT32, [2, 2])],
                  ATTENTION_OUTPUTS, 23, name="attn")


@model("attention_4d_heads_opset25")
def attention_4d_heads_opset25():
    return single("Attention",
                  [tensor("q", T.FLOAT, [1, 2, 2, 4]), tensor("k", T.FLOAT, [1, 2, 2, 4]),
                   tensor("v", T.FLOAT, [1, 2, 2, 4])],
                  ATTENTION_OUTPUTS, 25, name="attn", q_num_heads=2, kv_num_heads=2)


@model("attention_uneven_heads")
def attention_uneven_heads():
    return single("Attention",
                  [tensor("q", T.FLOAT, [1, 3, 2, 4]), tensor("k", T.FLOAT, [1, 2, 2, 4]),
                   tensor("v", T.FLOAT, [1, 2, 2, 4])],
                  ATTENTION_OUTPUTS, 23, name="attn")


#===------------------------------------------------------------------------===#
# Swish and SwiGLU
#===------------------------------------------------------------------------===#

@model("swish_alpha")
def swish_alpha():
    return single("Swish", [tensor("x", T.FLOAT, [2, 3])], [("y", T.FLOAT, 2)], 24, alpha=1.5)


@model("swiglu_f16")
def swiglu_f16():
    return single("SwiGLU", [tensor("a", T.FLOAT16, [2, 4]), tensor("b", T.FLOAT16, [2, 4])],
                  [("y", T.FLOAT16, 2)], 28)


@model("swiglu_broadcast")
def swiglu_broadcast():
    return single("SwiGLU", [tensor("a", T.FLOAT, [2, 4]), tensor("b", T.FLOAT, [4])],
                  [("y", T.FLOAT, 2)], 28, name="glu")


if __name__ == "__main__":
    MODELS.write(sys.argv[1])
