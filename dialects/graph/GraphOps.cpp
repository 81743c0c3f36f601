//===- GraphOps.cpp - Result-type inference and verification of graph ops ---===//
//
// Every op infers its result types here. Inference is also the verifier: an op whose operands and
// attributes admit no result type is reported with the reason, and the types written in the IR are
// checked against the inferred ones (see areRefinableTypes).
//
//===----------------------------------------------------------------------===//

#include "dialects/graph/GraphOps.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/OpImplementation.h"
#include "mlir/IR/TypeUtilities.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallSet.h"

using namespace mlir;
using namespace kiln::graph;

#include "dialects/graph/GraphEnums.cpp.inc"

namespace {

/// Reports that `OpTy` admits no result type, when a location is known.
template <typename OpTy, typename... Args>
LogicalResult failInference(std::optional<Location> loc, Args &&...args) {
  return emitOptionalError(loc, "'", OpTy::getOperationName(), "' op ",
                           std::forward<Args>(args)...);
}

/// Formats an attribute's integer list as "[4, -1]", for diagnostics.
std::string formatList(ArrayRef<int64_t> values) {
  std::string text = "[";
  llvm::raw_string_ostream os(text);
  llvm::interleaveComma(values, os);
  os << "]";
  return text;
}

RankedTensorType rankedType(Value value) {
  return value ? llvm::dyn_cast<RankedTensorType>(value.getType()) : RankedTensorType();
}

/// Checks that every entry of `values` lies in [0, bound) and, when `strictlyIncreasing`, that
/// they are sorted without repeats. `what` names the attribute in the message.
template <typename OpTy>
LogicalResult checkAxes(std::optional<Location> loc, ArrayRef<int64_t> values, int64_t bound,
                        StringRef what, bool strictlyIncreasing = true) {
  for (size_t i = 0; i < values.size(); ++i) {
    if (values[i] < 0 || values[i] >= bound)
      return failInference<OpTy>(loc, what, " entry ", values[i], " is outside [0, ", bound, ")");
    if (strictlyIncreasing && i > 0 && values[i] <= values[i - 1])
      return failInference<OpTy>(loc, what, " must be sorted and unique");
  }
  return success();
}

template <typename OpTy>
LogicalResult checkLength(std::optional<Location> loc, ArrayRef<int64_t> values, size_t expected,
                          StringRef what) {
  if (values.size() != expected)
    return failInference<OpTy>(loc, what, " has ", values.size(), " entries, expected ", expected);
  return success();
}

/// Broadcasts the shapes of all `operands` into one.
template <typename OpTy>
FailureOr<SmallVector<int64_t>> broadcastOperands(std::optional<Location> loc,
                                                  ValueRange operands) {
  SmallVector<int64_t> shape;
  for (Value operand : operands) {
    RankedTensorType type = rankedType(operand);
    if (!type)
      return failInference<OpTy>(loc, "expects ranked tensor operands");
    std::optional<SmallVector<int64_t>> next = broadcastShapes(shape, type.getShape());
    if (!next)
      return failInference<OpTy>(loc, "operand shapes [", formatShape(shape), "] and [",
                                 formatShape(type.getShape()), "] do not broadcast");
    shape = std::move(*next);
  }
  return shape;
}

/// The size of one output dimension of a windowed op (convolution or pooling), or kDynamic.
int64_t windowOutputSize(int64_t input, int64_t kernel, int64_t stride, int64_t dilation,
                         int64_t padLow, int64_t padHigh, bool ceilMode) {
  if (input == kDynamic || kernel == kDynamic)
    return kDynamic;
  int64_t span = dilation * (kernel - 1) + 1;
  int64_t padded = input + padLow + padHigh - span;
  if (padded < 0)
    return -1;
  int64_t size = (ceilMode ? (padded + stride - 1) / stride : padded / stride) + 1;
  // The last window must start inside the input or the low padding.
  if (ceilMode && (size - 1) * stride >= input + padLow)
    --size;
  return size;
}

/// Shared checks and shape rule of convolution and window pooling: `kernel` holds the spatial
/// kernel sizes (possibly dynamic), the attribute arrays one entry per spatial dimension.
template <typename OpTy>
FailureOr<SmallVector<int64_t>>
inferWindowedShape(std::optional<Location> loc, RankedTensorType input, ArrayRef<int64_t> kernel,
                   ArrayRef<int64_t> strides, ArrayRef<int64_t> dilations,
                   ArrayRef<int64_t> padLow, ArrayRef<int64_t> padHigh, bool ceilMode) {
  int64_t rank = input.getRank();
  if (rank < 3 || rank > 5)
    return failInference<OpTy>(loc, "expects an input of rank 3 to 5 (N x C x 1-3 spatial dims), got ",
                               rank);
  size_t spatial = rank - 2;
  if (failed(checkLength<OpTy>(loc, strides, spatial, "strides")) ||
      failed(checkLength<OpTy>(loc, dilations, spatial, "dilations")) ||
      failed(checkLength<OpTy>(loc, padLow, spatial, "pad_low")) ||
      failed(checkLength<OpTy>(loc, padHigh, spatial, "pad_high")))
    return failure();
  SmallVector<int64_t> shape(input.getShape().take_front(2));
  for (size_t i = 0; i < spatial; ++i) {
    if (strides[i] < 1 || dilations[i] < 1)
      return failInference<OpTy>(loc, "strides and dilations must be positive");
    if (padLow[i] < 0 || padHigh[i] < 0)
      return failInference<OpTy>(loc, "padding must be non-negative");
    int64_t size = windowOutputSize(input.getDimSize(i + 2), kernel[i], strides[i], dilations[i],
                                    padLow[i], padHigh[i], ceilMode);
    if (size != kDynamic && size < 1)
      return failInference<OpTy>(loc, "spatial dimension ", i, " of size ",
                                 input.getDimSize(i + 2), " is smaller than its window");
    shape.push_back(size);
  }
  return shape;
}

} // namespace

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

LogicalResult ConstantOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                           Adaptor adaptor, SmallVectorImpl<Type> &types) {
  auto type = llvm::dyn_cast_if_present<RankedTensorType>(adaptor.getValue().getType());
  if (!type)
    return failInference<ConstantOp>(loc, "value must be a ranked tensor");
  types.push_back(type);
  return success();
}

//===----------------------------------------------------------------------===//
// Elementwise
//===----------------------------------------------------------------------===//


#define KILN_INFER_BROADCAST_BINARY(OP)                                                           \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> loc, Adaptor adaptor, \
                                     SmallVectorImpl<Type> &types) {                             \
    FailureOr<SmallVector<int64_t>> shape =                                                       \
        broadcastOperands<OP>(loc, {adaptor.getLhs(), adaptor.getRhs()});                         \
    if (failed(shape))                                                                            \
      return failure();                                                                           \
    types.push_back(RankedTensorType::get(*shape, rankedType(adaptor.getLhs()).getElementType())); \
    return success();                                                                             \
  }
KILN_INFER_BROADCAST_BINARY(AddOp)
KILN_INFER_BROADCAST_BINARY(AndOp)
KILN_INFER_BROADCAST_BINARY(DivOp)
KILN_INFER_BROADCAST_BINARY(MaxOp)
KILN_INFER_BROADCAST_BINARY(MinOp)
KILN_INFER_BROADCAST_BINARY(MulOp)
KILN_INFER_BROADCAST_BINARY(OrOp)
KILN_INFER_BROADCAST_BINARY(PowOp)
KILN_INFER_BROADCAST_BINARY(RemOp)
KILN_INFER_BROADCAST_BINARY(ShiftLeftOp)
KILN_INFER_BROADCAST_BINARY(ShiftRightOp)
KILN_INFER_BROADCAST_BINARY(SubOp)
KILN_INFER_BROADCAST_BINARY(XorOp)
#undef KILN_INFER_BROADCAST_BINARY

LogicalResult IsInfOp::inferReturnTypes(MLIRContext *context, std::optional<Location>,
                                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  types.push_back(rankedType(adaptor.getInput()).clone(IntegerType::get(context, 1)));
  return success();
}

LogicalResult IsNanOp::inferReturnTypes(MLIRContext *context, std::optional<Location>,
                                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  types.push_back(rankedType(adaptor.getInput()).clone(IntegerType::get(context, 1)));
  return success();
}

LogicalResult CompareOp::inferReturnTypes(MLIRContext *context, std::optional<Location> loc,
                                          Adaptor adaptor, SmallVectorImpl<Type> &types) {
  FailureOr<SmallVector<int64_t>> shape =
      broadcastOperands<CompareOp>(loc, {adaptor.getLhs(), adaptor.getRhs()});
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(*shape, IntegerType::get(context, 1)));
  return success();
}

LogicalResult SelectOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  FailureOr<SmallVector<int64_t>> shape = broadcastOperands<SelectOp>(
      loc, {adaptor.getCondition(), adaptor.getOnTrue(), adaptor.getOnFalse()});
  if (failed(shape))
    return failure();
  types.push_back(RankedTensorType::get(*shape, rankedType(adaptor.getOnTrue()).getElementType()));
  return success();
}

LogicalResult CastOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  if (!input)
    return failInference<CastOp>(loc, "expects a ranked tensor operand");
  types.push_back(input.clone(adaptor.getTo()));
  return success();
}

LogicalResult BitcastOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  if (!input)
    return failInference<BitcastOp>(loc, "expects a ranked tensor operand");
  // i1 is stored as a byte.
  auto storageBits = [](Type type) {
    unsigned bits = type.getIntOrFloatBitWidth();
    return bits == 1 ? 8u : bits;
  };
  Type from = input.getElementType(), to = adaptor.getTo();
  if (!from.isIntOrFloat() || !to.isIntOrFloat() || storageBits(from) != storageBits(to) ||
      (to.isInteger(1) && !from.isInteger(1)))
    return failInference<BitcastOp>(loc,
                                    "reinterprets elements of the same width only (i1 as a byte, "
                                    "into an 8-bit integer); cannot read ",
                                    from, " as ", to);
  types.push_back(input.clone(to));
  return success();
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

LogicalResult ConcatOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  ValueRange inputs = adaptor.getInputs();
  if (inputs.empty())
    return failInference<ConcatOp>(loc, "expects at least one operand");
  RankedTensorType first = rankedType(inputs.front());
  int64_t rank = first.getRank();
  int64_t axis = static_cast<int64_t>(adaptor.getAxis());
  if (rank == 0)
    return failInference<ConcatOp>(loc, "cannot concatenate rank-0 tensors");
  if (axis < 0 || axis >= rank)
    return failInference<ConcatOp>(loc, "axis ", axis, " is outside [0, ", rank, ")");
  SmallVector<int64_t> shape(first.getShape());
  shape[axis] = 0;
  for (auto [index, input] : llvm::enumerate(inputs)) {
    RankedTensorType type = rankedType(input);
    if (type.getRank() != rank)
      return failInference<ConcatOp>(loc, "operand ", index, " has rank ", type.getRank(),
                                     ", expected ", rank);
    for (int64_t d = 0; d < rank; ++d) {
      int64_t size = type.getDimSize(d);
      if (d == axis) {
        shape[d] = (shape[d] == kDynamic || size == kDynamic) ? kDynamic : shape[d] + size;
      } else if (shape[d] == kDynamic) {
        shape[d] = size;
      } else if (size != kDynamic && size != shape[d]) {
        return failInference<ConcatOp>(loc, "operand ", index, " has size ", size,
                                       " in dimension ", d, ", expected ", shape[d]);
      }
    }
  }
  types.push_back(first.clone(shape));
  return success();
}

/// A size of the run known at compile time: a constant index, or graph.dim of a static
/// dimension (once shapes are bound).
static std::optional<int64_t> knownSize(Value size) {
  if (auto constant = size.getDefiningOp<arith::ConstantIndexOp>())
    return constant.value();
  if (auto dim = size.getDefiningOp<DimOp>()) {
    auto type = llvm::dyn_cast<RankedTensorType>(dim.getInput().getType());
    int64_t d = static_cast<int64_t>(dim.getDim());
    if (type && d >= 0 && d < type.getRank() && !type.isDynamicDim(d))
      return type.getDimSize(d);
  }
  return std::nullopt;
}

LogicalResult ExpandOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  SmallVector<int64_t> target(adaptor.getShape());
  size_t fromSizes = 0;
  for (int64_t &size : target) {
    if (size != kDynamic)
      continue;
    if (fromSizes >= adaptor.getSizes().size())
      return failInference<ExpandOp>(loc, "shape has more entries '?' than sizes");
    if (std::optional<int64_t> known = knownSize(adaptor.getSizes()[fromSizes]))
      size = *known;
    ++fromSizes;
  }
  if (fromSizes != adaptor.getSizes().size())
    return failInference<ExpandOp>(loc, "shape has ", fromSizes, " entries '?' but ",
                                   adaptor.getSizes().size(), " sizes are given");
  if (llvm::any_of(target, [](int64_t d) { return d < 0 && d != kDynamic; }))
    return failInference<ExpandOp>(loc, "shape entries must be non-negative");
  std::optional<SmallVector<int64_t>> shape = broadcastShapes(input.getShape(), target);
  if (!shape)
    return failInference<ExpandOp>(loc, "input shape [", formatShape(input.getShape()),
                                   "] does not broadcast to ", formatList(target));
  types.push_back(input.clone(*shape));
  return success();
}

LogicalResult FlattenOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  int64_t axis = static_cast<int64_t>(adaptor.getAxis());
  if (axis < 0 || axis > input.getRank())
    return failInference<FlattenOp>(loc, "axis ", axis, " is outside [0, ", input.getRank(), "]");
  int64_t outer = productOfDims(input.getShape().take_front(axis));
  int64_t inner = productOfDims(input.getShape().drop_front(axis));
  types.push_back(input.clone({outer, inner}));
  return success();
}

LogicalResult GatherOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  RankedTensorType indices = rankedType(adaptor.getIndices());
  int64_t axis = static_cast<int64_t>(adaptor.getAxis());
  if (axis < 0 || axis >= input.getRank())
    return failInference<GatherOp>(loc, "axis ", axis, " is outside [0, ", input.getRank(), ")");
  SmallVector<int64_t> shape(input.getShape().take_front(axis));
  llvm::append_range(shape, indices.getShape());
  llvm::append_range(shape, input.getShape().drop_front(axis + 1));
  types.push_back(input.clone(shape));
  return success();
}

LogicalResult PadOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
                                      SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  int64_t rank = input.getRank();
  ArrayRef<int64_t> low = adaptor.getPadLow(), high = adaptor.getPadHigh();
  if (failed(checkLength<PadOp>(loc, low, rank, "pad_low")) ||
      failed(checkLength<PadOp>(loc, high, rank, "pad_high")))
    return failure();
  if (Value value = adaptor.getValue()) {
    RankedTensorType valueType = rankedType(value);
    if (adaptor.getMode() != PadMode::constant)
      return failInference<PadOp>(loc, "a padding value is only allowed in constant mode");
    if (valueType.getRank() != 0 || valueType.getElementType() != input.getElementType())
      return failInference<PadOp>(loc, "padding value must be a rank-0 tensor of ",
                                  input.getElementType());
  }
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = input.getDimSize(d);
    if (size == kDynamic) {
      shape.push_back(kDynamic);
      continue;
    }
    if (adaptor.getMode() == PadMode::reflect && (low[d] >= size || high[d] >= size))
      return failInference<PadOp>(loc, "reflect padding of dimension ", d,
                                  " must be smaller than its size ", size);
    if (adaptor.getMode() == PadMode::edge && size == 0 && (low[d] > 0 || high[d] > 0))
      return failInference<PadOp>(loc, "edge padding of empty dimension ", d);
    int64_t padded = size + low[d] + high[d];
    if (padded < 0)
      return failInference<PadOp>(loc, "padding crops dimension ", d, " below zero");
    shape.push_back(padded);
  }
  types.push_back(input.clone(shape));
  return success();
}

LogicalResult ReshapeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  SmallVector<int64_t> shape(adaptor.getShape());
  std::optional<size_t> inferred;
  size_t fromSizes = 0;
  for (auto [index, size] : llvm::enumerate(shape)) {
    if (size == kDynamic) {
      ++fromSizes;
    } else if (size == -1) {
      if (inferred)
        return failInference<ReshapeOp>(loc, "shape may hold at most one -1");
      inferred = index;
    } else if (size < 0) {
      return failInference<ReshapeOp>(loc, "shape entry ", size, " is negative");
    }
  }
  if (fromSizes != adaptor.getSizes().size())
    return failInference<ReshapeOp>(loc, "shape has ", fromSizes, " entries '?' but ",
                                    adaptor.getSizes().size(), " sizes are given");
  int64_t total = productOfDims(input.getShape());
  // Sizes of the run that are known (constants, static dimensions) become static entries.
  size_t next = 0;
  for (int64_t &size : shape)
    if (size == kDynamic)
      if (std::optional<int64_t> known = knownSize(adaptor.getSizes()[next++])) {
        size = *known;
        --fromSizes;
      }
  if (fromSizes) {
    // Sizes of the run: the element count is checked where they are known.
    llvm::replace(shape, int64_t(-1), kDynamic);
  } else if (inferred) {
    SmallVector<int64_t> known(shape);
    known.erase(known.begin() + *inferred);
    int64_t knownProduct = productOfDims(known);
    if (total == kDynamic) {
      shape[*inferred] = kDynamic;
    } else if (knownProduct == 0 || total % knownProduct != 0) {
      return failInference<ReshapeOp>(loc, "cannot reshape ", total, " elements to ",
                                      formatList(adaptor.getShape()));
    } else {
      shape[*inferred] = total / knownProduct;
    }
  } else if (total != kDynamic && productOfDims(shape) != total) {
    return failInference<ReshapeOp>(loc, "cannot reshape ", total, " elements to ",
                                    formatList(shape));
  }
  types.push_back(input.clone(shape));
  return success();
}

LogicalResult SliceOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  int64_t rank = input.getRank();
  ArrayRef<int64_t> starts = adaptor.getStarts(), limits = adaptor.getLimits(),
                    strides = adaptor.getStrides();
  if (failed(checkLength<SliceOp>(loc, starts, rank, "starts")) ||
      failed(checkLength<SliceOp>(loc, limits, rank, "limits")) ||
      failed(checkLength<SliceOp>(loc, strides, rank, "strides")))
    return failure();
  if (static_cast<size_t>(llvm::count(limits, kDynamic)) != adaptor.getDynamicLimits().size())
    return failInference<SliceOp>(loc, "limits has ", llvm::count(limits, kDynamic),
                                  " entries '?' but ", adaptor.getDynamicLimits().size(),
                                  " dynamic limits are given");
  SmallVector<int64_t> shape;
  size_t dynamicLimit = 0;
  for (int64_t d = 0; d < rank; ++d) {
    int64_t size = input.getDimSize(d), start = starts[d], limit = limits[d], stride = strides[d];
    if (stride == 0)
      return failInference<SliceOp>(loc, "stride of dimension ", d, " is zero");
    if (limit == kDynamic) {
      // A limit of the run, clamped to [start, size].
      if (stride < 0 || start < 0 || (size != kDynamic && start > size))
        return failInference<SliceOp>(loc, "dimension ", d,
                                      " has a limit of the run, so its "
                                      "stride must be positive and its start within the size");
      std::optional<int64_t> known = knownSize(adaptor.getDynamicLimits()[dynamicLimit++]);
      if (!known || size == kDynamic) {
        shape.push_back(kDynamic);
        continue;
      }
      limit = std::max(std::min(*known, size), start);
    }
    bool inRange = stride > 0 ? (0 <= start && start <= limit &&
                                 (size == kDynamic || limit <= size))
                              : (-1 <= limit && limit <= start &&
                                 (size == kDynamic || start < size));
    if (!inRange)
      return failInference<SliceOp>(loc, "slice [", start, ", ", limit, ") step ", stride,
                                    " of dimension ", d, " is out of range for size ",
                                    size == kDynamic ? std::string("?") : std::to_string(size));
    if (size == kDynamic) {
      shape.push_back(kDynamic);
      continue;
    }
    int64_t span = stride > 0 ? limit - start : start - limit;
    int64_t step = stride > 0 ? stride : -stride;
    shape.push_back((span + step - 1) / step);
  }
  types.push_back(input.clone(shape));
  return success();
}

LogicalResult DimOp::inferReturnTypes(MLIRContext *context, std::optional<Location> loc,
                                      Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  int64_t dim = static_cast<int64_t>(adaptor.getDim());
  if (dim < 0 || dim >= input.getRank())
    return failInference<DimOp>(loc, "dimension ", dim, " is outside [0, ", input.getRank(), ")");
  types.push_back(IndexType::get(context));
  return success();
}

LogicalResult ShapeOfOp::inferReturnTypes(MLIRContext *context, std::optional<Location>,
                                          Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  types.push_back(RankedTensorType::get({input.getRank()}, IntegerType::get(context, 64)));
  return success();
}

LogicalResult IotaOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc, Adaptor adaptor,
                                       SmallVectorImpl<Type> &types) {
  Type element = adaptor.getElementType();
  if (!element.isIntOrFloat() || element.isInteger(1))
    return failInference<IotaOp>(loc, "element type ", element, " is not numeric");
  std::optional<int64_t> length = knownSize(adaptor.getLength());
  types.push_back(
      RankedTensorType::get({length ? std::max<int64_t>(*length, 0) : kDynamic}, element));
  return success();
}

LogicalResult SplitOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                        Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  int64_t axis = static_cast<int64_t>(adaptor.getAxis());
  if (axis < 0 || axis >= input.getRank())
    return failInference<SplitOp>(loc, "axis ", axis, " is outside [0, ", input.getRank(), ")");
  ArrayRef<int64_t> sizes = adaptor.getSizes();
  if (sizes.empty())
    return failInference<SplitOp>(loc, "sizes must not be empty");
  int64_t total = 0;
  for (int64_t size : sizes) {
    if (size < 0)
      return failInference<SplitOp>(loc, "sizes must be non-negative");
    total += size;
  }
  int64_t dim = input.getDimSize(axis);
  if (dim != kDynamic && dim != total)
    return failInference<SplitOp>(loc, "sizes add up to ", total, " but dimension ", axis,
                                  " has size ", dim);
  for (int64_t size : sizes) {
    SmallVector<int64_t> shape(input.getShape());
    shape[axis] = size;
    types.push_back(input.clone(shape));
  }
  return success();
}

LogicalResult SqueezeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                          Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  if (failed(checkAxes<SqueezeOp>(loc, axes, input.getRank(), "axes")))
    return failure();
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < input.getRank(); ++d) {
    int64_t size = input.getDimSize(d);
    if (!llvm::is_contained(axes, d)) {
      shape.push_back(size);
    } else if (size != 1 && size != kDynamic) {
      return failInference<SqueezeOp>(loc, "dimension ", d, " has size ", size, ", not 1");
    }
  }
  types.push_back(input.clone(shape));
  return success();
}

LogicalResult TransposeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  ArrayRef<int64_t> permutation = adaptor.getPermutation();
  if (failed(checkLength<TransposeOp>(loc, permutation, input.getRank(), "permutation")) ||
      failed(checkAxes<TransposeOp>(loc, permutation, input.getRank(), "permutation",
                                    /*strictlyIncreasing=*/false)))
    return failure();
  llvm::SmallSet<int64_t, 8> seen(permutation.begin(), permutation.end());
  if (seen.size() != permutation.size())
    return failInference<TransposeOp>(loc, "permutation repeats a dimension");
  SmallVector<int64_t> shape;
  for (int64_t source : permutation)
    shape.push_back(input.getDimSize(source));
  types.push_back(input.clone(shape));
  return success();
}

LogicalResult UnsqueezeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  ArrayRef<int64_t> axes = adaptor.getAxes();
  int64_t rank = input.getRank() + static_cast<int64_t>(axes.size());
  if (failed(checkAxes<UnsqueezeOp>(loc, axes, rank, "axes")))
    return failure();
  SmallVector<int64_t> shape;
  ArrayRef<int64_t> remaining = input.getShape();
  for (int64_t d = 0; d < rank; ++d) {
    if (llvm::is_contained(axes, d)) {
      shape.push_back(1);
    } else {
      shape.push_back(remaining.front());
      remaining = remaining.drop_front();
    }
  }
  types.push_back(input.clone(shape));
  return success();
}

LogicalResult GatherElementsOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                                 Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  RankedTensorType indices = rankedType(adaptor.getIndices());
  int64_t axis = static_cast<int64_t>(adaptor.getAxis());
  if (axis < 0 || axis >= input.getRank())
    return failInference<GatherElementsOp>(loc, "axis ", axis, " is outside [0, ",
                                           input.getRank(), ")");
  if (indices.getRank() != input.getRank())
    return failInference<GatherElementsOp>(loc, "indices have rank ", indices.getRank(),
                                           ", expected the input's rank ", input.getRank());
  types.push_back(input.clone(indices.getShape()));
  return success();
}

/// The length of the index vectors of gather_nd / scatter_nd (the last dimension of `indices`).
template <typename OpTy>
FailureOr<int64_t> indexVectorLength(std::optional<Location> loc, RankedTensorType input,
                                     RankedTensorType indices, int64_t batchDims) {
  if (indices.getRank() < 1)
    return failInference<OpTy>(loc, "indices must have rank 1 or more");
  int64_t length = indices.getShape().back();
  if (length == kDynamic)
    return failInference<OpTy>(loc, "the last dimension of indices must be static");
  if (batchDims < 0 || batchDims >= indices.getRank() || batchDims + length > input.getRank())
    return failInference<OpTy>(loc, "index vectors of length ", length, " after ", batchDims,
                               " batch dimensions do not fit an input of rank ", input.getRank());
  for (int64_t d = 0; d < batchDims; ++d) {
    int64_t a = input.getDimSize(d), b = indices.getDimSize(d);
    if (a != kDynamic && b != kDynamic && a != b)
      return failInference<OpTy>(loc, "batch dimension ", d, " differs: ", a, " and ", b);
  }
  return length;
}

LogicalResult GatherNdOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                           Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  RankedTensorType indices = rankedType(adaptor.getIndices());
  int64_t batchDims = static_cast<int64_t>(adaptor.getBatchDims());
  FailureOr<int64_t> length = indexVectorLength<GatherNdOp>(loc, input, indices, batchDims);
  if (failed(length))
    return failure();
  SmallVector<int64_t> shape(indices.getShape().drop_back());
  llvm::append_range(shape, input.getShape().drop_front(batchDims + *length));
  types.push_back(input.clone(shape));
  return success();
}

LogicalResult ScatterElementsOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                                  Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  RankedTensorType indices = rankedType(adaptor.getIndices());
  RankedTensorType updates = rankedType(adaptor.getUpdates());
  int64_t axis = static_cast<int64_t>(adaptor.getAxis());
  if (axis < 0 || axis >= input.getRank())
    return failInference<ScatterElementsOp>(loc, "axis ", axis, " is outside [0, ",
                                            input.getRank(), ")");
  if (indices.getRank() != input.getRank() ||
      !areRefinableTypes(TypeRange{indices.clone(updates.getElementType())}, TypeRange{updates}))
    return failInference<ScatterElementsOp>(
        loc, "indices [", formatShape(indices.getShape()), "] and updates [",
        formatShape(updates.getShape()), "] must have one shape of the input's rank");
  types.push_back(input);
  return success();
}

LogicalResult ScatterNdOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  RankedTensorType indices = rankedType(adaptor.getIndices());
  RankedTensorType updates = rankedType(adaptor.getUpdates());
  FailureOr<int64_t> length = indexVectorLength<ScatterNdOp>(loc, input, indices, 0);
  if (failed(length))
    return failure();
  SmallVector<int64_t> expected(indices.getShape().drop_back());
  llvm::append_range(expected, input.getShape().drop_front(*length));
  if (!areRefinableTypes(TypeRange{updates.clone(expected)}, TypeRange{updates}))
    return failInference<ScatterNdOp>(loc, "updates have shape [", formatShape(updates.getShape()),
                                      "], expected [", formatShape(expected), "]");
  types.push_back(input);
  return success();
}

LogicalResult ResizeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  ArrayRef<int64_t> sizes = adaptor.getSizes();
  ArrayRef<float> scales = adaptor.getScales();
  if (failed(checkLength<ResizeOp>(loc, sizes, input.getRank(), "sizes")))
    return failure();
  if (scales.size() != sizes.size())
    return failInference<ResizeOp>(loc, "scales has ", scales.size(), " entries, expected ",
                                   sizes.size());
  for (auto [size, scale] : llvm::zip_equal(sizes, scales))
    if (size < 0 || !(scale > 0.0f))
      return failInference<ResizeOp>(loc, "sizes must be non-negative and scales positive");
  bool cropping = adaptor.getCoordinateTransform() == CoordinateTransform::tf_crop_and_resize;
  std::optional<ArrayRef<float>> roi = adaptor.getRoi();
  if (cropping != roi.has_value())
    return failInference<ResizeOp>(loc, "roi goes with the tf_crop_and_resize transform, and only "
                                        "with it");
  if (roi && roi->size() != 2 * sizes.size())
    return failInference<ResizeOp>(loc, "roi has ", roi->size(), " entries, expected ",
                                   2 * sizes.size());
  types.push_back(input.clone(sizes));
  return success();
}

LogicalResult GridSampleOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                             Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  RankedTensorType grid = rankedType(adaptor.getGrid());
  int64_t rank = input.getRank();
  if (rank < 3 || rank > 5)
    return failInference<GridSampleOp>(loc, "input must be N x C x D1..Dn with n = 1, 2 or 3");
  if (grid.getRank() != rank)
    return failInference<GridSampleOp>(loc, "grid has rank ", grid.getRank(), ", expected ", rank);
  int64_t components = grid.getDimSize(rank - 1);
  if (!ShapedType::isDynamic(components) && components != rank - 2)
    return failInference<GridSampleOp>(loc, "grid positions have ", components,
                                       " components, expected ", rank - 2);
  int64_t n = input.getDimSize(0), gridN = grid.getDimSize(0);
  if (!ShapedType::isDynamic(n) && !ShapedType::isDynamic(gridN) && n != gridN)
    return failInference<GridSampleOp>(loc, "grid has batch ", gridN, ", input ", n);
  if (adaptor.getMode() == ResizeMode::cubic && rank != 4)
    return failInference<GridSampleOp>(loc, "cubic sampling takes 2 spatial dimensions");
  SmallVector<int64_t> shape{ShapedType::isDynamic(n) ? gridN : n, input.getDimSize(1)};
  llvm::append_range(shape, grid.getShape().slice(1, rank - 2));
  types.push_back(input.clone(shape));
  return success();
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

#define KILN_INFER_REDUCTION(OP)                                                                  \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> loc, Adaptor adaptor, \
                                     SmallVectorImpl<Type> &types) {                             \
    RankedTensorType input = rankedType(adaptor.getInput());                                      \
    ArrayRef<int64_t> axes = adaptor.getAxes();                                                   \
    if (failed(checkAxes<OP>(loc, axes, input.getRank(), "axes")))                               \
      return failure();                                                                           \
    SmallVector<int64_t> shape;                                                                   \
    for (int64_t d = 0; d < input.getRank(); ++d) {                                               \
      if (!llvm::is_contained(axes, d))                                                           \
        shape.push_back(input.getDimSize(d));                                                     \
      else if (adaptor.getKeepdims())                                                             \
        shape.push_back(1);                                                                       \
    }                                                                                             \
    types.push_back(input.clone(shape));                                                          \
    return success();                                                                             \
  }
KILN_INFER_REDUCTION(ReduceMaxOp)
KILN_INFER_REDUCTION(ReduceMeanOp)
KILN_INFER_REDUCTION(ReduceMinOp)
KILN_INFER_REDUCTION(ReduceProdOp)
KILN_INFER_REDUCTION(ReduceSumOp)
#undef KILN_INFER_REDUCTION

#define KILN_INFER_ARG_REDUCTION(OP)                                                              \
  LogicalResult OP::inferReturnTypes(MLIRContext *context, std::optional<Location> loc,           \
                                     Adaptor adaptor, SmallVectorImpl<Type> &types) {             \
    RankedTensorType input = rankedType(adaptor.getInput());                                      \
    int64_t axis = static_cast<int64_t>(adaptor.getAxis());                                       \
    if (axis < 0 || axis >= input.getRank())                                                      \
      return failInference<OP>(loc, "axis ", axis, " is outside [0, ", input.getRank(), ")");     \
    SmallVector<int64_t> shape(input.getShape());                                                 \
    if (adaptor.getKeepdims())                                                                    \
      shape[axis] = 1;                                                                            \
    else                                                                                          \
      shape.erase(shape.begin() + axis);                                                          \
    types.push_back(RankedTensorType::get(shape, IntegerType::get(context, 64)));                 \
    return success();                                                                             \
  }
KILN_INFER_ARG_REDUCTION(ArgMaxOp)
KILN_INFER_ARG_REDUCTION(ArgMinOp)
#undef KILN_INFER_ARG_REDUCTION

/// The axis of a cumulative op lies inside its rank.
template <typename OpTy>
static LogicalResult verifyCumulative(OpTy op) {
  int64_t axis = static_cast<int64_t>(op.getAxis());
  if (axis < 0 || axis >= op.getType().getRank())
    return op.emitOpError("axis ") << axis << " is outside [0, " << op.getType().getRank() << ")";
  return success();
}
LogicalResult CumsumOp::verify() { return verifyCumulative(*this); }
LogicalResult CumprodOp::verify() { return verifyCumulative(*this); }

LogicalResult TopKOp::inferReturnTypes(MLIRContext *context, std::optional<Location> loc,
                                       Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  int64_t axis = static_cast<int64_t>(adaptor.getAxis());
  int64_t k = static_cast<int64_t>(adaptor.getK());
  if (axis < 0 || axis >= input.getRank())
    return failInference<TopKOp>(loc, "axis ", axis, " is outside [0, ", input.getRank(), ")");
  int64_t size = input.getDimSize(axis);
  if (k < 0 || (size != kDynamic && k > size))
    return failInference<TopKOp>(loc, "k = ", k, " is outside [0, ",
                                 size == kDynamic ? std::string("?") : std::to_string(size), "]");
  SmallVector<int64_t> shape(input.getShape());
  shape[axis] = k;
  types.push_back(input.clone(shape));
  types.push_back(RankedTensorType::get(shape, IntegerType::get(context, 64)));
  return success();
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

LogicalResult GemmOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType a = rankedType(adaptor.getA()), b = rankedType(adaptor.getB());
  if (a.getRank() != 2 || b.getRank() != 2)
    return failInference<GemmOp>(loc, "expects matrices, got ranks ", a.getRank(), " and ",
                                 b.getRank());
  int64_t m = a.getDimSize(adaptor.getTransA() ? 1 : 0);
  int64_t ka = a.getDimSize(adaptor.getTransA() ? 0 : 1);
  int64_t kb = b.getDimSize(adaptor.getTransB() ? 1 : 0);
  int64_t n = b.getDimSize(adaptor.getTransB() ? 0 : 1);
  if (ka != kDynamic && kb != kDynamic && ka != kb)
    return failInference<GemmOp>(loc, "contracting dimensions differ: ", ka, " and ", kb);
  if (Value c = adaptor.getC()) {
    RankedTensorType cType = rankedType(c);
    if (cType.getElementType() != a.getElementType())
      return failInference<GemmOp>(loc, "addend element type ", cType.getElementType(),
                                   " differs from ", a.getElementType());
    if (!broadcastsTo(cType.getShape(), {m, n}))
      return failInference<GemmOp>(loc, "addend of shape [", formatShape(cType.getShape()),
                                   "] does not broadcast to [", formatShape({m, n}), "]");
  }
  types.push_back(a.clone({m, n}));
  return success();
}

LogicalResult MatmulOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                         Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType lhs = rankedType(adaptor.getLhs()), rhs = rankedType(adaptor.getRhs());
  if (lhs.getRank() < 1 || rhs.getRank() < 1)
    return failInference<MatmulOp>(loc, "expects operands of rank 1 or more");
  // A vector operand becomes a matrix (row vector on the left, column on the right).
  SmallVector<int64_t> l(lhs.getShape()), r(rhs.getShape());
  if (l.size() == 1)
    l.insert(l.begin(), 1);
  if (r.size() == 1)
    r.push_back(1);
  int64_t kl = l.back(), kr = r[r.size() - 2];
  if (kl != kDynamic && kr != kDynamic && kl != kr)
    return failInference<MatmulOp>(loc, "contracting dimensions differ: ", kl, " and ", kr);
  std::optional<SmallVector<int64_t>> batch =
      broadcastShapes(ArrayRef<int64_t>(l).drop_back(2), ArrayRef<int64_t>(r).drop_back(2));
  if (!batch)
    return failInference<MatmulOp>(loc, "batch dimensions [", formatShape(ArrayRef(l).drop_back(2)),
                                   "] and [", formatShape(ArrayRef(r).drop_back(2)),
                                   "] do not broadcast");
  SmallVector<int64_t> shape = std::move(*batch);
  if (lhs.getRank() > 1)
    shape.push_back(l[l.size() - 2]);
  if (rhs.getRank() > 1)
    shape.push_back(r.back());
  types.push_back(lhs.clone(shape));
  return success();
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

LogicalResult ConvOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                       Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  RankedTensorType filter = rankedType(adaptor.getFilter());
  int64_t groups = static_cast<int64_t>(adaptor.getGroups());
  if (groups < 1)
    return failInference<ConvOp>(loc, "groups must be positive, got ", groups);
  if (filter.getRank() != input.getRank())
    return failInference<ConvOp>(loc, "filter rank ", filter.getRank(), " differs from input rank ",
                                 input.getRank());
  int64_t channels = input.getDimSize(1), filterChannels = filter.getDimSize(1);
  int64_t outChannels = filter.getDimSize(0);
  if (channels != kDynamic && channels % groups != 0)
    return failInference<ConvOp>(loc, "input channels ", channels, " are not divisible by ",
                                 groups, " groups");
  if (outChannels != kDynamic && outChannels % groups != 0)
    return failInference<ConvOp>(loc, "output channels ", outChannels,
                                 " are not divisible by ", groups, " groups");
  if (channels != kDynamic && filterChannels != kDynamic && channels / groups != filterChannels)
    return failInference<ConvOp>(loc, "filter has ", filterChannels,
                                 " input channels, expected ", channels / groups);
  if (Value bias = adaptor.getBias()) {
    RankedTensorType biasType = rankedType(bias);
    if (biasType.getRank() != 1 ||
        (outChannels != kDynamic && biasType.getDimSize(0) != kDynamic &&
         biasType.getDimSize(0) != outChannels))
      return failInference<ConvOp>(loc, "bias must be a vector of ", outChannels, " elements");
  }
  FailureOr<SmallVector<int64_t>> shape = inferWindowedShape<ConvOp>(
      loc, input, filter.getShape().drop_front(2), adaptor.getStrides(), adaptor.getDilations(),
      adaptor.getPadLow(), adaptor.getPadHigh(), /*ceilMode=*/false);
  if (failed(shape))
    return failure();
  (*shape)[1] = outChannels;
  types.push_back(input.clone(*shape));
  return success();
}

LogicalResult ConvTransposeOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                                Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  RankedTensorType filter = rankedType(adaptor.getFilter());
  int64_t groups = static_cast<int64_t>(adaptor.getGroups());
  int64_t rank = input.getRank();
  if (rank < 3 || rank > 5)
    return failInference<ConvTransposeOp>(
        loc, "expects an input of rank 3 to 5 (N x C x 1-3 spatial dims), got ", rank);
  if (groups < 1)
    return failInference<ConvTransposeOp>(loc, "groups must be positive, got ", groups);
  if (filter.getRank() != rank)
    return failInference<ConvTransposeOp>(loc, "filter rank ", filter.getRank(),
                                          " differs from input rank ", rank);
  int64_t channels = input.getDimSize(1), filterChannels = filter.getDimSize(0);
  if (channels != kDynamic && filterChannels != kDynamic && channels != filterChannels)
    return failInference<ConvTransposeOp>(loc, "filter has ", filterChannels,
                                          " input channels, expected ", channels);
  if (channels != kDynamic && channels % groups != 0)
    return failInference<ConvTransposeOp>(loc, "input channels ", channels,
                                          " are not divisible by ", groups, " groups");
  int64_t perGroup = filter.getDimSize(1);
  int64_t outChannels = perGroup == kDynamic ? kDynamic : perGroup * groups;
  if (Value bias = adaptor.getBias()) {
    RankedTensorType biasType = rankedType(bias);
    if (biasType.getRank() != 1 ||
        (outChannels != kDynamic && biasType.getDimSize(0) != kDynamic &&
         biasType.getDimSize(0) != outChannels))
      return failInference<ConvTransposeOp>(loc, "bias must be a vector of ", outChannels,
                                            " elements");
  }
  size_t spatial = rank - 2;
  ArrayRef<int64_t> strides = adaptor.getStrides(), dilations = adaptor.getDilations(),
                    low = adaptor.getPadLow(), high = adaptor.getPadHigh(),
                    outputPadding = adaptor.getOutputPadding();
  if (failed(checkLength<ConvTransposeOp>(loc, strides, spatial, "strides")) ||
      failed(checkLength<ConvTransposeOp>(loc, dilations, spatial, "dilations")) ||
      failed(checkLength<ConvTransposeOp>(loc, low, spatial, "pad_low")) ||
      failed(checkLength<ConvTransposeOp>(loc, high, spatial, "pad_high")) ||
      failed(checkLength<ConvTransposeOp>(loc, outputPadding, spatial, "output_padding")))
    return failure();
  SmallVector<int64_t> shape{input.getDimSize(0), outChannels};
  for (size_t i = 0; i < spatial; ++i) {
    if (strides[i] < 1 || dilations[i] < 1)
      return failInference<ConvTransposeOp>(loc, "strides and dilations must be positive");
    if (low[i] < 0 || high[i] < 0 || outputPadding[i] < 0)
      return failInference<ConvTransposeOp>(loc, "padding must be non-negative");
    if (outputPadding[i] >= std::max(strides[i], dilations[i]))
      return failInference<ConvTransposeOp>(loc, "output_padding must be smaller than the stride "
                                                 "or the dilation");
    int64_t in = input.getDimSize(i + 2), kernel = filter.getDimSize(i + 2);
    if (in == kDynamic || kernel == kDynamic) {
      shape.push_back(kDynamic);
      continue;
    }
    int64_t size = strides[i] * (in - 1) + outputPadding[i] + dilations[i] * (kernel - 1) + 1 -
                   low[i] - high[i];
    if (size < 1)
      return failInference<ConvTransposeOp>(loc, "padding leaves spatial dimension ", i,
                                            " empty");
    shape.push_back(size);
  }
  types.push_back(input.clone(shape));
  return success();
}

/// `N x D1 .. Dn x C` as `N x C x D1 .. Dn`, and back.
static RankedTensorType channelsFirst(RankedTensorType type) {
  SmallVector<int64_t> shape{type.getDimSize(0), type.getShape().back()};
  llvm::append_range(shape, type.getShape().drop_front().drop_back());
  return type.clone(shape);
}

static RankedTensorType channelsLastOf(RankedTensorType type) {
  SmallVector<int64_t> shape{type.getDimSize(0)};
  llvm::append_range(shape, type.getShape().drop_front(2));
  shape.push_back(type.getDimSize(1));
  return type.clone(shape);
}

#define KILN_INFER_WINDOW_POOL(OP)                                                                 \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> loc, Adaptor adaptor,  \
                                     SmallVectorImpl<Type> &types) {                               \
    RankedTensorType input = rankedType(adaptor.getInput());                                       \
    ArrayRef<int64_t> kernel = adaptor.getKernelShape();                                           \
    if (input.getRank() >= 3 &&                                                                    \
        failed(checkLength<OP>(loc, kernel, input.getRank() - 2, "kernel_shape")))                 \
      return failure();                                                                            \
    if (llvm::any_of(kernel, [](int64_t k) { return k < 1; }))                                     \
      return failInference<OP>(loc, "kernel_shape entries must be positive");                      \
    BoolAttr flag = adaptor.getChannelsLastAttr();                                                 \
    bool channelsLast = flag && flag.getValue() && input.getRank() >= 3;                           \
    if (channelsLast)                                                                              \
      input = channelsFirst(input);                                                                \
    FailureOr<SmallVector<int64_t>> shape =                                                        \
        inferWindowedShape<OP>(loc, input, kernel, adaptor.getStrides(), adaptor.getDilations(),   \
                               adaptor.getPadLow(), adaptor.getPadHigh(), adaptor.getCeilMode());  \
    if (failed(shape))                                                                             \
      return failure();                                                                            \
    RankedTensorType result = input.clone(*shape);                                                 \
    types.push_back(channelsLast ? channelsLastOf(result) : result);                               \
    return success();                                                                              \
  }
KILN_INFER_WINDOW_POOL(AvgPoolOp)
KILN_INFER_WINDOW_POOL(MaxPoolOp)
#undef KILN_INFER_WINDOW_POOL

#define KILN_INFER_GLOBAL_POOL(OP)                                                                \
  LogicalResult OP::inferReturnTypes(MLIRContext *, std::optional<Location> loc, Adaptor adaptor, \
                                     SmallVectorImpl<Type> &types) {                             \
    RankedTensorType input = rankedType(adaptor.getInput());                                      \
    if (input.getRank() < 3)                                                                      \
      return failInference<OP>(loc, "expects an input of rank 3 or more (N x C x spatial), got ", \
                               input.getRank());                                                  \
    SmallVector<int64_t> shape(input.getShape());                                                 \
    std::fill(shape.begin() + 2, shape.end(), 1);                                                 \
    types.push_back(input.clone(shape));                                                          \
    return success();                                                                             \
  }
KILN_INFER_GLOBAL_POOL(GlobalAvgPoolOp)
KILN_INFER_GLOBAL_POOL(GlobalMaxPoolOp)
#undef KILN_INFER_GLOBAL_POOL

//===----------------------------------------------------------------------===//
// Normalization and softmax
//===----------------------------------------------------------------------===//

LogicalResult BatchNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  if (input.getRank() < 2)
    return failInference<BatchNormOp>(loc, "expects an input of rank 2 or more, got ",
                                      input.getRank());
  int64_t channels = input.getDimSize(1);
  const char *names[] = {"scale", "bias", "mean", "variance"};
  Value statistics[] = {adaptor.getScale(), adaptor.getBias(), adaptor.getMean(),
                        adaptor.getVariance()};
  for (auto [name, value] : llvm::zip_equal(names, statistics)) {
    RankedTensorType type = rankedType(value);
    if (type.getRank() != 1 ||
        (channels != kDynamic && type.getDimSize(0) != kDynamic && type.getDimSize(0) != channels))
      return failInference<BatchNormOp>(loc, name, " must be a vector of ", channels,
                                        " elements (the channel count)");
  }
  types.push_back(input);
  return success();
}

LogicalResult LayerNormOp::inferReturnTypes(MLIRContext *, std::optional<Location> loc,
                                            Adaptor adaptor, SmallVectorImpl<Type> &types) {
  RankedTensorType input = rankedType(adaptor.getInput());
  int64_t axis = static_cast<int64_t>(adaptor.getAxis());
  if (axis < 0 || axis >= input.getRank())
    return failInference<LayerNormOp>(loc, "axis ", axis, " is outside [0, ", input.getRank(),
                                      ")");
  ArrayRef<int64_t> normalized = input.getShape().drop_front(axis);
  for (Value value : {adaptor.getScale(), adaptor.getBias()}) {
    if (!value)
      continue;
    RankedTensorType type = rankedType(value);
    if (!broadcastsTo(type.getShape(), normalized))
      return failInference<LayerNormOp>(loc, "scale and bias of shape [",
                                        formatShape(type.getShape()),
                                        "] must broadcast to the normalized shape [",
                                        formatShape(normalized), "]");
  }
  types.push_back(input);
  return success();
}

#define KILN_VERIFY_SOFTMAX(OP)                                                                   \
  LogicalResult OP::verify() {                                                                    \
    int64_t axis = static_cast<int64_t>(getAxis());                                               \
    if (axis < 0 || axis >= getType().getRank())                                                  \
      return emitOpError("axis ") << axis << " is outside [0, " << getType().getRank() << ")";    \
    return success();                                                                             \
  }
KILN_VERIFY_SOFTMAX(LogSoftmaxOp)
KILN_VERIFY_SOFTMAX(SoftmaxOp)
#undef KILN_VERIFY_SOFTMAX

#define GET_OP_CLASSES
#include "dialects/graph/GraphOps.cpp.inc"

namespace kiln::graph {

std::optional<ArrayRef<char>> rawConstantData(Attribute value) {
  auto elements = dyn_cast<ElementsAttr>(value);
  if (!elements || !elements.getElementType().isIntOrFloat() ||
      elements.getElementType().getIntOrFloatBitWidth() % 8 != 0)
    return std::nullopt;
  if (auto dense = dyn_cast<DenseElementsAttr>(value)) {
    if (dense.isSplat())
      return std::nullopt;
    return dense.getRawData();
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(value))
    if (AsmResourceBlob *blob = resource.getRawHandle().getBlob())
      return blob->getData();
  return std::nullopt;
}

bool isElementwise(Operation *op) {
  if (op->getNumResults() != 1 || isa<BitcastOp>(op))
    return false;
  return op->hasTrait<OpTrait::Elementwise>() ||
         isa<AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, PowOp, CompareOp, SelectOp, AndOp, OrOp,
             XorOp>(op);
}

ElementsAttr rawConstantLike(Attribute like, RankedTensorType type, ArrayRef<char> bytes,
                             StringRef suffix) {
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(like))
    return DenseResourceElementsAttr::get(
        type, resource.getRawHandle().getKey().str() + suffix.str(),
        HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, alignof(uint64_t)));
  return DenseElementsAttr::getFromRawBuffer(type, bytes);
}

} // namespace kiln::graph
