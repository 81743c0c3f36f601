//===- CudaSimObjectTest.cpp - Compiled CUDA kernels run on the simulator ---===//
//
// GPU kernels written in the gpu dialect, lowered by MLIR's NVVM conversion as the compiler's
// kernels are, retargeted by emitCudaSimObject, loaded like a code object and run by the
// simulator's block executor: a block reduction that needs the barrier, the butterfly shuffle,
// shared memory and libdevice's expf to agree with the host, and kernels that must trip the
// checkers (divergent barriers, an out-of-bounds store, a shared-memory race).
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/sim/CudaSimObject.h"
#include "compiler/Registration.h"

#include "runtime/src/cpu/elf_code_object.h"
#include "runtime/src/cuda/sim/sim_executor.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassRegistry.h"

#include "llvm/Support/raw_ostream.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

namespace kiln {
namespace {

using runtime::cuda::sim::launchSimKernel;
using runtime::cuda::sim::SimKernel;
using runtime::cuda::sim::SimLaunchOptions;
using runtime::cuda::sim::SimMemory;
using ::testing::HasSubstr;

/// 64 threads a block: each computes exp(x[i]); each warp sums its 32 values with a butterfly
/// shuffle; lane 0 of each warp puts its sum into shared memory; after the barrier thread 0
/// adds the two. The other kernels break a rule each.
constexpr const char *kKernels = R"mlir(
gpu.module @kiln_kernels {
  gpu.func @block_sum(%x: memref<256xf32>, %out: memref<4xf32>)
      workgroup(%partial: memref<2xf32, #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    %c1 = arith.constant 1 : index
    %c32 = arith.constant 32 : index
    %w = arith.constant 32 : i32
    %tid = gpu.thread_id x
    %bid = gpu.block_id x
    %bdim = gpu.block_dim x
    %base = arith.muli %bid, %bdim : index
    %i = arith.addi %base, %tid : index
    %v = memref.load %x[%i] : memref<256xf32>
    %e = math.exp %v : f32
    %o16 = arith.constant 16 : i32
    %o8 = arith.constant 8 : i32
    %o4 = arith.constant 4 : i32
    %o2 = arith.constant 2 : i32
    %o1 = arith.constant 1 : i32
    %t16, %p16 = gpu.shuffle xor %e, %o16, %w : f32
    %s16 = arith.addf %e, %t16 : f32
    %t8, %p8 = gpu.shuffle xor %s16, %o8, %w : f32
    %s8 = arith.addf %s16, %t8 : f32
    %t4, %p4 = gpu.shuffle xor %s8, %o4, %w : f32
    %s4 = arith.addf %s8, %t4 : f32
    %t2, %p2 = gpu.shuffle xor %s4, %o2, %w : f32
    %s2 = arith.addf %s4, %t2 : f32
    %t1, %p1 = gpu.shuffle xor %s2, %o1, %w : f32
    %s1 = arith.addf %s2, %t1 : f32
    %lane = arith.remui %tid, %c32 : index
    %warp = arith.divui %tid, %c32 : index
    %first = arith.cmpi eq, %lane, %c0 : index
    scf.if %first {
      memref.store %s1, %partial[%warp] : memref<2xf32, #gpu.address_space<workgroup>>
    }
    gpu.barrier
    %leader = arith.cmpi eq, %tid, %c0 : index
    scf.if %leader {
      %a = memref.load %partial[%c0] : memref<2xf32, #gpu.address_space<workgroup>>
      %b = memref.load %partial[%c1] : memref<2xf32, #gpu.address_space<workgroup>>
      %sum = arith.addf %a, %b : f32
      memref.store %sum, %out[%bid] : memref<4xf32>
    }
    gpu.return
  }

  gpu.func @divergent(%x: memref<64xf32>) kernel {
    %c32 = arith.constant 32 : index
    %one = arith.constant 1.0 : f32
    %two = arith.constant 2.0 : f32
    %tid = gpu.thread_id x
    %low = arith.cmpi ult, %tid, %c32 : index
    scf.if %low {
      memref.store %one, %x[%tid] : memref<64xf32>
      gpu.barrier
    } else {
      gpu.barrier
      memref.store %two, %x[%tid] : memref<64xf32>
    }
    gpu.return
  }

  gpu.func @overrun(%x: memref<64xf32>) kernel {
    %c1 = arith.constant 1 : index
    %tid = gpu.thread_id x
    %next = arith.addi %tid, %c1 : index
    %one = arith.constant 1.0 : f32
    memref.store %one, %x[%next] : memref<64xf32>
    gpu.return
  }

  gpu.func @racy(%x: memref<64xf32>)
      workgroup(%slot: memref<1xf32, #gpu.address_space<workgroup>>) kernel {
    %c0 = arith.constant 0 : index
    %tid = gpu.thread_id x
    %v = memref.load %x[%tid] : memref<64xf32>
    memref.store %v, %slot[%c0] : memref<1xf32, #gpu.address_space<workgroup>>
    gpu.return
  }
}
)mlir";

class CudaSimObjectTest : public ::testing::Test {
protected:
  static void SetUpTestSuite() {
    mlir::DialectRegistry registry;
    registerAllDialects(registry);
    registerAllPasses();
    context_ = new mlir::MLIRContext(registry);
    context_->loadAllAvailableDialects();
    std::string wrapped = std::string("module {\n") + kKernels + "}\n";
    module_ = new mlir::OwningOpRef<mlir::ModuleOp>(
        mlir::parseSourceString<mlir::ModuleOp>(wrapped, context_));
    ASSERT_TRUE(*module_) << "the kernels do not parse";
    // What the compiler's "gpu" stage runs on its gpu.module.
    mlir::PassManager pm(context_);
    ASSERT_TRUE(mlir::succeeded(mlir::parsePassPipeline(
        "gpu.module(convert-scf-to-cf,convert-gpu-to-nvvm{use-bare-ptr-memref-call-conv=1},"
        "reconcile-unrealized-casts)",
        pm, llvm::errs())));
    ASSERT_TRUE(mlir::succeeded(pm.run(**module_)));
    auto gpuModule = (*module_)->lookupSymbol<mlir::gpu::GPUModuleOp>("kiln_kernels");
    ASSERT_TRUE(gpuModule);
    mlir::FailureOr<std::string> object = emitCudaSimObject(gpuModule, KILN_TEST_LIBDEVICE);
    ASSERT_TRUE(mlir::succeeded(object));
    auto loaded = runtime::cpu::ElfCodeObject::load(
        reinterpret_cast<const uint8_t *>(object->data()), object->size(), "kernels");
    ASSERT_TRUE(loaded.ok()) << loaded.status().toString();
    code_ = loaded->release();
    auto table = code_->symbol("kiln_sim_runtime");
    ASSERT_TRUE(table.ok());
    *static_cast<const kiln_sim_runtime_t **>(*table) = runtime::cuda::sim::simRuntimeTable();
  }
  static void TearDownTestSuite() {
    delete code_;
    delete module_;
    delete context_;
  }

  static SimKernel kernel(const std::string &name) {
    SimKernel kernel;
    kernel.name = name;
    auto entry = code_->symbol(name);
    auto info = code_->symbol("kiln_sim_info_" + name);
    EXPECT_TRUE(entry.ok() && info.ok()) << name;
    if (entry.ok())
      kernel.entry = reinterpret_cast<kiln_sim_kernel_fn>(*entry);
    if (info.ok())
      std::memcpy(&kernel.info, *info, sizeof(kernel.info));
    return kernel;
  }

  /// Launches `name` over `blocks` x `threads` on `buffers`, each (address, element count)
  /// registered as an allocation of the device.
  static Status launch(const std::string &name, uint32_t blocks, uint32_t threads,
                       std::vector<std::pair<float *, size_t>> buffers, uint64_t seed = 0) {
    SimMemory memory;
    std::vector<void *> values;
    for (auto [data, count] : buffers) {
      memory.add(data, count * sizeof(float));
      values.push_back(data);
    }
    std::vector<void *> arguments;
    for (void *&value : values)
      arguments.push_back(&value);
    const uint32_t grid[3] = {blocks, 1, 1};
    const uint32_t block[3] = {threads, 1, 1};
    SimLaunchOptions options;
    options.seed = seed;
    return launchSimKernel(kernel(name), grid, block, arguments.data(), memory, options);
  }

  static mlir::MLIRContext *context_;
  static mlir::OwningOpRef<mlir::ModuleOp> *module_;
  static runtime::cpu::ElfCodeObject *code_;
};

mlir::MLIRContext *CudaSimObjectTest::context_ = nullptr;
mlir::OwningOpRef<mlir::ModuleOp> *CudaSimObjectTest::module_ = nullptr;
runtime::cpu::ElfCodeObject *CudaSimObjectTest::code_ = nullptr;

TEST_F(CudaSimObjectTest, BlockReductionWithShufflesSharedMemoryAndBarrierMatchesTheHost) {
  SimKernel sum = kernel("block_sum");
  EXPECT_EQ(sum.info.flags, uint32_t(KILN_SIM_KERNEL_BARRIERS | KILN_SIM_KERNEL_WARP_SYNC));
  // The shared variables of the whole code object are laid out once: this kernel's two floats,
  // then racy's one.
  EXPECT_EQ(sum.info.shared_bytes, 12u);
  EXPECT_EQ(sum.info.parameter_count, 2u);
  std::vector<float> x(256), out(4, -1.0f);
  for (size_t i = 0; i < x.size(); ++i)
    x[i] = std::sin(0.37f * float(i)) * 2.0f;
  for (uint64_t seed : {0, 11}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    Status status =
        launch("block_sum", 4, 64, {{x.data(), x.size()}, {out.data(), out.size()}}, seed);
    ASSERT_TRUE(status.ok()) << status.toString();
    for (int b = 0; b < 4; ++b) {
      double expected = 0;
      for (int t = 0; t < 64; ++t)
        expected += std::exp(double(x[b * 64 + t]));
      EXPECT_NEAR(out[b], expected, 2e-6 * expected) << "block " << b;
    }
  }
}

TEST_F(CudaSimObjectTest, DivergentBarriersAreReported) {
  std::vector<float> x(64, 0.0f);
  Status status = launch("divergent", 1, 64, {{x.data(), x.size()}});
  EXPECT_EQ(status.code(), KILN_STATUS_INTERNAL);
  EXPECT_THAT(status.message(), HasSubstr("different barriers"));
}

TEST_F(CudaSimObjectTest, AStorePastTheBindingIsReportedAndNotMade) {
  // 65 floats, of which the device has the first 64: thread 63's store must not land.
  std::vector<float> x(65, 7.0f);
  Status status = launch("overrun", 1, 64, {{x.data(), 64}});
  EXPECT_EQ(status.code(), KILN_STATUS_INTERNAL);
  EXPECT_THAT(status.message(), HasSubstr("kernel 'overrun'"));
  EXPECT_THAT(status.message(), HasSubstr("outside every allocation"));
  EXPECT_EQ(x[64], 7.0f);
}

TEST_F(CudaSimObjectTest, SharedMemoryRacesAreReported) {
  std::vector<float> x(64, 1.0f);
  Status status = launch("racy", 1, 64, {{x.data(), x.size()}});
  EXPECT_EQ(status.code(), KILN_STATUS_INTERNAL);
  EXPECT_THAT(status.message(), HasSubstr("race on shared memory"));
}

} // namespace
} // namespace kiln
