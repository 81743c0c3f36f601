//===- cuda_program_test.cpp - Running .kiln artifacts on a CUDA GPU ------===//
//
// The CUDA device over the hand-written PTX program of artifact_builder.h (cudaAffineSpec):
// code-object choice and grid sizing, which need no GPU; session creation failing cleanly
// without one; and results against the host over eager, captured and replayed runs, with graphs
// turned off, from several threads, with a cuBLASLt call inside the graph, and the errors of
// missing kernels and a faulting kernel. Those run twice: on a GPU (skipped without one), and
// on the simulated CUDA device, whose code object is the same two kernels written in C against
// the simulator's ABI (sim_abi.h) and compiled by the system C compiler at test time. A cubin
// and PTX that does not load need the GPU.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/cuda/cuda_program.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kiln/runtime.hpp"
#include "runtime/src/artifact/artifact.h"
#include "runtime/src/cuda/cuda_api.h"
#include "runtime/src/cuda/cuda_device.h"
#include "runtime/src/cuda/sim/register_simulated_cuda.h"
#include "runtime/src/cuda/sim/sim_cuda_api.h"
#include "tests/runtime/artifact_builder.h"
#include "tests/runtime/test_util.h"

namespace kiln::testing {
namespace {

using ::kiln::runtime::CudaDeviceInfo;
using ::kiln::runtime::LoadedArtifact;
using ::kiln::runtime::probeCudaDevices;
using ::kiln::runtime::cuda::CudaGraphMode;
using ::kiln::runtime::cuda::cudaGridSize;
using ::kiln::runtime::cuda::CudaProgram;
using ::kiln::runtime::cuda::CudaProgramStatistics;
using ::kiln::runtime::cuda::selectCudaCodeObject;
using ::testing::HasSubstr;
using ::testing::StartsWith;

/// Not a multiple of either block size, and more work items than an H100's resident threads
/// (132 SMs x 2048), so the last block is partial and the kernels' stride loop iterates.
constexpr uint64_t kCount = (1u << 20) + 3;

std::shared_ptr<const LoadedArtifact> loadInternal(const ArtifactSpec& spec,
                                                   const std::string& name = "cuda.kiln") {
  std::string bytes = buildArtifact(spec);
  auto artifact = LoadedArtifact::loadMemory(bytes.data(), bytes.size(), name);
  EXPECT_TRUE(artifact.ok()) << artifact.status().toString();
  return artifact.ok() ? *artifact : nullptr;
}

Artifact loadPublic(const ArtifactSpec& spec, const std::string& name = "cuda.kiln") {
  std::string bytes = buildArtifact(spec);
  Result<Artifact> artifact = Artifact::loadMemory(bytes.data(), bytes.size(), name);
  EXPECT_TRUE(artifact.ok()) << artifact.status().toString();
  return artifact.ok() ? std::move(*artifact) : Artifact();
}

/// Checks cudaAffineSpec's outputs against the host: the device computes with fused
/// multiply-adds, which std::fma reproduces exactly.
void expectAffineResults(const Tensor& x, const std::vector<Tensor>& outputs) {
  ASSERT_EQ(outputs.size(), 2u);
  ASSERT_EQ(outputs[0].elementCount(), x.elementCount());
  const float* xs = x.dataAs<float>();
  const float* ys = outputs[0].dataAs<float>();
  const float* copies = outputs[1].dataAs<float>();
  for (size_t i = 0; i < x.elementCount(); ++i) {
    float t = std::fma(xs[i], 2.0f, 1.0f);
    ASSERT_EQ(ys[i], std::fma(t, kCudaScale, kCudaShift)) << "y[" << i << "]";
    ASSERT_EQ(copies[i], xs[i]) << "x_copy[" << i << "]";
  }
}

/// Runs `program` on `inputs` through the internal API.
Result<std::vector<Tensor>> runProgram(CudaProgram& program,
                                       const std::vector<const Tensor*>& inputs) {
  std::vector<const kiln_tensor_t*> c_inputs;
  for (const Tensor* input : inputs) c_inputs.push_back(input->get());
  std::vector<kiln_tensor_t*> c_outputs(program.artifact().outputs().size(), nullptr);
  Status status = program.run(c_inputs.size(), c_inputs.data(), c_outputs.size(), c_outputs.data());
  if (!status.ok()) return status;
  std::vector<Tensor> outputs;
  for (kiln_tensor_t* output : c_outputs) outputs.emplace_back(output);
  return outputs;
}

/// C source of cudaAffineSpec's kernels for the simulated device, in the form the compiler's
/// retargeted kernels take (sim_abi.h): special registers, checked accesses and a trap through
/// the simulator's table. COUNT is defined by the compile command.
constexpr const char* kSimKernelsSource = R"(
#include <math.h>
#include "runtime/src/cuda/sim/sim_abi.h"
const kiln_sim_runtime_t* kiln_sim_runtime;
const kiln_sim_kernel_info_t kiln_sim_info_kiln_k0 = {0, 0, 2};
const kiln_sim_kernel_info_t kiln_sim_info_kiln_k1 = {0, 0, 3};
const kiln_sim_kernel_info_t kiln_sim_info_kiln_trap = {KILN_SIM_KERNEL_BARRIERS, 0, 2};
static uint64_t first(void) {
  const kiln_sim_runtime_t* rt = kiln_sim_runtime;
  return (uint64_t)rt->special_register(KILN_SIM_CTAID_X) * rt->special_register(KILN_SIM_NTID_X) +
         rt->special_register(KILN_SIM_TID_X);
}
static uint64_t stride(void) {
  const kiln_sim_runtime_t* rt = kiln_sim_runtime;
  return (uint64_t)rt->special_register(KILN_SIM_NCTAID_X) * rt->special_register(KILN_SIM_NTID_X);
}
static float load(const float* p) {
  return *(const float*)kiln_sim_runtime->check_access((void*)p, 4, 0, 1);
}
static void store(float* p, float v) {
  *(float*)kiln_sim_runtime->check_access(p, 4, KILN_SIM_ACCESS_WRITE, 2) = v;
}
void kiln_k0(void** args) {
  const float* x = *(float**)args[0];
  float* y = *(float**)args[1];
  for (uint64_t i = first(); i < COUNT; i += stride()) store(&y[i], fmaf(load(&x[i]), 2.0f, 1.0f));
}
void kiln_k1(void** args) {
  const float* x = *(float**)args[0];
  const float* c = *(float**)args[1];
  float* y = *(float**)args[2];
  float scale = load(&c[0]), shift = load(&c[1]);
  for (uint64_t i = first(); i < COUNT; i += stride()) store(&y[i], fmaf(load(&x[i]), scale, shift));
}
void kiln_trap(void** args) { (void)args; kiln_sim_runtime->trap(7); }
)";

/// The simulator's code object of kiln_k0, kiln_k1 and kiln_trap over `count` elements.
std::string simKernels(uint64_t count) {
  ScopedTempPath source(".c");
  ScopedTempPath library(".so");
  writeFileBytes(source.path(), kSimKernelsSource);
  std::string command = "cc -std=c99 -O2 -fPIC -shared -ffp-contract=off -DCOUNT=" +
                        std::to_string(count) + "ull -I" KILN_SOURCE_DIR_PATH " -o " +
                        library.path() + " " + source.path() + " -lm";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return readFileBytes(library.path());
}

/// Where a test runs: on a GPU through CUDA, or on the simulated CUDA device.
enum class Backend { kGpu, kSimulator };

std::string backendName(const ::testing::TestParamInfo<Backend>& info) {
  return info.param == Backend::kGpu ? "Gpu" : "Simulator";
}

/// Runs a test on its backend: cudaAffineSpec gets the simulator's code object (the GPU ignores
/// it), and programs and sessions are created on the backend's device.
class CudaProgramOnDevice : public ::testing::TestWithParam<Backend> {
 protected:
  void SetUp() override {
    if (GetParam() == Backend::kGpu) {
      Result<std::vector<CudaDeviceInfo>> devices = probeCudaDevices();
      if (!devices.ok()) GTEST_SKIP() << "no CUDA device: " << devices.status().message();
    } else {
      // Sessions on KILN_DEVICE_KIND_CUDA_SIM need the simulator installed in the runtime.
      runtime::registerSimulatedCuda();
    }
  }
  ArtifactSpec affineSpec(uint64_t count) {
    ArtifactSpec spec = cudaAffineSpec(count);
    spec.code_objects.push_back({"cuda-sim", fb::CodeFormat::ElfSharedObject, simKernels(count),
                                 spec.code_objects[0].kernels});
    return spec;
  }
  /// affineSpec with its second step on a stream of its own, waiting for the first.
  ArtifactSpec twoStreamAffineSpec(uint64_t count) {
    ArtifactSpec spec = affineSpec(count);
    spec.stream_count = 2;
    spec.steps[1].stream = 1;
    spec.steps[1].waits = {0};
    return spec;
  }
  Result<std::unique_ptr<CudaProgram>> create(const ArtifactSpec& spec) {
    if (GetParam() == Backend::kGpu) return CudaProgram::create(loadInternal(spec), 0);
    return CudaProgram::create(loadInternal(spec), 0, runtime::cuda::sim::createSimCudaApi());
  }
  kiln_device_kind_t deviceKind() const {
    return GetParam() == Backend::kGpu ? KILN_DEVICE_KIND_CUDA : KILN_DEVICE_KIND_CUDA_SIM;
  }
  /// The code object the backend loads: the PTX, or the simulator's.
  uint32_t codeObject() const { return GetParam() == Backend::kGpu ? 0 : 1; }
};

/// The devices, or a skip when there are none.
#define KILN_REQUIRE_GPU(devices)                                   \
  Result<std::vector<CudaDeviceInfo>> devices = probeCudaDevices(); \
  if (!devices.ok()) GTEST_SKIP() << "no CUDA device: " << devices.status().message()

//===----------------------------------------------------------------------===//
// Without a GPU
//===----------------------------------------------------------------------===//

// Tests the choice of code object: an exact cubin first (also an arch-specific one), else a cubin
// of the same major architecture and an older minor one, else the newest PTX the GPU can compile,
// never arch-specific code for another GPU, and a message naming the GPU and every target when
// nothing fits. A wrong choice loads code the GPU cannot run (a newer minor's or another major's
// cubin) or JIT-compiles PTX where machine code was there.
TEST(CudaProgramTest, SelectsTheCubinOfTheGpuElseACompatibleCubinElseTheNewestPtx) {
  ArtifactSpec spec = cudaAffineSpec(16);
  CodeObjectSpec ptx = spec.code_objects[0];
  auto object = [&](fb::CodeFormat format, const std::string& target) {
    CodeObjectSpec code = ptx;
    code.format = format;
    code.target = target;
    return code;
  };
  spec.code_objects = {object(fb::CodeFormat::Ptx, "sm_70"), object(fb::CodeFormat::Cubin, "sm_86"),
                       object(fb::CodeFormat::Ptx, "sm_80"),
                       object(fb::CodeFormat::Cubin, "sm_90a"),
                       object(fb::CodeFormat::Ptx, "sm_90a")};
  auto artifact = loadInternal(spec, "select.kiln");
  ASSERT_TRUE(artifact);
  auto select = [&](int major, int minor) {
    Result<uint32_t> index = selectCudaCodeObject(*artifact, major, minor);
    EXPECT_TRUE(index.ok()) << index.status().toString();
    return index.ok() ? static_cast<int>(*index) : -1;
  };
  EXPECT_EQ(select(8, 6), 1);
  EXPECT_EQ(select(9, 0), 3);
  EXPECT_EQ(select(8, 9), 1);   // sm_86 machine code runs on sm_89
  EXPECT_EQ(select(8, 7), 1);
  EXPECT_EQ(select(8, 0), 2);   // not sm_86 code on an older minor: PTX
  EXPECT_EQ(select(7, 5), 0);
  EXPECT_EQ(select(10, 0), 2);  // neither sm_86 code nor sm_90a PTX on another major: PTX
  EXPECT_EQ(select(12, 0), 2);

  Result<uint32_t> none = selectCudaCodeObject(*artifact, 6, 1);
  EXPECT_EQ(none.status().code(), KILN_STATUS_UNIMPLEMENTED);
  EXPECT_THAT(none.status().message(),
              StartsWith("select.kiln: no code object runs on this GPU (sm_61): the artifact has "
                         "ptx sm_70, cubin sm_86, ptx sm_80, cubin sm_90a, ptx sm_90a;"));
}

// Tests the grid size: one thread per work item up to what the GPU holds at once, the fallback
// residency when the occupancy query has no answer, and never an empty grid.
TEST(CudaProgramTest, SizesGridsByWorkAndResidency) {
  EXPECT_EQ(cudaGridSize(1000, 256, 132, 8), 4u);
  EXPECT_EQ(cudaGridSize(1024, 256, 132, 8), 4u);
  EXPECT_EQ(cudaGridSize(1u << 30, 256, 132, 8), 132u * 8u);
  EXPECT_EQ(cudaGridSize(1u << 30, 256, 10, 0), 10u * 4u);
  EXPECT_EQ(cudaGridSize(1, 1024, 132, 2), 1u);
  EXPECT_EQ(cudaGridSize(0, 1024, 132, 2), 1u);
}

// Tests that a CUDA program refuses an artifact of another device before touching a GPU.
TEST(CudaProgramTest, RefusesACpuArtifact) {
  // The CUDA program recompiled for the CPU: a shared object it never loads, so that the test
  // needs no file of the build tree (it also runs from the GPU check's bundle).
  ArtifactSpec spec = cudaAffineSpec(1000);
  spec.device = "cpu";
  spec.code_objects[0] = {"x86_64",
                          fb::CodeFormat::ElfSharedObject,
                          "\x7f"
                          "ELF, never loaded",
                          {"kiln_k0", "kiln_k1"}};
  for (StepSpec &step : spec.steps)
    step.cuda.reset();
  auto artifact = loadInternal(spec, "affine.kiln");
  ASSERT_TRUE(artifact);
  auto program = CudaProgram::create(artifact, 0);
  EXPECT_EQ(program.status().code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(program.status().message(),
            "affine.kiln: the artifact was compiled for device 'cpu', not for cuda");
}

// Tests that on a machine without a GPU (or driver) a CUDA session fails with UNAVAILABLE and
// the probe's reason, through the C API as through the program: not a crash, and not a status
// that hides why.
TEST(CudaProgramTest, SessionCreationIsUnavailableWithoutAGpu) {
  Result<std::vector<CudaDeviceInfo>> devices = probeCudaDevices();
  if (devices.ok()) GTEST_SKIP() << "this machine has a CUDA device";
  Artifact artifact = loadPublic(cudaAffineSpec(kCount));
  SessionOptions options;
  options.deviceKind = KILN_DEVICE_KIND_CUDA;
  Status status = Session::create(artifact, options).status();
  EXPECT_EQ(status.code(), KILN_STATUS_UNAVAILABLE) << status.toString();
  EXPECT_EQ(status.message(), "cuda.kiln: " + devices.status().message());

  auto program = CudaProgram::create(loadInternal(cudaAffineSpec(kCount)), 0);
  EXPECT_EQ(program.status().code(), KILN_STATUS_UNAVAILABLE);
}

//===----------------------------------------------------------------------===//
// On a GPU
//===----------------------------------------------------------------------===//

// Tests the three ways a run executes: the first launches every step eagerly, the second
// captures the run into a graph, the third replays it. Each run gets new inputs, so a graph that
// replayed stale inputs or outputs, a lost partial block or a stride loop that stopped early
// fails; the copy step makes an output of an input.
TEST_P(CudaProgramOnDevice, RunsEagerlyThenCapturesThenReplays) {
  auto created = create(affineSpec(kCount));
  ASSERT_TRUE(created.ok()) << created.status().toString();
  CudaProgram& program = **created;

  const CudaGraphMode expected_modes[] = {CudaGraphMode::kCapture, CudaGraphMode::kReplay,
                                          CudaGraphMode::kReplay};
  for (int run = 0; run < 3; ++run) {
    SCOPED_TRACE("run " + std::to_string(run + 1));
    Tensor x = seededF32Tensor({static_cast<int64_t>(kCount)}, 100 + run);
    Result<std::vector<Tensor>> outputs = runProgram(program, {&x});
    ASSERT_TRUE(outputs.ok()) << outputs.status().toString();
    expectAffineResults(x, *outputs);
    CudaProgramStatistics stats = program.cudaStatistics();
    EXPECT_EQ(stats.graph_mode, expected_modes[run]) << stats.graph_disabled_reason;
    EXPECT_EQ(stats.eager_runs, 1u);
    EXPECT_EQ(stats.graph_runs, static_cast<uint64_t>(run));
  }

  CudaProgramStatistics stats = program.cudaStatistics();
  ASSERT_EQ(stats.dispatch_grid_sizes.size(), 2u);
  const uint32_t block_sizes[] = {256, 128};
  for (size_t d = 0; d < 2; ++d) {
    EXPECT_GE(stats.dispatch_grid_sizes[d], 1u);
    EXPECT_LE(stats.dispatch_grid_sizes[d], (kCount + block_sizes[d] - 1) / block_sizes[d]);
  }
  EXPECT_EQ(program.statistics().run_count, 3u);
}

// Tests a program on two streams: the second kernel runs on stream 1 after the first, which it
// reads (an event), the copy beside it on stream 0. The eager run, the capture of both streams
// into one graph (stream 1 forked from and joined back to stream 0, or the capture fails) and
// its replays give the right results; on the simulator the graph's nodes replay in a seeded
// shuffled order, so a missing edge between the streams shows (without the wait this fails).
TEST_P(CudaProgramOnDevice, RunsTheStreamsOfAProgramAndCapturesThemTogether) {
  ArtifactSpec spec = twoStreamAffineSpec(kCount);
  ::setenv(runtime::cuda::sim::kSimSeedEnvironmentVariable, "11", 1);
  auto created = create(spec);
  ::unsetenv(runtime::cuda::sim::kSimSeedEnvironmentVariable);
  ASSERT_TRUE(created.ok()) << created.status().toString();
  const CudaGraphMode expected_modes[] = {CudaGraphMode::kCapture, CudaGraphMode::kReplay,
                                          CudaGraphMode::kReplay, CudaGraphMode::kReplay};
  for (int run = 0; run < 4; ++run) {
    SCOPED_TRACE("run " + std::to_string(run + 1));
    Tensor x = seededF32Tensor({static_cast<int64_t>(kCount)}, 300 + run);
    Result<std::vector<Tensor>> outputs = runProgram(**created, {&x});
    ASSERT_TRUE(outputs.ok()) << outputs.status().toString();
    expectAffineResults(x, *outputs);
    CudaProgramStatistics stats = (*created)->cudaStatistics();
    EXPECT_EQ(stats.graph_mode, expected_modes[run]) << stats.graph_disabled_reason;
  }
}

// Tests a traced program: each traced run runs its steps one by one with timed events, a slice
// per step (on its stream's track) within the run's time, in step order without overlap on a
// stream; the results are right, and once the trace stops the program captures and replays as
// before (traced runs are eager runs, never the graph).
TEST_P(CudaProgramOnDevice, TracedRunsTimeEveryStepAndLeaveTheGraphAlone) {
  ArtifactSpec spec = twoStreamAffineSpec(kCount);
  auto created = create(spec);
  ASSERT_TRUE(created.ok()) << created.status().toString();
  CudaProgram &program = **created;
  const size_t steps = spec.steps.size();
  program.trace().start();
  for (int run = 0; run < 2; ++run) {
    Tensor x = seededF32Tensor({static_cast<int64_t>(kCount)}, 400 + run);
    int64_t before = program.trace().now();
    Result<std::vector<Tensor>> outputs = runProgram(program, {&x});
    int64_t after = program.trace().now();
    ASSERT_TRUE(outputs.ok()) << outputs.status().toString();
    expectAffineResults(x, *outputs);
    EXPECT_LE(before, after);
  }
  std::vector<runtime::TraceSlice> slices = program.trace().stop();
  ASSERT_EQ(slices.size(), 2 * steps);
  for (size_t i = 0; i < slices.size(); ++i) {
    const runtime::TraceSlice &slice = slices[i];
    EXPECT_EQ(slice.run, i / steps);
    EXPECT_EQ(slice.step, i % steps);
    EXPECT_EQ(slice.stream, spec.steps[slice.step].stream);
    EXPECT_LE(slice.begin_ns, slice.end_ns) << "step " << slice.step;
    // The steps of one stream follow each other; stream 1's waits for step 0.
    if (slice.step > 0 && slice.stream == slices[i - 1].stream) {
      EXPECT_GE(slice.begin_ns, slices[i - 1].end_ns) << "step " << slice.step;
    }
    if (slice.step == 1) {
      EXPECT_GE(slice.begin_ns, slices[i - 1].end_ns) << "the wait";
    }
  }
  CudaProgramStatistics stats = program.cudaStatistics();
  EXPECT_EQ(stats.eager_runs, 2u);
  EXPECT_EQ(stats.graph_runs, 0u);
  EXPECT_EQ(stats.graph_mode, CudaGraphMode::kCapture);
  Tensor x = seededF32Tensor({static_cast<int64_t>(kCount)}, 500);
  Result<std::vector<Tensor>> outputs = runProgram(program, {&x});
  ASSERT_TRUE(outputs.ok()) << outputs.status().toString();
  expectAffineResults(x, *outputs);
  EXPECT_EQ(program.cudaStatistics().graph_mode, CudaGraphMode::kReplay);
}

// Tests that KILN_CUDA_GRAPHS=0 keeps every run eager, with the same results.
// Tests kiln_session_time_device's program side: refused before a first run; then the steps
// alone (two streams) are timed, as a graph of their own once the run's graph replays and one by
// one before, each time a positive figure; runs before and after still give their own inputs'
// results, and the timings count as no runs.
TEST_P(CudaProgramOnDevice, TimesTheStepsAloneOnTheLastRunsInputs) {
  ArtifactSpec spec = twoStreamAffineSpec(kCount);
  auto created = create(spec);
  ASSERT_TRUE(created.ok()) << created.status().toString();
  CudaProgram &program = **created;
  double milliseconds[4] = {-1, -1, -1, -1};
  Status before = program.timeDevice(4, milliseconds);
  EXPECT_EQ(before.code(), KILN_STATUS_FAILED_PRECONDITION) << before.toString();
  for (int run = 0; run < 3; ++run) {
    Tensor x = seededF32Tensor({static_cast<int64_t>(kCount)}, 600 + run);
    Result<std::vector<Tensor>> outputs = runProgram(program, {&x});
    ASSERT_TRUE(outputs.ok()) << outputs.status().toString();
    expectAffineResults(x, *outputs);
    if (run == 0) {
      // Eagerly, before the run's graph exists.
      Status timed = program.timeDevice(2, milliseconds);
      ASSERT_TRUE(timed.ok()) << timed.toString();
      EXPECT_GE(milliseconds[0], 0.0);
      EXPECT_GE(milliseconds[1], 0.0);
    }
  }
  ASSERT_EQ(program.cudaStatistics().graph_mode, CudaGraphMode::kReplay);
  Status timed = program.timeDevice(4, milliseconds);
  ASSERT_TRUE(timed.ok()) << timed.toString();
  // The events enclose the steps' work: a time, not an empty interval.
  for (double ms : milliseconds)
    EXPECT_GT(ms, 0.0);
  Tensor x = seededF32Tensor({static_cast<int64_t>(kCount)}, 700);
  Result<std::vector<Tensor>> outputs = runProgram(program, {&x});
  ASSERT_TRUE(outputs.ok()) << outputs.status().toString();
  expectAffineResults(x, *outputs);
  CudaProgramStatistics stats = program.cudaStatistics();
  EXPECT_EQ(stats.eager_runs + stats.graph_runs, 4u);
}

TEST_P(CudaProgramOnDevice, RunsEveryStepEagerlyWithGraphsOff) {
  ::setenv(runtime::cuda::kCudaGraphsEnvironmentVariable, "0", 1);
  auto created = create(affineSpec(kCount));
  ::unsetenv(runtime::cuda::kCudaGraphsEnvironmentVariable);
  ASSERT_TRUE(created.ok()) << created.status().toString();
  for (int run = 0; run < 3; ++run) {
    Tensor x = seededF32Tensor({static_cast<int64_t>(kCount)}, 200 + run);
    Result<std::vector<Tensor>> outputs = runProgram(**created, {&x});
    ASSERT_TRUE(outputs.ok()) << outputs.status().toString();
    expectAffineResults(x, *outputs);
  }
  CudaProgramStatistics stats = (*created)->cudaStatistics();
  EXPECT_EQ(stats.graph_mode, CudaGraphMode::kDisabled);
  EXPECT_EQ(stats.graph_disabled_reason, "KILN_CUDA_GRAPHS=0");
  EXPECT_EQ(stats.eager_runs, 3u);
  EXPECT_EQ(stats.graph_runs, 0u);
}

// Tests that one session serves several threads: runs share its buffers and take turns, so
// every thread must still get the results of its own inputs; also the session's statistics.
TEST_P(CudaProgramOnDevice, ServesRunsFromSeveralThreads) {
  constexpr int kThreads = 4;
  constexpr int kRunsPerThread = 6;
  constexpr uint64_t kSmall = 10007;
  Artifact artifact = loadPublic(affineSpec(kSmall));
  SessionOptions options;
  options.deviceKind = deviceKind();
  Result<Session> session = Session::create(artifact, options);
  ASSERT_TRUE(session.ok()) << session.status().toString();

  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRunsPerThread; ++r) {
        Tensor x = seededF32Tensor({static_cast<int64_t>(kSmall)}, 1000 + t * 100 + r);
        Result<std::vector<Tensor>> outputs = session->run({&x});
        if (!outputs.ok()) {
          failures[t] = outputs.status().toString();
          return;
        }
        const float* xs = x.dataAs<float>();
        const float* ys = (*outputs)[0].dataAs<float>();
        for (size_t i = 0; i < kSmall; ++i) {
          if (ys[i] != std::fma(std::fma(xs[i], 2.0f, 1.0f), kCudaScale, kCudaShift)) {
            failures[t] = "run " + std::to_string(r) + ": y[" + std::to_string(i) + "] is wrong";
            return;
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;

  kiln_session_statistics_t stats = session->statistics().value();
  EXPECT_EQ(stats.run_count, static_cast<uint64_t>(kThreads * kRunsPerThread));
  EXPECT_EQ(stats.num_threads, 1u);
  EXPECT_EQ(stats.arena_count, 1u);
  EXPECT_EQ(stats.arena_size, (kSmall * sizeof(float) + 63) / 64 * 64);
  EXPECT_EQ(stats.arena_bytes_allocated, stats.arena_size);
}

// Tests that CUDA runs check their inputs exactly as CPU runs do (one shared check).
TEST_P(CudaProgramOnDevice, RefusesMismatchedInputs) {
  Artifact artifact = loadPublic(affineSpec(1000));
  SessionOptions options;
  options.deviceKind = deviceKind();
  Session session = Session::create(artifact, options).value();
  Tensor narrow = seededF32Tensor({999}, 1);
  Status status = session.run({&narrow}).status();
  EXPECT_EQ(status.code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "input 'x': expected f32[1000], got f32[999]");
  EXPECT_EQ(session.run({}).status().message(), "cuda.kiln: expected 1 inputs, got 0");
  // A refused run leaves the session usable.
  Tensor x = seededF32Tensor({1000}, 2);
  Result<std::vector<Tensor>> outputs = session.run({&x});
  ASSERT_TRUE(outputs.ok()) << outputs.status().toString();
  expectAffineResults(x, *outputs);
}

// Tests that an options struct of API version 2 (without device_ordinal) still creates a
// session, on device 0, whatever lies past its end.
TEST_P(CudaProgramOnDevice, OlderOptionsStructsRunOnDeviceZero) {
  Artifact artifact = loadPublic(affineSpec(1000));
  kiln_session_options_t options;
  kiln_session_options_initialize(&options);
  options.device_kind = deviceKind();
  options.struct_size = offsetof(kiln_session_options_t, device_ordinal);
  options.device_ordinal = 12345;
  kiln_session_t* handle = nullptr;
  Status status = Status::fromC(kiln_session_create(artifact.get(), &options, &handle));
  EXPECT_TRUE(status.ok()) << status.toString();
  kiln_session_release(handle);

  options.struct_size = sizeof(options);
  status = Status::fromC(kiln_session_create(artifact.get(), &options, &handle));
  EXPECT_EQ(status.code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(status.message(), HasSubstr("device 12345 does not exist"));
}

// Tests that a cubin for exactly the GPU's architecture is chosen over PTX and runs. The cubin
// is assembled here from the same PTX with the toolkit's ptxas.
TEST(CudaProgramTest, LoadsTheCubinOfTheGpu) {
  KILN_REQUIRE_GPU(devices);
  const CudaDeviceInfo& device = (*devices)[0];
  const std::string arch = "sm_" + std::to_string(device.compute_capability_major) +
                           std::to_string(device.compute_capability_minor);
  ScopedTempPath ptx_path(".ptx");
  ScopedTempPath cubin_path(".cubin");
  writeFileBytes(ptx_path.path(), gridStridePtx(kCount, arch, "8.8"));
  std::string command = std::string(KILN_PTXAS_PATH) + " -arch=" + arch + " -o " +
                        cubin_path.path() + " " + ptx_path.path();
  if (std::system(command.c_str()) != 0) GTEST_SKIP() << "ptxas cannot assemble for " << arch;

  ArtifactSpec spec = cudaAffineSpec(kCount);
  spec.code_objects.push_back({arch, fb::CodeFormat::Cubin, readFileBytes(cubin_path.path()),
                               spec.code_objects[0].kernels});
  auto created = CudaProgram::create(loadInternal(spec), 0);
  ASSERT_TRUE(created.ok()) << created.status().toString();
  EXPECT_EQ((*created)->cudaStatistics().code_object, 1u);
  Tensor x = seededF32Tensor({static_cast<int64_t>(kCount)}, 300);
  Result<std::vector<Tensor>> outputs = runProgram(**created, {&x});
  ASSERT_TRUE(outputs.ok()) << outputs.status().toString();
  expectAffineResults(x, *outputs);
}

// Tests that a cuBLASLt call between generated kernels runs in all three modes and is captured
// into the graph with them (its workspace and handles are the session's): d = a x b, then
// y = d * 2 + 1.
TEST_P(CudaProgramOnDevice, CapturesALibraryCallWithTheKernels) {
  constexpr int64_t kM = 64, kK = 32, kN = 48;
  constexpr uint64_t kElements = kM * kN;
  ArtifactSpec spec = affineSpec(kElements);
  spec.inputs = {{"a", KILN_ELEMENT_TYPE_F32, {kM, kK}, {}},
                 {"b", KILN_ELEMENT_TYPE_F32, {kK, kN}, {}}};
  spec.outputs = {{"y", KILN_ELEMENT_TYPE_F32, {kM, kN}, {}}};
  spec.constants.clear();
  StepSpec matmul;
  matmul.kind = fb::StepKind::LibraryCall;
  matmul.name = "cublaslt.matmul";
  matmul.bindings = {f32Binding(fb::BufferKind::Input, 0, {kM, kK}),
                     f32Binding(fb::BufferKind::Input, 1, {kK, kN}),
                     f32Binding(fb::BufferKind::Arena, 0, {kM, kN})};
  StepSpec scale = spec.steps[0];
  scale.bindings = {f32Binding(fb::BufferKind::Arena, 0, {kM, kN}),
                    f32Binding(fb::BufferKind::Output, 0, {kM, kN})};
  spec.steps = {matmul, scale};

  auto created = create(spec);
  ASSERT_TRUE(created.ok()) << created.status().toString();
  for (int run = 0; run < 3; ++run) {
    SCOPED_TRACE("run " + std::to_string(run + 1));
    Tensor a = seededF32Tensor({kM, kK}, 400 + run);
    Tensor b = seededF32Tensor({kK, kN}, 500 + run);
    Result<std::vector<Tensor>> outputs = runProgram(**created, {&a, &b});
    ASSERT_TRUE(outputs.ok()) << outputs.status().toString();
    const float* as = a.dataAs<float>();
    const float* bs = b.dataAs<float>();
    const float* ys = (*outputs)[0].dataAs<float>();
    for (int64_t m = 0; m < kM; ++m) {
      for (int64_t n = 0; n < kN; ++n) {
        double d = 0.0;
        for (int64_t k = 0; k < kK; ++k) d += double(as[m * kK + k]) * bs[k * kN + n];
        ASSERT_NEAR(ys[m * kN + n], 2.0 * d + 1.0, 1e-3 * (1.0 + std::fabs(d)))
            << "y[" << m << "][" << n << "]";
      }
    }
  }
  CudaProgramStatistics stats = (*created)->cudaStatistics();
  EXPECT_EQ(stats.graph_mode, CudaGraphMode::kReplay) << stats.graph_disabled_reason;
  EXPECT_EQ(stats.graph_runs, 2u);
}

// Tests that PTX the driver cannot compile is refused when the session is created, naming the
// code object.
TEST(CudaProgramTest, RefusesCodeThatDoesNotLoad) {
  KILN_REQUIRE_GPU(devices);
  ArtifactSpec spec = cudaAffineSpec(1000);
  spec.code_objects[0].bytes = ".version 7.0\n.target sm_80\nthis is not PTX\n";
  auto program = CudaProgram::create(loadInternal(spec), 0);
  EXPECT_EQ(program.status().code(), KILN_STATUS_INVALID_ARGUMENT) << program.status().toString();
  EXPECT_THAT(program.status().message(),
              StartsWith("cuda.kiln: code object 0 (Ptx for 'sm_80'): the code does not load on "));
}

// Tests that a kernel the artifact lists but the code lacks is refused, naming it.
TEST_P(CudaProgramOnDevice, RefusesAMissingKernel) {
  ArtifactSpec spec = affineSpec(1000);
  for (CodeObjectSpec& code : spec.code_objects) code.kernels[1] = "kiln_missing";
  auto program = create(spec);
  EXPECT_EQ(program.status().code(), KILN_STATUS_INVALID_ARGUMENT) << program.status().toString();
  EXPECT_THAT(program.status().message(),
              HasSubstr(GetParam() == Backend::kGpu
                            ? "code object 0 (Ptx for 'sm_80'): kernel 'kiln_missing' is not "
                              "defined by the code"
                            : "code object 1 (ElfSharedObject for 'cuda-sim'): kernel "
                              "'kiln_missing' is not defined by the code"));
}

TEST_P(CudaProgramOnDevice, RefusesADeviceOrdinalPastTheDevices) {
  std::unique_ptr<runtime::cuda::CudaApi> api = GetParam() == Backend::kGpu
                                                    ? runtime::cuda::createRealCudaApi()
                                                    : runtime::cuda::sim::createSimCudaApi();
  const auto count = static_cast<int>(api->devices()->size());
  auto program = CudaProgram::create(loadInternal(affineSpec(1000)), count, std::move(api));
  EXPECT_EQ(program.status().code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(program.status().message(), HasSubstr("device " + std::to_string(count) +
                                                    " does not exist"));
}

/// A program of one kernel that traps, described as "a kernel that traps".
ArtifactSpec trappingSpec() {
  ArtifactSpec spec = cudaAffineSpec(16);
  spec.code_objects[0].bytes = R"(.version 7.0
.target sm_80
.address_size 64
.visible .entry kiln_trap(
	.param .u64 p0,
	.param .u64 p1
)
{
	trap;
	ret;
}
)";
  spec.code_objects[0].kernels = {"kiln_trap"};
  spec.steps[0].name = "a kernel that traps";
  spec.steps[0].bindings[1] = vectorBinding(fb::BufferKind::Output, 0, 16);
  spec.steps.erase(spec.steps.begin() + 1);
  return spec;
}

// Tests that a kernel that faults on the device is named by its step and description. A fault
// breaks the process's CUDA context, so it runs in a child process of its own.
TEST(CudaProgramDeathTest, NamesAFaultingKernel) {
  KILN_REQUIRE_GPU(devices);
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        auto program = CudaProgram::create(loadInternal(trappingSpec()), 0);
        if (!program.ok()) {
          std::fprintf(stderr, "create: %s\n", program.status().toString().c_str());
          std::_Exit(2);
        }
        Tensor x = seededF32Tensor({16}, 7);
        Status status = runProgram(**program, {&x}).status();
        std::fprintf(stderr, "%s\n", status.toString().c_str());
        // _Exit: the faulted CUDA context is no state to run the runtime's teardown in.
        std::_Exit(status.message().find("step 0 (kernel 'kiln_trap': a kernel that traps): ") !=
                           std::string::npos
                       ? 0
                       : 1);
      },
      ::testing::ExitedWithCode(0), "step 0 \\(kernel 'kiln_trap': a kernel that traps\\)");
}

// Tests that a trapping kernel fails the run on the simulated device, named by its step and
// description, and that the program stays usable (the simulator has no context to lose).
/// A kernel of a program for a range of shapes on the simulated device: y = 2x + 1 over the run's
/// n elements, read from the run's sizes after the bindings (kernel_abi.h: x's dims, then y's).
constexpr const char *kSimRangeKernelSource = R"(
#include <math.h>
#include "runtime/src/cuda/sim/sim_abi.h"
const kiln_sim_runtime_t* kiln_sim_runtime;
const kiln_sim_kernel_info_t kiln_sim_info_kiln_range = {0, 0, 3};
void kiln_range(void** args) {
  const kiln_sim_runtime_t* rt = kiln_sim_runtime;
  const float* x = *(float**)args[0];
  float* y = *(float**)args[1];
  const int64_t* dims = *(int64_t**)args[2];
  int64_t n = *(const int64_t*)rt->check_access((void*)&dims[1], 8, 0, 1);
  uint64_t first = (uint64_t)rt->special_register(KILN_SIM_CTAID_X) *
      rt->special_register(KILN_SIM_NTID_X) + rt->special_register(KILN_SIM_TID_X);
  uint64_t stride = (uint64_t)rt->special_register(KILN_SIM_NCTAID_X) *
      rt->special_register(KILN_SIM_NTID_X);
  for (uint64_t i = first; i < (uint64_t)n; i += stride) {
    float v = *(const float*)rt->check_access((void*)&x[i], 4, 0, 2);
    *(float*)rt->check_access(&y[i], 4, KILN_SIM_ACCESS_WRITE, 3) = fmaf(v, 2.0f, 1.0f);
  }
}
)";

/// An artifact of the simulated device over `x` of `n` elements for a run (symbol 0, `max` the
/// range's upper bound, INT64_MAX for none, `nominal` the static size): one kiln_range launch,
/// y = 2x + 1, or with `through_arena` two, t = 2x + 1 into an arena value sized for the run and
/// y = 2t + 1. Fails the test where the kernel does not compile.
ArtifactSpec rangeSpec(int64_t nominal, int64_t max, bool through_arena) {
  ScopedTempPath source(".c");
  ScopedTempPath library(".so");
  writeFileBytes(source.path(), kSimRangeKernelSource);
  std::string command = "cc -std=c99 -O2 -fPIC -shared -ffp-contract=off -I" KILN_SOURCE_DIR_PATH
                        " -o " +
                        library.path() + " " + source.path() + " -lm";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;

  ArtifactSpec spec;
  spec.device = "cuda";
  const std::vector<std::vector<int64_t>> run_dims = {{KILN_DIM_SYMBOL, 0}};
  spec.inputs = {{"x", KILN_ELEMENT_TYPE_F32, {nominal}, {}, std::nullopt, run_dims}};
  spec.outputs = {{"y", KILN_ELEMENT_TYPE_F32, {nominal}, {}, std::nullopt, run_dims}};
  spec.symbols = {{"n", 0, 0, 1, max}};
  spec.code_objects = {
      {"cuda-sim", fb::CodeFormat::ElfSharedObject, readFileBytes(library.path()), {"kiln_range"}}};
  StepSpec step;
  step.cuda = CudaLaunchSpec{128, 0, {KILN_DIM_SYMBOL, 1}};
  step.workgroups = {1};
  BindingSpec x = vectorBinding(fb::BufferKind::Input, 0, nominal);
  BindingSpec y = vectorBinding(fb::BufferKind::Output, 0, nominal);
  x.dim_codes = y.dim_codes = run_dims;
  step.bindings = {x, y};
  step.name = "y = 2x + 1";
  spec.steps = {step};
  if (through_arena) {
    BindingSpec t = vectorBinding(fb::BufferKind::Arena, 0, nominal);
    t.dim_codes = run_dims;
    spec.steps = {step, step};
    spec.steps[0].bindings = {x, t};
    spec.steps[0].name = "t = 2x + 1";
    spec.steps[1].bindings = {t, y};
    spec.steps[1].name = "y = 2t + 1";
    spec.arena_size = static_cast<uint64_t>(nominal) * sizeof(float);
    spec.arena_values = {{0, {KILN_DIM_CONSTANT, 4, KILN_DIM_SYMBOL, 0, KILN_DIM_MUL}}};
    spec.arena_slots = {{0, 1}};
  }
  return spec;
}

/// One run of rangeSpec's program: its size and the graph mode it leaves its shape in.
struct RangeRun {
  int64_t n;
  CudaGraphMode mode;
};

/// Runs `program` (rangeSpec's, its `launches` kiln_range launches in a row) at each of `runs`,
/// checking every output element, the graph mode and each grid (ceil(n / 128) blocks at most).
void expectRangeRuns(CudaProgram &program, const std::vector<RangeRun> &runs, int launches,
                     uint32_t seed) {
  for (size_t r = 0; r < runs.size(); ++r) {
    SCOPED_TRACE("run " + std::to_string(r + 1) + " of " + std::to_string(runs[r].n));
    Tensor input = seededF32Tensor({runs[r].n}, seed + static_cast<uint32_t>(r));
    Result<std::vector<Tensor>> outputs = runProgram(program, {&input});
    ASSERT_TRUE(outputs.ok()) << outputs.status().toString();
    ASSERT_EQ((*outputs)[0].dims(), (std::vector<int64_t>{runs[r].n}));
    const float *in = input.dataAs<float>();
    const float *out = (*outputs)[0].dataAs<float>();
    for (int64_t i = 0; i < runs[r].n; ++i) {
      float expected = in[i];
      for (int l = 0; l < launches; ++l)
        expected = std::fma(expected, 2.0f, 1.0f);
      ASSERT_EQ(out[i], expected) << "y[" << i << "]";
    }
    CudaProgramStatistics stats = program.cudaStatistics();
    EXPECT_EQ(stats.graph_mode, runs[r].mode) << stats.graph_disabled_reason;
    ASSERT_EQ(stats.dispatch_grid_sizes.size(), static_cast<size_t>(launches));
    for (uint32_t grid : stats.dispatch_grid_sizes)
      EXPECT_LE(grid, static_cast<uint32_t>((runs[r].n + 127) / 128));
  }
}

// Tests a program for a range of shapes on the simulated device: the run's sizes reach the kernel
// (its bindings' dimensions after its bindings), the grid follows the run's work items
// (CudaLaunch.work_items_code), and each shape has its graph: its first run is eager, its
// second captures, later ones replay, another shape in between starting over without disturbing
// it. A kernel that read the largest size, a stale grid or a graph replayed at another shape
// writes past the run's output or leaves part of it unwritten (the simulator's fresh memory is
// NaN).
TEST(CudaSimProgramTest, RunsAProgramForARangeOfShapesWithAGraphPerShape) {
  constexpr int64_t kMax = 4096;
  ArtifactSpec spec = rangeSpec(kMax, kMax, /*through_arena=*/false);
  auto created = CudaProgram::create(loadInternal(spec), 0, runtime::cuda::sim::createSimCudaApi());
  ASSERT_TRUE(created.ok()) << created.status().toString();
  CudaProgram &program = **created;

  expectRangeRuns(program,
                  {{100, CudaGraphMode::kCapture},
                   {100, CudaGraphMode::kReplay},
                   {kMax, CudaGraphMode::kCapture},
                   {100, CudaGraphMode::kReplay},
                   {kMax, CudaGraphMode::kReplay},
                   {1, CudaGraphMode::kCapture}},
                  /*launches=*/1, /*seed=*/300);
  CudaProgramStatistics stats = program.cudaStatistics();
  EXPECT_EQ(stats.eager_runs, 3u);
  EXPECT_EQ(stats.graph_runs, 3u);
  // A run outside the range is refused, naming the input and the dimension.
  Tensor large = seededF32Tensor({kMax + 1}, 7);
  Result<std::vector<Tensor>> refused = runProgram(program, {&large});
  EXPECT_EQ(refused.status().code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(refused.status().message(), HasSubstr("input 'x': dimension 0 (n) is 4097"));
}

// Tests a program planned per run (a dimension without an upper bound) on the simulated device:
// y = 2(2x + 1) + 1 through an arena value sized per run, at sizes past the nominal one the
// artifact's types give. A shape that needs more memory than there is grows it and drops every
// shape's graph (they hold the old addresses): each shape's next run is eager again, the one
// after captures. The simulator checks each access against the run's bytes of its binding, so a
// kernel pointed at another shape's plan, or a buffer sized for the nominal shape, fails the test.
TEST(CudaSimProgramTest, PlansTheArenaPerRunAndGrowsItsMemory) {
  ArtifactSpec spec = rangeSpec(/*nominal=*/64, INT64_MAX, /*through_arena=*/true);
  auto created = CudaProgram::create(loadInternal(spec), 0, runtime::cuda::sim::createSimCudaApi());
  ASSERT_TRUE(created.ok()) << created.status().toString();
  CudaProgram &program = **created;

  expectRangeRuns(program,
                  {{100, CudaGraphMode::kCapture},
                   {100, CudaGraphMode::kReplay},
                   {5000, CudaGraphMode::kCapture},
                   {100, CudaGraphMode::kCapture},
                   {100, CudaGraphMode::kReplay},
                   {5000, CudaGraphMode::kReplay},
                   {1, CudaGraphMode::kCapture}},
                  /*launches=*/2, /*seed=*/500);
  CudaProgramStatistics stats = program.cudaStatistics();
  EXPECT_EQ(stats.eager_runs, 4u);
  EXPECT_EQ(stats.graph_runs, 3u);
  EXPECT_GE(program.statistics().arena_size, uint64_t{5000} * sizeof(float));
}

TEST(CudaSimProgramTest, NamesATrappingKernel) {
  ArtifactSpec spec = trappingSpec();
  spec.code_objects.push_back(
      {"cuda-sim", fb::CodeFormat::ElfSharedObject, simKernels(16), {"kiln_trap"}});
  auto program =
      CudaProgram::create(loadInternal(spec), 0, runtime::cuda::sim::createSimCudaApi());
  ASSERT_TRUE(program.ok()) << program.status().toString();
  Tensor x = seededF32Tensor({16}, 7);
  Status status = runProgram(**program, {&x}).status();
  EXPECT_EQ(status.code(), KILN_STATUS_INTERNAL) << status.toString();
  EXPECT_THAT(status.message(),
              HasSubstr("step 0 (kernel 'kiln_trap': a kernel that traps): cuda-sim: kernel "
                        "'kiln_trap'"));
  EXPECT_THAT(status.message(), HasSubstr("trap"));
}

// Tests that a kernel's accesses are checked against its bindings, not the device allocation:
// kernels built for 1001 elements over 1000-element bindings read x[1000] from the input's
// padding, inside the device's one allocation, which only the per-binding check reports.
TEST(CudaSimProgramTest, AStorePastItsBindingInsideTheArenaIsReported) {
  ArtifactSpec spec = cudaAffineSpec(1000);
  spec.code_objects.push_back({"cuda-sim", fb::CodeFormat::ElfSharedObject, simKernels(1001),
                               spec.code_objects[0].kernels});
  auto program =
      CudaProgram::create(loadInternal(spec), 0, runtime::cuda::sim::createSimCudaApi());
  ASSERT_TRUE(program.ok()) << program.status().toString();
  Tensor x = seededF32Tensor({1000}, 5);
  Status status = runProgram(**program, {&x}).status();
  EXPECT_EQ(status.code(), KILN_STATUS_INTERNAL) << status.toString();
  EXPECT_THAT(status.message(), HasSubstr("step 0 (kernel 'kiln_k0': multiply, add)"));
  EXPECT_THAT(status.message(), HasSubstr("out-of-bounds load of 4 bytes"));
  EXPECT_THAT(status.message(), HasSubstr("outside the kernel's bindings"));
}

// Tests that the simulated device refuses an artifact without its code object, saying how to
// compile one.
TEST(CudaSimProgramTest, RefusesAnArtifactWithoutSimulatorCode) {
  auto program = CudaProgram::create(loadInternal(cudaAffineSpec(1000)), 0,
                                     runtime::cuda::sim::createSimCudaApi());
  EXPECT_EQ(program.status().code(), KILN_STATUS_UNIMPLEMENTED);
  EXPECT_THAT(program.status().message(), HasSubstr("--gpu-arch cuda-sim"));
}

/// The simulator, with the calls a test watches counted and getDevice failing on demand.
class WatchedApi final : public runtime::cuda::CudaApi {
 public:
  struct Counts {
    int synchronizations = 0;
    int frees = 0;
    bool fail_get_device = false;
  };
  explicit WatchedApi(std::shared_ptr<Counts> counts)
      : inner_(runtime::cuda::sim::createSimCudaApi()), counts_(std::move(counts)) {}

  const char* name() const override { return inner_->name(); }
  Result<std::vector<CudaDeviceInfo>> devices() override { return inner_->devices(); }
  Status getDevice(int* ordinal) override {
    if (counts_->fail_get_device) return Status(KILN_STATUS_UNAVAILABLE, "the device is gone");
    return inner_->getDevice(ordinal);
  }
  Status setDevice(int ordinal) override { return inner_->setDevice(ordinal); }
  Result<uint32_t> selectCodeObject(const LoadedArtifact& artifact,
                                    const CudaDeviceInfo& device) override {
    return inner_->selectCodeObject(artifact, device);
  }
  Status malloc(void** memory, size_t size) override { return inner_->malloc(memory, size); }
  Status free(void* memory) override {
    ++counts_->frees;
    return inner_->free(memory);
  }
  Status hostAlloc(void** memory, size_t size) override { return inner_->hostAlloc(memory, size); }
  Status freeHost(void* memory) override {
    ++counts_->frees;
    return inner_->freeHost(memory);
  }
  Status memsetAsync(void* d, int v, size_t n, cudaStream_t s) override {
    return inner_->memsetAsync(d, v, n, s);
  }
  Status memcpyAsync(void* d, const void* s, size_t n, cudaMemcpyKind k,
                     cudaStream_t stream) override {
    return inner_->memcpyAsync(d, s, n, k, stream);
  }
  Status streamCreate(cudaStream_t* stream) override { return inner_->streamCreate(stream); }
  Status streamDestroy(cudaStream_t stream) override { return inner_->streamDestroy(stream); }
  Status streamSynchronize(cudaStream_t stream) override {
    ++counts_->synchronizations;
    return inner_->streamSynchronize(stream);
  }
  Status eventCreate(cudaEvent_t* event) override { return inner_->eventCreate(event); }
  Status eventDestroy(cudaEvent_t event) override { return inner_->eventDestroy(event); }
  Status eventRecord(cudaEvent_t event, cudaStream_t stream) override {
    return inner_->eventRecord(event, stream);
  }
  Status timedEventCreate(cudaEvent_t *event) override { return inner_->timedEventCreate(event); }
  Status eventElapsed(cudaEvent_t start, cudaEvent_t end, float *milliseconds) override {
    return inner_->eventElapsed(start, end, milliseconds);
  }
  Status streamWaitEvent(cudaStream_t stream, cudaEvent_t event) override {
    return inner_->streamWaitEvent(stream, event);
  }
  Status loadLibrary(const fb::CodeObject& code, cudaLibrary_t* library,
                     std::string* log) override {
    return inner_->loadLibrary(code, library, log);
  }
  Status unloadLibrary(cudaLibrary_t library) override { return inner_->unloadLibrary(library); }
  Status getKernel(cudaLibrary_t library, const char* name, cudaKernel_t* kernel) override {
    return inner_->getKernel(library, name, kernel);
  }
  Status maxThreadsPerBlock(cudaKernel_t kernel, int* threads) override {
    return inner_->maxThreadsPerBlock(kernel, threads);
  }
  Status occupancy(cudaKernel_t kernel, int block_size, int* blocks) override {
    return inner_->occupancy(kernel, block_size, blocks);
  }
  Status launchKernel(cudaKernel_t kernel, uint32_t grid, uint32_t block, void** arguments,
                      const uint64_t* argument_bytes, cudaStream_t stream) override {
    return inner_->launchKernel(kernel, grid, block, arguments, argument_bytes, stream);
  }
  Status beginCapture(cudaStream_t stream) override { return inner_->beginCapture(stream); }
  Status endCapture(cudaStream_t stream, cudaGraph_t* graph) override {
    return inner_->endCapture(stream, graph);
  }
  Status graphInstantiate(cudaGraph_t graph, cudaGraphExec_t* exec) override {
    return inner_->graphInstantiate(graph, exec);
  }
  Status graphLaunch(cudaGraphExec_t exec, cudaStream_t stream) override {
    return inner_->graphLaunch(exec, stream);
  }
  void graphDestroy(cudaGraph_t graph) override { inner_->graphDestroy(graph); }
  void graphExecDestroy(cudaGraphExec_t exec) override { inner_->graphExecDestroy(exec); }
  void clearLastError() override { inner_->clearLastError(); }
  Status createLibraryCall(const fb::LibraryCall &call, const CudaDeviceInfo &device,
                           cudaStream_t stream, const std::vector<std::vector<int64_t>> *run_dims,
                           std::unique_ptr<runtime::cuda::CudaLibraryCall> *out) override {
    return inner_->createLibraryCall(call, device, stream, run_dims, out);
  }
  void releaseLibraries() override { inner_->releaseLibraries(); }

 private:
  std::unique_ptr<runtime::cuda::CudaApi> inner_;
  std::shared_ptr<Counts> counts_;
};

// Tests that destroying a program waits for its stream and frees its memory even when its device
// cannot be made current (the destructor used to return early, skipping both).
TEST(CudaSimProgramTest, TeardownSynchronizesAndFreesWhenTheDeviceCannotBeEntered) {
  auto counts = std::make_shared<WatchedApi::Counts>();
  ArtifactSpec spec = cudaAffineSpec(1000);
  spec.code_objects.push_back({"cuda-sim", fb::CodeFormat::ElfSharedObject, simKernels(1000),
                               spec.code_objects[0].kernels});
  auto program = CudaProgram::create(loadInternal(spec), 0, std::make_unique<WatchedApi>(counts));
  ASSERT_TRUE(program.ok()) << program.status().toString();
  Tensor x = seededF32Tensor({1000}, 9);
  ASSERT_TRUE(runProgram(**program, {&x}).ok());
  counts->fail_get_device = true;
  const int synchronizations = counts->synchronizations;
  program->reset();
  EXPECT_EQ(counts->synchronizations, synchronizations + 1);
  EXPECT_EQ(counts->frees, 2);  // the device allocation and the pinned staging
}

INSTANTIATE_TEST_SUITE_P(Backends, CudaProgramOnDevice,
                         ::testing::Values(Backend::kGpu, Backend::kSimulator), backendName);

}  // namespace
}  // namespace kiln::testing
