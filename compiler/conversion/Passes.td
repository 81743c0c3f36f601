//===- Passes.td - Conversions out of the graph dialect ---------------------===//

#ifndef KILN_COMPILER_CONVERSION_PASSES_TD
#define KILN_COMPILER_CONVERSION_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Graph to Linalg
//===----------------------------------------------------------------------===//

def ConvertGraphToLinalgPass : Pass<"kiln-convert-graph-to-linalg", "mlir::func::FuncOp"> {
  let summary = "Lowers graph ops to linalg, tensor, arith and math on tensors";
  let description = [{
    Rewrites graph-dialect ops into upstream ops on tensors, the common input of Kiln's CPU and
    CUDA code generators: elementwise ops (with NumPy broadcasting) become `linalg.generic` with
    `arith`/`math` bodies, reductions `linalg.reduce`, transposes `linalg.transpose`, reshapes
    `tensor.collapse_shape`/`tensor.expand_shape`, softmax its max/exp/sum/divide sequence, and
    constants `arith.constant`; gathers read with `tensor.extract` inside `linalg.generic`, and
    the ops that carry state along an axis (scatters applied in order, cumsum, top-k) are
    `scf.for` loops over tensors. A dynamic dimension is assumed not to broadcast at run time.

    Unsigned integer element types become signless ones of the same width (the function's
    signature, calls, returns and unsigned constants included), with the unsigned arith ops
    (`divui`, `remui`, `maxui`, `minui`, `cmpi ult`, `uitofp`, `extui`) where the signedness
    matters.

    Ops without a lowering yet stay in place (the pass is a partial conversion), so later stages
    can send them to library calls.
  }];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def VerifyGraphLoweredPass : Pass<"kiln-verify-graph-lowered", "mlir::ModuleOp"> {
  let summary = "Fails for a graph op left after the lowering to linalg";
  let description = [{
    Every graph op must have been lowered or turned into a library call by now; one that was not
    is an error naming it ("'graph.x' has no code generation yet").
  }];
}

#endif // KILN_COMPILER_CONVERSION_PASSES_TD
