//===- CostModelTest.cpp - Device descriptions and the kernel-time roofline -===//

#include "compiler/fusion/CostModel.h"

#include <gtest/gtest.h>

namespace kiln::fusion {
namespace {

TEST(CostModelTest, EachCudaArchitectureNamesTheGpuItsCodeRunsOn) {
  // The planner models the oldest GPU an artifact is built for; an architecture without a
  // description (sm_75) gets none, and the caller falls back.
  EXPECT_EQ(DeviceDescription::forCudaArch("sm_80")->name, "a100");
  EXPECT_EQ(DeviceDescription::forCudaArch("sm_86")->name, "a100");
  EXPECT_EQ(DeviceDescription::forCudaArch("sm_89")->name, "l4");
  EXPECT_EQ(DeviceDescription::forCudaArch("sm_90")->name, "h100");
  EXPECT_EQ(DeviceDescription::forCudaArch("sm_100")->name, "h100");
  EXPECT_FALSE(DeviceDescription::forCudaArch("sm_75").has_value());
  EXPECT_FALSE(DeviceDescription::forCudaArch("cuda-sim").has_value());
  EXPECT_FALSE(DeviceDescription::named("tpu").has_value());
}

TEST(CostModelTest, AMemoryBoundKernelTakesItsBytesOverTheBandwidthPlusTheLaunch) {
  DeviceDescription a100 = *DeviceDescription::named("a100");
  // 2 GB at 2039 GB/s with negligible arithmetic: about 0.98 ms, the overlap hiding the compute.
  KernelWork work{/*flops=*/1e6, /*bytes=*/2e9};
  double memory = 2e9 / a100.bytesPerSecond, compute = 1e6 / a100.fp32FlopsPerSecond;
  EXPECT_NEAR(kernelSeconds(a100, work), memory + 0.05 * compute + a100.launchSeconds, 1e-12);
}

TEST(CostModelTest, OverlapChargesTheLargerPartAndFivePercentOfTheSmaller) {
  DeviceDescription cpu = *DeviceDescription::named("cpu");
  KernelWork balanced{/*flops=*/cpu.fp32FlopsPerSecond * 1e-3, /*bytes=*/cpu.bytesPerSecond * 1e-3};
  // 1 ms of each: 1.05 ms, not 2 ms (no overlap) nor 1 ms (perfect overlap).
  EXPECT_NEAR(kernelSeconds(cpu, balanced), 1.05e-3 + cpu.launchSeconds, 1e-12);
}

TEST(CostModelTest, FusingTwoKernelsSavesALaunchAndTheIntermediateBytes) {
  // What the planner's priority compares: a producer writing 4 MB that its consumer reads back,
  // against one kernel that reads the producer's input and writes the consumer's output.
  DeviceDescription h100 = *DeviceDescription::named("h100");
  double producer = kernelSeconds(h100, {1e6, 8e6});
  double consumer = kernelSeconds(h100, {1e6, 8e6});
  double fused = kernelSeconds(h100, {2e6, 8e6});
  EXPECT_GT(producer + consumer - fused, h100.launchSeconds);
}

} // namespace
} // namespace kiln::fusion
