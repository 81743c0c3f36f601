//===- CpuLibraryCalls.cpp - oneDNN calls and Kiln's attention on the CPU ---===//
//
// The CPU target of the library-call selection: convolutions, matrix products and padded pools
// to oneDNN with their post-op epilogues, attention to Kiln's own blocked attention.
//
//===----------------------------------------------------------------------===//

#include "compiler/librarycalls/CallPlan.h"
#include "compiler/librarycalls/Passes.h"

#include "llvm/Support/FormatVariadic.h"

namespace kiln {
#define GEN_PASS_DEF_SELECTCPULIBRARYCALLSPASS
#include "compiler/librarycalls/Passes.h.inc"
} // namespace kiln

namespace kiln::librarycalls {
namespace {

bool cpuSupports(const CallPlan &plan, std::string &why) {
  if (eltwiseParametersAgree(plan))
    return true;
  why = "oneDNN keeps one set of parameters per activation kind in a call";
  return false;
}

constexpr Target kCpuTarget{contract::callee::kOneDnnConvolution,
                            contract::callee::kOneDnnMatmul,
                            contract::callee::kKilnAttention,
                            contract::callee::kOneDnnPooling,
                            /*f16=*/false,
                            /*bf16=*/false,
                            /*partialBatchBroadcast=*/true,
                            cpuSupports,
                            /*geluErf=*/PostOp::GeluErf,
                            /*geluTanh=*/PostOp::GeluTanh,
                            /*swish=*/PostOp::Swish,
                            /*matrixLayoutsOnly=*/false,
                            /*tf32=*/false,
                            /*f32Result=*/true,
                            /*halfAttention=*/false,
                            /*attentionZeroesMaskedRows=*/true,
                            /*biasAfterScale=*/false,
                            /*attentionNeedsViews=*/false,
                            /*f32Attention=*/""};

struct SelectCpuLibraryCallsPass : impl::SelectCpuLibraryCallsPassBase<SelectCpuLibraryCallsPass> {
  using SelectCpuLibraryCallsPassBase::SelectCpuLibraryCallsPassBase;

  void runOnOperation() override {
    Target target = kCpuTarget;
    target.bf16 = nativeBf16;
    if (!fuseAttention)
      target.attention = "";
    if (failed(selectLibraryCalls(getOperation(), target, device)))
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln::librarycalls
