//===- Shape.cpp - ONNX constants and data-movement operators ---------------===//
//
// Constant, ConstantOfShape, Shape and Size (folded to constants when the shape is static), and
// the operators that move data: Reshape, Transpose, Concat, Slice, Gather, Pad, CenterCropPad,
// Expand, Squeeze, Unsqueeze, Flatten and Split. Shape operands (Reshape's shape, Slice's
// bounds, ...) must be constants; the graph dialect carries them as normalized attributes.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/ops/OpTable.h"
#include "frontends/onnx/ops/RunTimeOperands.h"

#include "frontends/onnx/ModelLoader.h"

#include <algorithm>
#include <limits>

using namespace mlir;
using namespace kiln::graph;

namespace kiln::onnx_frontend {
namespace {

constexpr int64_t kUnboundedLimit = std::numeric_limits<int64_t>::max();
constexpr int64_t kDynamic = mlir::ShapedType::kDynamic;

std::string formatDims(ArrayRef<int64_t> dims) {
  std::string text = "[";
  for (size_t i = 0; i < dims.size(); ++i)
    text += (i ? ", " : "") + std::to_string(dims[i]);
  return text + "]";
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

LogicalResult translateConstant(NodeContext &ctx) {
  OpBuilder &b = ctx.builder();
  for (const onnx::AttributeProto &attribute : ctx.node().attribute()) {
    const std::string &name = attribute.name();
    if (name == "value") {
      const TensorView *view = ctx.model().findTensor(attribute.t());
      if (!view)
        return ctx.emitError() << "the tensor of attribute 'value' was not resolved";
      return ctx.setResult(ctx.tensorConstant(*view));
    }
    if (name == "value_float") {
      ctx.setOutput(0, ctx.scalar(b.getF32Type(), attribute.f()));
      return success();
    }
    if (name == "value_int") {
      ctx.setOutput(0, ctx.scalar(b.getI64Type(), static_cast<double>(attribute.i())));
      return success();
    }
    if (name == "value_ints") {
      SmallVector<int64_t> values(attribute.ints().begin(), attribute.ints().end());
      ctx.setOutput(0, ctx.i64Vector(values));
      return success();
    }
    if (name == "value_floats") {
      SmallVector<float> values(attribute.floats().begin(), attribute.floats().end());
      auto type = RankedTensorType::get({static_cast<int64_t>(values.size())}, b.getF32Type());
      ctx.setOutput(0, ctx.constant(DenseElementsAttr::get(type, ArrayRef<float>(values))));
      return success();
    }
    if (name == "sparse_value" || name == "value_string" || name == "value_strings")
      return ctx.emitError() << "attribute '" << name << "' is not supported";
  }
  return ctx.emitError() << "has no value attribute";
}

LogicalResult translateConstantOfShape(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  FailureOr<SmallVector<int64_t>> shape =
      intsKnownOrChecked(ctx, 0, "shape", 0, [](RankedTensorType declared) {
        return FailureOr<SmallVector<int64_t>>(llvm::to_vector(declared.getShape()));
      });
  if (failed(shape))
    return failure();
  if (llvm::any_of(*shape, [](int64_t d) { return d < 0; }))
    return ctx.emitError() << "shape " << formatDims(*shape) << " has a negative dimension";
  Attribute element = ctx.builder().getF32FloatAttr(0);
  Type elementType = ctx.builder().getF32Type();
  if (const onnx::AttributeProto *value = ctx.attribute("value")) {
    const TensorView *view = ctx.model().findTensor(value->t());
    if (!view || view->elementCount != 1)
      return ctx.emitError() << "attribute 'value' must hold one element";
    FailureOr<Value> scalar = ctx.tensorConstant(*view);
    if (failed(scalar))
      return failure();
    DenseElementsAttr elements = *NodeContext::constantElements(*scalar);
    element = *elements.getValues<Attribute>().begin();
    elementType = elements.getElementType();
    scalar->getDefiningOp()->erase();
  }
  auto type = RankedTensorType::get(*shape, elementType);
  ctx.setOutput(0, ctx.constant(DenseElementsAttr::get(type, element)));
  return success();
}

/// Shape (with opset 15's start and end) folds to a constant when the selected dimensions are
/// static.
LogicalResult translateShape(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank();
  auto clampIndex = [rank](int64_t index) {
    if (index < 0)
      index += rank;
    return std::clamp<int64_t>(index, 0, rank);
  };
  int64_t start = clampIndex(ctx.intAttr("start", 0));
  int64_t end = clampIndex(ctx.intAttr("end", rank));
  SmallVector<int64_t> dims;
  for (int64_t d = start; d < end; ++d) {
    if (type.isDynamicDim(d)) {
      // Shape arithmetic on dynamic dimensions is resolved where it is consumed (a Reshape
      // target that copies them); the importer reports the placeholder if anything else uses it.
      ctx.setOutput(0, ctx.dynamicShapeOf(ctx.input(0), start, std::max(start, end)));
      return success();
    }
    dims.push_back(type.getDimSize(d));
  }
  ctx.setOutput(0, ctx.i64Vector(dims));
  return success();
}

LogicalResult translateSize(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  if (!type.hasStaticShape())
    return ctx.emitError() << "input type " << type
                           << " is dynamic, so the size cannot be folded";
  ctx.setOutput(0, ctx.scalar(ctx.builder().getI64Type(),
                              static_cast<double>(type.getNumElements())));
  return success();
}

//===----------------------------------------------------------------------===//
// Reshaping
//===----------------------------------------------------------------------===//

/// Reshape whose shape is a value of the run: the declared shape, checked entry by entry (a
/// number equal to it, 0 copying an equal input dimension unless allowzero, at most one -1).
LogicalResult translateRunTimeReshape(NodeContext &ctx, bool allowZero) {
  RankedTensorType declared = declaredResultType(ctx, 0, 1, "shape");
  if (!declared)
    return failure();
  Decomposition d(ctx);
  Value shape = runTimeVector(d, 1, "shape");
  if (!shape)
    return failure();
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = declared.getRank();
  if (runTimeLength(ctx, 1) != rank)
    return ctx.emitError() << "shape (input 1) has " << runTimeLength(ctx, 1)
                           << " entries; the declared output shape "
                           << formatShape(declared.getShape()) << " has " << rank;
  // Where a 0 entry copies the input dimension and gives the declared one.
  SmallVector<int64_t> zeroCopies(rank, 0);
  for (int64_t i = 0; i < rank; ++i)
    zeroCopies[i] = !allowZero && i < type.getRank() && !type.isDynamicDim(i) &&
                    type.getDimSize(i) == declared.getDimSize(i);
  Type i64 = ctx.builder().getI64Type();
  Value exact = d.compare(ComparisonDirection::eq, shape, ctx.i64Vector(declared.getShape()));
  Value inferred = d.compare(ComparisonDirection::eq, shape, ctx.scalar(i64, -1));
  Value copied = d.op<AndOp>(
      {d.compare(ComparisonDirection::eq, shape, ctx.scalar(i64, 0)),
       d.compare(ComparisonDirection::eq, ctx.i64Vector(zeroCopies), ctx.scalar(i64, 1))});
  Value entriesHold = allTrue(d, d.op<OrOp>({d.op<OrOp>({exact, inferred}), copied}));
  Value oneInferred =
      d.compare(ComparisonDirection::le,
                d.op<ReduceSumOp>({d.castTo(inferred, i64)}, {ctx.namedArray("axes", {0})}),
                ctx.scalar(i64, 1));
  Value holds = d.op<AndOp>({entriesHold, oneInferred});
  Value result = d.reshape(ctx.input(0), declared.getShape());
  return finishChecked(d, result, holds,
                       "shape (input 1) does not give the declared output shape " +
                           formatShape(declared.getShape()));
}

/// Refuses `entry` of `what` when it is arithmetic on a dynamic dimension that may be negative
/// at run time (`batch - 2`), which Reshape, Expand and Slice would read as inferred or counted
/// from the end.
LogicalResult refuseNegativeSize(NodeContext &ctx, const NodeContext::ShapeEntry &entry,
                                 const llvm::Twine &what) {
  if (!entry.isDynamicDim() || entry.neverNegative())
    return success();
  return ctx.emitError() << what << " is arithmetic on dynamic dimension " << entry.dim
                         << " of a value of type " << entry.source.getType()
                         << " that may be negative at run time; bind the graph inputs' shapes "
                         << "with --shape";
}

/// Reshape. Each target entry is a number, -1, 0 (copy the input dimension at that position,
/// unless allowzero from opset 14) or, from Shape arithmetic, a dynamic dimension of the input or
/// of another value. With one unknown entry graph.reshape infers it from the element count (the
/// -1 is resolved here when every dynamic input dimension is carried over as itself: the dynamic
/// factors then cancel out); with several, each dynamic dimension becomes a size of the run
/// (graph.dim) and a -1 is what the element count leaves. A shape of the run goes to
/// translateRunTimeReshape.
LogicalResult translateReshape(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  bool allowZero = ctx.opset() >= 14 && ctx.intAttr("allowzero", 0) != 0;
  if (!ctx.knownAtImport(1))
    return translateRunTimeReshape(ctx, allowZero);
  FailureOr<SmallVector<NodeContext::ShapeEntry>> entries = ctx.shapeEntries(1, "shape");
  if (failed(entries))
    return failure();
  Value input = ctx.input(0);
  RankedTensorType type = ctx.inputType(0);
  SmallVector<int64_t> target, requested;
  // The input dimension each target entry carries over, or -1.
  SmallVector<int64_t> carried;
  std::optional<size_t> inferred;
  // A dynamic dimension of another value that provably is one of the input's (both read at the
  // same graph input dimension: the batch of the hidden state, reshaping the attention's
  // projection) is carried over from the input.
  for (NodeContext::ShapeEntry &entry : *entries) {
    if (!entry.isPlainDim() || entry.source == input)
      continue;
    std::optional<std::pair<Value, int64_t>> root =
        NodeContext::dimRoot(entry.source, entry.dim, /*farthest=*/true);
    for (int64_t d = 0; root && d < type.getRank(); ++d)
      if (type.isDynamicDim(d) && NodeContext::dimRoot(input, d, /*farthest=*/true) == root) {
        entry.source = input;
        entry.dim = d;
        break;
      }
  }
  // A size of the run other than one of the input's own dimensions.
  auto foreign = [&](const NodeContext::ShapeEntry &entry) {
    return entry.isDynamicDim() && (!entry.isPlainDim() || entry.source != input);
  };
  for (auto [i, entry] : llvm::enumerate(*entries)) {
    int64_t source = -1;
    int64_t size = entry.value;
    if (failed(refuseNegativeSize(ctx, entry, "shape entry " + llvm::Twine(i))))
      return failure();
    if (foreign(entry)) {
      // A dynamic dimension of another value (the batch of the tokens, reshaping the
      // attention's heads), or arithmetic on one (Swin's windows per image), is the one the
      // element count leaves: it is inferred, as a -1 is. Beside another unknown entry it is a
      // size of the run (graph.dim, below).
      if (!inferred && llvm::none_of(*entries, [&](const NodeContext::ShapeEntry &other) {
            return &other != &entry && (other.value == -1 || foreign(other));
          }))
        inferred = i;
      size = -1;
    } else if (entry.isDynamicDim()) {
      source = entry.dim;
    } else if (size == 0 && !allowZero) {
      if (static_cast<int64_t>(i) >= type.getRank())
        return ctx.emitError() << "shape entry " << i << " is 0 (copy the input dimension) but "
                               << "the input has rank " << type.getRank();
      source = static_cast<int64_t>(i);
    } else if (size == -1) {
      if (inferred)
        return ctx.emitError() << "shape has more than one -1";
      inferred = i;
    } else if (size < 0) {
      return ctx.emitError() << "shape entry " << i << " is " << size;
    }
    requested.push_back(entry.isDynamicDim() ? -1 : size);
    if (source >= 0)
      size = type.isDynamicDim(source) ? -1 : type.getDimSize(source);
    target.push_back(size);
    carried.push_back(source >= 0 && type.isDynamicDim(source) ? source : -1);
  }
  int unknown = llvm::count(target, -1);
  if (unknown > 1 && inferred) {
    // Every dynamic input dimension must be carried over exactly once for the factors to cancel.
    SmallVector<int64_t> dynamicDims, carriedDims;
    for (int64_t d = 0; d < type.getRank(); ++d)
      if (type.isDynamicDim(d))
        dynamicDims.push_back(d);
    for (int64_t d : carried)
      if (d >= 0)
        carriedDims.push_back(d);
    llvm::sort(carriedDims);
    if (carriedDims == dynamicDims) {
      int64_t inputProduct = 1, targetProduct = 1;
      for (int64_t d = 0; d < type.getRank(); ++d)
        if (!type.isDynamicDim(d))
          inputProduct *= type.getDimSize(d);
      for (auto [i, size] : llvm::enumerate(target))
        if (carried[i] < 0 && i != *inferred)
          targetProduct *= size;
      if (targetProduct != 0 && inputProduct % targetProduct == 0) {
        target[*inferred] = inputProduct / targetProduct;
        --unknown;
      }
    }
  }
  if (unknown > 1) {
    // Several dynamic dimensions: each takes its size of the run from the dimension the shape
    // arithmetic read (graph.dim), a -1 whatever the element count leaves.
    SmallVector<Value> operands{input};
    SmallVector<int64_t> shape;
    for (auto [i, entry] : llvm::enumerate(*entries)) {
      if (entry.isDynamicDim()) {
        operands.push_back(ctx.sizeOf(entry));
        shape.push_back(kDynamic);
      } else if (carried[i] >= 0) {
        operands.push_back(ctx.sizeOf({0, input, carried[i]}));
        shape.push_back(kDynamic);
      } else {
        shape.push_back(target[i]);
      }
    }
    if (llvm::count(shape, int64_t(-1)) > 1)
      return ctx.emitError() << "shape " << formatDims(requested) << " of input type " << type
                             << " leaves " << llvm::count(shape, int64_t(-1))
                             << " dimensions unknown";
    return ctx.setResult(ctx.build<ReshapeOp>(operands, {ctx.namedArray("shape", shape)}));
  }
  return ctx.setResult(ctx.build<ReshapeOp>({input}, {ctx.namedArray("shape", target)}));
}

LogicalResult translateFlatten(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  int64_t rank = ctx.inputType(0).getRank();
  int64_t axis = ctx.intAttr("axis", 1);
  if (axis < -rank || axis > rank)
    return ctx.emitError() << "axis " << axis << " is outside [" << -rank << ", " << rank << "]";
  if (axis < 0)
    axis += rank;
  return ctx.setResult(ctx.build<FlattenOp>({ctx.input(0)}, {ctx.namedI64("axis", axis)}));
}

/// Squeeze/Unsqueeze axes: an attribute before opset 13, an input from 13 on.
FailureOr<std::optional<SmallVector<int64_t>>> squeezeAxes(NodeContext &ctx) {
  if (ctx.opset() < 13)
    return ctx.intsAttr("axes");
  if (!ctx.hasInput(1))
    return std::optional<SmallVector<int64_t>>();
  FailureOr<SmallVector<int64_t>> axes = ctx.constantInts(1, "axes");
  if (failed(axes))
    return failure();
  return std::optional<SmallVector<int64_t>>(*axes);
}

/// Squeeze (`squeeze`) or Unsqueeze whose axes are a value of the run: a reshape to the
/// declared shape, checked to be what the axes give (the positions they name, among `rank`,
/// form one of the masks that turn the input's shape into the declared one).
LogicalResult translateRunTimeSqueeze(NodeContext &ctx, bool squeeze) {
  RankedTensorType declared = declaredResultType(ctx, 0, 1, "axes");
  if (!declared)
    return failure();
  RankedTensorType type = ctx.inputType(0);
  if (!type.hasStaticShape())
    return ctx.emitError() << "axes (input 1) is known only at run time and input type " << type
                           << " is not static; bind the graph inputs' shapes with --shape";
  Decomposition d(ctx);
  Value axes = runTimeVector(d, 1, "axes");
  if (!axes)
    return failure();
  ArrayRef<int64_t> wide = squeeze ? type.getShape() : declared.getShape();
  ArrayRef<int64_t> narrow = squeeze ? declared.getShape() : type.getShape();
  int64_t rank = static_cast<int64_t>(wide.size());
  auto candidates =
      masksOf(ctx, "axes (input 1)", rank, runTimeLength(ctx, 1), [&](ArrayRef<int64_t> mask) {
        SmallVector<int64_t> kept;
        for (int64_t p = 0; p < rank; ++p) {
          if (!mask[p])
            kept.push_back(wide[p]);
          else if (wide[p] != 1)
            return false;
        }
        return ArrayRef<int64_t>(kept) == narrow;
      });
  Value mask = axesMask(d, axes, rank);
  Value result = d.reshape(ctx.input(0), declared.getShape());
  if (failed(candidates) || d.failed() ||
      failed(checkMaskIsOneOf(d, mask, *candidates, "axes (input 1)", declared)))
    return failure();
  return d.finish(result);
}

LogicalResult translateSqueeze(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  if (ctx.opset() >= 13 && ctx.hasInput(1) && !ctx.knownAtImport(1))
    return translateRunTimeSqueeze(ctx, /*squeeze=*/true);
  RankedTensorType type = ctx.inputType(0);
  FailureOr<std::optional<SmallVector<int64_t>>> axes = squeezeAxes(ctx);
  if (failed(axes))
    return failure();
  SmallVector<int64_t> normalized;
  if (*axes) {
    FailureOr<SmallVector<int64_t>> checked = normalizeAxes(ctx, **axes, type.getRank());
    if (failed(checked))
      return failure();
    normalized = *checked;
  } else {
    // Without axes every dimension of size 1 goes, which must then be known.
    for (int64_t d = 0; d < type.getRank(); ++d) {
      if (type.isDynamicDim(d))
        return ctx.emitError() << "has no axes and input type " << type
                               << " has a dynamic dimension that may or may not be 1";
      if (type.getDimSize(d) == 1)
        normalized.push_back(d);
    }
  }
  return ctx.setResult(ctx.build<SqueezeOp>({ctx.input(0)}, {ctx.namedArray("axes", normalized)}));
}

LogicalResult translateUnsqueeze(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  if (ctx.opset() >= 13 && ctx.hasInput(1) && !ctx.knownAtImport(1))
    return translateRunTimeSqueeze(ctx, /*squeeze=*/false);
  FailureOr<std::optional<SmallVector<int64_t>>> axes = squeezeAxes(ctx);
  if (failed(axes))
    return failure();
  if (!*axes)
    return ctx.emitError() << "requires axes";
  int64_t rank = ctx.inputType(0).getRank() + static_cast<int64_t>((*axes)->size());
  FailureOr<SmallVector<int64_t>> normalized = normalizeAxes(ctx, **axes, rank);
  if (failed(normalized))
    return failure();
  return ctx.setResult(
      ctx.build<UnsqueezeOp>({ctx.input(0)}, {ctx.namedArray("axes", *normalized)}));
}

/// Expand whose shape is a value of the run: broadcast to the declared shape, checked entry by
/// entry (the declared dimension, or 1 where the input's dimension already is the declared one).
LogicalResult translateRunTimeExpand(NodeContext &ctx) {
  RankedTensorType declared = declaredResultType(ctx, 0, 1, "shape");
  if (!declared)
    return failure();
  RankedTensorType type = ctx.inputType(0);
  int64_t length = runTimeLength(ctx, 1), rank = declared.getRank();
  if (!type.hasStaticShape() || rank != std::max(type.getRank(), length))
    return ctx.emitError() << "shape (input 1) of " << length << " entries cannot expand " << type
                           << " to the declared output shape " << formatShape(declared.getShape());
  // The input's dimension at each output position (1 where it has none).
  auto inputDim = [&](int64_t p) {
    int64_t d = p - (rank - type.getRank());
    return d < 0 ? 1 : type.getDimSize(d);
  };
  SmallVector<int64_t> keeps;
  for (int64_t p = 0; p < rank; ++p) {
    if (inputDim(p) != 1 && inputDim(p) != declared.getDimSize(p))
      return ctx.emitError() << "input type " << type << " does not broadcast to the declared "
                             << "output shape " << formatShape(declared.getShape());
    if (p >= rank - length)
      keeps.push_back(inputDim(p) == declared.getDimSize(p));
    else if (inputDim(p) != declared.getDimSize(p))
      return ctx.emitError() << "shape (input 1) of " << length << " entries cannot expand " << type
                             << " to the declared output shape "
                             << formatShape(declared.getShape());
  }
  Decomposition d(ctx);
  Type i64 = ctx.builder().getI64Type();
  Value shape = runTimeVector(d, 1, "shape");
  if (!shape)
    return failure();
  ArrayRef<int64_t> covered = declared.getShape().take_back(length);
  Value exact = d.compare(ComparisonDirection::eq, shape, ctx.i64Vector(covered));
  Value one =
      d.op<AndOp>({d.compare(ComparisonDirection::eq, shape, ctx.scalar(i64, 1)),
                   d.compare(ComparisonDirection::eq, ctx.i64Vector(keeps), ctx.scalar(i64, 1))});
  Value holds = allTrue(d, d.op<OrOp>({exact, one}));
  Value result = d.op<ExpandOp>({ctx.input(0)}, {ctx.namedArray("shape", declared.getShape())});
  return finishChecked(d, result, holds,
                       "shape (input 1) does not expand the input to the declared "
                       "output shape " +
                           formatShape(declared.getShape()));
}

LogicalResult translateExpand(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  if (!ctx.knownAtImport(1))
    return translateRunTimeExpand(ctx);
  FailureOr<SmallVector<NodeContext::ShapeEntry>> entries = ctx.shapeEntries(1, "shape");
  if (failed(entries))
    return failure();
  // A dynamic dimension of a value (the batch a class token is expanded to) is a size of the
  // run; one the input has at the same position is its own.
  RankedTensorType type = ctx.inputType(0);
  int64_t offset = static_cast<int64_t>(entries->size()) - type.getRank();
  SmallVector<Value> operands{ctx.input(0)};
  SmallVector<int64_t> shape;
  for (auto [i, entry] : llvm::enumerate(*entries)) {
    int64_t aligned = static_cast<int64_t>(i) - offset;
    if (failed(refuseNegativeSize(ctx, entry, "shape entry " + llvm::Twine(i))))
      return failure();
    if (!entry.isDynamicDim()) {
      shape.push_back(entry.value);
    } else if (aligned >= 0 && type.isDynamicDim(aligned)) {
      shape.push_back(1);
    } else {
      operands.push_back(ctx.sizeOf(entry));
      shape.push_back(kDynamic);
    }
  }
  return ctx.setResult(ctx.build<ExpandOp>(operands, {ctx.namedArray("shape", shape)}));
}

LogicalResult translateTranspose(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  int64_t rank = ctx.inputType(0).getRank();
  SmallVector<int64_t> permutation;
  if (std::optional<SmallVector<int64_t>> perm = ctx.intsAttr("perm")) {
    permutation = *perm;
  } else {
    for (int64_t d = rank - 1; d >= 0; --d)
      permutation.push_back(d);
  }
  return ctx.setResult(
      ctx.build<TransposeOp>({ctx.input(0)}, {ctx.namedArray("permutation", permutation)}));
}

//===----------------------------------------------------------------------===//
// Joining, splitting and indexing
//===----------------------------------------------------------------------===//

LogicalResult translateConcat(NodeContext &ctx) {
  if (ctx.numInputs() < 1 || failed(ctx.requireInputs(ctx.numInputs())))
    return ctx.emitError() << "expects at least one input";
  if (!ctx.attribute("axis"))
    return ctx.emitError() << "attribute 'axis' is required";
  FailureOr<int64_t> axis =
      normalizeAxis(ctx, ctx.intAttr("axis", 0), ctx.inputType(0).getRank());
  if (failed(axis))
    return failure();
  SmallVector<Value> inputs;
  for (int i = 0; i < ctx.numInputs(); ++i)
    inputs.push_back(ctx.input(i));
  return ctx.setResult(ctx.build<ConcatOp>(inputs, {ctx.namedI64("axis", *axis)}));
}

LogicalResult translateSplit(NodeContext &ctx) {
  if (failed(ctx.requireInputs(1)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  FailureOr<int64_t> axis = normalizeAxis(ctx, ctx.intAttr("axis", 0), type.getRank());
  if (failed(axis))
    return failure();
  SmallVector<int64_t> sizes;
  if (ctx.opset() < 13) {
    if (std::optional<SmallVector<int64_t>> split = ctx.intsAttr("split"))
      sizes = *split;
  } else if (ctx.hasInput(1) && !ctx.knownAtImport(1)) {
    // Split sizes of the run: the declared outputs' sizes along the axis, checked.
    for (int i = 0; i < ctx.numOutputs(); ++i) {
      RankedTensorType declared = declaredResultType(ctx, i, 1, "split");
      if (!declared)
        return failure();
      if (declared.getRank() != type.getRank())
        return ctx.emitError() << "output " << i << " is declared with rank " << declared.getRank()
                               << "; the input has " << type.getRank();
      sizes.push_back(declared.getDimSize(*axis));
    }
    Decomposition d(ctx);
    Value split = runTimeVector(d, 1, "split");
    if (!split)
      return failure();
    if (runTimeLength(ctx, 1) != static_cast<int64_t>(sizes.size()))
      return ctx.emitError() << "split (input 1) has " << runTimeLength(ctx, 1) << " entries for "
                             << sizes.size() << " outputs";
    Value holds = equalsConstant(d, split, sizes);
    if (d.failed() || failed(ctx.addCheck(
                          holds, "split (input 1) differs from the declared outputs' sizes " +
                                     formatShape(sizes) + " along axis " + std::to_string(*axis))))
      return failure();
  } else if (ctx.hasInput(1)) {
    FailureOr<SmallVector<int64_t>> split = ctx.constantInts(1, "split");
    if (failed(split))
      return failure();
    sizes = *split;
  }
  if (sizes.empty()) {
    int64_t pieces = ctx.opset() >= 18 && ctx.attribute("num_outputs")
                         ? ctx.intAttr("num_outputs", 1)
                         : ctx.numOutputs();
    int64_t dim = type.getDimSize(*axis);
    if (type.isDynamicDim(*axis))
      return ctx.emitError() << "splitting dynamic dimension " << *axis
                             << " into equal parts needs its size (bind it with --shape)";
    if (pieces < 1)
      return ctx.emitError() << "cannot split into " << pieces << " pieces";
    if (ctx.opset() < 18 && dim % pieces != 0)
      return ctx.emitError() << "dimension " << *axis << " of size " << dim
                             << " does not split into " << pieces << " equal parts";
    // From opset 18 every piece but the last has ceil(dim / pieces) elements.
    int64_t piece = (dim + pieces - 1) / pieces;
    for (int64_t i = 0, left = dim; i < pieces; ++i, left -= piece)
      sizes.push_back(std::max<int64_t>(0, std::min(piece, left)));
  }
  if (static_cast<int64_t>(sizes.size()) != ctx.numOutputs())
    return ctx.emitError() << "splits into " << sizes.size() << " pieces but has "
                           << ctx.numOutputs() << " outputs";
  FailureOr<SplitOp> split = ctx.create<SplitOp>(
      {ctx.input(0)}, {ctx.namedI64("axis", *axis), ctx.namedArray("sizes", sizes)});
  if (failed(split))
    return failure();
  for (int i = 0; i < ctx.numOutputs(); ++i)
    ctx.setOutput(i, split->getResult(i));
  return success();
}

/// Slice: bounds are attributes before opset 10 and constant inputs from 10 on. Negative and
/// out-of-range bounds are normalized against static dimensions as the spec clamps them; a
/// dynamic dimension accepts non-negative bounds with a positive step (the limit is clamped at run
/// time).
/// Slice whose starts, ends, axes or steps are values of the run: the declared shape, each
/// dimension gathered at start + step * i. The run's bounds are resolved for every dimension at
/// once ([axes, rank] comparisons; a dimension no axis names keeps [0, dim) by 1) and clamped
/// as the spec clamps them, and a check verifies that they give the declared sizes (each
/// dimension named at most once, no zero step).
LogicalResult translateRunTimeSlice(NodeContext &ctx) {
  RankedTensorType declared = declaredResultType(ctx, 0, 1, "starts");
  if (!declared)
    return failure();
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank();
  if (!type.hasStaticShape() || declared.getRank() != rank)
    return ctx.emitError() << "bounds known only at run time need a static input (not " << type
                           << ") and an output declared with its rank";
  int64_t count = runTimeLength(ctx, 1);
  for (int index = 2; index <= 4; ++index)
    if (ctx.hasInput(index) && runTimeLength(ctx, index) != count)
      return ctx.emitError() << "input " << index << " has " << runTimeLength(ctx, index)
                             << " entries; starts has " << count;
  Decomposition d(ctx);
  Type i64 = ctx.builder().getI64Type();
  auto vector = [&](int index, StringRef what, int64_t fill) -> Value {
    if (ctx.hasInput(index))
      return runTimeVector(d, index, what);
    SmallVector<int64_t> values;
    for (int64_t i = 0; i < count; ++i)
      values.push_back(fill < 0 ? i : fill);
    return ctx.i64Vector(values);
  };
  Value starts = vector(1, "starts", 0), ends = vector(2, "ends", 0);
  Value axes = vector(3, "axes", -1), steps = vector(4, "steps", 1);
  if (d.failed())
    return failure();
  auto scalar = [&](int64_t value) { return ctx.scalar(i64, static_cast<double>(value)); };
  auto column = [&](Value v) { return d.reshape(v, {count, 1}); };
  // names[j][p]: whether axis j names dimension p.
  Value normalized = d.select(d.compare(ComparisonDirection::lt, axes, scalar(0)),
                              d.add(axes, scalar(rank)), axes);
  Value positions =
      d.reshape(ctx.i64Vector(llvm::to_vector(llvm::seq<int64_t>(0, rank))), {1, rank});
  Value names = d.compare(ComparisonDirection::eq, column(normalized), positions);
  auto picked = [&](Value values) {
    return d.op<ReduceSumOp>({d.select(names, column(values), scalar(0))},
                             {ctx.namedArray("axes", {0})});
  };
  Value namings = d.op<ReduceSumOp>({d.castTo(names, i64)}, {ctx.namedArray("axes", {0})});
  Value named = d.compare(ComparisonDirection::gt, namings, scalar(0));
  Value dims = ctx.i64Vector(type.getShape());
  SmallVector<int64_t> lastShape;
  for (int64_t dim : type.getShape())
    lastShape.push_back(dim - 1);
  Value last = ctx.i64Vector(lastShape);
  Value step = d.select(named, picked(steps), scalar(1));
  Value start = d.select(named, picked(starts), scalar(0));
  Value end = d.select(named, picked(ends), dims);
  Value forward = d.compare(ComparisonDirection::gt, step, scalar(0));
  auto wrap = [&](Value v) {
    return d.select(d.compare(ComparisonDirection::lt, v, scalar(0)), d.add(v, dims), v);
  };
  auto clamp = [&](Value v, Value low, Value high) {
    return d.op<MinOp>({d.op<MaxOp>({v, low}), high});
  };
  start =
      d.select(forward, clamp(wrap(start), scalar(0), dims), clamp(wrap(start), scalar(0), last));
  end = d.select(forward, clamp(wrap(end), scalar(0), dims), clamp(wrap(end), scalar(-1), last));
  // max(0, ceil(distance / |step|)) along the step's direction.
  Value distance = d.select(forward, d.sub(end, start), d.sub(start, end));
  Value magnitude = d.select(forward, step, d.op<NegOp>({step}));
  Value safe = d.op<MaxOp>({magnitude, scalar(1)});
  Value sizes = d.op<MaxOp>({d.div(d.add(distance, d.sub(safe, scalar(1))), safe), scalar(0)});
  Value holds =
      d.op<AndOp>({equalsConstant(d, sizes, declared.getShape()),
                   d.op<AndOp>({allTrue(d, d.compare(ComparisonDirection::le, namings, scalar(1))),
                                allTrue(d, d.compare(ComparisonDirection::ne, step, scalar(0)))})});
  // Each dimension gathered at start + step * i, i < the declared size.
  Value result = ctx.input(0);
  for (int64_t p = 0; p < rank; ++p) {
    int64_t size = declared.getDimSize(p);
    Value ramp = ctx.i64Vector(llvm::to_vector(llvm::seq<int64_t>(0, size)));
    Value indices = d.add(elementOf(d, start, p), d.mul(elementOf(d, step, p), ramp));
    result = d.op<GatherOp>({result, indices}, {ctx.namedI64("axis", p)});
  }
  return finishChecked(d, result, holds,
                       "starts, ends, axes and steps do not give the declared output "
                       "shape " +
                           formatShape(declared.getShape()));
}

LogicalResult translateSlice(NodeContext &ctx) {
  if (failed(ctx.requireInputs(ctx.opset() < 10 ? 1 : 3)))
    return failure();
  if (ctx.opset() >= 10 &&
      (!ctx.knownAtImport(1) || !ctx.knownAtImport(2) ||
       (ctx.hasInput(3) && !ctx.knownAtImport(3)) || (ctx.hasInput(4) && !ctx.knownAtImport(4))))
    return translateRunTimeSlice(ctx);
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank();
  SmallVector<int64_t> starts, ends, axes, steps;
  SmallVector<Value> dynamicEnds;
  if (ctx.opset() < 10) {
    std::optional<SmallVector<int64_t>> s = ctx.intsAttr("starts"), e = ctx.intsAttr("ends");
    if (!s || !e)
      return ctx.emitError() << "attributes 'starts' and 'ends' are required";
    starts = *s;
    ends = *e;
    if (std::optional<SmallVector<int64_t>> a = ctx.intsAttr("axes"))
      axes = *a;
  } else {
    FailureOr<SmallVector<int64_t>> s = ctx.constantInts(1, "starts");
    if (failed(s))
      return failure();
    FailureOr<SmallVector<NodeContext::ShapeEntry>> e = ctx.shapeEntries(2, "ends");
    if (failed(e))
      return failure();
    starts = *s;
    // An end that is a dynamic dimension (a causal mask cut to the sequence), or arithmetic on
    // one that is never negative, is a limit of the run.
    for (const NodeContext::ShapeEntry &entry : *e) {
      if (failed(refuseNegativeSize(ctx, entry, "an end (input 2)")))
        return failure();
      ends.push_back(entry.isDynamicDim() ? kDynamic : entry.value);
      dynamicEnds.push_back(entry.isDynamicDim() ? ctx.sizeOf(entry) : Value());
    }
    if (ctx.hasInput(3)) {
      FailureOr<SmallVector<int64_t>> a = ctx.constantInts(3, "axes");
      if (failed(a))
        return failure();
      axes = *a;
    }
    if (ctx.hasInput(4)) {
      FailureOr<SmallVector<int64_t>> st = ctx.constantInts(4, "steps");
      if (failed(st))
        return failure();
      steps = *st;
    }
  }
  if (axes.empty())
    for (size_t i = 0; i < starts.size(); ++i)
      axes.push_back(static_cast<int64_t>(i));
  if (steps.empty())
    steps.assign(starts.size(), 1);
  if (ends.size() != starts.size() || axes.size() != starts.size() ||
      steps.size() != starts.size())
    return ctx.emitError() << "starts, ends, axes and steps differ in length";

  SmallVector<int64_t> outStarts(rank, 0), outLimits, outStrides(rank, 1);
  for (int64_t d = 0; d < rank; ++d)
    outLimits.push_back(type.isDynamicDim(d) ? kUnboundedLimit : type.getDimSize(d));
  SmallVector<bool> seen(rank, false);
  SmallVector<Value> limitOfAxis(rank);
  for (size_t i = 0; i < starts.size(); ++i) {
    FailureOr<int64_t> axis = normalizeAxis(ctx, axes[i], rank);
    if (failed(axis))
      return failure();
    if (seen[*axis])
      return ctx.emitError() << "axes repeat axis " << *axis;
    seen[*axis] = true;
    int64_t start = starts[i], end = ends[i], step = steps[i];
    if (step == 0)
      return ctx.emitError() << "step of axis " << *axis << " is zero";
    if (!dynamicEnds.empty() && dynamicEnds[i]) {
      int64_t dim = type.getDimSize(*axis);
      if (step < 0 || (type.isDynamicDim(*axis) && start < 0))
        return ctx.emitError() << "axis " << *axis << " ends at a dynamic dimension, so its step "
                               << step << " must be positive and its start " << start
                               << " not negative (bind the inputs' shapes with --shape)";
      if (!type.isDynamicDim(*axis))
        start = std::clamp<int64_t>(start < 0 ? start + dim : start, 0, dim);
      outStarts[*axis] = start;
      outLimits[*axis] = kDynamic;
      outStrides[*axis] = step;
      limitOfAxis[*axis] = dynamicEnds[i];
      continue;
    }
    if (type.isDynamicDim(*axis)) {
      if (step < 0 || start < 0 || end < 0)
        return ctx.emitError() << "dimension " << *axis << " is dynamic, so slice [" << start
                               << ", " << end << ") step " << step
                               << " cannot be normalized (bind it with --shape)";
      outStarts[*axis] = start;
      outLimits[*axis] = std::max(start, end);
      outStrides[*axis] = step;
      continue;
    }
    int64_t dim = type.getDimSize(*axis);
    if (start < 0)
      start = start < -dim ? 0 : start + dim;
    if (end < 0)
      end = end < std::numeric_limits<int64_t>::min() + dim ? -1 : end + dim;
    if (step > 0 || dim == 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      end = std::max(start, end);
      step = std::abs(step);
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      end = std::min(start, end);
    }
    outStarts[*axis] = start;
    outLimits[*axis] = end;
    outStrides[*axis] = step;
  }
  SmallVector<Value> operands{ctx.input(0)};
  for (Value limit : limitOfAxis)
    if (limit)
      operands.push_back(limit);
  return ctx.setResult(ctx.build<SliceOp>(operands, {ctx.namedArray("starts", outStarts),
                                                     ctx.namedArray("limits", outLimits),
                                                     ctx.namedArray("strides", outStrides)}));
}

/// Pad: pads and value are attributes before opset 11, inputs from 11 on; opset 18 adds axes.
/// Pad whose pads are a value of the run (opset 11 on; constant, edge and reflect): the declared
/// shape, each padded axis gathered at i - pad_begin (clamped for edge, mirrored for reflect;
/// outside the input the constant, for constant). A check verifies that each axis's pads add up
/// to the declared growth (and, for reflect, that each is smaller than the dimension).
LogicalResult translateRunTimePad(NodeContext &ctx, PadMode mode, ArrayRef<int64_t> axes) {
  RankedTensorType declared = declaredResultType(ctx, 0, 1, "pads");
  if (!declared)
    return failure();
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank(), count = static_cast<int64_t>(axes.size());
  if (!type.hasStaticShape() || declared.getRank() != rank)
    return ctx.emitError() << "pads known only at run time need a static input (not " << type
                           << ") and an output declared with its rank";
  if (runTimeLength(ctx, 1) != 2 * count)
    return ctx.emitError() << "pads (input 1) has " << runTimeLength(ctx, 1)
                           << " entries, expected " << 2 * count;
  for (int64_t p = 0; p < rank; ++p)
    if (!llvm::is_contained(axes, p) && declared.getDimSize(p) != type.getDimSize(p))
      return ctx.emitError() << "dimension " << p << " is not padded but declared as "
                             << declared.getDimSize(p);
  Decomposition d(ctx);
  Type i64 = ctx.builder().getI64Type();
  auto scalar = [&](int64_t value) { return ctx.scalar(i64, static_cast<double>(value)); };
  Value pads = runTimeVector(d, 1, "pads");
  if (!pads)
    return failure();
  Value fill = ctx.scalar(type.getElementType(), 0);
  if (mode == PadMode::constant && ctx.hasInput(2)) {
    if (ctx.inputType(2).getNumElements() != 1)
      return ctx.emitError() << "constant_value must hold one element";
    fill = d.reshape(ctx.input(2), {});
  }
  Value holds;
  Value result = ctx.input(0);
  for (auto [i, axis] : llvm::enumerate(axes)) {
    int64_t in = type.getDimSize(axis), out = declared.getDimSize(axis);
    Value begin = elementOf(d, pads, static_cast<int64_t>(i));
    Value end = elementOf(d, pads, static_cast<int64_t>(i) + count);
    Value axisHolds = d.compare(ComparisonDirection::eq, d.add(begin, end), scalar(out - in));
    Value source = d.sub(ctx.i64Vector(llvm::to_vector(llvm::seq<int64_t>(0, out))), begin);
    Value inside;
    if (mode == PadMode::reflect) {
      // One mirror at each edge: pads must be smaller than the dimension.
      axisHolds = d.op<AndOp>(
          {axisHolds, d.op<AndOp>({d.compare(ComparisonDirection::lt, begin, scalar(in)),
                                   d.compare(ComparisonDirection::lt, end, scalar(in))})});
      source = d.op<AbsOp>({source});
      source = d.select(d.compare(ComparisonDirection::ge, source, scalar(in)),
                        d.sub(scalar(2 * (in - 1)), source), source);
    } else if (mode == PadMode::constant) {
      inside = d.op<AndOp>({d.compare(ComparisonDirection::ge, source, scalar(0)),
                            d.compare(ComparisonDirection::lt, source, scalar(in))});
    }
    result = d.op<GatherOp>({result, clampIndex(d, source, in)}, {ctx.namedI64("axis", axis)});
    if (inside) {
      SmallVector<int64_t> along(rank, 1);
      along[axis] = out;
      result = d.select(d.reshape(inside, along), result, fill);
    }
    holds = holds ? d.op<AndOp>({holds, axisHolds}) : axisHolds;
  }
  if (!holds)
    return ctx.emitError() << "has no axis to pad";
  return finishChecked(d, result, holds,
                       "pads (input 1) do not give the declared output shape " +
                           formatShape(declared.getShape()));
}

LogicalResult translatePad(NodeContext &ctx) {
  if (failed(ctx.requireInputs(ctx.opset() < 11 ? 1 : 2)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank();
  std::string modeName = ctx.stringAttr("mode", "constant");
  PadMode mode;
  if (modeName == "constant")
    mode = PadMode::constant;
  else if (modeName == "reflect")
    mode = PadMode::reflect;
  else if (modeName == "edge")
    mode = PadMode::edge;
  else if (modeName == "wrap" && ctx.opset() >= 19)
    mode = PadMode::constant; // wrap is built below from gathers
  else
    return ctx.emitError() << "mode '" << modeName << "' is not supported";
  bool wrap = modeName == "wrap";
  SmallVector<int64_t> axes;
  if (ctx.opset() >= 18 && ctx.hasInput(3)) {
    FailureOr<SmallVector<int64_t>> input = ctx.constantInts(3, "axes");
    if (failed(input))
      return failure();
    for (int64_t axis : *input) {
      FailureOr<int64_t> normalized = normalizeAxis(ctx, axis, rank);
      if (failed(normalized))
        return failure();
      axes.push_back(*normalized);
    }
  } else {
    for (int64_t d = 0; d < rank; ++d)
      axes.push_back(d);
  }

  SmallVector<int64_t> pads;
  Value value;
  if (ctx.opset() < 11) {
    std::optional<SmallVector<int64_t>> attr = ctx.intsAttr(ctx.opset() < 2 ? "paddings" : "pads");
    if (!attr)
      return ctx.emitError() << "attribute 'pads' is required";
    pads = *attr;
    float constant = ctx.floatAttr("value", 0.0f);
    if (mode == PadMode::constant && constant != 0.0f)
      value = ctx.scalar(type.getElementType(), constant);
  } else if (!ctx.knownAtImport(1)) {
    if (wrap)
      return ctx.emitError() << "mode 'wrap' needs pads (input 1) known at import time";
    return translateRunTimePad(ctx, mode, axes);
  } else {
    FailureOr<SmallVector<int64_t>> input = ctx.constantInts(1, "pads");
    if (failed(input))
      return failure();
    pads = *input;
    if (mode == PadMode::constant && ctx.hasInput(2)) {
      value = ctx.input(2);
      RankedTensorType valueType = ctx.inputType(2);
      if (valueType.getRank() != 0) {
        if (valueType.getNumElements() != 1)
          return ctx.emitError() << "constant_value must hold one element";
        FailureOr<Value> reshaped =
            ctx.build<ReshapeOp>({value}, {ctx.namedArray("shape", {})});
        if (failed(reshaped))
          return failure();
        value = *reshaped;
      }
    }
  }
  int64_t count = static_cast<int64_t>(axes.size());
  if (static_cast<int64_t>(pads.size()) != 2 * count)
    return ctx.emitError() << "pads has " << pads.size() << " entries, expected " << 2 * count;
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  for (int64_t i = 0; i < count; ++i) {
    low[axes[i]] = pads[i];
    high[axes[i]] = pads[i + count];
  }
  if (wrap) {
    // Circular padding: along each padded axis, output i reads input (i - low) mod n, which
    // wraps as often as the pads ask (and crops for negative pads): one gather per axis.
    Value result = ctx.input(0);
    for (int64_t axis = 0; axis < rank; ++axis) {
      if (low[axis] == 0 && high[axis] == 0)
        continue;
      int64_t n = type.getDimSize(axis);
      if (ShapedType::isDynamic(n) || n == 0)
        return ctx.emitError() << "wrap padding needs a static, non-empty dimension " << axis
                               << "; the input is " << type;
      int64_t length = n + low[axis] + high[axis];
      if (length < 0)
        return ctx.emitError() << "pads remove more than dimension " << axis << " holds";
      SmallVector<int64_t> indices;
      for (int64_t i = 0; i < length; ++i)
        indices.push_back((((i - low[axis]) % n) + n) % n);
      auto indexType = RankedTensorType::get({length}, ctx.builder().getI64Type());
      Value constant = ctx.constant(DenseElementsAttr::get(indexType, ArrayRef(indices)));
      FailureOr<Value> gathered =
          ctx.build<GatherOp>({result, constant}, {ctx.namedI64("axis", axis)});
      if (failed(gathered))
        return failure();
      result = *gathered;
    }
    return ctx.setResult(result);
  }
  SmallVector<Value> operands{ctx.input(0)};
  if (value)
    operands.push_back(value);
  return ctx.setResult(
      ctx.build<PadOp>(operands, {ctx.namedArray("pad_low", low), ctx.namedArray("pad_high", high),
                                  ctx.named("mode", PadModeAttr::get(ctx.context(), mode))}));
}

/// CenterCropPad (opset 18) to a constant shape along `axes` (every axis by default): one
/// graph.pad whose amounts are negative where the dimension shrinks. A dimension growing by d
/// gets floor(d / 2) zeros before it, one shrinking by d loses floor(d / 2) elements from its
/// start, as the reference does; the dimensions changed must be static.
LogicalResult translateCenterCropPad(NodeContext &ctx) {
  if (failed(ctx.requireInputs(2)))
    return failure();
  RankedTensorType type = ctx.inputType(0);
  int64_t rank = type.getRank();
  FailureOr<SmallVector<int64_t>> shape = ctx.constantInts(1, "shape");
  if (failed(shape))
    return failure();
  SmallVector<int64_t> axes = allAxes(rank);
  if (std::optional<SmallVector<int64_t>> given = ctx.intsAttr("axes")) {
    axes.clear();
    for (int64_t axis : *given) {
      FailureOr<int64_t> normalized = normalizeAxis(ctx, axis, rank, "axes");
      if (failed(normalized))
        return failure();
      if (llvm::is_contained(axes, *normalized))
        return ctx.emitError() << "axes repeats axis " << *normalized;
      axes.push_back(*normalized);
    }
  }
  if (shape->size() != axes.size())
    return ctx.emitError() << "shape has " << shape->size() << " entries for " << axes.size()
                           << " axes";
  SmallVector<int64_t> low(rank, 0), high(rank, 0);
  for (auto [axis, target] : llvm::zip(axes, *shape)) {
    int64_t dim = type.getDimSize(axis);
    if (target < 0)
      return ctx.emitError() << "shape entries must be non-negative, got " << target;
    if (dim == ShapedType::kDynamic)
      return ctx.emitError() << "dimension " << axis << " of " << type
                             << " is dynamic; bind its shape with --shape";
    int64_t change = target - dim;
    low[axis] = change >= 0 ? change / 2 : -(-change / 2);
    high[axis] = change - low[axis];
  }
  Decomposition d(ctx);
  return d.finish(d.op<PadOp>({ctx.input(0)},
                              {ctx.namedArray("pad_low", low), ctx.namedArray("pad_high", high)}));
}

} // namespace

void registerShapeOps(OpTable &table) {
  table.add("", "Constant", {1, 9, 11, 12, 13, 19, 21}, translateConstant);
  table.add("", "ConstantOfShape", {9, 20, 21}, translateConstantOfShape);
  table.add("", "Shape", {1, 13, 15, 19, 21}, translateShape);
  table.add("", "Size", {1, 13, 19, 21}, translateSize);
  table.add("", "Reshape", {5, 13, 14, 19, 21}, translateReshape);
  table.add("", "Flatten", {1, 9, 11, 13, 21}, translateFlatten);
  table.add("", "Squeeze", {1, 11, 13, 21}, translateSqueeze);
  table.add("", "Unsqueeze", {1, 11, 13, 21}, translateUnsqueeze);
  table.add("", "Expand", {8, 13}, translateExpand);
  table.add("", "Transpose", {1, 13, 21}, translateTranspose);
  table.add("", "Concat", {4, 11, 13}, translateConcat);
  table.add("", "Split", {2, 11, 13, 18}, translateSplit);
  table.add("", "Gather", {1, 11, 13}, translateGatherAlongAxis<GatherOp>);
  table.add("", "Slice", {1, 10, 11, 13}, translateSlice);
  table.add("", "Pad", {2, 11, 13, 18, 19, 21}, translatePad);
  table.add("", "CenterCropPad", 18, translateCenterCropPad);
}

} // namespace kiln::onnx_frontend
