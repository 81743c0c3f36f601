"""Builds the ONNX models that the importer's indexing lit tests read.

Usage: make_indexing_models.py OUT_DIR

Every model holds one node of an indexing, selection or rearrangement operator, built with
onnx.helper and written to OUT_DIR/NAME.onnx. Models are generated at test time so that no binary
model is kept in the repository.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

MODELS = {}


def tensor(name, elem_type, shape):
    return h.make_tensor_value_info(name, elem_type, shape)


def unshaped(name, elem_type):
    """An output whose shape ONNX shape inference fills in (see `single`)."""
    return tensor(name, elem_type, None)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def single(name, op, inputs, outputs, opset, initializers=(), output_types=None, **attributes):
    """Registers OUT_DIR/name.onnx: one `op` node named after the model.

    `inputs` maps graph input names to (elem_type, shape) or, for constants, to numpy arrays;
    `outputs` lists (name, elem_type)."""
    graph_inputs, constants, names = [], list(initializers), []
    for input_name, spec in inputs:
        names.append(input_name)
        if input_name == "":
            continue
        if isinstance(spec, np.ndarray):
            constants.append(const(input_name, spec))
        else:
            graph_inputs.append(tensor(input_name, spec[0], spec[1]))
    node = h.make_node(op, names, [o[0] for o in outputs], name=name, **attributes)
    graph = h.make_graph([node], name, graph_inputs,
                         [unshaped(*o) for o in outputs], constants)
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])
    model = onnx.shape_inference.infer_shapes(model)
    for output in model.graph.output:
        # The checker wants every output shaped; where inference could not tell, any rank does.
        output.type.tensor_type.shape.SetInParent()
    MODELS[name] = model


F, I64 = T.FLOAT, T.INT64

#===------------------------------------------------------------------------===#
# Arg reductions, cumulative sums, top-k and hardmax
#===------------------------------------------------------------------------===#

single("argmax_last", "ArgMax", [("x", (F, [3, 4]))], [("y", I64)], 13,
       axis=-1, select_last_index=1)
single("argmin_no_keepdims", "ArgMin", [("x", (F, ["n", 5, 6]))], [("y", I64)], 11,
       axis=1, keepdims=0)
single("cumsum", "CumSum", [("x", (F, [2, 5])), ("axis", np.array(-1, np.int32))],
       [("y", F)], 14, exclusive=1, reverse=1)
single("cumsum_dynamic_axis", "CumSum", [("x", (F, [2, 5])), ("axis", (T.INT32, []))],
       [("y", F)], 14)
single("topk_attribute", "TopK", [("x", (F, [3, 10]))], [("v", F), ("i", I64)], 9, k=4)
single("topk_smallest", "TopK", [("x", (F, [3, 10])), ("k", np.array([2], np.int64))],
       [("v", F), ("i", I64)], 11, axis=0, largest=0, sorted=0)
single("topk_dynamic_k", "TopK", [("x", (F, [3, 10])), ("k", (I64, [1]))],
       [("v", F), ("i", I64)], 11)
single("hardmax", "Hardmax", [("x", (F, [2, 3, 4]))], [("y", F)], 13, axis=1)
single("hardmax_coerced", "Hardmax", [("x", (F, [2, 3, 4]))], [("y", F)], 11)

#===------------------------------------------------------------------------===#
# Gathers, scatters, compress and sequence reversal
#===------------------------------------------------------------------------===#

single("gather_elements", "GatherElements", [("x", (F, [3, 4])), ("i", (T.INT32, [3, 2]))],
       [("y", F)], 13, axis=-1)
single("gather_nd_batch", "GatherND", [("x", (F, [2, 3, 4])), ("i", (I64, [2, 1]))],
       [("y", F)], 12, batch_dims=1)
single("scatter_elements_add", "ScatterElements",
       [("x", (F, [3, 3])), ("i", (I64, [2, 3])), ("u", (F, [2, 3]))], [("y", F)], 16,
       axis=0, reduction="add")
single("scatter_elements_max16", "ScatterElements",
       [("x", (F, [3, 3])), ("i", (I64, [2, 3])), ("u", (F, [2, 3]))], [("y", F)], 16,
       reduction="max")
single("scatter_deprecated", "Scatter",
       [("x", (F, [3, 3])), ("i", (I64, [1, 2])), ("u", (F, [1, 2]))], [("y", F)], 10,
       axis=1)
single("scatter_nd_mul", "ScatterND",
       [("x", (F, [4, 4])), ("i", (I64, [2, 1])), ("u", (F, [2, 4]))], [("y", F)], 16,
       reduction="mul")
single("compress_axis", "Compress",
       [("x", (F, ["n", 3])), ("c", np.array([True, False, True]))], [("y", F)], 11, axis=-1)
single("compress_flat", "Compress",
       [("x", (F, [2, 3])), ("c", np.array([False, True, False, True]))], [("y", F)], 11)
single("reverse_sequence", "ReverseSequence",
       [("x", (F, [3, 2])), ("lens", np.array([2, 3], np.int64))], [("y", F)], 10)
single("reverse_sequence_run_time", "ReverseSequence",
       [("x", (F, [2, 4, 3])), ("lens", (I64, [2]))], [("y", F)], 10, batch_axis=0, time_axis=1)

#===------------------------------------------------------------------------===#
# One-hot, triangles and constant generators
#===------------------------------------------------------------------------===#

single("one_hot", "OneHot",
       [("i", (I64, [2, 3])), ("depth", np.array(5.0, np.float32)),
        ("values", np.array([0, 1], np.int32))], [("y", T.INT32)], 11, axis=1)
single("trilu_lower", "Trilu", [("x", (F, ["b", 2, 3])), ("k", np.array(1, np.int64))],
       [("y", F)], 14, upper=0)
single("trilu_run_time_k", "Trilu", [("x", (F, [2, 3])), ("k", (I64, []))], [("y", F)], 14)
single("range_int", "Range",
       [("start", np.array(10, np.int32)), ("limit", np.array(4, np.int32)),
        ("delta", np.array(-3, np.int32))], [("y", T.INT32)], 11)
single("range_float", "Range",
       [("start", np.array(1.0, np.float32)), ("limit", np.array(2.0, np.float32)),
        ("delta", np.array(0.25, np.float32))], [("y", F)], 11)
single("eye_like", "EyeLike", [("x", (F, [2, 3]))], [("y", I64)], 9, k=1, dtype=I64)
single("non_zero", "NonZero", [("x", np.array([[0, 2], [3, 0]], np.int32))],
       [("y", I64)], 13)
single("non_zero_dynamic", "NonZero", [("x", (T.INT32, [2, 2]))], [("y", I64)], 13)


def range_from_shape():
    """Range(0, x.shape[1], 1), as PyTorch exports torch.arange(x.size(1))."""
    nodes = [h.make_node("Shape", ["x"], ["shape"]),
             h.make_node("Gather", ["shape", "one"], ["limit"], axis=0),
             h.make_node("Range", ["zero", "limit", "one"], ["y"], name="range_from_shape")]
    graph = h.make_graph(nodes, "range_from_shape", [tensor("x", F, [2, 6])],
                         [tensor("y", I64, [6])],
                         [const("zero", np.array(0, np.int64)),
                          const("one", np.array(1, np.int64))])
    MODELS["range_from_shape"] = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])


range_from_shape()

#===------------------------------------------------------------------------===#
# Rearrangements
#===------------------------------------------------------------------------===#

single("tile", "Tile", [("x", (F, ["n", 3])), ("r", np.array([1, 2], np.int64))],
       [("y", F)], 13)
single("depth_to_space_crd", "DepthToSpace", [("x", (F, [1, 8, 2, 3]))], [("y", F)], 13,
       blocksize=2, mode="CRD")
single("depth_to_space_dcr", "DepthToSpace", [("x", (F, ["n", 8, 2, 3]))], [("y", F)], 13,
       blocksize=2)
single("space_to_depth", "SpaceToDepth", [("x", (F, [1, 2, 4, 6]))], [("y", F)], 13,
       blocksize=2)

EINSUMS = {
    "einsum_batch_matmul": ("bij,bjk->bik", [[2, 3, 4], [2, 4, 5]]),
    "einsum_matmul": ("ij,jk->ik", [[3, 4], [4, 5]]),
    "einsum_attention": ("bhid,bhjd->bhij", [["b", 2, 7, 8], ["b", 2, 9, 8]]),
    "einsum_transpose": ("ij->ji", [[3, 4]]),
    "einsum_row_sum": ("ij->i", [[3, 4]]),
    "einsum_inner": ("i,i", [[5], [5]]),
    "einsum_outer_merge": ("bij,jk->bki", [[2, 3, 4], [4, 5]]),
    "einsum_batch_diagonal": ("...ii->...i", [[2, 3, 3]]),
    "einsum_chain": ("ij,jk,kl->il", [[2, 3], [3, 4], [4, 5]]),
}
for model_name, (equation, shapes) in EINSUMS.items():
    single(model_name, "Einsum",
           [("x%d" % i, (F, shape)) for i, shape in enumerate(shapes)], [("y", F)], 12,
           equation=equation)


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for name, model in MODELS.items():
        onnx.save(model, os.path.join(out_dir, name + ".onnx"))


if __name__ == "__main__":
    main()
