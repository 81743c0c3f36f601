//===- Losses.cpp - ONNX loss functions -----------------------------------===//
//
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss. The losses gather each target's score
// with gather_elements after moving ignored targets to class 0, and mask them out again.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ModelLoader.h"
#include "frontends/onnx/ops/Decomposition.h"
#include "frontends/onnx/ops/RunTimeOperands.h"

#include <cmath>

using namespace mlir;
using namespace kiln::graph;

namespace kiln::onnx_frontend {
namespace {

//===----------------------------------------------------------------------===//
// Losses
//===----------------------------------------------------------------------===//

/// The reduction attribute of the losses, checked.
FailureOr<std::string> lossReduction(NodeContext &ctx) {
  std::string reduction = ctx.stringAttr("reduction", "mean");
  if (reduction != "none" && reduction != "sum" && reduction != "mean")
    return ctx.emitError() << "reduction must be 'none', 'sum' or 'mean', got '" << reduction
                           << "'";
  return reduction;
}

/// The negative log-likelihood of `logProb` ([N, C, d1, ...]) at `target` ([N, d1, ...]) with
/// optional per-class `weight` ([C]): loss = -logProb[n, target, d...] * weight[target], zero
/// where target equals ignore_index, then summed, or divided by the sum of the weights taken
/// (each 1 without `weight`, 0 where ignored) for `mean`.
Value negativeLogLikelihood(Decomposition &d, Value logProb, Value target, Value weight,
                            StringRef reduction) {
  NodeContext &ctx = d.context();
  auto logProbType = llvm::cast<RankedTensorType>(logProb.getType());
  auto targetType = llvm::cast<RankedTensorType>(target.getType());
  if (logProbType.getRank() < 2 || targetType.getRank() != logProbType.getRank() - 1) {
    ctx.emitError() << "expects an input of shape [N, C, d1, ...] and a target of shape "
                       "[N, d1, ...], got "
                    << logProb.getType() << " and " << target.getType();
    return d.fail();
  }
  if (!targetType.getElementType().isSignlessInteger(32) &&
      !targetType.getElementType().isSignlessInteger(64)) {
    ctx.emitError() << "expects an int32 or int64 target, got " << target.getType();
    return d.fail();
  }
  const onnx::AttributeProto *ignoreAttr = ctx.attribute("ignore_index");
  Value ignored, safeTarget = target;
  if (ignoreAttr) {
    ignored = d.compare(ComparisonDirection::eq, target,
                        d.scalar(target, static_cast<double>(ignoreAttr->i())));
    safeTarget = d.select(ignored, d.scalar(target, 0), target);
  }
  Value index = d.op<UnsqueezeOp>({safeTarget}, {namedAxes(ctx, {1})});
  Value picked = d.op<GatherElementsOp>({logProb, index}, {ctx.namedI64("axis", 1)});
  Value loss = d.op<NegOp>({d.op<SqueezeOp>({picked}, {namedAxes(ctx, {1})})});
  Value taken;
  if (weight) {
    taken = d.op<GatherOp>({weight, safeTarget}, {ctx.namedI64("axis", 0)});
    loss = d.mul(loss, taken);
  }
  if (ignored) {
    Value zero = d.scalar(loss, 0);
    loss = d.select(ignored, zero, loss);
    taken = d.select(ignored, zero, taken ? taken : d.scalar(loss, 1));
  }
  if (d.failed() || reduction == "none")
    return loss;
  int64_t rank = targetType.getRank();
  Value sum = d.op<ReduceSumOp>({loss}, {namedAxes(ctx, allAxes(rank))});
  if (reduction == "sum")
    return sum;
  if (!taken)
    return d.op<ReduceMeanOp>({loss}, {namedAxes(ctx, allAxes(rank))});
  return d.div(sum, d.op<ReduceSumOp>({taken}, {namedAxes(ctx, allAxes(rank))}));
}

/// NegativeLogLikelihoodLoss (opsets 12, 13): input, target and an optional weight; reduction
/// "mean" by default, optional ignore_index.
LogicalResult translateNegativeLogLikelihoodLoss(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  FailureOr<std::string> reduction = lossReduction(ctx);
  if (failed(reduction))
    return failure();
  Decomposition d(ctx);
  return d.finish(
      negativeLogLikelihood(d, ctx.input(0), ctx.input(1), ctx.input(2), *reduction));
}

/// SoftmaxCrossEntropyLoss (opsets 12, 13): the negative log-likelihood of log_softmax(scores)
/// along the class axis 1; the optional second output is that log_softmax.
LogicalResult translateSoftmaxCrossEntropyLoss(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)) || failed(ctx.requireUnusedOutputsFrom(2)))
    return failure();
  FailureOr<std::string> reduction = lossReduction(ctx);
  if (failed(reduction))
    return failure();
  Decomposition d(ctx);
  if (ctx.inputType(0).getRank() < 2) {
    ctx.emitError() << "expects scores of shape [N, C, d1, ...], got " << ctx.input(0).getType();
    return failure();
  }
  Value logProb = d.op<LogSoftmaxOp>({ctx.input(0)}, {ctx.namedI64("axis", 1)});
  Value loss = negativeLogLikelihood(d, logProb, ctx.input(1), ctx.input(2), *reduction);
  if (failed(d.finish(loss)))
    return failure();
  ctx.setOutput(1, logProb);
  return success();
}

} // namespace

void registerLossOps(OpTable &table) {
  table.add("", "NegativeLogLikelihoodLoss", {12, 13}, translateNegativeLogLikelihoodLoss);
  table.add("", "SoftmaxCrossEntropyLoss", {12, 13}, translateSoftmaxCrossEntropyLoss);
}

} // namespace kiln::onnx_frontend
