//===- ReassociateReductions.cpp - Let LLVM vectorize the CPU's reductions ---===//
//
// A reduction's float adds, maxima and minima are a chain the LLVM loop vectorizer keeps scalar
// unless it may reorder them (`reassoc`): without the flag, softmax, layer norm and every sum or
// mean in a generated CPU kernel run one element at a time. The flag lets the vectorizer keep one
// partial result per vector lane and combine the lanes at the end, as XLA's and IREE's CPU
// reductions do; the sum's rounding then differs from the sequential one by what reordering a
// float sum costs (a few ulp per row), maxima and minima are unchanged (NaN still propagates).
// Only f32 and f64 arithmetic is marked.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"

namespace kiln {

#define GEN_PASS_DEF_REASSOCIATEREDUCTIONSPASS
#include "compiler/codegen/Passes.h.inc"

using namespace mlir;

namespace {

struct ReassociateReductionsPass
    : impl::ReassociateReductionsPassBase<ReassociateReductionsPass> {
  void runOnOperation() override {
    getOperation()->walk([](linalg::GenericOp generic) {
      if (generic.getNumReductionLoops() == 0)
        return;
      generic.getBody()->walk([](arith::ArithFastMathInterface op) {
        // f16 and bf16 arithmetic keeps its order: reordering a sum at their precision moves
        // results by whole units of the last place (the ONNX tests of bf16 attention see it).
        if (!llvm::all_of(op->getResultTypes(),
                          [](Type type) { return type.isF32() || type.isF64(); }))
          return;
        // Casts (extf, truncf) may carry no flags at all.
        arith::FastMathFlagsAttr current = op.getFastMathFlagsAttr();
        arith::FastMathFlags flags = current ? current.getValue() : arith::FastMathFlags::none;
        op->setAttr(op.getFastMathAttrName(),
                    arith::FastMathFlagsAttr::get(op->getContext(),
                                                  flags | arith::FastMathFlags::reassoc));
      });
    });
  }
};

} // namespace
} // namespace kiln
