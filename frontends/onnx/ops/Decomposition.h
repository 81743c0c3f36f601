//===- Decomposition.h - Building one ONNX node from several graph ops -----===//
//
// Many ONNX operators have no graph op of their own and are written as a short chain of graph
// ops (Acosh as log(x + sqrt(x - 1) * sqrt(x + 1)), LRN as squares, a channel pad, slices and a
// power). Decomposition builds such a chain through the NodeContext, so every step infers its
// type and reports a failure naming the node; after the first failure later steps yield null
// values and do nothing, and the chain is checked once, when its result is bound.
//
//===----------------------------------------------------------------------===//

#ifndef FRONTENDS_ONNX_OPS_DECOMPOSITION_H
#define FRONTENDS_ONNX_OPS_DECOMPOSITION_H

#include "frontends/onnx/ops/OpTable.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/Sequence.h"

#include <algorithm>
#include <optional>

namespace kiln::onnx_frontend {

/// The element type of a ranked tensor value.
inline mlir::Type elementTypeOf(mlir::Value value) {
  return llvm::cast<mlir::RankedTensorType>(value.getType()).getElementType();
}

/// `shape` with dynamic dimensions written as -1, as graph.reshape takes it.
inline llvm::SmallVector<int64_t> reshapeTarget(llvm::ArrayRef<int64_t> shape) {
  llvm::SmallVector<int64_t> target;
  for (int64_t size : shape)
    target.push_back(mlir::ShapedType::isDynamic(size) ? -1 : size);
  return target;
}

/// Builds the graph ops of one node's decomposition; see the file comment.
class Decomposition {
public:
  explicit Decomposition(NodeContext &ctx) : ctx_(ctx) {}

  NodeContext &context() { return ctx_; }
  /// True once a step has failed (its error is already reported).
  bool failed() const { return failed_; }
  /// Marks the decomposition failed after the caller reported an error through the context.
  mlir::Value fail() {
    failed_ = true;
    return {};
  }

  /// Builds an `OpTy` of `operands`; null when an operand is null or the op is rejected.
  template <typename OpTy>
  mlir::Value op(mlir::ValueRange operands, llvm::ArrayRef<mlir::NamedAttribute> attributes = {}) {
    if (failed_ || llvm::any_of(operands, [](mlir::Value v) { return !v; }))
      return fail();
    mlir::FailureOr<mlir::Value> result = ctx_.build<OpTy>(operands, attributes);
    if (mlir::failed(result))
      return fail();
    return *result;
  }

  /// A rank-0 constant `value` of `like`'s element type (null when `like` is null).
  mlir::Value scalar(mlir::Value like, double value) {
    if (!like)
      return fail();
    return ctx_.scalar(elementTypeOf(like), value);
  }

  mlir::Value add(mlir::Value a, mlir::Value b) { return op<graph::AddOp>({a, b}); }
  mlir::Value sub(mlir::Value a, mlir::Value b) { return op<graph::SubOp>({a, b}); }
  mlir::Value mul(mlir::Value a, mlir::Value b) { return op<graph::MulOp>({a, b}); }
  mlir::Value div(mlir::Value a, mlir::Value b) { return op<graph::DivOp>({a, b}); }
  mlir::Value compare(graph::ComparisonDirection direction, mlir::Value a, mlir::Value b) {
    return op<graph::CompareOp>(
        {a, b}, {ctx_.named("direction",
                            graph::ComparisonDirectionAttr::get(ctx_.context(), direction))});
  }
  mlir::Value select(mlir::Value condition, mlir::Value onTrue, mlir::Value onFalse) {
    return op<graph::SelectOp>({condition, onTrue, onFalse});
  }
  mlir::Value castTo(mlir::Value value, mlir::Type element) {
    if (value && elementTypeOf(value) == element)
      return value;
    return op<graph::CastOp>({value}, {ctx_.named("to", mlir::TypeAttr::get(element))});
  }
  /// `value` reshaped to `shape` (`value` itself when it has that static shape already).
  mlir::Value reshape(mlir::Value value, llvm::ArrayRef<int64_t> shape) {
    if (value) {
      auto type = llvm::cast<mlir::RankedTensorType>(value.getType());
      if (type.hasStaticShape() && type.getShape() == shape)
        return value;
    }
    return op<graph::ReshapeOp>({value}, {ctx_.namedArray("shape", shape)});
  }
  mlir::Value transpose(mlir::Value value, llvm::ArrayRef<int64_t> permutation) {
    return op<graph::TransposeOp>({value}, {ctx_.namedArray("permutation", permutation)});
  }
  mlir::Value unsqueeze(mlir::Value value, llvm::ArrayRef<int64_t> axes) {
    return op<graph::UnsqueezeOp>({value}, {ctx_.namedArray("axes", axes)});
  }
  mlir::Value concat(mlir::ValueRange values, int64_t axis) {
    return op<graph::ConcatOp>(values, {ctx_.namedI64("axis", axis)});
  }

  /// Binds output 0 to `result`; fails when any step failed.
  mlir::LogicalResult finish(mlir::Value result) {
    if (failed_ || !result)
      return mlir::failure();
    ctx_.setOutput(0, result);
    return mlir::success();
  }

private:
  NodeContext &ctx_;
  bool failed_ = false;
};

/// FLOAT4E2M1 codes (kFloat4E2M1) of a float tensor, as a uint8 tensor: rounded to the nearest
/// value, ties to an even code, saturated to +-6 (infinities included); NaN becomes 0b1000 (-0),
/// as ONNX's reference (ml_dtypes) converts it.
mlir::Value encodeFloat4E2M1(Decomposition &d, mlir::Value value);

/// The values of FLOAT4E2M1 codes held in an integer tensor, as f32.
mlir::Value decodeFloat4E2M1(Decomposition &d, mlir::Value codes);

/// Every axis of a value of `rank`.
inline llvm::SmallVector<int64_t> allAxes(int64_t rank) {
  return llvm::to_vector(llvm::seq<int64_t>(0, rank));
}

/// The spatial axes (2 and after) of an N x C x D1..Dn value of `rank`.
inline llvm::SmallVector<int64_t> spatialAxes(int64_t rank) {
  return llvm::to_vector(llvm::seq<int64_t>(2, std::max<int64_t>(rank, 2)));
}

/// The `axes` attribute of a reduction.
inline mlir::NamedAttribute namedAxes(NodeContext &ctx, llvm::ArrayRef<int64_t> axes) {
  return ctx.namedArray("axes", axes);
}

/// The one element of input `index` as a double when it is a constant; reports an error naming
/// `what` otherwise.
inline mlir::FailureOr<double> constantScalar(NodeContext &ctx, int index, llvm::StringRef what) {
  std::optional<mlir::DenseElementsAttr> elements = ctx.constantInput(index);
  if (!elements || elements->getNumElements() != 1)
    return ctx.emitError() << what << " (input " << index
                           << ") must be a single value known at import time";
  mlir::Attribute value = *elements->getValues<mlir::Attribute>().begin();
  if (auto floatValue = llvm::dyn_cast<mlir::FloatAttr>(value))
    return floatValue.getValueAsDouble();
  return static_cast<double>(llvm::cast<mlir::IntegerAttr>(value).getInt());
}

/// An `OpTy` reduction of `x` over `axes`, keeping the reduced dimensions as 1.
template <typename OpTy>
mlir::Value reduceKeepingDims(Decomposition &d, mlir::Value x, llvm::ArrayRef<int64_t> axes) {
  NodeContext &ctx = d.context();
  return d.op<OpTy>({x}, {ctx.namedArray("axes", axes),
                          ctx.named("keepdims", ctx.builder().getBoolAttr(true))});
}

/// |x|^p, with p = 1 and p = 2 written without a power.
inline mlir::Value absolutePower(Decomposition &d, mlir::Value x, int64_t p) {
  if (p == 1)
    return d.op<graph::AbsOp>({x});
  if (p == 2)
    return d.mul(x, x);
  return d.op<graph::PowOp>({d.op<graph::AbsOp>({x}), d.scalar(x, static_cast<double>(p))});
}

/// s^(1/p), with p = 1 and p = 2 written without a power.
inline mlir::Value rootOfOrder(Decomposition &d, mlir::Value s, int64_t p) {
  if (p == 1)
    return s;
  if (p == 2)
    return d.op<graph::SqrtOp>({s});
  return d.op<graph::PowOp>({s, d.scalar(s, 1.0 / static_cast<double>(p))});
}

} // namespace kiln::onnx_frontend

#endif // FRONTENDS_ONNX_OPS_DECOMPOSITION_H
