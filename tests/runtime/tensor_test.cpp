//===- tensor_test.cpp - Tests of host tensors ----------------------------===//
//
// The kiln_tensor_* C API, the internal HostTensor and the C++ Tensor wrapper.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/tensor.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "kiln/runtime.h"
#include "kiln/runtime.hpp"
#include "tests/runtime/test_util.h"

namespace {

using kiln::testing::seededBytes;
using ::testing::HasSubstr;

bool isAligned(const void* pointer) {
  return reinterpret_cast<uintptr_t>(pointer) % KILN_TENSOR_ALIGNMENT == 0;
}

/// Creates a tensor and returns the status code; releases whatever it made.
kiln_status_code_t createCode(kiln_element_type_t type, std::vector<int64_t> dims,
                              std::string* message = nullptr) {
  kiln_tensor_t* tensor = nullptr;
  kiln_status_t* status = kiln_tensor_create(type, dims.size(), dims.data(), &tensor);
  kiln_status_code_t code = kiln_status_code(status);
  if (message) *message = kiln_status_message(status);
  EXPECT_EQ(tensor == nullptr, status != nullptr)
      << "out_tensor written on failure, or not on success";
  kiln_status_release(status);
  kiln_tensor_release(tensor);
  return code;
}

TEST(TensorTest, CreateIsZeroFilledAlignedAndCopiesDims) {
  std::vector<int64_t> dims = {3, 5, 7};
  kiln_tensor_t* tensor = nullptr;
  ASSERT_EQ(kiln_tensor_create(KILN_ELEMENT_TYPE_F32, dims.size(), dims.data(), &tensor), nullptr);
  dims[0] = 100;  // The tensor must hold its own copy.
  EXPECT_EQ(kiln_tensor_element_type(tensor), KILN_ELEMENT_TYPE_F32);
  ASSERT_EQ(kiln_tensor_rank(tensor), 3u);
  EXPECT_THAT(std::vector<int64_t>(kiln_tensor_dims(tensor), kiln_tensor_dims(tensor) + 3),
              ::testing::ElementsAre(3, 5, 7));
  EXPECT_EQ(kiln_tensor_element_count(tensor), 105u);
  EXPECT_EQ(kiln_tensor_byte_size(tensor), 420u);
  ASSERT_TRUE(isAligned(kiln_tensor_data(tensor)));
  EXPECT_EQ(kiln_tensor_data(tensor), kiln_tensor_const_data(tensor));
  const auto* bytes = static_cast<const unsigned char*>(kiln_tensor_const_data(tensor));
  for (size_t i = 0; i < 420; ++i) ASSERT_EQ(bytes[i], 0) << "byte " << i;
  kiln_tensor_release(tensor);
}

TEST(TensorTest, RankZeroHoldsOneElement) {
  kiln_tensor_t* tensor = nullptr;
  ASSERT_EQ(kiln_tensor_create(KILN_ELEMENT_TYPE_F64, 0, nullptr, &tensor), nullptr);
  EXPECT_EQ(kiln_tensor_rank(tensor), 0u);
  EXPECT_NE(kiln_tensor_dims(tensor), nullptr);
  EXPECT_EQ(kiln_tensor_element_count(tensor), 1u);
  EXPECT_EQ(kiln_tensor_byte_size(tensor), 8u);
  EXPECT_TRUE(isAligned(kiln_tensor_data(tensor)));
  kiln_tensor_release(tensor);
}

TEST(TensorTest, ZeroSizeDimHasValidAlignedData) {
  const int64_t dims[] = {4, 0, 2};
  kiln_tensor_t* tensor = nullptr;
  ASSERT_EQ(kiln_tensor_create(KILN_ELEMENT_TYPE_I16, 3, dims, &tensor), nullptr);
  EXPECT_EQ(kiln_tensor_element_count(tensor), 0u);
  EXPECT_EQ(kiln_tensor_byte_size(tensor), 0u);
  ASSERT_NE(kiln_tensor_data(tensor), nullptr);
  EXPECT_TRUE(isAligned(kiln_tensor_data(tensor)));
  kiln_tensor_release(tensor);
}

TEST(TensorTest, CreateCopyCopiesSeededData) {
  std::vector<unsigned char> data = seededBytes(2 * 3 * 8, 17);
  const int64_t dims[] = {2, 3};
  kiln_tensor_t* tensor = nullptr;
  ASSERT_EQ(
      kiln_tensor_create_copy(KILN_ELEMENT_TYPE_I64, 2, dims, data.data(), data.size(), &tensor),
      nullptr);
  std::vector<unsigned char> expected = data;
  data.assign(data.size(), 0xee);  // The tensor must not alias the caller's buffer.
  ASSERT_EQ(kiln_tensor_byte_size(tensor), expected.size());
  EXPECT_EQ(std::memcmp(kiln_tensor_const_data(tensor), expected.data(), expected.size()), 0);
  EXPECT_TRUE(isAligned(kiln_tensor_data(tensor)));
  kiln_tensor_release(tensor);
}

TEST(TensorTest, CreateCopyRejectsMismatchedSize) {
  std::vector<unsigned char> data = seededBytes(24, 3);
  const int64_t dims[] = {2, 3};
  kiln_tensor_t* tensor = nullptr;
  kiln_status_t* status =
      kiln_tensor_create_copy(KILN_ELEMENT_TYPE_F32, 2, dims, data.data(), 20, &tensor);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(kiln_status_message(status), HasSubstr("20 bytes"));
  EXPECT_THAT(kiln_status_message(status), HasSubstr("holds 24"));
  EXPECT_EQ(tensor, nullptr);
  kiln_status_release(status);
}

TEST(TensorTest, CreateCopyAcceptsNullDataOnlyWhenEmpty) {
  const int64_t empty_dims[] = {0, 3};
  kiln_tensor_t* tensor = nullptr;
  ASSERT_EQ(kiln_tensor_create_copy(KILN_ELEMENT_TYPE_F32, 2, empty_dims, nullptr, 0, &tensor),
            nullptr);
  kiln_tensor_release(tensor);
  const int64_t dims[] = {1};
  kiln_status_t* status =
      kiln_tensor_create_copy(KILN_ELEMENT_TYPE_F32, 1, dims, nullptr, 4, &tensor);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
  kiln_status_release(status);
}

TEST(TensorTest, RejectsNegativeDims) {
  std::string message;
  EXPECT_EQ(createCode(KILN_ELEMENT_TYPE_F32, {2, -1}, &message), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(message, HasSubstr("dim 1 of [2, -1] is negative"));
  // A zero elsewhere does not excuse a negative dim.
  EXPECT_EQ(createCode(KILN_ELEMENT_TYPE_F32, {0, -1}), KILN_STATUS_INVALID_ARGUMENT);
}

TEST(TensorTest, RejectsOverflowingSizes) {
  const int64_t big = int64_t{1} << 62;
  std::string message;
  EXPECT_EQ(createCode(KILN_ELEMENT_TYPE_U8, {big, big}, &message), KILN_STATUS_OUT_OF_RANGE);
  EXPECT_THAT(message, HasSubstr("overflows"));
  // The element count fits but the byte size does not.
  EXPECT_EQ(createCode(KILN_ELEMENT_TYPE_I64, {big}), KILN_STATUS_OUT_OF_RANGE);
  EXPECT_EQ(createCode(KILN_ELEMENT_TYPE_I32, {std::numeric_limits<int64_t>::max()}),
            KILN_STATUS_OUT_OF_RANGE);
}

// A zero dim makes the tensor empty however large the other dims are.
TEST(TensorTest, ZeroDimWinsOverHugeDims) {
  const int64_t big = int64_t{1} << 62;
  EXPECT_EQ(createCode(KILN_ELEMENT_TYPE_F32, {big, big, 0}), KILN_STATUS_OK);
}

TEST(TensorTest, UnallocatableSizeIsResourceExhausted) {
  std::string message;
  EXPECT_EQ(createCode(KILN_ELEMENT_TYPE_U8, {int64_t{1} << 60}, &message),
            KILN_STATUS_RESOURCE_EXHAUSTED);
  EXPECT_THAT(message, HasSubstr("cannot allocate"));
}

TEST(TensorTest, RankLimit) {
  EXPECT_EQ(createCode(KILN_ELEMENT_TYPE_F32, std::vector<int64_t>(KILN_TENSOR_MAX_RANK, 1)),
            KILN_STATUS_OK);
  std::string message;
  EXPECT_EQ(createCode(KILN_ELEMENT_TYPE_F32, std::vector<int64_t>(KILN_TENSOR_MAX_RANK + 1, 1),
                       &message),
            KILN_STATUS_OUT_OF_RANGE);
  EXPECT_THAT(message, HasSubstr("rank 33"));
}

TEST(TensorTest, RejectsInvalidElementTypes) {
  for (int value : {0, static_cast<int>(KILN_ELEMENT_TYPE_F8E5M2FNUZ) + 1, -7}) {
    std::string message;
    EXPECT_EQ(createCode(static_cast<kiln_element_type_t>(value), {2}, &message),
              KILN_STATUS_INVALID_ARGUMENT);
    EXPECT_THAT(message, HasSubstr("element type " + std::to_string(value)));
  }
}

TEST(TensorTest, RejectsNullArguments) {
  const int64_t dims[] = {2};
  kiln_status_t* status = kiln_tensor_create(KILN_ELEMENT_TYPE_F32, 1, dims, nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
  kiln_status_release(status);
  kiln_tensor_t* tensor = nullptr;
  status = kiln_tensor_create(KILN_ELEMENT_TYPE_F32, 1, nullptr, &tensor);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(tensor, nullptr);
  kiln_status_release(status);
}

TEST(TensorTest, AccessorsTolerateNull) {
  EXPECT_EQ(static_cast<int>(kiln_tensor_element_type(nullptr)), 0);
  EXPECT_EQ(kiln_tensor_rank(nullptr), 0u);
  EXPECT_EQ(kiln_tensor_dims(nullptr), nullptr);
  EXPECT_EQ(kiln_tensor_element_count(nullptr), 0u);
  EXPECT_EQ(kiln_tensor_byte_size(nullptr), 0u);
  EXPECT_EQ(kiln_tensor_data(nullptr), nullptr);
  EXPECT_EQ(kiln_tensor_const_data(nullptr), nullptr);
  kiln_tensor_release(nullptr);
}

//===----------------------------------------------------------------------===//
// HostTensor
//===----------------------------------------------------------------------===//

TEST(HostTensorTest, EveryElementTypeAllocatesItsSize) {
  struct Case {
    kiln_element_type_t type;
    size_t element_size;
  };
  for (Case c : {Case{KILN_ELEMENT_TYPE_F32, 4}, Case{KILN_ELEMENT_TYPE_F16, 2},
                 Case{KILN_ELEMENT_TYPE_BF16, 2}, Case{KILN_ELEMENT_TYPE_F8E4M3FN, 1},
                 Case{KILN_ELEMENT_TYPE_F8E5M2, 1}, Case{KILN_ELEMENT_TYPE_F64, 8},
                 Case{KILN_ELEMENT_TYPE_I64, 8}, Case{KILN_ELEMENT_TYPE_I32, 4},
                 Case{KILN_ELEMENT_TYPE_I16, 2}, Case{KILN_ELEMENT_TYPE_I8, 1},
                 Case{KILN_ELEMENT_TYPE_U8, 1}, Case{KILN_ELEMENT_TYPE_BOOL, 1}}) {
    kiln::Result<kiln::runtime::HostTensor> tensor =
        kiln::runtime::HostTensor::allocate(c.type, {5, 3});
    ASSERT_TRUE(tensor.ok()) << tensor.status().toString();
    EXPECT_EQ(tensor->byteSize(), 15 * c.element_size) << kiln_element_type_name(c.type);
    EXPECT_EQ(tensor->elementCount(), 15u);
  }
}

TEST(HostTensorTest, MoveKeepsTheStorage) {
  kiln::Result<kiln::runtime::HostTensor> tensor =
      kiln::runtime::HostTensor::allocate(KILN_ELEMENT_TYPE_I32, {4});
  ASSERT_TRUE(tensor.ok());
  void* data = tensor->data();
  kiln::runtime::HostTensor moved = std::move(*tensor);
  EXPECT_EQ(moved.data(), data);
  EXPECT_EQ(moved.byteSize(), 16u);
}

TEST(HostTensorTest, FormatDims) {
  EXPECT_EQ(kiln::runtime::formatDims({}), "[]");
  EXPECT_EQ(kiln::runtime::formatDims({7}), "[7]");
  EXPECT_EQ(kiln::runtime::formatDims({1, 3, 224, 224}), "[1, 3, 224, 224]");
}

//===----------------------------------------------------------------------===//
// The C++ wrapper
//===----------------------------------------------------------------------===//

TEST(CppTensorTest, FromDataCloneAndMove) {
  std::vector<unsigned char> data = seededBytes(6 * 2, 99);
  kiln::Tensor tensor =
      kiln::Tensor::fromData(KILN_ELEMENT_TYPE_F16, {2, 3}, data.data(), data.size()).value();
  ASSERT_TRUE(tensor);
  EXPECT_EQ(tensor.elementType(), KILN_ELEMENT_TYPE_F16);
  EXPECT_EQ(tensor.dims(), (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(tensor.elementCount(), 6u);
  EXPECT_EQ(std::memcmp(tensor.data(), data.data(), data.size()), 0);

  kiln::Tensor copy = tensor.clone().value();
  EXPECT_NE(copy.data(), tensor.data());
  tensor.dataAs<uint16_t>()[0] ^= 0xffff;  // Clones do not share storage.
  EXPECT_EQ(std::memcmp(copy.data(), data.data(), data.size()), 0);

  kiln::Tensor moved = std::move(copy);
  EXPECT_FALSE(copy);  // NOLINT(bugprone-use-after-move): a moved-from handle is empty.
  EXPECT_EQ(std::memcmp(moved.data(), data.data(), data.size()), 0);
  EXPECT_EQ(moved.rank(), 2u);
}

TEST(CppTensorTest, CreateReportsErrors) {
  kiln::Result<kiln::Tensor> tensor = kiln::Tensor::create(KILN_ELEMENT_TYPE_F32, {-3});
  EXPECT_EQ(tensor.status().code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THROW((void)std::move(tensor).value(), kiln::Error);
}

TEST(CppTensorTest, ReleaseHandsOverOwnership) {
  kiln::Tensor tensor = kiln::Tensor::create(KILN_ELEMENT_TYPE_BOOL, {3}).value();
  kiln_tensor_t* handle = tensor.release();
  EXPECT_FALSE(tensor);
  EXPECT_EQ(kiln_tensor_byte_size(handle), 3u);
  kiln::Tensor adopted(handle);
  EXPECT_EQ(adopted.get(), handle);
}

}  // namespace

namespace {

struct ReleaseLog {
  void* data = nullptr;
  int calls = 0;
};

void logRelease(void* data, void* context) {
  auto* log = static_cast<ReleaseLog*>(context);
  log->data = data;
  ++log->calls;
}

// Tests that a wrapped tensor reads the caller's bytes in place (the same pointer, a write to
// the buffer is seen) and hands them back once through the release callback.
TEST(TensorTest, WrapReadsTheCallersBytesInPlaceAndHandsThemBack) {
  std::vector<unsigned char> data = seededBytes(2 * 3 * 4, 29);
  const int64_t dims[] = {2, 3};
  ReleaseLog log;
  kiln_tensor_t* tensor = nullptr;
  ASSERT_EQ(kiln_tensor_wrap(KILN_ELEMENT_TYPE_F32, 2, dims, data.data(), data.size(), logRelease,
                             &log, &tensor),
            nullptr);
  EXPECT_EQ(kiln_tensor_const_data(tensor), data.data());
  data[5] ^= 0xff;
  EXPECT_EQ(static_cast<const unsigned char*>(kiln_tensor_const_data(tensor))[5], data[5]);
  EXPECT_EQ(kiln_tensor_element_count(tensor), 6u);
  EXPECT_EQ(log.calls, 0);
  kiln_tensor_release(tensor);
  EXPECT_EQ(log.calls, 1);
  EXPECT_EQ(log.data, data.data());
}

// Tests that wrapping refuses misaligned data and a size that is not the tensor's, and never
// calls the release callback of storage it did not take.
TEST(TensorTest, WrapRefusesMisalignedDataAndAWrongSize) {
  alignas(8) unsigned char bytes[64] = {};
  const int64_t dims[] = {4};
  ReleaseLog log;
  kiln_tensor_t* tensor = nullptr;
  kiln_status_t* status = kiln_tensor_wrap(KILN_ELEMENT_TYPE_F32, 1, dims, bytes + 2, 16,
                                           logRelease, &log, &tensor);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(kiln_status_message(status), HasSubstr("not aligned to the 4-byte elements"));
  kiln_status_release(status);
  status = kiln_tensor_wrap(KILN_ELEMENT_TYPE_F32, 1, dims, bytes, 12, logRelease, &log, &tensor);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(kiln_status_message(status), HasSubstr("holds 16"));
  kiln_status_release(status);
  EXPECT_EQ(tensor, nullptr);
  EXPECT_EQ(log.calls, 0);
  // Aligned to the element, not to KILN_TENSOR_ALIGNMENT: taken as it is.
  ASSERT_EQ(kiln_tensor_wrap(KILN_ELEMENT_TYPE_F32, 1, dims, bytes + 4, 16, nullptr, nullptr,
                             &tensor),
            nullptr);
  EXPECT_EQ(kiln_tensor_const_data(tensor), bytes + 4);
  kiln_tensor_release(tensor);
}

}  // namespace
