"""Builds the ONNX models that the math, quantization, resize and normalization lit tests read.

Usage: make_math_models.py OUT_DIR [--node-tests NODE_DIR]

Every model is built with onnx.helper and written to OUT_DIR/NAME.onnx at test time, so that no
binary model is kept in the repository. Most models hold one node; its inputs are graph inputs
and its constant operands (scales, sizes, quantization parameters) initializers.

With --node-tests, the official Resize, Upsample and window node tests of NODE_DIR are also
written to OUT_DIR/node/TEST.onnx with their scales, sizes or window size turned from graph
inputs into initializers (read from test_data_set_0), since the importer needs them constant.
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


def unknown(name, elem_type, rank):
    """An output whose dimensions the test does not state."""
    return tensor(name, elem_type, ["%s_%d" % (name, d) for d in range(rank)])


def single(op, inputs, out_type, out_rank, opset, initializers=(), node_inputs=None,
           name="main", **attributes):
    """A model of one node named `name` reading `inputs` (then `initializers`) into output y."""
    names = node_inputs if node_inputs is not None else (
        [i.name for i in inputs] + [t.name for t in initializers])
    node = h.make_node(op, names, ["y"], name=name, **attributes)
    graph = h.make_graph([node], name, inputs, [unknown("y", out_type, out_rank)],
                         list(initializers))
    return h.make_model(graph, opset_imports=[h.make_opsetid("", opset)])


#===------------------------------------------------------------------------===#
# Elementwise math and predicates
#===------------------------------------------------------------------------===#

for _op, _opset in [("Acos", 7), ("Asin", 7), ("Atan", 7), ("Tan", 7), ("Acosh", 9),
                    ("Asinh", 9), ("Atanh", 9), ("Cosh", 9), ("Sinh", 9)]:
    model(_op.lower())(lambda op=_op, opset=_opset: single(
        op, [tensor("x", T.FLOAT, ["n", 3])], T.FLOAT, 2, opset, name=op.lower()))


@model("isnan")
def isnan():
    return single("IsNaN", [tensor("x", T.FLOAT, [2, 3])], T.BOOL, 2, 13)


@model("isinf")
def isinf():
    return single("IsInf", [tensor("x", T.FLOAT, [2, 3])], T.BOOL, 2, 10)


@model("isinf_positive")
def isinf_positive():
    return single("IsInf", [tensor("x", T.FLOAT, [2, 3])], T.BOOL, 2, 10, detect_negative=0)


@model("isinf_none")
def isinf_none():
    return single("IsInf", [tensor("x", T.FLOAT, [2, 3])], T.BOOL, 2, 10, detect_negative=0,
                  detect_positive=0)


@model("celu")
def celu():
    return single("Celu", [tensor("x", T.FLOAT, [2, 3])], T.FLOAT, 2, 12, alpha=2.0)


@model("mish")
def mish():
    return single("Mish", [tensor("x", T.FLOAT, ["n", 3])], T.FLOAT, 2, 18)


@model("shrink")
def shrink():
    return single("Shrink", [tensor("x", T.FLOAT, [4])], T.FLOAT, 1, 9, lambd=1.5, bias=0.25)


@model("bitshift_right")
def bitshift_right():
    return single("BitShift", [tensor("x", T.UINT8, [4]), tensor("s", T.UINT8, [4])], T.UINT8, 1,
                  11, direction="RIGHT")


@model("bitshift_left_uint64")
def bitshift_left_uint64():
    return single("BitShift", [tensor("x", T.UINT64, [4]), tensor("s", T.UINT64, [4])], T.UINT64,
                  1, 11, direction="LEFT")


@model("bitshift_int32_opset28")
def bitshift_int32_opset28():
    return single("BitShift", [tensor("x", T.INT32, [4]), tensor("s", T.INT32, [4])], T.INT32, 1,
                  28, direction="RIGHT")


@model("bitshift_int32")
def bitshift_int32():
    return single("BitShift", [tensor("x", T.INT32, [4]), tensor("s", T.INT32, [4])], T.INT32, 1,
                  11, direction="LEFT", name="shift")


#===------------------------------------------------------------------------===#
# Quantization
#===------------------------------------------------------------------------===#

@model("quantize_tensor")
def quantize_tensor():
    return single("QuantizeLinear", [tensor("x", T.FLOAT, ["n", 4])], T.INT8, 2, 10,
                  [const("scale", np.float32(0.5)), const("zp", np.int8(-3))])


@model("quantize_default_zero_point")
def quantize_default_zero_point():
    return single("QuantizeLinear", [tensor("x", T.FLOAT, [4])], T.UINT8, 1, 13,
                  [const("scale", np.float32(0.25))])


@model("quantize_axis")
def quantize_axis():
    return single("QuantizeLinear", [tensor("x", T.FLOAT, [2, 3, 4])], T.UINT8, 3, 13,
                  [const("scale", np.array([0.5, 1, 2], np.float32)),
                   const("zp", np.array([0, 1, 2], np.uint8))], axis=1)


@model("quantize_axis_opset10")
def quantize_axis_opset10():
    return single("QuantizeLinear", [tensor("x", T.FLOAT, [2, 3, 4])], T.UINT8, 3, 10,
                  [const("scale", np.array([0.5, 1, 2], np.float32))], name="q")


@model("quantize_output_dtype")
def quantize_output_dtype():
    return single("QuantizeLinear", [tensor("x", T.FLOAT, [4])], T.INT8, 1, 21,
                  [const("scale", np.float32(0.5))], output_dtype=T.INT8)


@model("quantize_blocked")
def quantize_blocked():
    return single("QuantizeLinear", [tensor("x", T.FLOAT, [2, 4])], T.UINT8, 2, 21,
                  [const("scale", np.ones((2, 2), np.float32))], axis=1, block_size=2,
                  name="blocks")


@model("quantize_blocked_partial")
def quantize_blocked_partial():
    return single("QuantizeLinear", [tensor("x", T.FLOAT, [2, 5])], T.UINT8, 2, 21,
                  [const("scale", np.ones((2, 3), np.float32))], axis=1, block_size=2)


@model("quantize_blocked_mismatch")
def quantize_blocked_mismatch():
    return single("QuantizeLinear", [tensor("x", T.FLOAT, [2, 4])], T.UINT8, 2, 21,
                  [const("scale", np.ones((2, 3), np.float32))], axis=1, block_size=2,
                  name="blocks")


@model("quantize_int16")
def quantize_int16():
    return single("QuantizeLinear", [tensor("x", T.FLOAT, [4])], T.INT16, 1, 25,
                  [const("scale", np.float32(0.5)), const("zp", np.int16(7))])


@model("dequantize_output_dtype")
def dequantize_output_dtype():
    return single("DequantizeLinear", [tensor("x", T.INT8, [4])], T.FLOAT16, 1, 25,
                  [const("scale", np.float32(0.5))], output_dtype=T.FLOAT16)


@model("dequantize_axis")
def dequantize_axis():
    return single("DequantizeLinear", [tensor("x", T.UINT8, [2, 3])], T.FLOAT, 2, 13,
                  [const("scale", np.array([0.5, 2], np.float32)),
                   const("zp", np.array([128, 0], np.uint8))], axis=0)


#===------------------------------------------------------------------------===#
# Spectral windows
#===------------------------------------------------------------------------===#

@model("hann_window")
def hann_window():
    return single("HannWindow", [], T.FLOAT, 1, 17, [const("size", np.int64(4))])


@model("hamming_window_symmetric")
def hamming_window_symmetric():
    return single("HammingWindow", [], T.DOUBLE, 1, 17, [const("size", np.int32(3))], periodic=0,
                  output_datatype=T.DOUBLE)


@model("blackman_window")
def blackman_window():
    return single("BlackmanWindow", [], T.FLOAT, 1, 17, [const("size", np.int64(4))])


@model("window_dynamic_size")
def window_dynamic_size():
    return single("HannWindow", [tensor("size", T.INT64, [])], T.FLOAT, 1, 17, name="window")


#===------------------------------------------------------------------------===#
# ConvTranspose
#===------------------------------------------------------------------------===#

def conv_transpose(opset=11, bias=False, **attributes):
    initializers = [const("w", np.ones((1, 2, 3, 3), np.float32))]
    if bias:
        initializers.append(const("b", np.array([1, 2], np.float32)))
    return single("ConvTranspose", [tensor("x", T.FLOAT, [1, 1, 3, 3])], T.FLOAT, 4, opset,
                  initializers, name="deconv", **attributes)


@model("conv_transpose_pads")
def conv_transpose_pads():
    return conv_transpose(strides=[3, 2], pads=[1, 2, 1, 2], bias=True)


@model("conv_transpose_output_shape")
def conv_transpose_output_shape():
    return conv_transpose(strides=[3, 2], output_shape=[10, 8])


@model("conv_transpose_output_shape_lower")
def conv_transpose_output_shape_lower():
    return conv_transpose(strides=[2, 2], output_shape=[4, 5])


@model("conv_transpose_same_upper")
def conv_transpose_same_upper():
    return conv_transpose(strides=[2, 2], auto_pad="SAME_UPPER", opset=7)


@model("conv_transpose_groups")
def conv_transpose_groups():
    return single("ConvTranspose", [tensor("x", T.FLOAT, ["n", 4, 5])], T.FLOAT, 3, 11,
                  [const("w", np.ones((4, 3, 2), np.float32))], group=2, strides=[2],
                  output_padding=[1], dilations=[1])


@model("col2im")
def col2im():
    # 2 channels of 2x3 patches, stride 2, into a 5x7 image: blocks (5-2)//2+1 = 2 by
    # (7-3)//2+1 = 3, the image's last row past the last block (output padding 1, 0).
    return single("Col2Im", [tensor("x", T.FLOAT, ["n", 12, 6])], T.FLOAT, 4, 18,
                  [const("image", np.array([5, 7], np.int64)),
                   const("block", np.array([2, 3], np.int64))], strides=[2, 2])


@model("col2im_remainder")
def col2im_remainder():
    # A 6x6 image, 2x2 patches, stride 3: blocks (6-2)/3+1 = 2 with one row and column past the
    # last block (output padding 1).
    return single("Col2Im", [tensor("x", T.FLOAT, [1, 4, 4])], T.FLOAT, 4, 18,
                  [const("image", np.array([6, 6], np.int64)),
                   const("block", np.array([2, 2], np.int64))], strides=[3, 3])


@model("col2im_wrong_length")
def col2im_wrong_length():
    return single("Col2Im", [tensor("x", T.FLOAT, [1, 4, 5])], T.FLOAT, 4, 18,
                  [const("image", np.array([3, 3], np.int64)),
                   const("block", np.array([2, 2], np.int64))], name="fold")


@model("conv_transpose_dynamic_output_shape")
def conv_transpose_dynamic_output_shape():
    return single("ConvTranspose", [tensor("x", T.FLOAT, [1, 1, "h", 3])], T.FLOAT, 4, 11,
                  [const("w", np.ones((1, 2, 3, 3), np.float32))], output_shape=[10, 8],
                  name="deconv")


#===------------------------------------------------------------------------===#
# Resize and Upsample
#===------------------------------------------------------------------------===#

def resize(opset, scales=None, sizes=None, name="resize", shape=(1, 1, 4, 4), **attributes):
    """Resize of x with the given constant scales or sizes; roi is an empty constant."""
    initializers = [const("roi", np.zeros((0,), np.float32))]
    inputs = ["x", "roi"]
    if scales is not None:
        initializers.append(const("scales", np.array(scales, np.float32)))
        inputs.append("scales")
    else:
        inputs.append("" if opset >= 13 else "scales")
        if opset < 13:
            initializers.append(const("scales", np.zeros((0,), np.float32)))
    if sizes is not None:
        initializers.append(const("sizes", np.array(sizes, np.int64)))
        inputs.append("sizes")
    return single("Resize", [tensor("x", T.FLOAT, list(shape))], T.FLOAT, len(shape), opset,
                  initializers, node_inputs=inputs, name=name, **attributes)


@model("resize_opset10")
def resize_opset10():
    return single("Resize", [tensor("x", T.FLOAT, [1, 1, 2, 2])], T.FLOAT, 4, 10,
                  [const("scales", np.array([1, 1, 2, 3], np.float32))], mode="linear")


@model("resize_opset10_downsample")
def resize_opset10_downsample():
    return single("Resize", [tensor("x", T.FLOAT, [1, 1, 4, 6])], T.FLOAT, 4, 10,
                  [const("scales", np.array([1, 1, 0.5, 0.6], np.float32))])


@model("resize_scales_cubic")
def resize_scales_cubic():
    return resize(13, scales=[1, 1, 0.8, 0.8], mode="cubic", cubic_coeff_a=-0.5,
                  exclude_outside=1, coordinate_transformation_mode="align_corners")


@model("resize_sizes_nearest")
def resize_sizes_nearest():
    return resize(11, sizes=[1, 1, 7, 8], nearest_mode="ceil",
                  coordinate_transformation_mode="pytorch_half_pixel")


@model("resize_tf_crop_and_resize")
def resize_tf_crop_and_resize():
    return resize(13, sizes=[1, 1, 3, 3], coordinate_transformation_mode="tf_crop_and_resize",
                  name="crop")


@model("resize_tf_half_pixel_for_nn")
def resize_tf_half_pixel_for_nn():
    return resize(11, sizes=[1, 1, 3, 2], coordinate_transformation_mode="tf_half_pixel_for_nn",
                  name="nn")


@model("resize_dynamic")
def resize_dynamic():
    return resize(13, scales=[1, 1, 2, 2], shape=("n", 1, 4, 4), name="dyn")


@model("resize_scales_and_sizes")
def resize_scales_and_sizes():
    return resize(13, scales=[1, 1, 2, 2], sizes=[1, 1, 8, 8], name="both")


@model("resize_scales_input")
def resize_scales_input():
    node = h.make_node("Resize", ["x", "", "s"], ["y"], name="runtime_scales")
    graph = h.make_graph([node], "main", [tensor("x", T.FLOAT, [1, 1, 4, 4]),
                                          tensor("s", T.FLOAT, [4])],
                         [unknown("y", T.FLOAT, 4)])
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])


@model("resize_opset18_axes")
def resize_opset18_axes():
    return single("Resize", [tensor("x", T.FLOAT, [1, 2, 4, 6])], T.FLOAT, 4, 18,
                  [const("sizes", np.array([8, 9], np.int64))], node_inputs=["x", "", "", "sizes"],
                  axes=[-1, 2], mode="linear")


@model("resize_opset18_not_larger")
def resize_opset18_not_larger():
    return single("Resize", [tensor("x", T.FLOAT, [1, 1, 4, 6])], T.FLOAT, 4, 18,
                  [const("sizes", np.array([8, 9], np.int64))], node_inputs=["x", "", "", "sizes"],
                  axes=[2, 3], keep_aspect_ratio_policy="not_larger")


@model("resize_opset19_symmetric")
def resize_opset19_symmetric():
    return single("Resize", [tensor("x", T.FLOAT, [1, 1, 4, 4])], T.FLOAT, 4, 19,
                  [const("scales", np.array([1, 1, 0.5, 0.5], np.float32))],
                  node_inputs=["x", "", "scales"],
                  coordinate_transformation_mode="half_pixel_symmetric")


@model("resize_antialias")
def resize_antialias():
    return single("Resize", [tensor("x", T.FLOAT, [1, 1, 4, 4])], T.FLOAT, 4, 18,
                  [const("scales", np.array([1, 1, 0.5, 0.5], np.float32))],
                  node_inputs=["x", "", "scales"], antialias=1, mode="linear", name="smooth")


@model("upsample_opset7")
def upsample_opset7():
    return single("Upsample", [tensor("x", T.FLOAT, [1, 1, 2, 2])], T.FLOAT, 4, 7,
                  scales=[1.0, 1.0, 2.0, 3.0])


@model("upsample_opset9")
def upsample_opset9():
    return single("Upsample", [tensor("x", T.FLOAT, [1, 2, 3])], T.FLOAT, 3, 9,
                  [const("scales", np.array([1, 1, 2.5], np.float32))], mode="linear")


#===------------------------------------------------------------------------===#
# Normalization and Lp pooling
#===------------------------------------------------------------------------===#

@model("instance_norm")
def instance_norm():
    return single("InstanceNormalization", [tensor("x", T.FLOAT, ["n", 3, 4, 5])], T.FLOAT, 4, 13,
                  [const("scale", np.ones(3, np.float32)), const("bias", np.zeros(3, np.float32))],
                  epsilon=0.01)


@model("lp_norm")
def lp_norm():
    return single("LpNormalization", [tensor("x", T.FLOAT, [2, 3, 4])], T.FLOAT, 3, 13, axis=1, p=1)


@model("lp_norm_l2")
def lp_norm_l2():
    return single("LpNormalization", [tensor("x", T.FLOAT, [2, 3])], T.FLOAT, 2, 13)


@model("mvn")
def mvn():
    return single("MeanVarianceNormalization", [tensor("x", T.FLOAT, [2, 3, 4, 5])], T.FLOAT, 4, 13)


@model("lrn")
def lrn():
    return single("LRN", [tensor("x", T.FLOAT, ["n", 6, 4, 4])], T.FLOAT, 4, 13, size=4,
                  alpha=0.0002, beta=0.5, bias=2.0)


@model("lrn_dynamic_channels")
def lrn_dynamic_channels():
    return single("LRN", [tensor("x", T.FLOAT, [1, "c", 4, 4])], T.FLOAT, 4, 13, size=3,
                  name="norm")


@model("lp_pool")
def lp_pool():
    return single("LpPool", [tensor("x", T.FLOAT, [1, 2, 5, 5])], T.FLOAT, 4, 11,
                  kernel_shape=[2, 3], strides=[2, 2], pads=[0, 1, 0, 1])


@model("lp_pool_same")
def lp_pool_same():
    return single("LpPool", [tensor("x", T.FLOAT, [1, 2, 5])], T.FLOAT, 3, 11, kernel_shape=[2],
                  auto_pad="SAME_LOWER", p=3)


@model("lp_pool_dilated")
def lp_pool_dilated():
    return single("LpPool", [tensor("x", T.FLOAT, [1, 2, 7])], T.FLOAT, 3, 18, kernel_shape=[2],
                  dilations=[3], auto_pad="SAME_UPPER")


@model("global_lp_pool")
def global_lp_pool():
    return single("GlobalLpPool", [tensor("x", T.FLOAT, ["n", 2, 3, 4])], T.FLOAT, 4, 13, p=1)


#===------------------------------------------------------------------------===#
# Official node tests with constant operands
#===------------------------------------------------------------------------===#

def first_constant_input(test):
    """The index of the first graph input of `test` that the importer needs as a constant."""
    if test.startswith(("test_resize_", "test_upsample_")):
        return 1
    if test.startswith(("test_hannwindow", "test_hammingwindow", "test_blackmanwindow")) and \
            not test.endswith("_expanded"):
        return 0
    return None


def freeze_node_tests(node_dir, out_dir):
    os.makedirs(out_dir, exist_ok=True)
    for test in sorted(os.listdir(node_dir)):
        first = first_constant_input(test)
        if first is None:
            continue
        proto = onnx.load(os.path.join(node_dir, test, "model.onnx"))
        graph = proto.graph
        inputs = list(graph.input)
        for index, value in enumerate(inputs[first:], start=first):
            data = onnx.TensorProto()
            with open(os.path.join(node_dir, test, "test_data_set_0",
                                   "input_%d.pb" % index), "rb") as f:
                data.ParseFromString(f.read())
            data.name = value.name
            graph.initializer.append(data)
        del graph.input[:]
        graph.input.extend(inputs[:first])
        onnx.save(proto, os.path.join(out_dir, test + ".onnx"))


def main():
    out_dir = sys.argv[1]
    os.makedirs(out_dir, exist_ok=True)
    for name, build in MODELS.items():
        onnx.save(build(), os.path.join(out_dir, name + ".onnx"))
    if sys.argv[2:3] == ["--node-tests"]:
        freeze_node_tests(sys.argv[3], os.path.join(out_dir, "node"))


if __name__ == "__main__":
    main()
