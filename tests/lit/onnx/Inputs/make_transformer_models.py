"""Builds the ONNX models that the transformer operator lit test reads.

Usage: make_transformer_models.py OUT_DIR

Every model holds one RMSNormalization or RotaryEmbedding node (opset 23) and
is written to OUT_DIR/NAME.onnx at test time, so that no binary model is kept in the repository.
The node's inputs are graph inputs; its outputs are declared without their shapes.
"""

import os
import sys

import onnx
from onnx import TensorProto as T
from onnx import helper as h

MODELS = {}


def model(name):
    """Registers a function returning a ModelProto as OUT_DIR/name.onnx."""
    def register(build):
        MODELS[name] = build
        return build
    return register


def tensor(name, elem_type, shape):
    return h.make_tensor_value_info(name, elem_type, shape)


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


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for name, build in MODELS.items():
        onnx.save(build(), os.path.join(out_dir, name + ".onnx"))


if __name__ == "__main__":
    main()
