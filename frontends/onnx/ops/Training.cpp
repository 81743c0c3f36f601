//===- Training.cpp - ONNX training optimizers ----------------------------===//
//
// Momentum, Adagrad and Adam (ai.onnx.preview.training): one update step, elementwise.
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
// Training optimizers (ai.onnx.preview.training): one update step, elementwise
//===----------------------------------------------------------------------===//

/// The tensors an optimizer updates: its inputs are R (the learning rate) and T (the step count),
/// then `lists` lists of n tensors each (X, G and the optimizer's states); it writes `lists - 1`
/// lists of n. Returns n, or failure (reported).
FailureOr<int> optimizedTensors(NodeContext &ctx, int lists) {
  int operands = ctx.numInputs() - 2;
  if (operands < lists || operands % lists != 0)
    return ctx.emitError() << "expects R, T and " << lists
                           << " lists of tensors of one length, got " << ctx.numInputs()
                           << " inputs";
  int n = operands / lists;
  for (int i = 0; i < ctx.numInputs(); ++i)
    if (!ctx.hasInput(i))
      return ctx.emitError() << "input " << i << " is missing";
  return n;
}

/// norm_coefficient * X + G: the gradient of the L2 regularization added.
Value regularizedGradient(Decomposition &d, Value x, Value g, float norm) {
  return d.add(d.mul(d.scalar(x, norm), x), g);
}

/// Momentum: V' = alpha V + beta' G (beta' is 1 at the first step, T = 0), then X' = X - R V'
/// ("standard") or X' = X - R (G + alpha V') ("nesterov"); G carries the L2 term.
LogicalResult translateMomentum(NodeContext &ctx) {
  FailureOr<int> count = optimizedTensors(ctx, 3);
  if (failed(count))
    return failure();
  std::string mode = ctx.stringAttr("mode", "");
  if (mode != "standard" && mode != "nesterov")
    return ctx.emitError() << "mode must be 'standard' or 'nesterov', got '" << mode << "'";
  for (const char *name : {"alpha", "beta", "norm_coefficient"})
    if (!ctx.attribute(name))
      return ctx.emitError() << "attribute '" << name << "' is required";
  float alpha = ctx.floatAttr("alpha", 0), beta = ctx.floatAttr("beta", 0);
  float norm = ctx.floatAttr("norm_coefficient", 0);
  Decomposition d(ctx);
  int n = *count;
  for (int i = 0; i < n; ++i) {
    Value x = ctx.input(2 + i), g = ctx.input(2 + n + i), v = ctx.input(2 + 2 * n + i);
    Value rate = d.castTo(ctx.input(0), elementTypeOf(x));
    Value step = ctx.input(1);
    Value gradient = regularizedGradient(d, x, g, norm);
    Value started = d.compare(ComparisonDirection::gt, step, d.scalar(step, 0));
    Value betaNow = d.select(started, d.scalar(x, beta), d.scalar(x, 1));
    Value velocity = d.add(d.mul(d.scalar(x, alpha), v), d.mul(betaNow, gradient));
    Value direction =
        mode == "standard" ? velocity : d.add(gradient, d.mul(d.scalar(x, alpha), velocity));
    Value updated = d.sub(x, d.mul(rate, direction));
    if (d.failed())
      return failure();
    ctx.setOutput(i, updated);
    ctx.setOutput(n + i, velocity);
  }
  return success();
}

/// Adagrad: r = R / (1 + T decay_factor), H' = H + G^2, X' = X - r G / (sqrt(H') + epsilon).
LogicalResult translateAdagrad(NodeContext &ctx) {
  FailureOr<int> count = optimizedTensors(ctx, 3);
  if (failed(count))
    return failure();
  float decay = ctx.floatAttr("decay_factor", 0), epsilon = ctx.floatAttr("epsilon", 1e-6f);
  float norm = ctx.floatAttr("norm_coefficient", 0);
  Decomposition d(ctx);
  int n = *count;
  for (int i = 0; i < n; ++i) {
    Value x = ctx.input(2 + i), g = ctx.input(2 + n + i), h = ctx.input(2 + 2 * n + i);
    Value step = d.castTo(ctx.input(1), elementTypeOf(x));
    Value rate = d.div(d.castTo(ctx.input(0), elementTypeOf(x)),
                       d.add(d.scalar(x, 1), d.mul(step, d.scalar(x, decay))));
    Value gradient = regularizedGradient(d, x, g, norm);
    Value accumulated = d.add(h, d.mul(gradient, gradient));
    Value scale = d.add(d.op<SqrtOp>({accumulated}), d.scalar(x, epsilon));
    Value updated = d.sub(x, d.div(d.mul(rate, gradient), scale));
    if (d.failed())
      return failure();
    ctx.setOutput(i, updated);
    ctx.setOutput(n + i, accumulated);
  }
  return success();
}

/// Adam: V' = alpha V + (1 - alpha) G, H' = beta H + (1 - beta) G^2, the rate corrected by
/// sqrt(1 - beta^T) / (1 - alpha^T) once T > 0, X' = (1 - norm_coefficient_post)
/// (X - r V' / (sqrt(H') + epsilon)).
LogicalResult translateAdam(NodeContext &ctx) {
  FailureOr<int> count = optimizedTensors(ctx, 4);
  if (failed(count))
    return failure();
  float alpha = ctx.floatAttr("alpha", 0.9f), beta = ctx.floatAttr("beta", 0.999f);
  float epsilon = ctx.floatAttr("epsilon", 1e-6f), norm = ctx.floatAttr("norm_coefficient", 0);
  float post = ctx.floatAttr("norm_coefficient_post", 0);
  Decomposition d(ctx);
  int n = *count;
  for (int i = 0; i < n; ++i) {
    Value x = ctx.input(2 + i), g = ctx.input(2 + n + i);
    Value v = ctx.input(2 + 2 * n + i), h = ctx.input(2 + 3 * n + i);
    Value rate = d.castTo(ctx.input(0), elementTypeOf(x));
    Value stepCount = ctx.input(1);
    Value step = d.castTo(stepCount, elementTypeOf(x));
    Value gradient = regularizedGradient(d, x, g, norm);
    Value velocity = d.add(d.mul(d.scalar(x, alpha), v), d.mul(d.scalar(x, 1 - alpha), gradient));
    Value second =
        d.add(d.mul(d.scalar(x, beta), h), d.mul(d.scalar(x, 1 - beta), d.mul(gradient, gradient)));
    Value scale = d.add(d.op<SqrtOp>({second}), d.scalar(x, epsilon));
    // beta^T and alpha^T as exp(T ln beta): T is a run-time value.
    auto power = [&](float base) {
      return d.op<ExpOp>({d.mul(step, d.scalar(x, std::log(static_cast<double>(base))))});
    };
    Value corrected = d.div(d.mul(rate, d.op<SqrtOp>({d.sub(d.scalar(x, 1), power(beta))})),
                            d.sub(d.scalar(x, 1), power(alpha)));
    Value started = d.compare(ComparisonDirection::gt, stepCount, d.scalar(stepCount, 0));
    Value adjusted = d.select(started, corrected, rate);
    Value updated = d.sub(x, d.mul(adjusted, d.div(velocity, scale)));
    Value final = d.mul(d.scalar(x, 1 - post), updated);
    if (d.failed())
      return failure();
    ctx.setOutput(i, final);
    ctx.setOutput(n + i, velocity);
    ctx.setOutput(2 * n + i, second);
  }
  return success();
}

} // namespace

void registerTrainingOps(OpTable &table) {
  table.add("ai.onnx.preview.training", "Momentum", 1, translateMomentum);
  table.add("ai.onnx.preview.training", "Adagrad", 1, translateAdagrad);
  table.add("ai.onnx.preview.training", "Adam", 1, translateAdam);
}

} // namespace kiln::onnx_frontend
