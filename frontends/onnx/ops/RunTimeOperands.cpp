//===- RunTimeOperands.cpp - Shape operands known only at run time --------===//

#include "frontends/onnx/ops/RunTimeOperands.h"

#include "llvm/ADT/Sequence.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace kiln::graph;

namespace kiln::onnx_frontend {

std::string formatShape(ArrayRef<int64_t> shape) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleave(shape, os, ",");
  os << "]";
  return text;
}

RankedTensorType declaredResultType(NodeContext &ctx, int output, int index, StringRef what) {
  RankedTensorType declared = ctx.declaredOutputType(output);
  if (!declared)
    ctx.emitError() << what << " (input " << index
                    << ") is known only at run time and the model declares no static shape for "
                       "output "
                    << output << "; make it a constant (an initializer, a Constant node or "
                    << "shape arithmetic on them) or declare the output's shape";
  return declared;
}

int64_t runTimeLength(NodeContext &ctx, int index) {
  auto type = ctx.inputType(index);
  return type.getRank() == 0 ? 1 : type.getDimSize(0);
}

Value runTimeVector(Decomposition &d, int index, StringRef what) {
  NodeContext &ctx = d.context();
  RankedTensorType type = ctx.inputType(index);
  if (type.getRank() > 1 || !type.hasStaticShape() || type.getElementType().isInteger(1)) {
    ctx.emitError() << what << " (input " << index << ") must be a static numeric vector, not "
                    << type;
    return d.fail();
  }
  Value vector = d.castTo(ctx.input(index), ctx.builder().getI64Type());
  return type.getRank() == 0 ? d.reshape(vector, {1}) : vector;
}

namespace {

/// The number of elements of `flags` that are false, as an i64 scalar.
Value countFalse(Decomposition &d, Value flags) {
  NodeContext &ctx = d.context();
  flags = d.op<NotOp>({flags});
  if (!flags)
    return d.fail();
  Value counts = d.castTo(flags, ctx.builder().getI64Type());
  int64_t rank = llvm::cast<RankedTensorType>(flags.getType()).getRank();
  if (rank == 0)
    return counts;
  return d.op<ReduceSumOp>({counts},
                           {ctx.namedArray("axes", llvm::to_vector(llvm::seq<int64_t>(0, rank)))});
}

} // namespace

Value allTrue(Decomposition &d, Value flags) {
  Type i64 = d.context().builder().getI64Type();
  return d.compare(ComparisonDirection::eq, countFalse(d, flags), d.context().scalar(i64, 0));
}

Value equalsConstant(Decomposition &d, Value values, ArrayRef<int64_t> expected) {
  return allTrue(d, d.compare(ComparisonDirection::eq, values, d.context().i64Vector(expected)));
}

Value axesMask(Decomposition &d, Value axes, int64_t rank) {
  NodeContext &ctx = d.context();
  if (!axes)
    return d.fail();
  Type i64 = ctx.builder().getI64Type();
  int64_t count = llvm::cast<RankedTensorType>(axes.getType()).getDimSize(0);
  if (count == 0)
    return ctx.i64Vector(SmallVector<int64_t>(rank, 0));
  Value negative = d.compare(ComparisonDirection::lt, axes, ctx.scalar(i64, 0));
  Value normalized =
      d.select(negative, d.add(axes, ctx.scalar(i64, static_cast<double>(rank))), axes);
  // [count, 1] against [1, rank]: which position each axis names, then whether any does.
  Value column = d.reshape(normalized, {count, 1});
  Value positions =
      d.reshape(ctx.i64Vector(llvm::to_vector(llvm::seq<int64_t>(0, rank))), {1, rank});
  Value names = d.castTo(d.compare(ComparisonDirection::eq, column, positions), i64);
  return d.op<ReduceMaxOp>({names}, {ctx.namedArray("axes", {0})});
}

FailureOr<SmallVector<SmallVector<int64_t>>>
masksOf(NodeContext &ctx, StringRef what, int64_t rank, int64_t count,
        llvm::function_ref<bool(ArrayRef<int64_t>)> accept) {
  SmallVector<SmallVector<int64_t>> masks;
  if (count < 0 || count > rank)
    return masks;
  // C(rank, count), counted until past the limit.
  int64_t choices = 1;
  for (int64_t i = 0; i < count && choices <= kMaxAxesChoices; ++i)
    choices = choices * (rank - i) / (i + 1);
  if (choices > kMaxAxesChoices)
    return ctx.emitError() << what << " known only at run time names " << count << " of " << rank
                           << " dimensions: more than " << kMaxAxesChoices
                           << " choices to compile; make it a constant";
  // Every choice of `count` positions, as ascending index lists.
  SmallVector<int64_t> chosen = llvm::to_vector(llvm::seq<int64_t>(0, count));
  while (true) {
    SmallVector<int64_t> mask(rank, 0);
    for (int64_t p : chosen)
      mask[p] = 1;
    if (accept(mask))
      masks.push_back(mask);
    int64_t i = count - 1;
    while (i >= 0 && chosen[i] == rank - count + i)
      --i;
    if (i < 0)
      break;
    ++chosen[i];
    for (int64_t j = i + 1; j < count; ++j)
      chosen[j] = chosen[j - 1] + 1;
  }
  return masks;
}

LogicalResult checkMaskIsOneOf(Decomposition &d, Value mask,
                               ArrayRef<SmallVector<int64_t>> candidates, StringRef what,
                               RankedTensorType declared) {
  NodeContext &ctx = d.context();
  if (candidates.empty())
    return ctx.emitError() << "no value of " << what << " gives the declared output shape "
                           << formatShape(declared.getShape());
  Value holds;
  for (const SmallVector<int64_t> &candidate : candidates) {
    Value matches = equalsConstant(d, mask, candidate);
    holds = holds ? d.op<OrOp>({holds, matches}) : matches;
  }
  if (d.failed())
    return failure();
  return ctx.addCheck(
      holds, (what + " does not give the declared output shape " + formatShape(declared.getShape()))
                 .str());
}

Value clampIndex(Decomposition &d, Value index, int64_t size) {
  NodeContext &ctx = d.context();
  Type i64 = ctx.builder().getI64Type();
  return d.op<MinOp>(
      {d.op<MaxOp>({index, ctx.scalar(i64, 0)}), ctx.scalar(i64, static_cast<double>(size - 1))});
}

Value elementOf(Decomposition &d, Value values, int64_t index) {
  NodeContext &ctx = d.context();
  if (!values)
    return d.fail();
  auto scalarType = RankedTensorType::get({}, elementTypeOf(values));
  if (std::optional<DenseElementsAttr> elements = NodeContext::constantElements(values))
    return ctx.constant(
        DenseElementsAttr::get(scalarType, elements->getValues<Attribute>()[index]));
  Value slice = d.op<SliceOp>({values}, {ctx.namedArray("starts", {index}),
                                         ctx.namedArray("limits", {index + 1}),
                                         ctx.namedArray("strides", {1})});
  return d.reshape(slice, {});
}

LogicalResult finishChecked(Decomposition &d, Value result, Value holds, const Twine &what) {
  if (d.failed() || !result || failed(d.context().addCheck(holds, what.str())))
    return failure();
  return d.finish(result);
}

FailureOr<SmallVector<int64_t>>
intsKnownOrChecked(NodeContext &ctx, int index, StringRef what, int output,
                   llvm::function_ref<FailureOr<SmallVector<int64_t>>(RankedTensorType)> derive) {
  if (ctx.knownAtImport(index))
    return ctx.constantInts(index, what);
  RankedTensorType declared = declaredResultType(ctx, output, index, what);
  if (!declared)
    return failure();
  FailureOr<SmallVector<int64_t>> derived = derive(declared);
  if (failed(derived))
    return failure();
  if (runTimeLength(ctx, index) != static_cast<int64_t>(derived->size()))
    return ctx.emitError() << what << " (input " << index << ") has " << runTimeLength(ctx, index)
                           << " elements; the declared output shape "
                           << formatShape(declared.getShape()) << " needs " << derived->size();
  Decomposition d(ctx);
  Value holds = equalsConstant(d, runTimeVector(d, index, what), *derived);
  if (d.failed() ||
      failed(ctx.addCheck(holds, (what + " (input " + Twine(index) + ") is not " +
                                  formatShape(*derived) + ", which the declared output shape " +
                                  formatShape(declared.getShape()) + " needs")
                                     .str())))
    return failure();
  return *derived;
}

} // namespace kiln::onnx_frontend
