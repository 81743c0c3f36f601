//===- artifact_test.cpp - Loading, verifying and describing .kiln artifacts ===//
//
// Every rule of the artifact verifier, each broken on its own in an otherwise valid artifact,
// with the message that names it; the queries of a valid artifact; and that corrupt files are
// refused with a status, never a crash.
//
//===----------------------------------------------------------------------===//

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "kiln/runtime.hpp"
#include "tests/runtime/artifact_builder.h"
#include "tests/runtime/test_util.h"

namespace kiln::testing {
namespace {

using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::StartsWith;

Result<Artifact> load(const std::string& bytes, const std::string& name = "test.kiln") {
  return Artifact::loadMemory(bytes.data(), bytes.size(), name);
}

Status loadStatus(const ArtifactSpec& spec) { return load(buildArtifact(spec)).status(); }

// Tests that an artifact for a range of shapes reports its symbols (name, input, dimension,
// range) and a dimension that varies as -1 named by its symbol, where the static dims give the
// upper bound.
TEST(ArtifactTest, ReportsTheDimensionsOfARange) {
  ArtifactSpec spec = addAffineSpec();
  spec.symbols = {{"batch", 0, 0, 2, kRows}};
  spec.inputs[0].dim_codes = {{1, 0}, {}};
  Result<Artifact> artifact = load(buildArtifact(spec), "range.kiln");
  ASSERT_TRUE(artifact.ok()) << artifact.status().message();
  std::vector<kiln_dim_symbol_t> symbols = artifact->symbols();
  ASSERT_EQ(symbols.size(), 1u);
  EXPECT_STREQ(symbols[0].name, "batch");
  EXPECT_EQ(symbols[0].input, 0u);
  EXPECT_EQ(symbols[0].dim, 0u);
  EXPECT_EQ(symbols[0].min, 2);
  EXPECT_EQ(symbols[0].max, kRows);
  TensorSignature x = artifact->input(0).value();
  EXPECT_EQ(x.dims, (std::vector<int64_t>{-1, KILN_TEST_BLOCK}));
  EXPECT_EQ(x.dimSymbols[0], "batch");
  // The other input keeps its static dims.
  EXPECT_EQ(artifact->input(1).value().dims, (std::vector<int64_t>{kRows, KILN_TEST_BLOCK}));
  kiln_dim_symbol_t past{};
  Status status = Status::fromC(kiln_artifact_symbol(artifact->get(), 1, &past));
  EXPECT_EQ(status.code(), KILN_STATUS_OUT_OF_RANGE);
}

// Tests that the verifier refuses a range artifact's malformed dimensions, naming what is wrong:
// a code that reads a symbol the artifact does not have, one that leaves two values, one with an
// unknown opcode, and a symbol whose range passes its input's upper bound.
TEST(ArtifactTest, RefusesMalformedDimensionsOfARange) {
  auto refused = [](std::vector<int64_t> code, SymbolSpec symbol) {
    ArtifactSpec spec = addAffineSpec();
    spec.symbols = {symbol};
    spec.inputs[0].dim_codes = {code, {}};
    return loadStatus(spec);
  };
  SymbolSpec batch{"batch", 0, 0, 1, kRows};
  Status missing = refused({1, 3}, batch);
  EXPECT_EQ(missing.code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(missing.message(),
              testing::HasSubstr("input 0 'x': dimension 0's code reads symbol 3 of 1"));
  Status two = refused({1, 0, 0, 4}, batch);
  EXPECT_THAT(two.message(), testing::HasSubstr("leaves 2 values instead of one"));
  Status opcode = refused({1, 0, 0, 4, 9}, batch);
  EXPECT_THAT(opcode.message(), testing::HasSubstr("unknown opcode 9"));
  Status bound = refused({1, 0}, SymbolSpec{"batch", 0, 0, 1, kRows + 1});
  EXPECT_THAT(bound.message(),
              testing::HasSubstr("symbol 0 'batch': has the range 1.." + std::to_string(kRows + 1) +
                                 " beyond the input's bound " + std::to_string(kRows)));
}

// Tests that a valid artifact loads and every query reports what was written; a wrong value
// would mislead `kiln inspect` and the callers that size their buffers from the signature.
TEST(ArtifactTest, DescribesAValidArtifact) {
  Result<Artifact> artifact = load(buildArtifact(addAffineSpec()), "affine.kiln");
  ASSERT_TRUE(artifact.ok()) << artifact.status().toString();
  EXPECT_EQ(artifact->name(), "affine.kiln");
  EXPECT_EQ(artifact->device(), "cpu");
  EXPECT_EQ(artifact->producer(), "kiln tests");
  EXPECT_EQ(artifact->source(), "affine.mlir");
  EXPECT_EQ(artifact->formatVersion(), static_cast<uint32_t>(KILN_ARTIFACT_FORMAT_VERSION));
  ASSERT_EQ(artifact->inputCount(), 2u);
  ASSERT_EQ(artifact->outputCount(), 2u);

  TensorSignature x = artifact->input(0).value();
  EXPECT_EQ(x.name, "x");
  EXPECT_EQ(x.elementType, KILN_ELEMENT_TYPE_F32);
  EXPECT_EQ(x.dims, (std::vector<int64_t>{kRows, KILN_TEST_BLOCK}));
  EXPECT_EQ(x.dimSymbols, (std::vector<std::string>{"batch", ""}));
  EXPECT_EQ(x.byteSize, kTensorBytes);
  TensorSignature x_copy = artifact->output(1).value();
  EXPECT_EQ(x_copy.name, "x_copy");
  EXPECT_EQ(x_copy.dimSymbols, (std::vector<std::string>{"", ""}));
  EXPECT_EQ(artifact->input(2).status().code(), KILN_STATUS_OUT_OF_RANGE);

  EXPECT_EQ(artifact->arenaSize(), kTensorBytes);
  EXPECT_EQ(artifact->naiveIntermediateSize(), kTensorBytes);
  EXPECT_EQ(artifact->constantsSize(), 128u);
  EXPECT_EQ(artifact->runPeakMemory(), kTensorBytes + 2 * kTensorBytes);

  ASSERT_EQ(artifact->codeObjectCount(), 1u);
  kiln_code_object_info_t code = artifact->codeObject(0).value();
  EXPECT_STREQ(code.target, "x86_64");
  EXPECT_EQ(code.format, KILN_CODE_FORMAT_ELF_SHARED_OBJECT);
  EXPECT_EQ(code.byte_size, testKernelBytes().size());
  ASSERT_EQ(code.kernel_count, 2u);
  EXPECT_STREQ(code.kernel_names[1], "kiln_test_affine_f32");

  ASSERT_EQ(artifact->stepCount(), 3u);
  kiln_step_info_t affine = artifact->step(1).value();
  EXPECT_EQ(affine.kind, KILN_STEP_KIND_DISPATCH);
  EXPECT_STREQ(affine.name, "kiln_test_affine_f32");
  EXPECT_STREQ(affine.description, "multiply, add");
  EXPECT_EQ(affine.kernel, 1u);
  ASSERT_EQ(affine.workgroup_rank, 1u);
  EXPECT_EQ(affine.workgroup_count[0], static_cast<uint32_t>(kRows));
  EXPECT_EQ(affine.workgroup_total, static_cast<uint64_t>(kRows));
  ASSERT_EQ(affine.binding_count, 3u);
  EXPECT_EQ(affine.bindings[1].buffer_kind, KILN_BUFFER_KIND_CONSTANT);
  EXPECT_EQ(affine.bindings[1].offset, 64u);
  EXPECT_EQ(affine.bindings[1].size, 8u);
  ASSERT_EQ(affine.bindings[1].rank, 1u);
  EXPECT_EQ(affine.bindings[1].dims[0], 2);
  EXPECT_EQ(affine.bindings[2].buffer_kind, KILN_BUFFER_KIND_OUTPUT);
  kiln_step_info_t copy = artifact->step(2).value();
  EXPECT_EQ(copy.kind, KILN_STEP_KIND_COPY);
  EXPECT_STREQ(copy.name, "copy");
  EXPECT_EQ(copy.workgroup_total, 1u);
  ASSERT_EQ(copy.binding_count, 2u);
  EXPECT_EQ(copy.bindings[0].buffer_kind, KILN_BUFFER_KIND_INPUT);
  EXPECT_EQ(copy.bindings[1].buffer_index, 1u);
  EXPECT_EQ(artifact->step(3).status().code(), KILN_STATUS_OUT_OF_RANGE);
}

// Tests that a query refuses an out-struct whose struct_size the caller did not set, instead of
// writing past a smaller struct.
TEST(ArtifactTest, QueriesCheckTheStructSize) {
  Result<Artifact> artifact = load(buildArtifact(addAffineSpec()));
  ASSERT_TRUE(artifact.ok()) << artifact.status().toString();
  kiln_step_info_t info{};
  Status status = Status::fromC(kiln_artifact_step_info(artifact->get(), 0, &info));
  EXPECT_EQ(status.code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_THAT(status.message(), HasSubstr("struct_size 0"));
}

// Tests that loading from a file reads the same artifact, and that a missing file is NOT_FOUND
// naming its path.
TEST(ArtifactTest, LoadsFromAFile) {
  ScopedTempPath path(".kiln");
  writeFileBytes(path.path(), buildArtifact(addAffineSpec()));
  Result<Artifact> artifact = Artifact::loadFile(path.path());
  ASSERT_TRUE(artifact.ok()) << artifact.status().toString();
  EXPECT_EQ(artifact->name(), path.path());
  EXPECT_EQ(artifact->stepCount(), 3u);

  Result<Artifact> missing = Artifact::loadFile(path.path() + ".missing");
  EXPECT_EQ(missing.status().code(), KILN_STATUS_NOT_FOUND);
  EXPECT_THAT(missing.status().message(), HasSubstr(path.path() + ".missing"));
}

// Tests that an artifact of one device answers the partition queries as device 0 of 1: it opens
// as its own device 0, has no device 1, and NULL gets the documented defaults.
TEST(ArtifactTest, AnUnsplitArtifactIsDeviceZeroOfOne) {
  Result<Artifact> artifact = load(buildArtifact(addAffineSpec()), "affine.kiln");
  ASSERT_TRUE(artifact.ok()) << artifact.status().toString();
  EXPECT_EQ(artifact->deviceCount(), 1u);
  EXPECT_EQ(artifact->deviceRank(), 0u);
  EXPECT_EQ(artifact->partition(), "");
  Result<Artifact> itself = artifact->openDevice(0);
  ASSERT_TRUE(itself.ok()) << itself.status().toString();
  EXPECT_EQ(itself->stepCount(), artifact->stepCount());
  Result<Artifact> past = artifact->openDevice(1);
  EXPECT_EQ(past.status().code(), KILN_STATUS_OUT_OF_RANGE);
  EXPECT_THAT(past.status().message(), HasSubstr("device 1 of a model on 1 device(s)"));
  EXPECT_EQ(kiln_artifact_device_count(nullptr), 0u);
  EXPECT_EQ(kiln_artifact_device_rank(nullptr), 0u);
  EXPECT_STREQ(kiln_artifact_partition(nullptr), "");
  kiln_artifact_t *out = nullptr;
  Status refused = Status::fromC(kiln_artifact_open_device(nullptr, 0, &out));
  EXPECT_EQ(refused.code(), KILN_STATUS_INVALID_ARGUMENT);
}

// Tests that an empty file is refused as too short (it cannot be mapped; it is read instead).
TEST(ArtifactTest, RefusesAnEmptyFile) {
  ScopedTempPath path(".kiln");
  writeFileBytes(path.path(), "");
  Result<Artifact> artifact = Artifact::loadFile(path.path());
  EXPECT_EQ(artifact.status().code(), KILN_STATUS_DATA_LOSS);
  EXPECT_THAT(artifact.status().message(), HasSubstr("too short for a header"));
}

// Tests that a truncated file is DATA_LOSS at every length, never accepted or a crash.
TEST(ArtifactTest, RefusesTruncatedFiles) {
  std::string bytes = buildArtifact(addAffineSpec());
  for (size_t length = 0; length < bytes.size(); length += 97) {
    Status status = load(bytes.substr(0, length), "cut.kiln").status();
    EXPECT_EQ(status.code(), KILN_STATUS_DATA_LOSS) << "length " << length;
    EXPECT_THAT(status.message(), StartsWith("cut.kiln: not a valid .kiln artifact (")) << length;
  }
}

// Tests that random corruption is refused with a status or loads as a still-valid artifact;
// either way the verifier must not read out of bounds (run under sanitizers in CI).
TEST(ArtifactTest, SurvivesCorruptBytes) {
  const std::string original = buildArtifact(addAffineSpec());
  std::mt19937 engine(1234);
  std::uniform_int_distribution<size_t> position(0, original.size() - 1);
  std::uniform_int_distribution<int> value(0, 255);
  int refused = 0;
  for (int trial = 0; trial < 300; ++trial) {
    std::string bytes = original;
    for (int flip = 0; flip < 4; ++flip) bytes[position(engine)] = static_cast<char>(value(engine));
    Result<Artifact> artifact = load(bytes);
    if (!artifact.ok()) {
      ++refused;
      EXPECT_THAT(artifact.status().message(), StartsWith("test.kiln: "));
    }
  }
  // Most flips land in the code object's bytes; some must hit the structure.
  EXPECT_GT(refused, 0);
}

TEST(ArtifactTest, RefusesAWrongIdentifier) {
  std::string bytes = buildArtifact(addAffineSpec());
  std::memcpy(&bytes[4], "ONNX", 4);
  Status status = load(bytes).status();
  EXPECT_EQ(status.code(), KILN_STATUS_DATA_LOSS);
  EXPECT_EQ(status.message(),
            "test.kiln: not a valid .kiln artifact (file identifier 'ONNX', expected 'KILN')");
}

TEST(ArtifactTest, RefusesAnotherFormatVersion) {
  ArtifactSpec spec = addAffineSpec();
  spec.format_version = KILN_ARTIFACT_FORMAT_VERSION + 6;
  Status status = loadStatus(spec);
  EXPECT_EQ(status.code(), KILN_STATUS_FAILED_PRECONDITION);
  EXPECT_EQ(status.message(), "test.kiln: .kiln format version " +
                                  std::to_string(KILN_ARTIFACT_FORMAT_VERSION + 6) +
                                  " is not supported (this runtime reads version " +
                                  std::to_string(KILN_ARTIFACT_FORMAT_VERSION) + ")");
}

TEST(ArtifactTest, RefusesAnUnknownDevice) {
  ArtifactSpec spec = addAffineSpec();
  spec.device = "tpu";
  Status status = loadStatus(spec);
  EXPECT_EQ(status.code(), KILN_STATUS_UNIMPLEMENTED);
  EXPECT_THAT(status.message(), HasSubstr("device 'tpu' is not supported"));
}

/// Expects INVALID_ARGUMENT with exactly `message` after the file name.
void expectInvalid(const ArtifactSpec& spec, const std::string& message) {
  Status status = loadStatus(spec);
  EXPECT_EQ(status.code(), KILN_STATUS_INVALID_ARGUMENT) << status.toString();
  EXPECT_EQ(status.message(), "test.kiln: " + message);
}

/// Expects `spec` refused as invalid with a message containing `part`.
void expectRefused(const ArtifactSpec &spec, const std::string &part) {
  Status status = loadStatus(spec);
  EXPECT_EQ(status.code(), KILN_STATUS_INVALID_ARGUMENT) << status.toString();
  EXPECT_THAT(status.message(), testing::HasSubstr(part));
}

// Tests the verifier's checks of a program planned per run: a symbol without an upper bound needs
// the plan, each arena value names a slot and has valid size code, each slot's steps exist, and an
// arena binding names a value of the plan; the valid plan loads.
TEST(ArtifactTest, ChecksAPlanPerRun) {
  EXPECT_TRUE(loadStatus(plannedPerRunSpec()).ok()) << loadStatus(plannedPerRunSpec()).toString();
  ArtifactSpec unplanned = plannedPerRunSpec();
  unplanned.arena_values.clear();
  unplanned.arena_slots.clear();
  expectRefused(unplanned, "symbol 0 'batch': has no upper bound, but the program's memory is not "
                           "planned per run (Program.arena_values)");
  ArtifactSpec slot = plannedPerRunSpec();
  slot.arena_values[0].first = 3;
  expectRefused(slot, "arena value 0: is in slot 3 of 1");
  ArtifactSpec code = plannedPerRunSpec();
  code.arena_values[0].second = {KILN_DIM_SYMBOL, 1};
  expectRefused(code, "arena value 0: has a size code that reads symbol 1 of 1");
  ArtifactSpec steps = plannedPerRunSpec();
  steps.arena_slots[0] = {1, 7};
  expectRefused(steps, "arena slot 0: is live at steps 1..7 of 3");
  ArtifactSpec value = plannedPerRunSpec();
  value.steps[0].bindings[2].index = 2;
  expectRefused(value, "names arena value 2 of 1");
}

TEST(ArtifactTest, RefusesAnArenaBufferPastTheArena) {
  ArtifactSpec spec = addAffineSpec();
  spec.steps[0].bindings[2].offset = 64;
  expectInvalid(spec, "step 0 (dispatch 'kiln_test_add_f32'): binding 2: arena buffer [64, " +
                          std::to_string(64 + kTensorBytes) + ") exceeds the arena size " +
                          std::to_string(kTensorBytes));
}

TEST(ArtifactTest, RefusesAMisalignedArenaOffset) {
  ArtifactSpec spec = addAffineSpec();
  spec.arena_size = 2 * kTensorBytes;
  spec.steps[0].bindings[2].offset = 4;
  expectInvalid(spec,
                "step 0 (dispatch 'kiln_test_add_f32'): binding 2: arena offset 4 is not aligned "
                "to 64");
}

TEST(ArtifactTest, RefusesAConstantPastTheConstants) {
  ArtifactSpec spec = addAffineSpec();
  spec.steps[1].bindings[1].offset = 124;
  expectInvalid(spec,
                "step 1 (dispatch 'kiln_test_affine_f32'): binding 1: constant buffer [124, 132) "
                "exceeds the constants size 128");
}

// The constants section follows the table (format version 2); a file cut inside it, or a
// section that is not 64-byte aligned, is refused before any binding reads it.
TEST(ArtifactTest, ReadsTheConstantsSectionAfterTheTable) {
  std::string bytes = buildArtifact(addAffineSpec());
  const auto* root = kiln::artifact::GetArtifact(bytes.data());
  ASSERT_EQ(root->constants_size(), 128u);
  EXPECT_EQ(root->constants_offset() % 64, 0u);
  EXPECT_EQ(root->constants_offset() + 128, bytes.size());
  // The section holds the spec's bytes: 0xAB, then the coefficients at 64.
  EXPECT_EQ(static_cast<uint8_t>(bytes[root->constants_offset()]), 0xAB);
  ASSERT_TRUE(load(bytes).ok());
}

TEST(ArtifactTest, RefusesAFileCutInsideTheConstants) {
  std::string bytes = buildArtifact(addAffineSpec());
  uint64_t offset = kiln::artifact::GetArtifact(bytes.data())->constants_offset();
  bytes.resize(bytes.size() - 8);
  Status status = load(bytes).status();
  EXPECT_EQ(status.code(), KILN_STATUS_DATA_LOSS);
  EXPECT_EQ(status.message(), "test.kiln: not a valid .kiln artifact (constants section [" +
                                  std::to_string(offset) + ", +128) ends past the file's " +
                                  std::to_string(bytes.size()) + " bytes: truncated)");
}

TEST(ArtifactTest, RefusesAMisalignedConstantsSection) {
  std::string bytes = buildArtifact(addAffineSpec());
  auto* root = kiln::artifact::GetMutableArtifact(bytes.data());
  uint64_t offset = root->constants_offset() - 8;
  ASSERT_TRUE(root->mutate_constants_offset(offset));
  Status status = load(bytes).status();
  EXPECT_EQ(status.code(), KILN_STATUS_INVALID_ARGUMENT);
  EXPECT_EQ(status.message(), "test.kiln: constants section [" + std::to_string(offset) +
                                  ", +128): not 64-byte aligned in the file");
}

TEST(ArtifactTest, RefusesAnInputIndexOutOfRange) {
  ArtifactSpec spec = addAffineSpec();
  spec.steps[0].bindings[1].index = 2;
  expectInvalid(spec,
                "step 0 (dispatch 'kiln_test_add_f32'): binding 1: input index 2 is out of range "
                "(the artifact has 2 inputs)");
}

TEST(ArtifactTest, RefusesAnOutputRangePastItsEnd) {
  ArtifactSpec spec = addAffineSpec();
  spec.steps[2].bindings[1].size = kTensorBytes * 2;
  expectInvalid(spec, "step 2 (copy): destination: output 1 is referenced as [0, " +
                          std::to_string(kTensorBytes * 2) +
                          "), which is not a 256-byte aligned range within [0, " +
                          std::to_string(kTensorBytes) + ")");
}

TEST(ArtifactTest, RefusesAnInputViewAtAnUnalignedOffset) {
  // A view into part of an input (a contiguous slice) starts at a multiple of 256 bytes.
  ArtifactSpec spec = addAffineSpec();
  spec.steps[0].bindings[1].offset = 4;
  spec.steps[0].bindings[1].size = 4;
  expectInvalid(spec,
                "step 0 (dispatch 'kiln_test_add_f32'): binding 1: input 1 is referenced as [4, 8), "
                "which is not a 256-byte aligned range within [0, " +
                    std::to_string(kTensorBytes) + ")");
}

TEST(ArtifactTest, RefusesABindingLargerThanItsBuffer) {
  ArtifactSpec spec = addAffineSpec();
  spec.steps[1].bindings[1].dims = {3};
  expectInvalid(spec,
                "step 1 (dispatch 'kiln_test_affine_f32'): binding 1: its type needs 12 bytes but "
                "the constant buffer holds 8");
}

TEST(ArtifactTest, RefusesABadKernelIndex) {
  ArtifactSpec spec = addAffineSpec();
  spec.steps[1].kernel = 2;
  expectInvalid(spec,
                "step 1 (dispatch): kernel index 2 is out of range (code object 0 has 2 kernels)");
}

TEST(ArtifactTest, RefusesABadCodeObjectIndex) {
  ArtifactSpec spec = addAffineSpec();
  spec.steps[0].code_object = 1;
  expectInvalid(spec,
                "step 0 (dispatch): code object index 1 is out of range (the artifact has 1)");
}

TEST(ArtifactTest, RefusesAnEmptyWorkgroupGrid) {
  ArtifactSpec spec = addAffineSpec();
  spec.steps[0].workgroups = {4, 0};
  expectInvalid(spec, "step 0 (dispatch 'kiln_test_add_f32'): workgroup count 1 is 0");
  spec.steps[0].workgroups = {};
  expectInvalid(spec, "step 0 (dispatch 'kiln_test_add_f32'): workgroup_count is empty");
}

TEST(ArtifactTest, RefusesAnOutputNeverWritten) {
  ArtifactSpec spec = addAffineSpec();
  spec.steps.pop_back();
  expectInvalid(spec, "output 1 'x_copy': is never written by any step");
}

// Tests that an output without elements needs no step (a CUDA program launches no kernel for a
// zero-size result), while one with elements still does.
TEST(ArtifactTest, AcceptsAnEmptyOutputNoStepWrites) {
  ArtifactSpec spec = addAffineSpec();
  spec.outputs.push_back({"empty", KILN_ELEMENT_TYPE_F32, {3, 0}, {}});
  Status status = loadStatus(spec);
  EXPECT_TRUE(status.ok()) << status.toString();
  spec.outputs.back().dims = {3, 1};
  expectInvalid(spec, "output 2 'empty': is never written by any step");
}

TEST(ArtifactTest, RefusesBadSignatures) {
  ArtifactSpec spec = addAffineSpec();
  spec.inputs[1].type = static_cast<kiln_element_type_t>(99);
  expectInvalid(spec, "input 1 'y': invalid element type 99");

  spec = addAffineSpec();
  spec.inputs[0].dims = {-1, KILN_TEST_BLOCK};
  expectInvalid(spec, "input 0 'x': dim 0 of [-1, 256] is negative");

  spec = addAffineSpec();
  spec.outputs[1].name = "z";
  expectInvalid(spec, "output 1 'z': the name is used by another output");

  spec = addAffineSpec();
  spec.inputs[0].symbols = {"batch"};
  expectInvalid(spec, "input 0 'x': has 1 dim symbols for rank 2");
}

TEST(ArtifactTest, RefusesACopyBetweenDifferentSizes) {
  ArtifactSpec spec = addAffineSpec();
  spec.steps[2].bindings[0].dims = {kRows, KILN_TEST_BLOCK / 2};
  expectInvalid(spec, "step 2 (copy): copies " + std::to_string(kTensorBytes / 2) + " bytes into " +
                          std::to_string(kTensorBytes));
}

TEST(ArtifactTest, RefusesACopyIntoAnInput) {
  ArtifactSpec spec = addAffineSpec();
  StepSpec overwrite = spec.steps[2];
  std::swap(overwrite.bindings[0], overwrite.bindings[1]);
  overwrite.bindings[0] = tensorBinding(fb::BufferKind::Arena, 0);
  overwrite.bindings[1] = tensorBinding(fb::BufferKind::Input, 1);
  spec.steps.push_back(overwrite);
  expectInvalid(spec, "step 3 (copy): the destination is a read-only input buffer");
}

TEST(ArtifactTest, RefusesCudaCodeInACpuArtifact) {
  ArtifactSpec spec = addAffineSpec();
  spec.code_objects[0].format = fb::CodeFormat::Cubin;
  expectInvalid(spec,
                "code object 0 (target 'x86_64'): has format Cubin, which the cpu device cannot "
                "load");
}

/// The affine program on two streams: the affine dispatch on stream 1, after the add it reads.
ArtifactSpec twoStreamSpec() {
  ArtifactSpec spec = addAffineSpec();
  spec.stream_count = 2;
  spec.steps[1].stream = 1;
  spec.steps[1].waits = {0};
  return spec;
}

TEST(ArtifactTest, ReadsTheStreamsOfSteps) {
  Result<Artifact> artifact = load(buildArtifact(twoStreamSpec()));
  ASSERT_TRUE(artifact.ok()) << artifact.status().toString();
  EXPECT_EQ(artifact->streamCount(), 2u);
  EXPECT_EQ(artifact->stepStream(0), 0u);
  EXPECT_EQ(artifact->stepStream(1), 1u);
  EXPECT_EQ(artifact->stepStream(99), 0u);
  Result<Artifact> serial = load(buildArtifact(addAffineSpec()));
  ASSERT_TRUE(serial.ok());
  EXPECT_EQ(serial->streamCount(), 1u);
  EXPECT_EQ(serial->serialArenaSize(), 0u);
}

TEST(ArtifactTest, RefusesAStepOnAStreamPastTheCount) {
  ArtifactSpec spec = twoStreamSpec();
  spec.steps[2].stream = 2;
  expectInvalid(spec, "step 2: runs on stream 2 of 2");
  spec = twoStreamSpec();
  spec.stream_count = 65;
  expectInvalid(spec, "program: has 65 streams; at most 64 are run");
}

TEST(ArtifactTest, RefusesAWaitForALaterStepOrOneOfItsOwnStream) {
  ArtifactSpec spec = twoStreamSpec();
  spec.steps[0].waits = {1};
  expectInvalid(spec, "step 0: waits for step 1, which is not an earlier step of another stream");
  spec = twoStreamSpec();
  spec.steps[2].waits = {0};
  expectInvalid(spec, "step 2: waits for step 0, which is not an earlier step of another stream");
}

TEST(ArtifactTest, RefusesABadArenaAlignment) {
  ArtifactSpec spec = addAffineSpec();
  spec.arena_alignment = 48;
  expectInvalid(spec, "program: arena alignment 48 is not a power of two up to 4096");
}

//===----------------------------------------------------------------------===//
// The rules of cuda artifacts
//===----------------------------------------------------------------------===//

constexpr uint64_t kCudaCount = 1000;

/// A matmul library call of a cuda artifact: a[4,8] x b[8,3] -> output 0 (f32[4,3]).
StepSpec cudaMatmulStep(const std::string& name) {
  StepSpec call;
  call.kind = fb::StepKind::LibraryCall;
  call.name = name;
  call.bindings = {f32Binding(fb::BufferKind::Arena, 0, {4, 8}),
                   f32Binding(fb::BufferKind::Arena, 1, {8, 3}, 128),
                   f32Binding(fb::BufferKind::Output, 2, {4, 3})};
  return call;
}

/// The CUDA affine program with a third output written by `call`.
ArtifactSpec cudaSpecWithCall(const StepSpec& call) {
  ArtifactSpec spec = cudaAffineSpec(kCudaCount);
  spec.outputs.push_back({"d", KILN_ELEMENT_TYPE_F32, {4, 3}, {}});
  spec.steps.push_back(call);
  return spec;
}

// Tests that the CUDA program the CUDA device tests run verifies and reads back as written; a
// rule below that also caught it would refuse every compiled cuda artifact.
TEST(ArtifactTest, AcceptsACudaArtifact) {
  Result<Artifact> artifact = load(buildArtifact(cudaAffineSpec(kCudaCount)));
  ASSERT_TRUE(artifact.ok()) << artifact.status().toString();
  EXPECT_EQ(artifact->device(), "cuda");
  kiln_code_object_info_t code = artifact->codeObject(0).value();
  EXPECT_EQ(code.format, KILN_CODE_FORMAT_PTX);
  EXPECT_STREQ(code.target, "sm_80");
  EXPECT_STREQ(artifact->step(1).value().name, "kiln_k1");
  EXPECT_STREQ(artifact->step(1).value().description, "scale, shift");
}

TEST(ArtifactTest, RefusesACudaDispatchWithoutLaunchParameters) {
  ArtifactSpec spec = cudaAffineSpec(kCudaCount);
  spec.steps[1].cuda.reset();
  expectInvalid(spec,
                "step 1 (dispatch 'kiln_k1'): has no CUDA launch parameters (Dispatch.cuda), "
                "which every dispatch of a cuda artifact needs");
}

// Tests the bounds of the launch parameters: a block of 0 or more than 1024 threads cannot be
// launched on any GPU, and 0 work items would make a grid of nothing.
TEST(ArtifactTest, RefusesBadCudaLaunchParameters) {
  ArtifactSpec spec = cudaAffineSpec(kCudaCount);
  spec.steps[0].cuda->block_size = 0;
  expectInvalid(spec, "step 0 (dispatch 'kiln_k0'): CUDA block size 0 is not between 1 and 1024");
  spec.steps[0].cuda->block_size = 1025;
  expectInvalid(spec,
                "step 0 (dispatch 'kiln_k0'): CUDA block size 1025 is not between 1 and 1024");
  spec.steps[0].cuda->block_size = 1024;
  EXPECT_TRUE(loadStatus(spec).ok()) << loadStatus(spec).toString();
  spec.steps[0].cuda->work_items = 0;
  expectInvalid(spec, "step 0 (dispatch 'kiln_k0'): has 0 CUDA work items");
}

// A launch of a program for a range of shapes gives its work items as code over the dispatch's
// binding dimensions (symbol k: the kth dimension of its bindings, in binding order): code that
// reads a dimension the bindings do not have, or that comes with a static count too, is refused.
TEST(ArtifactTest, ChecksCudaWorkItemsOfTheRun) {
  ArtifactSpec spec = cudaAffineSpec(kCudaCount);
  // The first dispatch binds two vectors: dimensions 0 and 1. Items: dimension 1 times 4.
  spec.steps[0].cuda->work_items = 0;
  spec.steps[0].cuda->work_items_code = {KILN_DIM_SYMBOL, 1, KILN_DIM_CONSTANT, 4, KILN_DIM_MUL};
  EXPECT_TRUE(loadStatus(spec).ok()) << loadStatus(spec).toString();
  Result<Artifact> artifact = load(buildArtifact(spec));
  ASSERT_TRUE(artifact.ok()) << artifact.status().toString();
  EXPECT_EQ(artifact->step(0).value().cuda_work_items, 0u);

  spec.steps[0].cuda->work_items_code = {KILN_DIM_SYMBOL, 2};
  Status status = loadStatus(spec);
  EXPECT_FALSE(status.ok());
  EXPECT_NE(status.message().find("step 0 (dispatch 'kiln_k0'): CUDA work items: "),
            std::string::npos)
      << status.toString();

  spec.steps[0].cuda->work_items_code = {KILN_DIM_SYMBOL, 0};
  spec.steps[0].cuda->work_items = 64;
  expectInvalid(spec, "step 0 (dispatch 'kiln_k0'): has both CUDA work items and code for them");
}

TEST(ArtifactTest, RefusesCudaLaunchParametersInACpuArtifact) {
  ArtifactSpec spec = addAffineSpec();
  spec.steps[0].cuda = CudaLaunchSpec{256, 4096};
  expectInvalid(spec,
                "step 0 (dispatch 'kiln_test_add_f32'): has CUDA launch parameters "
                "(Dispatch.cuda), which only the dispatches of a cuda artifact take");
}

TEST(ArtifactTest, RefusesHostCodeInACudaArtifact) {
  ArtifactSpec spec = cudaAffineSpec(kCudaCount);
  spec.code_objects[0].format = fb::CodeFormat::ElfSharedObject;
  expectInvalid(spec,
                "code object 0 (target 'sm_80'): has format ElfSharedObject, which the cuda "
                "device cannot load");
}

// Tests that the code objects of a cuda artifact list the same kernels in the same order: the
// runtime loads whichever fits the GPU and looks kernels up by a dispatch's index alone, so a
// different list would launch the wrong kernel on some GPUs only.
TEST(ArtifactTest, RefusesCudaCodeObjectsWithOtherKernels) {
  ArtifactSpec spec = cudaAffineSpec(kCudaCount);
  spec.code_objects.push_back(
      {"sm_90", fb::CodeFormat::Cubin, "cubin bytes", {"kiln_k0", "kiln_k1"}});
  EXPECT_TRUE(loadStatus(spec).ok()) << loadStatus(spec).toString();

  const std::string message =
      "code object 1 (target 'sm_90'): lists other kernels than code object 0; every code object "
      "of a cuda artifact holds the same kernels in the same order";
  spec.code_objects[1].kernels = {"kiln_k1", "kiln_k0"};
  expectInvalid(spec, message);
  spec.code_objects[1].kernels = {"kiln_k0"};
  expectInvalid(spec, message);
}

TEST(ArtifactTest, RefusesACudaDispatchOfAnotherCodeObject) {
  ArtifactSpec spec = cudaAffineSpec(kCudaCount);
  spec.code_objects.push_back(spec.code_objects[0]);
  spec.steps[0].code_object = 1;
  expectInvalid(spec,
                "step 0 (dispatch 'kiln_k0'): names code object 1; a cuda dispatch names code "
                "object 0 (the runtime loads the one that fits the GPU)");
}

// Tests that a runtime built with CUDA checks the library calls of a cuda artifact when it
// loads (no GPU needed), naming the step; one built without CUDA leaves them to the session.
TEST(ArtifactTest, ChecksCudaLibraryCallsWhenTheArtifactLoads) {
  EXPECT_TRUE(loadStatus(cudaSpecWithCall(cudaMatmulStep("cublaslt.matmul"))).ok());

  StepSpec mismatched = cudaMatmulStep("cublaslt.matmul");
  mismatched.bindings[1].dims = {7, 3};
  mismatched.bindings[1].size = 7 * 3 * sizeof(float);
  Status wrong_shape = loadStatus(cudaSpecWithCall(mismatched));
  Status cpu_call = loadStatus(cudaSpecWithCall(cudaMatmulStep("onednn.matmul")));
#if defined(KILN_HAVE_CUDA) && KILN_HAVE_CUDA
  EXPECT_EQ(wrong_shape.code(), KILN_STATUS_INVALID_ARGUMENT) << wrong_shape.toString();
  EXPECT_EQ(wrong_shape.message(),
            "test.kiln: step 3: library call 'cublaslt.matmul': a's contraction size 8 differs "
            "from b's 7");
  EXPECT_EQ(cpu_call.code(), KILN_STATUS_UNIMPLEMENTED) << cpu_call.toString();
  EXPECT_THAT(cpu_call.message(),
              StartsWith("test.kiln: step 3: library call 'onednn.matmul' is not available on "
                         "the cuda device"));
#else
  EXPECT_TRUE(wrong_shape.ok()) << wrong_shape.toString();
  EXPECT_TRUE(cpu_call.ok()) << cpu_call.toString();
#endif
}

}  // namespace
}  // namespace kiln::testing
