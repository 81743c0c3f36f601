#!/usr/bin/python3
"""Writes library_reference_fixtures.h: inputs and PyTorch's results for the CUDA library calls.

Run with Debian's PyTorch (apt-get install python3-torch), from this directory:
    /usr/bin/python3 gen_library_reference_fixtures.py > library_reference_fixtures.h
Each case holds seeded random operands and what torch computes from them (in float64 for f32
calls, in float32 rounded once to the result type for f16 and bf16 ones), so that the tests check
runtime/src/cuda/sim/library_reference.cpp against PyTorch, not against itself. The shapes are
repeated in the tests, which check the array sizes against them.
"""

import textwrap

import numpy as np
import torch
import torch.nn.functional as F

torch.manual_seed(20250117)


def normal(*shape):
    return torch.randn(*shape, dtype=torch.float32)


def tf32(tensor):
    """Rounds float32 values to tf32 as cvt.rna.tf32.f32 does: to nearest, ties away from zero."""
    bits = tensor.numpy().view(np.uint32).astype(np.uint64)
    rounded = ((bits + 0x1000) & 0xFFFFE000).astype(np.uint32)
    return torch.from_numpy(rounded.view(np.float32).copy())


def f64(tensor):
    return tensor.to(torch.float64)


CASES = []  # (name, what it is, [(suffix, tensor)])


def case(name, what, **arrays):
    CASES.append((name, what, list(arrays.items())))


# --- cublaslt.matmul, f32 -------------------------------------------------------------------

# trans_a and trans_b, alpha 0.5 ("linear") and an addend: D = 0.5 a^T b^T + addend.
a, b, addend = normal(7, 5), normal(6, 7), normal(5, 6)
case("MatmulTransposes", "a stored 7x5 and b stored 6x7, both transposed (m=5 k=7 n=6), "
     "alpha 0.5, an addend", a=a, b=b, addend=addend,
     d=0.5 * f64(a).T @ f64(b).T + f64(addend))

# a batched [3, 4, 9] against one b [9, 10] (batch stride 0), a bias and ReLU.
a, b, bias = normal(3, 4, 9), normal(9, 10), normal(10)
case("MatmulBroadcastB", "a 3x4x9 against b 9x10 broadcast over the batch, a bias, ReLU",
     a=a, b=b, bias=bias, d=torch.relu(f64(a) @ f64(b) + f64(bias)))

# one a [3, 8] against a batched b [2, 8, 5] (a's batch stride 0), a bias and GELU (tanh form).
a, b, bias = normal(3, 8), normal(2, 8, 5), normal(5)
case("MatmulBroadcastAGelu", "a 3x8 broadcast against b 2x8x5, a bias, GELU in the tanh form",
     a=a, b=b, bias=bias,
     d=F.gelu(f64(a) @ f64(b) + f64(bias), approximate="tanh"))

# allow_tf32: the operands are rounded to tf32 before an exact product.
a, b = normal(6, 40), normal(40, 3)
case("MatmulTf32", "a 6x40 times b 40x3 with allow_tf32: the product of the tf32-rounded "
     "operands, and the f32 product", a=a, b=b, d=f64(tf32(a)) @ f64(tf32(b)),
     d_f32=f64(a) @ f64(b))

# --- cublaslt.matmul, f16 and bf16 --------------------------------------------------------

for type_name, dtype in (("F16", torch.float16), ("Bf16", torch.bfloat16)):
    a, b, bias, addend = (normal(5, 24).to(dtype), normal(24, 11).to(dtype),
                          normal(11).to(dtype), normal(5, 11).to(dtype))
    d = torch.relu(a.float() @ b.float() + bias.float() + addend.float()).to(dtype)
    case("Matmul" + type_name, "%s: a 5x24 times b 24x11, a bias, an addend, ReLU" % dtype,
         a=a, b=b, bias=bias, addend=addend, d=d)

# --- cudnn.convolution, f32 ---------------------------------------------------------------

# Strides 2, dilations 2 and asymmetric pads (top 1, bottom 2, left 0, right 1), a bias.
x, w, bias = normal(2, 3, 9, 11), normal(4, 3, 3, 3), normal(4)
y = F.conv2d(F.pad(f64(x), (0, 1, 1, 2)), f64(w), f64(bias), stride=2, dilation=2)
case("ConvStridedDilatedPadded", "x 2x3x9x11, w 4x3x3x3, strides 2x2, dilations 2x2, pads "
     "begin 1,0 end 2,1, a bias", x=x, w=w, bias=bias, y=y)

# Two groups, pads 1, a bias, an addend and ReLU.
x, w, bias, addend = normal(1, 4, 7, 7), normal(6, 2, 3, 3), normal(6), normal(1, 6, 7, 7)
y = torch.relu(F.conv2d(f64(x), f64(w), f64(bias), padding=1, groups=2) + f64(addend))
case("ConvGroups", "x 1x4x7x7, w 6x2x3x3 in 2 groups, pads 1, a bias, an addend, ReLU",
     x=x, w=w, bias=bias, addend=addend, y=y)

# Depthwise: 5 groups of one channel, stride 2, pads 1 (begin) and 0 (end), no bias.
x, w = normal(1, 5, 8, 8), normal(5, 1, 3, 3)
y = F.conv2d(F.pad(f64(x), (1, 0, 1, 0)), f64(w), stride=2, groups=5)
case("ConvDepthwise", "x 1x5x8x8, w 5x1x3x3 in 5 groups, strides 2x2, pads begin 1,1 end 0,0",
     x=x, w=w, y=y)

# 3-D: strides 1,2,1, dilations 1,1,2, pads begin 1,0,1 end 0,1,1, a bias and ReLU.
x, w, bias = normal(1, 2, 5, 6, 7), normal(3, 2, 2, 3, 3), normal(3)
y = torch.relu(F.conv3d(F.pad(f64(x), (1, 1, 0, 1, 1, 0)), f64(w), f64(bias), stride=(1, 2, 1),
                        dilation=(1, 1, 2)))
case("Conv3d", "x 1x2x5x6x7, w 3x2x2x3x3, strides 1x2x1, dilations 1x1x2, pads begin 1,0,1 "
     "end 0,1,1, a bias, ReLU", x=x, w=w, bias=bias, y=y)

# 1-D as 2-D with a unit height: stride 3, dilation 2, pads 2 (begin) and 1 (end), an addend.
x, w = normal(2, 3, 20), normal(4, 3, 5)
y_1d = F.conv1d(F.pad(f64(x), (2, 1)), f64(w), stride=3, dilation=2)
addend = normal(*y_1d.shape)
case("Conv1d", "x 2x3x20 (as 2x3x1x20), w 4x3x5 (as 4x3x1x5), stride 3, dilation 2, pads begin "
     "2 end 1, an addend", x=x, w=w, addend=addend, y=y_1d + f64(addend))

# --- cudnn.convolution, f16 and bf16 ------------------------------------------------------

for type_name, dtype in (("F16", torch.float16), ("Bf16", torch.bfloat16)):
    x, w, bias = normal(1, 4, 6, 6).to(dtype), normal(6, 2, 3, 3).to(dtype), normal(6).to(dtype)
    addend = normal(1, 6, 6, 6).to(dtype)
    y = torch.relu(F.conv2d(x.float(), w.float(), bias.float(), padding=1, groups=2) +
                   addend.float()).to(dtype)
    case("Conv" + type_name, "%s: x 1x4x6x6, w 6x2x3x3 in 2 groups, pads 1, a bias, an addend, "
         "ReLU" % dtype, x=x, w=w, bias=bias, addend=addend, y=y)


def c_array(tensor):
    flat = tensor.detach().contiguous().reshape(-1)
    if flat.dtype in (torch.float16, torch.bfloat16):
        bits = flat.view(torch.int16).numpy().view(np.uint16)
        return "uint16_t", ["0x%04x" % int(v) for v in bits]
    # numpy prints a float32 in the fewest digits that read back as the same float32.
    values = flat.to(torch.float32).numpy()
    return "float", [str(v) + "f" for v in values]


print("//===- library_reference_fixtures.h - PyTorch's results for the library calls -===//")
print("//")
print("// Generated by tests/runtime/gen_library_reference_fixtures.py with PyTorch %s; do not "
      "edit." % torch.__version__)
print("// Each case's arrays are row-major: the operands, then the expected result (float64")
print("// results rounded to float; f16 and bf16 arrays as bit patterns). Float literals have the")
print("// fewest digits that read back as the same float.")
print("//")
print("//===----------------------------------------------------------------------===//")
print()
print("#ifndef KILN_TESTS_RUNTIME_LIBRARY_REFERENCE_FIXTURES_H_")
print("#define KILN_TESTS_RUNTIME_LIBRARY_REFERENCE_FIXTURES_H_")
print()
print("#include <cstdint>")
print()
print("namespace kiln::testing {")
for name, what, arrays in CASES:
    print()
    print("// %s." % (what[0].upper() + what[1:]))
    for suffix, tensor in arrays:
        c_type, values = c_array(tensor)
        label = "".join(part.capitalize() for part in suffix.split("_"))
        print("inline constexpr %s k%s%s[] = {" % (c_type, name, label))
        print(textwrap.fill(", ".join(values) + "};", width=100, initial_indent="    ",
                            subsequent_indent="    ", break_on_hyphens=False))
print()
print("}  // namespace kiln::testing")
print()
print("#endif  // KILN_TESTS_RUNTIME_LIBRARY_REFERENCE_FIXTURES_H_")
