//===- session_test.cpp - Running .kiln artifacts on the CPU --------------===//
//
// Sessions over the affine program of artifact_builder.h: results against a naive loop, the
// errors of session creation (missing kernel, bad code, unknown library call, wrong device) and
// of runs (input count, dtype, shape), concurrent runs of one session against single-threaded
// ones, and arena reuse.
//
//===----------------------------------------------------------------------===//

#include <cstring>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <limits>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "kiln/runtime.hpp"
#include "tests/runtime/artifact_builder.h"
#include "tests/runtime/test_util.h"

namespace kiln::testing {
namespace {

using ::testing::HasSubstr;

Artifact loadSpec(const ArtifactSpec& spec) {
  std::string bytes = buildArtifact(spec);
  Result<Artifact> artifact = Artifact::loadMemory(bytes.data(), bytes.size(), "affine.kiln");
  EXPECT_TRUE(artifact.ok()) << artifact.status().toString();
  return artifact.ok() ? std::move(*artifact) : Artifact();
}

/// A tensor of the affine program's input shape with seeded values in [-4, 4), none zero.
Tensor randomInput(uint32_t seed) {
  return seededF32Tensor({kRows, KILN_TEST_BLOCK}, seed);
}

/// Checks the affine program's outputs against a naive loop over its inputs.
void expectAffineResults(const Tensor& x, const Tensor& y, const std::vector<Tensor>& outputs) {
  ASSERT_EQ(outputs.size(), 2u);
  ASSERT_EQ(outputs[0].dims(), (std::vector<int64_t>{kRows, KILN_TEST_BLOCK}));
  ASSERT_EQ(outputs[0].elementType(), KILN_ELEMENT_TYPE_F32);
  const float* xs = x.dataAs<float>();
  const float* ys = y.dataAs<float>();
  const float* zs = outputs[0].dataAs<float>();
  const float* copies = outputs[1].dataAs<float>();
  for (size_t i = 0; i < x.elementCount(); ++i) {
    float expected = (xs[i] + ys[i]) * kScale + kShift;
    ASSERT_FLOAT_EQ(zs[i], expected)
        << "element " << i << " (workgroup " << i / KILN_TEST_BLOCK << ")";
    ASSERT_EQ(copies[i], xs[i]) << "element " << i;
  }
}

// Tests that every workgroup of both dispatches runs, the constant coefficients are read at
// their offset, and the copy step fills the second output.
TEST(SessionTest, RunsTheProgramOverEveryWorkgroup) {
  Artifact artifact = loadSpec(addAffineSpec());
  for (uint32_t threads : {1u, 3u, 0u}) {
    SessionOptions options;
    options.numThreads = threads;
    Result<Session> session = Session::create(artifact, options);
    ASSERT_TRUE(session.ok()) << session.status().toString();
    Tensor x = randomInput(1);
    Tensor y = randomInput(2);
    Result<std::vector<Tensor>> outputs = session->run({&x, &y});
    ASSERT_TRUE(outputs.ok()) << outputs.status().toString();
    expectAffineResults(x, y, *outputs);
    EXPECT_EQ(session->statistics()->num_threads,
              threads != 0 ? threads : std::max(1u, std::thread::hardware_concurrency()));
  }
}

// Tests that a run reads inputs wrapped over the caller's memory in place (kiln_tensor_wrap),
// aligned to their elements only, as NumPy's and PyTorch's buffers are.
TEST(SessionTest, RunsOnInputsWrappedOverTheCallersMemory) {
  Artifact artifact = loadSpec(addAffineSpec());
  Result<Session> session = Session::create(artifact);
  ASSERT_TRUE(session.ok()) << session.status().toString();
  Tensor x = randomInput(1);
  Tensor y = randomInput(2);
  // Copies 4 bytes past a 64-byte boundary.
  std::vector<float> xs(x.elementCount() + 1), ys(y.elementCount() + 1);
  std::memcpy(xs.data() + 1, x.data(), x.byteSize());
  std::memcpy(ys.data() + 1, y.data(), y.byteSize());
  Result<Tensor> wx = Tensor::wrap(x.elementType(), x.dims(), xs.data() + 1, x.byteSize());
  Result<Tensor> wy = Tensor::wrap(y.elementType(), y.dims(), ys.data() + 1, y.byteSize());
  ASSERT_TRUE(wx.ok() && wy.ok()) << wx.status().toString() << wy.status().toString();
  Result<std::vector<Tensor>> outputs = session->run({&*wx, &*wy});
  ASSERT_TRUE(outputs.ok()) << outputs.status().toString();
  expectAffineResults(x, y, *outputs);
}

// Tests that kiln_session_run_into writes the outputs into the caller's tensors, over memory of
// its own (preallocated and reused across runs), with every result right, and refuses tensors of
// another shape or type naming the output.
TEST(SessionTest, RunsIntoTheCallersOutputs) {
  Artifact artifact = loadSpec(addAffineSpec());
  Session session = Session::create(artifact, SessionOptions{KILN_DEVICE_KIND_CPU, 2}).value();
  Tensor x = randomInput(11);
  Tensor y = randomInput(12);
  std::vector<float> z(x.elementCount(), -1.0f), copy(x.elementCount(), -1.0f);
  std::vector<Tensor> outputs;
  outputs.push_back(Tensor::wrap(KILN_ELEMENT_TYPE_F32, x.dims(), z.data(), z.size() * 4).value());
  outputs.push_back(
      Tensor::wrap(KILN_ELEMENT_TYPE_F32, x.dims(), copy.data(), copy.size() * 4).value());
  for (int run = 0; run < 2; ++run) {
    Tensor xr = randomInput(30 + run);
    Status status = session.runInto({&xr, &y}, {&outputs[0], &outputs[1]});
    ASSERT_TRUE(status.ok()) << status.toString();
    EXPECT_EQ(outputs[0].data(), z.data());
    std::vector<Tensor> views;
    views.push_back(Tensor::fromData(KILN_ELEMENT_TYPE_F32, x.dims(), z.data(), z.size() * 4).value());
    views.push_back(
        Tensor::fromData(KILN_ELEMENT_TYPE_F32, x.dims(), copy.data(), copy.size() * 4).value());
    expectAffineResults(xr, y, views);
  }
  Tensor narrow = Tensor::create(KILN_ELEMENT_TYPE_F32, {kRows, KILN_TEST_BLOCK - 1}).value();
  Status wrong = session.runInto({&x, &y}, {&narrow, &outputs[1]});
  EXPECT_EQ(wrong.code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_NE(wrong.message().find("the tensor given to write it into is"), std::string::npos)
      << wrong.toString();
  Status missing = session.runInto({&x, &y}, {&outputs[0]});
  EXPECT_EQ(missing.code(), KILN_STATUS_INVALID_ARGUMENT);
}

// Tests that a program on two streams runs them at the same time and gives the serial results:
// the affine dispatch on stream 1 waits for the add it reads, the copy runs beside it on
// stream 0; from one and from several callers, with any number of threads, and traced with a
// track per stream.
TEST(SessionTest, RunsTheStreamsOfAProgram) {
  ArtifactSpec spec = addAffineSpec();
  spec.stream_count = 2;
  spec.steps[1].stream = 1;
  spec.steps[1].waits = {0};
  Artifact artifact = loadSpec(spec);
  for (uint32_t threads : {1u, 2u, 0u}) {
    SessionOptions options;
    options.numThreads = threads;
    Result<Session> session = Session::create(artifact, options);
    ASSERT_TRUE(session.ok()) << session.status().toString();
    ASSERT_TRUE(session->startTrace().ok());
    std::vector<std::thread> callers;
    for (uint32_t t = 0; t < 3; ++t)
      callers.emplace_back([&, t] {
        for (uint32_t i = 0; i < 20; ++i) {
          Tensor x = randomInput(100 * t + 2 * i);
          Tensor y = randomInput(100 * t + 2 * i + 1);
          Result<std::vector<Tensor>> outputs = session->run({&x, &y});
          ASSERT_TRUE(outputs.ok()) << outputs.status().toString();
          expectAffineResults(x, y, *outputs);
        }
      });
    for (std::thread &caller : callers)
      caller.join();
    std::string path = ::testing::TempDir() + "/streams_trace.json";
    ASSERT_TRUE(session->writeTrace(path).ok());
    std::string text = readFileBytes(path);
    EXPECT_THAT(text, HasSubstr("\"name\":\"run thread 1, stream 1\""));
    EXPECT_THAT(text, HasSubstr("\"tid\":1001,"));
    EXPECT_THAT(text, HasSubstr("\"stream\":1,\"workgroups\":16"));
  }
}

// Tests that a session outlives the artifact handle it was created from.
TEST(SessionTest, KeepsTheArtifactAlive) {
  Artifact artifact = loadSpec(addAffineSpec());
  Session session = Session::create(artifact).value();
  artifact.reset();
  Tensor x = randomInput(3);
  Tensor y = randomInput(4);
  Result<std::vector<Tensor>> outputs = session.run({&x, &y});
  ASSERT_TRUE(outputs.ok()) << outputs.status().toString();
  expectAffineResults(x, y, *outputs);
}

// Tests that a CPU session has no device time apart from its runs: kiln_session_time_device is
// UNIMPLEMENTED, and says why, rather than timing something else.
TEST(SessionTest, TimingTheDeviceAloneIsACudaFigure) {
  Artifact artifact = loadSpec(addAffineSpec());
  Session session = Session::create(artifact).value();
  Tensor x = randomInput(3);
  Tensor y = randomInput(4);
  ASSERT_TRUE(session.run({&x, &y}).ok());
  Result<std::vector<double>> timed = session.timeDevice(3);
  ASSERT_FALSE(timed.ok());
  EXPECT_EQ(timed.status().code(), KILN_STATUS_UNIMPLEMENTED);
  EXPECT_NE(timed.status().message().find("kiln_session_run"), std::string::npos)
      << timed.status().message();
}

// Tests that a trace records every step of the runs made while it is on, from concurrent
// callers on tracks of their own, that it is refused before it was started, and that a path
// that cannot be written is named.
TEST(SessionTest, TracesEveryStepOfTheRunsWhileOn) {
  Artifact artifact = loadSpec(addAffineSpec());
  Session session = Session::create(artifact).value();
  Tensor x = randomInput(5);
  Tensor y = randomInput(6);
  std::string path = ::testing::TempDir() + "/session_trace.json";
  Status early = session.writeTrace(path);
  EXPECT_EQ(early.code(), KILN_STATUS_FAILED_PRECONDITION);
  EXPECT_THAT(early.message(), HasSubstr("no trace was started"));

  ASSERT_TRUE(session.run({&x, &y}).ok()); // before the trace: not recorded
  ASSERT_TRUE(session.startTrace().ok());
  std::vector<std::thread> callers;
  for (int t = 0; t < 2; ++t)
    callers.emplace_back([&] {
      for (int i = 0; i < 3; ++i)
        EXPECT_TRUE(session.run({&x, &y}).ok());
    });
  for (std::thread &caller : callers)
    caller.join();
  ASSERT_TRUE(session.writeTrace(path).ok());
  std::string text = readFileBytes(path);
  // Three steps (two dispatches and a copy) of six runs, on two named tracks.
  size_t slices = 0, at = 0;
  while ((at = text.find("\"ph\":\"X\"", at)) != std::string::npos)
    ++slices, ++at;
  EXPECT_EQ(slices, 18u) << text;
  EXPECT_THAT(text, HasSubstr("\"name\":\"run thread 1\""));
  EXPECT_THAT(text, HasSubstr("\"name\":\"run thread 2\""));
  EXPECT_THAT(text, HasSubstr("\"cat\":\"copy\""));
  EXPECT_THAT(text, HasSubstr("\"step\":2"));
  EXPECT_THAT(text, HasSubstr("\"run\":5,"));
  EXPECT_THAT(text, ::testing::Not(HasSubstr("\"run\":6,")));

  ASSERT_TRUE(session.startTrace().ok());
  Status unwritable = session.writeTrace("/nonexistent-directory/trace.json");
  EXPECT_FALSE(unwritable.ok());
  EXPECT_THAT(unwritable.message(), HasSubstr("/nonexistent-directory/trace.json"));
}

TEST(SessionTest, RefusesAMissingKernelSymbol) {
  ArtifactSpec spec = addAffineSpec();
  spec.code_objects[0].kernels[1] = "kiln_test_missing";
  Artifact artifact = loadSpec(spec);
  Status status = Session::create(artifact).status();
  EXPECT_EQ(status.code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(status.message(),
              HasSubstr("step 1: affine.kiln: code object 0 (target 'x86_64'): kernel "
                        "'kiln_test_missing' is not exported by the shared object"));
}

// The test kernels are linked with -z nodelete, so they stay loaded under their
// "/proc/self/fd/N" name after the first session is gone; the second code object, written to a
// descriptor that may get the same number, must still be loaded from its own bytes.
TEST(SessionTest, LoadsEachCodeObjectFromItsOwnBytesAfterOneThatStaysLoaded) {
  {
    Artifact artifact = loadSpec(addAffineSpec());
    auto session = Session::create(artifact);
    ASSERT_TRUE(session.ok()) << session.status().toString();
  }
  ArtifactSpec spec = addAffineSpec();
  spec.code_objects[0].bytes = "this is not an ELF shared object";
  Status status = Session::create(loadSpec(spec)).status();
  EXPECT_EQ(status.code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(status.message(), HasSubstr("the shared object does not load"));
}

TEST(SessionTest, RefusesCodeThatDoesNotLoad) {
  ArtifactSpec spec = addAffineSpec();
  spec.code_objects[0].bytes = "this is not an ELF shared object";
  Artifact artifact = loadSpec(spec);
  Status status = Session::create(artifact).status();
  EXPECT_EQ(status.code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(status.message(), HasSubstr("affine.kiln: code object 0 (target 'x86_64'): the "
                                          "shared object does not load: "));
}

TEST(SessionTest, RefusesAnUnknownLibraryCall) {
  ArtifactSpec spec = addAffineSpec();
  StepSpec call;
  call.kind = fb::StepKind::LibraryCall;
  call.name = "cublaslt.matmul";
  call.bindings = {tensorBinding(fb::BufferKind::Input, 0),
                   tensorBinding(fb::BufferKind::Arena, 0)};
  spec.steps.insert(spec.steps.begin(), call);
  Artifact artifact = loadSpec(spec);
  Status status = Session::create(artifact).status();
  EXPECT_EQ(status.code(), KILN_STATUS_UNIMPLEMENTED);
  EXPECT_EQ(status.message(),
            "affine.kiln: step 0: library call 'cublaslt.matmul' is not available on the cpu "
            "device (it runs the 'onednn.*' calls, 'kiln.attention' and the 'gloo.*' collectives)");
}

// Tests that a LibraryCall step reaches oneDNN through createLibraryCallKernel and reads and
// writes the session's buffers: a matmul against a naive loop.
TEST(SessionTest, RunsAOneDnnLibraryCall) {
  constexpr int64_t kM = 4, kK = 8, kN = 3;
  ArtifactSpec spec;
  spec.inputs = {{"a", KILN_ELEMENT_TYPE_F32, {kM, kK}, {}},
                 {"b", KILN_ELEMENT_TYPE_F32, {kK, kN}, {}}};
  spec.outputs = {{"c", KILN_ELEMENT_TYPE_F32, {kM, kN}, {}}};
  StepSpec matmul;
  matmul.kind = fb::StepKind::LibraryCall;
  matmul.name = "onednn.matmul";
  matmul.bindings = {f32Binding(fb::BufferKind::Input, 0, {kM, kK}),
                     f32Binding(fb::BufferKind::Input, 1, {kK, kN}),
                     f32Binding(fb::BufferKind::Output, 0, {kM, kN})};
  spec.steps = {matmul};
  Artifact artifact = loadSpec(spec);
  Result<Session> session = Session::create(artifact);
  ASSERT_TRUE(session.ok()) << session.status().toString();

  Tensor a = Tensor::create(KILN_ELEMENT_TYPE_F32, {kM, kK}).value();
  Tensor b = Tensor::create(KILN_ELEMENT_TYPE_F32, {kK, kN}).value();
  for (int64_t i = 0; i < kM * kK; ++i)
    a.dataAs<float>()[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
  for (int64_t i = 0; i < kK * kN; ++i)
    b.dataAs<float>()[i] = 0.5f * static_cast<float>(i % 5) - 1.0f;
  Result<std::vector<Tensor>> outputs = session->run({&a, &b});
  ASSERT_TRUE(outputs.ok()) << outputs.status().toString();
  const float* c = (*outputs)[0].dataAs<float>();
  for (int64_t m = 0; m < kM; ++m) {
    for (int64_t n = 0; n < kN; ++n) {
      float expected = 0.0f;
      for (int64_t k = 0; k < kK; ++k)
        expected += a.dataAs<float>()[m * kK + k] * b.dataAs<float>()[k * kN + n];
      EXPECT_NEAR(c[m * kN + n], expected, 1e-5f) << "c[" << m << "][" << n << "]";
    }
  }
}

TEST(SessionTest, RefusesAnotherDevice) {
  Artifact artifact = loadSpec(addAffineSpec());
  SessionOptions options;
  options.deviceKind = KILN_DEVICE_KIND_CUDA;
  Status status = Session::create(artifact, options).status();
  EXPECT_EQ(status.code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(),
            "affine.kiln: the artifact was compiled for device 'cpu', but the session asks for "
            "'cuda'");

  Artifact cuda = loadSpec(cudaAffineSpec(1000));
  status = Session::create(cuda).status();
  EXPECT_EQ(status.code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(),
            "affine.kiln: the artifact was compiled for device 'cuda', but the session asks for "
            "'cpu'");
}

// Tests that a CUDA session is created or refused for a reason the caller can act on: a runtime
// without CUDA says so, a machine without a GPU is UNAVAILABLE naming the probe that failed.
// (tests/runtime/cuda_program_test.cpp runs CUDA sessions where there is a GPU.)
TEST(SessionTest, CreatesCudaSessionsOrSaysWhyNot) {
  Artifact cuda = loadSpec(cudaAffineSpec(1000));
  SessionOptions options;
  options.deviceKind = KILN_DEVICE_KIND_CUDA;
  Result<Session> session = Session::create(cuda, options);
#if defined(KILN_HAVE_CUDA) && KILN_HAVE_CUDA
  if (!session.ok()) {
    EXPECT_EQ(session.status().code(), KILN_STATUS_UNAVAILABLE) << session.status().toString();
    EXPECT_THAT(session.status().message(), HasSubstr("affine.kiln: probing CUDA devices: "));
  }
#else
  EXPECT_EQ(session.status().code(), KILN_STATUS_UNIMPLEMENTED);
  EXPECT_EQ(session.status().message(),
            "affine.kiln: cannot run on device 'cuda': this runtime was built without CUDA");
#endif
}

// Tests that a cuda-sim session in a program that links the runtime alone, as this test does and
// as an application embedding libkiln_runtime.so does, is refused with a status naming the
// library to link, instead of reaching a simulator that is not there.
TEST(SessionTest, RefusesTheSimulatedDeviceWhenTheSimulatorIsNotLinked) {
  Artifact cuda = loadSpec(cudaAffineSpec(1000));
  SessionOptions options;
  options.deviceKind = KILN_DEVICE_KIND_CUDA_SIM;
  Result<Session> session = Session::create(cuda, options);
  ASSERT_FALSE(session.ok());
  EXPECT_EQ(session.status().code(), KILN_STATUS_UNIMPLEMENTED);
#if defined(KILN_HAVE_CUDA) && KILN_HAVE_CUDA
  EXPECT_EQ(
      session.status().message(),
      "affine.kiln: cannot run on device 'cuda-sim': the simulated CUDA device is not built "
      "into this program; link kiln_cuda_sim and call kiln::runtime::registerSimulatedCuda()");
#else
  EXPECT_EQ(session.status().message(),
            "affine.kiln: cannot run on device 'cuda-sim': this runtime was built without CUDA");
#endif
}

TEST(SessionTest, RefusesMismatchedInputs) {
  Artifact artifact = loadSpec(addAffineSpec());
  Session session = Session::create(artifact, SessionOptions{KILN_DEVICE_KIND_CPU, 2}).value();
  Tensor x = randomInput(5);
  Tensor y = randomInput(6);

  Status status = session.run({&x}).status();
  EXPECT_EQ(status.code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "affine.kiln: expected 2 inputs, got 1");

  Tensor narrow = Tensor::create(KILN_ELEMENT_TYPE_F32, {kRows, KILN_TEST_BLOCK - 1}).value();
  status = session.run({&x, &narrow}).status();
  EXPECT_EQ(status.code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "input 'y': expected f32[16,256], got f32[16,255]");

  Tensor doubles = Tensor::create(KILN_ELEMENT_TYPE_F64, {kRows, KILN_TEST_BLOCK}).value();
  status = session.run({&doubles, &y}).status();
  EXPECT_EQ(status.message(), "input 'x': expected f32[16,256], got f64[16,256]");

  Tensor flat = Tensor::create(KILN_ELEMENT_TYPE_F32, {kRows * KILN_TEST_BLOCK}).value();
  status = session.run({&flat, &y}).status();
  EXPECT_EQ(status.message(), "input 'x': expected f32[16,256], got f32[4096]");

  status = session.run({&x, nullptr}).status();
  EXPECT_EQ(status.message(), "input 'y' (1) is NULL");

  const kiln_tensor_t* inputs[2] = {x.get(), y.get()};
  kiln_tensor_t* outputs[1] = {nullptr};
  status = Status::fromC(kiln_session_run(session.get(), 2, inputs, 1, outputs));
  EXPECT_EQ(status.code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "affine.kiln: expected room for 2 outputs, got 1");
  EXPECT_EQ(outputs[0], nullptr);
}

/// A program that copies x (f32[4]) to y and its `holds` input (bool[2]) to a check of every
/// run, with `check_first` the check placed before y (which the verifier refuses).
ArtifactSpec checkedCopySpec(bool check_first = false,
                             kiln_element_type_t check_type = KILN_ELEMENT_TYPE_BOOL) {
  ArtifactSpec spec;
  spec.inputs = {{"x", KILN_ELEMENT_TYPE_F32, {4}}, {"holds", check_type, {2}}};
  SignatureSpec y{"y", KILN_ELEMENT_TYPE_F32, {4}};
  SignatureSpec check{"kiln.check.0", check_type, {2}};
  check.check = "node 'r' (Reshape, opset 13): shape (input 1) does not give [4]";
  spec.outputs =
      check_first ? std::vector<SignatureSpec>{check, y} : std::vector<SignatureSpec>{y, check};
  auto binding = [](fb::BufferKind kind, uint32_t index, kiln_element_type_t type, int64_t count) {
    BindingSpec b;
    b.kind = kind;
    b.index = index;
    b.type = type;
    b.dims = {count};
    b.size = static_cast<uint64_t>(count) * kiln_element_type_size(type);
    return b;
  };
  StepSpec copyX, copyHolds;
  copyX.kind = copyHolds.kind = fb::StepKind::Copy;
  copyX.bindings = {binding(fb::BufferKind::Input, 0, KILN_ELEMENT_TYPE_F32, 4),
                    binding(fb::BufferKind::Output, check_first ? 1 : 0, KILN_ELEMENT_TYPE_F32, 4)};
  copyHolds.bindings = {binding(fb::BufferKind::Input, 1, check_type, 2),
                        binding(fb::BufferKind::Output, check_first ? 0 : 1, check_type, 2)};
  spec.steps = {copyX, copyHolds};
  return spec;
}

// Tests that a check of every run is the runtime's, not the caller's: the artifact and the
// session count only y as an output, a run whose check holds hands back y alone, and one whose
// check has a false element fails with the check's message and hands back nothing. Checks must
// be booleans after every output.
TEST(SessionTest, ChecksEveryRunAndHandsBackOnlyTheCallersOutputs) {
  Artifact artifact = loadSpec(checkedCopySpec());
  EXPECT_EQ(artifact.outputCount(), 1u);
  EXPECT_THAT(artifact.checkMessages(),
              ::testing::ElementsAre("node 'r' (Reshape, opset 13): shape (input 1) does not "
                                     "give [4]"));
  EXPECT_EQ(kiln_artifact_check_message(artifact.get(), 1), nullptr);
  kiln_tensor_signature_t signature{};
  signature.struct_size = sizeof(signature);
  EXPECT_EQ(Status::fromC(kiln_artifact_output_signature(artifact.get(), 1, &signature)).code(),
            KILN_STATUS_OUT_OF_RANGE);
  Session session = Session::create(artifact, SessionOptions{KILN_DEVICE_KIND_CPU, 1}).value();
  EXPECT_EQ(session.outputCount(), 1u);
  Tensor x = seededF32Tensor({4}, 3);
  Tensor holds = Tensor::create(KILN_ELEMENT_TYPE_BOOL, {2}).value();
  auto *flags = static_cast<uint8_t *>(kiln_tensor_data(holds.get()));
  flags[0] = flags[1] = 1;
  Result<std::vector<Tensor>> outputs = session.run({&x, &holds});
  ASSERT_TRUE(outputs.ok()) << outputs.status().toString();
  ASSERT_EQ(outputs->size(), 1u);
  EXPECT_EQ(std::memcmp((*outputs)[0].dataAs<float>(), x.dataAs<float>(), 4 * sizeof(float)), 0);

  flags[1] = 0;
  const kiln_tensor_t *inputs[2] = {x.get(), holds.get()};
  kiln_tensor_t *raw[1] = {nullptr};
  Status status = Status::fromC(kiln_session_run(session.get(), 2, inputs, 1, raw));
  EXPECT_EQ(status.code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(),
            "the run's inputs fail a check: node 'r' (Reshape, opset 13): shape (input 1) does "
            "not give [4]");
  EXPECT_EQ(raw[0], nullptr);
  kiln_tensor_t *two[2] = {nullptr, nullptr};
  flags[1] = 1;
  status = Status::fromC(kiln_session_run(session.get(), 2, inputs, 2, two));
  EXPECT_EQ(status.message(), "affine.kiln: expected room for 1 outputs, got 2");

  for (auto [spec, problem] :
       {std::pair{checkedCopySpec(/*check_first=*/true), "checks come after every other output"},
        std::pair{checkedCopySpec(false, KILN_ELEMENT_TYPE_U8), "element type must be bool"}}) {
    std::string bytes = buildArtifact(spec);
    Result<Artifact> refused = Artifact::loadMemory(bytes.data(), bytes.size(), "checked.kiln");
    ASSERT_FALSE(refused.ok());
    EXPECT_THAT(refused.status().message(), HasSubstr(problem));
  }
}

// Tests that one session serves many threads at once: each request's outputs must equal what a
// single-threaded session computes for the same inputs, so a shared arena, a lost workgroup or a
// mixed-up binding between concurrent runs fails it.
TEST(SessionTest, ServesConcurrentRuns) {
  constexpr int kThreads = 8;
  constexpr int kRequestsPerThread = 50;
  Artifact artifact = loadSpec(addAffineSpec());
  Session reference = Session::create(artifact, SessionOptions{KILN_DEVICE_KIND_CPU, 1}).value();
  Session shared = Session::create(artifact, SessionOptions{KILN_DEVICE_KIND_CPU, 4}).value();

  std::vector<std::string> failures(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int r = 0; r < kRequestsPerThread && failures[t].empty(); ++r) {
        uint32_t seed = static_cast<uint32_t>(1000 + t * kRequestsPerThread + r);
        Tensor x = randomInput(seed);
        Tensor y = randomInput(seed + 100000);
        Result<std::vector<Tensor>> got = shared.run({&x, &y});
        Result<std::vector<Tensor>> expected = reference.run({&x, &y});
        if (!got.ok() || !expected.ok()) {
          failures[t] = "request " + std::to_string(r) + ": " + got.status().toString() + " / " +
                        expected.status().toString();
          break;
        }
        for (size_t o = 0; o < got->size(); ++o) {
          if (std::memcmp((*got)[o].data(), (*expected)[o].data(), (*got)[o].byteSize()) != 0) {
            failures[t] = "request " + std::to_string(r) + ": output " + std::to_string(o) +
                          " differs from the single-threaded run";
            break;
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(failures[t], "") << "thread " << t;

  kiln_session_statistics_t stats = shared.statistics().value();
  EXPECT_EQ(stats.run_count, static_cast<uint64_t>(kThreads * kRequestsPerThread));
  EXPECT_GE(stats.arena_count, 1u);
  EXPECT_LE(stats.arena_count, static_cast<uint64_t>(kThreads));
  // A spot check against the naive loop, so that both sessions cannot be wrong the same way.
  Tensor x = randomInput(7);
  Tensor y = randomInput(8);
  expectAffineResults(x, y, shared.run({&x, &y}).value());
}

// Tests that sequential runs reuse one arena: a run that allocated a new arena each time (or
// never returned it to the pool) makes the count grow.
TEST(SessionTest, ReusesArenasAcrossRuns) {
  Artifact artifact = loadSpec(addAffineSpec());
  Session session = Session::create(artifact, SessionOptions{KILN_DEVICE_KIND_CPU, 2}).value();
  Tensor x = randomInput(9);
  Tensor y = randomInput(10);
  for (int run = 0; run < 20; ++run) {
    Result<std::vector<Tensor>> outputs = session.run({&x, &y});
    ASSERT_TRUE(outputs.ok()) << outputs.status().toString();
  }
  kiln_session_statistics_t stats = session.statistics().value();
  EXPECT_EQ(stats.run_count, 20u);
  EXPECT_EQ(stats.arena_count, 1u);
  EXPECT_EQ(stats.arena_size, kTensorBytes);
  EXPECT_EQ(stats.arena_bytes_allocated, kTensorBytes);

  // A failed run returns its arena too.
  Tensor narrow = Tensor::create(KILN_ELEMENT_TYPE_F32, {1}).value();
  EXPECT_FALSE(session.run({&x, &narrow}).ok());
  EXPECT_TRUE(session.run({&x, &y}).ok());
  EXPECT_EQ(session.statistics()->arena_count, 1u);
}

// Tests a program planned per run (a batch without an upper bound): each run's arena is packed
// for its own rows and grows to the largest shape run so far, past the nominal size the static
// types give the batch, and every run matches the naive loop, also a smaller one after a larger.
TEST(SessionTest, PlansTheArenaForEachRunsShape) {
  Artifact artifact = loadSpec(plannedPerRunSpec());
  Session session = Session::create(artifact, SessionOptions{KILN_DEVICE_KIND_CPU, 2}).value();
  uint64_t largest = 0;
  for (int64_t rows : {int64_t{3}, 4 * kRows, int64_t{1}, kRows + 5}) {
    Tensor x = seededF32Tensor({rows, KILN_TEST_BLOCK}, 20 + static_cast<uint32_t>(rows));
    Tensor y = seededF32Tensor({rows, KILN_TEST_BLOCK}, 40 + static_cast<uint32_t>(rows));
    Result<std::vector<Tensor>> outputs = session.run({&x, &y});
    ASSERT_TRUE(outputs.ok()) << "rows " << rows << ": " << outputs.status().toString();
    ASSERT_EQ((*outputs)[0].dims(), (std::vector<int64_t>{rows, KILN_TEST_BLOCK}));
    const float *xs = x.dataAs<float>();
    const float *ys = y.dataAs<float>();
    const float *zs = (*outputs)[0].dataAs<float>();
    for (size_t i = 0; i < x.elementCount(); ++i)
      ASSERT_FLOAT_EQ(zs[i], (xs[i] + ys[i]) * kScale + kShift) << "rows " << rows << ", " << i;
    uint64_t bytes = static_cast<uint64_t>(rows) * KILN_TEST_BLOCK * sizeof(float);
    largest = std::max(largest, (bytes + 63) / 64 * 64);
    EXPECT_EQ(session.statistics()->arena_size, largest) << "rows " << rows;
  }
  EXPECT_GT(largest, kTensorBytes);
}

// Tests that an artifact loaded from a file keeps running after the file is rewritten in place
// (truncated and filled with other bytes, as `cp` over it or `rsync --inplace` would): loading
// reads the file into memory of its own. A mapped file raised SIGBUS here, or showed the new
// bytes unverified.
TEST(SessionTest, AnArtifactOutlivesItsFileBeingRewrittenInPlace) {
  ScopedTempPath path(".kiln");
  writeFileBytes(path.path(), buildArtifact(addAffineSpec()));
  Artifact artifact = Artifact::loadFile(path.path()).value();
  writeFileBytes(path.path(), std::string(16, 'x'));  // truncates, then writes
  Session session = Session::create(artifact, SessionOptions{KILN_DEVICE_KIND_CPU, 1}).value();
  Tensor x = randomInput(7);
  Tensor y = randomInput(8);
  Result<std::vector<Tensor>> outputs = session.run({&x, &y});
  ASSERT_TRUE(outputs.ok()) << outputs.status().toString();
  expectAffineResults(x, y, *outputs);
}

// Tests that a crafted per-run plan whose arena binding sits at an offset near 2^64 is refused
// when the artifact loads (the run's check `offset + bytes <= value size` wrapped around and let
// the step write outside the arena), and that one within range but past the run's value is
// refused by the run before any step runs.
TEST(SessionTest, RefusesArenaOffsetsPastWhatARunPlans) {
  auto withOffset = [](uint64_t offset) {
    ArtifactSpec spec = plannedPerRunSpec();
    for (StepSpec &step : spec.steps)
      for (BindingSpec &binding : step.bindings)
        if (binding.kind == fb::BufferKind::Arena) {
          binding.offset = offset;
          return spec;
        }
    ADD_FAILURE() << "no arena binding";
    return spec;
  };
  const uint64_t wrapping = std::numeric_limits<uint64_t>::max() - 63;  // aligned; wraps
  Result<Artifact> refused = Artifact::loadMemory(buildArtifact(withOffset(wrapping)).data(),
                                                  buildArtifact(withOffset(wrapping)).size(),
                                                  "wrapping.kiln");
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.status().message().find("lies past any arena a run can plan"),
            std::string::npos)
      << refused.status().toString();

  Artifact artifact = loadSpec(withOffset(uint64_t{1} << 40));
  Session session = Session::create(artifact, SessionOptions{KILN_DEVICE_KIND_CPU, 1}).value();
  Tensor x = seededF32Tensor({3, KILN_TEST_BLOCK}, 5);
  Tensor y = seededF32Tensor({3, KILN_TEST_BLOCK}, 6);
  Result<std::vector<Tensor>> outputs = session.run({&x, &y});
  ASSERT_FALSE(outputs.ok());
  EXPECT_NE(outputs.status().message().find("reaches past its arena value"), std::string::npos)
      << outputs.status().toString();
}

// Tests the statistics struct's versioning: a caller built against a newer header (a larger
// struct) gets the fields this runtime knows and struct_size saying how many bytes it wrote; one
// whose struct is shorter than the first version is refused rather than overrun.
TEST(SessionTest, StatisticsHonourTheCallersStructSize) {
  Artifact artifact = loadSpec(addAffineSpec());
  Session session = Session::create(artifact, SessionOptions{KILN_DEVICE_KIND_CPU, 1}).value();
  Tensor x = randomInput(3);
  Tensor y = randomInput(4);
  ASSERT_TRUE(session.run({&x, &y}).ok());

  struct Newer {
    kiln_session_statistics_t known;
    uint64_t added_later;
  } newer;
  std::memset(&newer, 0xAB, sizeof(newer));
  newer.known.struct_size = sizeof(newer);
  kiln_status_t* status = kiln_session_statistics(session.get(), &newer.known);
  ASSERT_EQ(status, nullptr) << kiln_status_message(status);
  EXPECT_EQ(newer.known.struct_size, sizeof(kiln_session_statistics_t));
  EXPECT_EQ(newer.known.run_count, 1u);
  EXPECT_EQ(newer.added_later, 0xABABABABABABABABull) << "bytes past the runtime's struct";

  kiln_session_statistics_t short_struct{};
  short_struct.struct_size = sizeof(size_t) + sizeof(uint32_t);
  status = kiln_session_statistics(session.get(), &short_struct);
  ASSERT_NE(status, nullptr);
  EXPECT_EQ(kiln_status_code(status), KILN_STATUS_INVALID_ARGUMENT);
  kiln_status_release(status);
}

}  // namespace
}  // namespace kiln::testing
