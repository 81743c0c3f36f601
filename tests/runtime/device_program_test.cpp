//===- device_program_test.cpp - The table every device program runs ------===//
//
// ProgramTable flattens a verified artifact's steps into one binding array (each step a slice
// of it) and resolves a run's addresses from the bases of its memory; the CPU and CUDA programs
// both run from it. Checked on the affine program of artifact_builder.h.
//
//===----------------------------------------------------------------------===//

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "runtime/src/artifact/artifact.h"
#include "runtime/src/program/device_program.h"
#include "tests/runtime/artifact_builder.h"

namespace kiln::testing {
namespace {

using runtime::BindingBases;
using runtime::LoadedArtifact;
using runtime::ProgramStep;
using runtime::ProgramTable;
using runtime::StepKind;

std::shared_ptr<const LoadedArtifact> load(const ArtifactSpec &spec) {
  std::string bytes = buildArtifact(spec);
  auto artifact = LoadedArtifact::loadMemory(bytes.data(), bytes.size(), "affine.kiln");
  EXPECT_TRUE(artifact.ok()) << artifact.status().toString();
  return artifact.ok() ? *artifact : nullptr;
}

TEST(ProgramTable, FlattensTheStepsIntoSlicesOfOneBindingArray) {
  auto artifact = load(addAffineSpec());
  ASSERT_NE(artifact, nullptr);
  auto table = ProgramTable::build(*artifact);
  ASSERT_TRUE(table.ok()) << table.status().toString();

  const std::vector<ProgramStep> &steps = table->steps();
  ASSERT_EQ(steps.size(), 3u);
  EXPECT_EQ(steps[0].kind, StepKind::kDispatch);
  EXPECT_EQ(steps[0].first_binding, 0u);
  EXPECT_EQ(steps[0].binding_count, 3u);
  EXPECT_EQ(steps[0].workgroups, static_cast<uint64_t>(kRows));
  ASSERT_NE(steps[0].dispatch, nullptr);
  EXPECT_EQ(steps[0].dispatch->kernel(), 0u);
  EXPECT_EQ(steps[0].label, "step 0 (kernel 'kiln_test_add_f32': add)");

  EXPECT_EQ(steps[1].kind, StepKind::kDispatch);
  EXPECT_EQ(steps[1].first_binding, 3u);
  EXPECT_EQ(steps[1].binding_count, 3u);
  EXPECT_EQ(steps[1].label, "step 1 (kernel 'kiln_test_affine_f32': multiply, add)");

  EXPECT_EQ(steps[2].kind, StepKind::kCopy);
  EXPECT_EQ(steps[2].first_binding, 6u);
  EXPECT_EQ(steps[2].binding_count, 2u);
  EXPECT_EQ(steps[2].copy_size, kTensorBytes);
  EXPECT_EQ(steps[2].dispatch, nullptr);
  EXPECT_EQ(steps[2].label, "step 2 (copy)");

  ASSERT_EQ(table->bindings().size(), 8u);
  // Step 1 reads the coefficients at offset 64 of the constants, 8 bytes.
  const runtime::ResolvedBinding &coefficients = table->bindings()[4];
  EXPECT_EQ(coefficients.kind, fb::BufferKind::Constant);
  EXPECT_EQ(coefficients.offset, 64u);
  EXPECT_EQ(coefficients.bytes, 8u);
}

TEST(ProgramTable, ResolvesEveryBindingFromTheBasesOfARun) {
  auto artifact = load(addAffineSpec());
  ASSERT_NE(artifact, nullptr);
  auto table = ProgramTable::build(*artifact);
  ASSERT_TRUE(table.ok()) << table.status().toString();

  // Distinct memory for every base, so that a binding resolved against the wrong one shows.
  std::vector<uint8_t> arena(kTensorBytes), constants(128);
  std::vector<float> x(kRows * KILN_TEST_BLOCK), y(x.size()), z(x.size()), x_copy(x.size());
  void *inputs[] = {x.data(), y.data()};
  void *outputs[] = {z.data(), x_copy.data()};
  BindingBases bases;
  bases.arena = arena.data();
  bases.constants = constants.data();
  bases.inputs = inputs;
  bases.outputs = outputs;
  std::vector<void *> addresses(1, nullptr);
  table->resolveAddresses(bases, addresses);

  std::vector<void *> expected = {
      x.data(), y.data(), arena.data(), arena.data(), constants.data() + 64,
      z.data(), x.data(), x_copy.data()};
  EXPECT_EQ(addresses, expected);
}

TEST(ProgramTable, AProgramWithoutStepsHasNoBindings) {
  ArtifactSpec spec = addAffineSpec();
  spec.steps.clear();
  spec.outputs.clear();
  auto artifact = load(spec);
  ASSERT_NE(artifact, nullptr);
  auto table = ProgramTable::build(*artifact);
  ASSERT_TRUE(table.ok()) << table.status().toString();
  EXPECT_TRUE(table->steps().empty());
  std::vector<void *> addresses(4, nullptr);
  table->resolveAddresses(BindingBases{}, addresses);
  EXPECT_TRUE(addresses.empty());
}

} // namespace
} // namespace kiln::testing
