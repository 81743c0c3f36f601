//===- CostModelTest.cpp - Device descriptions and the kernel-time roofline -===//

#include "compiler/fusion/CostModel.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"

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

TEST(CostModelTest, IdleUnitsAndAPartialWaveSlowTheArithmetic) {
  DeviceDescription cpu = *DeviceDescription::named("cpu");
  KernelWork arithmetic{/*flops=*/cpu.fp32FlopsPerSecond * 1e-3, /*bytes=*/0};
  // Two or more workgroups keep both cores busy; one leaves one idle; three take two rounds
  // of two (4/3 of the time).
  EXPECT_NEAR(kernelSeconds(cpu, arithmetic, 2), 1e-3 + cpu.launchSeconds, 1e-12);
  EXPECT_NEAR(kernelSeconds(cpu, arithmetic, 1), 2e-3 + cpu.launchSeconds, 1e-12);
  EXPECT_NEAR(kernelSeconds(cpu, arithmetic, 3), 4e-3 / 3 + cpu.launchSeconds, 1e-12);
  EXPECT_NEAR(kernelSeconds(cpu, arithmetic), 1e-3 + cpu.launchSeconds, 1e-12);

  // On an H100 eight rows share a block: 132 blocks are one wave, 133 two.
  DeviceDescription h100 = *DeviceDescription::named("h100");
  KernelWork work{/*flops=*/h100.fp32FlopsPerSecond * 1e-3, /*bytes=*/0};
  EXPECT_NEAR(kernelSeconds(h100, work, 132 * 8), 1e-3 + h100.launchSeconds, 1e-12);
  EXPECT_NEAR(kernelSeconds(h100, work, 132 * 8 + 1), 264.0 / 133 * 1e-3 + h100.launchSeconds,
              1e-12);
  // Memory is not scaled: a few units draw most of the bandwidth.
  KernelWork bytes{/*flops=*/0, /*bytes=*/h100.bytesPerSecond * 1e-3};
  EXPECT_NEAR(kernelSeconds(h100, bytes, 1), 1e-3 + h100.launchSeconds, 1e-12);
}

/// Writes `text` to a fresh temporary file and returns its path.
std::string writeTemporary(const std::string &text) {
  llvm::SmallString<128> path;
  EXPECT_FALSE(llvm::sys::fs::createTemporaryFile("kiln-device", "json", path));
  std::error_code error;
  llvm::raw_fd_ostream(path, error) << text;
  EXPECT_FALSE(error);
  return std::string(path);
}

TEST(CostModelTest, ADescriptionFileReadsBackWhatItWasWrittenFrom) {
  DeviceDescription measured;
  measured.name = "host";
  measured.source = "measured on a test host";
  measured.fp32FlopsPerSecond = 207.5e9;
  measured.fp16FlopsPerSecond = 207.5e9;
  measured.bytesPerSecond = 31.4e9;
  measured.launchSeconds = 0.6e-6;
  measured.parallelUnits = 2;
  measured.cacheBytes = 32 << 20;
  std::string path = writeTemporary(measured.toJson());
  std::string error;
  std::optional<DeviceDescription> read = DeviceDescription::load(path, error);
  ASSERT_TRUE(read) << error;
  EXPECT_EQ(read->name, "host");
  EXPECT_EQ(read->source, "measured on a test host");
  EXPECT_DOUBLE_EQ(read->fp32FlopsPerSecond, 207.5e9);
  EXPECT_DOUBLE_EQ(read->bytesPerSecond, 31.4e9);
  EXPECT_DOUBLE_EQ(read->launchSeconds, 0.6e-6);
  EXPECT_EQ(read->parallelUnits, 2);
  EXPECT_EQ(read->workgroupsPerBlock, 1);
  EXPECT_EQ(read->cacheBytes, 32 << 20);
  llvm::sys::fs::remove(path);

  // A published name is not a path.
  std::optional<DeviceDescription> a100 = DeviceDescription::load("a100", error);
  ASSERT_TRUE(a100);
  EXPECT_EQ(a100->source, "published");
  EXPECT_EQ(a100->workgroupsPerBlock, 8);
}

TEST(CostModelTest, ABadDescriptionNamesTheFileAndTheField) {
  auto refusal = [](const std::string &text) {
    std::string path = writeTemporary(text), error;
    EXPECT_FALSE(DeviceDescription::load(path, error).has_value());
    llvm::sys::fs::remove(path);
    EXPECT_EQ(error.rfind(path + ": ", 0), 0u) << error;
    return error.substr(path.size() + 2);
  };
  std::string figures = R"("name": "x", "fp32_flops_per_second": 1e11, "launch_seconds": 1e-6,
                           "parallel_units": 2)";
  EXPECT_EQ(refusal(R"({"kiln_device_description": 1, )" + figures + "}"),
            "'bytes_per_second' is missing");
  EXPECT_EQ(refusal(R"({"kiln_device_description": 1, "bytes_per_second": -5, )" + figures + "}"),
            "'bytes_per_second' must be a positive number");
  EXPECT_EQ(refusal(R"({"kiln_device_description": 2, "bytes_per_second": 1e10, )" + figures + "}"),
            "'kiln_device_description' must be 1 (the format this build reads)");
  EXPECT_EQ(refusal(R"({"kiln_device_description": 1, "bytes_per_second": 1e10,
                        "name": "x", "fp32_flops_per_second": 1e11, "launch_seconds": 1e-6,
                        "parallel_units": 2.5})"),
            "'parallel_units' and 'workgroups_per_block' must be whole numbers from 1 to "
            "1048576");
  EXPECT_EQ(refusal(R"({"kiln_device_description": 1, "bytes_per_second": 1e10,
                        "name": "x", "fp32_flops_per_second": 1e11, "launch_seconds": 1e-6,
                        "parallel_units": 1e30})"),
            "'parallel_units' and 'workgroups_per_block' must be whole numbers from 1 to "
            "1048576");
  EXPECT_EQ(refusal("[1, 2]"), "a device description is a JSON object");
  EXPECT_EQ(refusal("{").rfind("not JSON: ", 0), 0u);

  std::string error;
  EXPECT_FALSE(DeviceDescription::load("/nonexistent/device.json", error).has_value());
  EXPECT_NE(error.find("'/nonexistent/device.json' is neither a device the cost model knows"),
            std::string::npos)
      << error;
}

} // namespace
} // namespace kiln::fusion
