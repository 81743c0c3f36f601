//===- onednn_test_util.h - Building and running oneDNN library calls in tests -*- C++ -*-===//
//
// Builds LibraryCall tables the way the compiler serializes them, prepares them with
// createOneDnnKernel, and provides seeded random data and the naive reference loops the kernels
// are checked against.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TESTS_RUNTIME_ONEDNN_ONEDNN_TEST_UTIL_H_
#define KILN_TESTS_RUNTIME_ONEDNN_ONEDNN_TEST_UTIL_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "runtime/src/cpu/onednn/onednn_kernels.h"

namespace kiln::testing {

/// Element count of `dims`.
inline int64_t numElements(const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return count;
}

/// Seeded uniform values in [-1, 1), none of them zero.
/// Pads `dims` with leading 1s to `rank`.
inline std::vector<int64_t> padRank(std::vector<int64_t> dims, size_t rank) {
  dims.insert(dims.begin(), rank - dims.size(), 1);
  return dims;
}

/// N x C x D1..Dn dims as channels-last N x D1..Dn x C (weights: K x C/G x D.. as K x D.. x C/G).
inline std::vector<int64_t> lastDims(const std::vector<int64_t> &dims) {
  std::vector<int64_t> last{dims[0]};
  last.insert(last.end(), dims.begin() + 2, dims.end());
  last.push_back(dims[1]);
  return last;
}

/// Row-major `values` of `dims` (N x C x D..) reordered to lastDims(dims).
inline std::vector<float> toLast(const std::vector<float> &values,
                                 const std::vector<int64_t> &dims) {
  int64_t channels = dims[1], pixels = numElements(dims) / (dims[0] * dims[1]);
  std::vector<float> last(values.size());
  for (int64_t n = 0; n < dims[0]; ++n)
    for (int64_t c = 0; c < channels; ++c)
      for (int64_t p = 0; p < pixels; ++p)
        last[(n * pixels + p) * channels + c] = values[(n * channels + c) * pixels + p];
  return last;
}

inline std::vector<float> randomValues(const std::vector<int64_t>& dims, uint32_t seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(-1.0f, 1.0f);
  std::vector<float> values(numElements(dims));
  for (float& v : values) {
    do {
      v = distribution(generator);
    } while (v == 0.0f);
  }
  return values;
}

/// A LibraryCall under construction; `build` serializes it and returns the table.
class LibraryCallBuilder {
 public:
  explicit LibraryCallBuilder(std::string name) : name_(std::move(name)) {}

  /// Adds a binding of f32 `dims` (operands first, then results).
  LibraryCallBuilder& binding(std::vector<int64_t> dims,
                              kiln::artifact::BufferKind kind = kiln::artifact::BufferKind::Arena,
                              uint64_t offset = 0, int element_type = KILN_ELEMENT_TYPE_F32) {
    bindings_.push_back({std::move(dims), kind, offset, element_type});
    return *this;
  }
  LibraryCallBuilder& ints(const std::string& key, std::vector<int64_t> values) {
    ints_[key] = std::move(values);
    return *this;
  }
  LibraryCallBuilder& floats(const std::string& key, std::vector<float> values) {
    floats_[key] = std::move(values);
    return *this;
  }
  LibraryCallBuilder& strings(const std::string& key, std::vector<std::string> values) {
    strings_[key] = std::move(values);
    return *this;
  }

  /// Serializes the call; the table stays valid as long as this builder.
  const kiln::artifact::LibraryCall& build() {
    flatbuffers::FlatBufferBuilder fbb;
    std::vector<flatbuffers::Offset<kiln::artifact::Binding>> bindings;
    for (const BindingSpec& spec : bindings_) {
      uint64_t size = static_cast<uint64_t>(numElements(spec.dims)) * sizeof(float);
      kiln::artifact::BufferRef ref(spec.kind, 0, spec.offset, size);
      auto type = kiln::artifact::CreateTensorTypeDirect(fbb, spec.element_type, &spec.dims);
      bindings.push_back(kiln::artifact::CreateBinding(fbb, &ref, type));
    }
    std::vector<flatbuffers::Offset<kiln::artifact::IntParam>> ints;
    for (const auto& [key, values] : ints_)
      ints.push_back(kiln::artifact::CreateIntParamDirect(fbb, key.c_str(), &values));
    std::vector<flatbuffers::Offset<kiln::artifact::FloatParam>> floats;
    for (const auto& [key, values] : floats_)
      floats.push_back(kiln::artifact::CreateFloatParamDirect(fbb, key.c_str(), &values));
    std::vector<flatbuffers::Offset<kiln::artifact::StringParam>> strings;
    for (const auto& [key, values] : strings_) {
      std::vector<flatbuffers::Offset<flatbuffers::String>> texts;
      for (const std::string& value : values) texts.push_back(fbb.CreateString(value));
      strings.push_back(kiln::artifact::CreateStringParamDirect(fbb, key.c_str(), &texts));
    }
    fbb.Finish(kiln::artifact::CreateLibraryCallDirect(fbb, name_.c_str(), &bindings, &ints,
                                                       &floats, &strings, "test call"));
    buffer_.assign(fbb.GetBufferPointer(), fbb.GetBufferPointer() + fbb.GetSize());
    return *flatbuffers::GetRoot<kiln::artifact::LibraryCall>(buffer_.data());
  }

 private:
  struct BindingSpec {
    std::vector<int64_t> dims;
    kiln::artifact::BufferKind kind;
    uint64_t offset;
    int element_type;
  };
  std::string name_;
  std::vector<BindingSpec> bindings_;
  std::map<std::string, std::vector<int64_t>> ints_;
  std::map<std::string, std::vector<float>> floats_;
  std::map<std::string, std::vector<std::string>> strings_;
  std::vector<uint8_t> buffer_;
};

/// Prepares `call`, expecting success.
inline std::unique_ptr<kiln::runtime::cpu::LibraryCallKernel> prepare(
    const kiln::artifact::LibraryCall& call, const uint8_t* constants = nullptr) {
  std::unique_ptr<kiln::runtime::cpu::LibraryCallKernel> kernel;
  kiln::Status status = kiln::runtime::cpu::createOneDnnKernel(call, constants, &kernel);
  EXPECT_TRUE(status.ok()) << status.toString();
  return kernel;
}

/// Prepares `call`, expecting failure with `code`; returns the message.
inline std::string prepareError(const kiln::artifact::LibraryCall& call, kiln_status_code_t code,
                                const uint8_t* constants = nullptr) {
  std::unique_ptr<kiln::runtime::cpu::LibraryCallKernel> kernel;
  kiln::Status status = kiln::runtime::cpu::createOneDnnKernel(call, constants, &kernel);
  EXPECT_EQ(status.code(), code) << status.toString();
  EXPECT_EQ(kernel, nullptr);
  return status.message();
}

/// Applies the post-op chain of onednn_kernels.h to `acc` in place; `addends` are the "add"
/// operands with their dims right-aligned against `dims`.
inline void applyPostOps(std::vector<float>* acc, const std::vector<int64_t>& dims,
                         const std::vector<std::string>& post_ops, const std::vector<float>& args,
                         const std::vector<std::pair<std::vector<int64_t>, const float*>>& addends) {
  size_t next_arg = 0, next_addend = 0;
  std::vector<int64_t> index(dims.size());
  for (const std::string& kind : post_ops) {
    if (kind == "relu") {
      for (float& v : *acc) v = std::max(v, 0.0f);
    } else if (kind == "gelu_erf") {
      for (float &v : *acc)
        v = static_cast<float>(0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
    } else if (kind == "clip") {
      float low = args[next_arg++], high = args[next_arg++];
      for (float& v : *acc) v = std::min(std::max(v, low), high);
    } else if (kind == "linear") {
      float scale = args[next_arg++], shift = args[next_arg++];
      for (float& v : *acc) v = scale * v + shift;
    } else if (kind == "add") {
      const auto& [addend_dims, addend] = addends[next_addend++];
      size_t lead = dims.size() - addend_dims.size();
      for (int64_t flat = 0; flat < static_cast<int64_t>(acc->size()); ++flat) {
        int64_t rest = flat;
        for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
          index[d] = rest % dims[d];
          rest /= dims[d];
        }
        int64_t offset = 0;
        for (size_t d = 0; d < addend_dims.size(); ++d)
          offset = offset * addend_dims[d] + (addend_dims[d] == 1 ? 0 : index[lead + d]);
        (*acc)[flat] += addend[offset];
      }
    } else {
      ADD_FAILURE() << "unknown post-op " << kind;
    }
  }
}

/// Expects `actual` to match `expected` within `abs_tol + rel_tol * |expected|` everywhere, and
/// at least a quarter of `expected` to be non-zero (so that no test passes on trivial data).
inline void expectClose(const std::vector<float>& actual, const std::vector<float>& expected,
                        float abs_tol, float rel_tol) {
  ASSERT_EQ(actual.size(), expected.size());
  size_t non_zero = 0;
  int mismatches = 0;
  for (size_t i = 0; i < expected.size(); ++i) {
    non_zero += expected[i] != 0.0f;
    if (!(std::fabs(actual[i] - expected[i]) <= abs_tol + rel_tol * std::fabs(expected[i])) &&
        ++mismatches <= 5)
      ADD_FAILURE() << "element " << i << ": got " << actual[i] << ", expected " << expected[i];
  }
  EXPECT_EQ(mismatches, 0);
  EXPECT_GE(non_zero * 4, expected.size()) << "the reference is mostly zeros";
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_RUNTIME_ONEDNN_ONEDNN_TEST_UTIL_H_
