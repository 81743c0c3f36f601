//===- cuda_device_test.cpp - Tests of CUDA device discovery --------------===//
//
// probeCudaDevices: without a driver or GPU it must fail cleanly with
// UNAVAILABLE; with a GPU it must describe every device.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/cuda/cuda_device.h"

#include <cuda_runtime_api.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "kiln/runtime.h"
#include "kiln/runtime.hpp"
#include "runtime/src/cuda/cuda_api.h"

namespace {

using ::kiln::runtime::CudaDeviceInfo;
using ::kiln::runtime::probeCudaDevices;
using ::testing::HasSubstr;

// A machine without a GPU must get a status it can report (not a crash, an
// abort or an empty success); a machine with one must get real descriptions.
TEST(CudaDeviceTest, ProbeDescribesDevicesOrReportsUnavailable) {
  kiln::Result<std::vector<CudaDeviceInfo>> devices = probeCudaDevices();
  if (!devices.ok()) {
    EXPECT_EQ(devices.status().code(), KILN_STATUS_UNAVAILABLE) << devices.status().toString();
    EXPECT_THAT(devices.status().message(), HasSubstr("probing CUDA devices: "));
    EXPECT_THAT(devices.status().message(), HasSubstr("cudaGetDeviceCount"));
    GTEST_SKIP() << "no CUDA device: " << devices.status().message();
  }
  ASSERT_GT(devices->size(), 0u);
  for (size_t i = 0; i < devices->size(); ++i) {
    const CudaDeviceInfo &device = (*devices)[i];
    SCOPED_TRACE(device.name);
    EXPECT_EQ(device.ordinal, static_cast<int>(i));
    EXPECT_FALSE(device.name.empty());
    EXPECT_GT(device.multiprocessor_count, 0);
    EXPECT_GE(device.compute_capability_major, 3);
    EXPECT_GT(device.total_memory_bytes, 0u);
  }
}

// Probing twice gives the same answer: nothing in the first probe (a cached
// CUDA runtime error, for one) changes the second.
TEST(CudaDeviceTest, ProbeIsRepeatable) {
  kiln::Result<std::vector<CudaDeviceInfo>> first = probeCudaDevices();
  kiln::Result<std::vector<CudaDeviceInfo>> second = probeCudaDevices();
  ASSERT_EQ(first.ok(), second.ok());
  if (!first.ok()) {
    EXPECT_EQ(first.status().code(), second.status().code());
    EXPECT_EQ(first.status().message(), second.status().message());
    return;
  }
  ASSERT_EQ(first->size(), second->size());
  for (size_t i = 0; i < first->size(); ++i) {
    EXPECT_EQ((*first)[i].name, (*second)[i].name);
    EXPECT_EQ((*first)[i].multiprocessor_count, (*second)[i].multiprocessor_count);
  }
}

// The occupancy query only caps a grid, so CudaProgram goes on when it fails; the error it
// leaves must not be reported later by whoever next asks cudaGetLastError. Needs a GPU: without a
// driver every CUDA call reports the missing driver, which no call clears.
TEST(CudaDeviceTest, AFailedOccupancyQueryLeavesNoErrorBehind) {
  kiln::Result<std::vector<CudaDeviceInfo>> devices = probeCudaDevices();
  if (!devices.ok())
    GTEST_SKIP() << "no CUDA device: " << devices.status().message();
  std::unique_ptr<kiln::runtime::cuda::CudaApi> api = kiln::runtime::cuda::createRealCudaApi();
  int blocks = -1;
  kiln::Status status = api->occupancy(nullptr, 128, &blocks);
  EXPECT_FALSE(status.ok());
  EXPECT_EQ(cudaPeekAtLastError(), cudaSuccess) << cudaGetErrorName(cudaPeekAtLastError());
}

} // namespace
