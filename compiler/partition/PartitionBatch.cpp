//===- PartitionBatch.cpp - Batch (data) parallelism ------------------------===//
//
// kiln-partition-batch (Passes.td): the batch of the model's inputs split between the devices,
// the split propagated through every op that keeps the samples apart, the outputs gathered; the
// entry function rewritten into one device's part.
//
// The split of a value is partition::Split (compiler/partition/Split.h). Inputs are split on
// dimension 0 in contiguous blocks (device r takes samples [r B/N, (r+1) B/N)); reshapes and
// transposes move the split to other dimensions and may make it block-cyclic, which the gather at
// the end undoes.
//
//===----------------------------------------------------------------------===//

#include "compiler/partition/Passes.h"
#include "dialects/kiln/KilnAttributes.h"

#include "compiler/partition/EntryFunction.h"
#include "compiler/partition/PartitionBatch.h"
#include "compiler/partition/PartitionCost.h"
#include "compiler/partition/PartitionReport.h"
#include "compiler/partition/Split.h"
#include "contract/library_calls.h"

#include "compiler/fusion/CostModel.h"
#include "compiler/librarycalls/Declarations.h"
#include "dialects/graph/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln {
#define GEN_PASS_DEF_PARTITIONBATCHPASS
#include "compiler/partition/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

using namespace partition;

/// A replicated operand the device reads only its part of (a constant sliced at compile time,
/// anything else sliced at run time).
struct LocalOperand {
  Operation *op;
  unsigned operand;
  Split split; // in the operand's own dimensions
};

/// `stacked` is [parts, local...]: part p's share of a value split like `split` (in each part's
/// own dimensions), part after part. Puts them back in the order of `whole`: the parts' blocks
/// interleaved as [outer..., k, parts, block, inner...], then reshaped.
Value joinStacked(OpBuilder &builder, Location loc, Value stacked, Split split,
                  RankedTensorType whole) {
  auto all = cast<RankedTensorType>(stacked.getType());
  int64_t parts = all.getDimSize(0);
  ArrayRef<int64_t> shape = all.getShape().drop_front();
  int64_t k = shape[split.dim] / split.block;
  SmallVector<int64_t> blocked{parts};
  llvm::append_range(blocked, shape.take_front(split.dim));
  llvm::append_range(blocked, ArrayRef<int64_t>{k, split.block});
  llvm::append_range(blocked, shape.drop_front(split.dim + 1));
  SmallVector<int64_t> permutation;
  for (int64_t d = 1; d <= split.dim + 1; ++d)
    permutation.push_back(d);
  permutation.push_back(0);
  for (int64_t d = split.dim + 2; d < static_cast<int64_t>(blocked.size()); ++d)
    permutation.push_back(d);
  Value result = stacked;
  // The transpose moves the part index past dimensions of size 1 only: a reshape does it.
  bool moves = llvm::any_of(ArrayRef<int64_t>(blocked).slice(1, split.dim + 1),
                            [](int64_t size) { return size != 1; });
  if (moves) {
    result = graph::ReshapeOp::create(builder, loc, all.clone(blocked), result,
                                      builder.getDenseI64ArrayAttr(blocked));
    SmallVector<int64_t> permuted;
    for (int64_t from : permutation)
      permuted.push_back(blocked[from]);
    result = graph::TransposeOp::create(builder, loc, all.clone(permuted), result,
                                        builder.getDenseI64ArrayAttr(permutation));
  }
  return graph::ReshapeOp::create(builder, loc, whole, result,
                                  builder.getDenseI64ArrayAttr(whole.getShape()));
}

class Batcher {
public:
  /// `gather` empty: the results stay this device's (part's) parts (splitIntoBatchPart).
  Batcher(ModuleOp module, func::FuncOp entry, int64_t devices, int64_t rank, StringRef gather,
          StringRef pass = "kiln-partition-batch")
      : module(module), entry(entry), devices(devices), rank(rank), gather(gather), pass(pass) {}

  LogicalResult run();
  /// The batch found, the splits propagated and the cost of a run modeled; nothing rewritten.
  LogicalResult analyze();
  void rewrite();
  std::optional<Split> splitOf(Value value) const {
    auto it = splits.find(value);
    return it == splits.end() ? std::nullopt : std::optional<Split>(it->second);
  }

private:
  /// Splits the results of `op` given its operands' splits; on failure `why` says how the op
  /// would mix the samples of the batch.
  LogicalResult propagate(Operation *op, std::string &why);
  LogicalResult propagateElementwise(Operation *op, std::string &why);
  LogicalResult propagateMatmul(graph::MatmulOp op, std::string &why);
  LogicalResult propagateGemm(graph::GemmOp op, std::string &why);
  /// Reads `operand` of `op` (replicated) as the device's part along `split`, when it is not
  /// broadcast along that dimension.
  void readLocally(Operation *op, unsigned operand, Split split);

  /// Device `rank`'s part of `value` (replicated) along `split`, computed where `builder` is.
  Value localPart(OpBuilder &builder, Location loc, Value value, Split split);
  /// The whole of `value` (split like `split`) from every device's part, in the original order.
  Value gathered(OpBuilder &builder, Location loc, Value value, Split split,
                 RankedTensorType whole);

  ModuleOp module;
  func::FuncOp entry;
  int64_t devices, rank;
  StringRef gather;
  StringRef pass;
  llvm::DenseMap<Value, Split> splits;
  std::vector<std::string> report;
  double predictedMilliseconds = 0;
  SmallVector<LocalOperand> locals;
  /// The ops with split results, in program order.
  SmallVector<Operation *> splitOps;
};

void Batcher::readLocally(Operation *op, unsigned operand, Split split) {
  auto type = cast<RankedTensorType>(op->getOperand(operand).getType());
  if (split.dim < 0 || split.dim >= type.getRank() || type.getDimSize(split.dim) == 1)
    return; // broadcast along the split dimension: every device reads it whole
  locals.push_back({op, operand, split});
}

LogicalResult Batcher::propagateElementwise(Operation *op, std::string &why) {
  RankedTensorType result = staticType(op->getResult(0));
  if (!result) {
    why = "its result has a dynamic shape";
    return failure();
  }
  int64_t rank = result.getRank();
  std::optional<Split> split;
  for (Value operand : op->getOperands()) {
    std::optional<Split> own = splitOf(operand);
    if (!own)
      continue;
    auto type = cast<RankedTensorType>(operand.getType());
    Split aligned{own->dim + rank - type.getRank(), own->block};
    if (type.getDimSize(own->dim) != result.getDimSize(aligned.dim)) {
      why = "it broadcasts a split operand along the batch";
      return failure();
    }
    if (split && !(*split == aligned)) {
      why = "it combines operands whose samples lie along different dimensions";
      return failure();
    }
    split = aligned;
  }
  for (auto [i, operand] : llvm::enumerate(op->getOperands()))
    if (!splits.count(operand))
      if (auto type = dyn_cast<RankedTensorType>(operand.getType()))
        readLocally(op, i, Split{split->dim - (rank - type.getRank()), split->block});
  splits[op->getResult(0)] = *split;
  return success();
}

LogicalResult Batcher::propagateMatmul(graph::MatmulOp op, std::string &why) {
  Value lhs = op.getLhs(), rhs = op.getRhs();
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  RankedTensorType result = staticType(op.getResult());
  if (!result || lhsType.getRank() < 2 || rhsType.getRank() < 2) {
    why = "it is not a static product of matrices";
    return failure();
  }
  int64_t rank = result.getRank(), lhsRank = lhsType.getRank(), rhsRank = rhsType.getRank();
  std::optional<Split> lhsSplit = splitOf(lhs), rhsSplit = splitOf(rhs);
  if ((lhsSplit && lhsSplit->dim == lhsRank - 1) || (rhsSplit && rhsSplit->dim == rhsRank - 2)) {
    why = "it sums over the dimension that holds the batch";
    return failure();
  }
  bool lhsRows = lhsSplit && lhsSplit->dim == lhsRank - 2;
  bool rhsColumns = rhsSplit && rhsSplit->dim == rhsRank - 1;
  if ((lhsRows || rhsColumns) && lhsSplit && rhsSplit) {
    why = "both operands hold the batch, in rows and columns";
    return failure();
  }
  if (lhsRows) {
    splits[op.getResult()] = Split{rank - 2, lhsSplit->block};
    return success();
  }
  if (rhsColumns) {
    splits[op.getResult()] = Split{rank - 1, rhsSplit->block};
    return success();
  }
  // The splits are on batch dimensions of the product now.
  std::optional<Split> l, r;
  if (lhsSplit)
    l = Split{lhsSplit->dim + rank - lhsRank, lhsSplit->block};
  if (rhsSplit)
    r = Split{rhsSplit->dim + rank - rhsRank, rhsSplit->block};
  if (l && r && !(*l == *r)) {
    why = "its operands hold the batch along different dimensions";
    return failure();
  }
  Split split = l ? *l : *r;
  unsigned other = l ? 1 : 0;
  if (!(l && r)) {
    auto otherType = cast<RankedTensorType>(op->getOperand(other).getType());
    int64_t dim = split.dim - (rank - otherType.getRank());
    if (dim >= 0 && dim < otherType.getRank() - 2)
      readLocally(op, other, Split{dim, split.block});
  }
  splits[op.getResult()] = split;
  return success();
}

LogicalResult Batcher::propagateGemm(graph::GemmOp op, std::string &why) {
  RankedTensorType result = staticType(op.getResult());
  if (!result) {
    why = "its result has a dynamic shape";
    return failure();
  }
  std::optional<Split> a = splitOf(op.getA()), b = splitOf(op.getB());
  int64_t rowsOfA = op.getTransA() ? 1 : 0, columnsOfB = op.getTransB() ? 0 : 1;
  if ((a && a->dim != rowsOfA) || (b && b->dim != columnsOfB)) {
    why = "it sums over the dimension that holds the batch";
    return failure();
  }
  if (a && b) {
    why = "both operands hold the batch, in rows and columns";
    return failure();
  }
  Split split = a ? Split{0, a->block} : Split{1, b->block};
  if (Value c = op.getC()) {
    std::optional<Split> own = splitOf(c);
    auto type = cast<RankedTensorType>(c.getType());
    if (own) {
      Split aligned{own->dim + 2 - type.getRank(), own->block};
      if (!(aligned == split) || type.getDimSize(own->dim) != result.getDimSize(split.dim)) {
        why = "its addend holds the batch elsewhere";
        return failure();
      }
    } else {
      readLocally(op, 2, Split{split.dim - (2 - type.getRank()), split.block});
    }
  }
  splits[op.getResult()] = split;
  return success();
}

/// Normalizes a possibly negative axis of a tensor of rank `rank`.
int64_t axisOf(int64_t axis, int64_t rank) { return axis < 0 ? axis + rank : axis; }

LogicalResult Batcher::propagate(Operation *op, std::string &why) {
  if (graph::isElementwise(op))
    return propagateElementwise(op, why);
  if (auto matmul = dyn_cast<graph::MatmulOp>(op))
    return propagateMatmul(matmul, why);
  if (auto gemm = dyn_cast<graph::GemmOp>(op))
    return propagateGemm(gemm, why);

  if (op->getNumOperands() == 0 || op->getNumRegions() != 0) {
    why = "it is not an op the batch split knows";
    return failure();
  }
  Value input = op->getOperand(0);
  std::optional<Split> inputSplit = splitOf(input);
  RankedTensorType inputType = staticType(input);
  if (!inputType || !llvm::all_of(op->getResults(), [](Value v) { return bool(staticType(v)); })) {
    why = "it has a dynamic shape";
    return failure();
  }
  // Beside its first operand an op may read only replicated operands that carry no batch
  // (weights, scales, pad values, indices).
  for (Value operand : op->getOperands().drop_front())
    if (splits.count(operand) && !isa<graph::GatherOp, graph::ConcatOp>(op)) {
      why = "it reads the batch in an operand that is not its input";
      return failure();
    }
  auto setAll = [&](Split split) {
    for (Value result : op->getResults())
      splits[result] = split;
    return success();
  };

  // Gather: the batch in the indices (an embedding lookup) or in the table along another axis.
  if (auto gatherOp = dyn_cast<graph::GatherOp>(op)) {
    int64_t axis = axisOf(gatherOp.getAxis(), inputType.getRank());
    auto indices = cast<RankedTensorType>(gatherOp.getIndices().getType());
    std::optional<Split> indexSplit = splitOf(gatherOp.getIndices());
    if (inputSplit && indexSplit) {
      why = "both the table and the indices hold the batch";
      return failure();
    }
    if (indexSplit)
      return setAll(Split{axis + indexSplit->dim, indexSplit->block});
    if (inputSplit->dim == axis) {
      why = "it gathers along the dimension that holds the batch";
      return failure();
    }
    int64_t dim = inputSplit->dim < axis ? inputSplit->dim : inputSplit->dim + indices.getRank() - 1;
    return setAll(Split{dim, inputSplit->block});
  }
  if (auto concat = dyn_cast<graph::ConcatOp>(op)) {
    std::optional<Split> split;
    for (Value operand : concat.getInputs())
      if (std::optional<Split> own = splitOf(operand)) {
        if (split && !(*split == *own)) {
          why = "it joins values that hold the batch along different dimensions";
          return failure();
        }
        split = own;
      }
    if (static_cast<int64_t>(concat.getAxis()) == split->dim) {
      why = "it joins along the dimension that holds the batch";
      return failure();
    }
    for (auto [i, operand] : llvm::enumerate(concat.getInputs()))
      if (!splits.count(operand))
        readLocally(op, i, *split);
    return setAll(*split);
  }
  Split split = *inputSplit;

  // Ops that keep the element order: the result dimension the ownership pattern lies in.
  if (isa<graph::ReshapeOp, graph::SqueezeOp, graph::UnsqueezeOp, graph::FlattenOp>(op)) {
    if (std::optional<Split> carried = reshapedSplit(
            inputType, staticType(op->getResult(0)).getShape(), split, devices))
      return setAll(*carried);
    why = "it reshapes the batch apart";
    return failure();
  }
  if (auto transpose = dyn_cast<graph::TransposeOp>(op)) {
    for (auto [d, from] : llvm::enumerate(transpose.getPermutation()))
      if (from == split.dim)
        return setAll(Split{static_cast<int64_t>(d), split.block});
  }
  if (auto splitOp = dyn_cast<graph::SplitOp>(op)) {
    if (static_cast<int64_t>(splitOp.getAxis()) == split.dim) {
      why = "it cuts the dimension that holds the batch";
      return failure();
    }
    return setAll(split);
  }
  if (auto slice = dyn_cast<graph::SliceOp>(op)) {
    int64_t d = split.dim;
    if (slice.getStarts()[d] != 0 || slice.getLimits()[d] != inputType.getDimSize(d) ||
        slice.getStrides()[d] != 1) {
      why = "it slices the dimension that holds the batch";
      return failure();
    }
    return setAll(split);
  }
  if (auto expand = dyn_cast<graph::ExpandOp>(op)) {
    auto result = staticType(expand.getResult());
    Split aligned{split.dim + result.getRank() - inputType.getRank(), split.block};
    if (result.getDimSize(aligned.dim) != inputType.getDimSize(split.dim)) {
      why = "it broadcasts along the dimension that holds the batch";
      return failure();
    }
    return setAll(aligned);
  }
  if (auto pad = dyn_cast<graph::PadOp>(op)) {
    if (pad.getPadLow()[split.dim] != 0 || pad.getPadHigh()[split.dim] != 0) {
      why = "it pads the dimension that holds the batch";
      return failure();
    }
    return setAll(split);
  }
  if (auto resize = dyn_cast<graph::ResizeOp>(op)) {
    if (staticType(resize.getResult()).getDimSize(split.dim) != inputType.getDimSize(split.dim)) {
      why = "it resizes the dimension that holds the batch";
      return failure();
    }
    return setAll(split);
  }
  // Normalizations and scans along one axis; arg reductions and top-k along one axis.
  if (isa<graph::SoftmaxOp, graph::LogSoftmaxOp, graph::CumsumOp, graph::CumprodOp,
          graph::TopKOp>(op)) {
    int64_t axis = axisOf(cast<IntegerAttr>(op->getAttr("axis")).getInt(), inputType.getRank());
    if (axis == split.dim) {
      why = "it runs along the dimension that holds the batch";
      return failure();
    }
    return setAll(split);
  }
  if (auto norm = dyn_cast<graph::LayerNormOp>(op)) {
    if (axisOf(norm.getAxis(), inputType.getRank()) <= split.dim) {
      why = "it normalizes over the dimension that holds the batch";
      return failure();
    }
    return setAll(split);
  }
  if (isa<graph::ArgMaxOp, graph::ArgMinOp>(op)) {
    int64_t axis = axisOf(cast<IntegerAttr>(op->getAttr("axis")).getInt(), inputType.getRank());
    if (axis == split.dim) {
      why = "it reduces over the dimension that holds the batch";
      return failure();
    }
    bool keep = cast<BoolAttr>(op->getAttr("keepdims")).getValue();
    return setAll(Split{!keep && axis < split.dim ? split.dim - 1 : split.dim, split.block});
  }
  if (isa<graph::ReduceMaxOp, graph::ReduceMeanOp, graph::ReduceMinOp, graph::ReduceProdOp,
          graph::ReduceSumOp>(op)) {
    auto axes = cast<DenseI64ArrayAttr>(op->getAttr("axes")).asArrayRef();
    bool keep = cast<BoolAttr>(op->getAttr("keepdims")).getValue();
    int64_t dim = split.dim;
    // No axes: the operand as it is.
    for (int64_t axis : axes) {
      axis = axisOf(axis, inputType.getRank());
      if (axis == split.dim) {
        why = "it reduces over the dimension that holds the batch";
        return failure();
      }
      if (!keep && axis < split.dim)
        --dim;
    }
    return setAll(Split{dim, split.block});
  }
  // Convolutions, pooling, batch normalization: the samples are dimension 0.
  if (isa<graph::ConvOp, graph::ConvTransposeOp, graph::AvgPoolOp, graph::MaxPoolOp,
          graph::GlobalAvgPoolOp, graph::GlobalMaxPoolOp, graph::BatchNormOp>(op)) {
    if (split.dim != 0) {
      why = "it mixes what dimension " + std::to_string(split.dim) +
            " holds, where the batch is";
      return failure();
    }
    return setAll(split);
  }
  why = "it is not an op the batch split knows";
  return failure();
}

Value Batcher::localPart(OpBuilder &builder, Location loc, Value value, Split split) {
  if (isConstant(value))
    return sliceConstant(builder, value, split, devices, rank);
  // [outer..., size, inner...] as [outer..., k, devices, block, inner...], the device's index
  // taken: exact for any block-cyclic split.
  auto type = cast<RankedTensorType>(value.getType());
  ArrayRef<int64_t> shape = type.getShape();
  int64_t size = shape[split.dim], k = size / (split.block * devices);
  SmallVector<int64_t> blocked(shape.take_front(split.dim));
  llvm::append_range(blocked, ArrayRef<int64_t>{k, devices, split.block});
  llvm::append_range(blocked, shape.drop_front(split.dim + 1));
  Value view = graph::ReshapeOp::create(builder, loc, type.clone(blocked), value,
                                        builder.getDenseI64ArrayAttr(blocked));
  SmallVector<int64_t> starts(blocked.size(), 0), limits(blocked), strides(blocked.size(), 1);
  starts[split.dim + 1] = rank;
  limits[split.dim + 1] = rank + 1;
  SmallVector<int64_t> taken(blocked);
  taken[split.dim + 1] = 1;
  Value part = graph::SliceOp::create(builder, loc, type.clone(taken), view,
                                      builder.getDenseI64ArrayAttr(starts),
                                      builder.getDenseI64ArrayAttr(limits),
                                      builder.getDenseI64ArrayAttr(strides));
  RankedTensorType local = localType(type, split, devices);
  return graph::ReshapeOp::create(builder, loc, local, part,
                                  builder.getDenseI64ArrayAttr(local.getShape()));
}

Value Batcher::gathered(OpBuilder &builder, Location loc, Value value, Split split,
                        RankedTensorType whole) {
  auto local = cast<RankedTensorType>(value.getType());
  SmallVector<int64_t> all{devices};
  llvm::append_range(all, local.getShape());
  auto allType = local.clone(all);
  SymbolTable symbols(module);
  func::FuncOp callee =
      libraryCallDeclaration(symbols, module, gather, builder.getFunctionType({local}, {allType}));
  auto call = func::CallOp::create(builder, loc, callee, ValueRange{value});
  call->setAttr(contract::param::kDevices.name, builder.getI64IntegerAttr(devices));
  return joinStacked(builder, loc, call.getResult(0), split, whole);
}

void Batcher::rewrite() {
  OpBuilder builder(module.getContext());
  Block &body = entry.getBody().front();
  // The model's inputs, whole on every device: each takes its samples.
  builder.setInsertionPointToStart(&body);
  for (BlockArgument argument : entry.getArguments())
    if (std::optional<Split> split = splitOf(argument)) {
      auto type = cast<RankedTensorType>(argument.getType());
      SmallVector<int64_t> starts(type.getRank(), 0), limits(type.getShape()),
          strides(type.getRank(), 1);
      int64_t part = type.getDimSize(0) / devices;
      starts[0] = rank * part;
      limits[0] = (rank + 1) * part;
      Value mine = graph::SliceOp::create(
          builder, argument.getLoc(), localType(type, *split, devices), argument,
          builder.getDenseI64ArrayAttr(starts), builder.getDenseI64ArrayAttr(limits),
          builder.getDenseI64ArrayAttr(strides));
      argument.replaceAllUsesExcept(mine, mine.getDefiningOp());
      splits[mine] = *split;
    }
  for (const LocalOperand &local : locals) {
    builder.setInsertionPoint(local.op);
    Value whole = local.op->getOperand(local.operand);
    local.op->setOperand(local.operand,
                         localPart(builder, local.op->getLoc(), whole, local.split));
    if (whole.use_empty() && isConstant(whole))
      whole.getDefiningOp()->erase();
  }
  for (Operation *op : splitOps) {
    for (Value result : op->getResults())
      result.setType(localType(cast<RankedTensorType>(result.getType()), splits.lookup(result),
                               devices));
    auto localShape = [&]() { return cast<RankedTensorType>(op->getResult(0).getType()).getShape(); };
    if (auto reshape = dyn_cast<graph::ReshapeOp>(op))
      reshape.setShape(localShape());
    if (auto expand = dyn_cast<graph::ExpandOp>(op))
      expand.setShape(localShape());
    if (auto resize = dyn_cast<graph::ResizeOp>(op); resize && !resize.getSizes().empty())
      resize.setSizes(localShape());
    if (auto slice = dyn_cast<graph::SliceOp>(op)) {
      // The sliced dims are others: along the batch the slice takes the device's part whole.
      int64_t dim = splits.lookup(slice.getResult()).dim;
      SmallVector<int64_t> limits(slice.getLimits());
      limits[dim] = localShape()[dim];
      slice.setLimits(limits);
    }
  }
  // The outputs: every device's part, gathered; or, for one part of a batch, the part.
  Operation *terminator = body.getTerminator();
  if (gather.empty()) {
    entry.setType(FunctionType::get(module.getContext(), entry.getArgumentTypes(),
                                    terminator->getOperandTypes()));
    return;
  }
  builder.setInsertionPoint(terminator);
  for (OpOperand &operand : terminator->getOpOperands()) {
    auto whole = cast<RankedTensorType>(entry.getResultTypes()[operand.getOperandNumber()]);
    std::optional<Split> split = splitOf(operand.get());
    if (!split)
      continue;
    operand.set(gathered(builder, terminator->getLoc(), operand.get(), *split, whole));
  }
}

LogicalResult Batcher::run() {
  if (devices < 2 || rank < 0 || rank >= devices)
    return module.emitError() << pass << ": rank " << rank << " is not one of " << devices
                              << " devices";
  if (failed(analyze()))
    return failure();
  setPredictedRun(module, predictedMilliseconds);
  rewrite();
  setPartitionReport(module, report);
  return success();
}

LogicalResult Batcher::analyze() {
  // The batch: dimension 0 of the inputs. Inputs of another size there (or scalars) are read
  // whole by every device.
  int64_t batch = -1;
  SmallVector<std::string> splitInputs, wholeInputs;
  auto nameOf = [&](unsigned i) {
    auto name = entry.getArgAttrOfType<StringAttr>(i, ::kiln::attrs::kName);
    return name ? name.getValue().str() : "#" + std::to_string(i);
  };
  for (BlockArgument argument : entry.getArguments()) {
    RankedTensorType type = staticType(argument);
    if (!type)
      return entry.emitError() << pass << ": input '" << nameOf(argument.getArgNumber())
                               << "' has a dynamic shape";
    if (batch < 0 && type.getRank() > 0)
      batch = type.getDimSize(0);
  }
  if (batch < 0)
    return entry.emitError() << pass << ": no input has a batch dimension";
  if (batch % devices != 0)
    return entry.emitError() << pass << ": the batch of " << batch
                             << " (dimension 0 of input '" << nameOf(0)
                             << "') does not divide into " << devices
                             << (gather.empty() ? " parts" : " devices")
                             << "; compile a batch that is a multiple of " << devices;
  for (BlockArgument argument : entry.getArguments()) {
    auto type = cast<RankedTensorType>(argument.getType());
    if (type.getRank() > 0 && type.getDimSize(0) == batch) {
      splits[argument] = Split{0, batch / devices};
      splitInputs.push_back(nameOf(argument.getArgNumber()));
    } else {
      wholeInputs.push_back(nameOf(argument.getArgNumber()));
    }
  }

  // The work of every op at the whole model's types, before any is split.
  std::optional<fusion::DeviceDescription> cpu = fusion::DeviceDescription::named("cpu");
  double whole = 0, splitSeconds = 0;
  Block &body = entry.getBody().front();
  for (Operation &op : body.without_terminator()) {
    double seconds = isa<graph::ConstantOp>(op) ? 0.0 : fusion::kernelSeconds(*cpu, workOf(&op));
    whole += seconds;
    if (!llvm::any_of(op.getOperands(), [&](Value v) { return splits.count(v) != 0; }))
      continue;
    std::string why;
    if (failed(propagate(&op, why)))
      return op.emitError() << pass << ": " << describe(&op)
                            << " does not keep the samples of the batch apart: " << why;
    for (Value result : op.getResults())
      if (!divides(cast<RankedTensorType>(result.getType()), splits.lookup(result), devices))
        return op.emitError() << pass << ": " << describe(&op)
                              << " has a result whose batch does not divide into the devices";
    splitOps.push_back(&op);
    splitSeconds += seconds - cpu->launchSeconds;
  }
  double gatherBytes = 0, gatherTime = 0;
  int64_t gathers = 0;
  for (Value value : body.getTerminator()->getOperands())
    if (splits.count(value)) {
      double bytes = fusion::tensorBytes(value.getType());
      gatherBytes += bytes;
      gatherTime += allGatherSeconds(bytes, devices);
      ++gathers;
    }

  report.push_back(
      llvm::formatv("batch parallel over {0} devices (this program: device {1}): a batch of {2} "
                    "in parts of {3}; inputs split: {4}{5}; {6} ops split, {7} computed whole on "
                    "every device; {8} outputs gathered ({9})",
                    devices, rank, batch, batch / devices, llvm::join(splitInputs, ", "),
                    wholeInputs.empty() ? "" : "; read whole: " + llvm::join(wholeInputs, ", "),
                    splitOps.size(),
                    llvm::count_if(body.without_terminator(),
                                   [](Operation &op) { return !isa<graph::ConstantOp>(op); }) -
                        splitOps.size(),
                    gathers, mebibytes(uint64_t(gatherBytes)))
          .str());
  double device = whole - splitSeconds + splitSeconds / double(devices);
  double shared = double(devices) * (whole - splitSeconds) + splitSeconds;
  report.push_back(llvm::formatv("predicted run (cost model '{0}'): one device {1:F2} ms; {2} "
                                 "devices, each on a host of its own, {3:F2} ms (compute {4:F2} "
                                 "ms, {5} all-gathers of {6} {7:F2} ms); {2} devices sharing one "
                                 "host {8:F2} ms",
                                 cpu->name, whole * 1e3, devices, (device + gatherTime) * 1e3,
                                 device * 1e3, gathers, mebibytes(uint64_t(gatherBytes)),
                                 gatherTime * 1e3, (shared + gatherTime) * 1e3)
                       .str());
  predictedMilliseconds = (device + gatherTime) * 1e3;
  return success();
}

class PartitionBatchPass : public impl::PartitionBatchPassBase<PartitionBatchPass> {
public:
  using PartitionBatchPassBase::PartitionBatchPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(partitionEntry(module, getArgument(), [&](func::FuncOp entry) {
          return Batcher(module, entry, devices, rank, gather).run();
        })))
      signalPassFailure();
  }
};

} // namespace

namespace partition {

LogicalResult splitIntoBatchPart(ModuleOp module, func::FuncOp function, int64_t parts,
                                 int64_t part, StringRef pass,
                                 SmallVectorImpl<std::optional<Split>> &resultSplits) {
  Batcher batcher(module, function, parts, part, /*gather=*/"", pass);
  if (failed(batcher.analyze()))
    return failure();
  Operation *terminator = function.getBody().front().getTerminator();
  for (Value result : terminator->getOperands())
    resultSplits.push_back(batcher.splitOf(result));
  batcher.rewrite();
  return success();
}

Value joinParts(OpBuilder &builder, Location loc, ValueRange parts, Split split,
                RankedTensorType whole) {
  SmallVector<Value> stacked;
  auto local = cast<RankedTensorType>(parts.front().getType());
  SmallVector<int64_t> one{1};
  llvm::append_range(one, local.getShape());
  for (Value part : parts)
    stacked.push_back(graph::ReshapeOp::create(builder, loc, local.clone(one), part,
                                               builder.getDenseI64ArrayAttr(one)));
  SmallVector<int64_t> all{static_cast<int64_t>(parts.size())};
  llvm::append_range(all, local.getShape());
  Value joined = graph::ConcatOp::create(builder, loc, local.clone(all), stacked,
                                         builder.getI64IntegerAttr(0));
  return joinStacked(builder, loc, joined, split, whole);
}

} // namespace partition
} // namespace kiln
