//===- CudaLibraryCalls.cpp - cuDNN and cuBLASLt calls on CUDA ---===//
//
// The CUDA target of the library-call selection: convolutions to cuDNN and matrix products to
// cuBLASLt with the epilogues they fuse, half-precision attention to cuDNN's fused attention and
// f32 attention to the kernel Kiln generates (kiln-generate-cuda-attention).
//
//===----------------------------------------------------------------------===//

#include "compiler/librarycalls/CallPlan.h"
#include "compiler/librarycalls/Passes.h"

#include "llvm/Support/FormatVariadic.h"

namespace kiln {
#define GEN_PASS_DEF_SELECTCUDALIBRARYCALLSPASS
#include "compiler/librarycalls/Passes.h.inc"
} // namespace kiln

namespace kiln::librarycalls {
namespace {

/// What cuDNN and cuBLASLt fuse (runtime/src/cuda/cuda_library_call.h): for matrix products
/// `[linear(alpha, 0)] [add FULL] [relu | gelu]` with a bias only without `linear`; for
/// convolutions `[add FULL] [relu]`.
bool cudaSupports(const CallPlan &plan, std::string &why) {
  auto resultType = cast<RankedTensorType>(plan.result.getType());
  bool matmul = plan.name == contract::callee::kCublasLtMatmul;
  size_t next = 0, addends = 0;
  enum { kStart, kLinear, kAdd, kActivation } stage = kStart;
  for (PostOp kind : plan.postOps) {
    if (kind == PostOp::Linear) {
      if (!matmul)
        why = "cuDNN's fused convolutions take no scale";
      else if (stage != kStart)
        why = "cuBLASLt's alpha scales the product alone, before its addend";
      else if (plan.postOpArgs[next + 1] != 0.0f)
        why = "cuBLASLt's alpha scales without a shift";
      if (!why.empty())
        return false;
      next += 2;
      stage = kLinear;
    } else if (kind == PostOp::Add) {
      if (stage == kAdd || stage == kActivation) {
        why = stage == kAdd ? "the CUDA libraries add one tensor" : "an add after the activation";
        return false;
      }
      auto addendType = cast<RankedTensorType>(plan.addends[addends++].getType());
      if (classifyAddend(addendType, resultType, plan.biasAxis) != Broadcast::Full ||
          addendType.getShape() != resultType.getShape()) {
        why = "the CUDA libraries add a tensor of the result's shape (or a bias)";
        return false;
      }
      stage = kAdd;
    } else if (kind == PostOp::Relu || (kind == PostOp::Gelu && matmul)) {
      if (stage == kActivation) {
        why = "a second activation";
        return false;
      }
      stage = kActivation;
    } else {
      why = (kind == PostOp::Gelu
                 ? "cuDNN's fused convolutions take relu alone"
                 : llvm::formatv("{0} takes no {1}", plan.name, contract::postOpName(kind)).str());
      return false;
    }
  }
  return true;
}

// cuBLASLt's GELU epilogue is the tanh approximation; the erf form stays a generated kernel.
constexpr Target kCudaTarget{contract::callee::kCudnnConvolution,
                             contract::callee::kCublasLtMatmul,
                             contract::callee::kCudnnAttention,
                             "",
                             /*f16=*/true,
                             /*bf16=*/true,
                             /*partialBatchBroadcast=*/false,
                             cudaSupports,
                             /*geluErf=*/std::nullopt,
                             /*geluTanh=*/PostOp::Gelu,
                             /*swish=*/std::nullopt,
                             /*matrixLayoutsOnly=*/true,
                             /*tf32=*/true,
                             /*f32Result=*/false,
                             /*halfAttention=*/true,
                             /*attentionZeroesMaskedRows=*/false,
                             /*biasAfterScale=*/true,
                             /*attentionNeedsViews=*/true,
                             /*f32Attention=*/contract::callee::kKilnAttention};

struct SelectCudaLibraryCallsPass
    : impl::SelectCudaLibraryCallsPassBase<SelectCudaLibraryCallsPass> {
  using SelectCudaLibraryCallsPassBase::SelectCudaLibraryCallsPassBase;

  void runOnOperation() override {
    Target target = kCudaTarget;
    if (!fuseAttention)
      target.attention = target.f32Attention = "";
    if (failed(selectLibraryCalls(getOperation(), target, device)))
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln::librarycalls
