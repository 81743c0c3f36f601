//===- CrashContextTest.cpp - Crashes reported naming the pass and op ------===//
//
// A pass that crashes (here: one that raises SIGSEGV or aborts on a function) must end the
// process with kiln's internal-error exit code and a message naming the pass, the op it ran on,
// the stage around it and the model, instead of dying of a bare signal.
//
//===----------------------------------------------------------------------===//

#include "compiler/driver/CrashContext.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassManager.h"

#include <gtest/gtest.h>

#include <csignal>
#include <cstdlib>

namespace {

/// Raises `signal` on the function named @crash.
struct CrashingPass : mlir::PassWrapper<CrashingPass, mlir::OperationPass<mlir::func::FuncOp>> {
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(CrashingPass)
  explicit CrashingPass(int signal) : signal(signal) {}
  llvm::StringRef getArgument() const override { return "test-crash"; }
  void runOnOperation() override {
    if (getOperation().getSymName() == "crash")
      std::raise(signal);
  }
  int signal;
};

constexpr const char *kModule = R"mlir(
  func.func @fine() { return }
  func.func @crash() { return }
)mlir";

void runCrashingPipeline(int signal) {
  mlir::MLIRContext context;
  context.loadDialect<mlir::func::FuncDialect>();
  context.disableMultithreading();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>(kModule, &context);
  ASSERT_TRUE(module);
  kiln::crash::installHandler("kiln");
  kiln::crash::setSubject("model.onnx");
  kiln::crash::Scope stage("stage 'graph' of the compile pipeline");
  mlir::PassManager pm(&context);
  kiln::crash::instrument(pm);
  pm.addNestedPass<mlir::func::FuncOp>(std::make_unique<CrashingPass>(signal));
  (void)pm.run(*module);
  std::exit(0);
}

using CrashContextDeathTest = ::testing::Test;

TEST_F(CrashContextDeathTest, ASegfaultNamesThePassTheOpTheStageAndTheModel) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(runCrashingPipeline(SIGSEGV),
              ::testing::ExitedWithCode(kiln::crash::kExitInternalError),
              "kiln: internal error: SIGSEGV, an invalid memory access in pass 'test-crash' on "
              "'func.func' @crash at .*\n  within stage 'graph' of the compile pipeline\n  "
              "compiling model.onnx\n  This is a bug in Kiln");
}

TEST_F(CrashContextDeathTest, AnAbortIsReportedAsWell) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(runCrashingPipeline(SIGABRT),
              ::testing::ExitedWithCode(kiln::crash::kExitInternalError),
              "SIGABRT, an abort in pass 'test-crash' on 'func.func' @crash");
}

TEST(CrashContext, RecordsEndWithTheirPassAndScope) {
  // After a pass and a scope end, nothing of them is left to name.
  {
    kiln::crash::Scope scope("importing the ONNX model");
    EXPECT_NE(kiln::crash::describeCrash(SIGSEGV).find("in importing the ONNX model"),
              std::string::npos);
  }
  mlir::MLIRContext context;
  context.loadDialect<mlir::func::FuncDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceString<mlir::ModuleOp>("func.func @fine() { return }", &context);
  mlir::PassManager pm(&context);
  kiln::crash::instrument(pm);
  pm.addNestedPass<mlir::func::FuncOp>(std::make_unique<CrashingPass>(SIGSEGV));
  ASSERT_TRUE(mlir::succeeded(pm.run(*module)));
  std::string message = kiln::crash::describeCrash(SIGSEGV);
  EXPECT_EQ(message.find("test-crash"), std::string::npos) << message;
  EXPECT_EQ(message.find("importing"), std::string::npos) << message;
}

} // namespace
