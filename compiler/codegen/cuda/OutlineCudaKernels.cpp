//===- OutlineCudaKernels.cpp - Dispatch functions to grid-stride CUDA kernels ---===//
//
// After bufferization and convert-linalg-to-parallel-loops, a dispatch function is a sequence of
// loop nests over its memref arguments. Each loop nest that writes memory becomes one gpu.func
// in `gpu.module @kiln_kernels`: the points of an scf.parallel are spread over all threads of
// a grid of any size (grid-stride loop), so the runtime picks the grid from the device's
// multiprocessor count; contiguous elementwise nests move 16 bytes per access.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Interfaces/ViewLikeInterface.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/TypeSwitch.h"

namespace kiln {
#define GEN_PASS_DEF_OUTLINECUDAKERNELSPASS
#include "compiler/codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

/// A phase's flattened iteration space.
struct IterationSpace {
  SmallVector<int64_t> lower, steps, counts;
  int64_t points = 1;
};

/// The iteration space of a loop nest with these bounds, or nothing where one is not a constant.
std::optional<IterationSpace> staticSpace(ArrayRef<OpFoldResult> lower,
                                          ArrayRef<OpFoldResult> upper,
                                          ArrayRef<OpFoldResult> steps) {
  IterationSpace space;
  for (auto [lb, ub, step] : llvm::zip(lower, upper, steps)) {
    std::optional<int64_t> l = getConstantIntValue(lb), u = getConstantIntValue(ub),
                           s = getConstantIntValue(step);
    if (!l || !u || !s || *s <= 0)
      return std::nullopt;
    int64_t count = *u > *l ? llvm::divideCeil(*u - *l, *s) : 0;
    space.lower.push_back(*l);
    space.steps.push_back(*s);
    space.counts.push_back(count);
    space.points *= count;
  }
  return space;
}

std::optional<IterationSpace> staticSpace(scf::ParallelOp loop) {
  return staticSpace(getAsOpFoldResult(loop.getLowerBound()),
                     getAsOpFoldResult(loop.getUpperBound()), getAsOpFoldResult(loop.getStep()));
}

/// A builder inside `if (index == 0)`, for what one thread (or lane) alone does.
OpBuilder onlyWhereZero(OpBuilder &builder, Location loc, Value index) {
  Value isZero = arith::CmpIOp::create(builder, loc, arith::CmpIPredicate::eq, index,
                                       arith::ConstantIndexOp::create(builder, loc, 0));
  auto guard = scf::IfOp::create(builder, loc, isZero, /*withElseRegion=*/false);
  OpBuilder inside = OpBuilder::atBlockBegin(guard.thenBlock());
  inside.setInsertionPoint(guard.thenBlock()->getTerminator());
  return inside;
}

/// A loop nest whose trip counts are known only at run time (a program for a range of shapes):
/// constant lower bounds and steps, upper bounds computed from the run's sizes.
struct RunSpace {
  SmallVector<int64_t> lower, steps;
  SmallVector<OpFoldResult> upper;
};

std::optional<RunSpace> runSpace(ArrayRef<OpFoldResult> lower, ArrayRef<OpFoldResult> upper,
                                 ArrayRef<OpFoldResult> steps) {
  RunSpace space;
  for (auto [lb, ub, step] : llvm::zip(lower, upper, steps)) {
    std::optional<int64_t> l = getConstantIntValue(lb), s = getConstantIntValue(step);
    if (!l || !s || *s <= 0)
      return std::nullopt;
    space.lower.push_back(*l);
    space.steps.push_back(*s);
    space.upper.push_back(ub);
  }
  return space;
}

/// The trip counts of `space` in a kernel (`mapping` gives its upper bounds there) and the
/// product of them; the innermost loop's points taken `innerWidth` at a time (a static trip
/// count it divides).
std::pair<SmallVector<Value>, Value> runCounts(const RunSpace &space, OpBuilder &builder,
                                               Location loc, IRMapping &mapping,
                                               int64_t innerWidth = 1) {
  SmallVector<Value> counts;
  Value points = arith::ConstantIndexOp::create(builder, loc, 1);
  for (auto [lower, step, upper] : llvm::zip(space.lower, space.steps, space.upper)) {
    std::optional<int64_t> constant = getConstantIntValue(upper);
    Value count = constant ? arith::ConstantIndexOp::create(builder, loc, *constant).getResult()
                           : mapping.lookupOrDefault(cast<Value>(upper));
    if (lower != 0) {
      // An empty loop (upper below lower) has no points.
      Value first = arith::ConstantIndexOp::create(builder, loc, lower);
      count =
          arith::MaxSIOp::create(builder, loc, arith::SubIOp::create(builder, loc, count, first),
                                 arith::ConstantIndexOp::create(builder, loc, 0));
    }
    if (step != 1)
      count = arith::CeilDivUIOp::create(builder, loc, count,
                                         arith::ConstantIndexOp::create(builder, loc, step));
    if (counts.size() + 1 == space.upper.size() && innerWidth != 1)
      count = arith::DivUIOp::create(builder, loc, count,
                                     arith::ConstantIndexOp::create(builder, loc, innerWidth));
    counts.push_back(count);
    points = arith::MulIOp::create(builder, loc, points, count);
  }
  return {counts, points};
}

/// The indices of the point of a loop nest that the flat index `linear` names, outermost first:
/// loop d has `counts[d]` points from `lower[d]` with step `steps[d]` (the innermost one's step
/// times `innerScale`, for points that stand for that many neighbours).
SmallVector<Value> delinearize(OpBuilder &builder, Location loc, Value linear, ValueRange counts,
                               ArrayRef<int64_t> lower, ArrayRef<int64_t> steps,
                               int64_t innerScale = 1) {
  Value remaining = linear;
  SmallVector<Value> reversed;
  for (int64_t d = counts.size() - 1; d >= 0; --d) {
    Value position =
        d == 0 ? remaining : arith::RemUIOp::create(builder, loc, remaining, counts[d]).getResult();
    if (d != 0)
      remaining = arith::DivUIOp::create(builder, loc, remaining, counts[d]);
    int64_t step = steps[d] * (d + 1 == static_cast<int64_t>(counts.size()) ? innerScale : 1);
    Value scaled = arith::MulIOp::create(builder, loc, position,
                                         arith::ConstantIndexOp::create(builder, loc, step));
    reversed.push_back(arith::AddIOp::create(
        builder, loc, scaled, arith::ConstantIndexOp::create(builder, loc, lower[d])));
  }
  return SmallVector<Value>(reversed.rbegin(), reversed.rend());
}

/// The same for static trip counts.
SmallVector<Value> delinearize(OpBuilder &builder, Location loc, Value linear,
                               ArrayRef<int64_t> counts, ArrayRef<int64_t> lower,
                               ArrayRef<int64_t> steps, int64_t innerScale = 1) {
  SmallVector<Value> extents;
  for (int64_t count : counts)
    extents.push_back(arith::ConstantIndexOp::create(builder, loc, count));
  return delinearize(builder, loc, linear, ValueRange(extents), lower, steps, innerScale);
}

/// `value`, an index of a dispatch function of a program for a range of shapes, as an expression
/// of the run's sizes: symbol k is entry k of `sizes` (kiln-bind-run-sizes, every dimension of
/// every binding); nothing where it is not one. With `forGrid` (a count that only sizes a grid),
/// a size clamped by min or max reads as the size.
std::optional<AffineExpr> runSizeExpr(Value value, Value sizes, bool forGrid = false) {
  MLIRContext *context = value.getContext();
  if (std::optional<int64_t> constant = getConstantIntValue(value))
    return getAffineConstantExpr(*constant, context);
  auto ofFolded = [&](OpFoldResult folded) -> std::optional<AffineExpr> {
    if (std::optional<int64_t> constant = getConstantIntValue(folded))
      return getAffineConstantExpr(*constant, context);
    return runSizeExpr(cast<Value>(folded), sizes, forGrid);
  };
  Operation *op = value.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(op))
    return runSizeExpr(op->getOperand(0), sizes, forGrid);
  if (auto load = dyn_cast<memref::LoadOp>(op)) {
    if (load.getMemRef() != sizes || load.getIndices().size() != 1)
      return std::nullopt;
    std::optional<int64_t> entry = getConstantIntValue(load.getIndices()[0]);
    if (!entry)
      return std::nullopt;
    return getAffineSymbolExpr(*entry, context);
  }
  if (auto dim = dyn_cast<memref::DimOp>(op)) {
    std::optional<int64_t> index = dim.getConstantIndex();
    if (!index)
      return std::nullopt;
    auto type = dyn_cast<MemRefType>(dim.getSource().getType());
    if (type && !type.isDynamicDim(*index))
      return getAffineConstantExpr(type.getDimSize(*index), context);
    if (auto view = dim.getSource().getDefiningOp<OffsetSizeAndStrideOpInterface>())
      if (*index < static_cast<int64_t>(view.getMixedSizes().size()))
        return ofFolded(view.getMixedSizes()[*index]);
    return std::nullopt;
  }
  if (auto apply = dyn_cast<affine::AffineApplyOp>(op)) {
    AffineMap map = apply.getAffineMap();
    SmallVector<AffineExpr> dims, symbols;
    for (auto [i, operand] : llvm::enumerate(apply.getMapOperands())) {
      std::optional<AffineExpr> expr = runSizeExpr(operand, sizes, forGrid);
      if (!expr)
        return std::nullopt;
      (i < map.getNumDims() ? dims : symbols).push_back(*expr);
    }
    return map.getResult(0).replaceDimsAndSymbols(dims, symbols);
  }
  if (op->getNumOperands() != 2)
    return std::nullopt;
  std::optional<AffineExpr> lhs = runSizeExpr(op->getOperand(0), sizes, forGrid);
  std::optional<AffineExpr> rhs = runSizeExpr(op->getOperand(1), sizes, forGrid);
  if (forGrid && isa<arith::MinSIOp, arith::MinUIOp, arith::MaxSIOp, arith::MaxUIOp>(op)) {
    // A size clamped to a slice's bounds (the export's Slice of a causal mask to the
    // sequence): the size itself, which the run's ranges keep within them. A grid's threads
    // stride over every point whatever their number, so a count off by the clamp costs no
    // correctness.
    if (lhs && !isa<AffineConstantExpr>(*lhs))
      return lhs;
    return rhs ? rhs : lhs;
  }
  if (!lhs || !rhs)
    return std::nullopt;
  if (isa<arith::AddIOp>(op))
    return *lhs + *rhs;
  if (isa<arith::SubIOp>(op))
    return *lhs - *rhs;
  if (isa<arith::MulIOp>(op))
    return *lhs * *rhs;
  // Divisions by positive constants only: what the run's code can evaluate (artifact.fbs).
  auto divisor = dyn_cast<AffineConstantExpr>(*rhs);
  if (!divisor || divisor.getValue() <= 0)
    return std::nullopt;
  if (isa<arith::DivUIOp, arith::DivSIOp, arith::FloorDivSIOp>(op))
    return lhs->floorDiv(*rhs);
  if (isa<arith::CeilDivUIOp, arith::CeilDivSIOp>(op))
    return lhs->ceilDiv(*rhs);
  if (isa<arith::RemUIOp, arith::RemSIOp>(op))
    return *lhs % *rhs;
  return std::nullopt;
}

/// The work items of `space` (times `scale`) in the run's sizes, or nothing; with `innerWidth`,
/// the innermost loop's points taken that many at a time.
std::optional<AffineExpr> runItemsExpr(const RunSpace &space, Value sizes, int64_t scale,
                                       int64_t innerWidth = 1) {
  AffineExpr items = getAffineConstantExpr(scale, sizes.getContext());
  for (size_t d = 0; d < space.upper.size(); ++d) {
    int64_t lower = space.lower[d], step = space.steps[d];
    OpFoldResult upper = space.upper[d];
    std::optional<int64_t> constant = getConstantIntValue(upper);
    std::optional<AffineExpr> bound = constant
                                          ? getAffineConstantExpr(*constant, sizes.getContext())
                                          : runSizeExpr(cast<Value>(upper), sizes,
                                                        /*forGrid=*/true);
    if (!bound)
      return std::nullopt;
    // The host's code has no max: a loop the run leaves empty launches as if it had points,
    // which only sizes the grid.
    AffineExpr count = (*bound - lower).ceilDiv(step);
    if (d + 1 == space.upper.size())
      count = count.ceilDiv(innerWidth);
    items = items * count;
  }
  return items;
}

/// Whether `type` is laid out row-major and contiguously with a static shape.
bool isContiguous(MemRefType type) {
  return type.hasStaticShape() && type.getLayout().isIdentity();
}

/// Whether `type` is laid out row-major and contiguously with a static innermost dimension (the
/// outer ones may be sizes of the run): its rows start a static number of elements apart.
bool hasStaticRows(MemRefType type) {
  return type.getLayout().isIdentity() && type.getRank() > 0 &&
         !ShapedType::isDynamic(type.getShape().back());
}

/// Whether `ops` (one loop body, or part of it) can run for `width` neighbouring values of `iv`
/// with vectorizeOps: loads and stores that move along `iv` have it as their last index, and
/// only there, into contiguous memrefs of byte-sized or wider elements whose last dimension
/// `width` divides (so each access is one aligned vector), every store moves along `iv` (lanes cannot agree on one element), and
/// every other op is elementwise arithmetic without regions that does not compute with `iv`
/// itself. Adds to `varying` the values that become vectors.
bool canVectorize(ArrayRef<Operation *> ops, Value iv, int64_t width,
                  llvm::DenseSet<Value> &varying) {
  auto dependsOnIv = [&](ValueRange values) {
    return llvm::any_of(values, [&](Value v) { return v == iv || varying.contains(v); });
  };
  auto lastIndexIsIv = [&](MemRefType type, ValueRange indices) {
    if (!hasStaticRows(type) || type.getShape().back() % width != 0)
      return false;
    // A vector of i1 is bit-packed in memory (LLVM's vector layout), while a buffer of booleans
    // holds a byte per element: such loads and stores stay scalar.
    if (!type.getElementType().isIntOrFloat() || type.getElementTypeBitWidth() < 8)
      return false;
    return indices.back() == iv && !dependsOnIv(indices.drop_back());
  };
  for (Operation *op : ops) {
    if (op->getNumRegions() != 0)
      return false;
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      if (dependsOnIv(load.getIndices())) {
        if (!lastIndexIsIv(load.getMemRefType(), load.getIndices()))
          return false;
        varying.insert(load.getResult());
      }
      continue;
    }
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      if (!lastIndexIsIv(store.getMemRefType(), store.getIndices()))
        return false;
      continue;
    }
    if (!OpTrait::hasElementwiseMappableTraits(op) ||
        !isa<arith::ArithDialect, math::MathDialect>(op->getDialect()))
      return false;
    if (dependsOnIv(op->getOperands())) {
      // The induction variable itself (an index computation) is not a vector of data.
      if (llvm::is_contained(op->getOperands(), iv) ||
          llvm::any_of(op->getResultTypes(), [](Type t) { return t.isIndex(); }))
        return false;
      for (Value result : op->getResults())
        varying.insert(result);
    }
  }
  return true;
}

/// The ops of `block` but its terminator.
SmallVector<Operation *> bodyOps(Block *block) {
  SmallVector<Operation *> ops;
  for (Operation &op : block->without_terminator())
    ops.push_back(&op);
  return ops;
}

/// Decides whether a parallel loop's body can run `width` neighbouring points of its innermost
/// loop per thread with vector accesses: the innermost loop starts at 0 (`lower`) with step 1
/// and a static trip count (`count`) `width` divides, and the body is vectorizable along it
/// (canVectorize).
bool isVectorizable(scf::ParallelOp loop, int64_t lower, int64_t step,
                    std::optional<int64_t> count, int64_t width) {
  if (width <= 1 || !count || lower != 0 || step != 1 || *count % width != 0)
    return false;
  llvm::DenseSet<Value> varying;
  return canVectorize(bodyOps(loop.getBody()), loop.getInductionVars().back(), width, varying);
}

/// How many points one vector access of `loop`'s body holds: the widest element it stores
/// sets it.
int64_t vectorWidth(scf::ParallelOp loop, int64_t vectorBytes) {
  int64_t storeBits = 0;
  loop.getBody()->walk([&](memref::StoreOp store) {
    storeBits = std::max<int64_t>(storeBits, store.getMemRefType().getElementTypeBitWidth());
  });
  return storeBits > 0 && vectorBytes > 0 ? vectorBytes * 8 / storeBits : 1;
}

class KernelBuilder {
public:
  KernelBuilder(gpu::GPUModuleOp module, ModuleOp parent, int64_t blockSize, int64_t vectorBytes,
                int64_t blockRowLength)
      : module_(module), parent_(parent), blockSize_(blockSize), vectorBytes_(vectorBytes),
        blockRowLength_(blockRowLength) {}

  /// Outlines every phase of `function` and records its launches; fails with a diagnostic.
  LogicalResult outline(func::FuncOp function);

private:
  /// Clones into the kernel body the side-effect-free top-level ops `op` reads (views,
  /// constants, index arithmetic), transitively.
  LogicalResult cloneOperandsOf(Operation *op, OpBuilder &builder, IRMapping &mapping);
  void copyGlobal(memref::GetGlobalOp getGlobal);
  /// Copies into the kernel module the functions `op` calls (math helpers), transitively.
  void copyCallees(Operation *op);
  /// A fused group split into rows (kiln-tile-dispatches' row tiles): a warp, or for rows longer
  /// than `blockRowLength_` a whole block, computes each row, its lanes sharing each loop over
  /// the row; a reduction to one value per row is combined across a warp's lanes with shuffles
  /// and across a block's warps through shared memory, so every lane holds it. Returns the
  /// threads the kernel needs and the lanes per row.
  LogicalResult emitRowKernel(scf::ForallOp rows, OpBuilder &builder, IRMapping &mapping,
                              Value first, Value stride, Value thread, int64_t &workItems,
                              int64_t &lanes);
  /// Emits one op of a row's body for the lane `lane` of the `lanes` that share the row.
  void emitRowOp(Operation *op, Value lane, int64_t lanes, OpBuilder &builder,
                 IRMapping &mapping);
  /// Combines the partial value (and whether it has one) of every lane of a block into the
  /// block's, which every lane gets: each warp's first lane leaves its warp's in shared memory,
  /// and after a barrier every lane folds them in warp order.
  std::pair<Value, Value> combineAcrossWarps(Value partial, Value has, Value lane, int64_t lanes,
                                             function_ref<Value(OpBuilder &, Value, Value)> combine,
                                             OpBuilder &builder, Location loc);
  /// The vector form of the body of `loop` for `width` neighbouring points at `indices`.
  void emitVectorBody(scf::ParallelOp loop, ValueRange indices, int64_t width, OpBuilder &builder,
                      IRMapping &mapping);
  /// The body of `loop` for the point at `indices`: its vector form for `width` > 1 neighbours,
  /// a row reduction's lanes, or the body as it is.
  void emitPoint(scf::ParallelOp loop, ValueRange indices, int64_t width, OpBuilder &builder,
                 IRMapping &mapping);

  gpu::GPUModuleOp module_;
  ModuleOp parent_;
  int64_t blockSize_;
  int64_t vectorBytes_;
  int64_t blockRowLength_;
  /// The kernel being emitted (for its shared-memory buffers).
  gpu::GPUFuncOp kernel_;
  /// In a program for a range of shapes, the dispatch function's binding of the run's sizes
  /// (kiln-bind-run-sizes), and the work items of the phase being emitted when its loops' trip
  /// counts come from them.
  Value sizes_;
  std::optional<AffineExpr> runItems_;
};

void KernelBuilder::copyCallees(Operation *op) {
  op->walk([&](func::CallOp call) {
    SymbolTable kernels(module_);
    if (kernels.lookup(call.getCallee()))
      return;
    auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(parent_,
                                                                     call.getCalleeAttr());
    if (!callee || callee.isExternal())
      return;
    OpBuilder builder = OpBuilder::atBlockBegin(module_.getBody());
    Operation *copy = builder.clone(*callee);
    kernels.insert(copy);
    copyCallees(copy);
  });
}

LogicalResult KernelBuilder::cloneOperandsOf(Operation *op, OpBuilder &builder,
                                             IRMapping &mapping) {
  copyCallees(op);
  llvm::SetVector<Value> used;
  op->walk([&](Operation *inner) {
    for (Value operand : inner->getOperands())
      used.insert(operand);
  });
  for (Value value : used) {
    if (mapping.contains(value))
      continue;
    Operation *producer = value.getDefiningOp();
    if (!producer) {
      // Block arguments of the function are mapped; those of nested regions are defined inside.
      continue;
    }
    if (op->isAncestor(producer))
      continue;
    if (mayWriteMemory(producer) || producer->getNumRegions() != 0)
      return op->emitError("a kernel reads a value computed by another kernel phase: ")
             << *producer;
    if (failed(cloneOperandsOf(producer, builder, mapping)))
      return failure();
    if (auto getGlobal = dyn_cast<memref::GetGlobalOp>(producer))
      copyGlobal(getGlobal);
    if (isa<memref::AllocOp, memref::AllocaOp>(producer))
      return producer->emitError("a CUDA kernel cannot allocate a temporary buffer");
    builder.clone(*producer, mapping);
  }
  return success();
}

void KernelBuilder::copyGlobal(memref::GetGlobalOp getGlobal) {
  SymbolTable kernels(module_);
  if (kernels.lookup(getGlobal.getName()))
    return;
  auto global = SymbolTable::lookupNearestSymbolFrom<memref::GlobalOp>(parent_,
                                                                       getGlobal.getNameAttr());
  if (!global)
    return;
  OpBuilder builder = OpBuilder::atBlockBegin(module_.getBody());
  builder.clone(*global);
}

/// Emits `ops` (loads, elementwise arithmetic and stores of one loop body) for `width`
/// neighbouring values of `iv`, which `mapping` maps to the first of them: loads and stores whose
/// last index is `iv` move vectors, values uniform along `iv` stay scalars and are broadcast where
/// they meet vectors. Returns each scalar result's vector in `vectors`.
void vectorizeOps(ArrayRef<Operation *> ops, Value iv, int64_t width, OpBuilder &builder,
                  IRMapping &mapping, llvm::DenseMap<Value, Value> &vectors) {
  auto vectorOf = [&](Value scalar) -> Value {
    if (Value vector = vectors.lookup(scalar))
      return vector;
    // Uniform along the loop: the same value in every lane.
    Value uniform = mapping.lookupOrDefault(scalar);
    return vector::BroadcastOp::create(builder, scalar.getLoc(),
                                       VectorType::get({width}, scalar.getType()), uniform);
  };
  auto isVarying = [&](ValueRange values) {
    return llvm::any_of(values, [&](Value v) { return v == iv || vectors.count(v); });
  };
  auto alignment = [&](MemRefType type) {
    return llvm::MaybeAlign(width * type.getElementTypeBitWidth() / 8);
  };
  for (Operation *op : ops) {
    Location loc = op->getLoc();
    if (auto load = dyn_cast<memref::LoadOp>(op)) {
      if (isVarying(load.getIndices())) {
        SmallVector<Value> at;
        for (Value index : load.getIndices())
          at.push_back(mapping.lookupOrDefault(index));
        auto type = VectorType::get({width}, load.getType());
        vectors[load.getResult()] = vector::LoadOp::create(
            builder, loc, type, mapping.lookupOrDefault(load.getMemRef()), at,
            /*nontemporal=*/false, alignment(load.getMemRefType()));
        continue;
      }
      builder.clone(*op, mapping);
      continue;
    }
    if (auto store = dyn_cast<memref::StoreOp>(op)) {
      SmallVector<Value> at;
      for (Value index : store.getIndices())
        at.push_back(mapping.lookupOrDefault(index));
      vector::StoreOp::create(builder, loc, vectorOf(store.getValueToStore()),
                              mapping.lookupOrDefault(store.getMemRef()), at,
                              /*nontemporal=*/false, alignment(store.getMemRefType()));
      continue;
    }
    if (!isVarying(op->getOperands())) {
      builder.clone(*op, mapping);
      continue;
    }
    // Elementwise arithmetic: the same op on vectors.
    OperationState state(loc, op->getName());
    for (Value operand : op->getOperands())
      state.addOperands(vectorOf(operand));
    for (Type type : op->getResultTypes())
      state.addTypes(VectorType::get({width}, type));
    state.addAttributes(op->getAttrs());
    Operation *vectorOp = builder.create(state);
    for (auto [scalar, vector] : llvm::zip(op->getResults(), vectorOp->getResults()))
      vectors[scalar] = vector;
  }
}

void KernelBuilder::emitVectorBody(scf::ParallelOp loop, ValueRange indices, int64_t width,
                                   OpBuilder &builder, IRMapping &mapping) {
  for (auto [var, index] : llvm::zip(loop.getInductionVars(), indices))
    mapping.map(var, index);
  llvm::DenseMap<Value, Value> vectors;
  vectorizeOps(bodyOps(loop.getBody()), loop.getInductionVars().back(), width, builder, mapping,
               vectors);
}

/// A reduction along the contiguous innermost dimension of its input, as
/// convert-linalg-to-parallel-loops writes it inside the parallel loop over the results:
///   scf.for %r = 0 to R { ...; %a = memref.load %out[I]; %n = combine(%a, %v);
///                         memref.store %n, %out[I] }
/// with R a multiple of the vector width, %v computed elementwise from loads along %r, and
/// combine associative and commutative.
struct RowReduction {
  scf::ForOp loop;
  memref::LoadOp accumulator;
  Operation *combine;
  memref::StoreOp store;
  /// The operand of `combine` that is not the accumulator: the value folded in per element.
  Value combined;
  /// The loop body but the accumulator's load, `combine` and the store: what computes
  /// `combined`, run `width` elements at a time.
  SmallVector<Operation *> element;
  vector::CombiningKind kind;
  int64_t width;
};

std::optional<vector::CombiningKind> combiningKind(Operation *op) {
  using Kind = vector::CombiningKind;
  return llvm::TypeSwitch<Operation *, std::optional<Kind>>(op)
      .Case([](arith::AddFOp) { return Kind::ADD; })
      .Case([](arith::AddIOp) { return Kind::ADD; })
      .Case([](arith::MulFOp) { return Kind::MUL; })
      .Case([](arith::MulIOp) { return Kind::MUL; })
      .Case([](arith::MaximumFOp) { return Kind::MAXIMUMF; })
      .Case([](arith::MinimumFOp) { return Kind::MINIMUMF; })
      .Case([](arith::MaxNumFOp) { return Kind::MAXNUMF; })
      .Case([](arith::MinNumFOp) { return Kind::MINNUMF; })
      .Case([](arith::MaxSIOp) { return Kind::MAXSI; })
      .Case([](arith::MinSIOp) { return Kind::MINSI; })
      .Case([](arith::MaxUIOp) { return Kind::MAXUI; })
      .Case([](arith::MinUIOp) { return Kind::MINUI; })
      .Case([](arith::AndIOp) { return Kind::AND; })
      .Case([](arith::OrIOp) { return Kind::OR; })
      .Case([](arith::XOrIOp) { return Kind::XOR; })
      .Default([](Operation *) { return std::nullopt; });
}

/// The reduction `loop` computes, without deciding how it may be vectorized (width 1).
std::optional<RowReduction> matchReductionLoop(scf::ForOp loop) {
  if (loop.getNumResults() != 0)
    return std::nullopt;
  std::optional<int64_t> lb = getConstantIntValue(loop.getLowerBound());
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
  std::optional<int64_t> step = getConstantIntValue(loop.getStep());
  if (!lb || !ub || !step || *lb != 0 || *step != 1)
    return std::nullopt;
  Value r = loop.getInductionVar();
  SmallVector<Operation *> ops = bodyOps(loop.getBody());
  if (ops.size() < 3)
    return std::nullopt;
  RowReduction match;
  match.loop = loop;
  match.store = dyn_cast<memref::StoreOp>(ops.back());
  if (!match.store)
    return std::nullopt;
  match.combine = match.store.getValueToStore().getDefiningOp();
  if (!match.combine || match.combine->getBlock() != loop.getBody() ||
      match.combine->getNumOperands() != 2 || !match.combine->hasOneUse())
    return std::nullopt;
  std::optional<vector::CombiningKind> kind = combiningKind(match.combine);
  if (!kind)
    return std::nullopt;
  match.kind = *kind;
  for (Value operand : match.combine->getOperands()) {
    auto load = operand.getDefiningOp<memref::LoadOp>();
    if (load && load.getMemRef() == match.store.getMemRef() &&
        load.getIndices() == match.store.getIndices() && load->hasOneUse())
      match.accumulator = load;
    else
      match.combined = operand;
  }
  if (!match.accumulator || !match.combined || llvm::is_contained(match.store.getIndices(), r))
    return std::nullopt;
  for (Operation *op : ops)
    if (op != match.accumulator.getOperation() && op != match.combine &&
        op != match.store.getOperation())
      match.element.push_back(op);
  match.width = 1;
  return match;
}

std::optional<RowReduction> matchRowReduction(scf::ParallelOp parallel, int64_t vectorBytes) {
  Block *body = parallel.getBody();
  if (vectorBytes <= 0 || !llvm::hasSingleElement(body->without_terminator()))
    return std::nullopt;
  auto loop = dyn_cast<scf::ForOp>(body->front());
  if (!loop)
    return std::nullopt;
  std::optional<RowReduction> found = matchReductionLoop(loop);
  if (!found)
    return std::nullopt;
  RowReduction match = *found;
  Value r = loop.getInductionVar();
  std::optional<int64_t> ub = getConstantIntValue(loop.getUpperBound());
  // The element's computation must be vectorizable along %r exactly like an elementwise body,
  // at the width of its widest load along the row.
  int64_t loadBits = 0;
  for (Operation *op : match.element)
    if (auto load = dyn_cast<memref::LoadOp>(op))
      if (llvm::is_contained(load.getIndices(), r))
        loadBits = std::max<int64_t>(loadBits, load.getMemRefType().getElementTypeBitWidth());
  if (loadBits == 0)
    return std::nullopt;
  match.width = vectorBytes * 8 / loadBits;
  if (match.width <= 1 || *ub % match.width != 0 || *ub < match.width)
    return std::nullopt;
  llvm::DenseSet<Value> varying;
  if (!canVectorize(match.element, r, match.width, varying) || !varying.contains(match.combined))
    return std::nullopt;
  return match;
}

/// Emits a row reduction for one output point: `width`-wide partial results over the row (the
/// first chunk starts them, so no identity value is needed), folded into one with
/// vector.reduction and combined with the accumulator's value once.
void emitRowReduction(RowReduction match, OpBuilder &builder, IRMapping &mapping) {
  Location loc = match.loop.getLoc();
  Value r = match.loop.getInductionVar();
  auto chunk = [&](OpBuilder &b, Value at) {
    IRMapping local = mapping;
    local.map(r, at);
    llvm::DenseMap<Value, Value> vectors;
    vectorizeOps(match.element, r, match.width, b, local, vectors);
    return vectors.lookup(match.combined);
  };
  auto combineVectors = [&](OpBuilder &b, Value lhs, Value rhs) {
    OperationState state(loc, match.combine->getName());
    state.addOperands({lhs, rhs});
    state.addTypes(lhs.getType());
    state.addAttributes(match.combine->getAttrs());
    return b.create(state)->getResult(0);
  };
  Value first = chunk(builder, arith::ConstantIndexOp::create(builder, loc, 0));
  Value start = arith::ConstantIndexOp::create(builder, loc, match.width);
  Value step = arith::ConstantIndexOp::create(builder, loc, match.width);
  Value end = mapping.lookupOrDefault(match.loop.getUpperBound());
  auto rest = scf::ForOp::create(
      builder, loc, start, end, step, ValueRange{first},
      [&](OpBuilder &b, Location, Value at, ValueRange partial) {
        Value next = chunk(b, at);
        scf::YieldOp::create(b, loc, combineVectors(b, partial[0], next));
      });
  Value folded =
      vector::ReductionOp::create(builder, loc, match.kind, rest.getResult(0)).getResult();
  Value accumulator = builder.clone(*match.accumulator, mapping)->getResult(0);
  IRMapping last = mapping;
  last.map(match.accumulator.getResult(), accumulator);
  last.map(match.combined, folded);
  Value result = builder.clone(*match.combine, last)->getResult(0);
  last.map(match.combine->getResult(0), result);
  builder.clone(*match.store, last);
}

void KernelBuilder::emitPoint(scf::ParallelOp loop, ValueRange indices, int64_t width,
                              OpBuilder &builder, IRMapping &mapping) {
  if (width > 1) {
    emitVectorBody(loop, indices, width, builder, mapping);
    return;
  }
  for (auto [var, value] : llvm::zip(loop.getInductionVars(), indices))
    mapping.map(var, value);
  if (std::optional<RowReduction> reduction = matchRowReduction(loop, vectorBytes_)) {
    emitRowReduction(*reduction, builder, mapping);
    return;
  }
  for (Operation &op : loop.getBody()->without_terminator())
    builder.clone(op, mapping);
}

/// Whether a buffer `alloc` makes inside loops or branches of `function` can be one buffer for
/// every time it runs: nothing but sequential loops and branches enclose it (a phase that is not
/// a parallel loop runs on one thread), and neither it nor a view of it leaves the region it is
/// made in through a terminator. A fresh buffer's contents are undefined, so what one iteration
/// writes no later iteration reads, and reusing the memory is what a new allocation would be.
bool isRegionLocal(memref::AllocOp alloc, func::FuncOp function) {
  for (Operation *parent = alloc->getParentOp(); parent != function;
       parent = parent->getParentOp())
    if (!isa<scf::ForOp, scf::IfOp, scf::WhileOp>(parent))
      return false;
  SmallVector<Value> views = {alloc.getResult()};
  while (!views.empty()) {
    Value view = views.pop_back_val();
    for (Operation *user : view.getUsers()) {
      if (user->hasTrait<OpTrait::IsTerminator>())
        return false;
      if (auto viewLike = dyn_cast<ViewLikeOpInterface>(user))
        if (viewLike.getViewSource() == view)
          llvm::append_range(views, user->getResults());
    }
  }
  return true;
}

/// The largest value of each entry of the run's sizes of `function` (kiln-bind-run-sizes,
/// its last argument): its bindings' bounds (kiln.bounds) or static sizes.
std::optional<SmallVector<int64_t>> runSizeBounds(func::FuncOp function) {
  SmallVector<int64_t> bounds;
  for (unsigned i = 0; i + 1 < function.getNumArguments(); ++i) {
    if (auto attr = function.getArgAttrOfType<DenseI64ArrayAttr>(i, kBoundsAttr)) {
      llvm::append_range(bounds, attr.asArrayRef());
      continue;
    }
    // A binding of the run's size without bounds is a bare pointer, seen again through
    // memref.reinterpret_cast: its type says nothing of its sizes.
    auto type = dyn_cast<MemRefType>(function.getArgumentTypes()[i]);
    if (!type || !type.hasStaticShape() ||
        llvm::any_of(function.getArgument(i).getUsers(),
                     [](Operation *user) { return isa<memref::ReinterpretCastOp>(user); }))
      return std::nullopt;
    llvm::append_range(bounds, type.getShape());
  }
  if (static_cast<int64_t>(bounds.size()) !=
      function->getAttrOfType<IntegerAttr>(kRunSizesAttr).getInt())
    return std::nullopt;
  return bounds;
}

/// The largest value of `size` (a size of the run) where the run's sizes are at most `bounds`;
/// nothing where it is not a nondecreasing expression of them.
std::optional<int64_t> largestRunSize(Value size, Value sizes, ArrayRef<int64_t> bounds) {
  std::optional<AffineExpr> expr = runSizeExpr(size, sizes);
  if (!expr)
    return std::nullopt;
  bool increasing = true;
  expr->walk([&](AffineExpr inner) {
    auto binary = dyn_cast<AffineBinaryOpExpr>(inner);
    if (!binary)
      return;
    auto factor = dyn_cast<AffineConstantExpr>(binary.getRHS());
    if (binary.getKind() == AffineExprKind::Mod ||
        (binary.getKind() == AffineExprKind::Mul && factor && factor.getValue() < 0))
      increasing = false;
  });
  SmallVector<AffineExpr> values;
  for (int64_t bound : bounds)
    values.push_back(getAffineConstantExpr(bound, size.getContext()));
  auto largest = dyn_cast<AffineConstantExpr>(expr->replaceSymbols(values));
  if (!increasing || !largest || largest.getValue() < 0)
    return std::nullopt;
  return largest.getValue();
}

/// Turns each temporary buffer of `function` into a trailing argument, the dispatch's scratch
/// binding (kernels cannot allocate, and the arena plan gives the buffer a range that only lives
/// during the dispatch); records their types in `kiln.cuda_scratch`. A buffer made inside a
/// sequential loop (top-k's per-pick selection) takes one binding for all its iterations; one of
/// the run's size, one sized for the largest run.
LogicalResult hoistTemporaries(func::FuncOp function) {
  SmallVector<memref::AllocOp> allocs;
  function.walk([&](memref::AllocOp alloc) { allocs.push_back(alloc); });
  SmallVector<Attribute> types;
  // In a program for a range of shapes, the run's sizes (kiln-bind-run-sizes) and their bounds.
  bool runSizes = function->hasAttr(kRunSizesAttr);
  Value sizes = runSizes ? function.getArguments().back() : Value();
  std::optional<SmallVector<int64_t>> bounds;
  if (runSizes)
    bounds = runSizeBounds(function);
  // Nominal bounds (a dimension given without an upper bound) size the binding's static type
  // only: the buffer is the run's size, each dimension an expression of the run's sizes
  // (kiln.cuda_scratch_dims), which the program plans per run.
  const bool nominal = function->hasAttr(kNominalBoundsAttr);
  SmallVector<Attribute> scratchDims;
  bool anyRunSized = false;
  MLIRContext *context = function.getContext();
  const unsigned runSizeCount =
      runSizes ? static_cast<unsigned>(function->getAttrOfType<IntegerAttr>(kRunSizesAttr).getInt())
               : 0;
  for (memref::AllocOp alloc : allocs) {
    MemRefType type = alloc.getType();
    bool local = alloc->getParentOp() == function || isRegionLocal(alloc, function);
    // A top-level buffer of the run's size: a binding sized for the largest run, seen with the
    // run's sizes.
    MemRefType bindingType = type;
    SmallVector<AffineExpr> runDims;
    if (local && alloc->getParentOp() == function && bounds && type.getLayout().isIdentity() &&
        !type.hasStaticShape()) {
      SmallVector<int64_t> shape(type.getShape());
      unsigned next = 0;
      for (int64_t &size : shape) {
        if (!ShapedType::isDynamic(size)) {
          runDims.push_back(getAffineConstantExpr(size, context));
          continue;
        }
        Value runSize = alloc.getDynamicSizes()[next++];
        std::optional<int64_t> largest = largestRunSize(runSize, sizes, *bounds);
        std::optional<AffineExpr> expr = runSizeExpr(runSize, sizes);
        if (!largest || (nominal && !expr))
          return alloc.emitError("a CUDA kernel needs a temporary buffer of type ")
                 << type << " whose sizes have no bound in the program's ranges";
        size = *largest;
        if (expr)
          runDims.push_back(*expr);
      }
      bindingType = MemRefType::get(shape, type.getElementType(), MemRefLayoutAttrInterface{},
                                    type.getMemorySpace());
      anyRunSized = true;
    }
    if (!local || !isContiguous(bindingType))
      return alloc.emitError("a CUDA kernel needs a temporary buffer of type ")
             << type << " that is neither a statically shaped top-level allocation nor one "
                        "a sequential loop makes afresh in each iteration";
    // After the bindings, before the run's sizes where there are any.
    unsigned index = function.getNumArguments() - (runSizes ? 1 : 0);
    if (failed(function.insertArgument(index, bindingType, {}, alloc.getLoc())))
      return alloc.emitError("cannot turn the temporary buffer into a binding");
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        user->erase();
    Value buffer = function.getArgument(index);
    if (bindingType != type) {
      OpBuilder builder(alloc);
      buffer = viewWithRunSizes(builder, alloc.getLoc(), buffer, type, alloc.getMixedSizes());
    }
    alloc.replaceAllUsesWith(buffer);
    alloc.erase();
    types.push_back(TypeAttr::get(bindingType));
    scratchDims.push_back(
        runDims.size() == static_cast<size_t>(bindingType.getRank())
            ? Attribute(AffineMapAttr::get(AffineMap::get(0, runSizeCount, runDims, context)))
            : Attribute(UnitAttr::get(context)));
  }
  if (!types.empty())
    function->setAttr(kCudaScratchAttr, ArrayAttr::get(function.getContext(), types));
  if (nominal && anyRunSized)
    function->setAttr(kCudaScratchDimsAttr, ArrayAttr::get(context, scratchDims));
  return success();
}

/// The buffers a row kernel's row makes (one value per row passed between the ops of a fused
/// group) are private to each thread: every lane of the row's warp holds its own copy.
void privatizeRowBuffers(func::FuncOp function) {
  SmallVector<memref::AllocOp> allocs;
  function.walk([&](memref::AllocOp alloc) {
    if (alloc->getParentOfType<scf::ForallOp>())
      allocs.push_back(alloc);
  });
  for (memref::AllocOp alloc : allocs) {
    OpBuilder builder(alloc);
    auto alloca =
        memref::AllocaOp::create(builder, alloc.getLoc(), alloc.getType(), alloc.getDynamicSizes(),
                                 alloc.getSymbolOperands(), alloc.getAlignmentAttr());
    for (Operation *user : llvm::make_early_inc_range(alloc->getUsers()))
      if (isa<memref::DeallocOp>(user))
        user->erase();
    alloc.replaceAllUsesWith(alloca.getResult());
    alloc.erase();
  }
}

/// The buffer `value` views, through every view op.
Value viewRoot(Value value) {
  while (auto view = value.getDefiningOp<ViewLikeOpInterface>())
    value = view.getViewSource();
  return value;
}

/// The roots of the buffers `op` stores into.
llvm::SmallPtrSet<Value, 4> storedRoots(Operation *op) {
  llvm::SmallPtrSet<Value, 4> roots;
  op->walk([&](memref::StoreOp store) { roots.insert(viewRoot(store.getMemRef())); });
  return roots;
}

/// Whether every store inside `op` writes a buffer private to the thread (an alloca).
bool writesOnlyPrivate(Operation *op) {
  return llvm::all_of(storedRoots(op),
                      [](Value root) { return root.getDefiningOp<memref::AllocaOp>(); });
}

/// Emits, at `builder`, the loop nest `parallel` for the points lane, lane + lanes, ... of its
/// flattened iteration space.
void emitLaneStridedLoop(scf::ParallelOp parallel, const IterationSpace &space, Value lane,
                         int64_t lanes, OpBuilder &builder, IRMapping &mapping) {
  Location loc = parallel.getLoc();
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(builder, loc, value);
  };
  auto loop = scf::ForOp::create(builder, loc, lane, constant(space.points), constant(lanes));
  OpBuilder inside = OpBuilder::atBlockBegin(loop.getBody());
  SmallVector<Value> indices =
      delinearize(inside, loc, loop.getInductionVar(), space.counts, space.lower, space.steps);
  for (auto [var, value] : llvm::zip(parallel.getInductionVars(), indices))
    mapping.map(var, value);
  inside.setInsertionPoint(loop.getBody()->getTerminator());
  for (Operation &op : parallel.getBody()->without_terminator())
    inside.clone(op, mapping);
}

std::pair<Value, Value>
KernelBuilder::combineAcrossWarps(Value partial, Value has, Value lane, int64_t lanes,
                                  function_ref<Value(OpBuilder &, Value, Value)> combine,
                                  OpBuilder &builder, Location loc) {
  MLIRContext *context = builder.getContext();
  int64_t warps = lanes / 32;
  auto shared = gpu::AddressSpaceAttr::get(context, gpu::AddressSpace::Workgroup);
  // Aligned for 16-byte accesses: the NVPTX backend merges the lanes' reads of neighbouring
  // warps' values into vector loads (ld.shared.v4), which fault on a 4-byte aligned array
  // (cudaErrorMisalignedAddress on an H200) unless the array's alignment says 16.
  auto sharedBuffer = [&](Type element) -> Value {
    Value buffer = kernel_.addWorkgroupAttribution(
        MemRefType::get({warps}, element, MemRefLayoutAttrInterface(), shared), loc);
    kernel_.setWorkgroupAttributionAttr(kernel_.getNumWorkgroupAttributions() - 1,
                                        LLVM::LLVMDialect::getAlignAttrName(),
                                        builder.getI64IntegerAttr(16));
    return buffer;
  };
  Value partials = sharedBuffer(partial.getType());
  Value flags = sharedBuffer(builder.getI8Type());
  Value warpSize = arith::ConstantIndexOp::create(builder, loc, 32);
  Value warp = arith::DivUIOp::create(builder, loc, lane, warpSize);
  Value laneInWarp = arith::RemUIOp::create(builder, loc, lane, warpSize);
  OpBuilder leader = onlyWhereZero(builder, loc, laneInWarp);
  memref::StoreOp::create(leader, loc, partial, partials, ValueRange{warp});
  memref::StoreOp::create(leader, loc,
                          arith::ExtUIOp::create(leader, loc, leader.getI8Type(), has), flags,
                          ValueRange{warp});
  gpu::BarrierOp::create(builder, loc);
  // Every lane folds the warps' values in the same order, so all hold the same value.
  Value folded, any;
  for (int64_t w = 0; w < warps; ++w) {
    Value at = arith::ConstantIndexOp::create(builder, loc, w);
    Value value = memref::LoadOp::create(builder, loc, partials, ValueRange{at});
    Value flag = memref::LoadOp::create(builder, loc, flags, ValueRange{at});
    Value valueHas = arith::TruncIOp::create(builder, loc, builder.getI1Type(), flag);
    if (w == 0) {
      folded = value;
      any = valueHas;
      continue;
    }
    Value both = arith::AndIOp::create(builder, loc, any, valueHas);
    Value combined = combine(builder, folded, value);
    Value either = arith::SelectOp::create(builder, loc, any, folded, value);
    folded = arith::SelectOp::create(builder, loc, both, combined, either);
    any = arith::OrIOp::create(builder, loc, any, valueHas);
  }
  // The buffers are written again by the next row only after every lane has read them.
  gpu::BarrierOp::create(builder, loc);
  return {folded, any};
}

void KernelBuilder::emitRowOp(Operation *op, Value lane, int64_t lanes, OpBuilder &builder,
                              IRMapping &mapping) {
  Location loc = op->getLoc();
  auto parallel = dyn_cast<scf::ParallelOp>(op);
  std::optional<IterationSpace> space;
  if (parallel && parallel.getNumResults() == 0)
    space = staticSpace(parallel);
  if (!mayWriteMemory(op)) {
    // Index arithmetic, views, private buffers, constants: every lane has them.
    builder.clone(*op, mapping);
    return;
  }
  bool privateOnly = writesOnlyPrivate(op);
  // One reduction per row along a loop over the row (alone, or in a parallel loop of one
  // point): the lanes share the loop and combine their partial results with butterfly
  // shuffles, so every lane ends with the row's value.
  std::optional<RowReduction> reduction;
  if (auto loop = dyn_cast<scf::ForOp>(op))
    reduction = matchReductionLoop(loop);
  else if (space && space->points == 1 &&
           llvm::hasSingleElement(parallel.getBody()->without_terminator()))
    if (auto loop = dyn_cast<scf::ForOp>(parallel.getBody()->front()))
      reduction = matchReductionLoop(loop);
  Type element = reduction ? reduction->combined.getType() : Type();
  if (reduction && element.isIntOrFloat() && element.getIntOrFloatBitWidth() == 32) {
    if (parallel)
      for (auto [var, lower] : llvm::zip(parallel.getInductionVars(), space->lower))
        mapping.map(var, arith::ConstantIndexOp::create(builder, loc, lower));
    RowReduction match = *reduction;
    Value r = match.loop.getInductionVar();
    Value zero = arith::ConstantOp::create(builder, loc, builder.getZeroAttr(element));
    Value none = arith::ConstantIntOp::create(builder, loc, 0, 1);
    Value end = mapping.lookupOrDefault(match.loop.getUpperBound());
    Value step = arith::ConstantIndexOp::create(builder, loc, lanes);
    auto combine = [&](OpBuilder &b, Value lhs, Value rhs) {
      OperationState state(loc, match.combine->getName());
      state.addOperands({lhs, rhs});
      state.addTypes(lhs.getType());
      state.addAttributes(match.combine->getAttrs());
      return b.create(state)->getResult(0);
    };
    // Each lane folds its elements; the first one starts the partial value (no identity needed).
    auto partials =
        scf::ForOp::create(builder, loc, lane, end, step, ValueRange{zero, none},
                           [&](OpBuilder &b, Location, Value at, ValueRange state) {
                             IRMapping local = mapping;
                             local.map(r, at);
                             for (Operation *inner : match.element)
                               b.clone(*inner, local);
                             Value value = local.lookup(match.combined);
                             Value folded = combine(b, state[0], value);
                             Value next = arith::SelectOp::create(b, loc, state[1], folded, value);
                             Value yes = arith::ConstantIntOp::create(b, loc, 1, 1);
                             scf::YieldOp::create(b, loc, ValueRange{next, yes});
                           });
    Value partial = partials.getResult(0), has = partials.getResult(1);
    Value width = arith::ConstantIntOp::create(builder, loc, 32, 32);
    for (int64_t offset : {16, 8, 4, 2, 1}) {
      Value distance = arith::ConstantIntOp::create(builder, loc, offset, 32);
      Value other =
          gpu::ShuffleOp::create(builder, loc, partial, distance, width, gpu::ShuffleMode::XOR)
              .getShuffleResult();
      Value hasWide = arith::ExtUIOp::create(builder, loc, builder.getI32Type(), has);
      Value otherHasWide =
          gpu::ShuffleOp::create(builder, loc, hasWide, distance, width, gpu::ShuffleMode::XOR)
              .getShuffleResult();
      Value otherHas = arith::TruncIOp::create(builder, loc, builder.getI1Type(), otherHasWide);
      Value both = arith::AndIOp::create(builder, loc, has, otherHas);
      Value combined = combine(builder, partial, other);
      Value either = arith::SelectOp::create(builder, loc, has, partial, other);
      partial = arith::SelectOp::create(builder, loc, both, combined, either);
      has = arith::OrIOp::create(builder, loc, has, otherHas);
    }
    if (lanes > 32)
      std::tie(partial, has) =
          combineAcrossWarps(partial, has, lane, lanes, combine, builder, loc);
    auto fold = [&](OpBuilder &b) {
      Value accumulator = b.clone(*match.accumulator, mapping)->getResult(0);
      Value folded = combine(b, accumulator, partial);
      Value result = arith::SelectOp::create(b, loc, has, folded, accumulator);
      IRMapping last = mapping;
      last.map(match.combine->getResult(0), result);
      b.clone(*match.store, last);
    };
    if (privateOnly) {
      fold(builder);
    } else {
      // A buffer the lanes share: one lane reads and writes the row's value.
      OpBuilder inside = onlyWhereZero(builder, loc, lane);
      fold(inside);
    }
    return;
  }
  if (privateOnly) {
    // A value per row every lane needs: each lane computes it.
    builder.clone(*op, mapping);
    return;
  }
  if (space) {
    // The row's share of the output: the lanes take its points in turn. A point's own loops
    // (a reduction the lanes do not share) run whole in its lane.
    emitLaneStridedLoop(parallel, *space, lane, lanes, builder, mapping);
    return;
  }
  // Anything else that writes a shared buffer (a store of one value, a loop that is not a
  // reduction the lanes can share): the first lane, where the row's one value is written.
  OpBuilder inside = onlyWhereZero(builder, loc, lane);
  inside.clone(*op, mapping);
}

/// The most threads a CUDA block holds.
constexpr int64_t kMaxBlockThreads = 1024;
/// About the threads a large GPU keeps resident at once (an H100: 132 SMs of 2048 threads).
constexpr int64_t kResidentThreads = 1 << 18;

/// The longest loop over one row of `rows`: the most points of a sequential or parallel loop
/// inside it with static bounds.
int64_t rowLength(scf::ForallOp rows) {
  int64_t length = 1;
  rows.getBody()->walk([&](Operation *op) {
    std::optional<IterationSpace> space;
    if (auto loop = dyn_cast<scf::ForOp>(op))
      space = staticSpace({getAsOpFoldResult(loop.getLowerBound())},
                          {getAsOpFoldResult(loop.getUpperBound())},
                          {getAsOpFoldResult(loop.getStep())});
    else if (auto loop = dyn_cast<scf::ParallelOp>(op))
      space = staticSpace(loop);
    if (space)
      length = std::max(length, space->points);
  });
  return length;
}

/// Whether `op` loads from one of `roots`.
bool loadsFrom(Operation *op, const llvm::SmallPtrSet<Value, 4> &roots) {
  bool found = false;
  op->walk([&](memref::LoadOp load) { found |= roots.contains(viewRoot(load.getMemRef())); });
  return found;
}

LogicalResult KernelBuilder::emitRowKernel(scf::ForallOp rows, OpBuilder &builder,
                                           IRMapping &mapping, Value first, Value stride,
                                           Value thread, int64_t &workItems, int64_t &lanes) {
  Location loc = rows.getLoc();
  std::optional<IterationSpace> space =
      staticSpace(rows.getMixedLowerBound(), rows.getMixedUpperBound(), rows.getMixedStep());
  std::optional<RunSpace> run;
  if (!space && sizes_)
    run = runSpace(rows.getMixedLowerBound(), rows.getMixedUpperBound(), rows.getMixedStep());
  if (!space && !run)
    return rows.emitError("a row kernel needs row bounds that are static or sizes of the run");
  auto constant = [&](int64_t value) -> Value {
    return arith::ConstantIndexOp::create(builder, loc, value);
  };
  // The run's rows: as many as a large GPU keeps resident for the choice of lanes below.
  int64_t rowsForLanes = space ? space->points : kResidentThreads;
  // A warp per row, or a block for long rows (more lanes to spread the row over, at the cost of
  // two barriers per reduction).
  lanes = 32;
  int64_t length = rowLength(rows);
  if (blockRowLength_ > 0 && blockSize_ > 32 && blockSize_ % 32 == 0 && length > blockRowLength_) {
    lanes = blockSize_;
    // Few long rows: wider blocks (up to CUDA's 1024 threads, each keeping at least 16 points
    // of its row) until the rows' threads would fill the GPU, or a few hundred blocks of 256
    // leave most of its SMs' thread slots empty and the loads' latency shows.
    while (lanes < kMaxBlockThreads && rowsForLanes * lanes < kResidentThreads &&
           length >= lanes * 2 * 16)
      lanes *= 2;
  }
  Value laneCount = constant(lanes);
  Value lane = arith::RemUIOp::create(builder, loc, thread, laneCount);
  Value group = arith::DivUIOp::create(builder, loc, first, laneCount);
  Value groups = arith::DivUIOp::create(builder, loc, stride, laneCount);
  // Every lane of a warp (block) runs the same rows, so shuffles and barriers see all of them.
  Value rowCount;
  SmallVector<Value> runCountValues;
  if (space) {
    rowCount = constant(space->points);
  } else {
    std::tie(runCountValues, rowCount) = runCounts(*run, builder, loc, mapping);
  }
  auto loop = scf::ForOp::create(builder, loc, group, rowCount, groups);
  OpBuilder inside = OpBuilder::atBlockBegin(loop.getBody());
  SmallVector<Value> indices = space ? delinearize(inside, loc, loop.getInductionVar(),
                                                   space->counts, space->lower, space->steps)
                                     : delinearize(inside, loc, loop.getInductionVar(),
                                                   runCountValues, run->lower, run->steps);
  for (auto [var, value] : llvm::zip(rows.getInductionVars(), indices))
    mapping.map(var, value);
  inside.setInsertionPoint(loop.getBody()->getTerminator());
  SmallVector<Operation *> ops = bodyOps(rows.getBody());
  for (auto [k, op] : llvm::enumerate(ops)) {
    emitRowOp(op, lane, lanes, inside, mapping);
    // A block's lanes are several warps: what some write to a shared buffer, others read only
    // after a barrier.
    if (lanes > 32 && !writesOnlyPrivate(op)) {
      llvm::SmallPtrSet<Value, 4> roots = storedRoots(op);
      if (llvm::any_of(ArrayRef<Operation *>(ops).drop_front(k + 1),
                       [&](Operation *later) { return loadsFrom(later, roots); }))
        gpu::BarrierOp::create(inside, loc);
    }
  }
  if (space) {
    workItems = space->points * lanes;
    return success();
  }
  // Rows the run's sizes do not count (in the forms runSizeExpr reads) take a grid that fills
  // the GPU; every thread strides over the rows either way.
  runItems_ = runItemsExpr(*run, sizes_, lanes);
  if (!runItems_)
    runItems_ = getAffineConstantExpr(kResidentThreads, rows.getContext());
  workItems = 0;
  return success();
}

LogicalResult KernelBuilder::outline(func::FuncOp function) {
  MLIRContext *context = function.getContext();
  privatizeRowBuffers(function);
  if (failed(hoistTemporaries(function)))
    return failure();
  sizes_ = function->hasAttr(kRunSizesAttr) ? function.getArguments().back() : Value();
  Block &body = function.getBody().front();
  SmallVector<Operation *> phases;
  for (Operation &op : body.without_terminator())
    if (mayWriteMemory(&op))
      phases.push_back(&op);

  SmallVector<Attribute> launches;
  SymbolTable kernels(module_);
  for (auto [index, phase] : llvm::enumerate(phases)) {
    std::string name = (function.getSymName() + "_" + llvm::Twine(index)).str();
    OpBuilder moduleBuilder = OpBuilder::atBlockEnd(module_.getBody());
    auto kernel = gpu::GPUFuncOp::create(
        moduleBuilder, phase->getLoc(), name,
        FunctionType::get(context, function.getArgumentTypes(), {}));
    kernel_ = kernel;
    kernel->setAttr(gpu::GPUDialect::getKernelFuncAttrName(), UnitAttr::get(context));
    kernels.insert(kernel);
    Block &entry = kernel.getBody().front();
    OpBuilder builder = OpBuilder::atBlockBegin(&entry);
    IRMapping mapping;
    for (auto [from, to] : llvm::zip(function.getArguments(), entry.getArguments()))
      mapping.map(from, to);
    if (failed(cloneOperandsOf(phase, builder, mapping)))
      return failure();
    runItems_.reset();

    Location loc = phase->getLoc();
    auto indexConstant = [&](int64_t value) -> Value {
      return arith::ConstantIndexOp::create(builder, loc, value);
    };
    Value thread = gpu::ThreadIdOp::create(builder, loc, gpu::Dimension::x);
    Value block = gpu::BlockIdOp::create(builder, loc, gpu::Dimension::x);
    Value blockDim = gpu::BlockDimOp::create(builder, loc, gpu::Dimension::x);
    Value gridDim = gpu::GridDimOp::create(builder, loc, gpu::Dimension::x);
    Value first = arith::AddIOp::create(builder, loc,
                                        arith::MulIOp::create(builder, loc, block, blockDim),
                                        thread);
    Value stride = arith::MulIOp::create(builder, loc, gridDim, blockDim);

    auto loop = dyn_cast<scf::ParallelOp>(phase);
    std::optional<IterationSpace> space;
    std::optional<RunSpace> run;
    if (loop && loop.getNumResults() == 0)
      space = staticSpace(loop);
    if (loop && loop.getNumResults() == 0 && !space && sizes_)
      run = runSpace(getAsOpFoldResult(loop.getLowerBound()),
                     getAsOpFoldResult(loop.getUpperBound()), getAsOpFoldResult(loop.getStep()));
    int64_t workItems = 1;
    int64_t blockSize = blockSize_;
    if (auto rows = dyn_cast<scf::ForallOp>(phase)) {
      int64_t lanes = 32;
      if (failed(emitRowKernel(rows, builder, mapping, first, stride, thread, workItems, lanes)))
        return failure();
      // A block per row needs every block to hold whole rows.
      if (lanes > 32)
        blockSize = lanes;
      else if (!runItems_ && workItems < blockSize)
        blockSize = std::max<int64_t>(32, llvm::alignTo(workItems, 32));
    } else if (run) {
      // Trip counts of the run: each thread takes points in turn, `width` neighbours along a
      // static innermost loop at a time where the body moves them as vectors (as below).
      int64_t width = vectorWidth(loop, vectorBytes_);
      std::optional<int64_t> inner = getConstantIntValue(run->upper.back());
      bool vectorize =
          isVectorizable(loop, run->lower.back(), run->steps.back(), inner, width);
      if (!vectorize)
        width = 1;
      auto [counts, points] = runCounts(*run, builder, loc, mapping, width);
      auto forLoop = scf::ForOp::create(builder, loc, first, points, stride);
      OpBuilder inside = OpBuilder::atBlockBegin(forLoop.getBody());
      SmallVector<Value> indices = delinearize(inside, loc, forLoop.getInductionVar(), counts,
                                               run->lower, run->steps, width);
      inside.setInsertionPoint(forLoop.getBody()->getTerminator());
      emitPoint(loop, indices, width, inside, mapping);
      runItems_ = runItemsExpr(*run, sizes_, 1, width);
      if (!runItems_)
        runItems_ = getAffineConstantExpr(kResidentThreads, loop.getContext());
      workItems = 0;
    } else if (space) {
      int64_t width = vectorWidth(loop, vectorBytes_);
      bool vectorize = !space->counts.empty() &&
                       isVectorizable(loop, space->lower.back(), space->steps.back(),
                                      space->counts.back(), width);
      if (!vectorize)
        width = 1;
      SmallVector<int64_t> counts(space->counts);
      counts.back() /= width;
      workItems = 1;
      for (int64_t count : counts)
        workItems *= count;
      auto forLoop = scf::ForOp::create(builder, loc, first, indexConstant(workItems), stride);
      OpBuilder inside = OpBuilder::atBlockBegin(forLoop.getBody());
      // The point `i` stands for, outermost first (`width` points along the innermost loop).
      SmallVector<Value> indices = delinearize(inside, loc, forLoop.getInductionVar(), counts,
                                               space->lower, space->steps, width);
      inside.setInsertionPoint(forLoop.getBody()->getTerminator());
      emitPoint(loop, indices, width, inside, mapping);
      if (workItems < blockSize)
        blockSize = std::max<int64_t>(32, llvm::alignTo(workItems, 32));
    } else {
      // No parallel loop to spread: one thread runs the phase.
      OpBuilder inside = onlyWhereZero(builder, loc, first);
      inside.clone(*phase, mapping);
      blockSize = 1;
    }
    gpu::ReturnOp::create(builder, loc);
    Builder b(context);
    SmallVector<Attribute> fields = {b.getStringAttr(name), b.getI64IntegerAttr(blockSize),
                                     b.getI64IntegerAttr(workItems)};
    if (runItems_) {
      // The work items in the run's sizes: entry k of the sizes binding is symbol k.
      int64_t entries = function->getAttrOfType<IntegerAttr>(kRunSizesAttr).getInt();
      fields.push_back(AffineMapAttr::get(AffineMap::get(0, entries, *runItems_)));
    }
    launches.push_back(b.getArrayAttr(fields));
  }
  function->setAttr(kCudaLaunchesAttr, ArrayAttr::get(context, launches));
  // The body now lives in the kernels; the function stays as the dispatch's record.
  function.getBody().getBlocks().clear();
  function.setPrivate();
  return success();
}

struct OutlineCudaKernelsPass : impl::OutlineCudaKernelsPassBase<OutlineCudaKernelsPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    MLIRContext *context = module.getContext();
    module->setAttr(gpu::GPUDialect::getContainerModuleAttrName(), UnitAttr::get(context));
    auto gpuModule = module.lookupSymbol<gpu::GPUModuleOp>(kCudaKernelModule);
    if (!gpuModule) {
      OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
      gpuModule = gpu::GPUModuleOp::create(builder, module.getLoc(), kCudaKernelModule);
    }
    KernelBuilder kernels(gpuModule, module, blockSize, vectorBytes, blockRowLength);
    for (auto function : llvm::make_early_inc_range(module.getOps<func::FuncOp>())) {
      if (!function->hasAttr(kDispatchAttr) || function.isExternal())
        continue;
      if (failed(kernels.outline(function)))
        return signalPassFailure();
    }
    // Globals and helper functions the kernels copied are no longer used on the host.
    for (auto global : llvm::make_early_inc_range(module.getOps<memref::GlobalOp>()))
      if (SymbolTable::symbolKnownUseEmpty(global, module))
        global.erase();
    for (auto function : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (!function->hasAttr(kDispatchAttr) && SymbolTable::symbolKnownUseEmpty(function, module))
        function.erase();
  }
};

} // namespace
} // namespace kiln
