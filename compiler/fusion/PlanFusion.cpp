//===- PlanFusion.cpp - Priority fusion of kernel ops by a cost model --------===//
//
// Groups the linalg ops of the entry function into kernels. Each op starts alone; a producer
// group joins the groups that read its result (all of them or none: read by several, it is
// computed again in each) when the cost model says the fused kernels are faster than the
// kernels apart, best saving first (XLA's priority fusion). The decisions, taken and refused,
// are recorded for `kiln compile --report`; kiln-form-dispatches outlines each group as one
// dispatch and kiln-tile-dispatches splits it along the loops every member shares.
//
//===----------------------------------------------------------------------===//

#include "compiler/fusion/CostModel.h"
#include "compiler/fusion/Epilogues.h"
#include "compiler/fusion/Passes.h"

#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Linalg/Transforms/Transforms.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <map>
#include <queue>
#include <set>

namespace kiln {
#define GEN_PASS_DEF_PLANFUSIONPASS
#include "compiler/fusion/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {

void collectNodeNames(Location loc, llvm::SetVector<StringRef> &names) {
  if (auto name = dyn_cast<NameLoc>(loc)) {
    names.insert(name.getName().getValue());
    return;
  }
  if (auto fused = dyn_cast<FusedLoc>(loc)) {
    for (Location inner : fused.getLocations())
      collectNodeNames(inner, names);
    return;
  }
  if (auto callSite = dyn_cast<CallSiteLoc>(loc))
    collectNodeNames(callSite.getCallee(), names);
}

std::string describeOps(ArrayRef<Operation *> ops) {
  llvm::SetVector<StringRef> names;
  for (Operation *op : ops)
    collectNodeNames(op->getLoc(), names);
  std::string description = ops.back()->getName().getStringRef().str();
  if (!names.empty())
    description += " (" + llvm::join(names.getArrayRef(), ", ") + ")";
  return description;
}

/// Loop `loop` of `op`'s trip count for the cost model: a dynamic one counts as the largest the
/// program's ranges allow (the cost of a program compiled for the largest shape), else as 1024.
static int64_t modeledExtent(linalg::LinalgOp op, unsigned loop) {
  int64_t extent = op.getStaticLoopRanges()[loop];
  if (!ShapedType::isDynamic(extent))
    return extent;
  return largestLoop(op, loop).value_or(1024);
}

int64_t modeledIterations(linalg::LinalgOp op) {
  int64_t iterations = 1;
  for (unsigned loop = 0; loop < op.getNumLoops(); ++loop)
    iterations *= modeledExtent(op, loop);
  return iterations;
}

double modeledBytes(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || type.hasStaticShape())
    return fusion::tensorBytes(value.getType());
  SmallVector<int64_t> shape;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    std::optional<int64_t> size = largestDim(value, d);
    if (!size)
      return 0;
    shape.push_back(*size);
  }
  return fusion::tensorBytes(type.clone(shape));
}

double touchedBytes(linalg::LinalgOp op, OpOperand &operand) {
  double whole = modeledBytes(operand.get());
  auto type = dyn_cast<RankedTensorType>(operand.get().getType());
  if (!type || whole == 0)
    return whole;
  // Each loop the indexing map reads by contributes its extent; a slice read through the map
  // (an offset, a stride) touches no more elements than the loops enumerate.
  AffineMap map = op.getMatchingIndexingMap(&operand);
  double points = 1;
  for (unsigned loop = 0; loop < op.getNumLoops(); ++loop)
    if (map.isFunctionOfDim(loop))
      points *= static_cast<double>(modeledExtent(op, loop));
  double elementBytes = fusion::tensorBytes(RankedTensorType::get({1}, type.getElementType()));
  if (elementBytes == 0)
    return whole;
  return std::min(whole, points * elementBytes);
}

double opFlops(Operation *op) {
  if (isa<arith::ConstantOp>(op))
    return 0;
  if (isa<arith::DivFOp, arith::RemFOp, arith::DivSIOp, arith::DivUIOp, arith::RemSIOp,
          arith::RemUIOp, math::SqrtOp, math::RsqrtOp, math::CbrtOp>(op))
    return 4;
  if (isa<math::MathDialect>(op->getDialect()) &&
      !isa<math::AbsFOp, math::AbsIOp, math::CeilOp, math::CopySignOp, math::FloorOp, math::FmaOp,
           math::RoundOp, math::RoundEvenOp, math::TruncOp, math::IsNaNOp, math::IsInfOp,
           math::IsFiniteOp, math::CountLeadingZerosOp, math::CountTrailingZerosOp, math::CtPopOp>(
          op))
    return 16;
  return 1;
}

double iterationFlops(linalg::LinalgOp op) {
  double flops = 0;
  for (Operation &inner : op.getBlock()->without_terminator())
    flops += opFlops(&inner);
  return std::max(flops, 1.0);
}

namespace {

using fusion::DeviceDescription;
using fusion::KernelWork;

/// Whether `value` is a destination with no contents worth reading: an empty tensor or a fill.
bool isFreshDestination(Value value) {
  Operation *producer = value.getDefiningOp();
  return producer && isa<tensor::EmptyOp, linalg::FillOp>(producer);
}

/// The ops the planner groups: linalg ops on tensors, fills excepted (they are cloned into the
/// kernels that use them), and ops over an empty loop (they do no work to share; tiling cannot
/// slice them).
bool isPlannable(Operation *op) {
  auto linalgOp = dyn_cast<linalg::LinalgOp>(op);
  return linalgOp && !isa<linalg::FillOp>(op) && linalgOp.hasPureTensorSemantics() &&
         op->getNumResults() > 0 && !llvm::is_contained(linalgOp.getStaticLoopRanges(), 0);
}

/// The values the ops of `members` read from outside them, fresh destinations excepted, each
/// once.
llvm::SmallSetVector<Value, 8> readFromOutside(ArrayRef<Operation *> members) {
  llvm::SmallPtrSet<Operation *, 16> memberSet(members.begin(), members.end());
  llvm::SmallSetVector<Value, 8> reads;
  for (Operation *member : members) {
    auto memberOp = cast<linalg::LinalgOp>(member);
    for (OpOperand &operand : member->getOpOperands()) {
      Value value = operand.get();
      Operation *producer = value.getDefiningOp();
      if (producer && memberSet.contains(producer))
        continue;
      if (memberOp.isDpsInit(&operand) && isFreshDestination(value))
        continue;
      reads.insert(value);
    }
  }
  return reads;
}

struct Group {
  SmallVector<Operation *> members; // In block order; the last one is the root.
  KernelWork work;
  double seconds = 0;
  int64_t parallelism = 1;
  SmallVector<int64_t> tileDims;
  /// Whether every member but the root produces one value per row (per point of the tile dims).
  bool rowValues = true;
  unsigned version = 0;
  bool alive = true;
  Operation *root() const { return members.back(); }
};

/// A producer group that may join the groups reading its result (computed again in each beyond
/// the first), with the time it saves and the versions it was evaluated against.
struct Candidate {
  double saving;
  unsigned producer, producerVersion;
  SmallVector<std::pair<unsigned, unsigned>> consumers; // (group, version)
  bool operator<(const Candidate &other) const { return saving < other.saving; }
};

struct Evaluation {
  /// The groups reading the producer's result, in the order met (none: not a candidate).
  SmallVector<unsigned> consumers;
  double saving = 0;
  std::string refusal; // Empty when the fusion is legal and saves time.
};

struct PlanFusionPass : impl::PlanFusionPassBase<PlanFusionPass> {
  using Base::Base;

  DeviceDescription device_;
  /// Whether a producer read by several kernels may be copied into each: only once fusions
  /// without copies are exhausted, so that readers that would join one kernel anyway (softmax's
  /// sum and division, both reading its exponentials) do so first and share the producer.
  bool duplicating_ = false;
  DenseMap<Operation *, unsigned> position_; // Block order.
  DenseMap<Operation *, unsigned> groupOf_;
  std::vector<Group> groups_;

  /// For each root loop, the loop of every member it corresponds to, following the indexing
  /// maps from the root to its producers (-1: the member does not vary along it, or two paths
  /// disagree). Nothing when a member is not reached from the root.
  std::optional<DenseMap<Operation *, SmallVector<int64_t>>>
  mapRootLoops(ArrayRef<Operation *> members) {
    Operation *root = members.back();
    auto rootOp = cast<linalg::LinalgOp>(root);
    unsigned loops = rootOp.getNumLoops();
    DenseMap<Operation *, SmallVector<int64_t>> loopOf;
    loopOf[root] = llvm::to_vector(llvm::seq<int64_t>(0, loops));
    llvm::SmallPtrSet<Operation *, 16> memberSet(members.begin(), members.end());
    for (Operation *consumer : llvm::reverse(members)) {
      auto found = loopOf.find(consumer);
      if (found == loopOf.end())
        return std::nullopt;
      SmallVector<int64_t> consumerLoops = found->second;
      auto consumerOp = cast<linalg::LinalgOp>(consumer);
      for (OpOperand &operand : consumer->getOpOperands()) {
        Operation *producer = operand.get().getDefiningOp();
        if (!producer || !memberSet.contains(producer))
          continue;
        AffineMap read = consumerOp.getMatchingIndexingMap(&operand);
        AffineMap written = cast<linalg::LinalgOp>(producer).getIndexingMapMatchingResult(
            cast<OpResult>(operand.get()));
        SmallVector<int64_t> mapped(loops, -1);
        for (unsigned d = 0; d < loops; ++d) {
          if (consumerLoops[d] < 0)
            continue;
          for (unsigned j = 0; j < read.getNumResults(); ++j) {
            auto dim = dyn_cast<AffineDimExpr>(read.getResult(j));
            if (!dim || dim.getPosition() != consumerLoops[d])
              continue;
            if (auto loop = dyn_cast<AffineDimExpr>(written.getResult(j)))
              mapped[d] = loop.getPosition();
            break;
          }
        }
        auto [entry, inserted] = loopOf.try_emplace(producer, mapped);
        if (!inserted)
          for (unsigned d = 0; d < loops; ++d)
            if (entry->second[d] != mapped[d])
              entry->second[d] = -1;
      }
    }
    return loopOf;
  }

  /// Fills in a group's work, time, workgroup loops and parallelism from its members.
  bool analyze(Group &group) {
    auto loopOf = mapRootLoops(group.members);
    if (!loopOf)
      return false;
    auto rootOp = cast<linalg::LinalgOp>(group.root());
    SmallVector<int64_t> extents = rootOp.getStaticLoopRanges();
    SmallVector<utils::IteratorType> rootIterators = rootOp.getIteratorTypesArray();
    group.tileDims.clear();
    group.parallelism = 1;
    for (unsigned d = 0; d < extents.size(); ++d) {
      if (rootIterators[d] != utils::IteratorType::parallel)
        continue;
      bool shared = llvm::all_of(group.members, [&](Operation *member) {
        int64_t loop = (*loopOf)[member][d];
        return loop >= 0 && cast<linalg::LinalgOp>(member).getIteratorTypesArray()[loop] ==
                                utils::IteratorType::parallel;
      });
      if (!shared)
        continue;
      group.tileDims.push_back(d);
      group.parallelism *= modeledExtent(rootOp, d);
    }

    group.rowValues = true;
    for (Operation *member : ArrayRef<Operation *>(group.members).drop_back()) {
      auto memberOp = cast<linalg::LinalgOp>(member);
      SmallVector<int64_t> memberExtents = memberOp.getStaticLoopRanges();
      llvm::SmallDenseSet<int64_t> rowLoops;
      for (int64_t d : group.tileDims)
        rowLoops.insert((*loopOf)[member][d]);
      // Each result dimension is a row loop or has one element: one value per row.
      for (OpOperand &init : memberOp.getDpsInitsMutable())
        for (AffineExpr result : memberOp.getMatchingIndexingMap(&init).getResults()) {
          auto dim = dyn_cast<AffineDimExpr>(result);
          if (!dim ||
              (!rowLoops.contains(dim.getPosition()) && memberExtents[dim.getPosition()] != 1))
            group.rowValues = false;
        }
    }

    llvm::SmallPtrSet<Operation *, 16> memberSet(group.members.begin(), group.members.end());
    group.work = KernelWork();
    for (Operation *member : group.members) {
      auto memberOp = cast<linalg::LinalgOp>(member);
      int64_t iterations = modeledIterations(memberOp);
      // A member several others read is computed once for each of them inside the tiles.
      int64_t copies = 0;
      for (Operation *user : member->getUsers())
        copies += memberSet.contains(user) ? 1 : 0;
      group.work.flops +=
          static_cast<double>(iterations) * iterationFlops(memberOp) * std::max<int64_t>(copies, 1);
    }
    for (Value value : readFromOutside(group.members))
      group.work.bytes += modeledBytes(value);
    for (Value result : group.root()->getResults())
      group.work.bytes += modeledBytes(result);
    // A CUDA row kernel runs a row per warp however little work it does; the CPU runs a small
    // kernel as one workgroup (kiln-tile-dispatches).
    group.seconds = fusion::kernelSeconds(device_, group.work,
                                          rowValuesOnly ? group.parallelism : workgroups(group));
    return true;
  }

  /// Decides whether the group `producer` may join the groups reading its result: all of them
  /// or none, computed again in each beyond the first when there are several.
  Evaluation evaluate(unsigned producer) {
    Evaluation evaluation;
    Group &group = groups_[producer];
    Operation *root = group.root();
    llvm::SmallSetVector<unsigned, 4> consumers;
    bool readOutside = false;
    std::string outsideReader;
    for (OpOperand &use : root->getUses()) {
      Operation *user = use.getOwner();
      auto found = groupOf_.find(user);
      if (found == groupOf_.end()) {
        // Read inside a kernel's body (a gather) or by something that is not a kernel.
        Operation *top = user;
        while (top->getParentOp() && !isa<func::FuncOp>(top->getParentOp()))
          top = top->getParentOp();
        auto enclosing = groupOf_.find(top);
        if (enclosing != groupOf_.end() && enclosing->second != producer)
          consumers.insert(enclosing->second);
        readOutside = true;
        outsideReader = top == user ? user->getName().getStringRef().str()
                                    : "a gather in " + top->getName().getStringRef().str();
        continue;
      }
      consumers.insert(found->second);
      if (cast<linalg::LinalgOp>(user).isDpsInit(&use)) {
        evaluation.consumers.assign(consumers.begin(), consumers.end());
        evaluation.refusal = "the consumer writes into it in place";
        return evaluation;
      }
    }
    evaluation.consumers.assign(consumers.begin(), consumers.end());
    if (consumers.empty())
      return evaluation; // Nothing to fuse into: not a candidate.
    if (readOutside) {
      evaluation.refusal = "its result is read by " + outsideReader;
      return evaluation;
    }
    for (OpOperand &use : root->getUses()) {
      AffineMap map = cast<linalg::LinalgOp>(use.getOwner()).getMatchingIndexingMap(&use);
      // A 0 reads the one element of a unit dimension (a reduction that kept its dimension).
      if (!map.isProjectedPermutation(/*allowZeroInResults=*/true)) {
        evaluation.refusal = "the consumer reads it through the indexing map " +
                             llvm::formatv("{0}", map).str() + ", not a projected permutation";
        return evaluation;
      }
    }
    if (consumers.size() > 1 && !duplicating_) {
      evaluation.refusal = "its result is read by more than one kernel";
      return evaluation;
    }
    // Each reader's kernel with the producer inside, against them apart.
    double apart = group.seconds, fused = 0;
    for (unsigned consumer : consumers) {
      Group &into = groups_[consumer];
      // Where there are several readers, a refusal names the one that refused.
      auto refuse = [&](const std::string &why) {
        evaluation.refusal =
            consumers.size() > 1 ? "into " + describeOps(into.members) + ": " + why : why;
        return evaluation;
      };
      if (static_cast<int64_t>(group.members.size() + into.members.size()) > maxGroupSize)
        return refuse(
            llvm::formatv("the kernel would hold more than {0} ops", maxGroupSize.getValue()));
      Group merged = mergedGroup(group.members, into);
      if (!analyze(merged))
        return refuse("its loops do not map onto the consumer's");
      int64_t needed = std::min<int64_t>(minWorkgroups, workgroups(into));
      if (merged.parallelism < needed)
        return refuse(llvm::formatv("the fused kernel would split into at most {0} workgroups "
                                    "where the consumer alone splits into {1}",
                                    merged.parallelism, workgroups(into)));
      if (rowValuesOnly && !merged.rowValues)
        return refuse("an op of the fused kernel would pass more than one value per row to "
                      "another (a CUDA row kernel keeps one per row in registers)");
      apart += into.seconds;
      fused += merged.seconds;
    }
    evaluation.saving = apart - fused;
    if (evaluation.saving <= 0)
      evaluation.refusal =
          consumers.size() > 1
              ? llvm::formatv("computed again in each of its {0} readers, the fused kernels are "
                              "modeled slower ({1:F2} us vs {2:F2} us)",
                              consumers.size(), fused * 1e6, apart * 1e6)
                    .str()
              : llvm::formatv("the fused kernel is modeled slower ({0:F2} us vs {1:F2} us)",
                              fused * 1e6, apart * 1e6)
                    .str();
    return evaluation;
  }

  /// The workgroups kiln-tile-dispatches would split `group` into, at most: none beyond one
  /// when its root does little work.
  int64_t workgroups(const Group &group) {
    int64_t iterations = modeledIterations(cast<linalg::LinalgOp>(group.root()));
    return iterations < minElementsPerWorkgroup ? 1 : group.parallelism;
  }

  /// `consumer` with `producerMembers` (a producer group's ops, or their copies) inside.
  Group mergedGroup(ArrayRef<Operation *> producerMembers, const Group &consumer) {
    Group merged;
    merged.members.append(producerMembers.begin(), producerMembers.end());
    merged.members.append(consumer.members.begin(), consumer.members.end());
    llvm::sort(merged.members,
               [&](Operation *a, Operation *b) { return position_[a] < position_[b]; });
    // The consumer's root stays the root: the producer's results are all read inside.
    merged.members.erase(llvm::find(merged.members, consumer.root()));
    merged.members.push_back(consumer.root());
    return merged;
  }

  /// The value whose bytes `value` reads: the source of slices and reshapes.
  static Value storageOf(Value value) {
    while (Operation *producer = value.getDefiningOp()) {
      if (!isa<tensor::ExtractSliceOp, tensor::ExpandShapeOp, tensor::CollapseShapeOp,
               tensor::CastOp>(producer))
        break;
      value = producer->getOperand(0);
    }
    return value;
  }

  /// Whether `value` is a splat constant: cloned into each kernel, no input two kernels share.
  static bool isSplatConstant(Value value) {
    auto constant = value.getDefiningOp<arith::ConstantOp>();
    auto dense = constant ? dyn_cast<DenseElementsAttr>(constant.getValue()) : nullptr;
    return dense && dense.isSplat();
  }

  /// What a report calls `value`: the ops computing it, or the entry function's argument.
  static std::string describeValue(Value value) {
    if (Operation *producer = value.getDefiningOp())
      return describeOps({producer});
    return llvm::formatv("argument {0}", cast<BlockArgument>(value).getArgNumber()).str();
  }

  /// Whether `group` may share a kernel with a sibling: its root computes every point of its
  /// loops independently (no reduced loop), over static loops (a named op is generalized when
  /// it merges).
  bool isSiblingCandidate(const Group &group) {
    if (!group.alive)
      return false;
    auto root = dyn_cast<linalg::LinalgOp>(group.root());
    return root && root.getNumReductionLoops() == 0 && !root.hasDynamicShape();
  }

  /// For each op of `block`, the groups its value depends on (its own included), as bits.
  DenseMap<Operation *, llvm::BitVector> groupDependences(Block &block) {
    DenseMap<Operation *, llvm::BitVector> dependences;
    for (Operation &op : block) {
      llvm::BitVector bits(groups_.size());
      auto add = [&](Value value) {
        Operation *producer = value.getDefiningOp();
        while (producer && producer->getBlock() != &block)
          producer = producer->getParentOp();
        if (!producer)
          return;
        auto found = dependences.find(producer);
        if (found != dependences.end())
          bits |= found->second;
      };
      for (Value operand : op.getOperands())
        add(operand);
      llvm::SetVector<Value> captured;
      for (Region &region : op.getRegions())
        getUsedValuesDefinedAbove(region, captured);
      for (Value value : captured)
        add(value);
      auto group = groupOf_.find(&op);
      if (group != groupOf_.end())
        bits.set(group->second);
      dependences[&op] = std::move(bits);
    }
    return dependences;
  }

  /// Two groups over the same loops that may become one kernel with a result for each.
  struct SiblingCandidate {
    unsigned first, second;
    double saving = 0;
    Value shared;        // An input both read (a slice's source counts), or null: horizontal.
    std::string refusal; // Empty when the merge is legal and saves time.
    bool dependent = false;
    bool atEarlier = false; // The merged root takes the earlier root's place (else the later's).
  };

  /// Whether one root computing both groups' results stands at the earlier root (true: the
  /// later group's other members and everything its root reads come before it) or at the later
  /// one (false: no reader of the earlier root's results comes before it; preferred), without
  /// moving any other op; nothing where neither suits. Ops are never reordered: a collective or
  /// a transfer between devices keeps its place among the steps.
  std::optional<bool> placement(unsigned first, unsigned second) {
    Operation *early = groups_[first].root(), *late = groups_[second].root();
    unsigned earlyGroup = first, lateGroup = second;
    if (position_[late] < position_[early]) {
      std::swap(early, late);
      std::swap(earlyGroup, lateGroup);
    }
    Block *block = early->getBlock();
    bool readersAfter = llvm::all_of(early->getUsers(), [&](Operation *user) {
      Operation *top = block->findAncestorOpInBlock(*user);
      return !top || position_[top] > position_[late];
    });
    if (readersAfter)
      return false;
    auto before = [&](Value value) {
      Operation *producer = value.getDefiningOp();
      Operation *top = producer ? block->findAncestorOpInBlock(*producer) : nullptr;
      return !top || position_[top] < position_[early];
    };
    ArrayRef<Operation *> lateMembers = groups_[lateGroup].members;
    bool inputsBefore =
        llvm::all_of(lateMembers.drop_back(),
                     [&](Operation *member) { return position_[member] < position_[early]; }) &&
        llvm::all_of(late->getOperands(), [&](Value value) {
          Operation *producer = value.getDefiningOp();
          return (producer && llvm::is_contained(lateMembers, producer)) || before(value);
        });
    llvm::SetVector<Value> captured;
    getUsedValuesDefinedAbove(late->getRegion(0), captured);
    if (inputsBefore && llvm::all_of(captured, before))
      return true;
    return std::nullopt;
  }

  /// Evaluates `first` and `second` (both sibling candidates over the same loops) as one kernel,
  /// given what each group reads from outside (readFromOutside) and the groups each op depends
  /// on (groupDependences).
  SiblingCandidate evaluateSiblings(unsigned first, unsigned second,
                                    const DenseMap<unsigned, llvm::SmallSetVector<Value, 8>> &reads,
                                    const DenseMap<Operation *, llvm::BitVector> &dependences) {
    SiblingCandidate candidate{first, second};
    Group &a = groups_[first], &b = groups_[second];
    const llvm::SmallSetVector<Value, 8> &readsA = reads.find(first)->second;
    llvm::SmallPtrSet<Value, 8> storageA;
    for (Value value : readsA)
      if (!isSplatConstant(value))
        storageA.insert(storageOf(value));
    double sharedBytes = 0;
    for (Value value : reads.find(second)->second) {
      if (!candidate.shared && !isSplatConstant(value) && storageA.contains(storageOf(value)))
        candidate.shared = storageOf(value);
      if (readsA.contains(value))
        sharedBytes += modeledBytes(value);
    }
    // Independent kernels share one only where launches dominate both (horizontal fusion).
    if (!candidate.shared && (!horizontal || a.seconds > 2 * device_.launchSeconds ||
                              b.seconds > 2 * device_.launchSeconds)) {
      candidate.refusal = "independent, and not launch-bound";
      return candidate;
    }
    if (dependences.find(a.root())->second.test(second) ||
        dependences.find(b.root())->second.test(first)) {
      candidate.refusal = "one depends on the other's result";
      candidate.dependent = true;
      return candidate;
    }
    std::optional<bool> atEarlier = placement(first, second);
    if (!atEarlier) {
      candidate.refusal = "no place in the program suits both: the earlier one's result is read "
                          "before the later one's inputs are computed";
      return candidate;
    }
    candidate.atEarlier = *atEarlier;
    if (static_cast<int64_t>(a.members.size() + b.members.size()) - 1 > maxGroupSize) {
      candidate.refusal =
          llvm::formatv("the kernel would hold more than {0} ops", maxGroupSize.getValue());
      return candidate;
    }
    // The merged root has the same loops: each group's members map onto them as onto its own
    // root's, so the workgroup loops are those both share.
    if (a.tileDims != b.tileDims) {
      candidate.refusal = "they split into workgroups along different loops";
      return candidate;
    }
    KernelWork work{a.work.flops + b.work.flops, a.work.bytes + b.work.bytes - sharedBytes};
    double together =
        fusion::kernelSeconds(device_, work, rowValuesOnly ? a.parallelism : workgroups(a));
    double apart = a.seconds + b.seconds;
    candidate.saving = apart - together;
    if (candidate.saving <= 0)
      candidate.refusal = llvm::formatv("the kernel is modeled slower ({0:F2} us vs {1:F2} us)",
                                        together * 1e6, apart * 1e6)
                              .str();
    return candidate;
  }

  /// Makes groups `first` and `second` one group whose root is one generic computing both roots'
  /// results over their common loops, in the earlier root's place or the later's (placement).
  void mergeSiblings(unsigned first, unsigned second, bool atEarlier, Block &block) {
    IRRewriter rewriter(block.getParentOp()->getContext());
    SmallVector<linalg::GenericOp, 2> roots;
    for (unsigned id : {first, second}) {
      Operation *root = groups_[id].root();
      auto generic = dyn_cast<linalg::GenericOp>(root);
      if (!generic) {
        rewriter.setInsertionPoint(root);
        generic = *linalg::generalizeNamedOp(rewriter, cast<linalg::LinalgOp>(root));
        groupOf_.erase(root);
        groupOf_[generic] = id;
        position_[generic] = position_[root];
        groups_[id].members.back() = generic;
      }
      roots.push_back(generic);
    }
    if (position_[roots[1]] < position_[roots[0]])
      std::swap(roots[0], roots[1]);

    // Inputs both roots read through the same map are read once; `inputOf` gives each root
    // input's position among the merged ones.
    SmallVector<Value> inputs, outputs;
    SmallVector<AffineMap> inputMaps, outputMaps;
    SmallVector<Type> results;
    SmallVector<Location> locations;
    DenseMap<OpOperand *, unsigned> inputOf;
    for (linalg::GenericOp root : roots) {
      locations.push_back(root.getLoc());
      for (OpOperand *input : root.getDpsInputOperands()) {
        AffineMap map = root.getMatchingIndexingMap(input);
        unsigned index = 0;
        while (index < inputs.size() && (inputs[index] != input->get() || inputMaps[index] != map))
          ++index;
        inputOf[input] = index;
        if (index == inputs.size()) {
          inputs.push_back(input->get());
          inputMaps.push_back(map);
        }
      }
      for (OpOperand &init : root.getDpsInitsMutable()) {
        outputs.push_back(init.get());
        outputMaps.push_back(root.getMatchingIndexingMap(&init));
      }
      llvm::append_range(results, root->getResultTypes());
    }
    SmallVector<AffineMap> maps(inputMaps);
    maps.append(outputMaps);
    Location location = rewriter.getFusedLoc(locations);
    rewriter.setInsertionPoint(atEarlier ? roots[0] : roots[1]);
    auto merged = linalg::GenericOp::create(rewriter, location, results, inputs, outputs, maps,
                                            roots[0].getIteratorTypesArray());
    SmallVector<Type> argumentTypes;
    SmallVector<Location> argumentLocations;
    for (Value value : llvm::concat<Value>(inputs, outputs)) {
      argumentTypes.push_back(getElementTypeOrSelf(value.getType()));
      argumentLocations.push_back(location);
    }
    Block *body = rewriter.createBlock(&merged.getRegion(), {}, argumentTypes, argumentLocations);
    SmallVector<Value> yielded;
    unsigned outputOffset = inputs.size();
    for (linalg::GenericOp root : roots) {
      IRMapping mapping;
      for (OpOperand *input : root.getDpsInputOperands())
        mapping.map(root.getMatchingBlockArgument(input), body->getArgument(inputOf[input]));
      for (OpOperand &init : root.getDpsInitsMutable())
        mapping.map(root.getMatchingBlockArgument(&init), body->getArgument(outputOffset++));
      for (Operation &op : root.getBlock()->without_terminator())
        rewriter.clone(op, mapping);
      for (Value value : root.getBlock()->getTerminator()->getOperands())
        yielded.push_back(mapping.lookupOrDefault(value));
    }
    linalg::YieldOp::create(rewriter, location, yielded);

    unsigned resultOffset = 0;
    for (linalg::GenericOp root : roots) {
      rewriter.replaceAllUsesWith(root->getResults(),
                                  merged->getResults().slice(resultOffset, root->getNumResults()));
      resultOffset += root->getNumResults();
    }
    for (linalg::GenericOp root : roots) {
      groupOf_.erase(root);
      rewriter.eraseOp(root);
    }
    position_.clear();
    for (Operation &op : block)
      position_[&op] = position_.size();

    Group &group = groups_[first];
    SmallVector<Operation *> members;
    for (unsigned id : {first, second}) {
      ArrayRef<Operation *> own = groups_[id].members;
      members.append(own.begin(), own.end() - 1);
    }
    llvm::sort(members, [&](Operation *x, Operation *y) { return position_[x] < position_[y]; });
    members.push_back(merged);
    group.members = std::move(members);
    for (Operation *member : group.members)
      groupOf_[member] = first;
    analyze(group);
    ++group.version;
    groups_[second].alive = false;
  }

  /// Multi-output and horizontal fusion, after priority fusion (as XLA runs them): groups over
  /// the same loops, neither reading the other's result, become one kernel with a result per
  /// group where they read an input in common (its bytes read once, one launch saved) or where
  /// launches dominate both; the largest saving first. Returns the report's lines.
  SmallVector<std::string> fuseSiblings(Block &block) {
    SmallVector<std::string> report;
    std::map<std::pair<unsigned, unsigned>, std::string> refusals;
    std::set<std::pair<unsigned, unsigned>> dependentPairs;
    while (true) {
      dependentPairs.clear();
      // Candidates by their loops' extents (every loop of a candidate's root is parallel).
      std::map<SmallVector<int64_t>, SmallVector<unsigned>> byLoops;
      DenseMap<unsigned, llvm::SmallSetVector<Value, 8>> reads;
      for (auto [id, group] : llvm::enumerate(groups_))
        if (isSiblingCandidate(group)) {
          byLoops[cast<linalg::LinalgOp>(group.root()).getStaticLoopRanges()].push_back(id);
          reads[id] = readFromOutside(group.members);
        }
      DenseMap<Operation *, llvm::BitVector> dependences = groupDependences(block);
      std::optional<SiblingCandidate> best;
      for (auto &[loops, ids] : byLoops)
        for (auto [i, first] : llvm::enumerate(ids))
          for (unsigned second : ArrayRef(ids).drop_front(i + 1)) {
            SiblingCandidate candidate = evaluateSiblings(first, second, reads, dependences);
            if (!candidate.refusal.empty()) {
              // Only kernels reading an input in common are reported (independent ones are
              // every pair of same-shaped kernels); those where one feeds the other only by
              // their count (every layer of a transformer reads the same tables).
              if (candidate.shared && candidate.dependent)
                dependentPairs.insert({first, second});
              else if (candidate.shared)
                refusals[{first, second}] =
                    llvm::formatv("not one kernel: {0} and {1}, both reading {2}: {3}",
                                  describeOps(groups_[first].members),
                                  describeOps(groups_[second].members),
                                  describeValue(candidate.shared), candidate.refusal)
                        .str();
              continue;
            }
            if (!best || candidate.saving > best->saving)
              best = candidate;
          }
      if (!best)
        break;
      std::string first = describeOps(groups_[best->first].members);
      std::string second = describeOps(groups_[best->second].members);
      report.push_back(
          best->shared
              ? llvm::formatv("one kernel for both: {0} and {1}, both reading {2}; {3:F2} us "
                              "modeled saved",
                              first, second, describeValue(best->shared), best->saving * 1e6)
                    .str()
              : llvm::formatv("one kernel for both (launch-bound): {0} and {1}; {2:F2} us "
                              "modeled saved",
                              first, second, best->saving * 1e6)
                    .str());
      mergeSiblings(best->first, best->second, best->atEarlier, block);
      // Pairs involving a merged group are evaluated afresh.
      for (auto it = refusals.begin(); it != refusals.end();)
        it = (it->first.first == best->second || it->first.second == best->second ||
              it->first.first == best->first || it->first.second == best->first)
                 ? refusals.erase(it)
                 : std::next(it);
    }
    for (auto &[pair, refusal] : refusals)
      if (groups_[pair.first].alive && groups_[pair.second].alive)
        report.push_back(refusal);
    if (!dependentPairs.empty())
      report.push_back(llvm::formatv("{0} {1} of kernels over the same loops reading an input "
                                     "in common {2} apart: one depends on the other's result",
                                     dependentPairs.size(),
                                     dependentPairs.size() == 1 ? "pair" : "pairs",
                                     dependentPairs.size() == 1 ? "stays" : "stay"));
    return report;
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::string error;
    std::optional<DeviceDescription> description = DeviceDescription::load(device, error);
    if (!description) {
      module.emitError() << "the fusion cost model: " << error;
      return signalPassFailure();
    }
    device_ = *description;
    position_.clear();
    groupOf_.clear();
    groups_.clear();
    auto entry = module.lookupSymbol<func::FuncOp>(entryName);
    if (!entry || entry.isExternal() || !entry.getBody().hasOneBlock())
      return;

    for (Operation &op : entry.getBody().front()) {
      position_[&op] = position_.size();
      if (!isPlannable(&op))
        continue;
      Group group;
      group.members.push_back(&op);
      if (!analyze(group))
        continue;
      groupOf_[&op] = groups_.size();
      groups_.push_back(std::move(group));
    }
    double unfusedSeconds = 0, unfusedBytes = 0;
    for (Group &group : groups_) {
      unfusedSeconds += group.seconds;
      unfusedBytes += group.work.bytes;
    }
    size_t unfusedKernels = groups_.size();

    std::priority_queue<Candidate> queue;
    std::map<unsigned, std::string> refusals; // By producer group, in block order.
    auto consider = [&](unsigned producer) {
      Evaluation evaluation = evaluate(producer);
      refusals.erase(producer);
      if (evaluation.consumers.empty())
        return;
      if (!evaluation.refusal.empty()) {
        refusals[producer] = evaluation.refusal;
        return;
      }
      Candidate candidate{evaluation.saving, producer, groups_[producer].version, {}};
      for (unsigned consumer : evaluation.consumers)
        candidate.consumers.push_back({consumer, groups_[consumer].version});
      queue.push(std::move(candidate));
    };
    duplicating_ = false;
    for (unsigned i = 0; i < groups_.size(); ++i)
      consider(i);

    SmallVector<std::string> report, duplications;
    Block &block = entry.getBody().front();
    while (true) {
      if (queue.empty()) {
        // Fusions without copies are exhausted: producers read by several kernels may now be
        // copied into each where the model says it pays.
        if (duplicating_ || !duplicate)
          break;
        duplicating_ = true;
        for (unsigned i = 0; i < groups_.size(); ++i)
          if (groups_[i].alive)
            consider(i);
        continue;
      }
      Candidate candidate = queue.top();
      queue.pop();
      Group &producer = groups_[candidate.producer];
      if (!producer.alive || producer.version != candidate.producerVersion)
        continue;
      if (llvm::any_of(candidate.consumers, [&](std::pair<unsigned, unsigned> consumer) {
            return !groups_[consumer.first].alive ||
                   groups_[consumer.first].version != consumer.second;
          })) {
        consider(candidate.producer); // A consumer changed: evaluate afresh.
        continue;
      }
      // Each reader beyond the first gets a copy of the producer's ops, placed after them, its
      // uses of the producer's result switched to the copy's.
      SmallVector<SmallVector<Operation *>> memberSets{producer.members};
      Operation *root = producer.root();
      for (auto [consumer, version] : ArrayRef(candidate.consumers).drop_front()) {
        llvm::SmallPtrSet<Operation *, 16> readers(groups_[consumer].members.begin(),
                                                   groups_[consumer].members.end());
        OpBuilder builder(root->getContext());
        builder.setInsertionPointAfter(root);
        IRMapping mapping;
        SmallVector<Operation *> copies;
        for (Operation *member : producer.members)
          copies.push_back(builder.clone(*member, mapping));
        for (auto [result, copy] : llvm::zip(root->getResults(), copies.back()->getResults()))
          result.replaceUsesWithIf(
              copy, [&](OpOperand &use) { return readers.contains(use.getOwner()); });
        memberSets.push_back(std::move(copies));
      }
      if (candidate.consumers.size() > 1) {
        duplications.push_back(llvm::formatv(
            "computed in each of its {0} readers: {1}; "
            "{2:F2} us modeled saved",
            candidate.consumers.size(), describeOps(producer.members), candidate.saving * 1e6));
        position_.clear();
        for (Operation &op : block)
          position_[&op] = position_.size();
      }
      producer.alive = false;
      refusals.erase(candidate.producer);
      llvm::SmallSetVector<unsigned, 8> feeding;
      for (auto [index, consumerEntry] : llvm::enumerate(candidate.consumers)) {
        unsigned consumerId = consumerEntry.first;
        Group &consumer = groups_[consumerId];
        Group merged = mergedGroup(memberSets[index], consumer);
        analyze(merged);
        merged.version = consumer.version + 1;
        for (Operation *member : memberSets[index])
          groupOf_[member] = consumerId;
        consumer = std::move(merged);
        for (Operation *member : consumer.members)
          for (Value operand : member->getOperands())
            if (Operation *definer = operand.getDefiningOp()) {
              auto found = groupOf_.find(definer);
              if (found != groupOf_.end() && found->second != consumerId)
                feeding.insert(found->second);
            }
      }
      // The merged groups may now fuse into their own consumers, and the groups feeding them
      // may now have all their readers in one kernel (or be read by the copies too).
      for (auto [consumer, version] : candidate.consumers)
        consider(consumer);
      for (unsigned group : feeding)
        consider(group);
    }

    // The refusals as priority fusion left them, before sibling groups merge.
    SmallVector<std::string> notFused;
    for (auto &[producer, refusal] : refusals)
      if (groups_[producer].alive)
        notFused.push_back("not fused: " + describeOps(groups_[producer].members) + ": " + refusal);
    SmallVector<std::string> siblings;
    if (multiOutput)
      siblings = fuseSiblings(block);

    // Record the groups on the ops and the decisions on the module.
    Builder builder(module.getContext());
    double fusedSeconds = 0, fusedBytes = 0;
    size_t kernels = 0;
    for (auto [id, group] : llvm::enumerate(groups_)) {
      if (!group.alive)
        continue;
      ++kernels;
      fusedSeconds += group.seconds;
      fusedBytes += group.work.bytes;
      if (group.members.size() < 2)
        continue;
      for (Operation *member : group.members)
        member->setAttr(kFusionGroupAttr, builder.getI64IntegerAttr(id));
      group.root()->setAttr(kTileDimsAttr, builder.getDenseI64ArrayAttr(group.tileDims));
      report.push_back(llvm::formatv("kernel of {0} ops: {1}; {2:F1} KiB, {3:F2} us modeled",
                                     group.members.size(), describeOps(group.members),
                                     group.work.bytes / 1024, group.seconds * 1e6));
    }
    report.append(duplications.begin(), duplications.end());
    report.append(siblings.begin(), siblings.end());
    report.append(notFused.begin(), notFused.end());
    // The planner's decisions on library epilogues, made when the calls were selected.
    if (auto epilogues = module->getAttrOfType<ArrayAttr>(fusion::kEpilogueReportAttr)) {
      for (auto [i, line] : llvm::enumerate(epilogues.getAsRange<StringAttr>()))
        report.push_back((i == 0 ? "" : "  ") + line.getValue().str());
      module->removeAttr(fusion::kEpilogueReportAttr);
    }
    report.insert(report.begin(),
                  llvm::formatv("{0} kernels from {1} ops ({2} device model{7}): {3:F1} MiB "
                                "moved, {4:F1} us modeled (unfused: {5:F1} MiB, {6:F1} us)",
                                kernels, unfusedKernels, device_.name, fusedBytes / (1 << 20),
                                fusedSeconds * 1e6, unfusedBytes / (1 << 20), unfusedSeconds * 1e6,
                                device_.source == "published" ? "" : ", " + device_.source));
    SmallVector<Attribute> lines;
    for (const std::string &line : report)
      lines.push_back(builder.getStringAttr(line));
    module->setAttr(kFusionReportAttr, builder.getArrayAttr(lines));
    module->setAttr(kModeledKernelBytesAttr,
                    builder.getI64IntegerAttr(static_cast<int64_t>(fusedBytes)));
  }
};

} // namespace
} // namespace kiln
