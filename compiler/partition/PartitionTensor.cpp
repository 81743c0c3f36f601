//===- PartitionTensor.cpp - Megatron-style tensor parallelism ----------------===//
//
// kiln-partition-tensor (Passes.td): column-parallel regions grown forward from matmuls with
// constant weights, ended by row-parallel matmuls and one all-reduce each; the entry function
// rewritten into one device's part.
//
// A split value is described by partition::Split (compiler/partition/Split.h).
//
//===----------------------------------------------------------------------===//

#include "compiler/partition/Passes.h"

#include "compiler/partition/EntryFunction.h"
#include "compiler/partition/PartitionCost.h"
#include "compiler/partition/PartitionReport.h"
#include "compiler/partition/Split.h"
#include "contract/library_calls.h"

#include "compiler/fusion/CostModel.h"
#include "compiler/librarycalls/Declarations.h"
#include "dialects/graph/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <optional>
#include <string>
#include <vector>

namespace kiln {
#define GEN_PASS_DEF_PARTITIONTENSORPASS
#include "compiler/partition/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

using namespace partition;

/// A constant operand the device keeps a slice of.
struct SlicedOperand {
  Operation *op;
  unsigned operand;
  Split split; // in the operand's own dimensions
};

/// A column-parallel region: the start, every op whose results are split (in order), and the
/// row-parallel matmuls that end it.
/// A start of a region: a column-parallel matmul and the block its columns are split in.
struct Start {
  graph::MatmulOp matmul;
  int64_t block;
};

/// A replicated operand that would let the region go on if it were split like `split`: the
/// partitioner then looks for the matmul it comes from and makes that a start too (the key and
/// value projections that meet the query's at Q·Kᵀ and P·V, the up projection that meets the gate
/// in a gated MLP).
struct Need {
  Value value;
  Split split;
};

struct Region {
  /// The split of `value`, if it is one of the region's.
  std::optional<Split> splitOf(Value value) const {
    auto it = values.find(value);
    return it == values.end() ? std::nullopt : std::optional<Split>(it->second);
  }

  SmallVector<Start> starts;
  std::optional<Need> need;
  llvm::DenseMap<Value, Split> values;
  SmallVector<Operation *> ops;
  SmallVector<SlicedOperand> sliced;
  SmallVector<graph::MatmulOp> ends;
};

class Partitioner {
public:
  Partitioner(ModuleOp module, func::FuncOp entry, int64_t devices, int64_t rank,
              StringRef collective)
      : module(module), entry(entry), devices(devices), rank(rank), collective(collective) {}

  LogicalResult run();

private:
  /// Grows the region of `starts` (each with its columns split in blocks of its block) forward
  /// in program order; on failure, `why` says what stopped it and `need` names a replicated
  /// operand that another start could split.
  std::optional<Region> grow(ArrayRef<Start> starts, std::string &why, std::optional<Need> &need);
  /// grow, adding as starts the matmuls that the region's needs come from (at most
  /// `kMaxStarts` starts).
  std::optional<Region> growPulling(SmallVector<Start> starts, std::string &why);
  /// The one unclaimed candidate matmul `value` is computed from (side inputs that hold no matmul
  /// aside), or null.
  graph::MatmulOp originOf(Value value);
  /// The blocks a start's columns may be split in, the largest first.
  SmallVector<int64_t> blocksOf(graph::MatmulOp matmul) const;
  /// The split of the results of `op` given its operands' (in `region`), recording constant
  /// operands to slice; an end (row-parallel matmul) is recorded and yields no split.
  LogicalResult propagate(Operation *op, Region &region, std::string &why);
  LogicalResult propagateElementwise(Operation *op, Region &region, std::string &why);
  LogicalResult propagateMatmul(graph::MatmulOp op, Region &region, std::string &why);

  void rewrite(Region &region);
  RankedTensorType localType(RankedTensorType type, Split split) const {
    return partition::localType(type, split, devices);
  }
  bool divides(RankedTensorType type, Split split) const {
    return partition::divides(type, split, devices);
  }

  ModuleOp module;
  func::FuncOp entry;
  int64_t devices, rank;
  StringRef collective;
  /// Ops some committed region holds (their results split, or an end).
  llvm::DenseSet<Operation *> claimed;
  SmallVector<std::string> report;
  /// Bytes of the weights the regions split (whole, before slicing).
  uint64_t splitBytes = 0;
};

LogicalResult Partitioner::propagateElementwise(Operation *op, Region &region, std::string &why) {
  RankedTensorType result = staticType(op->getResult(0));
  if (!result) {
    why = describe(op) + " has a dynamic shape";
    return failure();
  }
  int64_t rank = result.getRank();
  std::optional<Split> split;
  for (Value operand : op->getOperands()) {
    auto it = region.values.find(operand);
    if (it == region.values.end())
      continue;
    auto type = cast<RankedTensorType>(operand.getType());
    Split aligned{it->second.dim + rank - type.getRank(), it->second.block};
    if (type.getDimSize(it->second.dim) != result.getDimSize(aligned.dim)) {
      why = describe(op) + " broadcasts a split operand along its split dimension";
      return failure();
    }
    if (split && !(*split == aligned)) {
      why = describe(op) + " combines operands split differently";
      return failure();
    }
    split = aligned;
  }
  for (auto [i, operand] : llvm::enumerate(op->getOperands())) {
    if (region.values.count(operand))
      continue;
    auto type = dyn_cast<RankedTensorType>(operand.getType());
    if (!type)
      continue;
    int64_t dim = split->dim - (rank - type.getRank());
    if (dim < 0 || type.getDimSize(dim) == 1)
      continue; // broadcast along the split dimension: every device reads it whole
    if (!isConstant(operand)) {
      why = describe(op) + " reads a replicated value along the split dimension";
      region.need = Need{operand, Split{dim, split->block}};
      return failure();
    }
    region.sliced.push_back({op, static_cast<unsigned>(i), Split{dim, split->block}});
  }
  region.values[op->getResult(0)] = *split;
  return success();
}

LogicalResult Partitioner::propagateMatmul(graph::MatmulOp op, Region &region, std::string &why) {
  Value lhs = op.getLhs(), rhs = op.getRhs();
  auto lhsType = cast<RankedTensorType>(lhs.getType());
  auto rhsType = cast<RankedTensorType>(rhs.getType());
  RankedTensorType result = staticType(op.getResult());
  if (!result || lhsType.getRank() < 2 || rhsType.getRank() < 2) {
    why = describe(op) + " is not a static matmul of matrices";
    return failure();
  }
  int64_t rank = result.getRank();
  std::optional<Split> lhsSplit = region.splitOf(lhs), rhsSplit = region.splitOf(rhs);
  int64_t lhsRank = lhsType.getRank(), rhsRank = rhsType.getRank();
  // Row-parallel: the contraction dimension is split and the weight is a constant matrix.
  if (lhsSplit && lhsSplit->dim == lhsRank - 1) {
    if (rhsSplit || rhsRank != 2 || !isConstant(rhs)) {
      why = describe(op) + " contracts over the split dimension with a weight that is not a "
                           "constant matrix";
      return failure();
    }
    region.sliced.push_back({op, 1, Split{0, lhsSplit->block}});
    region.ends.push_back(op);
    return success();
  }
  if (rhsSplit && rhsSplit->dim == rhsRank - 2) {
    why = describe(op) + " contracts over a split dimension of its right operand";
    return failure();
  }
  // Batched: both split alike on one batch dimension, or one split and the other broadcast.
  auto batchOf = [&](std::optional<Split> split, int64_t operandRank) -> std::optional<Split> {
    if (!split)
      return std::nullopt;
    return Split{split->dim + rank - operandRank, split->block};
  };
  std::optional<Split> l = batchOf(lhsSplit, lhsRank), r = batchOf(rhsSplit, rhsRank);
  if (lhsSplit && lhsSplit->dim == lhsRank - 2) {
    if (rhsSplit) {
      why = describe(op) + " splits both the rows and its right operand";
      return failure();
    }
    region.values[op.getResult()] = Split{rank - 2, lhsSplit->block};
    return success();
  }
  if (rhsSplit && rhsSplit->dim == rhsRank - 1) {
    if (lhsSplit) {
      why = describe(op) + " splits both the columns and its left operand";
      return failure();
    }
    region.values[op.getResult()] = Split{rank - 1, rhsSplit->block};
    return success();
  }
  // Both splits are on batch dimensions now.
  if (l && r && !(*l == *r)) {
    why = describe(op) + " multiplies operands split on different batch dimensions";
    return failure();
  }
  Split split = l ? *l : *r;
  Value other = l ? rhs : lhs;
  if (!(l && r)) {
    auto otherType = cast<RankedTensorType>(other.getType());
    int64_t dim = split.dim - (rank - otherType.getRank());
    if (dim >= 0 && dim < otherType.getRank() - 2 && otherType.getDimSize(dim) != 1) {
      why = describe(op) + " multiplies a split operand with a replicated batch";
      region.need = Need{other, Split{dim, split.block}};
      return failure();
    }
  }
  region.values[op.getResult()] = split;
  return success();
}

LogicalResult Partitioner::propagate(Operation *op, Region &region, std::string &why) {
  if (claimed.contains(op)) {
    why = describe(op) + " belongs to another region";
    return failure();
  }
  if (graph::isElementwise(op))
    return propagateElementwise(op, region, why);
  if (auto matmul = dyn_cast<graph::MatmulOp>(op))
    return propagateMatmul(matmul, region, why);

  Value input = op->getNumOperands() > 0 ? op->getOperand(0) : Value();
  auto inputIt = input ? region.values.find(input) : region.values.end();
  if (inputIt == region.values.end() || op->getNumOperands() == 0) {
    why = describe(op) + " reads a split value";
    return failure();
  }
  Split split = inputIt->second;
  auto inputType = staticType(input);
  if (!inputType || !llvm::all_of(op->getResults(), [](Value v) { return bool(staticType(v)); })) {
    why = describe(op) + " has a dynamic shape";
    return failure();
  }

  // Ops that keep the element order: find the result dimension the ownership pattern lies in.
  if (isa<graph::ReshapeOp, graph::SqueezeOp, graph::UnsqueezeOp, graph::FlattenOp>(op)) {
    if (std::optional<Split> carried = reshapedSplit(
            inputType, staticType(op->getResult(0)).getShape(), split, devices)) {
      region.values[op->getResult(0)] = *carried;
      return success();
    }
    why = describe(op) + " reshapes the split dimension apart";
    return failure();
  }
  if (auto transpose = dyn_cast<graph::TransposeOp>(op)) {
    ArrayRef<int64_t> permutation = transpose.getPermutation();
    for (auto [d, from] : llvm::enumerate(permutation))
      if (from == split.dim) {
        region.values[op->getResult(0)] = Split{static_cast<int64_t>(d), split.block};
        return success();
      }
  }
  if (auto splitOp = dyn_cast<graph::SplitOp>(op)) {
    if (static_cast<int64_t>(splitOp.getAxis()) == split.dim) {
      for (int64_t size : splitOp.getSizes())
        if (size % (split.block * devices) != 0) {
          why = describe(op) + " cuts the split dimension into parts that are not whole blocks";
          return failure();
        }
    }
    for (Value result : splitOp.getResults())
      region.values[result] = split;
    return success();
  }
  if (auto slice = dyn_cast<graph::SliceOp>(op)) {
    // Slices of other dimensions (rotary embeddings' halves of a head) keep the split.
    int64_t d = split.dim;
    if (slice.getStarts()[d] != 0 || slice.getLimits()[d] != inputType.getDimSize(d) ||
        slice.getStrides()[d] != 1) {
      why = describe(op) + " slices the split dimension";
      return failure();
    }
    region.values[op->getResult(0)] = split;
    return success();
  }
  if (auto concat = dyn_cast<graph::ConcatOp>(op)) {
    if (static_cast<int64_t>(concat.getAxis()) == split.dim) {
      why = describe(op) + " joins along the split dimension";
      return failure();
    }
    for (Value operand : concat.getInputs()) {
      std::optional<Split> joined = region.splitOf(operand);
      if (!joined) {
        why = describe(op) + " joins a split value with a replicated one";
        region.need = Need{operand, split};
        return failure();
      }
      if (!(*joined == split)) {
        why = describe(op) + " joins values split differently";
        return failure();
      }
    }
    region.values[op->getResult(0)] = split;
    return success();
  }
  if (auto expand = dyn_cast<graph::ExpandOp>(op)) {
    // Broadcasting other dimensions (grouped-query attention's shared key and value heads).
    auto result = staticType(expand.getResult());
    Split aligned{split.dim + result.getRank() - inputType.getRank(), split.block};
    if (result.getDimSize(aligned.dim) != inputType.getDimSize(split.dim)) {
      why = describe(op) + " broadcasts along the split dimension";
      return failure();
    }
    region.values[op->getResult(0)] = aligned;
    return success();
  }
  if (isa<graph::SoftmaxOp, graph::LogSoftmaxOp>(op)) {
    int64_t axis = cast<IntegerAttr>(op->getAttr("axis")).getInt();
    if (axis == split.dim) {
      why = describe(op) + " normalizes along the split dimension";
      return failure();
    }
    region.values[op->getResult(0)] = split;
    return success();
  }
  if (auto norm = dyn_cast<graph::LayerNormOp>(op)) {
    if (static_cast<int64_t>(norm.getAxis()) <= split.dim) {
      why = describe(op) + " normalizes over the split dimension";
      return failure();
    }
    region.values[op->getResult(0)] = split;
    return success();
  }
  why = describe(op) + " reads a split value";
  return failure();
}

std::optional<Region> Partitioner::grow(ArrayRef<Start> starts, std::string &why,
                                        std::optional<Need> &need) {
  Region region;
  region.starts.assign(starts.begin(), starts.end());
  Operation *first = starts.front().matmul;
  for (const Start &start : starts)
    if (start.matmul->isBeforeInBlock(first))
      first = start.matmul;
  // Uses of split values not yet visited, and starts not reached; the walk stops at none.
  int64_t open = 0;
  size_t pendingStarts = starts.size();
  for (Operation *op = first; op && (open > 0 || pendingStarts > 0); op = op->getNextNode()) {
    const Start *start = llvm::find_if(starts, [&](const Start &s) { return s.matmul == op; });
    int64_t reads =
        llvm::count_if(op->getOperands(), [&](Value v) { return region.values.count(v) != 0; });
    open -= reads;
    if (start != starts.end()) {
      --pendingStarts;
      RankedTensorType result = staticType(op->getResult(0));
      Split columns{result ? result.getRank() - 1 : 0, start->block};
      if (!result || !divides(result, columns) || reads != 0) {
        why = describe(op) + "'s columns do not divide into the devices";
        return std::nullopt;
      }
      region.values[op->getResult(0)] = columns;
      region.sliced.push_back({op, 1, Split{1, start->block}});
      region.ops.push_back(op);
      open += std::distance(op->use_begin(), op->use_end());
      continue;
    }
    if (reads == 0)
      continue;
    if (op->getNumRegions() != 0 || isa<func::ReturnOp>(op)) {
      why = describe(op) + " reads a split value";
      return std::nullopt;
    }
    size_t ends = region.ends.size();
    if (failed(propagate(op, region, why))) {
      need = region.need;
      return std::nullopt;
    }
    if (region.ends.size() != ends)
      continue;
    region.ops.push_back(op);
    for (Value value : op->getResults()) {
      auto it = region.values.find(value);
      if (it == region.values.end() ||
          !divides(cast<RankedTensorType>(value.getType()), it->second)) {
        why = describe(op) + " has a result that does not divide into the devices";
        return std::nullopt;
      }
      open += std::distance(value.use_begin(), value.use_end());
    }
  }
  if (open > 0) {
    why = "a split value is read outside the function's body";
    return std::nullopt;
  }
  if (region.ends.empty()) {
    why = "no matmul contracts over the split";
    return std::nullopt;
  }
  return region;
}

graph::MatmulOp Partitioner::originOf(Value value) {
  // Backwards through everything `value` is computed from, stopping at matmuls: the one
  // candidate found is its origin. Side inputs that come from the function's arguments alone
  // (rotary tables computed from positions, masks) hold no matmul and are left replicated.
  graph::MatmulOp origin;
  llvm::DenseSet<Operation *> visited;
  SmallVector<Value> pending{value};
  while (!pending.empty()) {
    Operation *op = pending.pop_back_val().getDefiningOp();
    if (!op || isa<graph::ConstantOp>(op) || !visited.insert(op).second)
      continue;
    if (op->getParentOp() != entry.getOperation() || visited.size() > 256)
      return nullptr;
    if (auto matmul = dyn_cast<graph::MatmulOp>(op)) {
      auto rhs = dyn_cast<RankedTensorType>(matmul.getRhs().getType());
      if (!rhs || rhs.getRank() != 2 || !isConstant(matmul.getRhs()) || claimed.contains(op) ||
          (origin && origin != matmul))
        return nullptr; // another product, or two weights: not one projection's value
      origin = matmul;
      continue;
    }
    llvm::append_range(pending, op->getOperands());
  }
  return origin;
}

SmallVector<int64_t> Partitioner::blocksOf(graph::MatmulOp matmul) const {
  SmallVector<int64_t> blocks;
  RankedTensorType result = staticType(matmul.getResult());
  if (!result || result.getShape().back() % devices != 0)
    return blocks;
  int64_t share = result.getShape().back() / devices;
  for (int64_t block = share; block >= 1; --block)
    if (share % block == 0)
      blocks.push_back(block);
  return blocks;
}

/// The most matmuls one region starts from (a query, key and value projection, with room for a
/// gated MLP's two).
constexpr size_t kMaxStarts = 4;

std::optional<Region> Partitioner::growPulling(SmallVector<Start> starts, std::string &why) {
  std::optional<Need> need;
  std::optional<Region> region = grow(starts, why, need);
  if (region || !need || starts.size() >= kMaxStarts)
    return region;
  graph::MatmulOp origin = originOf(need->value);
  if (!origin || llvm::any_of(starts, [&](const Start &s) { return s.matmul == origin; }))
    return std::nullopt;
  for (int64_t block : blocksOf(origin)) {
    SmallVector<Start> more = starts;
    more.push_back({origin, block});
    std::string attempt;
    if (std::optional<Region> grown = growPulling(more, attempt))
      return grown;
  }
  return std::nullopt;
}

void Partitioner::rewrite(Region &region) {
  OpBuilder builder(module.getContext());
  for (const SlicedOperand &s : region.sliced) {
    builder.setInsertionPoint(s.op);
    Value whole = s.op->getOperand(s.operand);
    splitBytes += uint64_t(fusion::tensorBytes(whole.getType()));
    s.op->setOperand(s.operand, sliceConstant(builder, whole, s.split, devices, rank));
    // The whole weight goes when nothing else reads it (the device keeps its part only).
    if (whole.use_empty())
      whole.getDefiningOp()->erase();
  }
  for (Operation *op : region.ops) {
    for (Value result : op->getResults()) {
      Split split = region.values.lookup(result);
      result.setType(localType(cast<RankedTensorType>(result.getType()), split));
    }
    if (auto reshape = dyn_cast<graph::ReshapeOp>(op))
      reshape.setShape(cast<RankedTensorType>(reshape.getType()).getShape());
    if (auto expand = dyn_cast<graph::ExpandOp>(op))
      expand.setShape(cast<RankedTensorType>(expand.getType()).getShape());
    if (auto slice = dyn_cast<graph::SliceOp>(op)) {
      // The split dimension is whole: its limit is the local size.
      Split split = region.values.lookup(slice.getInput());
      SmallVector<int64_t> limits(slice.getLimits());
      limits[split.dim] /= devices;
      slice.setLimits(limits);
    }
    if (auto splitOp = dyn_cast<graph::SplitOp>(op)) {
      Split split = region.values.lookup(splitOp.getInput());
      if (static_cast<int64_t>(splitOp.getAxis()) == split.dim) {
        SmallVector<int64_t> sizes(splitOp.getSizes());
        for (int64_t &size : sizes)
          size /= devices;
        splitOp.setSizes(sizes);
      }
    }
  }
  SymbolTable symbols(module);
  for (graph::MatmulOp end : region.ends) {
    builder.setInsertionPointAfter(end);
    Type type = end.getType();
    func::FuncOp callee = libraryCallDeclaration(symbols, module, collective,
                                                 builder.getFunctionType({type}, {type}));
    auto call = func::CallOp::create(builder, end.getLoc(), callee, ValueRange{end.getResult()});
    call->setAttr(contract::param::kDevices.name, builder.getI64IntegerAttr(devices));
    end.getResult().replaceAllUsesExcept(call.getResult(0), call);
  }
  for (Operation *op : region.ops)
    claimed.insert(op);
  for (graph::MatmulOp end : region.ends)
    claimed.insert(end);
}

LogicalResult Partitioner::run() {
  if (devices < 1 || rank < 0 || rank >= devices)
    return module.emitError() << "kiln-partition-tensor: rank " << rank << " is not one of "
                              << devices << " devices";
  SmallVector<graph::MatmulOp> candidates;
  for (Operation &op : entry.getBody().front())
    if (auto matmul = dyn_cast<graph::MatmulOp>(op)) {
      auto rhs = dyn_cast<RankedTensorType>(matmul.getRhs().getType());
      if (rhs && rhs.getRank() == 2 && isConstant(matmul.getRhs()))
        candidates.push_back(matmul);
    }
  int64_t regions = 0, allReduces = 0;
  uint64_t totalBytes = 0;
  entry.walk([&](graph::ConstantOp constant) {
    totalBytes += uint64_t(fusion::tensorBytes(constant.getType()));
  });
  // The work of every op at the whole model's types, before any is split.
  llvm::DenseMap<Operation *, fusion::KernelWork> work;
  for (Operation &op : entry.getBody().front())
    work[&op] = workOf(&op);
  double allReduceBytes = 0, allReduceTime = 0;
  for (graph::MatmulOp start : candidates) {
    if (claimed.contains(start))
      continue;
    auto result = staticType(start.getResult());
    std::string why = "its result is dynamic";
    std::optional<Region> region;
    if (result && result.getShape().back() % devices != 0)
      why = llvm::formatv("its {0} columns do not divide into {1} devices",
                          result.getShape().back(), devices);
    // The largest block first: the coarsest split that the region's reshapes keep.
    SmallVector<int64_t> blocks = blocksOf(start);
    for (int64_t block : blocks) {
      std::string attempt;
      region = growPulling({Start{start, block}}, attempt);
      if (region)
        break;
      if (block == blocks.front())
        why = attempt; // the reason at the natural block is the one worth reporting
    }
    if (!region) {
      report.push_back("replicated: " + describe(start) + " (" + why + ")");
      continue;
    }
    ++regions;
    allReduces += region->ends.size();
    for (graph::MatmulOp end : region->ends) {
      double bytes = fusion::tensorBytes(end.getType());
      allReduceBytes += bytes;
      allReduceTime += allReduceSeconds(bytes, devices);
    }
    std::string ends;
    for (graph::MatmulOp end : region->ends)
      ends += (ends.empty() ? "" : ", ") + describe(end);
    std::string starts, blocksText;
    for (const Start &s : region->starts) {
      starts += (starts.empty() ? "" : ", ") + describe(s.matmul);
      blocksText += (blocksText.empty() ? "" : ", ") + std::to_string(s.block);
    }
    report.push_back(llvm::formatv("region {0}: {1} split by columns in blocks of {2}, {3} ops, "
                                   "ended by {4} (row-parallel, then all-reduce)",
                                   regions, starts, blocksText, region->ops.size(), ends)
                         .str());
    rewrite(*region);
  }
  report.insert(report.begin(),
                llvm::formatv("tensor parallel over {0} devices (this program: device {1}): {2} "
                              "regions, {3} all-reduces; weights: {4} split (a device holds "
                              "1/{0}), {5} replicated",
                              devices, rank, regions, allReduces, mebibytes(splitBytes),
                              mebibytes(totalBytes > splitBytes ? totalBytes - splitBytes : 0))
                    .str());
  // The cost model's time of one run: every op of one device (the split ones at 1/N of their
  // work) plus the all-reduces, on devices of their own and on N devices sharing this host.
  if (std::optional<fusion::DeviceDescription> cpu = fusion::DeviceDescription::named("cpu")) {
    double whole = 0, split = 0;
    for (auto &[op, opWork] : work) {
      double seconds = fusion::kernelSeconds(*cpu, opWork);
      whole += seconds;
      if (claimed.contains(op))
        split += seconds - cpu->launchSeconds;
    }
    double device = whole - split + split / double(devices);
    // Sharing the host, a device runs at 1/N of its speed: N times its replicated work, plus the
    // split work once.
    double shared = double(devices) * (whole - split) + split;
    report.insert(report.begin() + 1,
                  llvm::formatv("predicted run (cost model '{0}'): one device {1:F2} ms; {2} "
                                "devices, each on a host of its own, {3:F2} ms (compute {4:F2} ms, "
                                "{5} all-reduces of {6} {7:F2} ms); {2} devices sharing one host "
                                "{8:F2} ms",
                                cpu->name, whole * 1e3, devices, (device + allReduceTime) * 1e3,
                                device * 1e3, allReduces, mebibytes(uint64_t(allReduceBytes)),
                                allReduceTime * 1e3, (shared + allReduceTime) * 1e3)
                      .str());
    setPredictedRun(module, (device + allReduceTime) * 1e3);
  }
  setPartitionReport(module, report);
  return success();
}

class PartitionTensorPass : public impl::PartitionTensorPassBase<PartitionTensorPass> {
public:
  using PartitionTensorPassBase::PartitionTensorPassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(partitionEntry(module, getArgument(), [&](func::FuncOp entry) {
          return Partitioner(module, entry, devices, rank, collective).run();
        })))
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
