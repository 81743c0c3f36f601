//===- host_tensor_test.cpp - .pb tensor files as runtime host tensors -----===//
//
// Serialized TensorProtos of every element type the backend tests use, in raw_data and in typed
// fields, read back as kiln_tensor_t; refusals for strings, unknown files and garbage; and the
// pairing of a test data set's files with the graph's inputs and outputs.
//
//===----------------------------------------------------------------------===//

#include "TestModels.h"

#include "frontends/onnx/HostTensor.h"
#include "frontends/onnx/TestDataSet.h"

#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <vector>

namespace kiln::onnx_frontend {
namespace {

using testing::TemporaryDirectory;
using testing::writeFile;

/// Reads `proto` back through a file; fails the test on a non-OK status.
kiln_tensor_t *roundTrip(const TemporaryDirectory &dir, const onnx::TensorProto &proto) {
  std::string path = dir.file("tensor.pb");
  writeFile(path, proto.SerializeAsString());
  kiln_tensor_t *tensor = nullptr;
  kiln_status_t *status = readHostTensorFile(path, &tensor);
  EXPECT_EQ(status, nullptr) << kiln_status_message(status);
  kiln_status_release(status);
  return tensor;
}

template <typename T> std::vector<T> elements(kiln_tensor_t *tensor) {
  std::vector<T> values(kiln_tensor_element_count(tensor));
  std::memcpy(values.data(), kiln_tensor_const_data(tensor), values.size() * sizeof(T));
  return values;
}

// If this fails, float tensors lose their values or shape on the way to a host tensor.
TEST(HostTensor, ReadsFloatsFromRawDataAndFloatData) {
  TemporaryDirectory dir;
  for (bool raw : {true, false}) {
    onnx::TensorProto proto = raw ? testing::rawFloatTensor("x", {2, 3}, {1, 2, 3, 4, 5, 6})
                                  : testing::floatTensor("x", {2, 3}, {1, 2, 3, 4, 5, 6});
    kiln_tensor_t *tensor = roundTrip(dir, proto);
    ASSERT_NE(tensor, nullptr);
    EXPECT_EQ(kiln_tensor_element_type(tensor), KILN_ELEMENT_TYPE_F32);
    ASSERT_EQ(kiln_tensor_rank(tensor), 2u);
    EXPECT_EQ(kiln_tensor_dims(tensor)[0], 2);
    EXPECT_EQ(kiln_tensor_dims(tensor)[1], 3);
    EXPECT_EQ(elements<float>(tensor), (std::vector<float>{1, 2, 3, 4, 5, 6}));
    kiln_tensor_release(tensor);
  }
}

// If this fails, a narrowed typed field (int32_data holding int8, bool, float16 bit patterns)
// or a wide one (int64_data, double_data) is decoded wrongly.
TEST(HostTensor, ReadsTypedFieldsOfEveryElementType) {
  TemporaryDirectory dir;
  onnx::TensorProto i8;
  i8.set_data_type(onnx::TensorProto::INT8);
  i8.add_dims(3);
  for (int v : {-128, 0, 127})
    i8.add_int32_data(v);
  kiln_tensor_t *tensor = roundTrip(dir, i8);
  ASSERT_NE(tensor, nullptr);
  EXPECT_EQ(kiln_tensor_element_type(tensor), KILN_ELEMENT_TYPE_I8);
  EXPECT_EQ(elements<int8_t>(tensor), (std::vector<int8_t>{-128, 0, 127}));
  kiln_tensor_release(tensor);

  onnx::TensorProto flags;
  flags.set_data_type(onnx::TensorProto::BOOL);
  flags.add_dims(3);
  for (int v : {1, 0, 5})
    flags.add_int32_data(v);
  tensor = roundTrip(dir, flags);
  ASSERT_NE(tensor, nullptr);
  EXPECT_EQ(kiln_tensor_element_type(tensor), KILN_ELEMENT_TYPE_BOOL);
  EXPECT_EQ(elements<uint8_t>(tensor), (std::vector<uint8_t>{1, 0, 1}));
  kiln_tensor_release(tensor);

  onnx::TensorProto half;
  half.set_data_type(onnx::TensorProto::FLOAT16);
  half.add_dims(2);
  half.add_int32_data(0x3c00); // 1.0
  half.add_int32_data(0xc000); // -2.0
  tensor = roundTrip(dir, half);
  ASSERT_NE(tensor, nullptr);
  EXPECT_EQ(kiln_tensor_element_type(tensor), KILN_ELEMENT_TYPE_F16);
  EXPECT_EQ(elements<uint16_t>(tensor), (std::vector<uint16_t>{0x3c00, 0xc000}));
  kiln_tensor_release(tensor);

  onnx::TensorProto wide;
  wide.set_data_type(onnx::TensorProto::INT64);
  wide.add_dims(2);
  wide.add_int64_data(-5);
  wide.add_int64_data(int64_t(1) << 40);
  tensor = roundTrip(dir, wide);
  ASSERT_NE(tensor, nullptr);
  EXPECT_EQ(kiln_tensor_element_type(tensor), KILN_ELEMENT_TYPE_I64);
  EXPECT_EQ(elements<int64_t>(tensor), (std::vector<int64_t>{-5, int64_t(1) << 40}));
  kiln_tensor_release(tensor);

  onnx::TensorProto scalar;
  scalar.set_data_type(onnx::TensorProto::DOUBLE);
  scalar.add_double_data(2.5);
  tensor = roundTrip(dir, scalar);
  ASSERT_NE(tensor, nullptr);
  EXPECT_EQ(kiln_tensor_element_type(tensor), KILN_ELEMENT_TYPE_F64);
  EXPECT_EQ(kiln_tensor_rank(tensor), 0u);
  EXPECT_EQ(elements<double>(tensor), (std::vector<double>{2.5}));
  kiln_tensor_release(tensor);
}

// If this fails, packed 4- and 2-bit integers are not unpacked into one byte each (low bits
// first, the signed types sign-extended), or an odd count loses its last element.
TEST(HostTensor, UnpacksFourAndTwoBitIntegers) {
  TemporaryDirectory dir;
  onnx::TensorProto int4;
  int4.set_data_type(22); // INT4: 7, -8, -1 as 0x87, 0x0f (raw_data)
  int4.add_dims(3);
  int4.set_raw_data(std::string("\x87\x0f", 2));
  kiln_tensor_t *tensor = roundTrip(dir, int4);
  ASSERT_NE(tensor, nullptr);
  EXPECT_EQ(kiln_tensor_element_type(tensor), KILN_ELEMENT_TYPE_I8);
  EXPECT_EQ(elements<int8_t>(tensor), (std::vector<int8_t>{7, -8, -1}));
  kiln_tensor_release(tensor);

  onnx::TensorProto uint4;
  uint4.set_data_type(21); // UINT4: 15, 0, 9 in int32_data, one packed byte each
  uint4.add_dims(3);
  uint4.add_int32_data(0x0f);
  uint4.add_int32_data(0x09);
  tensor = roundTrip(dir, uint4);
  ASSERT_NE(tensor, nullptr);
  EXPECT_EQ(kiln_tensor_element_type(tensor), KILN_ELEMENT_TYPE_U8);
  EXPECT_EQ(elements<uint8_t>(tensor), (std::vector<uint8_t>{15, 0, 9}));
  kiln_tensor_release(tensor);

  onnx::TensorProto int2;
  int2.set_data_type(26); // INT2: 1, -2, -1, 0, -2 as 0b00111001, 0b10
  int2.add_dims(5);
  int2.set_raw_data(std::string("\x39\x02", 2));
  tensor = roundTrip(dir, int2);
  ASSERT_NE(tensor, nullptr);
  EXPECT_EQ(kiln_tensor_element_type(tensor), KILN_ELEMENT_TYPE_I8);
  EXPECT_EQ(elements<int8_t>(tensor), (std::vector<int8_t>{1, -2, -1, 0, -2}));
  kiln_tensor_release(tensor);

  onnx::TensorProto uint2;
  uint2.set_data_type(25); // UINT2: 3, 0, 1, 2 as 0b10010011
  uint2.add_dims(4);
  uint2.set_raw_data(std::string("\x93", 1));
  tensor = roundTrip(dir, uint2);
  ASSERT_NE(tensor, nullptr);
  EXPECT_EQ(kiln_tensor_element_type(tensor), KILN_ELEMENT_TYPE_U8);
  EXPECT_EQ(elements<uint8_t>(tensor), (std::vector<uint8_t>{3, 0, 1, 2}));
  kiln_tensor_release(tensor);
}

// If this fails, a tensor the runtime cannot hold is accepted, or a bad file is not reported
// with the right code.
TEST(HostTensor, RefusesStringsMissingFilesAndGarbage) {
  TemporaryDirectory dir;
  onnx::TensorProto text;
  text.set_name("words");
  text.set_data_type(onnx::TensorProto::STRING);
  text.add_dims(1);
  text.add_string_data("hello");
  writeFile(dir.file("text.pb"), text.SerializeAsString());
  kiln_tensor_t *tensor = nullptr;
  kiln_status_t *status = readHostTensorFile(dir.file("text.pb"), &tensor);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_UNIMPLEMENTED);
  EXPECT_NE(std::string(kiln_status_message(status)).find("'words'"), std::string::npos);
  kiln_status_release(status);

  status = readHostTensorFile(dir.file("missing.pb"), &tensor);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_NOT_FOUND);
  kiln_status_release(status);

  writeFile(dir.file("garbage.pb"), std::string("\xff\xff\xff\xff not a tensor", 18));
  status = readHostTensorFile(dir.file("garbage.pb"), &tensor);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(std::string(kiln_status_message(status)).find("garbage.pb"), std::string::npos);
  kiln_status_release(status);
  EXPECT_EQ(tensor, nullptr);
}

// If this fails, input_K.pb / output_K.pb are paired with the wrong graph values, or bfloat16
// data stored as uint16 bit patterns is not recognised.
TEST(TestDataSet, NamesFilesAfterGraphInputsAndOutputs) {
  TemporaryDirectory dir;
  onnx::GraphProto graph;
  testing::addInput(graph, "w", {2});
  testing::addInput(graph, "x", {2});
  testing::addOutput(graph, "y", {2});
  graph.mutable_input(1)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::BFLOAT16);
  *graph.add_initializer() = testing::floatTensor("w", {2}, {1, 2});
  std::filesystem::create_directories(dir.file("set"));
  onnx::TensorProto bits;
  bits.set_data_type(onnx::TensorProto::UINT16);
  bits.add_dims(2);
  bits.add_int32_data(0x3f80); // bfloat16 1.0
  bits.add_int32_data(0x4000); // bfloat16 2.0
  writeFile(dir.file("set/input_0.pb"), bits.SerializeAsString());
  writeFile(dir.file("set/output_0.pb"), testing::floatTensor("", {2}, {3, 4}).SerializeAsString());
  DiagnosticSink sink("model.onnx");
  std::optional<TestDataSet> set = readTestDataSet(dir.file("set"), graph, sink);
  ASSERT_TRUE(set.has_value());
  ASSERT_EQ(set->inputs.size(), 1u);
  EXPECT_EQ(set->inputs[0].name, "x");
  EXPECT_EQ(set->inputs[0].tensor.view().dataType, onnx::TensorProto::BFLOAT16);
  ASSERT_EQ(set->outputs.size(), 1u);
  EXPECT_EQ(set->outputs[0].name, "y");

  // A file beyond the graph's inputs is an error.
  writeFile(dir.file("set/input_1.pb"), bits.SerializeAsString());
  DiagnosticSink extra("model.onnx");
  EXPECT_FALSE(readTestDataSet(dir.file("set"), graph, extra).has_value());
  EXPECT_GT(extra.errorCount(), 0u);
}

} // namespace
} // namespace kiln::onnx_frontend
