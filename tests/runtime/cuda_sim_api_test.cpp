//===- cuda_sim_api_test.cpp - CUDA's rules on the simulated CUDA device --===//
//
// The simulated device's CudaApi refuses what a GPU would: allocation, freeing and
// synchronization while the calling thread captures a stream (and the capture is invalidated),
// copies of pageable host memory in a capture, copies and memsets outside device allocations;
// its memory starts poisoned with NaN bytes; its streams run their work when synchronized, in
// order; a captured graph replays the work it recorded.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/cuda/sim/sim_cuda_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "runtime/src/cuda/sim/sim_executor.h"

namespace kiln::testing {
namespace {

using ::kiln::runtime::cuda::CudaApi;
using ::kiln::runtime::cuda::sim::createSimCudaApi;
using ::kiln::runtime::cuda::sim::kSimPoisonByte;
using ::testing::HasSubstr;

class CudaSimApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    api_ = createSimCudaApi();
    ASSERT_TRUE(api_->streamCreate(&stream_).ok());
  }
  void TearDown() override {
    if (stream_ != nullptr) EXPECT_TRUE(api_->streamDestroy(stream_).ok());
  }
  std::unique_ptr<CudaApi> api_;
  cudaStream_t stream_ = nullptr;
};

// Tests that fresh device memory reads as NaN, so that a result computed from memory nobody wrote
// shows up, and that work runs at the synchronization, in order.
TEST_F(CudaSimApiTest, MemoryStartsPoisonedAndStreamsRunAtSynchronization) {
  void* device = nullptr;
  void* pinned = nullptr;
  ASSERT_TRUE(api_->malloc(&device, 64).ok());
  ASSERT_TRUE(api_->hostAlloc(&pinned, 64).ok());
  ASSERT_TRUE(api_->memcpyAsync(pinned, device, 64, cudaMemcpyDeviceToHost, stream_).ok());
  ASSERT_TRUE(api_->streamSynchronize(stream_).ok());
  float first = 0;
  std::memcpy(&first, pinned, sizeof(first));
  EXPECT_TRUE(std::isnan(first));
  EXPECT_EQ(static_cast<const uint8_t*>(pinned)[63], kSimPoisonByte);

  // A memset, then a download: nothing happens before the synchronization.
  std::memset(pinned, 0x11, 64);
  ASSERT_TRUE(api_->memsetAsync(device, 0, 64, stream_).ok());
  ASSERT_TRUE(api_->memcpyAsync(pinned, device, 64, cudaMemcpyDeviceToHost, stream_).ok());
  EXPECT_EQ(static_cast<const uint8_t*>(pinned)[0], 0x11);
  ASSERT_TRUE(api_->streamSynchronize(stream_).ok());
  EXPECT_EQ(static_cast<const uint8_t*>(pinned)[0], 0);
  EXPECT_TRUE(api_->free(device).ok());
  EXPECT_TRUE(api_->freeHost(pinned).ok());
}

// Tests CUDA's thread-local capture rules: cudaMalloc, cudaFree and cudaStreamSynchronize fail
// on the capturing thread and invalidate the capture, which cudaStreamEndCapture reports.
TEST_F(CudaSimApiTest, UnsafeCallsDuringCaptureFailAndInvalidateIt) {
  for (const char* call : {"cudaMalloc", "cudaFree", "cudaStreamSynchronize"}) {
    SCOPED_TRACE(call);
    void* device = nullptr;
    ASSERT_TRUE(api_->malloc(&device, 16).ok());
    ASSERT_TRUE(api_->beginCapture(stream_).ok());
    Status refused;
    if (std::string(call) == "cudaMalloc") {
      void* more = nullptr;
      refused = api_->malloc(&more, 16);
    } else if (std::string(call) == "cudaFree") {
      refused = api_->free(device);
    } else {
      refused = api_->streamSynchronize(stream_);
    }
    EXPECT_EQ(refused.code(), KILN_STATUS_FAILED_PRECONDITION);
    EXPECT_THAT(refused.message(), HasSubstr(std::string(call) + " during stream capture"));
    cudaGraph_t graph = nullptr;
    Status ended = api_->endCapture(stream_, &graph);
    EXPECT_EQ(ended.code(), KILN_STATUS_FAILED_PRECONDITION);
    EXPECT_THAT(ended.message(), HasSubstr("invalidated"));
    EXPECT_EQ(graph, nullptr);
    EXPECT_TRUE(api_->free(device).ok());
  }
}

// Tests that a copy of pageable host memory works eagerly (CUDA stages it synchronously) but is
// refused in a capture, where only pinned memory can be copied; pinned memory captures.
TEST_F(CudaSimApiTest, PageableCopiesCannotBeCaptured) {
  void* device = nullptr;
  void* pinned = nullptr;
  ASSERT_TRUE(api_->malloc(&device, sizeof(float) * 4).ok());
  ASSERT_TRUE(api_->hostAlloc(&pinned, sizeof(float) * 4).ok());
  std::vector<float> pageable = {1, 2, 3, 4};
  ASSERT_TRUE(api_->memcpyAsync(device, pageable.data(), 16, cudaMemcpyHostToDevice, stream_).ok());
  // The source may change once the call returns: the copy took it.
  pageable[0] = 100;
  ASSERT_TRUE(api_->memcpyAsync(pinned, device, 16, cudaMemcpyDeviceToHost, stream_).ok());
  ASSERT_TRUE(api_->streamSynchronize(stream_).ok());
  EXPECT_EQ(static_cast<float*>(pinned)[0], 1.0f);
  EXPECT_EQ(static_cast<float*>(pinned)[3], 4.0f);

  ASSERT_TRUE(api_->beginCapture(stream_).ok());
  Status refused =
      api_->memcpyAsync(device, pageable.data(), 16, cudaMemcpyHostToDevice, stream_);
  EXPECT_EQ(refused.code(), KILN_STATUS_FAILED_PRECONDITION);
  EXPECT_THAT(refused.message(), HasSubstr("not pinned memory"));
  cudaGraph_t graph = nullptr;
  EXPECT_FALSE(api_->endCapture(stream_, &graph).ok());

  // Pinned memory: captured, and replayed with what the host memory holds at replay.
  ASSERT_TRUE(api_->beginCapture(stream_).ok());
  ASSERT_TRUE(api_->memcpyAsync(device, pinned, 16, cudaMemcpyHostToDevice, stream_).ok());
  ASSERT_TRUE(api_->endCapture(stream_, &graph).ok());
  cudaGraphExec_t exec = nullptr;
  ASSERT_TRUE(api_->graphInstantiate(graph, &exec).ok());
  api_->graphDestroy(graph);
  static_cast<float*>(pinned)[0] = 42;
  ASSERT_TRUE(api_->graphLaunch(exec, stream_).ok());
  // A download to pageable memory waits for the stream, the replay included.
  std::vector<float> back(4, 0);
  ASSERT_TRUE(api_->memcpyAsync(back.data(), device, 16, cudaMemcpyDeviceToHost, stream_).ok());
  EXPECT_EQ(back[0], 42.0f);
  api_->graphExecDestroy(exec);
  EXPECT_TRUE(api_->free(device).ok());
  EXPECT_TRUE(api_->freeHost(pinned).ok());
}

// Tests that copies and memsets must stay inside device allocations, and that only what
// cudaMalloc returned can be freed.
TEST_F(CudaSimApiTest, AccessesOutsideAllocationsAreRefused) {
  void* device = nullptr;
  void* pinned = nullptr;
  ASSERT_TRUE(api_->malloc(&device, 100).ok());
  ASSERT_TRUE(api_->hostAlloc(&pinned, 200).ok());
  Status memset = api_->memsetAsync(static_cast<uint8_t*>(device) + 50, 0, 51, stream_);
  EXPECT_EQ(memset.code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(memset.message(), HasSubstr("outside every device allocation"));
  Status upload = api_->memcpyAsync(device, pinned, 101, cudaMemcpyHostToDevice, stream_);
  EXPECT_EQ(upload.code(), KILN_STATUS_INVALID_ARGUMENT);
  Status between = api_->memcpyAsync(device, pinned, 16, cudaMemcpyDeviceToDevice, stream_);
  EXPECT_EQ(between.code(), KILN_STATUS_INVALID_ARGUMENT);
  Status free_inside = api_->free(static_cast<uint8_t*>(device) + 8);
  EXPECT_EQ(free_inside.code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(free_inside.message(), HasSubstr("which cudaMalloc did not return"));
  EXPECT_TRUE(api_->free(device).ok());
  EXPECT_TRUE(api_->freeHost(pinned).ok());
}

// Tests that the simulated device is one device, ordinal 0, with sm_80's compute capability.
TEST_F(CudaSimApiTest, IsOneDevice) {
  auto devices = api_->devices();
  ASSERT_TRUE(devices.ok());
  ASSERT_EQ(devices->size(), 1u);
  EXPECT_EQ((*devices)[0].compute_capability_major, 8);
  EXPECT_TRUE(api_->setDevice(0).ok());
  EXPECT_EQ(api_->setDevice(1).code(), KILN_STATUS_INVALID_ARGUMENT);
}

}  // namespace
}  // namespace kiln::testing
