//===- Indexing.cpp - ONNX indexing, selection and rearrangement operators --===//
//
// ArgMax/ArgMin, CumSum, TopK, GatherElements, GatherND, ScatterElements (and the deprecated
// Scatter) and ScatterND map onto graph ops of their own. The rest are decomposed: Hardmax and
// OneHot into a comparison with a constant index ramp, Trilu into a select with a constant mask,
// Tile into unsqueeze/expand/reshape, DepthToSpace and SpaceToDepth into reshape/transpose,
// Einsum into transpose/reshape/matmul/reduce_sum, Compress and ReverseSequence into gathers with
// constant indices. Range, EyeLike and NonZero fold to constants. Operands that decide a result
// shape (TopK's K, Tile's repeats, ...) must be constants.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/Decomposition.h"
#include "frontends/onnx/ops/OpTable.h"
#include "frontends/onnx/ops/RunTimeOperands.h"

#include "mlir/Dialect/Arith/IR/Arith.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <numeric>

using namespace mlir;
using namespace kiln::graph;

namespace kiln::onnx_frontend {
namespace {

constexpr int64_t kDynamic = ShapedType::kDynamic;

RankedTensorType typeOf(Value value) { return llvm::cast<RankedTensorType>(value.getType()); }

NamedAttribute namedBool(NodeContext &ctx, StringRef name, bool value) {
  return ctx.named(name, ctx.builder().getBoolAttr(value));
}

//===----------------------------------------------------------------------===//
// Building blocks
//===----------------------------------------------------------------------===//

/// The elements of input `index` as doubles when it is an integer or floating-point constant;
/// reports an error naming `what` otherwise.
/// Whether constantNumbers reads input `index` at import time.
bool numbersKnown(NodeContext &ctx, int index) {
  if (ctx.constantInput(index) || ctx.knownAtImport(index))
    return true;
  auto cast = ctx.input(index).getDefiningOp<CastOp>();
  return cast && ctx.knownInts(cast.getInput()).has_value();
}

FailureOr<SmallVector<double>> constantNumbers(NodeContext &ctx, int index, StringRef what) {
  std::optional<DenseElementsAttr> elements = ctx.constantInput(index);
  if (!elements && llvm::isa<IntegerType>(ctx.inputType(index).getElementType())) {
    // Integers computed from constants (shape arithmetic) are evaluated by constantInts.
    FailureOr<SmallVector<int64_t>> values = ctx.constantInts(index, what);
    if (failed(values))
      return failure();
    return SmallVector<double>(values->begin(), values->end());
  }
  // A floating-point cast of integers known at import time (Cast(size) in expanded functions).
  if (!elements) {
    if (auto cast = ctx.input(index).getDefiningOp<CastOp>())
      if (std::optional<SmallVector<int64_t>> values = ctx.knownInts(cast.getInput()))
        return SmallVector<double>(values->begin(), values->end());
  }
  if (!elements) {
    ctx.emitError() << what << " (input " << index << ") must be a constant "
                    << "(an initializer or a Constant node) to be imported";
    return failure();
  }
  SmallVector<double> values;
  Type elementType = elements->getElementType();
  if (llvm::isa<FloatType>(elementType)) {
    for (const APFloat &value : elements->getValues<APFloat>())
      values.push_back(value.convertToDouble());
  } else if (elementType.isUnsignedInteger() || elementType.isInteger(1)) {
    for (const APInt &value : elements->getValues<APInt>())
      values.push_back(static_cast<double>(value.getZExtValue()));
  } else {
    for (const APInt &value : elements->getValues<APInt>())
      values.push_back(static_cast<double>(value.getSExtValue()));
  }
  return values;
}

/// The single integer held by constant input `index` (a scalar or a one-element tensor).
FailureOr<int64_t> constantScalarInt(NodeContext &ctx, int index, StringRef what) {
  FailureOr<SmallVector<int64_t>> values = ctx.constantInts(index, what);
  if (failed(values))
    return failure();
  if (values->size() != 1) {
    ctx.emitError() << what << " (input " << index << ") must hold one element, not "
                    << values->size();
    return failure();
  }
  return values->front();
}

/// A constant of `type` holding `values` converted to its element type.
Value numbersConstant(NodeContext &ctx, RankedTensorType type, ArrayRef<double> values) {
  Type elementType = type.getElementType();
  SmallVector<Attribute> elements;
  elements.reserve(values.size());
  for (double value : values) {
    if (auto floatType = llvm::dyn_cast<FloatType>(elementType))
      elements.push_back(ctx.builder().getFloatAttr(floatType, value));
    else if (elementType.isInteger(1))
      elements.push_back(ctx.builder().getBoolAttr(value != 0));
    else
      elements.push_back(
          ctx.builder().getIntegerAttr(elementType, static_cast<int64_t>(value)));
  }
  return ctx.constant(DenseElementsAttr::get(type, elements));
}

/// A rank-`rank` i64 constant of size `size` along `axis` and 1 elsewhere holding 0..size-1, to
/// compare against indices that broadcast along `axis`.
Value indexRamp(NodeContext &ctx, int64_t rank, int64_t axis, int64_t size) {
  SmallVector<int64_t> shape(rank, 1);
  shape[axis] = size;
  SmallVector<int64_t> values(size);
  std::iota(values.begin(), values.end(), 0);
  auto type = RankedTensorType::get(shape, ctx.builder().getI64Type());
  return ctx.constant(DenseElementsAttr::get(type, ArrayRef<int64_t>(values)));
}

/// Reshapes `value` to `dims`, where dynamic entries become graph.reshape's single -1. Reports an
/// error when more than one entry is dynamic.
FailureOr<Value> reshapeTo(NodeContext &ctx, Value value, ArrayRef<int64_t> dims) {
  if (typeOf(value).getShape() == dims)
    return value;
  SmallVector<int64_t> target;
  int unknown = 0;
  for (int64_t dim : dims) {
    target.push_back(dim == kDynamic ? -1 : dim);
    unknown += dim == kDynamic;
  }
  if (unknown > 1) {
    ctx.emitError() << "reshaping " << typeOf(value) << " leaves " << unknown
                    << " dimensions unknown; graph.reshape infers at most one (bind the graph "
                       "inputs' shapes with --shape)";
    return failure();
  }
  return ctx.build<ReshapeOp>({value}, {ctx.namedArray("shape", target)});
}

/// Transposes `value` by `permutation`, or returns it when the permutation is the identity.
FailureOr<Value> transposeBy(NodeContext &ctx, Value value, ArrayRef<int64_t> permutation) {
  bool identity = true;
  for (auto [i, p] : llvm::enumerate(permutation))
    identity &= static_cast<int64_t>(i) == p;
  if (identity)
    return value;
  return ctx.build<TransposeOp>({value}, {ctx.namedArray("permutation", permutation)});
}

/// The product of `dims`, dynamic when any is dynamic (and none is zero).
int64_t productOf(ArrayRef<int64_t> dims) {
  int64_t product = 1;
  bool dynamic = false;
  for (int64_t dim : dims) {
    if (dim == 0)
      return 0;
    if (dim == kDynamic)
      dynamic = true;
    else
      product *= dim;
  }
  return dynamic ? kDynamic : product;
}

/// Input `index`, one integer known only at run time (an axis, a shift), as a rank-0 i64 tensor;
/// null, with the error reported, when it holds more than one element.
Value runTimeScalarInt(Decomposition &d, int index, StringRef what) {
  NodeContext &ctx = d.context();
  if (productOf(typeOf(ctx.input(index)).getShape()) != 1) {
    ctx.emitError() << what << " (input " << index << ") must hold one element";
    return d.fail();
  }
  return d.castTo(d.reshape(ctx.input(index), {}), ctx.builder().getI64Type());
}

//===----------------------------------------------------------------------===//
// Arg reductions, cumulative sums and top-k
//===----------------------------------------------------------------------===//

/// ArgMax/ArgMin: select_last_index exists from opset 12; keepdims defaults to 1.
template <typename OpTy>
LogicalResult translateArgReduce(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  FailureOr<int64_t> axis =
      normalizeAxis(ctx, ctx.intAttr("axis", 0), ctx.inputType(0).getRank());
  if (failed(axis))
    return failure();
  bool selectLast = ctx.opset() >= 12 && ctx.intAttr("select_last_index", 0) != 0;
  return ctx.setResult(
      ctx.build<OpTy>({ctx.input(0)}, {ctx.namedI64("axis", *axis),
                                       namedBool(ctx, "keepdims", ctx.intAttr("keepdims", 1)),
                                       namedBool(ctx, "select_last_index", selectLast)}));
}

/// CumSum (11+) and CumProd (26+): a constant axis input, exclusive and reverse.
template <typename OpTy>
LogicalResult translateCumulative(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  auto along = [&](int64_t axis) {
    return ctx.build<OpTy>({ctx.input(0)},
                           {ctx.namedI64("axis", axis),
                            namedBool(ctx, "exclusive", ctx.intAttr("exclusive", 0)),
                            namedBool(ctx, "reverse", ctx.intAttr("reverse", 0))});
  };
  int64_t rank = ctx.inputType(0).getRank();
  if (ctx.constantInput(1)) {
    FailureOr<int64_t> axisValue = constantScalarInt(ctx, 1, "axis");
    if (failed(axisValue))
      return failure();
    FailureOr<int64_t> axis = normalizeAxis(ctx, *axisValue, rank);
    if (failed(axis))
      return failure();
    return ctx.setResult(along(*axis));
  }
  // The axis known only at run time: the result along every axis, the one the axis names
  // selected (-rank..rank-1; an axis outside that range takes the last).
  if (rank == 0)
    return ctx.emitError() << "a rank-0 input has no axis to accumulate along";
  Decomposition d(ctx);
  Type i64 = ctx.builder().getI64Type();
  Value axis = runTimeScalarInt(d, 1, "axis");
  if (!axis)
    return failure();
  Value negative = d.compare(ComparisonDirection::lt, axis, ctx.scalar(i64, 0));
  axis = d.select(negative, d.add(axis, ctx.scalar(i64, static_cast<double>(rank))), axis);
  FailureOr<Value> last = along(rank - 1);
  if (failed(last))
    return failure();
  Value result = *last;
  for (int64_t a = rank - 2; a >= 0; --a) {
    FailureOr<Value> candidate = along(a);
    if (failed(candidate))
      return failure();
    Value chosen =
        d.compare(ComparisonDirection::eq, axis, ctx.scalar(i64, static_cast<double>(a)));
    result = d.select(chosen, *candidate, result);
  }
  return d.finish(result);
}

/// TopK: K is an attribute before opset 10 and a constant input from 10 on; largest and sorted
/// exist from opset 11.
LogicalResult translateTopK(NodeContext &ctx) {
  if (failed(ctx.requireInputs(ctx.opset() < 10 ? 1 : 2)))
    return failure();
  int64_t k = 0;
  if (ctx.opset() < 10) {
    if (!ctx.attribute("k"))
      return ctx.emitError() << "attribute 'k' is required";
    k = ctx.intAttr("k", 0);
  }
  FailureOr<int64_t> axis =
      normalizeAxis(ctx, ctx.intAttr("axis", -1), ctx.inputType(0).getRank());
  if (failed(axis))
    return failure();
  if (ctx.opset() >= 10) {
    // K of the run: the declared size of the values along the axis, checked.
    FailureOr<SmallVector<int64_t>> input =
        intsKnownOrChecked(ctx, 1, "K", 0, [&](RankedTensorType declared) {
          if (declared.getRank() != ctx.inputType(0).getRank())
            return FailureOr<SmallVector<int64_t>>(
                ctx.emitError() << "the values are declared with rank " << declared.getRank()
                                << "; the input has " << ctx.inputType(0).getRank());
          return FailureOr<SmallVector<int64_t>>(SmallVector<int64_t>{declared.getDimSize(*axis)});
        });
    if (failed(input))
      return failure();
    if (input->size() != 1)
      return ctx.emitError() << "K (input 1) must hold one element, not " << input->size();
    k = input->front();
  }
  bool largest = ctx.opset() < 11 || ctx.intAttr("largest", 1) != 0;
  bool sorted = ctx.opset() < 11 || ctx.intAttr("sorted", 1) != 0;
  FailureOr<TopKOp> topK = ctx.create<TopKOp>(
      {ctx.input(0)}, {ctx.namedI64("k", k), ctx.namedI64("axis", *axis),
                       namedBool(ctx, "largest", largest), namedBool(ctx, "sorted", sorted)});
  if (failed(topK))
    return failure();
  ctx.setOutput(0, topK->getValues());
  ctx.setOutput(1, topK->getIndices());
  return success();
}

/// One at the first maximum along `axis` and zero elsewhere: arg_max compared with an index ramp.
Value hardmaxAlong(Decomposition &d, Value input, int64_t axis) {
  NodeContext &ctx = d.context();
  if (!input)
    return d.fail();
  RankedTensorType type = typeOf(input);
  if (type.isDynamicDim(axis)) {
    ctx.emitError() << "dimension " << axis << " of input type " << type
                    << " must be static to build the one-hot comparison";
    return d.fail();
  }
  Value argMax = d.op<ArgMaxOp>({input}, {ctx.namedI64("axis", axis),
                                          namedBool(ctx, "keepdims", true)});
  Value ramp = indexRamp(ctx, type.getRank(), axis, type.getDimSize(axis));
  return d.castTo(d.compare(ComparisonDirection::eq, argMax, ramp), type.getElementType());
}

/// Hardmax: before opset 13 the input is coerced to a matrix at `axis` (default 1); from 13 on
/// it works along `axis` (default -1).
LogicalResult translateHardmax(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  Value input = ctx.input(0);
  RankedTensorType type = typeOf(input);
  int64_t rank = type.getRank();
  bool coerce = ctx.opset() < 13;
  FailureOr<int64_t> axis = normalizeAxis(ctx, ctx.intAttr("axis", coerce ? 1 : -1), rank);
  if (failed(axis))
    return failure();
  Decomposition d(ctx);
  if (!coerce || *axis == rank - 1)
    return d.finish(hardmaxAlong(d, input, *axis));
  Value hardmax = hardmaxAlong(d, d.op<FlattenOp>({input}, {ctx.namedI64("axis", *axis)}), 1);
  if (d.failed())
    return failure();
  return ctx.setResult(reshapeTo(ctx, hardmax, type.getShape()));
}

//===----------------------------------------------------------------------===//
// Gathers and scatters
//===----------------------------------------------------------------------===//

/// GatherND: batch_dims exists from opset 12.
LogicalResult translateGatherND(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  int64_t batchDims = ctx.opset() >= 12 ? ctx.intAttr("batch_dims", 0) : 0;
  return ctx.setResult(
      ctx.build<GatherNdOp>({ctx.input(0), ctx.input(1)}, {ctx.namedI64("batch_dims", batchDims)}));
}

/// The reduction attribute of ScatterElements/ScatterND: from opset 16 none, add and mul; from
/// 18 also max and min.
FailureOr<ScatterReduction> scatterReduction(NodeContext &ctx) {
  if (ctx.opset() < 16)
    return ScatterReduction::none;
  std::string name = ctx.stringAttr("reduction", "none");
  std::optional<ScatterReduction> reduction = symbolizeScatterReduction(name);
  bool known = reduction && (ctx.opset() >= 18 || (*reduction != ScatterReduction::max &&
                                                   *reduction != ScatterReduction::min));
  if (!known) {
    ctx.emitError() << "reduction '" << name << "' is not defined at this opset";
    return failure();
  }
  return *reduction;
}

/// ScatterElements, and Scatter (its deprecated name from opset 9).
LogicalResult translateScatterElements(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  FailureOr<int64_t> axis =
      normalizeAxis(ctx, ctx.intAttr("axis", 0), ctx.inputType(0).getRank());
  if (failed(axis))
    return failure();
  FailureOr<ScatterReduction> reduction = scatterReduction(ctx);
  if (failed(reduction))
    return failure();
  return ctx.setResult(ctx.build<ScatterElementsOp>(
      {ctx.input(0), ctx.input(1), ctx.input(2)},
      {ctx.namedI64("axis", *axis),
       ctx.named("reduction", ScatterReductionAttr::get(ctx.context(), *reduction))}));
}

LogicalResult translateScatterND(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  FailureOr<ScatterReduction> reduction = scatterReduction(ctx);
  if (failed(reduction))
    return failure();
  return ctx.setResult(ctx.build<ScatterNdOp>(
      {ctx.input(0), ctx.input(1), ctx.input(2)},
      {ctx.named("reduction", ScatterReductionAttr::get(ctx.context(), *reduction))}));
}

/// Compress: a constant condition becomes a gather of the selected positions; without an axis
/// the input is flattened first.
/// The positions of the first `count` ones of `selected` (i64 0s and 1s, rank 1), ascending:
/// position j is the i where the running count of ones first reaches j + 1 (an [count, n]
/// comparison summed over n); 0 where there are fewer ones.
Value selectedPositions(Decomposition &d, Value selected, int64_t count) {
  NodeContext &ctx = d.context();
  if (!selected)
    return d.fail();
  Type i64 = ctx.builder().getI64Type();
  int64_t length = typeOf(selected).getDimSize(0);
  Value running = d.op<CumsumOp>({selected}, {ctx.namedI64("axis", 0)});
  SmallVector<int64_t> targets;
  for (int64_t j = 1; j <= count; ++j)
    targets.push_back(j);
  Value ramp = ctx.i64Vector(llvm::to_vector(llvm::seq<int64_t>(0, length)));
  Value first = d.op<AndOp>(
      {d.compare(ComparisonDirection::eq, d.reshape(running, {1, length}),
                 d.reshape(ctx.i64Vector(targets), {count, 1})),
       d.compare(ComparisonDirection::eq, d.reshape(selected, {1, length}), ctx.scalar(i64, 1))});
  return d.op<ReduceSumOp>({d.select(first, d.reshape(ramp, {1, length}), ctx.scalar(i64, 0))},
                           {ctx.namedArray("axes", {1})});
}

/// Compress whose condition is a value of the run: the declared number of selected positions
/// (selectedPositions), and a check that the condition selects exactly that many positions, all
/// inside the compressed dimension.
LogicalResult compressAtRunTime(NodeContext &ctx, Value input, int64_t axis) {
  RankedTensorType declared = declaredResultType(ctx, 0, 1, "condition");
  if (!declared)
    return failure();
  RankedTensorType type = typeOf(input);
  if (declared.getRank() != type.getRank() || type.isDynamicDim(axis) ||
      ctx.inputType(1).getRank() != 1 || ctx.inputType(1).isDynamicDim(0))
    return ctx.emitError() << "a condition of the run needs a static rank-1 condition and an "
                              "output declared with the input's rank";
  int64_t count = declared.getDimSize(axis), length = ctx.inputType(1).getDimSize(0);
  int64_t size = type.getDimSize(axis);
  Decomposition d(ctx);
  Type i64 = ctx.builder().getI64Type();
  Value selected = d.castTo(
      d.compare(ComparisonDirection::ne, ctx.input(1), ctx.scalar(elementTypeOf(ctx.input(1)), 0)),
      i64);
  Value positions = selectedPositions(d, selected, count);
  Value ramp = ctx.i64Vector(llvm::to_vector(llvm::seq<int64_t>(0, length)));
  Value total = d.op<ReduceSumOp>({selected}, {ctx.namedArray("axes", {0})});
  Value inside = allTrue(
      d, d.compare(ComparisonDirection::lt,
                   d.select(d.compare(ComparisonDirection::eq, selected, ctx.scalar(i64, 1)), ramp,
                            ctx.scalar(i64, 0)),
                   ctx.scalar(i64, static_cast<double>(size))));
  Value holds = d.op<AndOp>(
      {d.compare(ComparisonDirection::eq, total, ctx.scalar(i64, static_cast<double>(count))),
       inside});
  Value result = d.op<GatherOp>({input, positions}, {ctx.namedI64("axis", axis)});
  return finishChecked(d, result, holds,
                       "condition (input 1) does not select the declared " + std::to_string(count) +
                           " positions of dimension " + std::to_string(axis));
}

LogicalResult translateCompress(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  Value input = ctx.input(0);
  int64_t axis = 0;
  if (ctx.attribute("axis")) {
    FailureOr<int64_t> normalized =
        normalizeAxis(ctx, ctx.intAttr("axis", 0), typeOf(input).getRank());
    if (failed(normalized))
      return failure();
    axis = *normalized;
  } else {
    FailureOr<Value> flat = reshapeTo(ctx, input, {productOf(typeOf(input).getShape())});
    if (failed(flat))
      return failure();
    input = *flat;
  }
  if (!numbersKnown(ctx, 1))
    return compressAtRunTime(ctx, input, axis);
  FailureOr<SmallVector<double>> condition = constantNumbers(ctx, 1, "condition");
  if (failed(condition))
    return failure();
  int64_t size = typeOf(input).getDimSize(axis);
  SmallVector<int64_t> positions;
  for (auto [i, selected] : llvm::enumerate(*condition)) {
    if (selected == 0)
      continue;
    if (size != kDynamic && static_cast<int64_t>(i) >= size)
      return ctx.emitError() << "condition selects position " << i << " but the compressed "
                             << "dimension has size " << size;
    positions.push_back(static_cast<int64_t>(i));
  }
  return ctx.setResult(
      ctx.build<GatherOp>({input, ctx.i64Vector(positions)}, {ctx.namedI64("axis", axis)}));
}

/// ReverseSequence whose sequence lengths are known only at run time: the same gather, its
/// indices computed from the lengths (select(t < len[b], len[b] - 1 - t, t), each length held to
/// [0, steps] so that every index stays inside the time axis).
LogicalResult reverseSequenceAtRunTime(NodeContext &ctx, RankedTensorType type, int64_t batchAxis,
                                       int64_t timeAxis) {
  int64_t batch = type.getDimSize(batchAxis), steps = type.getDimSize(timeAxis);
  Value lengths = ctx.input(1);
  if (typeOf(lengths).getRank() != 1 || typeOf(lengths).getDimSize(0) != batch)
    return ctx.emitError() << "sequence_lens has type " << typeOf(lengths) << " for a batch of "
                           << batch;
  Decomposition d(ctx);
  Type i64 = ctx.builder().getI64Type();
  // [time, batch] or [batch, time] as the input's first two dimensions are.
  SmallVector<int64_t> batchShape = {1, 1};
  batchShape[batchAxis] = batch;
  Value time = indexRamp(ctx, 2, timeAxis, steps);
  Value length = d.reshape(d.castTo(lengths, i64), batchShape);
  length = d.op<MinOp>(
      {d.op<MaxOp>({length, ctx.scalar(i64, 0)}), ctx.scalar(i64, static_cast<double>(steps))});
  Value inside = d.compare(ComparisonDirection::lt, time, length);
  Value reversed = d.sub(d.sub(length, ctx.scalar(i64, 1)), time);
  Value source = d.select(inside, reversed, time);
  // Every inner position of a (time, batch) pair takes the same source step.
  SmallVector<int64_t> pairShape = {type.getDimSize(0), type.getDimSize(1)};
  pairShape.append(static_cast<size_t>(type.getRank() - 2), 1);
  Value indices =
      d.op<ExpandOp>({d.reshape(source, pairShape)}, {ctx.namedArray("shape", type.getShape())});
  return d.finish(
      d.op<GatherElementsOp>({ctx.input(0), indices}, {ctx.namedI64("axis", timeAxis)}));
}

/// ReverseSequence with a static input: a gather_elements along the time axis whose indices
/// reverse the first len[b] steps of each batch entry (constant with constant lengths).
LogicalResult translateReverseSequence(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  if (!type.hasStaticShape() || type.getRank() < 2)
    return ctx.emitError() << "input type " << type
                           << " must be static with rank 2 or more to build the reversal indices";
  int64_t batchAxis = ctx.intAttr("batch_axis", 1), timeAxis = ctx.intAttr("time_axis", 0);
  if (!((batchAxis == 0 && timeAxis == 1) || (batchAxis == 1 && timeAxis == 0)))
    return ctx.emitError() << "batch_axis " << batchAxis << " and time_axis " << timeAxis
                           << " must be 0 and 1 in some order";
  if (!ctx.constantInput(1))
    return reverseSequenceAtRunTime(ctx, type, batchAxis, timeAxis);
  FailureOr<SmallVector<int64_t>> lengths = ctx.constantInts(1, "sequence_lens");
  if (failed(lengths))
    return failure();
  int64_t batch = type.getDimSize(batchAxis), steps = type.getDimSize(timeAxis);
  if (static_cast<int64_t>(lengths->size()) != batch)
    return ctx.emitError() << "sequence_lens has " << lengths->size() << " entries for a batch of "
                           << batch;
  for (int64_t length : *lengths)
    if (length < 0 || length > steps)
      return ctx.emitError() << "sequence length " << length << " is outside [0, " << steps
                             << "]";
  ArrayRef<int64_t> shape = type.getShape();
  int64_t inner = productOf(shape.drop_front(2));
  SmallVector<int64_t> indices;
  indices.reserve(type.getNumElements());
  for (int64_t outer = 0; outer < shape[0] * shape[1]; ++outer) {
    int64_t first = outer / shape[1], second = outer % shape[1];
    int64_t b = batchAxis == 0 ? first : second, t = batchAxis == 0 ? second : first;
    int64_t length = (*lengths)[b];
    int64_t source = t < length ? length - 1 - t : t;
    indices.append(inner, source);
  }
  auto indexType = RankedTensorType::get(shape, ctx.builder().getI64Type());
  Value constantIndices = ctx.constant(DenseElementsAttr::get(indexType, ArrayRef(indices)));
  return ctx.setResult(ctx.build<GatherElementsOp>({ctx.input(0), constantIndices},
                                                   {ctx.namedI64("axis", timeAxis)}));
}

//===----------------------------------------------------------------------===//
// One-hot, triangles and constant generators
//===----------------------------------------------------------------------===//

/// OneHot: indices (negative ones wrapped by depth) compared with a constant ramp along the new
/// axis choose between the on and off values.
LogicalResult translateOneHot(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  RankedTensorType valuesType = ctx.inputType(2);
  if (valuesType.getRank() != 1 || valuesType.getDimSize(0) != 2)
    return ctx.emitError() << "values must be a rank-1 tensor of two elements [off, on], not "
                           << valuesType;
  int64_t rank = ctx.inputType(0).getRank() + 1;
  FailureOr<int64_t> axis = normalizeAxis(ctx, ctx.intAttr("axis", -1), rank);
  if (failed(axis))
    return failure();
  int64_t depth;
  if (numbersKnown(ctx, 1)) {
    FailureOr<SmallVector<double>> depthValues = constantNumbers(ctx, 1, "depth");
    if (failed(depthValues))
      return failure();
    if (depthValues->size() != 1 || (*depthValues)[0] < 1)
      return ctx.emitError() << "depth must hold one positive number";
    depth = static_cast<int64_t>((*depthValues)[0]);
  } else {
    // The depth of the run: the declared size along the new axis, checked.
    FailureOr<SmallVector<int64_t>> declaredDepth =
        intsKnownOrChecked(ctx, 1, "depth", 0, [&](RankedTensorType declared) {
          if (declared.getRank() != rank)
            return FailureOr<SmallVector<int64_t>>(ctx.emitError()
                                                   << "the output is declared with rank "
                                                   << declared.getRank() << ", not " << rank);
          return FailureOr<SmallVector<int64_t>>(SmallVector<int64_t>{declared.getDimSize(*axis)});
        });
    if (failed(declaredDepth))
      return failure();
    if (declaredDepth->size() != 1 || declaredDepth->front() < 1)
      return ctx.emitError() << "depth must hold one positive number";
    depth = declaredDepth->front();
  }

  Decomposition d(ctx);
  Type i64 = ctx.builder().getI64Type();
  Value indices = d.castTo(ctx.input(0), i64);
  Value negative = d.compare(ComparisonDirection::lt, indices, ctx.scalar(i64, 0));
  Value wrapped = d.select(negative, d.add(indices, ctx.scalar(i64, static_cast<double>(depth))),
                           indices);
  Value column = d.op<UnsqueezeOp>({wrapped}, {ctx.namedArray("axes", {*axis})});
  Value hot = d.compare(ComparisonDirection::eq, column, indexRamp(ctx, rank, *axis, depth));
  Value off = elementOf(d, ctx.input(2), 0);
  Value on = elementOf(d, ctx.input(2), 1);
  return d.finish(d.select(hot, on, off));
}

/// Trilu: keeps the upper (or lower) triangle of the last two dimensions, shifted by k, with a
/// select against a constant mask (k known at import time), or against a comparison of the
/// constant column-minus-row offsets with k (k a run-time value).
LogicalResult translateTrilu(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank();
  if (rank < 2)
    return ctx.emitError() << "input type " << type << " must have rank 2 or more";
  int64_t rows = type.getDimSize(rank - 2), columns = type.getDimSize(rank - 1);
  if (rows == kDynamic || columns == kDynamic)
    return ctx.emitError() << "the last two dimensions of input type " << type
                           << " must be static to build the triangle mask";
  int64_t k = 0;
  bool upper = ctx.intAttr("upper", 1) != 0;
  if (ctx.hasInput(1) && !ctx.constantInput(1)) {
    Decomposition d(ctx);
    Type i64 = ctx.builder().getI64Type();
    SmallVector<int64_t> offsets;
    for (int64_t i = 0; i < rows; ++i)
      for (int64_t j = 0; j < columns; ++j)
        offsets.push_back(j - i);
    Value offset = ctx.constant(DenseElementsAttr::get(RankedTensorType::get({rows, columns}, i64),
                                                       ArrayRef<int64_t>(offsets)));
    Value shift = runTimeScalarInt(d, 1, "k");
    Value kept =
        d.compare(upper ? ComparisonDirection::ge : ComparisonDirection::le, offset, shift);
    return d.finish(d.select(kept, ctx.input(0), ctx.scalar(type.getElementType(), 0)));
  }
  if (ctx.hasInput(1)) {
    FailureOr<int64_t> input = constantScalarInt(ctx, 1, "k");
    if (failed(input))
      return failure();
    k = *input;
  }
  SmallVector<bool> mask;
  for (int64_t i = 0; i < rows; ++i)
    for (int64_t j = 0; j < columns; ++j)
      mask.push_back(upper ? j - i >= k : j - i <= k);
  auto maskType = RankedTensorType::get({rows, columns}, ctx.builder().getI1Type());
  Value maskValue = ctx.constant(DenseElementsAttr::get(maskType, ArrayRef<bool>(mask)));
  Value zero = ctx.scalar(type.getElementType(), 0);
  return ctx.setResult(ctx.build<SelectOp>({maskValue, ctx.input(0), zero}));
}

/// Range whose start, limit or delta is a value of the run: the declared number of elements,
/// start + i * delta computed at run time, and a check that max(ceil((limit - start) / delta),
/// 0) (in f64) is that number.
LogicalResult translateRunTimeRange(NodeContext &ctx) {
  // The declared length, of the output or of what elementwise operators make of it (a window).
  std::optional<SmallVector<int64_t>> declared = ctx.shapeDeclaredDownstream(0);
  if (!declared || declared->size() != 1)
    return ctx.emitError() << "start, limit and delta are known only at run time and the model "
                              "declares no static length for the output; make them constants";
  for (int i = 0; i < 3; ++i)
    if (ctx.inputType(i).getNumElements() != 1)
      return ctx.emitError() << "input " << i << " must be a scalar";
  Decomposition d(ctx);
  Type element = ctx.inputType(0).getElementType();
  int64_t count = (*declared)[0];
  Value start = d.reshape(ctx.input(0), {});
  Value limit = d.reshape(ctx.input(1), {});
  Value delta = d.reshape(ctx.input(2), {});
  SmallVector<double> ramp;
  for (int64_t i = 0; i < count; ++i)
    ramp.push_back(static_cast<double>(i));
  Value steps = numbersConstant(ctx, RankedTensorType::get({count}, element), ramp);
  Value result = d.add(start, d.mul(steps, delta));
  Type f64 = ctx.builder().getF64Type();
  Value span = d.div(d.sub(d.castTo(limit, f64), d.castTo(start, f64)), d.castTo(delta, f64));
  Value length = d.op<MaxOp>({d.op<CeilOp>({span}), ctx.scalar(f64, 0)});
  Value holds =
      d.compare(ComparisonDirection::eq, length, ctx.scalar(f64, static_cast<double>(count)));
  return finishChecked(d, result, holds,
                       "start, limit and delta do not give the declared length " +
                           std::to_string(count));
}

/// Range to a dynamic dimension (positions up to the sequence length) with integral start and
/// positive delta known at import: start + iota(max(ceil((limit - start) / delta), 0)) * delta,
/// its length a size of the run. A null value (nothing reported) when the operands are not of
/// that form; failure (reported) when building it fails.
FailureOr<Value> rangeToDynamicDim(NodeContext &ctx) {
  if (!ctx.knownAtImport(1) || !numbersKnown(ctx, 0) || !numbersKnown(ctx, 2))
    return Value();
  FailureOr<SmallVector<NodeContext::ShapeEntry>> limit = ctx.shapeEntries(1, "limit");
  if (failed(limit) || limit->size() != 1 || !(*limit)[0].isDynamicDim())
    return Value();
  FailureOr<SmallVector<double>> start = constantNumbers(ctx, 0, "start");
  FailureOr<SmallVector<double>> delta = constantNumbers(ctx, 2, "delta");
  if (failed(start) || failed(delta) || start->size() != 1 || delta->size() != 1 ||
      (*start)[0] != std::floor((*start)[0]) || (*delta)[0] != std::floor((*delta)[0]) ||
      (*delta)[0] <= 0)
    return Value();
  OpBuilder &b = ctx.builder();
  Location loc = ctx.loc();
  int64_t first = static_cast<int64_t>((*start)[0]), step = static_cast<int64_t>((*delta)[0]);
  auto index = [&](int64_t v) { return arith::ConstantIndexOp::create(b, loc, v); };
  Value span = arith::SubIOp::create(b, loc, ctx.sizeOf((*limit)[0]), index(first));
  Value length = arith::MaxSIOp::create(
      b, loc, arith::CeilDivSIOp::create(b, loc, span, index(step)), index(0));
  Type element = ctx.inputType(0).getElementType();
  FailureOr<Value> result =
      ctx.build<IotaOp>({length}, {b.getNamedAttr("element_type", TypeAttr::get(element))});
  if (failed(result))
    return failure();
  Decomposition d(ctx);
  Value positions = *result;
  if (step != 1)
    positions = d.mul(positions, ctx.scalar(element, static_cast<double>(step)));
  if (first != 0)
    positions = d.add(positions, ctx.scalar(element, static_cast<double>(first)));
  if (d.failed())
    return failure();
  return positions;
}

/// Range with constant start, limit and delta folds to a constant.
LogicalResult translateRange(NodeContext &ctx) {
  if (failed(ctx.requireInputs(3)))
    return failure();
  FailureOr<Value> toDim = rangeToDynamicDim(ctx);
  if (failed(toDim))
    return failure();
  if (*toDim)
    return ctx.setResult(*toDim);
  if (!numbersKnown(ctx, 0) || !numbersKnown(ctx, 1) || !numbersKnown(ctx, 2))
    return translateRunTimeRange(ctx);
  double bounds[3];
  const char *names[3] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; ++i) {
    FailureOr<SmallVector<double>> value = constantNumbers(ctx, i, names[i]);
    if (failed(value))
      return failure();
    if (value->size() != 1)
      return ctx.emitError() << names[i] << " must be a scalar";
    bounds[i] = (*value)[0];
  }
  auto [start, limit, delta] = bounds;
  if (delta == 0)
    return ctx.emitError() << "delta is zero";
  Type elementType = ctx.inputType(0).getElementType();
  int64_t count =
      std::max<int64_t>(static_cast<int64_t>(std::ceil((limit - start) / delta)), 0);
  SmallVector<double> values;
  for (int64_t i = 0; i < count; ++i)
    values.push_back(start + static_cast<double>(i) * delta);
  return ctx.setResult(numbersConstant(ctx, RankedTensorType::get({count}, elementType), values));
}

/// EyeLike of a static matrix folds to a constant with ones on diagonal k.
LogicalResult translateEyeLike(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  if (type.getRank() != 2 || !type.hasStaticShape())
    return ctx.emitError() << "input type " << type << " must be a static matrix";
  Type elementType = type.getElementType();
  if (const onnx::AttributeProto *dtype = ctx.attribute("dtype")) {
    elementType = convertElementType(*ctx.context(), static_cast<int32_t>(dtype->i()));
    if (!elementType)
      return ctx.emitError() << "dtype " << dtype->i() << " has no graph-dialect element type";
  }
  int64_t k = ctx.intAttr("k", 0);
  SmallVector<double> values;
  for (int64_t i = 0; i < type.getDimSize(0); ++i)
    for (int64_t j = 0; j < type.getDimSize(1); ++j)
      values.push_back(j - i == k ? 1 : 0);
  return ctx.setResult(numbersConstant(ctx, type.clone(elementType), values));
}

/// NonZero of a value of the run: the declared count of non-zero elements, their flat positions
/// (selectedPositions) unravelled into one row of coordinates per dimension, and a check that
/// the input has exactly that many non-zero elements.
LogicalResult nonZeroAtRunTime(NodeContext &ctx) {
  RankedTensorType declared = declaredResultType(ctx, 0, 0, "the input");
  if (!declared)
    return failure();
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank();
  if (!type.hasStaticShape() || declared.getRank() != 2 || declared.getDimSize(0) != rank)
    return ctx.emitError() << "an input of the run needs a static shape (not " << type
                           << ") and an output declared as [" << rank << ", count]";
  int64_t count = declared.getDimSize(1), total = type.getNumElements();
  Decomposition d(ctx);
  Type i64 = ctx.builder().getI64Type();
  Value flat = d.reshape(ctx.input(0), {total});
  Value selected = d.castTo(
      d.compare(ComparisonDirection::ne, flat, ctx.scalar(elementTypeOf(ctx.input(0)), 0)), i64);
  Value positions = selectedPositions(d, selected, count);
  SmallVector<Value> rows;
  int64_t stride = total;
  for (int64_t dim : type.getShape()) {
    stride /= dim;
    Value coordinate = d.op<RemOp>({d.div(positions, ctx.scalar(i64, static_cast<double>(stride))),
                                    ctx.scalar(i64, static_cast<double>(dim))});
    rows.push_back(d.reshape(coordinate, {1, count}));
  }
  Value result = d.concat(rows, 0);
  Value holds = d.compare(ComparisonDirection::eq,
                          d.op<ReduceSumOp>({selected}, {ctx.namedArray("axes", {0})}),
                          ctx.scalar(i64, static_cast<double>(count)));
  return finishChecked(d, result, holds,
                       "the input does not have the declared " + std::to_string(count) +
                           " non-zero elements");
}

/// NonZero of a constant folds to the constant [rank, count] matrix of the non-zero positions.
LogicalResult translateNonZero(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  if (!numbersKnown(ctx, 0) && ctx.inputType(0).getRank() > 0)
    return nonZeroAtRunTime(ctx);
  FailureOr<SmallVector<double>> values = constantNumbers(ctx, 0, "the input");
  if (failed(values))
    return failure();
  ArrayRef<int64_t> shape = ctx.inputType(0).getShape();
  int64_t rank = static_cast<int64_t>(shape.size());
  SmallVector<SmallVector<int64_t>> coordinates(rank);
  for (auto [flat, value] : llvm::enumerate(*values)) {
    if (value == 0)
      continue;
    int64_t rest = static_cast<int64_t>(flat);
    for (int64_t d = rank - 1; d >= 0; --d) {
      coordinates[d].push_back(rest % shape[d]);
      rest /= shape[d];
    }
  }
  int64_t count = static_cast<int64_t>(rank ? coordinates[0].size() : (*values)[0] != 0);
  SmallVector<int64_t> flat;
  for (const SmallVector<int64_t> &row : coordinates)
    llvm::append_range(flat, row);
  auto type = RankedTensorType::get({rank, count}, ctx.builder().getI64Type());
  return ctx.setResult(ctx.constant(DenseElementsAttr::get(type, ArrayRef<int64_t>(flat))));
}

//===----------------------------------------------------------------------===//
// Rearrangements
//===----------------------------------------------------------------------===//

/// Tile with constant repeats: a new axis before each repeated dimension, expanded to the
/// repeat count and merged back with it.
LogicalResult translateTile(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  // Repeats of the run: the declared dimensions over the input's, checked.
  FailureOr<SmallVector<int64_t>> repeats =
      intsKnownOrChecked(ctx, 1, "repeats", 0, [&](RankedTensorType declared) {
        SmallVector<int64_t> derived;
        for (int64_t d = 0; d < type.getRank() && declared.getRank() == type.getRank(); ++d) {
          int64_t in = type.getDimSize(d), out = declared.getDimSize(d);
          if (in == kDynamic || in == 0 || out % in != 0)
            break;
          derived.push_back(out / in);
        }
        if (static_cast<int64_t>(derived.size()) != type.getRank())
          return FailureOr<SmallVector<int64_t>>(ctx.emitError()
                                                 << "no repeats turn input type " << type
                                                 << " into the declared output shape "
                                                 << formatShape(declared.getShape()));
        return FailureOr<SmallVector<int64_t>>(derived);
      });
  if (failed(repeats))
    return failure();
  if (static_cast<int64_t>(repeats->size()) != type.getRank())
    return ctx.emitError() << "repeats has " << repeats->size() << " entries for an input of rank "
                           << type.getRank();
  SmallVector<int64_t> axes, expanded, result;
  for (auto [dim, repeat] : llvm::zip_equal(type.getShape(), *repeats)) {
    if (repeat < 0)
      return ctx.emitError() << "repeats has the negative entry " << repeat;
    if (repeat != 1) {
      axes.push_back(static_cast<int64_t>(expanded.size()));
      expanded.push_back(repeat);
    }
    expanded.push_back(1);
    result.push_back(repeat == 0 ? 0 : dim == kDynamic ? kDynamic : dim * repeat);
  }
  if (axes.empty())
    return ctx.setResult(ctx.input(0));
  FailureOr<Value> unsqueezed =
      ctx.build<UnsqueezeOp>({ctx.input(0)}, {ctx.namedArray("axes", axes)});
  if (failed(unsqueezed))
    return failure();
  FailureOr<Value> broadcast =
      ctx.build<ExpandOp>({*unsqueezed}, {ctx.namedArray("shape", expanded)});
  if (failed(broadcast))
    return failure();
  return ctx.setResult(reshapeTo(ctx, *broadcast, result));
}

/// Reshapes to `split`, permutes by `permutation` and reshapes to `merged`.
FailureOr<Value> rearrange(NodeContext &ctx, Value input, ArrayRef<int64_t> split,
                           ArrayRef<int64_t> permutation, ArrayRef<int64_t> merged) {
  FailureOr<Value> reshaped = reshapeTo(ctx, input, split);
  if (failed(reshaped))
    return failure();
  FailureOr<Value> transposed = transposeBy(ctx, *reshaped, permutation);
  if (failed(transposed))
    return failure();
  return reshapeTo(ctx, *transposed, merged);
}

/// The NCHW input and blocksize of DepthToSpace/SpaceToDepth, checked.
FailureOr<std::pair<RankedTensorType, int64_t>> blockOperands(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  if (type.getRank() != 4) {
    ctx.emitError() << "input type " << type << " must have rank 4 (NCHW)";
    return failure();
  }
  if (!ctx.attribute("blocksize") || ctx.intAttr("blocksize", 0) < 1) {
    ctx.emitError() << "attribute 'blocksize' must be positive";
    return failure();
  }
  return std::make_pair(type, ctx.intAttr("blocksize", 1));
}

int64_t scaleDim(int64_t dim, int64_t factor) { return dim == kDynamic ? kDynamic : dim * factor; }

/// DepthToSpace: DCR (the default, and the only mode before opset 11) or CRD.
LogicalResult translateDepthToSpace(NodeContext &ctx) {
  FailureOr<std::pair<RankedTensorType, int64_t>> operands = blockOperands(ctx);
  if (failed(operands))
    return failure();
  auto [type, b] = *operands;
  int64_t n = type.getDimSize(0), c = type.getDimSize(1);
  int64_t h = type.getDimSize(2), w = type.getDimSize(3);
  if (c == kDynamic || c % (b * b) != 0)
    return ctx.emitError() << "channels of input type " << type
                           << " must be static and divisible by blocksize^2 = " << b * b;
  std::string mode = ctx.opset() >= 11 ? ctx.stringAttr("mode", "DCR") : "DCR";
  SmallVector<int64_t> merged{n, c / (b * b), scaleDim(h, b), scaleDim(w, b)};
  if (mode == "DCR")
    return ctx.setResult(
        rearrange(ctx, ctx.input(0), {n, b, b, c / (b * b), h, w}, {0, 3, 4, 1, 5, 2}, merged));
  if (mode == "CRD")
    return ctx.setResult(
        rearrange(ctx, ctx.input(0), {n, c / (b * b), b, b, h, w}, {0, 1, 4, 2, 5, 3}, merged));
  return ctx.emitError() << "mode '" << mode << "' is neither DCR nor CRD";
}

LogicalResult translateSpaceToDepth(NodeContext &ctx) {
  FailureOr<std::pair<RankedTensorType, int64_t>> operands = blockOperands(ctx);
  if (failed(operands))
    return failure();
  auto [type, b] = *operands;
  int64_t n = type.getDimSize(0), c = type.getDimSize(1);
  int64_t h = type.getDimSize(2), w = type.getDimSize(3);
  if (h == kDynamic || w == kDynamic || h % b != 0 || w % b != 0)
    return ctx.emitError() << "spatial dimensions of input type " << type
                           << " must be static and divisible by blocksize " << b;
  // The blocks go to the depth dimension as (row, column, channel) in DCR order, the only one
  // before opset 28, or (channel, row, column) in CRD order.
  std::string mode = ctx.opset() >= 28 ? ctx.stringAttr("mode", "DCR") : "DCR";
  SmallVector<int64_t> permutation;
  if (mode == "DCR")
    permutation = {0, 3, 5, 1, 2, 4};
  else if (mode == "CRD")
    permutation = {0, 1, 3, 5, 2, 4};
  else
    return ctx.emitError() << "mode '" << mode << "' is neither DCR nor CRD";
  return ctx.setResult(rearrange(ctx, ctx.input(0), {n, c, h / b, b, w / b, b}, permutation,
                                 {n, scaleDim(c, b * b), h / b, w / b}));
}

//===----------------------------------------------------------------------===//
// Einsum
//===----------------------------------------------------------------------===//

/// A subscript label: a letter's character code, or kEllipsisLabel + i for the i-th dimension
/// covered by "..." (counted over the widest ellipsis, so ellipses align at the right).
using Label = int;
constexpr Label kEllipsisLabel = 1000;

/// The parsed equation: each operand's labels and the output's.
struct EinsumSpec {
  SmallVector<SmallVector<Label>> operands;
  SmallVector<Label> output;
};

/// Parses `equation` for operands of `ranks`; on failure returns the reason.
FailureOr<EinsumSpec> parseEinsum(StringRef equation, ArrayRef<int64_t> ranks,
                                  std::string &reason) {
  std::string text;
  for (char c : equation)
    if (c != ' ')
      text.push_back(c);
  StringRef all(text);
  auto [inputs, output] = all.split("->");
  bool explicitOutput = all.contains("->");
  SmallVector<StringRef> terms;
  inputs.split(terms, ',');
  if (terms.size() != ranks.size()) {
    reason = "names " + std::to_string(terms.size()) + " operands for " +
             std::to_string(ranks.size()) + " inputs";
    return failure();
  }
  // Letters per term, and the number of dimensions each term's ellipsis covers.
  SmallVector<std::pair<std::string, std::string>> halves;
  int64_t widest = 0;
  SmallVector<int64_t> ellipsisDims;
  for (auto [term, rank] : llvm::zip_equal(terms, ranks)) {
    auto [before, after] = term.split("...");
    bool hasEllipsis = term.contains("...");
    int64_t letters = static_cast<int64_t>(before.size() + after.size());
    for (char c : before.str() + after.str())
      if (!std::isalpha(static_cast<unsigned char>(c))) {
        reason = std::string("has the subscript '") + c + "'";
        return failure();
      }
    if (hasEllipsis ? letters > rank : letters != rank) {
      reason = "term '" + term.str() + "' does not match an operand of rank " +
               std::to_string(rank);
      return failure();
    }
    halves.push_back({before.str(), after.str()});
    ellipsisDims.push_back(hasEllipsis ? rank - letters : 0);
    widest = std::max(widest, ellipsisDims.back());
  }
  EinsumSpec spec;
  std::map<Label, int> counts;
  for (auto [half, dims] : llvm::zip_equal(halves, ellipsisDims)) {
    SmallVector<Label> labels(half.first.begin(), half.first.end());
    for (int64_t i = widest - dims; i < widest; ++i)
      labels.push_back(kEllipsisLabel + static_cast<Label>(i));
    labels.append(half.second.begin(), half.second.end());
    for (Label label : labels)
      ++counts[label];
    spec.operands.push_back(labels);
  }
  if (explicitOutput) {
    auto [before, after] = output.split("...");
    spec.output.append(before.begin(), before.end());
    if (output.contains("..."))
      for (int64_t i = 0; i < widest; ++i)
        spec.output.push_back(kEllipsisLabel + static_cast<Label>(i));
    spec.output.append(after.begin(), after.end());
  } else {
    // Implicit output: the ellipsis dimensions, then the letters used once, alphabetically.
    for (auto [label, count] : counts)
      if (label >= kEllipsisLabel || count == 1)
        spec.output.push_back(label);
    std::stable_partition(spec.output.begin(), spec.output.end(),
                          [](Label label) { return label >= kEllipsisLabel; });
  }
  for (auto [i, label] : llvm::enumerate(spec.output)) {
    if (label < kEllipsisLabel && !std::isalpha(label)) {
      reason = "has an output subscript that is not a letter";
      return failure();
    }
    if (!counts.count(label) || llvm::is_contained(ArrayRef(spec.output).take_front(i), label)) {
      reason = "has an output subscript that is repeated or names no operand dimension";
      return failure();
    }
  }
  return spec;
}

/// Replaces each pair of dimensions of `value` that share a label (a diagonal, as in "ii->i")
/// by one: the elements off the diagonal are zeroed with a constant identity mask and the second
/// dimension is summed away. Updates `labels`.
FailureOr<Value> takeDiagonals(NodeContext &ctx, Value value, SmallVector<Label> &labels) {
  for (size_t second = 1; second < labels.size(); ++second) {
    auto repeated = llvm::find(ArrayRef(labels).take_front(second), labels[second]);
    if (repeated == labels.begin() + second)
      continue;
    int64_t first = repeated - labels.begin();
    RankedTensorType type = typeOf(value);
    int64_t size = type.getDimSize(first);
    if (size == kDynamic || size != type.getDimSize(second)) {
      ctx.emitError() << "the diagonal of dimensions " << first << " and " << second << " of "
                      << type << " needs them static and equal";
      return failure();
    }
    SmallVector<int64_t> maskShape(type.getRank(), 1);
    maskShape[first] = maskShape[second] = size;
    SmallVector<bool> identity;
    for (int64_t i = 0; i < size; ++i)
      for (int64_t j = 0; j < size; ++j)
        identity.push_back(i == j);
    auto maskType = RankedTensorType::get(maskShape, ctx.builder().getI1Type());
    Value mask = ctx.constant(DenseElementsAttr::get(maskType, ArrayRef<bool>(identity)));
    Value zero = ctx.scalar(type.getElementType(), 0);
    FailureOr<Value> onDiagonal = ctx.build<SelectOp>({mask, value, zero});
    if (failed(onDiagonal))
      return failure();
    FailureOr<Value> summed = ctx.build<ReduceSumOp>(
        {*onDiagonal}, {ctx.namedArray("axes", {static_cast<int64_t>(second)}),
                        namedBool(ctx, "keepdims", false)});
    if (failed(summed))
      return failure();
    value = *summed;
    labels.erase(labels.begin() + second);
    --second;
  }
  return value;
}

/// Sums `value` over the labels not in `keep`; updates `labels`.
FailureOr<Value> sumLabelsOutside(NodeContext &ctx, Value value, SmallVector<Label> &labels,
                                  ArrayRef<Label> keep) {
  SmallVector<int64_t> axes;
  SmallVector<Label> kept;
  for (auto [i, label] : llvm::enumerate(labels)) {
    if (llvm::is_contained(keep, label))
      kept.push_back(label);
    else
      axes.push_back(static_cast<int64_t>(i));
  }
  if (axes.empty())
    return value;
  labels = kept;
  return ctx.build<ReduceSumOp>(
      {value}, {ctx.namedArray("axes", axes), namedBool(ctx, "keepdims", false)});
}

/// The permutation taking `from` to the order `to`.
SmallVector<int64_t> permutationTo(ArrayRef<Label> from, ArrayRef<Label> to) {
  SmallVector<int64_t> permutation;
  for (Label label : to)
    permutation.push_back(llvm::find(from, label) - from.begin());
  return permutation;
}

/// Einsum with one operand (transposes and sums) or two (a batched matmul between transposes
/// and reshapes), after taking diagonals. Three or more operands are refused.
LogicalResult translateEinsum(NodeContext &ctx) {
  std::string equation = ctx.stringAttr("equation", "");
  int count = ctx.numInputs();
  if (count < 1 || failed(ctx.requireInputs(count)))
    return ctx.emitError() << "expects at least one input";
  if (count > 2)
    return ctx.emitError() << "equation '" << equation << "' has " << count
                           << " operands; only one or two are supported";
  SmallVector<int64_t> ranks;
  for (int i = 0; i < count; ++i)
    ranks.push_back(ctx.inputType(i).getRank());
  std::string reason;
  FailureOr<EinsumSpec> spec = parseEinsum(equation, ranks, reason);
  if (failed(spec))
    return ctx.emitError() << "equation '" << equation << "' " << reason
                           << "; it cannot be imported";
  ArrayRef<Label> output = spec->output;
  SmallVector<Value> operands;
  for (int i = 0; i < count; ++i) {
    FailureOr<Value> operand = takeDiagonals(ctx, ctx.input(i), spec->operands[i]);
    if (failed(operand))
      return failure();
    operands.push_back(*operand);
  }

  if (count == 1) {
    SmallVector<Label> labels = spec->operands[0];
    FailureOr<Value> summed = sumLabelsOutside(ctx, operands[0], labels, output);
    if (failed(summed))
      return failure();
    return ctx.setResult(transposeBy(ctx, *summed, permutationTo(labels, output)));
  }

  SmallVector<Label> lhsLabels = spec->operands[0], rhsLabels = spec->operands[1];
  // Labels in one operand only and not in the output are summed away first.
  SmallVector<Label> lhsKeep(output), rhsKeep(output);
  llvm::append_range(lhsKeep, rhsLabels);
  llvm::append_range(rhsKeep, lhsLabels);
  FailureOr<Value> lhs = sumLabelsOutside(ctx, operands[0], lhsLabels, lhsKeep);
  if (failed(lhs))
    return failure();
  FailureOr<Value> rhs = sumLabelsOutside(ctx, operands[1], rhsLabels, rhsKeep);
  if (failed(rhs))
    return failure();

  // Batch labels are in both operands and the output, contracted ones in both operands only;
  // the rest belong to one operand and the output.
  SmallVector<Label> batch, lhsFree, rhsFree, contracted;
  for (Label label : output) {
    bool inLhs = llvm::is_contained(lhsLabels, label), inRhs = llvm::is_contained(rhsLabels, label);
    if (inLhs && inRhs)
      batch.push_back(label);
    else if (inLhs)
      lhsFree.push_back(label);
    else
      rhsFree.push_back(label);
  }
  for (Label label : lhsLabels)
    if (llvm::is_contained(rhsLabels, label) && !llvm::is_contained(output, label))
      contracted.push_back(label);

  auto concat = [](std::initializer_list<ArrayRef<Label>> groups) {
    SmallVector<Label> all;
    for (ArrayRef<Label> group : groups)
      llvm::append_range(all, group);
    return all;
  };
  SmallVector<Label> lhsOrder = concat({batch, lhsFree, contracted});
  SmallVector<Label> rhsOrder = concat({batch, contracted, rhsFree});
  lhs = transposeBy(ctx, *lhs, permutationTo(lhsLabels, lhsOrder));
  if (failed(lhs))
    return failure();
  rhs = transposeBy(ctx, *rhs, permutationTo(rhsLabels, rhsOrder));
  if (failed(rhs))
    return failure();

  // Group each operand into batch dimensions and one matrix.
  size_t batchRank = batch.size();
  ArrayRef<int64_t> lhsShape = typeOf(*lhs).getShape(), rhsShape = typeOf(*rhs).getShape();
  ArrayRef<int64_t> lhsFreeDims = lhsShape.slice(batchRank, lhsFree.size());
  ArrayRef<int64_t> rhsFreeDims = rhsShape.drop_front(batchRank + contracted.size());
  SmallVector<int64_t> lhsMatrix(lhsShape.take_front(batchRank));
  lhsMatrix.append({productOf(lhsFreeDims), productOf(lhsShape.drop_front(batchRank +
                                                                           lhsFree.size()))});
  SmallVector<int64_t> rhsMatrix(rhsShape.take_front(batchRank));
  rhsMatrix.append({productOf(rhsShape.slice(batchRank, contracted.size())),
                    productOf(rhsFreeDims)});
  SmallVector<int64_t> freeDims(lhsFreeDims);
  llvm::append_range(freeDims, rhsFreeDims);
  lhs = reshapeTo(ctx, *lhs, lhsMatrix);
  if (failed(lhs))
    return failure();
  rhs = reshapeTo(ctx, *rhs, rhsMatrix);
  if (failed(rhs))
    return failure();
  FailureOr<Value> product = ctx.build<MatmulOp>({*lhs, *rhs});
  if (failed(product))
    return failure();
  SmallVector<int64_t> unfolded(typeOf(*product).getShape().take_front(batchRank));
  llvm::append_range(unfolded, freeDims);
  FailureOr<Value> result = reshapeTo(ctx, *product, unfolded);
  if (failed(result))
    return failure();
  return ctx.setResult(
      transposeBy(ctx, *result, permutationTo(concat({batch, lhsFree, rhsFree}), output)));
}

} // namespace

void registerIndexingOps(OpTable &table) {
  table.add("", "ArgMax", {1, 11, 12, 13}, translateArgReduce<ArgMaxOp>);
  table.add("", "ArgMin", {1, 11, 12, 13}, translateArgReduce<ArgMinOp>);
  table.add("", "CumSum", {11, 14}, translateCumulative<CumsumOp>);
  table.add("", "CumProd", 26, translateCumulative<CumprodOp>);
  table.add("", "TopK", {1, 10, 11}, translateTopK);
  table.add("", "Hardmax", {1, 11, 13}, translateHardmax);
  table.add("", "GatherElements", {11, 13}, translateGatherAlongAxis<GatherElementsOp>);
  table.add("", "GatherND", {11, 12, 13}, translateGatherND);
  table.add("", "Scatter", {9, 11}, translateScatterElements);
  table.add("", "ScatterElements", {11, 13, 16, 18}, translateScatterElements);
  table.add("", "ScatterND", {11, 13, 16, 18}, translateScatterND);
  table.add("", "Compress", {9, 11}, translateCompress);
  table.add("", "ReverseSequence", 10, translateReverseSequence);
  table.add("", "OneHot", {9, 11}, translateOneHot);
  table.add("", "Trilu", 14, translateTrilu);
  table.add("", "Range", 11, translateRange);
  table.add("", "EyeLike", 9, translateEyeLike);
  table.add("", "NonZero", {9, 13}, translateNonZero);
  table.add("", "Tile", {6, 13}, translateTile);
  // DepthToSpace-28 changed neither attributes nor types; SpaceToDepth-28 added `mode`.
  table.add("", "DepthToSpace", {1, 11, 13, 28}, translateDepthToSpace);
  table.add("", "SpaceToDepth", {1, 13, 28}, translateSpaceToDepth);
  table.add("", "Einsum", 12, translateEinsum);
}

} // namespace kiln::onnx_frontend
