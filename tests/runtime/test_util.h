//===- test_util.h - Helpers shared by the runtime tests --------*- C++ -*-===//
//
// Scoped temporary paths, whole-file reads and writes, and seeded test data and tensors.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TESTS_RUNTIME_TEST_UTIL_H_
#define KILN_TESTS_RUNTIME_TEST_UTIL_H_

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "kiln/runtime.hpp"

namespace kiln::testing {

/// A path in the test's temporary directory, unique to the running test and
/// process, removed (as a file) when the object goes away.
class ScopedTempPath {
 public:
  explicit ScopedTempPath(const std::string& suffix) {
    const ::testing::TestInfo* info = ::testing::UnitTest::GetInstance()->current_test_info();
    std::string name = std::string(info->test_suite_name()) + "_" + info->name();
    for (char& c : name) {
      if (c == '/') c = '_';
    }
    path_ = ::testing::TempDir() + "kiln_" + name + "_" + std::to_string(::getpid()) + suffix;
    std::remove(path_.c_str());
  }
  ~ScopedTempPath() { std::remove(path_.c_str()); }
  ScopedTempPath(const ScopedTempPath&) = delete;
  ScopedTempPath& operator=(const ScopedTempPath&) = delete;

  const std::string& path() const { return path_; }
  const char* c_str() const { return path_.c_str(); }

 private:
  std::string path_;
};

/// Returns the contents of the file at `path` ("" when it cannot be read).
inline std::string readFileBytes(const std::string& path) {
  std::ifstream stream(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(stream), std::istreambuf_iterator<char>());
}

/// Replaces the file at `path` with `bytes`.
inline void writeFileBytes(const std::string& path, const std::string& bytes) {
  std::ofstream stream(path, std::ios::binary | std::ios::trunc);
  stream.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(stream.good()) << "cannot write " << path;
}

/// Returns `count` reproducible bytes in [1, 255], so data is never all zeros.
inline std::vector<unsigned char> seededBytes(size_t count, uint32_t seed) {
  std::mt19937 engine(seed);
  std::uniform_int_distribution<int> byte(1, 255);
  std::vector<unsigned char> bytes(count);
  for (unsigned char& b : bytes) b = static_cast<unsigned char>(byte(engine));
  return bytes;
}

/// An f32 host tensor of `dims` with reproducible values in [-4, 4), none of them zero.
inline Tensor seededF32Tensor(const std::vector<int64_t>& dims, uint32_t seed) {
  Tensor tensor = Tensor::create(KILN_ELEMENT_TYPE_F32, dims).value();
  std::mt19937 engine(seed);
  std::uniform_real_distribution<float> value(-4.0f, 4.0f);
  float* data = tensor.dataAs<float>();
  for (size_t i = 0; i < tensor.elementCount(); ++i) {
    float v = value(engine);
    data[i] = v == 0.0f ? 0.5f : v;
  }
  return tensor;
}

}  // namespace kiln::testing

#endif  // KILN_TESTS_RUNTIME_TEST_UTIL_H_
