//===- cuda_sim_api_test.cpp - CUDA's rules on the simulated CUDA device --===//
//
// The simulated device's CudaApi refuses what a GPU would: allocation, freeing and
// synchronization while the calling thread captures a stream (and the capture is invalidated),
// copies of pageable host memory in a capture, copies and memsets outside device allocations,
// a capture that ends with a forked stream not joined back; its memory starts poisoned with NaN
// bytes; its streams run their work when synchronized, in order, and other streams' work only
// when an event orders it first; a captured graph replays the work it recorded, branches in any
// order their dependencies allow.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/cuda/sim/sim_cuda_api.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <string>
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
    if (stream_ != nullptr) {
      EXPECT_TRUE(api_->streamDestroy(stream_).ok());
    }
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

/// Memsets `bytes` of `device` to `value` on `from`, then copies them to `pinned` on `to`; with
/// `ordered`, `to` waits on an event recorded on `from` after the memset.
void memsetThenCopy(CudaApi& api, cudaStream_t from, cudaStream_t to, void* device, void* pinned,
                    int value, size_t bytes, bool ordered, cudaEvent_t event) {
  ASSERT_TRUE(api.memsetAsync(device, value, bytes, from).ok());
  if (ordered) {
    ASSERT_TRUE(api.eventRecord(event, from).ok());
    ASSERT_TRUE(api.streamWaitEvent(to, event).ok());
  }
  ASSERT_TRUE(api.memcpyAsync(pinned, device, bytes, cudaMemcpyDeviceToHost, to).ok());
}

// Tests that streams are ordered only by events: a copy on one stream sees a memset on another
// when it waits on an event recorded after it, and does not (it reads the poison) when it does
// not, as a missing event would show on a GPU some of the time.
TEST_F(CudaSimApiTest, StreamsAreOrderedOnlyByEvents) {
  cudaStream_t other = nullptr;
  cudaEvent_t event = nullptr;
  ASSERT_TRUE(api_->streamCreate(&other).ok());
  ASSERT_TRUE(api_->eventCreate(&event).ok());
  void* device = nullptr;
  void* pinned = nullptr;
  ASSERT_TRUE(api_->malloc(&device, 64).ok());
  ASSERT_TRUE(api_->hostAlloc(&pinned, 64).ok());

  memsetThenCopy(*api_, other, stream_, device, pinned, 0x01, 64, /*ordered=*/true, event);
  ASSERT_TRUE(api_->streamSynchronize(stream_).ok());
  EXPECT_EQ(static_cast<uint8_t*>(pinned)[0], 0x01);

  void* fresh = nullptr;
  ASSERT_TRUE(api_->malloc(&fresh, 64).ok());
  memsetThenCopy(*api_, other, stream_, fresh, pinned, 0x02, 64, /*ordered=*/false, event);
  ASSERT_TRUE(api_->streamSynchronize(stream_).ok());
  EXPECT_EQ(static_cast<uint8_t*>(pinned)[0], kSimPoisonByte);
  ASSERT_TRUE(api_->streamSynchronize(other).ok());

  EXPECT_TRUE(api_->free(device).ok());
  EXPECT_TRUE(api_->free(fresh).ok());
  EXPECT_TRUE(api_->freeHost(pinned).ok());
  EXPECT_TRUE(api_->eventDestroy(event).ok());
  EXPECT_TRUE(api_->streamDestroy(other).ok());
}

// Tests a captured fork and join: the origin stream forks a second stream with an event, joins
// it back with another, and the graph replays both branches in an order their dependencies allow,
// also with a seeded order.
TEST_F(CudaSimApiTest, CapturesAForkAndJoinAcrossStreams) {
  for (const char* seed : {"0", "5"}) {
    SCOPED_TRACE(std::string("seed ") + seed);
    ::setenv(runtime::cuda::sim::kSimSeedEnvironmentVariable, seed, 1);
    std::unique_ptr<CudaApi> api = createSimCudaApi();
    ::unsetenv(runtime::cuda::sim::kSimSeedEnvironmentVariable);
    cudaStream_t origin = nullptr, branch = nullptr;
    cudaEvent_t fork = nullptr, join = nullptr;
    ASSERT_TRUE(api->streamCreate(&origin).ok());
    ASSERT_TRUE(api->streamCreate(&branch).ok());
    ASSERT_TRUE(api->eventCreate(&fork).ok());
    ASSERT_TRUE(api->eventCreate(&join).ok());
    void* device = nullptr;
    void* pinned = nullptr;
    ASSERT_TRUE(api->malloc(&device, 128).ok());
    ASSERT_TRUE(api->hostAlloc(&pinned, 128).ok());

    ASSERT_TRUE(api->beginCapture(origin).ok());
    ASSERT_TRUE(api->memsetAsync(device, 0x10, 64, origin).ok());
    ASSERT_TRUE(api->eventRecord(fork, origin).ok());
    ASSERT_TRUE(api->streamWaitEvent(branch, fork).ok());
    // Both halves at once: the branch writes the second, the origin the first again.
    ASSERT_TRUE(api->memsetAsync(static_cast<uint8_t*>(device) + 64, 0x20, 64, branch).ok());
    ASSERT_TRUE(api->memsetAsync(device, 0x11, 64, origin).ok());
    ASSERT_TRUE(api->eventRecord(join, branch).ok());
    ASSERT_TRUE(api->streamWaitEvent(origin, join).ok());
    ASSERT_TRUE(api->memcpyAsync(pinned, device, 128, cudaMemcpyDeviceToHost, origin).ok());
    cudaGraph_t graph = nullptr;
    Status ended = api->endCapture(origin, &graph);
    ASSERT_TRUE(ended.ok()) << ended.toString();
    cudaGraphExec_t exec = nullptr;
    ASSERT_TRUE(api->graphInstantiate(graph, &exec).ok());
    api->graphDestroy(graph);
    std::memset(pinned, 0, 128);
    ASSERT_TRUE(api->graphLaunch(exec, origin).ok());
    ASSERT_TRUE(api->streamSynchronize(origin).ok());
    EXPECT_EQ(static_cast<uint8_t*>(pinned)[0], 0x11);
    EXPECT_EQ(static_cast<uint8_t*>(pinned)[127], 0x20);
    api->graphExecDestroy(exec);
    EXPECT_TRUE(api->free(device).ok());
    EXPECT_TRUE(api->freeHost(pinned).ok());
  }
}

// Tests that a capture whose forked stream is not joined back fails to end, as CUDA's
// cudaErrorStreamCaptureUnjoined.
TEST_F(CudaSimApiTest, ACaptureWithAnUnjoinedStreamFails) {
  cudaStream_t branch = nullptr;
  cudaEvent_t fork = nullptr;
  ASSERT_TRUE(api_->streamCreate(&branch).ok());
  ASSERT_TRUE(api_->eventCreate(&fork).ok());
  void* device = nullptr;
  ASSERT_TRUE(api_->malloc(&device, 64).ok());
  ASSERT_TRUE(api_->beginCapture(stream_).ok());
  ASSERT_TRUE(api_->eventRecord(fork, stream_).ok());
  ASSERT_TRUE(api_->streamWaitEvent(branch, fork).ok());
  ASSERT_TRUE(api_->memsetAsync(device, 0, 64, branch).ok());
  cudaGraph_t graph = nullptr;
  Status ended = api_->endCapture(stream_, &graph);
  EXPECT_EQ(ended.code(), KILN_STATUS_FAILED_PRECONDITION);
  EXPECT_THAT(ended.message(), HasSubstr("cudaErrorStreamCaptureUnjoined"));
  EXPECT_EQ(graph, nullptr);
  EXPECT_TRUE(api_->free(device).ok());
  EXPECT_TRUE(api_->streamDestroy(branch).ok());
}

// Tests that the simulated device is one device, ordinal 0, with sm_80's compute capability.
// Tests timed events as traces use them: the time between two records is the host time between
// the simulator reaching them in the stream's order (at the synchronization, not the enqueue),
// and events without timing, or whose record has not run yet, are refused as CUDA refuses them.
TEST_F(CudaSimApiTest, TimedEventsMeasureTheWorkBetweenTheirRecords) {
  cudaEvent_t begin = nullptr, end = nullptr, untimed = nullptr;
  ASSERT_TRUE(api_->timedEventCreate(&begin).ok());
  ASSERT_TRUE(api_->timedEventCreate(&end).ok());
  ASSERT_TRUE(api_->eventCreate(&untimed).ok());
  void *device = nullptr;
  ASSERT_TRUE(api_->malloc(&device, size_t{64} << 20).ok());
  ASSERT_TRUE(api_->eventRecord(begin, stream_).ok());
  for (int i = 0; i < 8; ++i)
    ASSERT_TRUE(api_->memsetAsync(device, i, size_t{64} << 20, stream_).ok());
  ASSERT_TRUE(api_->eventRecord(end, stream_).ok());
  ASSERT_TRUE(api_->eventRecord(untimed, stream_).ok());
  float milliseconds = -1;
  Status early = api_->eventElapsed(begin, end, &milliseconds);
  EXPECT_EQ(early.code(), KILN_STATUS_FAILED_PRECONDITION);
  EXPECT_THAT(early.message(), HasSubstr("cudaErrorNotReady"));
  ASSERT_TRUE(api_->streamSynchronize(stream_).ok());
  ASSERT_TRUE(api_->eventElapsed(begin, end, &milliseconds).ok());
  // Eight 64 MiB memsets take well over a microsecond on any host.
  EXPECT_GT(milliseconds, 0.001f);
  float reversed = 0;
  ASSERT_TRUE(api_->eventElapsed(end, begin, &reversed).ok());
  EXPECT_FLOAT_EQ(reversed, -milliseconds);
  Status untimed_status = api_->eventElapsed(begin, untimed, &milliseconds);
  EXPECT_EQ(untimed_status.code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(untimed_status.message(), HasSubstr("without timing"));
  EXPECT_TRUE(api_->free(device).ok());
}

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
