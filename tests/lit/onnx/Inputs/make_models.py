"""Builds the small ONNX models that the importer's lit tests read.

Usage: make_models.py OUT_DIR

Every model is built with onnx.helper and written to OUT_DIR/NAME.onnx. Models are generated at
test time so that no binary model is kept in the repository.
"""

import os
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

MODELS = {}


def model(name):
    """Registers a function returning a ModelProto as OUT_DIR/name.onnx."""
    def register(build):
        MODELS[name] = build
        return build
    return register


def tensor(name, elem_type, shape):
    return h.make_tensor_value_info(name, elem_type, shape)


def const(name, array):
    return numpy_helper.from_array(np.asarray(array), name)


def make(nodes, inputs, outputs, initializers=(), opset=13, name="main"):
    graph = h.make_graph(nodes, name, inputs, outputs, list(initializers))
    return h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])


def unknown(name, elem_type, rank):
    """An output whose dimensions the test does not state (shape inference fills them in)."""
    return tensor(name, elem_type, ["%s_%d" % (name, d) for d in range(rank)])


#===------------------------------------------------------------------------===#
# Signature and constants
#===------------------------------------------------------------------------===#

@model("add_relu")
def add_relu():
    return make([h.make_node("Add", ["x", "bias"], ["sum"], name="add0"),
                 h.make_node("Relu", ["sum"], ["y"])],
                [tensor("x", T.FLOAT, ["batch", 3]), tensor("unused_flag", T.BOOL, [])],
                [unknown("y", T.FLOAT, 2)],
                [const("bias", np.array([1, 2, 3], np.float32))], name="add_relu")


@model("unsupported")
def unsupported():
    # Operators the graph dialect cannot express: sampling and strings.
    return make([h.make_node("Bernoulli", ["x"], ["sample"], name="coin"),
                 h.make_node("Relu", ["sample"], ["r"]),
                 h.make_node("StringNormalizer", ["words"], ["y"], case_change_action="LOWER")],
                [tensor("x", T.FLOAT, [2, 8]), tensor("words", T.STRING, [3])],
                [unknown("r", T.FLOAT, 2), unknown("y", T.STRING, 1)], opset=15)


#===------------------------------------------------------------------------===#
# Elementwise operators
#===------------------------------------------------------------------------===#

def f32(name, shape):
    return tensor(name, T.FLOAT, shape)


@model("arithmetic")
def arithmetic():
    return make([h.make_node("Sub", ["a", "b"], ["sub"]),
                 h.make_node("Div", ["sub", "b"], ["div"]),
                 h.make_node("Pow", ["div", "two"], ["pow"]),
                 h.make_node("Max", ["pow", "a", "b"], ["max"]),
                 h.make_node("Min", ["max"], ["min"]),
                 h.make_node("Mean", ["min", "a"], ["y"])],
                [f32("a", [2, 3]), f32("b", [3])], [unknown("y", T.FLOAT, 2)],
                [const("two", np.array(2, np.int64))], opset=15)


@model("unary")
def unary():
    ops = ["Neg", "Abs", "Exp", "Log", "Sqrt", "Reciprocal", "Tanh", "Sigmoid", "Erf", "Floor",
           "Ceil", "Softplus"]
    nodes, last = [], "x"
    for i, op in enumerate(ops):
        out = "y" if i == len(ops) - 1 else "t%d" % i
        nodes.append(h.make_node(op, [last], [out]))
        last = out
    return make(nodes, [f32("x", ["n"])], [unknown("y", T.FLOAT, 1)])


@model("activations")
def activations():
    return make([h.make_node("LeakyRelu", ["x"], ["leaky"]),
                 h.make_node("HardSigmoid", ["leaky"], ["hsig"], alpha=0.25),
                 h.make_node("HardSwish", ["hsig"], ["hswish"]),
                 h.make_node("Clip", ["hswish", "lo", ""], ["clip"]),
                 h.make_node("PRelu", ["clip", "slope"], ["y"])],
                [f32("x", [2, 4])], [unknown("y", T.FLOAT, 2)],
                [const("lo", np.array(-1, np.float32)),
                 const("slope", np.full([4], 0.5, np.float32))], opset=14)


@model("clip_opset6")
def clip_opset6():
    return make([h.make_node("Clip", ["x"], ["y"], max=6.0)], [f32("x", [3])],
                [unknown("y", T.FLOAT, 1)], opset=7)


@model("gelu")
def gelu():
    return make([h.make_node("Gelu", ["x"], ["erf_form"]),
                 h.make_node("Gelu", ["erf_form"], ["y"], approximate="tanh")],
                [f32("x", [4])], [unknown("y", T.FLOAT, 1)], opset=20)


@model("logic")
def logic():
    return make([h.make_node("Less", ["a", "b"], ["lt"]),
                 h.make_node("GreaterOrEqual", ["a", "b"], ["ge"]),
                 h.make_node("Equal", ["a", "b"], ["eq"]),
                 h.make_node("Not", ["eq"], ["ne"]),
                 h.make_node("And", ["lt", "ne"], ["and"]),
                 h.make_node("Or", ["and", "ge"], ["or"]),
                 h.make_node("Where", ["or", "a", "b"], ["where"]),
                 h.make_node("Cast", ["where"], ["half"], to=T.FLOAT16),
                 h.make_node("Identity", ["half"], ["y"])],
                [f32("a", [2, 3]), f32("b", [1, 3])], [unknown("y", T.FLOAT16, 2)])


@model("more_elementwise")
def more_elementwise():
    return make([h.make_node("Mod", ["i", "j"], ["python_mod"]),
                 h.make_node("Mod", ["i", "j"], ["c_mod"], fmod=1),
                 h.make_node("Elu", ["x"], ["elu"], alpha=2.0),
                 h.make_node("Selu", ["elu"], ["selu"]),
                 h.make_node("ThresholdedRelu", ["selu"], ["thr"]),
                 h.make_node("Softsign", ["thr"], ["soft"]),
                 h.make_node("Sum", ["soft", "x", "x"], ["sum"]),
                 h.make_node("Dropout", ["sum", "ratio", "training"], ["dropped"]),
                 h.make_node("CastLike", ["dropped", "j"], ["y"])],
                [tensor("i", T.INT32, [4]), tensor("j", T.INT32, [4]), f32("x", [4])],
                [unknown("python_mod", T.INT32, 1), unknown("c_mod", T.INT32, 1),
                 unknown("y", T.INT32, 1)],
                [const("ratio", np.array(0.5, np.float32)), const("training", np.array(False))],
                opset=15)


#===------------------------------------------------------------------------===#
# Data movement
#===------------------------------------------------------------------------===#

@model("reshape")
def reshape():
    return make([h.make_node("Reshape", ["x", "shape"], ["r"]),
                 h.make_node("Constant", [], ["flat_shape"],
                             value=numpy_helper.from_array(np.array([-1], np.int64))),
                 h.make_node("Reshape", ["r", "flat_shape"], ["flat"]),
                 h.make_node("Reshape", ["empty", "zero_shape"], ["kept_zero"], allowzero=1),
                 h.make_node("Flatten", ["x"], ["f1"]),
                 h.make_node("Flatten", ["x"], ["f0"], axis=-3)],
                [f32("x", ["batch", 3, 4])],
                [unknown("r", T.FLOAT, 3), unknown("flat", T.FLOAT, 1),
                 unknown("kept_zero", T.FLOAT, 2), unknown("f1", T.FLOAT, 2),
                 unknown("f0", T.FLOAT, 2)],
                [const("shape", np.array([0, 2, -1], np.int64)),
                 const("empty", np.zeros([0, 3], np.float32)),
                 const("zero_shape", np.array([3, 0], np.int64))], opset=14)


@model("reshape_ambiguous")
def reshape_ambiguous():
    return make([h.make_node("Reshape", ["x", "shape"], ["y"], name="to_matrix")],
                [f32("x", ["n", "m", 4])], [unknown("y", T.FLOAT, 2)],
                [const("shape", np.array([-1, 0], np.int64))])


@model("slice")
def slice_model():
    return make([h.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["s"]),
                 h.make_node("Slice", ["x", "starts2", "ends2"], ["dyn"])],
                [f32("x", ["n", 10, 8])], [unknown("s", T.FLOAT, 3), unknown("dyn", T.FLOAT, 3)],
                [const("starts", np.array([-3, 100], np.int64)),
                 const("ends", np.array([1000, -100], np.int64)),
                 const("axes", np.array([2, -2], np.int64)),
                 const("steps", np.array([2, -3], np.int64)),
                 const("starts2", np.array([1, 2], np.int64)),
                 const("ends2", np.array([9223372036854775807, 5], np.int64))])


@model("slice_opset9")
def slice_opset9():
    return make([h.make_node("Slice", ["x"], ["y"], starts=[1], ends=[-1], axes=[1])],
                [f32("x", [2, 6])], [unknown("y", T.FLOAT, 2)], opset=9)


@model("movement")
def movement():
    return make([h.make_node("Transpose", ["x"], ["t"]),
                 h.make_node("Transpose", ["x"], ["t2"], perm=[1, 0, 2]),
                 h.make_node("Concat", ["t2", "t2"], ["cat"], axis=-1),
                 h.make_node("Gather", ["cat", "idx"], ["g"], axis=-2),
                 h.make_node("Expand", ["x", "shape"], ["e"]),
                 h.make_node("Unsqueeze", ["x", "uaxes"], ["u"]),
                 h.make_node("Squeeze", ["u", "saxes"], ["sq"]),
                 h.make_node("Split", ["x"], ["p0", "p1"], axis=2),
                 h.make_node("Split", ["x", "sizes"], ["q0", "q1"], axis=-1)],
                [f32("x", [2, 3, 4])],
                [unknown(n, T.FLOAT, r) for n, r in
                 [("t", 3), ("g", 4), ("e", 4), ("sq", 4), ("p0", 3), ("p1", 3), ("q0", 3),
                  ("q1", 3)]],
                [const("idx", np.array([[0, -1]], np.int64)),
                 const("shape", np.array([5, 1, 1, 1], np.int64)),
                 const("uaxes", np.array([-1, 0], np.int64)),
                 const("saxes", np.array([4], np.int64)),
                 const("sizes", np.array([1, 3], np.int64))])


@model("constants")
def constants():
    return make([h.make_node("Constant", [], ["ints"], value_ints=[3, -1]),
                 h.make_node("Constant", [], ["scale"], value_float=0.25),
                 h.make_node("ConstantOfShape", ["ints_pos"], ["zeros"]),
                 h.make_node("Size", ["x"], ["size"]),
                 h.make_node("Mul", ["x", "scale"], ["scaled"]),
                 h.make_node("Reshape", ["scaled", "ints"], ["y"]),
                 h.make_node("Split", ["z"], ["a", "b", "c"], axis=1, num_outputs=3),
                 h.make_node("Gather", ["x", "idx32"], ["g"], axis=1)],
                [f32("x", [2, 6]), f32("z", [2, 7])],
                [unknown("y", T.FLOAT, 2), unknown("zeros", T.FLOAT, 2), tensor("size", T.INT64, []),
                 unknown("a", T.FLOAT, 2), unknown("b", T.FLOAT, 2), unknown("c", T.FLOAT, 2),
                 unknown("g", T.FLOAT, 2)],
                [const("ints_pos", np.array([2, 1], np.int64)),
                 const("idx32", np.array([5, -6], np.int32))], opset=18)


@model("squeeze_opset11")
def squeeze_opset11():
    return make([h.make_node("Squeeze", ["x"], ["s"]),
                 h.make_node("Unsqueeze", ["s"], ["y"], axes=[1])],
                [f32("x", [1, 3, 1])], [unknown("y", T.FLOAT, 2)], opset=11)


@model("pad")
def pad():
    return make([h.make_node("Pad", ["x", "pads"], ["reflect"], mode="reflect"),
                 h.make_node("Pad", ["x", "pads", "value"], ["constant"])],
                [f32("x", [2, 3])], [unknown("reflect", T.FLOAT, 2), unknown("constant", T.FLOAT, 2)],
                [const("pads", np.array([0, 1, 1, 2], np.int64)),
                 const("value", np.array(1.5, np.float32))])


@model("pad_opset2")
def pad_opset2():
    return make([h.make_node("Pad", ["x"], ["y"], pads=[1, 0, 0, -1], value=2.0)],
                [f32("x", [2, 3])], [unknown("y", T.FLOAT, 2)], opset=7)


@model("shape_fold")
def shape_fold():
    return make([h.make_node("Shape", ["x"], ["s"]),
                 h.make_node("Shape", ["x"], ["tail"], start=-2),
                 h.make_node("ConstantOfShape", ["tail"], ["zeros"],
                             value=numpy_helper.from_array(np.array([7], np.int32))),
                 h.make_node("Reshape", ["x", "s"], ["y"])],
                [f32("x", [2, 3, 4])],
                [unknown("y", T.FLOAT, 3), unknown("zeros", T.INT32, 2)], opset=15)


@model("shape_arithmetic")
def shape_arithmetic():
    # x.view(x.size(0), -1) and x.view(x.size(0) * 3, x.size(2) // 2, -1) as PyTorch exports them.
    return make([h.make_node("Shape", ["x"], ["shape"]),
                 h.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
                 h.make_node("Unsqueeze", ["batch", "axes0"], ["batch1"]),
                 h.make_node("Concat", ["batch1", "minus_one"], ["target"], axis=0),
                 h.make_node("Reshape", ["x", "target"], ["flat"]),
                 h.make_node("Mul", ["batch", "three"], ["rows"]),
                 h.make_node("Slice", ["shape", "two", "three_1d"], ["depth"]),
                 h.make_node("Div", ["depth", "two"], ["half"]),
                 h.make_node("Unsqueeze", ["rows", "axes0"], ["rows1"]),
                 h.make_node("Concat", ["rows1", "half", "minus_one"], ["target2"], axis=0),
                 h.make_node("Reshape", ["x", "target2"], ["y"])],
                [f32("x", [2, 3, 4])], [unknown("flat", T.FLOAT, 2), unknown("y", T.FLOAT, 3)],
                [const("zero", np.array(0, np.int64)), const("axes0", np.array([0], np.int64)),
                 const("minus_one", np.array([-1], np.int64)),
                 const("three", np.array(3, np.int64)), const("two", np.array([2], np.int64)),
                 const("three_1d", np.array([3], np.int64))])


@model("expand_where_shape")
def expand_where_shape():
    # x.expand(2, -1, -1) as the TorchScript exporter writes it: the -1s are replaced by ones
    # through Where(Equal(shape, -1 * ones), ones, shape), all of it computed from constants.
    ones = h.make_tensor("ones_value", T.INT64, [1], [1])
    return make([h.make_node("ConstantOfShape", ["rank"], ["ones"], value=ones),
                 h.make_node("Mul", ["ones", "minus_one"], ["minus_ones"]),
                 h.make_node("Equal", ["requested", "minus_ones"], ["keep"]),
                 h.make_node("Where", ["keep", "ones", "requested"], ["target"]),
                 h.make_node("Expand", ["x", "target"], ["y"])],
                [f32("x", [1, 3, 4])], [unknown("y", T.FLOAT, 3)],
                [const("rank", np.array([3], np.int64)),
                 const("minus_one", np.array(-1, np.int64)),
                 const("requested", np.array([2, -1, -1], np.int64))])


@model("pad_pairs_reversed")
def pad_pairs_reversed():
    # F.pad(x, (0, 1, 2, 0)) as the TorchScript exporter writes it for computed amounts: the
    # [before, after] pairs of the last dimension first (PyTorch's order) reshaped to [-1, 2],
    # reversed by a Slice with step -1, transposed, flattened and cast: ONNX's order
    # [0, 0, 2, 0, 0, 0, 0, 1] once evaluated at import.
    return make([h.make_node("Concat", ["amounts", "zeros"], ["flat"], axis=0),
                 h.make_node("Reshape", ["flat", "pairs_shape"], ["pairs"]),
                 h.make_node("Slice", ["pairs", "start", "end", "axis0", "step"], ["reversed"]),
                 h.make_node("Transpose", ["reversed"], ["columns"], perm=[1, 0]),
                 h.make_node("Reshape", ["columns", "flat_shape"], ["onnx_pads"]),
                 h.make_node("Cast", ["onnx_pads"], ["pads"], to=T.INT64),
                 h.make_node("Pad", ["x", "pads"], ["y"])],
                [f32("x", [1, 2, 3, 4])], [unknown("y", T.FLOAT, 4)],
                [const("amounts", np.array([0, 1, 2, 0], np.int64)),
                 const("zeros", np.array([0, 0, 0, 0], np.int64)),
                 const("pairs_shape", np.array([-1, 2], np.int64)),
                 const("start", np.array([-1], np.int64)),
                 const("end", np.array([-(2**63)], np.int64)),
                 const("axis0", np.array([0], np.int64)),
                 const("step", np.array([-1], np.int64)),
                 const("flat_shape", np.array([-1], np.int64))])


@model("expand_grouped_query_shape")
def expand_grouped_query_shape():
    # ONNX's Attention expansion repeats grouped key heads to the query's head count: the repeat
    # is Where(Not(Equal(q_heads, kv_heads)) And Equal(Mod(q_heads, kv_heads), 0),
    # Div(q_heads, kv_heads), 1), computed from the Shapes of static inputs. The Abs and the Or
    # with a Xor of the condition with itself change nothing; they are there to be evaluated.
    return make([h.make_node("Shape", ["q"], ["q_heads"], start=1, end=2),
                 h.make_node("Shape", ["k"], ["kv_heads"], start=1, end=2),
                 h.make_node("Shape", ["k"], ["batch"], start=0, end=1),
                 h.make_node("Shape", ["k"], ["rows"], start=2),
                 h.make_node("Equal", ["q_heads", "kv_heads"], ["same"]),
                 h.make_node("Not", ["same"], ["grouped"]),
                 h.make_node("Mod", ["q_heads", "kv_heads"], ["remainder"]),
                 h.make_node("Equal", ["remainder", "zero"], ["divides"]),
                 h.make_node("And", ["grouped", "divides"], ["condition0"]),
                 h.make_node("Xor", ["condition0", "condition0"], ["never"]),
                 h.make_node("Or", ["condition0", "never"], ["condition"]),
                 h.make_node("Div", ["q_heads", "kv_heads"], ["ratio"]),
                 h.make_node("Abs", ["ratio"], ["ratio_abs"]),
                 h.make_node("Where", ["condition", "ratio_abs", "one"], ["repeat"]),
                 h.make_node("Unsqueeze", ["k", "two"], ["k5"]),
                 h.make_node("Concat", ["batch", "kv_heads", "repeat", "rows"], ["target"],
                             axis=0),
                 h.make_node("Expand", ["k5", "target"], ["y"])],
                [f32("q", [1, 4, 3, 8]), f32("k", [1, 2, 3, 8])], [unknown("y", T.FLOAT, 5)],
                [const("zero", np.array([0], np.int64)), const("one", np.array([1], np.int64)),
                 const("two", np.array([2], np.int64))], opset=15)


@model("flatten_dynamic_batch")
def flatten_dynamic_batch():
    # x.view(x.size(0), -1) with a dynamic batch, and a target that needs the batch's value.
    return make([h.make_node("Shape", ["x"], ["shape"]),
                 h.make_node("Gather", ["shape", "zero"], ["batch"], axis=0),
                 h.make_node("Unsqueeze", ["batch", "axes0"], ["batch1"]),
                 h.make_node("Concat", ["batch1", "minus_one"], ["target"], axis=0),
                 h.make_node("Reshape", ["x", "target"], ["y"])],
                [f32("x", ["n", 3, 4])], [unknown("y", T.FLOAT, 2)],
                [const("zero", np.array(0, np.int64)), const("axes0", np.array([0], np.int64)),
                 const("minus_one", np.array([-1], np.int64))])


@model("expand_dynamic_batch")
def expand_dynamic_batch():
    return make([h.make_node("Shape", ["x"], ["shape"]),
                 h.make_node("Expand", ["bias", "shape"], ["y"], name="broadcast_bias")],
                [f32("x", ["n", 3])], [unknown("y", T.FLOAT, 2)],
                [const("bias", np.ones([3], np.float32))])


@model("shape_dynamic")
def shape_dynamic():
    return make([h.make_node("Shape", ["x"], ["y"], name="shape_of_x")],
                [f32("x", ["n", 3])], [unknown("y", T.INT64, 1)], opset=15)


#===------------------------------------------------------------------------===#
# Linear algebra, convolution, pooling, normalization, reductions
#===------------------------------------------------------------------------===#

@model("linear")
def linear():
    return make([h.make_node("MatMul", ["x", "w"], ["mm"]),
                 h.make_node("Gemm", ["mm", "w2"], ["plain"]),
                 h.make_node("Gemm", ["plain", "w3", "c"], ["y"], transB=1, alpha=0.5)],
                [f32("x", ["batch", 8])], [unknown("y", T.FLOAT, 2)],
                [const("w", np.ones([8, 4], np.float32)),
                 const("w2", np.ones([4, 4], np.float32)),
                 const("w3", np.ones([2, 4], np.float32)),
                 const("c", np.zeros([2], np.float32))])


@model("conv")
def conv():
    return make([h.make_node("Conv", ["x", "w", "b"], ["upper"], auto_pad="SAME_UPPER",
                             strides=[2, 2]),
                 h.make_node("Conv", ["x", "w"], ["lower"], auto_pad="SAME_LOWER",
                             strides=[2, 2]),
                 h.make_node("Conv", ["x", "wg"], ["grouped"], group=3, pads=[1, 0, 1, 2],
                             dilations=[2, 1])],
                [f32("x", [1, 3, 8, 8])],
                [unknown("upper", T.FLOAT, 4), unknown("lower", T.FLOAT, 4),
                 unknown("grouped", T.FLOAT, 4)],
                [const("w", np.ones([6, 3, 3, 3], np.float32)),
                 const("b", np.zeros([6], np.float32)),
                 const("wg", np.ones([6, 1, 3, 3], np.float32))])


@model("conv_dynamic_same")
def conv_dynamic_same():
    return make([h.make_node("Conv", ["x", "w"], ["y"], auto_pad="SAME_UPPER", name="c0")],
                [f32("x", [1, 3, "h", "w"])], [unknown("y", T.FLOAT, 4)],
                [const("w", np.ones([6, 3, 3, 3], np.float32))])


@model("pool")
def pool():
    return make([h.make_node("MaxPool", ["x"], ["max"], kernel_shape=[3, 3], strides=[2, 2],
                             ceil_mode=1, dilations=[1, 2]),
                 h.make_node("AveragePool", ["x"], ["avg"], kernel_shape=[2, 2],
                             pads=[1, 1, 1, 1]),
                 h.make_node("AveragePool", ["x"], ["avg_pad"], kernel_shape=[2, 2],
                             auto_pad="VALID", count_include_pad=1),
                 h.make_node("GlobalAveragePool", ["x"], ["gap"]),
                 h.make_node("GlobalMaxPool", ["x"], ["gmp"])],
                [f32("x", ["n", 4, 9, 9])],
                [unknown(n, T.FLOAT, 4) for n in ["max", "avg", "avg_pad", "gap", "gmp"]],
                opset=12)


@model("norm")
def norm():
    c = np.ones([4], np.float32)
    return make([h.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["bn"]),
                 h.make_node("LayerNormalization", ["bn", "gamma", "beta"], ["ln"],
                             epsilon=1e-3),
                 h.make_node("LayerNormalization", ["bn", "gamma2"], ["ln2"], axis=1),
                 h.make_node("Softmax", ["ln"], ["sm"]),
                 h.make_node("LogSoftmax", ["ln"], ["lsm"], axis=1)],
                [f32("x", ["n", 4, 5, 6])],
                [unknown(n, T.FLOAT, 4) for n in ["ln2", "sm", "lsm"]],
                [const("s", c), const("b", c), const("m", c), const("v", c),
                 const("gamma", np.ones([6], np.float32)), const("beta", np.zeros([6], np.float32)),
                 const("gamma2", np.ones([4, 5, 6], np.float32))], opset=17)


@model("layer_norm_statistics")
def layer_norm_statistics():
    return make([h.make_node("LayerNormalization", ["x", "gamma"], ["y", "mean", "inv_std"],
                             axis=-2, epsilon=0.5)],
                [tensor("x", T.FLOAT16, [2, 3, 4])],
                [unknown("y", T.FLOAT16, 3), unknown("mean", T.FLOAT, 3),
                 unknown("inv_std", T.FLOAT, 3)],
                [const("gamma", np.ones([3, 4], np.float16))], opset=17)


@model("softmax_opset11")
def softmax_opset11():
    return make([h.make_node("Softmax", ["x"], ["coerced"]),
                 h.make_node("Softmax", ["x"], ["last"], axis=-1),
                 h.make_node("LogSoftmax", ["x"], ["log"], axis=0)],
                [f32("x", ["n", 3, 4])],
                [unknown(n, T.FLOAT, 3) for n in ["coerced", "last", "log"]], opset=11)


@model("reduce")
def reduce():
    return make([h.make_node("ReduceSum", ["x", "axes"], ["sum"]),
                 h.make_node("ReduceSum", ["x", ""], ["noop"], noop_with_empty_axes=1),
                 h.make_node("ReduceMean", ["x"], ["mean"], axes=[-1, 0], keepdims=0),
                 h.make_node("ReduceMax", ["x"], ["max"]),
                 h.make_node("ReduceMin", ["x"], ["min"], axes=[1]),
                 h.make_node("ReduceProd", ["x"], ["prod"], axes=[2], keepdims=0),
                 h.make_node("ReduceL2", ["x"], ["l2"], axes=[1])],
                [f32("x", [2, 3, 4])],
                [unknown(n, T.FLOAT, r) for n, r in
                 [("sum", 3), ("noop", 3), ("mean", 1), ("max", 3), ("min", 3), ("prod", 2),
                  ("l2", 3)]],
                [const("axes", np.array([1], np.int64))])


#===------------------------------------------------------------------------===#
# A small CNN as a PyTorch export writes it
#===------------------------------------------------------------------------===#

@model("tiny_cnn")
def tiny_cnn():
    # The model shipped with the examples, so the example and its test cannot drift apart.
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                    "..", "..", "..", "..", "examples"))
    from tiny_cnn_onnx import build_tiny_cnn
    return build_tiny_cnn()


@model("attention_block")
def attention_block():
    return attention(16)


@model("attention_dynamic_sequence")
def attention_dynamic_sequence():
    return attention("seq")


def attention(seq):
    """One pre-norm transformer block (4 heads of 16, MLP with erf GELU) with a dynamic batch."""
    rng = np.random.default_rng(1)
    def weights(*shape):
        return (rng.standard_normal(shape) * 0.1).astype(np.float32)
    n = h.make_node
    nodes = [
        n("LayerNormalization", ["x", "ln_g", "ln_b"], ["ln"], name="ln"),
        n("MatMul", ["ln", "wq"], ["q"], name="q_proj"),
        n("MatMul", ["ln", "wk"], ["k"], name="k_proj"),
        n("MatMul", ["ln", "wv"], ["v"], name="v_proj"),
        n("Reshape", ["q", "heads"], ["q4"], name="q_heads"),
        n("Reshape", ["k", "heads"], ["k4"], name="k_heads"),
        n("Reshape", ["v", "heads"], ["v4"], name="v_heads"),
        n("Transpose", ["q4"], ["qh"], perm=[0, 2, 1, 3]),
        n("Transpose", ["k4"], ["kt"], perm=[0, 2, 3, 1]),
        n("Transpose", ["v4"], ["vh"], perm=[0, 2, 1, 3]),
        n("MatMul", ["qh", "kt"], ["scores"], name="scores"),
        n("Div", ["scores", "scale"], ["scaled"]),
        n("Softmax", ["scaled"], ["probs"], name="attention", axis=-1),
        n("MatMul", ["probs", "vh"], ["ctx"]),
        n("Transpose", ["ctx"], ["ctx_t"], perm=[0, 2, 1, 3]),
        n("Reshape", ["ctx_t", "merge"], ["merged"], name="merge_heads"),
        n("MatMul", ["merged", "wo"], ["attn"]),
        n("Add", ["x", "attn"], ["h1"]),
        n("MatMul", ["h1", "w1"], ["up"]),
        n("Div", ["up", "sqrt2"], ["up_s"]),
        n("Erf", ["up_s"], ["erf"]),
        n("Add", ["erf", "one"], ["erf1"]),
        n("Mul", ["up", "erf1"], ["gelu2"]),
        n("Mul", ["gelu2", "half"], ["gelu"]),
        n("MatMul", ["gelu", "w2"], ["down"]),
        n("Add", ["h1", "down"], ["y"]),
    ]
    inits = [const("ln_g", np.ones([64], np.float32)), const("ln_b", np.zeros([64], np.float32)),
             const("wq", weights(64, 64)), const("wk", weights(64, 64)),
             const("wv", weights(64, 64)), const("wo", weights(64, 64)),
             const("w1", weights(64, 128)), const("w2", weights(128, 64)),
             const("heads", np.array([0, 0, 4, 16], np.int64)),
             const("merge", np.array([0, 0, 64], np.int64)),
             const("scale", np.array(4.0, np.float32)),
             const("sqrt2", np.array(np.sqrt(2.0), np.float32)),
             const("one", np.array(1.0, np.float32)), const("half", np.array(0.5, np.float32))]
    return make(nodes, [f32("x", ["batch", seq, 64])], [f32("y", ["batch", seq, 64])], inits,
                opset=17, name="attention_block")


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for name, build in MODELS.items():
        onnx.save(build(), os.path.join(out_dir, name + ".onnx"))


if __name__ == "__main__":
    main()
