//===- EpiloguesTest.cpp - The fusion planner's decisions on library epilogues -===//
//
// The planner takes a step into a library call by the cost model (the kernel the step would be
// against the call reading the step's operand), reports each call's steps with the bytes and
// time its kernel would have cost, and drops a refusal when a later call takes the refused op.
//
//===----------------------------------------------------------------------===//

#include "compiler/Registration.h"
#include "compiler/fusion/Epilogues.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Parser/Parser.h"

#include "llvm/Support/FormatVariadic.h"

#include <gtest/gtest.h>

using namespace mlir;

namespace kiln::fusion {
namespace {

class EpiloguePlannerTest : public ::testing::Test {
protected:
  EpiloguePlannerTest() : context(makeRegistry()) { context.loadAllAvailableDialects(); }

  static DialectRegistry makeRegistry() {
    DialectRegistry registry;
    registerAllDialects(registry);
    return registry;
  }

  /// The ops of the function in `source`, in order.
  std::vector<Operation *> parse(StringRef source) {
    module = parseSourceString<ModuleOp>(source, &context);
    EXPECT_TRUE(module);
    std::vector<Operation *> ops;
    module->walk([&](Operation *op) {
      if (!isa<ModuleOp, func::FuncOp, func::ReturnOp>(op))
        ops.push_back(op);
    });
    return ops;
  }

  std::vector<std::string> report(const EpiloguePlanner &planner) {
    planner.record(*module);
    std::vector<std::string> lines;
    for (auto line :
         (*module)->getAttrOfType<ArrayAttr>(kEpilogueReportAttr).getAsRange<StringAttr>())
      lines.push_back(line.getValue().str());
    return lines;
  }

  MLIRContext context;
  OwningOpRef<ModuleOp> module;
};

TEST_F(EpiloguePlannerTest, TakesABiasAndReportsTheKernelItSpares) {
  std::vector<Operation *> ops = parse(R"mlir(
    func.func @f(%x: tensor<1024x512xf32>, %w: tensor<512x1024xf32>, %b: tensor<1024xf32>) -> tensor<1024x1024xf32> {
      %zero = graph.constant dense<0.0> : tensor<f32>
      %0 = graph.matmul %x, %w : (tensor<1024x512xf32>, tensor<512x1024xf32>) -> tensor<1024x1024xf32>
      %1 = graph.add %0, %b : (tensor<1024x1024xf32>, tensor<1024xf32>) -> tensor<1024x1024xf32>
      %2 = graph.max %1, %zero : (tensor<1024x1024xf32>, tensor<f32>) -> tensor<1024x1024xf32>
      return %2 : tensor<1024x1024xf32>
    })mlir");
  ASSERT_EQ(ops.size(), 4u);
  Operation *matmul = ops[1], *add = ops[2], *max = ops[3];
  DeviceDescription cpu = *DeviceDescription::named("cpu");
  EpiloguePlanner planner(cpu);
  planner.begin("onednn.matmul", matmul);
  EXPECT_TRUE(planner.take({"bias", matmul->getResult(0), {add}, add->getOperand(1)}));
  EXPECT_TRUE(planner.take({"relu", add->getResult(0), {max}, Value()}));
  planner.end();

  // The two steps would have been one kernel: reading the 4 MiB product and the 4 KiB bias,
  // writing 4 MiB, two operations per element; the call still reads the bias.
  double megabytes = 4.0 * (1 << 20);
  KernelWork kernel{2.0 * 1024 * 1024, 2 * megabytes + 4096};
  double saving = kernelSeconds(cpu, kernel) - 4096 / cpu.bytesPerSecond;
  std::vector<std::string> lines = report(planner);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], llvm::formatv("library epilogues (cpu device model): 1 calls take 2 ops in 2 "
                                    "steps: 1 kernels, 8.0 MiB, {0:F1} us modeled saved; 0 steps "
                                    "stay out",
                                    saving * 1e6)
                          .str());
  EXPECT_EQ(lines[1], llvm::formatv("onednn.matmul (graph.matmul) with bias, relu: 2 ops; 8192.0 "
                                    "KiB, {0:F2} us modeled saved",
                                    saving * 1e6)
                          .str());
  EXPECT_GT(saving, 0.0);
}

TEST_F(EpiloguePlannerTest, DropsARefusalWhenALaterCallTakesTheOp) {
  std::vector<Operation *> ops = parse(R"mlir(
    func.func @f(%x: tensor<64x64xf32>, %w: tensor<64x64xf32>) -> (tensor<64x64xf32>, tensor<64x64xf32>) {
      %zero = graph.constant dense<0.0> : tensor<f32>
      %0 = graph.matmul %x, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
      %1 = graph.matmul %x, %w : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
      %2 = graph.add %1, %0 : (tensor<64x64xf32>, tensor<64x64xf32>) -> tensor<64x64xf32>
      %3 = graph.max %0, %zero : (tensor<64x64xf32>, tensor<f32>) -> tensor<64x64xf32>
      return %2, %3 : tensor<64x64xf32>, tensor<64x64xf32>
    })mlir");
  ASSERT_EQ(ops.size(), 5u);
  Operation *first = ops[1], *second = ops[2], *add = ops[3], *max = ops[4];
  EpiloguePlanner planner(*DeviceDescription::named("a100"));
  // The first product's result is read by the add and the max: neither joins its call.
  planner.begin("cublaslt.matmul", first);
  planner.refuse({"add", first->getResult(0), {add}, second->getResult(0)},
                 "the value before it has 2 readers");
  planner.refuse({"relu", first->getResult(0), {max}, Value()}, "the value before it has 2 readers");
  planner.end();
  // The second product takes the add, the first's result as its addend.
  planner.begin("cublaslt.matmul", second);
  EXPECT_TRUE(planner.take({"add", second->getResult(0), {add}, first->getResult(0)}));
  planner.end();

  std::vector<std::string> lines = report(planner);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_NE(lines[0].find("1 calls take 1 ops in 1 steps"), std::string::npos) << lines[0];
  EXPECT_NE(lines[0].find("; 1 steps stay out"), std::string::npos) << lines[0];
  EXPECT_EQ(lines[1].rfind("cublaslt.matmul (graph.matmul) with add: 1 ops; 32.0 KiB", 0), 0u)
      << lines[1];
  EXPECT_EQ(lines[2], "not in the epilogue of cublaslt.matmul (graph.matmul): graph.max: the "
                      "value before it has 2 readers");
}

TEST_F(EpiloguePlannerTest, RefusesAnAddendComputedForTheCallAlone) {
  std::vector<Operation *> ops = parse(R"mlir(
    func.func @f(%s: tensor<8x64x32xf32>, %k: tensor<8x32x64xf32>, %mask: tensor<1x64x64xf32>, %bias: tensor<8x1x64xf32>) -> tensor<8x64x64xf32> {
      %bm = graph.add %bias, %mask : (tensor<8x1x64xf32>, tensor<1x64x64xf32>) -> tensor<8x64x64xf32>
      %0 = graph.matmul %s, %k : (tensor<8x64x32xf32>, tensor<8x32x64xf32>) -> tensor<8x64x64xf32>
      %1 = graph.add %0, %bm : (tensor<8x64x64xf32>, tensor<8x64x64xf32>) -> tensor<8x64x64xf32>
      %2 = graph.softmax %1 {axis = 2 : i64} : tensor<8x64x64xf32>
      return %2 : tensor<8x64x64xf32>
    })mlir");
  ASSERT_EQ(ops.size(), 4u);
  Operation *sum = ops[0], *matmul = ops[1], *add = ops[2];
  DeviceDescription a100 = *DeviceDescription::named("a100");
  EpiloguePlanner planner(a100);
  planner.begin("cublaslt.matmul", matmul);
  EpilogueStep step{"add", matmul->getResult(0), {add}, add->getOperand(1)};
  step.operandProducer = sum;
  step.readerFuses = true;
  EXPECT_FALSE(planner.take(step));
  planner.end();

  // In the call: a kernel adding the 2 KiB bias and the 16 KiB mask into 128 KiB, then the call
  // reading those 128 KiB. Out of it: the softmax's kernel reads the bias and the mask.
  double addend = 8 * 64 * 64 * 4, sources = 8 * 64 * 4 + 64 * 64 * 4;
  double fused =
      kernelSeconds(a100, {8 * 64 * 64, sources + addend}) + addend / a100.bytesPerSecond;
  double unfused = sources / a100.bytesPerSecond;
  std::vector<std::string> lines = report(planner);
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[1], llvm::formatv("not in the epilogue of cublaslt.matmul (graph.matmul): "
                                    "graph.add: modeled slower in the call ({0:F2} us, its operand "
                                    "a kernel's result of its own) than in its reader's kernel "
                                    "({1:F2} us)",
                                    fused * 1e6, unfused * 1e6)
                          .str());

  // The same addend as an input of the program exists anyway: the call takes it (a tie with the
  // softmax's kernel reading it).
  planner.begin("cublaslt.matmul", matmul);
  step.operandProducer = nullptr;
  EXPECT_TRUE(planner.take(step));
  planner.end();
}

} // namespace
} // namespace kiln::fusion
