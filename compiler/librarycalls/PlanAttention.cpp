//===- PlanAttention.cpp - Scaled dot-product attention as one library call -===//
//
// Plans `softmax(scale * Q Kᵀ [+ mask]) V` around a softmax as one attention call of the target
// ("kiln.attention" on the CPU and for f32 on CUDA, "cudnn.attention" in half precision), reading
// Q, Kᵀ and V where their data lies through strided views, or as they lie over dynamic shapes.
//
//===----------------------------------------------------------------------===//

#include "compiler/librarycalls/CallPlan.h"

#include "compiler/librarycalls/StridedOperands.h"
#include "contract/matrix_layout.h"
#include "dialects/graph/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/TypeUtilities.h"

#include <cmath>
#include <optional>

namespace kiln::librarycalls {
namespace {

/// Whether a GEMM reads the last two dims of `view` as they lie or transposed: the BLAS rule of
/// contract/matrix_layout.h, which the runtime's attention call checks too.
bool gemmReadable(const StridedView &view) {
  size_t rank = view.dims.size();
  return contract::stridedMatrix(view.dims[rank - 2], view.dims[rank - 1], view.strides[rank - 2],
                                 view.strides[rank - 1], /*transposable=*/true)
      .has_value();
}

/// `view` with `batch` (the result's batch dims) in front of its last two dims: missing leading
/// dims and dims of size 1 broadcast with stride 0; with `broadcastMatrix`, its last two dims
/// broadcast to `rows` x `cols` too (an additive mask). Fails for dims that do not broadcast.
std::optional<StridedView> alignView(StridedView view, ArrayRef<int64_t> batch,
                                     bool broadcastMatrix, int64_t rows, int64_t cols) {
  size_t rank = batch.size() + 2;
  if (view.dims.size() > rank || view.dims.size() < (broadcastMatrix ? 0 : 2))
    return std::nullopt;
  size_t missing = rank - view.dims.size();
  view.dims.insert(view.dims.begin(), missing, 1);
  view.strides.insert(view.strides.begin(), missing, 0);
  SmallVector<int64_t> want(batch);
  want.append({rows, cols});
  for (size_t d = 0; d < rank; ++d) {
    if (view.dims[d] == want[d])
      continue;
    if (view.dims[d] != 1 || (d + 2 >= rank && !broadcastMatrix))
      return std::nullopt;
    view.dims[d] = want[d];
    view.strides[d] = 0;
  }
  return view;
}

/// The farthest view of a product operand the attention call reads (the operand itself when no
/// data movement before it can be read through), aligned to the result's batch dims. With
/// `group` (Kᵀ and V), heads repeated for grouped queries are read where they lie, once
/// (ungroupHeads): the view then has the result's batch dims with the last divided by the
/// group, which is set (1 where nothing is repeated).
std::optional<StridedView> attentionOperand(Value operand, ArrayRef<int64_t> batch,
                                            int64_t *group = nullptr) {
  auto type = cast<RankedTensorType>(operand.getType());
  SmallVector<StridedView> candidates = traceOperand(operand);
  candidates.insert(
      candidates.begin(),
      StridedView{
          operand, 0, SmallVector<int64_t>(type.getShape()), rowMajorStrides(type.getShape()), {}});
  int64_t rank = type.getRank();
  auto farthest = [&](ArrayRef<StridedView> views,
                      ArrayRef<int64_t> batchDims) -> std::optional<StridedView> {
    for (const StridedView &view : llvm::reverse(views)) {
      if (!gemmReadable(view))
        continue;
      if (std::optional<StridedView> aligned = alignView(
              view, batchDims, false, type.getDimSize(rank - 2), type.getDimSize(rank - 1)))
        return aligned;
    }
    return std::nullopt;
  };
  if (group) {
    *group = 1;
    for (const StridedView &candidate : candidates) {
      if (candidate.dims.size() != batch.size() + 2)
        continue;
      int64_t g = 1;
      std::optional<StridedView> ungrouped = ungroupHeads(candidate, &g);
      if (!ungrouped || g < 2)
        continue;
      SmallVector<StridedView> further = traceView(*ungrouped);
      further.insert(further.begin(), *ungrouped);
      SmallVector<int64_t> kvBatch(batch);
      kvBatch.back() /= g;
      if (std::optional<StridedView> view = farthest(further, kvBatch)) {
        *group = g;
        return view;
      }
    }
  }
  return farthest(candidates, batch);
}

/// Whether cuDNN's fused attention (runtime/src/cuda/cudnn_attention.cpp, with the limits the
/// cuDNN frontend checks for f16 and bf16) reads or writes `view` of Q, Kᵀ, V or the result:
/// its batch dims (all but the last two) not broadcast, unit stride along `unit` (the head dim:
/// the last for Q, V and the result, the row for Kᵀ), every other stride of a dim above 1 and
/// the offset in whole 16 bytes (8 elements), and a head dim of at most 128 in multiples of 8.
bool cudnnAttentionTakes(const StridedView &view, size_t unit) {
  constexpr int64_t kElementsPer16Bytes = 8;
  if (view.dims.size() > 4 || view.offset % kElementsPer16Bytes != 0 || view.strides[unit] != 1 ||
      view.dims[unit] > 128 || view.dims[unit] % 8 != 0)
    return false;
  for (size_t dim = 0; dim < view.dims.size(); ++dim) {
    bool batchDim = dim + 2 < view.dims.size();
    if (batchDim && view.dims[dim] > 1 && view.strides[dim] == 0)
      return false;
    if (dim != unit && view.dims[dim] > 1 && view.strides[dim] % kElementsPer16Bytes != 0)
      return false;
  }
  return true;
}

/// The attention call over dynamic shapes: Q, Kᵀ, V, the mask and the result as they lie (no
/// views: the runtime reads each binding with its run's strides, leading dims aligned with the
/// result's and dims of 1 broadcast), so each must have the result's rank at most and batch dims
/// that are the result's or 1; the mask f32.
FailureOr<CallPlan> planDenseAttention(const Target &target, graph::MatmulOp scores,
                                       graph::MatmulOp context, Value mask, float scale,
                                       graph::SelectOp guard, ArrayRef<Operation *> chain,
                                       graph::SoftmaxOp softmax, ArrayRef<Operation *> guardOps) {
  auto resultType = cast<RankedTensorType>(context.getType());
  int64_t rank = resultType.getRank();
  ArrayRef<int64_t> batch = resultType.getShape().drop_back(2);
  auto aligned = [&](Value value, bool matrixMayBroadcast) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || type.getRank() > rank || (!matrixMayBroadcast && type.getRank() < 2))
      return false;
    int64_t missing = rank - type.getRank();
    for (int64_t d = 0; d < type.getRank(); ++d) {
      int64_t at = d + missing;
      if (at >= rank - 2)
        continue;
      if (type.getDimSize(d) != 1 && type.getDimSize(d) != batch[at])
        return false;
    }
    return true;
  };
  if (!aligned(scores.getLhs(), false) || !aligned(scores.getRhs(), false) ||
      !aligned(context.getRhs(), false))
    return failure();
  if (mask) {
    auto maskType = dyn_cast<RankedTensorType>(mask.getType());
    if (!maskType || !maskType.getElementType().isF32() || !aligned(mask, true))
      return failure();
  }
  Builder b(softmax.getContext());
  CallPlan plan = startPlan(target, target.attention, scores, rank - 1,
                            {scores.getLhs(), scores.getRhs(), context.getRhs()});
  if (mask)
    plan.operands.push_back(mask);
  plan.attributes = {b.getNamedAttr(contract::param::kScale.name, b.getDenseF32ArrayAttr({scale}))};
  if (guard)
    plan.attributes.push_back(
        b.getNamedAttr(contract::param::kZeroMaskedRows.name, b.getDenseI64ArrayAttr({1})));
  plan.fused.assign(chain.rbegin(), chain.rend());
  plan.fused.push_back(softmax);
  llvm::append_range(plan.fused, guardOps);
  plan.fused.push_back(context);
  plan.result = context.getResult();
  return plan;
}

} // namespace

/// Plans `softmax(scale * Q Kᵀ [+ mask]) V` around `softmax` as one attention call, the form
/// exporters write: a graph.matmul of Q and Kᵀ, multiplications and divisions by splat constants,
/// at most one addend (the mask, after the scaling), the softmax along the last axis (optionally
/// zeroed on the rows where the mask is -inf everywhere, as the ONNX Attention operator does),
/// and a graph.matmul of its result and V; each intermediate read only by the next, every tensor
/// static. The products are f32 on the CPU, f16 or bf16 on CUDA, where the scores may be widened
/// to f32 on the way to the softmax and its result narrowed back (kiln-assign-precision's form:
/// one cast before the softmax, anywhere among the scaling and the mask, and one after it).
/// Q, Kᵀ and V are read where their data lies (through the transposes, slices and splits before
/// them; Kᵀ and V before heads repeated for grouped queries, with `kv_group`) and the result is
/// written through the transposes and reshapes after it. Fails for
/// anything else, or what the target's call does not take (cudnnAttentionTakes); the ops then
/// stay for the library calls and kernels they were.
FailureOr<CallPlan> planAttention(graph::SoftmaxOp softmax, const Target &target) {
  auto scoresType = dyn_cast<RankedTensorType>(softmax.getType());
  // Over dynamic shapes (a program for a range of shapes) Kiln's call reads each operand as it
  // lies, its strides the run's (no views); cuDNN's takes static shapes only.
  bool dynamic = scoresType && !scoresType.hasStaticShape();
  if (target.attention.empty() || !scoresType || (dynamic && target.attentionNeedsViews) ||
      scoresType.getRank() < 2 || !softmax->hasOneUse())
    return failure();
  int64_t rank = scoresType.getRank();
  int64_t axis = static_cast<int64_t>(softmax.getAxis());
  // A guard may zero the rows the mask leaves no key in (the ONNX Attention operator's form):
  // select(max(mask along the keys) == -inf, 0, softmax), checked against the mask below.
  Operation *user = *softmax->getUsers().begin();
  Value probabilities = softmax.getResult();
  auto guard = dyn_cast<graph::SelectOp>(user);
  if (guard) {
    std::optional<float> zero = splatConstant(guard.getOnTrue());
    if (!guard->hasOneUse() || guard.getOnFalse() != probabilities || !zero || *zero != 0.0f ||
        guard.getType() != scoresType)
      return failure();
    probabilities = guard.getResult();
    user = *guard->getUsers().begin();
  }
  if (guard && !target.attentionZeroesMaskedRows)
    return failure();
  // The probabilities narrowed to the products' precision.
  auto narrow = dyn_cast<graph::CastOp>(user);
  if (narrow) {
    if (!narrow->hasOneUse())
      return failure();
    probabilities = narrow.getResult();
    user = *narrow->getUsers().begin();
  }
  auto context = dyn_cast<graph::MatmulOp>(user);
  Type element = context ? staticUniformElementType(context, false, dynamic) : Type();
  if (axis != rank - 1 || !context || context.getLhs() != probabilities ||
      context.getRhs() == probabilities || !element ||
      !(target.halfAttention ? isHalfPrecision(element) : element.isF32()))
    return failure();

  // Back from the softmax to the product of Q and Kᵀ: the mask first, then the scaling, with at
  // most one cast among them (`chainType` is the type of the scores where the walk is).
  float scale = 1.0f;
  bool scaled = false;
  Value mask;
  Operation *maskAdd = nullptr;
  SmallVector<Operation *> chain;
  Value current = softmax.getInput();
  RankedTensorType chainType = scoresType;
  graph::CastOp widen;
  graph::MatmulOp scores;
  while (true) {
    Operation *def = current.getDefiningOp();
    if (!def || !current.hasOneUse() || def->getBlock() != softmax->getBlock() ||
        current.getType() != chainType)
      return failure();
    if ((scores = dyn_cast<graph::MatmulOp>(def)))
      break;
    if (auto cast = dyn_cast<graph::CastOp>(def)) {
      auto from = dyn_cast<RankedTensorType>(cast.getInput().getType());
      if (widen || !from || from.getShape() != scoresType.getShape() ||
          !isa<FloatType>(from.getElementType()))
        return failure();
      widen = cast;
      chainType = from;
      current = cast.getInput();
      chain.push_back(def);
      continue;
    }
    if (!isa<graph::AddOp, graph::MulOp, graph::DivOp>(def))
      return failure();
    Value lhs = def->getOperand(0), rhs = def->getOperand(1);
    if (isa<graph::AddOp>(def)) {
      // One mask, added after every scaling (walking back, before any is seen).
      if (mask || scaled)
        return failure();
      // The scores are the operand of their own type, read only here, made by the product, a
      // scaling or the cast; the mask is the other.
      auto onChain = [&](Value value) {
        Operation *producer = value.getDefiningOp();
        return producer && value.hasOneUse() && value.getType() == chainType &&
               isa<graph::MatmulOp, graph::MulOp, graph::DivOp, graph::CastOp>(producer);
      };
      bool lhsChain = onChain(lhs);
      if (!lhsChain && !onChain(rhs))
        return failure();
      mask = lhsChain ? rhs : lhs;
      maskAdd = def;
      current = lhsChain ? lhs : rhs;
    } else if (isa<graph::MulOp>(def)) {
      std::optional<float> factor = splatConstant(rhs);
      Value other = lhs;
      if (!factor) {
        factor = splatConstant(lhs);
        other = rhs;
      }
      if (!factor)
        return failure();
      scale *= *factor;
      scaled = true;
      current = other;
    } else {
      std::optional<float> divisor = splatConstant(rhs);
      if (!divisor || *divisor == 0.0f)
        return failure();
      scale /= *divisor;
      scaled = true;
      current = lhs;
    }
    chain.push_back(def);
  }
  // The cast between the products and the softmax comes with the one after it, and only where
  // the products are in a lower precision than the softmax.
  if (staticUniformElementType(scores, false, dynamic) != element || !std::isfinite(scale) ||
      static_cast<bool>(widen) != static_cast<bool>(narrow) ||
      (narrow && (getElementTypeOrSelf(widen.getInput().getType()) != element ||
                  scoresType.getElementType() == element)))
    return failure();
  // The guard's condition: the mask's row maximum (kept as a dimension) equal to -inf.
  SmallVector<Operation *> guardOps;
  if (guard) {
    auto test = guard.getCondition().getDefiningOp<graph::CompareOp>();
    if (!mask || !test || !test->hasOneUse() ||
        test.getDirection() != graph::ComparisonDirection::eq)
      return failure();
    auto largest = test.getLhs().getDefiningOp<graph::ReduceMaxOp>();
    std::optional<float> bound = splatConstant(test.getRhs());
    if (!largest || !largest->hasOneUse() || largest.getInput() != mask || !largest.getKeepdims() ||
        largest.getAxes().size() != 1 ||
        largest.getAxes()[0] != cast<RankedTensorType>(mask.getType()).getRank() - 1 || !bound ||
        !std::isinf(*bound) || *bound > 0)
      return failure();
    guardOps = {largest, test, guard};
  }
  auto contextType = cast<RankedTensorType>(context.getType());
  ArrayRef<int64_t> batch = scoresType.getShape().drop_back(2);
  if (contextType.getRank() != rank || contextType.getShape().drop_back(2) != batch)
    return failure();
  if (dynamic)
    return planDenseAttention(target, scores, context, mask, scale, guard, chain, softmax,
                              guardOps);
  int64_t sq = scoresType.getDimSize(rank - 2), skv = scoresType.getDimSize(rank - 1);
  if (target.attentionMaxHeadDim > 0 &&
      (cast<RankedTensorType>(scores.getLhs().getType()).getShape().back() >
           target.attentionMaxHeadDim ||
       contextType.getShape().back() > target.attentionMaxHeadDim))
    return failure();

  // Grouped-query attention reads Kᵀ and V before their heads are repeated, both with one
  // group; otherwise as they are.
  int64_t kGroup = 1, vGroup = 1;
  std::optional<StridedView> q = attentionOperand(scores.getLhs(), batch);
  std::optional<StridedView> kt = attentionOperand(scores.getRhs(), batch, &kGroup);
  std::optional<StridedView> v = attentionOperand(context.getRhs(), batch, &vGroup);
  if (kGroup != vGroup) {
    kGroup = 1;
    kt = attentionOperand(scores.getRhs(), batch);
    v = attentionOperand(context.getRhs(), batch);
  }
  if (!q || !kt || !v)
    return failure();
  size_t last = static_cast<size_t>(rank) - 1;
  if (target.halfAttention &&
      !(cudnnAttentionTakes(*q, last) && cudnnAttentionTakes(*kt, last - 1) &&
        cudnnAttentionTakes(*v, last)))
    return failure();
  std::optional<StridedView> maskView;
  if (mask) {
    auto maskType = dyn_cast<RankedTensorType>(mask.getType());
    if (!maskType || !maskType.hasStaticShape() || !isa<FloatType>(maskType.getElementType()))
      return failure();
    maskView = alignView(StridedView{mask,
                                     0,
                                     SmallVector<int64_t>(maskType.getShape()),
                                     rowMajorStrides(maskType.getShape()),
                                     {}},
                         batch, true, sq, skv);
    // A mask that is not in the products' type is converted (below); on CUDA it must not
    // broadcast along the keys (cuDNN reads them with unit stride).
    if (!maskView || (target.halfAttention && maskType.getShape().back() != skv) ||
        (!target.halfAttention && !maskType.getElementType().isF32()))
      return failure();
  }

  // The result's view (written through the data movement after it where that is a view).
  auto contextShape = SmallVector<int64_t>(contextType.getShape());
  StridedView dst{context.getResult(), 0, contextShape, rowMajorStrides(contextShape), {}};
  SmallVector<StridedView> written = traceResult(context.getResult());
  if (!written.empty() && written.back().dims.size() == static_cast<size_t>(rank) &&
      (!target.halfAttention || cudnnAttentionTakes(written.back(), last)))
    dst = written.back();

  // Every check has passed: a mask of another type is converted to the products' (f32 masks of
  // the f16 and bf16 calls, which take one element type).
  if (mask && cast<RankedTensorType>(mask.getType()).getElementType() != element) {
    // One conversion serves every attention of the mask (a model's layers share theirs).
    auto maskType = cast<RankedTensorType>(mask.getType());
    auto converted = llvm::find_if(mask.getUsers(), [&](Operation *op) {
      auto cast = dyn_cast<graph::CastOp>(op);
      return cast && cast.getType() == maskType.clone(element) &&
             cast->getBlock() == maskAdd->getBlock() && cast->isBeforeInBlock(maskAdd);
    });
    if (converted != mask.getUsers().end()) {
      mask = (*converted)->getResult(0);
    } else {
      OpBuilder builder(maskAdd);
      mask = graph::CastOp::create(builder, mask.getLoc(), maskType.clone(element), mask,
                                   TypeAttr::get(element));
    }
    maskView = alignView(StridedView{mask,
                                     0,
                                     SmallVector<int64_t>(maskType.getShape()),
                                     rowMajorStrides(maskType.getShape()),
                                     {}},
                         batch, true, sq, skv);
  }

  Builder b(softmax.getContext());
  CallPlan plan =
      startPlan(target, target.attention, scores, rank - 1, {q->base, kt->base, v->base});
  if (mask)
    plan.operands.push_back(mask);
  plan.attributes = {
      b.getNamedAttr(contract::param::kQView.name, b.getDenseI64ArrayAttr(q->encode())),
      b.getNamedAttr(contract::param::kKView.name, b.getDenseI64ArrayAttr(kt->encode())),
      b.getNamedAttr(contract::param::kVView.name, b.getDenseI64ArrayAttr(v->encode())),
      b.getNamedAttr(contract::param::kScale.name, b.getDenseF32ArrayAttr({scale}))};
  if (maskView)
    plan.attributes.push_back(b.getNamedAttr(contract::param::kMaskView.name,
                                             b.getDenseI64ArrayAttr(maskView->encode())));
  if (guard)
    plan.attributes.push_back(
        b.getNamedAttr(contract::param::kZeroMaskedRows.name, b.getDenseI64ArrayAttr({1})));
  if (kGroup != 1)
    plan.attributes.push_back(
        b.getNamedAttr(contract::param::kKvGroup.name, b.getI64IntegerAttr(kGroup)));
  for (const StridedView &view : {*q, *kt, *v})
    llvm::append_range(plan.readThrough, view.through);
  plan.fused.assign(chain.rbegin(), chain.rend());
  plan.fused.push_back(softmax);
  llvm::append_range(plan.fused, guardOps);
  if (narrow)
    plan.fused.push_back(narrow);
  plan.fused.push_back(context);
  plan.result = context.getResult();
  if (dst.base != plan.result) {
    plan.written = dst.base;
    plan.writtenThrough.assign(dst.through.rbegin(), dst.through.rend());
  }
  plan.attributes.push_back(
      b.getNamedAttr(contract::param::kDstView.name, b.getDenseI64ArrayAttr(dst.encode())));
  return plan;
}

} // namespace kiln::librarycalls
