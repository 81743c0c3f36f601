#!/usr/bin/python3
"""Writes npy_fixtures.h: .npy files made by NumPy, inlined as C++ byte strings.

Run with a Python that has NumPy, from this directory:
    /usr/bin/python3 gen_npy_fixtures.py > npy_fixtures.h
Each fixture holds the exact bytes numpy wrote and the values it holds, so the
tests check Kiln's reader and writer against NumPy, not against themselves.
"""

import io
import textwrap

import numpy as np


def npy_bytes(array, version=None):
    buffer = io.BytesIO()
    np.lib.format.write_array(buffer, array, version=version, allow_pickle=False)
    return buffer.getvalue()


def byte_literal(data):
    """Renders bytes as C++ string literal pieces: the printable header as text, the rest as \\x."""
    lines = []
    magic_end = 10 if data[6] == 1 else 12
    header_end = magic_end + int.from_bytes(data[8:magic_end], "little")
    lines.append("".join("\\x%02x" % b for b in data[:magic_end]))
    header = data[magic_end:header_end].decode("latin1")
    lines.append(header.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n"))
    payload = data[header_end:]
    for start in range(0, len(payload), 16):
        lines.append("".join("\\x%02x" % b for b in payload[start:start + 16]))
    return "\n".join('    "%s"' % line for line in lines)


def c_values(array):
    flat = np.ascontiguousarray(array).reshape(-1)
    if flat.dtype.kind == "f" and flat.dtype.itemsize == 2:
        return [hex(int(v)) for v in flat.astype("<f2").view("<u2")]
    if flat.dtype.kind == "f":
        return [float(v).hex() for v in flat.astype(np.float64)]
    if flat.dtype.kind == "b":
        return ["true" if v else "false" for v in flat]
    if flat.dtype.kind == "V":
        return [hex(int.from_bytes(bytes(v), "little")) for v in flat]
    suffix = ("ULL" if flat.dtype.kind == "u" else "LL") if flat.dtype.itemsize == 8 else ""
    return [str(int(v)) + suffix for v in flat]


C_TYPES = {
    "f4": "float", "f8": "double", "f2": "uint16_t", "i8": "int64_t", "i4": "int32_t",
    "i2": "int16_t", "i1": "int8_t", "u1": "uint8_t", "b1": "bool", "V2": "uint16_t",
    "V1": "uint8_t", "u2": "uint16_t", "u4": "uint32_t", "u8": "uint64_t",
}

rng = np.random.default_rng(20240611)
big_i4 = (rng.integers(-2**31, 2**31, size=(2, 3), dtype=np.int64)).astype(">i4")
bf16_bits = (rng.standard_normal(5).astype(np.float32).view(np.uint32) >> 16).astype("<u2")
f8_bits = rng.integers(1, 127, size=4, dtype=np.uint8)

# (name, what the array is, the array, the version to write, the canonical little-endian C-order
# array numpy.save would write for the same values, or None when the file is already canonical)
CASES = [
    ("F32Matrix", "a 2x3 float32 matrix of seeded normals",
     rng.standard_normal((2, 3)).astype("<f4"), None),
    ("F16Vector", "a float16 vector of seeded normals",
     rng.standard_normal(4).astype("<f2"), None),
    ("F64Scalar", "a 0-d float64 array", np.array(-2.718281828459045, dtype="<f8"), None),
    ("I64BigEndian", "a big-endian int64 vector",
     np.array([1, -2, 1 << 40, -(1 << 62) + 7], dtype=">i8"), None),
    ("I32Empty", "an int32 array of shape (2, 0)", np.zeros((2, 0), dtype="<i4"), None),
    ("I16Fortran", "a Fortran-order int16 3x2 matrix",
     np.asfortranarray((np.arange(1, 7, dtype="<i2") * -3 + 1000).reshape(3, 2)), None),
    ("I32BigEndianFortran", "a big-endian Fortran-order int32 2x3 matrix of seeded integers",
     np.asfortranarray(big_i4), None),
    ("F32Fortran3d", "a Fortran-order float32 2x3x4 array of seeded normals",
     np.asfortranarray(rng.standard_normal((2, 3, 4)).astype("<f4")), None),
    ("I8Vector", "an int8 vector of seeded integers",
     rng.integers(-128, 128, size=5, dtype=np.int8), None),
    ("U8Cube", "a 2x2x2 uint8 array of seeded integers",
     rng.integers(1, 256, size=(2, 2, 2), dtype=np.uint8), None),
    ("BoolVector", "a bool vector", np.array([True, False, True, True, False]), None),
    ("F32Rank4", "a 1x2x1x3 float32 array of seeded uniforms",
     rng.uniform(-5, 5, size=(1, 2, 1, 3)).astype("<f4"), None),
    ("F32Rank15", "a rank-15 float32 array of seeded normals, whose header reaches 192 bytes only "
     "with NumPy's growth padding",
     rng.standard_normal((2,) + (1,) * 13 + (3,)).astype("<f4"), None),
    ("U8FullPadding", "a rank-14 uint8 array of seeded integers whose unpadded header ends on a "
     "64-byte boundary, so NumPy pads it by a full 64 bytes",
     rng.integers(1, 256, size=(2,) + (1,) * 12 + (100,), dtype=np.uint8), None),
    ("F32Version2", "a float32 vector written as format version 2.0",
     rng.standard_normal(3).astype("<f4"), (2, 0)),
    ("F32Version3", "a float32 vector written as format version 3.0",
     rng.standard_normal(3).astype("<f4"), (3, 0)),
    ("F64BigEndian", "a big-endian float64 2x2 matrix of seeded normals",
     rng.standard_normal((2, 2)).astype(">f8"), None),
    ("F16BigEndian", "a big-endian float16 vector of seeded normals",
     rng.standard_normal(3).astype(">f2"), None),
    ("RawV2", "bfloat16 bit patterns of seeded normals as a void V2 array",
     np.frombuffer(bf16_bits.tobytes(), dtype="V2"), None),
    ("RawV1", "float8 bit patterns as a void V1 array",
     np.frombuffer(f8_bits.tobytes(), dtype="V1"), None),
    ("U2Vector", "a uint16 vector (u16, or raw bits for bf16)",
     bf16_bits, None),
    ("U4Vector", "a uint32 vector", np.array([7, 8], dtype="<u4"), None),
    ("U64Vector", "a uint64 vector with values above INT64_MAX",
     np.array([1, 2**63 + 5, 2**64 - 1], dtype="<u8"), None),
    ("U32BigEndian", "a big-endian uint32 vector with the top bit set",
     np.array([0x80000001, 3], dtype=">u4"), None),
]

print("//===- npy_fixtures.h - .npy files written by NumPy for the tests ---------===//")
print("//")
print("// Generated by tests/runtime/gen_npy_fixtures.py with NumPy %s; do not edit." % np.__version__)
print("// Each kNpy<Name> holds the bytes of a .npy file written by NumPy, k<Name>Values the")
print("// values it holds in row-major order (float16 and raw types as bit patterns), and")
print("// kNpy<Name>Canonical, where present, what numpy.save writes for the same values as a")
print("// little-endian C-order array.")
print("//")
print("//===----------------------------------------------------------------------===//")
print()
print("#ifndef KILN_TESTS_RUNTIME_NPY_FIXTURES_H_")
print("#define KILN_TESTS_RUNTIME_NPY_FIXTURES_H_")
print()
print("#include <cstdint>")
print("#include <string_view>")
print()
print("namespace kiln::testing {")
for name, what, array, version in CASES:
    data = npy_bytes(array, version)
    print()
    print("/// %s: numpy dtype '%s', shape %s." % (what[0].upper() + what[1:], array.dtype.str,
                                                  tuple(array.shape)))
    print("inline constexpr std::string_view kNpy%s{" % name)
    print(byte_literal(data) + ",")
    print("    %d};" % len(data))
    key = array.dtype.str[1:]
    values = c_values(array)
    if values:
        print("inline constexpr %s k%sValues[] = {" % (C_TYPES[key], name))
        print(textwrap.fill(", ".join(values) + "};", width=100, initial_indent="    ",
                            subsequent_indent="    "))
    native = array.dtype.newbyteorder("<") if array.dtype.itemsize > 1 else array.dtype
    canonical = np.ascontiguousarray(array.astype(native))
    if array.dtype.kind != "V" and (version is not None or array.dtype.str != native.str
                                    or (array.flags.f_contiguous and not array.flags.c_contiguous)):
        data = npy_bytes(canonical)
        print("inline constexpr std::string_view kNpy%sCanonical{" % name)
        print(byte_literal(data) + ",")
        print("    %d};" % len(data))
print()
print("}  // namespace kiln::testing")
print()
print("#endif  // KILN_TESTS_RUNTIME_NPY_FIXTURES_H_")
