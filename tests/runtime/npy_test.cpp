//===- npy_test.cpp - Tests of .npy decoding and encoding -----------------===//
//
// parseNpy and serializeNpy against bytes written by NumPy (npy_fixtures.h),
// and the reader's handling of malformed input.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/npy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "kiln/runtime.h"
#include "runtime/src/element_type.h"
#include "tests/runtime/npy_fixtures.h"
#include "tests/runtime/test_util.h"

namespace {

using kiln::runtime::HostTensor;
using kiln::runtime::NpyReadOptions;
using kiln::runtime::parseNpy;
using kiln::runtime::serializeNpy;
using ::testing::HasSubstr;
using ::testing::StartsWith;
namespace fx = kiln::testing;

//===----------------------------------------------------------------------===//
// Files written by NumPy
//===----------------------------------------------------------------------===//

/// A .npy file written by NumPy and what Kiln must make of it.
struct NumpyFixture {
  const char* name;
  std::string_view bytes;
  kiln_element_type_t type;
  std::vector<int64_t> dims;
  /// The expected tensor data, row-major, little-endian.
  std::string_view values;
  /// What numpy.save writes for the same values: the bytes Kiln must write.
  std::string_view canonical;
};

template <typename T, size_t N>
std::string_view valueBytes(const T (&values)[N]) {
  return std::string_view(reinterpret_cast<const char*>(values), sizeof(values));
}

std::vector<NumpyFixture> numpyFixtures() {
  return {
      {"F32Matrix",
       fx::kNpyF32Matrix,
       KILN_ELEMENT_TYPE_F32,
       {2, 3},
       valueBytes(fx::kF32MatrixValues),
       fx::kNpyF32Matrix},
      {"F16Vector",
       fx::kNpyF16Vector,
       KILN_ELEMENT_TYPE_F16,
       {4},
       valueBytes(fx::kF16VectorValues),
       fx::kNpyF16Vector},
      {"F64Scalar",
       fx::kNpyF64Scalar,
       KILN_ELEMENT_TYPE_F64,
       {},
       valueBytes(fx::kF64ScalarValues),
       fx::kNpyF64Scalar},
      {"I64BigEndian",
       fx::kNpyI64BigEndian,
       KILN_ELEMENT_TYPE_I64,
       {4},
       valueBytes(fx::kI64BigEndianValues),
       fx::kNpyI64BigEndianCanonical},
      {"I32Empty", fx::kNpyI32Empty, KILN_ELEMENT_TYPE_I32, {2, 0}, "", fx::kNpyI32Empty},
      {"I16Fortran",
       fx::kNpyI16Fortran,
       KILN_ELEMENT_TYPE_I16,
       {3, 2},
       valueBytes(fx::kI16FortranValues),
       fx::kNpyI16FortranCanonical},
      {"I32BigEndianFortran",
       fx::kNpyI32BigEndianFortran,
       KILN_ELEMENT_TYPE_I32,
       {2, 3},
       valueBytes(fx::kI32BigEndianFortranValues),
       fx::kNpyI32BigEndianFortranCanonical},
      {"F32Fortran3d",
       fx::kNpyF32Fortran3d,
       KILN_ELEMENT_TYPE_F32,
       {2, 3, 4},
       valueBytes(fx::kF32Fortran3dValues),
       fx::kNpyF32Fortran3dCanonical},
      {"I8Vector",
       fx::kNpyI8Vector,
       KILN_ELEMENT_TYPE_I8,
       {5},
       valueBytes(fx::kI8VectorValues),
       fx::kNpyI8Vector},
      {"U8Cube",
       fx::kNpyU8Cube,
       KILN_ELEMENT_TYPE_U8,
       {2, 2, 2},
       valueBytes(fx::kU8CubeValues),
       fx::kNpyU8Cube},
      {"U2Vector",
       fx::kNpyU2Vector,
       KILN_ELEMENT_TYPE_U16,
       {5},
       valueBytes(fx::kU2VectorValues),
       fx::kNpyU2Vector},
      {"U4Vector",
       fx::kNpyU4Vector,
       KILN_ELEMENT_TYPE_U32,
       {2},
       valueBytes(fx::kU4VectorValues),
       fx::kNpyU4Vector},
      {"U64Vector",
       fx::kNpyU64Vector,
       KILN_ELEMENT_TYPE_U64,
       {3},
       valueBytes(fx::kU64VectorValues),
       fx::kNpyU64Vector},
      {"U32BigEndian",
       fx::kNpyU32BigEndian,
       KILN_ELEMENT_TYPE_U32,
       {2},
       valueBytes(fx::kU32BigEndianValues),
       fx::kNpyU32BigEndianCanonical},
      {"BoolVector",
       fx::kNpyBoolVector,
       KILN_ELEMENT_TYPE_BOOL,
       {5},
       valueBytes(fx::kBoolVectorValues),
       fx::kNpyBoolVector},
      {"F32Rank4",
       fx::kNpyF32Rank4,
       KILN_ELEMENT_TYPE_F32,
       {1, 2, 1, 3},
       valueBytes(fx::kF32Rank4Values),
       fx::kNpyF32Rank4},
      {"F32Rank15",
       fx::kNpyF32Rank15,
       KILN_ELEMENT_TYPE_F32,
       {2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 3},
       valueBytes(fx::kF32Rank15Values),
       fx::kNpyF32Rank15},
      {"U8FullPadding",
       fx::kNpyU8FullPadding,
       KILN_ELEMENT_TYPE_U8,
       {2, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 100},
       valueBytes(fx::kU8FullPaddingValues),
       fx::kNpyU8FullPadding},
      {"F32Version2",
       fx::kNpyF32Version2,
       KILN_ELEMENT_TYPE_F32,
       {3},
       valueBytes(fx::kF32Version2Values),
       fx::kNpyF32Version2Canonical},
      {"F32Version3",
       fx::kNpyF32Version3,
       KILN_ELEMENT_TYPE_F32,
       {3},
       valueBytes(fx::kF32Version3Values),
       fx::kNpyF32Version3Canonical},
      {"F64BigEndian",
       fx::kNpyF64BigEndian,
       KILN_ELEMENT_TYPE_F64,
       {2, 2},
       valueBytes(fx::kF64BigEndianValues),
       fx::kNpyF64BigEndianCanonical},
      {"F16BigEndian",
       fx::kNpyF16BigEndian,
       KILN_ELEMENT_TYPE_F16,
       {3},
       valueBytes(fx::kF16BigEndianValues),
       fx::kNpyF16BigEndianCanonical},
  };
}

/// Names the fixture in test output instead of dumping its bytes.
void PrintTo(const NumpyFixture& fixture, std::ostream* os) { *os << fixture.name; }

class NumpyFixtureTest : public ::testing::TestWithParam<NumpyFixture> {};

// Fails when the reader gets the type, the shape, the byte order or the
// Fortran-order transposition of a NumPy file wrong.
TEST_P(NumpyFixtureTest, ReadsTheValuesNumpyWrote) {
  const NumpyFixture& fixture = GetParam();
  kiln::Result<HostTensor> tensor = parseNpy(fixture.bytes, "fixture.npy");
  ASSERT_TRUE(tensor.ok()) << tensor.status().toString();
  EXPECT_EQ(tensor->elementType(), fixture.type);
  EXPECT_EQ(tensor->dims(), fixture.dims);
  ASSERT_EQ(tensor->byteSize(), fixture.values.size());
  EXPECT_EQ(std::string_view(static_cast<const char*>(tensor->data()), tensor->byteSize()),
            fixture.values);
}

// Fails when the writer's bytes differ from numpy.save's for the same array.
TEST_P(NumpyFixtureTest, WritesTheBytesNumpyWrites) {
  const NumpyFixture& fixture = GetParam();
  kiln::Result<HostTensor> tensor = parseNpy(fixture.bytes, "fixture.npy");
  ASSERT_TRUE(tensor.ok()) << tensor.status().toString();
  EXPECT_EQ(serializeNpy(*tensor), fixture.canonical);
}

// Reading with the file's own type as the expected type changes nothing.
TEST_P(NumpyFixtureTest, ReadsWithMatchingExpectedType) {
  const NumpyFixture& fixture = GetParam();
  NpyReadOptions options;
  options.expected_type = fixture.type;
  kiln::Result<HostTensor> tensor = parseNpy(fixture.bytes, "fixture.npy", options);
  ASSERT_TRUE(tensor.ok()) << tensor.status().toString();
  EXPECT_EQ(std::string_view(static_cast<const char*>(tensor->data()), tensor->byteSize()),
            fixture.values);
}

INSTANTIATE_TEST_SUITE_P(Numpy, NumpyFixtureTest, ::testing::ValuesIn(numpyFixtures()),
                         [](const ::testing::TestParamInfo<NumpyFixture>& info) {
                           return std::string(info.param.name);
                         });

//===----------------------------------------------------------------------===//
// Raw bf16 and float8
//===----------------------------------------------------------------------===//

TEST(NpyRawTypesTest, V2ReadsAsBf16) {
  kiln::Result<HostTensor> tensor = parseNpy(fx::kNpyRawV2, "raw.npy");
  ASSERT_TRUE(tensor.ok()) << tensor.status().toString();
  EXPECT_EQ(tensor->elementType(), KILN_ELEMENT_TYPE_BF16);
  EXPECT_EQ(tensor->dims(), std::vector<int64_t>{5});
  ASSERT_EQ(tensor->byteSize(), sizeof(fx::kRawV2Values));
  EXPECT_EQ(std::memcmp(tensor->data(), fx::kRawV2Values, sizeof(fx::kRawV2Values)), 0);
}

// bf16 is written as '<V2' with the data unchanged; NumPy loads that as void.
TEST(NpyRawTypesTest, Bf16WritesAsV2) {
  kiln::Result<HostTensor> tensor = parseNpy(fx::kNpyRawV2, "raw.npy");
  ASSERT_TRUE(tensor.ok());
  std::string bytes = serializeNpy(*tensor);
  EXPECT_THAT(bytes, HasSubstr("{'descr': '<V2', 'fortran_order': False, 'shape': (5,), }"));
  EXPECT_EQ(bytes.size() - tensor->byteSize(), 128u);
  EXPECT_EQ(bytes.substr(128),
            std::string(reinterpret_cast<const char*>(fx::kRawV2Values), sizeof(fx::kRawV2Values)));
}

TEST(NpyRawTypesTest, V1IsAmbiguousWithoutExpectedType) {
  kiln::Result<HostTensor> tensor = parseNpy(fx::kNpyRawV1, "raw8.npy");
  EXPECT_EQ(tensor.status().code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(tensor.status().message(), StartsWith("raw8.npy: "));
  EXPECT_THAT(tensor.status().message(), HasSubstr("f8e4m3fn or f8e5m2"));
}

TEST(NpyRawTypesTest, V1ReadsAsTheExpectedFloat8) {
  for (kiln_element_type_t type : {KILN_ELEMENT_TYPE_F8E4M3FN, KILN_ELEMENT_TYPE_F8E5M2}) {
    NpyReadOptions options;
    options.expected_type = type;
    kiln::Result<HostTensor> tensor = parseNpy(fx::kNpyRawV1, "raw8.npy", options);
    ASSERT_TRUE(tensor.ok()) << tensor.status().toString();
    EXPECT_EQ(tensor->elementType(), type);
    ASSERT_EQ(tensor->byteSize(), sizeof(fx::kRawV1Values));
    EXPECT_EQ(std::memcmp(tensor->data(), fx::kRawV1Values, sizeof(fx::kRawV1Values)), 0);
  }
}

// bf16 bits saved from a uint16 view are read as bf16 when asked for.
TEST(NpyRawTypesTest, U2ReadsAsExpectedBf16) {
  NpyReadOptions options;
  options.expected_type = KILN_ELEMENT_TYPE_BF16;
  kiln::Result<HostTensor> tensor = parseNpy(fx::kNpyU2Vector, "bits.npy", options);
  ASSERT_TRUE(tensor.ok()) << tensor.status().toString();
  EXPECT_EQ(tensor->elementType(), KILN_ELEMENT_TYPE_BF16);
  EXPECT_EQ(std::memcmp(tensor->data(), fx::kU2VectorValues, sizeof(fx::kU2VectorValues)), 0);
}

TEST(NpyRawTypesTest, RawBytesAreNotReinterpretedAsStandardTypes) {
  NpyReadOptions options;
  options.expected_type = KILN_ELEMENT_TYPE_F16;
  kiln::Result<HostTensor> tensor = parseNpy(fx::kNpyRawV2, "raw.npy", options);
  EXPECT_EQ(tensor.status().code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(tensor.status().message(), HasSubstr("holds bf16"));
  EXPECT_THAT(tensor.status().message(), HasSubstr("f16 was expected"));
}

TEST(NpyRawTypesTest, ExpectedTypeMismatchNamesBothTypes) {
  NpyReadOptions options;
  options.expected_type = KILN_ELEMENT_TYPE_I32;
  kiln::Result<HostTensor> tensor = parseNpy(fx::kNpyF32Matrix, "x.npy", options);
  EXPECT_EQ(tensor.status().code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(tensor.status().message(), HasSubstr("holds f32 (dtype '<f4') but i32 was expected"));
}

//===----------------------------------------------------------------------===//
// Round trips of every element type
//===----------------------------------------------------------------------===//

// Fails when some element type, shape or size does not survive a write and a
// read unchanged.
TEST(NpyRoundTripTest, EveryElementTypeAndShapeSurvives) {
  const std::vector<std::vector<int64_t>> shapes = {{}, {1}, {7}, {3, 5}, {2, 0, 4}, {2, 3, 2, 2}};
  uint32_t seed = 1;
  for (kiln_element_type_t type : kiln::runtime::kAllElementTypes) {
    for (const std::vector<int64_t>& dims : shapes) {
      kiln::Result<HostTensor> tensor = HostTensor::allocate(type, dims);
      ASSERT_TRUE(tensor.ok());
      std::vector<unsigned char> data = kiln::testing::seededBytes(tensor->byteSize(), ++seed);
      if (type == KILN_ELEMENT_TYPE_BOOL) {
        for (unsigned char& b : data) b &= 1;
      }
      if (!data.empty()) std::memcpy(tensor->data(), data.data(), data.size());

      std::string bytes = serializeNpy(*tensor);
      EXPECT_EQ((bytes.size() - tensor->byteSize()) % 64, 0u) << "data is not 64-byte aligned";
      NpyReadOptions options;
      options.expected_type = type;
      kiln::Result<HostTensor> back = parseNpy(bytes, "round-trip.npy", options);
      ASSERT_TRUE(back.ok()) << kiln_element_type_name(type) << " "
                             << kiln::runtime::formatDims(dims) << ": " << back.status().toString();
      EXPECT_EQ(back->elementType(), type);
      EXPECT_EQ(back->dims(), dims);
      ASSERT_EQ(back->byteSize(), data.size());
      EXPECT_TRUE(data.empty() || std::memcmp(back->data(), data.data(), data.size()) == 0)
          << kiln_element_type_name(type) << " " << kiln::runtime::formatDims(dims);
    }
  }
}

TEST(NpyRoundTripTest, HeaderMatchesNumpyForWideDims) {
  // numpy.save leaves 21 digits of room for the first dim, and pads the whole
  // header to 64 bytes.
  std::string header = kiln::runtime::encodeNpyHeader(KILN_ELEMENT_TYPE_U8, {int64_t{1} << 62, 0});
  EXPECT_THAT(header, HasSubstr("'shape': (4611686018427387904, 0), }  "));
  EXPECT_EQ(header.size() % 64, 0u);
  EXPECT_EQ(header.back(), '\n');
}

//===----------------------------------------------------------------------===//
// Malformed input
//===----------------------------------------------------------------------===//

/// Builds a .npy file from a header dict and data, with the version and the
/// header length field as given (the true length when `header_size` is -1).
std::string makeNpy(const std::string& dict, const std::string& data, int major = 1,
                    int64_t header_size = -1) {
  std::string header = dict + "\n";
  uint64_t size = header_size < 0 ? header.size() : static_cast<uint64_t>(header_size);
  std::string bytes = "\x93NUMPY";
  bytes += static_cast<char>(major);
  bytes += '\0';
  int length_bytes = major == 1 ? 2 : 4;
  for (int i = 0; i < length_bytes; ++i) bytes += static_cast<char>((size >> (8 * i)) & 0xff);
  return bytes + header + data;
}

/// Parses `bytes` as "bad.npy" and checks the code and that the message names
/// the file and contains `needle`.
void expectRejected(const std::string& bytes, kiln_status_code_t code, const std::string& needle) {
  kiln::Result<HostTensor> tensor = parseNpy(bytes, "bad.npy");
  ASSERT_FALSE(tensor.ok()) << "accepted malformed input; expected " << needle;
  EXPECT_EQ(tensor.status().code(), code) << tensor.status().toString();
  EXPECT_THAT(tensor.status().message(), StartsWith("bad.npy: "));
  EXPECT_THAT(tensor.status().message(), HasSubstr(needle));
}

const std::string kF32Pair(8, '\x41');

TEST(NpyMalformedTest, HandBuiltFileIsAccepted) {
  // Guards the helpers below: the unmodified input must read fine.
  kiln::Result<HostTensor> tensor = parseNpy(
      makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }", kF32Pair), "good.npy");
  ASSERT_TRUE(tensor.ok()) << tensor.status().toString();
  EXPECT_EQ(tensor->dims(), std::vector<int64_t>{2});
  // Key order, quotes and spacing are free, as in Python.
  tensor = parseNpy(makeNpy("{\"shape\":(2,),'fortran_order':False,'descr':'<f4'}", kF32Pair),
                    "good.npy");
  ASSERT_TRUE(tensor.ok()) << tensor.status().toString();
  // Python 2 wrote longs with an L suffix.
  tensor = parseNpy(makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2L,), }", kF32Pair),
                    "good.npy");
  ASSERT_TRUE(tensor.ok()) << tensor.status().toString();
}

TEST(NpyMalformedTest, EmptyFile) { expectRejected("", KILN_STATUS_DATA_LOSS, "empty"); }

TEST(NpyMalformedTest, BadMagic) {
  std::string bytes(fx::kNpyF32Matrix);
  bytes[1] = 'X';
  expectRejected(bytes, KILN_STATUS_INVALID_ARGUMENT, "magic");
  expectRejected("plain text, not an array", KILN_STATUS_INVALID_ARGUMENT, "not a .npy file");
}

TEST(NpyMalformedTest, TruncatedPreamble) {
  expectRejected(std::string(fx::kNpyF32Matrix.substr(0, 8)), KILN_STATUS_DATA_LOSS,
                 "shorter than the .npy preamble");
  expectRejected(std::string(fx::kNpyF32Version2.substr(0, 11)), KILN_STATUS_DATA_LOSS,
                 "shorter than the .npy preamble");
}

TEST(NpyMalformedTest, TruncatedHeader) {
  expectRejected(std::string(fx::kNpyF32Matrix.substr(0, 40)), KILN_STATUS_DATA_LOSS,
                 "truncated header: it is 118 bytes but the file holds 30");
}

TEST(NpyMalformedTest, TruncatedData) {
  std::string bytes(fx::kNpyF32Matrix.substr(0, fx::kNpyF32Matrix.size() - 4));
  expectRejected(bytes, KILN_STATUS_DATA_LOSS, "needs 24 bytes but the file holds 20");
}

// Every strict prefix of a valid file is a truncated file.
TEST(NpyMalformedTest, EveryPrefixIsDataLoss) {
  for (std::string_view file : {fx::kNpyF32Fortran3d, fx::kNpyF32Version2, fx::kNpyF64Scalar}) {
    for (size_t size = 0; size < file.size(); ++size) {
      kiln::Result<HostTensor> tensor = parseNpy(file.substr(0, size), "cut.npy");
      ASSERT_EQ(tensor.status().code(), KILN_STATUS_DATA_LOSS)
          << "prefix of " << size << " bytes: " << tensor.status().toString();
    }
  }
}

TEST(NpyMalformedTest, TrailingBytes) {
  std::string bytes = std::string(fx::kNpyF32Matrix) + "xy";
  expectRejected(bytes, KILN_STATUS_INVALID_ARGUMENT, "2 bytes follow the array data");
}

TEST(NpyMalformedTest, UnsupportedVersions) {
  std::string bytes(fx::kNpyF32Matrix);
  bytes[6] = 4;
  expectRejected(bytes, KILN_STATUS_UNIMPLEMENTED, "version 4.0");
  bytes[6] = 1;
  bytes[7] = 1;
  expectRejected(bytes, KILN_STATUS_UNIMPLEMENTED, "version 1.1");
  bytes[6] = 0;
  bytes[7] = 0;
  expectRejected(bytes, KILN_STATUS_UNIMPLEMENTED, "version 0.0");
}

TEST(NpyMalformedTest, HugeHeaderLength) {
  std::string dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }";
  expectRejected(makeNpy(dict, kF32Pair, 2, 0xffffffffLL), KILN_STATUS_INVALID_ARGUMENT,
                 "header length 4294967295 exceeds the limit");
}

TEST(NpyMalformedTest, HeaderNotADict) {
  expectRejected(makeNpy("[('descr', '<f4')]", ""), KILN_STATUS_INVALID_ARGUMENT,
                 "not a dict literal");
  expectRejected(makeNpy("", ""), KILN_STATUS_INVALID_ARGUMENT, "not a dict literal");
}

TEST(NpyMalformedTest, MissingExtraAndDuplicateKeys) {
  expectRejected(makeNpy("{'descr': '<f4', 'shape': (2,), }", kF32Pair),
                 KILN_STATUS_INVALID_ARGUMENT, "lacks the key(s) fortran_order");
  expectRejected(makeNpy("{}", ""), KILN_STATUS_INVALID_ARGUMENT,
                 "lacks the key(s) descr, fortran_order, shape");
  expectRejected(
      makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,), 'extra': 1}", kF32Pair),
      KILN_STATUS_INVALID_ARGUMENT, "unexpected key 'extra'");
  expectRejected(
      makeNpy("{'descr': '<f4', 'descr': '<f4', 'fortran_order': False, 'shape': (2,)}", kF32Pair),
      KILN_STATUS_INVALID_ARGUMENT, "'descr' appears twice");
}

TEST(NpyMalformedTest, BadValues) {
  expectRejected(makeNpy("{'descr': '<f4', 'fortran_order': 0, 'shape': (2,)}", kF32Pair),
                 KILN_STATUS_INVALID_ARGUMENT, "fortran_order is not True or False");
  expectRejected(makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': 2}", kF32Pair),
                 KILN_STATUS_INVALID_ARGUMENT, "the shape is not a tuple");
  // (2) is the integer 2 in Python.
  expectRejected(makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2)}", kF32Pair),
                 KILN_STATUS_INVALID_ARGUMENT, "the shape is not a tuple");
  expectRejected(makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, x)}", kF32Pair),
                 KILN_STATUS_INVALID_ARGUMENT, "expected a dim");
  expectRejected(makeNpy("{'descr': <f4, 'fortran_order': False, 'shape': (2,)}", kF32Pair),
                 KILN_STATUS_INVALID_ARGUMENT, "expected the descr string");
  expectRejected(makeNpy("{'descr': '<f4, 'fortran_order': False, 'shape': (2,)}", kF32Pair),
                 KILN_STATUS_INVALID_ARGUMENT, "malformed header");
  expectRejected(makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2,)} junk", kF32Pair),
                 KILN_STATUS_INVALID_ARGUMENT, "unexpected text after the header dict");
  expectRejected(makeNpy("{'descr': '<f4' 'fortran_order': False, 'shape': (2,)}", kF32Pair),
                 KILN_STATUS_INVALID_ARGUMENT, "expected ',' or '}'");
}

TEST(NpyMalformedTest, BinaryHeaderIsEscapedInTheMessage) {
  kiln::Result<HostTensor> tensor = parseNpy(makeNpy(std::string("\x01\xff{", 3), ""), "bad.npy");
  ASSERT_FALSE(tensor.ok());
  EXPECT_THAT(tensor.status().message(), HasSubstr("\"\\x01\\xff{\\x0a\""));
}

TEST(NpyMalformedTest, NegativeAndOversizedDims) {
  expectRejected(makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (2, -1)}", ""),
                 KILN_STATUS_INVALID_ARGUMENT, "negative dim");
  expectRejected(
      makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,)}", ""),
      KILN_STATUS_OUT_OF_RANGE, "dim 0 of the shape does not fit in 64 bits");
}

// The byte size is checked before anything is allocated for it.
TEST(NpyMalformedTest, ShapeOverflow) {
  expectRejected(
      makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': (4294967296, 4294967296, 16)}",
              ""),
      KILN_STATUS_OUT_OF_RANGE, "overflows");
}

// A huge but representable shape with little data is a truncated file, not
// an attempt to allocate a terabyte.
TEST(NpyMalformedTest, HugeShapeWithShortData) {
  expectRejected(
      makeNpy("{'descr': '<f8', 'fortran_order': False, 'shape': (1099511627776,)}", kF32Pair),
      KILN_STATUS_DATA_LOSS, "needs 8796093022208 bytes but the file holds 8");
}

TEST(NpyMalformedTest, TooManyDims) {
  std::string shape = "(";
  for (int i = 0; i < 33; ++i) shape += "1, ";
  shape += ")";
  expectRejected(makeNpy("{'descr': '<f4', 'fortran_order': False, 'shape': " + shape + "}", ""),
                 KILN_STATUS_OUT_OF_RANGE, "more than 32 dims");
}

TEST(NpyMalformedTest, UnsupportedDtypes) {
  expectRejected(makeNpy("{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (1,)}", ""),
                 KILN_STATUS_UNIMPLEMENTED, "structured dtypes");
  for (const char* descr : {"<c8", "|O", "<U5", "<f3", "<u16", "float32", "", "<M8[ns]", "<f"}) {
    std::string dict =
        std::string("{'descr': '") + descr + "', 'fortran_order': False, 'shape': (0,)}";
    expectRejected(makeNpy(dict, ""), KILN_STATUS_UNIMPLEMENTED, "'" + std::string(descr) + "'");
  }
  expectRejected(makeNpy("{'descr': '<u16', 'fortran_order': False, 'shape': (1,)}", ""),
                 KILN_STATUS_UNIMPLEMENTED, "dtype '<u16' has no Kiln element type");
}

// NumPy reads any nonzero byte of a bool array as True; Kiln stores 1.
TEST(NpyMalformedTest, BoolBytesAreNormalized) {
  kiln::Result<HostTensor> tensor =
      parseNpy(makeNpy("{'descr': '|b1', 'fortran_order': False, 'shape': (4,)}",
                       std::string("\0\2\xff\1", 4)),
               "bool.npy");
  ASSERT_TRUE(tensor.ok()) << tensor.status().toString();
  const auto* bytes = static_cast<const unsigned char*>(tensor->data());
  EXPECT_EQ(std::vector<unsigned char>(bytes, bytes + 4), (std::vector<unsigned char>{0, 1, 1, 1}));
}

// Random corruption of valid files: the reader must fail cleanly or produce a
// consistent tensor, never crash (the sanitizer builds run this too).
TEST(NpyMalformedTest, CorruptedBytesNeverCrash) {
  std::mt19937 engine(4242);
  int rejected = 0;
  for (std::string_view original :
       {fx::kNpyF32Fortran3d, fx::kNpyF32Version2, fx::kNpyRawV1, fx::kNpyI64BigEndian}) {
    for (int trial = 0; trial < 500; ++trial) {
      std::string bytes(original);
      int flips = 1 + static_cast<int>(engine() % 4);
      for (int i = 0; i < flips; ++i) {
        // Mostly corrupt the preamble and the header, where the parsing is.
        size_t limit = engine() % 4 == 0 ? bytes.size() : std::min<size_t>(bytes.size(), 80);
        bytes[engine() % limit] = static_cast<char>(engine() & 0xff);
      }
      kiln::Result<HostTensor> tensor = parseNpy(bytes, "fuzz.npy");
      if (tensor.ok()) {
        size_t element_size = kiln_element_type_size(tensor->elementType());
        ASSERT_EQ(tensor->byteSize(), tensor->elementCount() * element_size);
      } else {
        ++rejected;
        ASSERT_THAT(tensor.status().message(), StartsWith("fuzz.npy: "));
      }
    }
  }
  EXPECT_GT(rejected, 0);
}

}  // namespace
