"""Execution cases for the graph dialect, compiled by `kiln compile` and run by `kiln run`,
checked against NumPy.

  graph_cases.py generate OUT_DIR [GROUP]
      writes OUT_DIR/cases.mlir, one function @main holding every case of GROUP (`core` by
      default; also unsigned, indexing, scan, resize, conv_transpose): case C's inputs are the
      arguments named C_0, C_1, ... (declared dynamic where the case says so) and its result
      is the output named C; OUT_DIR/inputs/C_I.npy, the seeded inputs; OUT_DIR/driver.json,
      the inputs' names and the shapes of the dynamic ones (compile_and_run.py reads it);
      OUT_DIR/expected.json, NumPy's results
  graph_cases.py check EXPECTED OUT_DIR
      compares each OUT_DIR/C.npy (shape, dtype and values) with NumPy's result and prints
      'N passed, M failed'; exits non-zero on any failure

One compilation and one run per group keep the suite fast. Inputs are seeded and non-trivial (never
all zeros); results are compared with rtol 1e-4 and atol 1e-5, NaN matching NaN and infinities
exactly.
"""
import json
import math
import os
import re
import sys

import numpy as np

from numpy_reference import (reference_conv, reference_conv_transpose, reference_gather_nd,
                             reference_pool, reference_resize, reference_scatter_elements,
                             reference_scatter_nd, reference_top_k)

RNG = np.random.default_rng(20261122)


def normal(shape, scale=1.0):
    return (RNG.standard_normal(shape) * scale).astype(np.float32)


def positive(shape):
    return (RNG.uniform(0.1, 4.0, shape)).astype(np.float32)


def ints(shape, low=-9, high=10):
    return RNG.integers(low, high, shape).astype(np.int32)


def mlir_type(array, dims=None):
    element = {np.float32: "f32", np.int32: "i32", np.int64: "i64", np.uint8: "ui8",
               np.uint16: "ui16", np.uint32: "ui32", np.uint64: "ui64",
               np.bool_: "i1"}[array.dtype.type]
    shape = dims if dims is not None else list(array.shape)
    return "tensor<" + "".join(f"{'?' if d is None else d}x" for d in shape) + element + ">"


class Case:
    def __init__(self, name, inputs, body, result_type, reference, dynamic=None):
        self.name, self.inputs, self.body = name, inputs, body
        self.result_type, self.reference = result_type, reference
        # Per input: the dims as the function declares them (None = dynamic), or None for static.
        self.dynamic = dynamic or [None] * len(inputs)


def unary(name, op, fn, data, **kw):
    t = mlir_type(data)
    return Case(name, [data], f"%r = graph.{op} %a0 : {t}", t, lambda a: fn(a), **kw)


def binary(name, op, fn, a, b, out_shape):
    ta, tb = mlir_type(a), mlir_type(b)
    tr = mlir_type(np.zeros(out_shape, a.dtype))
    return Case(name, [a, b], f"%r = graph.{op} %a0, %a1 : ({ta}, {tb}) -> {tr}", tr,
                lambda x, y: fn(x, y))


def cases():
    vfloat = np.vectorize(math.erf, otypes=[np.float32])
    x23 = normal((2, 3))
    rounding = np.array([[0.5, 1.5, 2.5, -0.5, -1.5, 2.7]], np.float32)
    signs = np.array([[-2.5, 0.0, 3.0, -0.0, 7.25, -1e-3]], np.float32)
    out = [
        unary("abs", "abs", np.abs, x23),
        unary("ceil", "ceil", np.ceil, normal((2, 3), 3)),
        unary("cos", "cos", np.cos, x23),
        unary("erf", "erf", vfloat, x23),
        unary("exp", "exp", np.exp, x23),
        unary("floor", "floor", np.floor, normal((2, 3), 3)),
        unary("log", "log", np.log, positive((2, 3))),
        unary("neg", "neg", np.negative, x23),
        unary("reciprocal", "reciprocal", np.reciprocal, positive((2, 3))),
        unary("round_half_even", "round", np.round, rounding),
        unary("rsqrt", "rsqrt", lambda a: 1 / np.sqrt(a), positive((2, 3))),
        unary("sigmoid", "sigmoid", lambda a: 1 / (1 + np.exp(-a)), normal((2, 3), 4)),
        unary("sign", "sign", np.sign, signs),
        unary("sin", "sin", np.sin, x23),
        unary("sqrt", "sqrt", np.sqrt, positive((2, 3))),
        unary("tanh", "tanh", np.tanh, normal((2, 3), 2)),
        unary("atan", "atan", np.arctan, normal((2, 3), 3)),
        binary("add_broadcast", "add", np.add, normal((2, 3)), normal((3,)), (2, 3)),
        binary("sub_outer", "sub", np.subtract, normal((4, 1)), normal((1, 5)), (4, 5)),
        binary("mul_rank3", "mul", np.multiply, normal((2, 1, 3)), normal((4, 1)), (2, 4, 3)),
        binary("div", "div", np.divide, normal((2, 3)), positive((2, 3)), (2, 3)),
        binary("max", "max", np.maximum, normal((2, 3)), normal((1, 3)), (2, 3)),
        binary("min", "min", np.minimum, normal((2, 3)), normal((2, 1)), (2, 3)),
        binary("pow", "pow", np.power, positive((2, 3)), normal((2, 3)), (2, 3)),
        binary("rem_sign_of_dividend", "rem", np.fmod, normal((2, 3), 5), positive((2, 3)), (2, 3)),
    ]
    # Integer arithmetic, compared as floats after a cast (also exercising cast).
    a, b = ints((2, 3)), ints((3,), 1, 6)
    out.append(Case("int_ops_then_cast", [a, b],
                    "%s = graph.mul %a0, %a1 : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>\n"
                    "  %d = graph.div %s, %a1 : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>\n"
                    "  %m = graph.rem %a0, %a1 : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>\n"
                    "  %t = graph.add %d, %m : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>\n"
                    "  %r = graph.cast %t : tensor<2x3xi32> to f32",
                    "tensor<2x3xf32>",
                    lambda x, y: ((x * y) // y + np.fmod(x, y)).astype(np.float32)))
    p, q = ints((2, 3), -100, 100), ints((3,), -100, 100)
    out.append(Case("bitwise_int_ops", [p, q],
                    "%a = graph.and %a0, %a1 : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>\n"
                    "  %o = graph.or %a0, %a1 : (tensor<2x3xi32>, tensor<3xi32>) -> tensor<2x3xi32>\n"
                    "  %x = graph.xor %a, %o : (tensor<2x3xi32>, tensor<2x3xi32>) -> tensor<2x3xi32>\n"
                    "  %n = graph.not %x : tensor<2x3xi32>\n"
                    "  %r = graph.cast %n : tensor<2x3xi32> to f32",
                    "tensor<2x3xf32>",
                    lambda x, y: np.invert((x & y) ^ (x | y)).astype(np.float32)))
    c, d = normal((3, 4)), normal((4,))
    out.append(Case("compare_select", [c, d],
                    "%m = graph.compare lt, %a0, %a1 : (tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xi1>\n"
                    "  %r = graph.select %m, %a0, %a1 : (tensor<3x4xi1>, tensor<3x4xf32>, tensor<4xf32>) -> tensor<3x4xf32>",
                    "tensor<3x4xf32>", lambda x, y: np.where(x < y, x, y)))
    e = normal((2, 3), 4)
    out.append(Case("cast_truncates_toward_zero", [e],
                    "%i = graph.cast %a0 : tensor<2x3xf32> to i32\n"
                    "  %r = graph.cast %i : tensor<2x3xi32> to f32",
                    "tensor<2x3xf32>", lambda x: np.trunc(x)))
    special = np.array([[1.0, np.nan, np.inf, -np.inf, -2.0, 0.0]], np.float32)
    out.append(Case("is_nan_is_inf", [special],
                    "%n = graph.is_nan %a0 : (tensor<1x6xf32>) -> tensor<1x6xi1>\n"
                    "  %i = graph.is_inf %a0 : (tensor<1x6xf32>) -> tensor<1x6xi1>\n"
                    "  %nf = graph.cast %n : tensor<1x6xi1> to f32\n"
                    "  %if = graph.cast %i : tensor<1x6xi1> to f32\n"
                    "  %two = graph.constant dense<2.0> : tensor<f32>\n"
                    "  %s = graph.mul %if, %two : (tensor<1x6xf32>, tensor<f32>) -> tensor<1x6xf32>\n"
                    "  %r = graph.add %nf, %s : (tensor<1x6xf32>, tensor<1x6xf32>) -> tensor<1x6xf32>",
                    "tensor<1x6xf32>",
                    lambda x: np.isnan(x).astype(np.float32) + 2 * np.isinf(x).astype(np.float32)))
    r = normal((2, 3, 4))
    for kind, fn in (("sum", np.sum), ("max", np.max), ("min", np.min), ("prod", np.prod)):
        out.append(Case(f"reduce_{kind}", [r],
                        f"%r = graph.reduce_{kind} %a0 {{axes = array<i64: 0, 2>}} : (tensor<2x3x4xf32>) -> tensor<3xf32>",
                        "tensor<3xf32>", lambda x, fn=fn: fn(x, axis=(0, 2))))
    out.append(Case("reduce_mean_keepdims", [r],
                    "%r = graph.reduce_mean %a0 {axes = array<i64: 1>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>",
                    "tensor<2x1x4xf32>", lambda x: np.mean(x, axis=1, keepdims=True)))
    out.append(Case("reduce_all_keepdims", [r],
                    "%r = graph.reduce_sum %a0 {axes = array<i64: 0, 1, 2>, keepdims = true} : (tensor<2x3x4xf32>) -> tensor<1x1x1xf32>",
                    "tensor<1x1x1xf32>", lambda x: np.sum(x, keepdims=True)))
    logits = normal((3, 5), 6)

    def softmax(x, axis):
        z = np.exp(x - x.max(axis=axis, keepdims=True))
        return z / z.sum(axis=axis, keepdims=True)

    out.append(Case("softmax_last_axis", [logits],
                    "%r = graph.softmax %a0 {axis = 1 : i64} : tensor<3x5xf32>",
                    "tensor<3x5xf32>", lambda x: softmax(x, 1)))
    out.append(Case("softmax_first_axis", [logits],
                    "%r = graph.softmax %a0 {axis = 0 : i64} : tensor<3x5xf32>",
                    "tensor<3x5xf32>", lambda x: softmax(x, 0)))
    out.append(Case("log_softmax", [logits],
                    "%r = graph.log_softmax %a0 {axis = 1 : i64} : tensor<3x5xf32>",
                    "tensor<3x5xf32>", lambda x: np.log(softmax(x, 1))))
    out.append(Case("transpose", [r],
                    "%r = graph.transpose %a0, [2, 0, 1] : tensor<2x3x4xf32> -> tensor<4x2x3xf32>",
                    "tensor<4x2x3xf32>", lambda x: np.transpose(x, (2, 0, 1))))
    out.append(Case("reshape", [r],
                    "%r = graph.reshape %a0 to [4, -1] : tensor<2x3x4xf32> -> tensor<4x6xf32>",
                    "tensor<4x6xf32>", lambda x: x.reshape(4, 6)))
    # Dynamic batch: the function declares ?x3, the compilation binds 4x3 (--shape).
    dyn, bias = normal((4, 3)), normal((3,))
    out.append(Case("dynamic_batch_chain", [dyn, bias],
                    "%s = graph.add %a0, %a1 : (tensor<?x3xf32>, tensor<3xf32>) -> tensor<?x3xf32>\n"
                    "  %t = graph.tanh %s : tensor<?x3xf32>\n"
                    "  %m = graph.reduce_mean %t {axes = array<i64: 1>, keepdims = true} : (tensor<?x3xf32>) -> tensor<?x1xf32>\n"
                    "  %c = graph.sub %t, %m : (tensor<?x3xf32>, tensor<?x1xf32>) -> tensor<?x3xf32>\n"
                    "  %r = graph.reshape %c to [-1] : tensor<?x3xf32> -> tensor<?xf32>",
                    "tensor<?xf32>",
                    lambda x, y: (np.tanh(x + y) - np.tanh(x + y).mean(1, keepdims=True)).reshape(-1),
                    dynamic=[[None, 3], None]))
    out += data_movement_cases() + neural_network_cases()
    return out


def data_movement_cases():
    x = normal((2, 3, 4))
    y = normal((2, 2, 4))
    value = np.array(0.75, np.float32)
    idx = np.array([[2, -1], [0, 1]], np.int64)
    out = [
        Case("concat", [x, y],
             "%r = graph.concat %a0, %a1 {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x2x4xf32>) -> tensor<2x5x4xf32>",
             "tensor<2x5x4xf32>", lambda a, b: np.concatenate([a, b], axis=1)),
        Case("expand", [normal((3, 1))],
             "%r = graph.expand %a0 to [2, 1, 4] : tensor<3x1xf32> -> tensor<2x3x4xf32>",
             "tensor<2x3x4xf32>", lambda a: np.broadcast_to(a, (2, 3, 4))),
        Case("slice_positive_strides", [x],
             "%r = graph.slice %a0 {starts = array<i64: 1, 0, 1>, limits = array<i64: 2, 3, 4>, strides = array<i64: 1, 2, 2>} : (tensor<2x3x4xf32>) -> tensor<1x2x2xf32>",
             "tensor<1x2x2xf32>", lambda a: a[1:2, 0:3:2, 1:4:2]),
        Case("slice_negative_stride", [x],
             "%r = graph.slice %a0 {starts = array<i64: 0, 2, 3>, limits = array<i64: 2, -1, 0>, strides = array<i64: 1, -1, -2>} : (tensor<2x3x4xf32>) -> tensor<2x3x2xf32>",
             "tensor<2x3x2xf32>", lambda a: a[0:2, 2::-1, 3:0:-2]),
        Case("pad_constant_value_and_crop", [x, value],
             "%r = graph.pad constant %a0, %a1 low [1, -1, 2] high [0, 1, -1] : (tensor<2x3x4xf32>, tensor<f32>) -> tensor<3x3x5xf32>",
             "tensor<3x3x5xf32>",
             lambda a, v: np.pad(a[:, 1:, :-1], [(1, 0), (0, 1), (2, 0)], constant_values=v)),
        Case("pad_reflect", [x],
             "%r = graph.pad reflect %a0 low [1, 2, 3] high [1, 1, 2] : (tensor<2x3x4xf32>) -> tensor<4x6x9xf32>",
             "tensor<4x6x9xf32>", lambda a: np.pad(a, [(1, 1), (2, 1), (3, 2)], mode="reflect")),
        Case("pad_edge", [x],
             "%r = graph.pad edge %a0 low [0, 2, 1] high [1, 0, 3] : (tensor<2x3x4xf32>) -> tensor<3x5x8xf32>",
             "tensor<3x5x8xf32>", lambda a: np.pad(a, [(0, 1), (2, 0), (1, 3)], mode="edge")),
        Case("gather_negative_indices", [x, idx],
             "%r = graph.gather %a0, %a1 {axis = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x2xi64>) -> tensor<2x2x2x4xf32>",
             "tensor<2x2x2x4xf32>", lambda a, i: np.take(a, i, axis=1)),
        Case("split_second_piece", [x],
             "%p:2 = graph.split %a0 {axis = 2 : i64, sizes = array<i64: 1, 3>} : (tensor<2x3x4xf32>) -> (tensor<2x3x1xf32>, tensor<2x3x3xf32>)\n"
             "  %r = graph.add %p#1, %p#0 : (tensor<2x3x3xf32>, tensor<2x3x1xf32>) -> tensor<2x3x3xf32>",
             "tensor<2x3x3xf32>", lambda a: a[:, :, 1:] + a[:, :, :1]),
        Case("empty_pieces_at_the_end", [x],
             "%p:2 = graph.split %a0 {axis = 2 : i64, sizes = array<i64: 4, 0>} : (tensor<2x3x4xf32>) -> (tensor<2x3x4xf32>, tensor<2x3x0xf32>)\n"
             "  %e = graph.slice %a0 {starts = array<i64: 0, 0, 4>, limits = array<i64: 2, 3, 4>, strides = array<i64: 1, 1, 1>} : (tensor<2x3x4xf32>) -> tensor<2x3x0xf32>\n"
             "  %r = graph.concat %p#1, %p#0, %e {axis = 2 : i64} : (tensor<2x3x0xf32>, tensor<2x3x4xf32>, tensor<2x3x0xf32>) -> tensor<2x3x4xf32>",
             "tensor<2x3x4xf32>", lambda a: a),
        # Pieces that start at multiples of 256 bytes are views of their source, no copies: of
        # an input, of an intermediate, read by a kernel and by a library call.
        Case("split_views_of_an_input_and_an_intermediate", [normal((4, 64))],
             "%p:3 = graph.split %a0 {axis = 0 : i64, sizes = array<i64: 1, 2, 1>} : (tensor<4x64xf32>) -> (tensor<1x64xf32>, tensor<2x64xf32>, tensor<1x64xf32>)\n"
             "  %e = graph.exp %a0 : tensor<4x64xf32>\n"
             "  %q:2 = graph.split %e {axis = 0 : i64, sizes = array<i64: 3, 1>} : (tensor<4x64xf32>) -> (tensor<3x64xf32>, tensor<1x64xf32>)\n"
             "  %r = graph.concat %p#2, %q#1, %p#0 {axis = 0 : i64} : (tensor<1x64xf32>, tensor<1x64xf32>, tensor<1x64xf32>) -> tensor<3x64xf32>",
             "tensor<3x64xf32>", lambda a: np.concatenate([a[3:4], np.exp(a[3:4]), a[0:1]])),
        Case("matmul_of_split_views", [normal((4, 64)), normal((64, 8))],
             "%e = graph.tanh %a0 : tensor<4x64xf32>\n"
             "  %p:2 = graph.split %e {axis = 0 : i64, sizes = array<i64: 1, 3>} : (tensor<4x64xf32>) -> (tensor<1x64xf32>, tensor<3x64xf32>)\n"
             "  %r = graph.matmul %p#1, %a1 : (tensor<3x64xf32>, tensor<64x8xf32>) -> tensor<3x8xf32>",
             "tensor<3x8xf32>", lambda a, w: np.tanh(a[1:]) @ w),
        Case("squeeze_unsqueeze_flatten", [normal((2, 1, 3))],
             "%s = graph.squeeze %a0 {axes = array<i64: 1>} : (tensor<2x1x3xf32>) -> tensor<2x3xf32>\n"
             "  %u = graph.unsqueeze %s {axes = array<i64: 0, 3>} : (tensor<2x3xf32>) -> tensor<1x2x3x1xf32>\n"
             "  %r = graph.flatten %u {axis = 2 : i64} : (tensor<1x2x3x1xf32>) -> tensor<2x3xf32>",
             "tensor<2x3xf32>", lambda a: a.reshape(2, 3)),
    ]
    return out


def data_movement_fusion_cases():
    """Slices, concatenations and transposes between elementwise ops, which
    kiln-fold-data-movement reads through so that each chain is one kernel; large enough that
    the kernels are split into workgroups (never along a concatenated axis)."""
    def rotate_half(a):
        h = a.shape[-1] // 2
        return np.concatenate([-a[..., h:], a[..., :h]], axis=-1)

    q = normal((2, 128, 4, 32))
    cos, sin = normal((1, 1, 128, 32)), normal((1, 1, 128, 32))
    rotary = (
        "%t = graph.transpose %a0, [0, 2, 1, 3] : tensor<2x128x4x32xf32> -> tensor<2x4x128x32xf32>\n"
        "  %lo = graph.slice %t {starts = array<i64: 0, 0, 0, 0>, limits = array<i64: 2, 4, 128, 16>, strides = array<i64: 1, 1, 1, 1>} : (tensor<2x4x128x32xf32>) -> tensor<2x4x128x16xf32>\n"
        "  %hi = graph.slice %t {starts = array<i64: 0, 0, 0, 16>, limits = array<i64: 2, 4, 128, 32>, strides = array<i64: 1, 1, 1, 1>} : (tensor<2x4x128x32xf32>) -> tensor<2x4x128x16xf32>\n"
        "  %n = graph.neg %hi : tensor<2x4x128x16xf32>\n"
        "  %c = graph.concat %n, %lo {axis = 3 : i64} : (tensor<2x4x128x16xf32>, tensor<2x4x128x16xf32>) -> tensor<2x4x128x32xf32>\n"
        "  %m1 = graph.mul %t, %a1 : (tensor<2x4x128x32xf32>, tensor<1x1x128x32xf32>) -> tensor<2x4x128x32xf32>\n"
        "  %m2 = graph.mul %c, %a2 : (tensor<2x4x128x32xf32>, tensor<1x1x128x32xf32>) -> tensor<2x4x128x32xf32>\n"
        "  %r = graph.add %m1, %m2 : (tensor<2x4x128x32xf32>, tensor<2x4x128x32xf32>) -> tensor<2x4x128x32xf32>")
    a, b = normal((64, 100)), normal((64, 28))
    bias = normal((128,))
    cls, patches, pos = normal((1, 1, 48)), normal((1, 196, 48)), normal((1, 197, 48))
    x = normal((8, 96))
    return [
        Case("rotary_embedding", [q, cos, sin], rotary, "tensor<2x4x128x32xf32>",
             lambda a0, c, s: (lambda t: t * c + rotate_half(t) * s)(a0.transpose(0, 2, 1, 3))),
        Case("concat_uneven_last_axis", [a, b, bias],
             "%e = graph.exp %a1 : tensor<64x28xf32>\n"
             "  %c = graph.concat %a0, %e {axis = 1 : i64} : (tensor<64x100xf32>, tensor<64x28xf32>) -> tensor<64x128xf32>\n"
             "  %r = graph.add %c, %a2 : (tensor<64x128xf32>, tensor<128xf32>) -> tensor<64x128xf32>",
             "tensor<64x128xf32>", lambda a0, a1, a2: np.concatenate([a0, np.exp(a1)], axis=1) + a2),
        Case("class_token_and_positions", [cls, patches, pos],
             "%c = graph.concat %a0, %a1 {axis = 1 : i64} : (tensor<1x1x48xf32>, tensor<1x196x48xf32>) -> tensor<1x197x48xf32>\n"
             "  %r = graph.add %c, %a2 : (tensor<1x197x48xf32>, tensor<1x197x48xf32>) -> tensor<1x197x48xf32>",
             "tensor<1x197x48xf32>", lambda c, p, e: np.concatenate([c, p], axis=1) + e),
        Case("strided_slices_concatenated", [x],
             "%even = graph.slice %a0 {starts = array<i64: 0, 0>, limits = array<i64: 8, 96>, strides = array<i64: 1, 2>} : (tensor<8x96xf32>) -> tensor<8x48xf32>\n"
             "  %odd = graph.slice %a0 {starts = array<i64: 0, 1>, limits = array<i64: 8, 96>, strides = array<i64: 1, 2>} : (tensor<8x96xf32>) -> tensor<8x48xf32>\n"
             "  %tail = graph.slice %a0 {starts = array<i64: 1, 90>, limits = array<i64: 8, 96>, strides = array<i64: 2, 1>} : (tensor<8x96xf32>) -> tensor<4x6xf32>\n"
             "  %d = graph.sub %odd, %even : (tensor<8x48xf32>, tensor<8x48xf32>) -> tensor<8x48xf32>\n"
             "  %t2 = graph.transpose %tail, [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>\n"
             "  %p = graph.slice %t2 {starts = array<i64: 0, 0>, limits = array<i64: 6, 4>, strides = array<i64: 1, 1>} : (tensor<6x4xf32>) -> tensor<6x4xf32>\n"
             "  %z = graph.reshape %p to [8, 3] : tensor<6x4xf32> -> tensor<8x3xf32>\n"
             "  %c = graph.concat %even, %d, %z {axis = 1 : i64} : (tensor<8x48xf32>, tensor<8x48xf32>, tensor<8x3xf32>) -> tensor<8x99xf32>\n"
             "  %r = graph.tanh %c : tensor<8x99xf32>",
             "tensor<8x99xf32>",
             lambda a0: np.tanh(np.concatenate(
                 [a0[:, 0::2], a0[:, 1::2] - a0[:, 0::2], a0[1::2, 90:].T.reshape(8, 3)], axis=1))),
    ]


def neural_network_cases():
    out = []
    a, b = normal((2, 1, 3, 4)), normal((5, 4, 2))
    out.append(Case("matmul_broadcast_batch", [a, b],
                    "%r = graph.matmul %a0, %a1 : (tensor<2x1x3x4xf32>, tensor<5x4x2xf32>) -> tensor<2x5x3x2xf32>",
                    "tensor<2x5x3x2xf32>", lambda p, q: np.matmul(p, q)))
    v = normal((4,))
    out.append(Case("matmul_vector", [a, v],
                    "%r = graph.matmul %a0, %a1 : (tensor<2x1x3x4xf32>, tensor<4xf32>) -> tensor<2x1x3xf32>",
                    "tensor<2x1x3xf32>", lambda p, q: np.matmul(p, q)))
    ga, gb, gc = normal((4, 3)), normal((5, 4)), normal((5,))
    out.append(Case("gemm_transposes_alpha_beta", [ga, gb, gc],
                    "%r = graph.gemm %a0, %a1, %a2 {trans_a = true, trans_b = true, alpha = 0.5 : f32, beta = 2.0 : f32} : (tensor<4x3xf32>, tensor<5x4xf32>, tensor<5xf32>) -> tensor<3x5xf32>",
                    "tensor<3x5xf32>", lambda p, q, c: 0.5 * p.T @ q.T + 2.0 * c))
    x, w, bias = normal((2, 4, 9, 8)), normal((6, 2, 3, 2)), normal((6,))
    out.append(Case("conv2d_groups_stride_dilation_pad_bias", [x, w, bias],
                    "%r = graph.conv %a0, %a1, %a2 {strides = array<i64: 2, 1>, dilations = array<i64: 1, 2>, pad_low = array<i64: 1, 0>, pad_high = array<i64: 2, 1>, groups = 2 : i64} : (tensor<2x4x9x8xf32>, tensor<6x2x3x2xf32>, tensor<6xf32>) -> tensor<2x6x5x7xf32>",
                    "tensor<2x6x5x7xf32>",
                    lambda p, q, c: reference_conv(p, q, c, (2, 1), (1, 2), (1, 0), (2, 1), 2)))
    x1, w1 = normal((1, 3, 10)), normal((4, 3, 3))
    out.append(Case("conv1d_dynamic_batch", [x1, w1],
                    "%r = graph.conv %a0, %a1 {strides = array<i64: 3>, dilations = array<i64: 1>, pad_low = array<i64: 1>, pad_high = array<i64: 1>} : (tensor<?x3x10xf32>, tensor<4x3x3xf32>) -> tensor<?x4x4xf32>",
                    "tensor<?x4x4xf32>",
                    lambda p, q: reference_conv(p, q, None, (3,), (1,), (1,), (1,), 1),
                    dynamic=[[None, 3, 10], None]))
    px = normal((2, 3, 7, 6))
    out.append(Case("max_pool_ceil_mode", [px],
                    "%r = graph.max_pool %a0 {kernel_shape = array<i64: 3, 2>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 0>, pad_high = array<i64: 1, 0>, ceil_mode = true} : (tensor<2x3x7x6xf32>) -> tensor<2x3x4x3xf32>",
                    "tensor<2x3x4x3xf32>",
                    lambda p: reference_pool(p, (3, 2), (2, 2), (1, 0), (1, 0), True, "max")))
    for include in (False, True):
        out.append(Case(f"avg_pool_count_include_pad_{str(include).lower()}", [px],
                        f"%r = graph.avg_pool %a0 {{kernel_shape = array<i64: 3, 3>, strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, ceil_mode = true, count_include_pad = {str(include).lower()}}} : (tensor<2x3x7x6xf32>) -> tensor<2x3x4x4xf32>",
                        "tensor<2x3x4x4xf32>",
                        lambda p, include=include: reference_pool(p, (3, 3), (2, 2), (1, 1), (1, 1),
                                                                  True, "avg", include)))
    out.append(Case("global_pools", [px],
                    "%m = graph.global_max_pool %a0 : (tensor<2x3x7x6xf32>) -> tensor<2x3x1x1xf32>\n"
                    "  %s = graph.global_avg_pool %a0 : (tensor<2x3x7x6xf32>) -> tensor<2x3x1x1xf32>\n"
                    "  %r = graph.sub %m, %s : (tensor<2x3x1x1xf32>, tensor<2x3x1x1xf32>) -> tensor<2x3x1x1xf32>",
                    "tensor<2x3x1x1xf32>",
                    lambda p: p.max(axis=(2, 3), keepdims=True) - p.mean(axis=(2, 3), keepdims=True)))
    bn = [normal((2, 3, 4, 5)), normal((3,)), normal((3,)), normal((3,)), positive((3,))]
    out.append(Case("batch_norm", bn,
                    "%r = graph.batch_norm %a0, %a1, %a2, %a3, %a4 {epsilon = 1.0e-3 : f32} : (tensor<2x3x4x5xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>, tensor<3xf32>) -> tensor<2x3x4x5xf32>",
                    "tensor<2x3x4x5xf32>",
                    lambda p, s, b, m, var: s.reshape(1, 3, 1, 1) * (p - m.reshape(1, 3, 1, 1))
                    / np.sqrt(var.reshape(1, 3, 1, 1) + 1e-3) + b.reshape(1, 3, 1, 1)))
    ln = [normal((2, 3, 8), 3), normal((8,)), normal((8,))]

    def layer_norm(p, s, b):
        mean = p.mean(axis=-1, keepdims=True)
        var = ((p - mean) ** 2).mean(axis=-1, keepdims=True)
        return (p - mean) / np.sqrt(var + 1e-5) * s + b

    cnn = [normal((2, 3, 8, 8)), normal((8, 3, 3, 3), 0.5), normal((8,)), normal((8,)),
           normal((8,)), normal((8,)), positive((8,)), normal((8, 8, 3, 3), 0.3), normal((5, 8)),
           normal((5,))]

    def cnn_block(x, w0, b0, g, beta, mean, var, w1, fc, fcb):
        c0 = reference_conv(x, w0, b0, (2, 2), (1, 1), (1, 1), (1, 1), 1)
        n0 = (g.reshape(1, 8, 1, 1) * (c0 - mean.reshape(1, 8, 1, 1))
              / np.sqrt(var.reshape(1, 8, 1, 1) + 1e-5) + beta.reshape(1, 8, 1, 1))
        r0 = np.maximum(n0, 0)
        r1 = np.maximum(reference_conv(r0, w1, None, (1, 1), (1, 1), (1, 1), (1, 1), 1), 0) + r0
        logits = r1.mean(axis=(2, 3)) @ fc.T + fcb
        z = np.exp(logits - logits.max(axis=1, keepdims=True))
        return z / z.sum(axis=1, keepdims=True)

    out.append(Case("cnn_block_end_to_end", cnn, """%zero = graph.constant dense<0.0> : tensor<f32>
  %c0 = graph.conv %a0, %a1, %a2 {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : (tensor<2x3x8x8xf32>, tensor<8x3x3x3xf32>, tensor<8xf32>) -> tensor<2x8x4x4xf32>
  %n0 = graph.batch_norm %c0, %a3, %a4, %a5, %a6 : (tensor<2x8x4x4xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x8x4x4xf32>
  %r0 = graph.max %n0, %zero : (tensor<2x8x4x4xf32>, tensor<f32>) -> tensor<2x8x4x4xf32>
  %c1 = graph.conv %r0, %a7 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : (tensor<2x8x4x4xf32>, tensor<8x8x3x3xf32>) -> tensor<2x8x4x4xf32>
  %r1 = graph.max %c1, %zero : (tensor<2x8x4x4xf32>, tensor<f32>) -> tensor<2x8x4x4xf32>
  %s1 = graph.add %r1, %r0 : (tensor<2x8x4x4xf32>, tensor<2x8x4x4xf32>) -> tensor<2x8x4x4xf32>
  %p = graph.global_avg_pool %s1 : (tensor<2x8x4x4xf32>) -> tensor<2x8x1x1xf32>
  %f = graph.flatten %p {axis = 1 : i64} : (tensor<2x8x1x1xf32>) -> tensor<2x8xf32>
  %l = graph.gemm %f, %a8, %a9 {trans_b = true} : (tensor<2x8xf32>, tensor<5x8xf32>, tensor<5xf32>) -> tensor<2x5xf32>
  %r = graph.softmax %l {axis = 1 : i64} : tensor<2x5xf32>""", "tensor<2x5xf32>", cnn_block))
    # Attention as the exporters write it: the products read Q, K (transposed) and V through the
    # reshape / transpose / split of the fused projection, and write the heads merged back, as
    # strides (a_view, b_view, dst_view), no copy kernels. BERT's form splits the transposed 5-d
    # tensor; GPT-2's splits the projection, then transposes each head. Batch 2 has batch strides
    # that do not nest (the CPU's oneDNN takes them, cuBLASLt keeps the transposes).
    def attention_reference(q, k, v, mask, scale):
        scores = q @ np.swapaxes(k, -1, -2) * scale + mask
        z = np.exp(scores - scores.max(axis=-1, keepdims=True))
        o = (z / z.sum(axis=-1, keepdims=True)) @ v
        return np.swapaxes(o, 1, 2).reshape(o.shape[0], o.shape[2], -1)

    def bert_attention(qkv, mask):
        b = qkv.shape[0]
        heads = qkv.reshape(b, 8, 3, 2, 8).transpose(2, 0, 3, 1, 4)
        return attention_reference(heads[0], heads[1], heads[2], mask, 0.35)

    for b in (1, 2):
        out.append(Case(f"attention_fused_qkv_batch{b}", [normal((b, 8, 48)), normal((b, 1, 1, 8))],
                        f"""%scale = graph.constant dense<0.35> : tensor<f32>
  %0 = graph.reshape %a0 to [{b}, 8, 3, 2, 8] : tensor<{b}x8x48xf32> -> tensor<{b}x8x3x2x8xf32>
  %1 = graph.transpose %0, [2, 0, 3, 1, 4] : tensor<{b}x8x3x2x8xf32> -> tensor<3x{b}x2x8x8xf32>
  %2:3 = graph.split %1 {{axis = 0 : i64, sizes = array<i64: 1, 1, 1>}} : (tensor<3x{b}x2x8x8xf32>) -> (tensor<1x{b}x2x8x8xf32>, tensor<1x{b}x2x8x8xf32>, tensor<1x{b}x2x8x8xf32>)
  %q = graph.reshape %2#0 to [{b}, 2, 8, 8] : tensor<1x{b}x2x8x8xf32> -> tensor<{b}x2x8x8xf32>
  %k = graph.reshape %2#1 to [{b}, 2, 8, 8] : tensor<1x{b}x2x8x8xf32> -> tensor<{b}x2x8x8xf32>
  %v = graph.reshape %2#2 to [{b}, 2, 8, 8] : tensor<1x{b}x2x8x8xf32> -> tensor<{b}x2x8x8xf32>
  %kt = graph.transpose %k, [0, 1, 3, 2] : tensor<{b}x2x8x8xf32> -> tensor<{b}x2x8x8xf32>
  %s = graph.matmul %q, %kt : (tensor<{b}x2x8x8xf32>, tensor<{b}x2x8x8xf32>) -> tensor<{b}x2x8x8xf32>
  %s1 = graph.mul %s, %scale : (tensor<{b}x2x8x8xf32>, tensor<f32>) -> tensor<{b}x2x8x8xf32>
  %s2 = graph.add %s1, %a1 : (tensor<{b}x2x8x8xf32>, tensor<{b}x1x1x8xf32>) -> tensor<{b}x2x8x8xf32>
  %p = graph.softmax %s2 {{axis = 3 : i64}} : tensor<{b}x2x8x8xf32>
  %o = graph.matmul %p, %v : (tensor<{b}x2x8x8xf32>, tensor<{b}x2x8x8xf32>) -> tensor<{b}x2x8x8xf32>
  %ot = graph.transpose %o, [0, 2, 1, 3] : tensor<{b}x2x8x8xf32> -> tensor<{b}x8x2x8xf32>
  %r = graph.reshape %ot to [{b}, 8, 16] : tensor<{b}x8x2x8xf32> -> tensor<{b}x8x16xf32>""",
                        f"tensor<{b}x8x16xf32>", bert_attention))

    def gpt2_attention(qkv):
        q, k, v = (part.reshape(1, 8, 2, 8).transpose(0, 2, 1, 3) for part in np.split(qkv, 3, 2))
        return attention_reference(q, k, v, 0.0, 0.25)

    out.append(Case("attention_split_heads", [normal((1, 8, 48))],
                    """%scale = graph.constant dense<0.25> : tensor<f32>
  %p:3 = graph.split %a0 {axis = 2 : i64, sizes = array<i64: 16, 16, 16>} : (tensor<1x8x48xf32>) -> (tensor<1x8x16xf32>, tensor<1x8x16xf32>, tensor<1x8x16xf32>)
  %q0 = graph.reshape %p#0 to [1, 8, 2, 8] : tensor<1x8x16xf32> -> tensor<1x8x2x8xf32>
  %k0 = graph.reshape %p#1 to [1, 8, 2, 8] : tensor<1x8x16xf32> -> tensor<1x8x2x8xf32>
  %v0 = graph.reshape %p#2 to [1, 8, 2, 8] : tensor<1x8x16xf32> -> tensor<1x8x2x8xf32>
  %q = graph.transpose %q0, [0, 2, 1, 3] : tensor<1x8x2x8xf32> -> tensor<1x2x8x8xf32>
  %kt = graph.transpose %k0, [0, 2, 3, 1] : tensor<1x8x2x8xf32> -> tensor<1x2x8x8xf32>
  %v = graph.transpose %v0, [0, 2, 1, 3] : tensor<1x8x2x8xf32> -> tensor<1x2x8x8xf32>
  %s = graph.matmul %q, %kt : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %s1 = graph.mul %s, %scale : (tensor<1x2x8x8xf32>, tensor<f32>) -> tensor<1x2x8x8xf32>
  %w = graph.softmax %s1 {axis = 3 : i64} : tensor<1x2x8x8xf32>
  %o = graph.matmul %w, %v : (tensor<1x2x8x8xf32>, tensor<1x2x8x8xf32>) -> tensor<1x2x8x8xf32>
  %ot = graph.transpose %o, [0, 2, 1, 3] : tensor<1x2x8x8xf32> -> tensor<1x8x2x8xf32>
  %r = graph.reshape %ot to [1, 8, 16] : tensor<1x8x2x8xf32> -> tensor<1x8x16xf32>""",
                    "tensor<1x8x16xf32>", gpt2_attention))
    # A transposed result: written column-major by oneDNN on the CPU, by a transpose on CUDA.
    out.append(Case("matmul_transposed_result", [normal((4, 8)), normal((8, 6))],
                    "%m = graph.matmul %a0, %a1 : (tensor<4x8xf32>, tensor<8x6xf32>) -> tensor<4x6xf32>\n"
                    "  %r = graph.transpose %m, [1, 0] : tensor<4x6xf32> -> tensor<6x4xf32>",
                    "tensor<6x4xf32>", lambda p, q: (p @ q).T))
    out.append(Case("layer_norm", ln,
                    "%r = graph.layer_norm %a0, %a1, %a2 {axis = 2 : i64} : (tensor<2x3x8xf32>, tensor<8xf32>, tensor<8xf32>) -> tensor<2x3x8xf32>",
                    "tensor<2x3x8xf32>", layer_norm))
    # Rows longer than 1024: on CUDA a block takes each row, its warps' partial values combined
    # through shared memory.
    out.append(Case("softmax_long_rows", [normal((64, 2048), 6)],
                    "%r = graph.softmax %a0 {axis = 1 : i64} : tensor<64x2048xf32>",
                    "tensor<64x2048xf32>",
                    lambda x: np.exp(x - x.max(1, keepdims=True))
                    / np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True)))
    out.append(Case("layer_norm_long_rows", [normal((64, 4096), 3), normal((4096,)), normal((4096,))],
                    "%r = graph.layer_norm %a0, %a1, %a2 {axis = 1 : i64} : (tensor<64x4096xf32>, tensor<4096xf32>, tensor<4096xf32>) -> tensor<64x4096xf32>",
                    "tensor<64x4096xf32>", layer_norm))
    # SiLU after a convolution and after a matrix product: oneDNN's swish post-op on the CPU, a
    # generated kernel after the call on CUDA.
    def silu(v):
        return v / (1.0 + np.exp(-v))

    out.append(Case("conv_silu", [normal((1, 3, 8, 8)), normal((4, 3, 3, 3), 0.5), normal((4,))],
                    "%c = graph.conv %a0, %a1, %a2 {strides = array<i64: 1, 1>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>\n"
                    "  %s = graph.sigmoid %c : tensor<1x4x8x8xf32>\n"
                    "  %r = graph.mul %c, %s : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>",
                    "tensor<1x4x8x8xf32>",
                    lambda x, w, b: silu(reference_conv(x, w, b, (1, 1), (1, 1), (1, 1), (1, 1), 1))))
    out.append(Case("matmul_silu", [normal((4, 16)), normal((16, 8), 0.5)],
                    "%m = graph.matmul %a0, %a1 : (tensor<4x16xf32>, tensor<16x8xf32>) -> tensor<4x8xf32>\n"
                    "  %s = graph.sigmoid %m : tensor<4x8xf32>\n"
                    "  %r = graph.mul %s, %m : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>",
                    "tensor<4x8xf32>", lambda p, q: silu(p @ q)))
    # Reductions to few values over many elements: on CUDA each is split into chunks reduced by
    # many threads, then the chunks' partial values folded (kiln-split-reductions).
    out.append(Case("reduce_sum_whole", [normal((64, 4096))],
                    "%r = graph.reduce_sum %a0 {axes = array<i64: 0, 1>, keepdims = false} : (tensor<64x4096xf32>) -> tensor<f32>",
                    "tensor<f32>", lambda x: np.sum(x.astype(np.float64))))
    out.append(Case("reduce_max_long_rows", [normal((8, 65536), 5)],
                    "%r = graph.reduce_max %a0 {axes = array<i64: 1>, keepdims = true} : (tensor<8x65536xf32>) -> tensor<8x1xf32>",
                    "tensor<8x1xf32>", lambda x: x.max(axis=1, keepdims=True)))
    out.append(Case("reduce_mean_inner_dims", [normal((2, 3, 8192))],
                    "%r = graph.reduce_mean %a0 {axes = array<i64: 1, 2>, keepdims = false} : (tensor<2x3x8192xf32>) -> tensor<2xf32>",
                    "tensor<2xf32>", lambda x: x.astype(np.float64).mean(axis=(1, 2))))
    # A lone sum of long rows: a block per row on CUDA (a warp from 512 elements), not a thread.
    out.append(Case("reduce_sum_rows", [normal((64, 2048))],
                    "%r = graph.reduce_sum %a0 {axes = array<i64: 1>, keepdims = true} : (tensor<64x2048xf32>) -> tensor<64x1xf32>",
                    "tensor<64x1xf32>", lambda x: x.astype(np.float64).sum(axis=1, keepdims=True)))
    # One row (a layer norm of one token): its row loop stays a warp's, not one thread's.
    out.append(Case("layer_norm_one_row", [normal((1, 768), 3), normal((768,)), normal((768,))],
                    "%r = graph.layer_norm %a0, %a1, %a2 {axis = 1 : i64} : (tensor<1x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<1x768xf32>",
                    "tensor<1x768xf32>", layer_norm))
    out.append(Case("softmax_few_long_rows", [normal((4, 16384), 4)],
                    "%r = graph.softmax %a0 {axis = 1 : i64} : tensor<4x16384xf32>",
                    "tensor<4x16384xf32>",
                    lambda x: np.exp(x - x.max(1, keepdims=True))
                    / np.exp(x - x.max(1, keepdims=True)).sum(1, keepdims=True)))
    return out


def unsigned_cases():
    """ui8 at the function boundary and in the ops whose result depends on signedness."""
    a = RNG.integers(1, 256, (2, 5)).astype(np.uint8)
    b = RNG.integers(1, 256, (2, 5)).astype(np.uint8)
    a[0, :3], b[0, :3] = [200, 7, 255], [3, 130, 128]  # above 127: wrong as signed
    t = "tensor<2x5xui8>"
    out = [
        Case("ui8_div_rem", [a, b],
             f"%d = graph.div %a0, %a1 : ({t}, {t}) -> {t}\n"
             f"  %m = graph.rem %a0, %a1 : ({t}, {t}) -> {t}\n"
             f"  %df = graph.cast %d : {t} to f32\n"
             f"  %mf = graph.cast %m : {t} to f32\n"
             "  %k = graph.constant dense<1000.0> : tensor<f32>\n"
             "  %s = graph.mul %df, %k : (tensor<2x5xf32>, tensor<f32>) -> tensor<2x5xf32>\n"
             "  %r = graph.add %s, %mf : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>",
             "tensor<2x5xf32>", lambda x, y: (x // y).astype(np.float32) * 1000 + x % y),
        Case("ui8_max_min_compare_select_wrapping_add", [a, b],
             f"%x = graph.max %a0, %a1 : ({t}, {t}) -> {t}\n"
             f"  %n = graph.min %a0, %a1 : ({t}, {t}) -> {t}\n"
             f"  %c = graph.compare gt, %a0, %a1 : ({t}, {t}) -> tensor<2x5xi1>\n"
             f"  %d = graph.sub %x, %n : ({t}, {t}) -> {t}\n"
             f"  %w = graph.add %a0, %a1 : ({t}, {t}) -> {t}\n"
             f"  %s = graph.select %c, %d, %w : (tensor<2x5xi1>, {t}, {t}) -> {t}\n"
             f"  %r = graph.cast %s : {t} to f32",
             "tensor<2x5xf32>",
             lambda x, y: np.where(x > y, np.maximum(x, y) - np.minimum(x, y),
                                   x + y).astype(np.float32)),
        Case("ui8_casts_zero_extend", [a, positive((2, 5)) * 60],
             f"%w = graph.cast %a0 : {t} to i32\n"
             "  %wf = graph.cast %w : tensor<2x5xi32> to f32\n"
             f"  %u = graph.cast %a1 : tensor<2x5xf32> to ui8\n"
             f"  %uf = graph.cast %u : {t} to f32\n"
             "  %k = graph.constant dense<1000.0> : tensor<f32>\n"
             "  %s = graph.mul %wf, %k : (tensor<2x5xf32>, tensor<f32>) -> tensor<2x5xf32>\n"
             "  %r = graph.add %s, %uf : (tensor<2x5xf32>, tensor<2x5xf32>) -> tensor<2x5xf32>",
             "tensor<2x5xf32>",
             lambda x, f: x.astype(np.float32) * 1000 + np.trunc(f)),
        Case("ui8_reduce_max_min", [a],
             f"%x = graph.reduce_max %a0 {{axes = array<i64: 1>}} : ({t}) -> tensor<2xui8>\n"
             f"  %n = graph.reduce_min %a0 {{axes = array<i64: 1>}} : ({t}) -> tensor<2xui8>\n"
             "  %c = graph.concat %x, %n {axis = 0 : i64} : (tensor<2xui8>, tensor<2xui8>) -> tensor<4xui8>\n"
             "  %r = graph.cast %c : tensor<4xui8> to f32",
             "tensor<4xf32>",
             lambda x: np.concatenate([x.max(1), x.min(1)]).astype(np.float32)),
        Case("ui8_constant_sign_abs", [a],
             "%k = graph.constant dense<[0, 1, 128, 255, 9]> : tensor<5xui8>\n"
             f"  %m = graph.mul %a0, %k : ({t}, tensor<5xui8>) -> {t}\n"
             f"  %s = graph.sign %m : {t}\n"
             f"  %b = graph.abs %m : {t}\n"
             f"  %sum = graph.add %s, %b : ({t}, {t}) -> {t}\n"
             f"  %r = graph.cast %sum : {t} to f32",
             "tensor<2x5xf32>",
             lambda x: (np.sign(x * np.array([0, 1, 128, 255, 9], np.uint8)) +
                        x * np.array([0, 1, 128, 255, 9], np.uint8)).astype(np.float32)),
    ]
    return out


def unsigned_wide_cases():
    """ui16, ui32 and ui64 at the function boundary (uint16/uint32/uint64 .npy inputs and outputs)
    and in the ops whose result depends on signedness, on values with the top bit set."""
    out = []
    for bits, dtype in ((16, np.uint16), (32, np.uint32), (64, np.uint64)):
        top = 1 << (bits - 1)
        a = RNG.integers(1, top, (2, 5), dtype=np.uint64).astype(dtype)
        b = RNG.integers(1, 1 << (bits // 2), (2, 5), dtype=np.uint64).astype(dtype)
        a[0, :] += dtype(top)  # the top bit set: wrong as signed
        a[1, 0], b[0, :2] = dtype(top - 1), [dtype(top + 3), dtype(1)]
        s = RNG.integers(0, bits, (2, 5), dtype=np.uint64).astype(dtype)
        k = np.array([0, 1, (1 << bits) - 1, top, 9], dtype=np.uint64).astype(dtype)
        big = (positive((2, 5)) * np.float32(float(1 << bits) / 4.2)).astype(np.float32)
        e, u = f"ui{bits}", f"tensor<2x5xui{bits}>"
        i1 = "tensor<2x5xi1>"
        out += [
            Case(f"{e}_div", [a, b], f"%r = graph.div %a0, %a1 : ({u}, {u}) -> {u}", u,
                 lambda x, y: x // y),
            Case(f"{e}_rem", [a, b], f"%r = graph.rem %a0, %a1 : ({u}, {u}) -> {u}", u,
                 lambda x, y: x % y),
            Case(f"{e}_max_min_compare_select_wrapping_add", [a, b],
                 f"%x = graph.max %a0, %a1 : ({u}, {u}) -> {u}\n"
                 f"  %n = graph.min %a0, %a1 : ({u}, {u}) -> {u}\n"
                 f"  %c = graph.compare lt, %a1, %a0 : ({u}, {u}) -> {i1}\n"
                 f"  %d = graph.sub %x, %n : ({u}, {u}) -> {u}\n"
                 f"  %w = graph.add %a0, %a1 : ({u}, {u}) -> {u}\n"
                 f"  %r = graph.select %c, %d, %w : ({i1}, {u}, {u}) -> {u}", u,
                 lambda x, y: np.where(x > y, np.maximum(x, y) - np.minimum(x, y), x + y)),
            Case(f"{e}_shift_right_logical", [a, s],
                 f"%r = graph.shift_right %a0, %a1 : ({u}, {u}) -> {u}", u,
                 lambda x, y: x >> y),
            Case(f"{e}_to_f32", [a], f"%r = graph.cast %a0 : {u} to f32", "tensor<2x5xf32>",
                 lambda x: x.astype(np.float64)),
            Case(f"{e}_from_f32", [big], f"%r = graph.cast %a0 : tensor<2x5xf32> to {e}", u,
                 lambda f: np.trunc(f.astype(np.float64))),
            Case(f"{e}_reduce_max_min", [a],
                 f"%x = graph.reduce_max %a0 {{axes = array<i64: 1>}} : ({u}) -> tensor<2x{e}>\n"
                 f"  %n = graph.reduce_min %a0 {{axes = array<i64: 1>}} : ({u}) -> tensor<2x{e}>\n"
                 f"  %r = graph.concat %x, %n {{axis = 0 : i64}} : (tensor<2x{e}>, tensor<2x{e}>) -> tensor<4x{e}>",
                 f"tensor<4x{e}>", lambda x: np.concatenate([x.max(1), x.min(1)])),
            Case(f"{e}_constant_wrapping_add", [a],
                 f"%k = graph.constant dense<[{', '.join(str(int(v)) for v in k)}]> : tensor<5x{e}>\n"
                 f"  %r = graph.add %a0, %k : ({u}, tensor<5x{e}>) -> {u}", u,
                 lambda x, kk=k: x + kk),
        ]
        if bits < 64:
            out.append(Case(f"{e}_zero_extend", [a],
                            f"%w = graph.cast %a0 : {u} to i64\n"
                            f"  %v = graph.cast %a0 : {u} to ui64\n"
                            "  %vi = graph.cast %v : tensor<2x5xui64> to i64\n"
                            "  %r = graph.add %w, %vi : (tensor<2x5xi64>, tensor<2x5xi64>) -> tensor<2x5xi64>",
                            "tensor<2x5xi64>", lambda x: x.astype(np.int64) * 2))
    return out


def indexing_cases():
    """Gathers and scatters by index tensors, negative indices and duplicates included."""
    x = normal((3, 4))
    idx = RNG.integers(-4, 4, (3, 5)).astype(np.int64)
    x3 = normal((4, 2, 3))
    idx3 = RNG.integers(-4, 4, (2, 2, 3)).astype(np.int32)
    out = [
        Case("gather_elements_axis1", [x, idx],
             "%r = graph.gather_elements %a0, %a1 {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x5xi64>) -> tensor<3x5xf32>",
             "tensor<3x5xf32>", lambda a, i: np.take_along_axis(a, i % 4, axis=1)),
        Case("gather_elements_axis0_i32_dynamic", [x3, idx3],
             "%r = graph.gather_elements %a0, %a1 {axis = 0 : i64} : (tensor<?x2x3xf32>, tensor<?x2x3xi32>) -> tensor<?x2x3xf32>",
             "tensor<?x2x3xf32>", lambda a, i: np.take_along_axis(a, i % 4, axis=0),
             dynamic=[[None, 2, 3], [None, 2, 3]]),
    ]
    g = normal((2, 3, 4))
    nd = np.array([[1, -1], [0, 2], [-2, 0]], np.int64)
    out.append(Case("gather_nd_k2", [g, nd],
                    "%r = graph.gather_nd %a0, %a1 : (tensor<2x3x4xf32>, tensor<3x2xi64>) -> tensor<3x4xf32>",
                    "tensor<3x4xf32>", lambda a, i: reference_gather_nd(a, i, 0)))
    nb = np.array([[[2], [-1]], [[0], [1]]], np.int64)
    out.append(Case("gather_nd_batch_dims", [g, nb],
                    "%r = graph.gather_nd %a0, %a1 {batch_dims = 1 : i64} : (tensor<2x3x4xf32>, tensor<2x2x1xi64>) -> tensor<2x2x4xf32>",
                    "tensor<2x2x4xf32>", lambda a, i: reference_gather_nd(a, i, 1)))
    data = normal((3, 4))
    sidx = np.array([[1, -1, 2, 0], [1, 2, -3, 0]], np.int64)  # duplicates down each column
    upd = normal((2, 4))
    for mode in ("none", "add", "mul", "max", "min"):
        out.append(Case(f"scatter_elements_axis0_{mode}", [data, sidx, upd],
                        f"%r = graph.scatter_elements %a0, %a1, %a2 {{axis = 0 : i64, reduction = #graph<scatter_reduction {mode}>}} : (tensor<3x4xf32>, tensor<2x4xi64>, tensor<2x4xf32>) -> tensor<3x4xf32>",
                        "tensor<3x4xf32>",
                        lambda a, i, u, mode=mode: reference_scatter_elements(a, i, u, 0, mode)))
    sidx1 = np.array([[3, -1, 0], [2, 2, 1], [0, 1, -4]], np.int32)
    upd1 = normal((3, 3))
    out.append(Case("scatter_elements_axis1_i32_add", [data, sidx1, upd1],
                    "%r = graph.scatter_elements %a0, %a1, %a2 {axis = 1 : i64, reduction = #graph<scatter_reduction add>} : (tensor<3x4xf32>, tensor<3x3xi32>, tensor<3x3xf32>) -> tensor<3x4xf32>",
                    "tensor<3x4xf32>",
                    lambda a, i, u: reference_scatter_elements(a, i, u, 1, "add")))
    nd_data = normal((4, 3, 2))
    nd_idx = np.array([[1], [-1], [1]], np.int64)
    nd_upd = normal((3, 3, 2))
    for mode in ("none", "add", "mul", "max", "min"):
        out.append(Case(f"scatter_nd_slices_{mode}", [nd_data, nd_idx, nd_upd],
                        f"%r = graph.scatter_nd %a0, %a1, %a2 {{reduction = #graph<scatter_reduction {mode}>}} : (tensor<4x3x2xf32>, tensor<3x1xi64>, tensor<3x3x2xf32>) -> tensor<4x3x2xf32>",
                        "tensor<4x3x2xf32>",
                        lambda a, i, u, mode=mode: reference_scatter_nd(a, i, u, mode)))
    nd_idx2 = np.array([[0, 2], [-1, 0], [0, 2]], np.int64)
    nd_upd2 = normal((3, 2))
    out.append(Case("scatter_nd_elements_k2_add", [nd_data, nd_idx2, nd_upd2],
                    "%r = graph.scatter_nd %a0, %a1, %a2 {reduction = #graph<scatter_reduction add>} : (tensor<4x3x2xf32>, tensor<3x2xi64>, tensor<3x2xf32>) -> tensor<4x3x2xf32>",
                    "tensor<4x3x2xf32>", lambda a, i, u: reference_scatter_nd(a, i, u, "add")))
    # Dynamic slice sizes: the limit is unbounded and clamps to the size --shape binds.
    dyn = normal((5, 4))
    out.append(Case("slice_dynamic_unbounded_limit", [dyn],
                    "%r = graph.slice %a0 {starts = array<i64: 1, 1>, limits = array<i64: 9223372036854775807, 4>, strides = array<i64: 2, 2>} : (tensor<?x4xf32>) -> tensor<?x2xf32>",
                    "tensor<?x2xf32>", lambda a: a[1::2, 1:4:2], dynamic=[[None, 4]]))
    out.append(Case("pad_reflect_dynamic", [dyn],
                    "%r = graph.pad reflect %a0 low [2, 1] high [1, 3] : (tensor<?x4xf32>) -> tensor<?x8xf32>",
                    "tensor<?x8xf32>", lambda a: np.pad(a, [(2, 1), (1, 3)], mode="reflect"),
                    dynamic=[[None, 4]]))
    out.append(Case("pad_edge_dynamic", [dyn],
                    "%r = graph.pad edge %a0 low [1, 0] high [2, 2] : (tensor<?x?xf32>) -> tensor<?x?xf32>",
                    "tensor<?x?xf32>", lambda a: np.pad(a, [(1, 2), (0, 2)], mode="edge"),
                    dynamic=[[None, None]]))
    return out


def scan_cases():
    """Arg max / min, cumsum and top-k, with ties (small integer values) where order matters."""
    ties = RNG.integers(0, 3, (3, 5)).astype(np.float32)
    ties3 = RNG.integers(-2, 2, (4, 3, 2)).astype(np.float32)

    def last_index(fn, a, axis):
        return a.shape[axis] - 1 - fn(np.flip(a, axis), axis=axis)

    out = [
        Case("arg_max_first_of_ties", [ties],
             "%i = graph.arg_max %a0 {axis = 1 : i64} : (tensor<3x5xf32>) -> tensor<3xi64>\n"
             "  %r = graph.cast %i : tensor<3xi64> to f32",
             "tensor<3xf32>", lambda a: np.argmax(a, axis=1)),
        Case("arg_max_last_of_ties_keepdims", [ties3],
             "%i = graph.arg_max %a0 {axis = 0 : i64, keepdims = true, select_last_index = true} : (tensor<4x3x2xf32>) -> tensor<1x3x2xi64>\n"
             "  %r = graph.cast %i : tensor<1x3x2xi64> to f32",
             "tensor<1x3x2xf32>", lambda a: last_index(np.argmax, a, 0)[None]),
        Case("arg_min_first_of_ties_dynamic", [ties3],
             "%i = graph.arg_min %a0 {axis = 1 : i64} : (tensor<?x3x2xf32>) -> tensor<?x2xi64>\n"
             "  %r = graph.cast %i : tensor<?x2xi64> to f32",
             "tensor<?x2xf32>", lambda a: np.argmin(a, axis=1), dynamic=[[None, 3, 2]]),
        Case("arg_min_last_of_ties_i32", [ties.astype(np.int32)],
             "%i = graph.arg_min %a0 {axis = 1 : i64, keepdims = true, select_last_index = true} : (tensor<3x5xi32>) -> tensor<3x1xi64>\n"
             "  %r = graph.cast %i : tensor<3x1xi64> to f32",
             "tensor<3x1xf32>", lambda a: last_index(np.argmin, a, 1)[:, None]),
    ]
    u = RNG.integers(0, 256, (2, 6)).astype(np.uint8)
    u[0, :2] = [250, 3]
    out.append(Case("arg_max_ui8", [u],
                    "%i = graph.arg_max %a0 {axis = 1 : i64} : (tensor<2x6xui8>) -> tensor<2xi64>\n"
                    "  %r = graph.cast %i : tensor<2xi64> to f32",
                    "tensor<2xf32>", lambda a: np.argmax(a, axis=1)))

    def cumsum(a, axis, exclusive, reverse):
        y = np.flip(a, axis) if reverse else a
        c = np.cumsum(y, axis=axis, dtype=np.float64)
        if exclusive:
            c = np.concatenate([np.zeros_like(np.take(c, [0], axis)),
                                np.delete(c, -1, axis)], axis)
        return np.flip(c, axis) if reverse else c

    x = normal((3, 4))
    for exclusive in (False, True):
        for reverse in (False, True):
            out.append(Case(f"cumsum_exclusive_{str(exclusive).lower()}_reverse_{str(reverse).lower()}",
                            [x],
                            f"%r = graph.cumsum %a0 {{axis = 1 : i64, exclusive = {str(exclusive).lower()}, reverse = {str(reverse).lower()}}} : tensor<3x4xf32>",
                            "tensor<3x4xf32>",
                            lambda a, e=exclusive, r=reverse: cumsum(a, 1, e, r)))
    xi = ints((4, 2, 3))
    out.append(Case("cumsum_i32_axis0_dynamic_reverse", [xi],
                    "%c = graph.cumsum %a0 {axis = 0 : i64, reverse = true} : tensor<?x2x3xi32>\n"
                    "  %r = graph.cast %c : tensor<?x2x3xi32> to f32",
                    "tensor<?x2x3xf32>", lambda a: cumsum(a, 0, False, True),
                    dynamic=[[None, 2, 3]]))
    tk = RNG.integers(0, 4, (3, 6)).astype(np.float32)
    out.append(Case("top_k_largest_ties_lower_index_first", [tk],
                    "%v, %i = graph.top_k %a0 {axis = 1 : i64, k = 4 : i64} : (tensor<3x6xf32>) -> (tensor<3x4xf32>, tensor<3x4xi64>)\n"
                    "  %if = graph.cast %i : tensor<3x4xi64> to f32\n"
                    "  %r = graph.concat %v, %if {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x8xf32>",
                    "tensor<3x8xf32>",
                    lambda a: np.concatenate(reference_top_k(a, 4, 1, True), axis=1)))
    tk3 = RNG.integers(-3, 3, (5, 2, 3)).astype(np.float32)
    out.append(Case("top_k_smallest_axis0_dynamic", [tk3],
                    "%v, %i = graph.top_k %a0 {axis = 0 : i64, k = 3 : i64, largest = false} : (tensor<5x?x3xf32>) -> (tensor<3x?x3xf32>, tensor<3x?x3xi64>)\n"
                    "  %if = graph.cast %i : tensor<3x?x3xi64> to f32\n"
                    "  %r = graph.concat %v, %if {axis = 2 : i64} : (tensor<3x?x3xf32>, tensor<3x?x3xf32>) -> tensor<3x?x6xf32>",
                    "tensor<3x?x6xf32>",
                    lambda a: np.concatenate(reference_top_k(a, 3, 0, False), axis=2),
                    dynamic=[[5, None, 3]]))
    uk = RNG.integers(0, 256, (2, 5)).astype(np.uint8)
    uk[0, :3] = [255, 128, 7]
    out.append(Case("top_k_ui8", [uk],
                    "%v, %i = graph.top_k %a0 {axis = 1 : i64, k = 2 : i64} : (tensor<2x5xui8>) -> (tensor<2x2xui8>, tensor<2x2xi64>)\n"
                    "  %vf = graph.cast %v : tensor<2x2xui8> to f32\n"
                    "  %if = graph.cast %i : tensor<2x2xi64> to f32\n"
                    "  %r = graph.concat %vf, %if {axis = 1 : i64} : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x4xf32>",
                    "tensor<2x4xf32>",
                    lambda a: np.concatenate(reference_top_k(a, 2, 1, True), axis=1)))
    return out


def resize_cases():
    """Resize in every mode and coordinate transform, up and down."""
    out = []
    small = normal((1, 2, 3, 4))
    large = normal((1, 2, 5, 6))
    specs = [
        # name, input, sizes, scales, mode, transform, rounding, cubic a, exclude outside
        ("nearest_asymmetric_floor", small, (1, 2, 6, 8), (1, 1, 2, 2), "nearest", "asymmetric",
         "floor", -0.75, False),
        ("nearest_half_pixel_prefer_ceil_down", large, (1, 2, 3, 4), (1, 1, 0.6, 4 / 6),
         "nearest", "half_pixel", "round_prefer_ceil", -0.75, False),
        ("nearest_align_corners_prefer_floor", small, (1, 2, 5, 7), (1, 1, 5 / 3, 7 / 4),
         "nearest", "align_corners", "round_prefer_floor", -0.75, False),
        ("nearest_pytorch_half_pixel_ceil", small, (1, 2, 4, 3), (1, 1, 4 / 3, 0.75), "nearest",
         "pytorch_half_pixel", "ceil", -0.75, False),
        ("linear_half_pixel_up", small, (1, 2, 5, 7), (1, 1, 5 / 3, 7 / 4), "linear",
         "half_pixel", "round_prefer_floor", -0.75, False),
        ("linear_align_corners_down", large, (1, 2, 3, 4), (1, 1, 0.6, 4 / 6), "linear",
         "align_corners", "round_prefer_floor", -0.75, False),
        ("linear_asymmetric", small, (1, 2, 6, 6), (1, 1, 2, 1.5), "linear", "asymmetric",
         "round_prefer_floor", -0.75, False),
        ("linear_pytorch_half_pixel_to_one", small, (1, 2, 1, 7), (1, 1, 1 / 3, 7 / 4), "linear",
         "pytorch_half_pixel", "round_prefer_floor", -0.75, False),
        ("linear_half_pixel_symmetric", small, (1, 2, 5, 7), (1, 1, 1.7, 1.8), "linear",
         "half_pixel_symmetric", "round_prefer_floor", -0.75, False),
        ("cubic_half_pixel", small, (1, 2, 6, 7), (1, 1, 2, 7 / 4), "cubic", "half_pixel",
         "round_prefer_floor", -0.75, False),
        ("cubic_align_corners_exclude_outside", large, (1, 2, 4, 9), (1, 1, 0.8, 1.5), "cubic",
         "align_corners", "round_prefer_floor", -0.5, True),
        ("cubic_asymmetric_exclude_outside", small, (1, 2, 6, 5), (1, 1, 2, 1.25), "cubic",
         "asymmetric", "round_prefer_floor", -0.75, True),
    ]
    for name, x, sizes, scales, mode, transform, rounding, a, exclude in specs:
        tin, tout = mlir_type(x), mlir_type(np.zeros(sizes, np.float32))
        scale_text = ", ".join(repr(float(np.float32(s))) for s in scales)
        out.append(Case(
            f"resize_{name}", [x],
            f"%r = graph.resize %a0 {{sizes = array<i64: {', '.join(map(str, sizes))}>, "
            f"scales = array<f32: {scale_text}>, mode = #graph<resize_mode {mode}>, "
            f"coordinate_transform = #graph<coordinate_transform {transform}>, "
            f"nearest_rounding = #graph<nearest_rounding {rounding}>, cubic_coeff_a = {a} : f32, "
            f"exclude_outside = {str(exclude).lower()}}} : ({tin}) -> {tout}",
            tout,
            lambda v, sizes=sizes, scales=scales, mode=mode, transform=transform,
            rounding=rounding, a=a, exclude=exclude: reference_resize(
                v, sizes, [np.float32(s) for s in scales], mode, transform, rounding, a,
                exclude)))
    return out


def conv_transpose_cases():
    """Transposed convolution with strides, output padding, padding, dilation, groups and bias."""
    out = []
    x, w, b = normal((2, 4, 5, 5)), normal((4, 3, 3, 3)), normal((3,))
    out.append(Case("conv_transpose_stride2_output_padding_bias", [x, w, b],
                    "%r = graph.conv_transpose %a0, %a1, %a2 {strides = array<i64: 2, 2>, dilations = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, output_padding = array<i64: 1, 1>} : (tensor<2x4x5x5xf32>, tensor<4x3x3x3xf32>, tensor<3xf32>) -> tensor<2x3x10x10xf32>",
                    "tensor<2x3x10x10xf32>",
                    lambda p, q, c: reference_conv_transpose(p, q, c, (2, 2), (1, 1), (1, 1), (1, 1),
                                                             (1, 1), 1)))
    x, w = normal((1, 4, 4, 3)), normal((4, 2, 3, 2))
    out.append(Case("conv_transpose_groups_dilation_asymmetric_pads", [x, w],
                    "%r = graph.conv_transpose %a0, %a1 {strides = array<i64: 3, 2>, dilations = array<i64: 2, 1>, pad_low = array<i64: 0, 1>, pad_high = array<i64: 2, 0>, output_padding = array<i64: 1, 0>, groups = 2 : i64} : (tensor<1x4x4x3xf32>, tensor<4x2x3x2xf32>) -> tensor<1x4x13x5xf32>",
                    "tensor<1x4x13x5xf32>",
                    lambda p, q: reference_conv_transpose(p, q, None, (3, 2), (2, 1), (0, 1), (2, 0),
                                                          (1, 0), 2)))
    x, w = normal((2, 3, 6)), normal((3, 2, 4))
    out.append(Case("conv_transpose_1d_dynamic_batch", [x, w],
                    "%r = graph.conv_transpose %a0, %a1 {strides = array<i64: 2>, dilations = array<i64: 1>, pad_low = array<i64: 1>, pad_high = array<i64: 2>, output_padding = array<i64: 0>} : (tensor<?x3x6xf32>, tensor<3x2x4xf32>) -> tensor<?x2x11xf32>",
                    "tensor<?x2x11xf32>",
                    lambda p, q: reference_conv_transpose(p, q, None, (2,), (1,), (1,), (2,), (0,), 1),
                    dynamic=[[None, 3, 6], None]))
    return out


GROUPS = {"core": cases, "unsigned": unsigned_cases, "unsigned_wide": unsigned_wide_cases,
          "indexing": indexing_cases, "data_movement_fusion": data_movement_fusion_cases,
          "scan": scan_cases, "resize": resize_cases, "conv_transpose": conv_transpose_cases}

# The NumPy dtype `kiln run` writes an output of each element type as.
NUMPY_TYPES = {"f32": "float32", "i32": "int32", "i64": "int64", "ui8": "uint8", "ui16": "uint16",
               "ui32": "uint32", "ui64": "uint64", "i1": "bool"}
SSA_NAME = re.compile(r"%([A-Za-z_$.][\w$.]*|\d+)")


def element_type(tensor_type):
    """`f32` for `tensor<2x?xf32>`."""
    return tensor_type[:-1].split("x")[-1].split("<")[-1]


def generate(out_dir, group="core"):
    """One entry function for the whole group: each case's body, its values renamed %CASE.NAME,
    reads the case's arguments and yields one of the function's results."""
    os.makedirs(os.path.join(out_dir, "inputs"), exist_ok=True)
    params, body, results, returned, expected = [], [], [], [], []
    driver = {"inputs": [], "shapes": []}
    for case in GROUPS[group]():
        for i, (x, dims) in enumerate(zip(case.inputs, case.dynamic)):
            name = f"{case.name}_{i}"
            params.append(f"%{case.name}.a{i}: {mlir_type(x, dims)} {{kiln.name = \"{name}\"}}")
            np.save(os.path.join(out_dir, "inputs", name + ".npy"), x)
            driver["inputs"].append(name)
            if dims is not None:
                driver["shapes"].append([name, "x".join(str(d) for d in x.shape)])
        body.append("  " + SSA_NAME.sub(lambda m, c=case.name: f"%{c}.{m.group(1)}", case.body))
        results.append(f"{case.result_type} {{kiln.name = \"{case.name}\"}}")
        returned.append((f"%{case.name}.r", case.result_type))
        with np.errstate(all="ignore"):
            reference = np.asarray(case.reference(*case.inputs), dtype=np.float64)
        expected.append({"name": case.name, "shape": list(reference.shape),
                         "dtype": NUMPY_TYPES[element_type(case.result_type)],
                         "values": [None if math.isnan(v) else v
                                    for v in reference.reshape(-1).tolist()]})
    program = ("func.func @main(" + ",\n    ".join(params) + ")\n    -> (" +
               ",\n        ".join(results) + ") {\n" + "\n".join(body) + "\n  return " +
               ", ".join(v for v, _ in returned) + " : " + ", ".join(t for _, t in returned) +
               "\n}\n")
    with open(os.path.join(out_dir, "cases.mlir"), "w") as f:
        f.write(program)
    with open(os.path.join(out_dir, "expected.json"), "w") as f:
        json.dump(expected, f)
    with open(os.path.join(out_dir, "driver.json"), "w") as f:
        json.dump(driver, f)


def check(expected_path, output_dir):
    with open(expected_path) as f:
        expected = json.load(f)
    passed, failed = 0, 0
    for case in expected:
        path = os.path.join(output_dir, case["name"] + ".npy")
        if not os.path.exists(path):
            print(f"FAIL {case['name']}: no output {path}")
            failed += 1
            continue
        result = np.load(path)
        got = result.astype(np.float64).reshape(-1).tolist()
        want = [math.nan if v is None else v for v in case["values"]]
        ok = list(result.shape) == case["shape"] and result.dtype == case["dtype"] and all(
            (math.isnan(w) and math.isnan(g)) or (math.isinf(w) and g == w) or
            abs(g - w) <= 1e-5 + 1e-4 * abs(w) for g, w in zip(got, want))
        if ok:
            passed += 1
        else:
            failed += 1
            print(f"FAIL {case['name']}: expected {case['dtype']}{case['shape']} {want} "
                  f"got {result.dtype}{list(result.shape)} {got}")
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed == len(expected) else 1


if __name__ == "__main__":
    if sys.argv[1] == "generate":
        generate(*sys.argv[2:4])
    else:
        sys.exit(check(sys.argv[2], sys.argv[3]))
