//===- PrintCudaSimIR.cpp - The simulator's LLVM IR of the CUDA kernels -------===//

#include "compiler/codegen/Passes.h"
#include "compiler/codegen/sim/CudaSimObject.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/raw_ostream.h"

namespace kiln {

#define GEN_PASS_DEF_PRINTCUDASIMIRPASS
#include "compiler/codegen/Passes.h.inc"

using namespace mlir;

namespace {

struct PrintCudaSimIRPass : impl::PrintCudaSimIRPassBase<PrintCudaSimIRPass> {
  using Base::Base;
  void runOnOperation() override {
    llvm::LLVMContext context;
    FailureOr<std::unique_ptr<llvm::Module>> module =
        retargetCudaKernelsToHost(getOperation(), libdevice, context);
    if (failed(module))
      return signalPassFailure();
    (*module)->print(llvm::outs(), nullptr);
  }
};

} // namespace
} // namespace kiln
