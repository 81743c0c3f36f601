//===- StridedOperands.cpp - Data movement read through as strides --------===//
//
// A view maps its indices to a flat offset in its base's row-major buffer. Reshapes leave the
// flat offset alone, so a view passes through them unchanged. A transpose or a slice changes
// which multi-index an offset is, so the view's strides are first split into steps along the
// dimensions of the value they index (each stride a multiple of one dimension's row-major stride,
// never carrying into the next dimension), and the steps then mapped through the op.
//
//===----------------------------------------------------------------------===//

#include "compiler/librarycalls/StridedOperands.h"
#include "contract/matrix_layout.h"
#include "dialects/graph/GraphOps.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/STLExtras.h"

#include <numeric>

using namespace mlir;

namespace kiln {
namespace {

/// A view's indices as steps along the dimensions of a value of some shape: index_j of that
/// value is `start[j] + sum over k with dim[k] == j of step[k] * i_k` (dim[k] is -1 for the
/// view's unit dimensions).
struct Steps {
  SmallVector<int64_t> start, dim, step;
};

std::optional<ArrayRef<int64_t>> staticShape(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape())
    return std::nullopt;
  return type.getShape();
}

/// `view`'s map as steps along `shape`, or none where a stride does not fall on one dimension
/// or a dimension's indices would run past its size (the flat offsets would carry).
std::optional<Steps> decompose(const StridedView &view, ArrayRef<int64_t> shape) {
  SmallVector<int64_t> row = rowMajorStrides(shape);
  int64_t total = shape.empty() ? 1 : row.front() * shape.front();
  if (view.offset < 0 || view.offset >= total)
    return std::nullopt;
  Steps steps;
  int64_t rest = view.offset;
  for (int64_t stride : row) {
    steps.start.push_back(rest / stride);
    rest %= stride;
  }
  SmallVector<int64_t> last(steps.start);
  for (auto [size, stride] : llvm::zip_equal(view.dims, view.strides)) {
    if (size == 1) {
      steps.dim.push_back(-1);
      steps.step.push_back(0);
      continue;
    }
    int64_t found = -1;
    for (int64_t j = static_cast<int64_t>(shape.size()) - 1; j >= 0 && found < 0; --j)
      if (shape[j] > 1 && stride >= row[j] && stride % row[j] == 0 && stride / row[j] < shape[j])
        found = j;
    if (found < 0)
      return std::nullopt;
    steps.dim.push_back(found);
    steps.step.push_back(stride / row[found]);
    last[found] += stride / row[found] * (size - 1);
  }
  for (auto [index, size] : llvm::zip_equal(last, shape))
    if (index >= size)
      return std::nullopt;
  return steps;
}

/// Re-expresses `view` over a value whose multi-index is `scale[j] * index_j + shift[j]` in
/// dimension `target[j]` for each dimension j of the value `steps` index, with row-major
/// strides `row`.
void remap(StridedView &view, const Steps &steps, ArrayRef<int64_t> target, ArrayRef<int64_t> scale,
           ArrayRef<int64_t> shift, ArrayRef<int64_t> row) {
  view.offset = 0;
  for (size_t j = 0; j < steps.start.size(); ++j)
    view.offset += (shift[j] + scale[j] * steps.start[j]) * row[target[j]];
  for (size_t k = 0; k < view.dims.size(); ++k) {
    int64_t j = steps.dim[k];
    view.strides[k] = j < 0 ? 0 : steps.step[k] * scale[j] * row[target[j]];
  }
}

/// Gives the view's unit dimensions a stride past its whole extent, where libraries that check
/// strides for overlap expect one.
void settleUnitStrides(StridedView &view) {
  int64_t extent = 1;
  for (auto [size, stride] : llvm::zip_equal(view.dims, view.strides))
    extent = std::max(extent, size * stride);
  for (auto [size, stride] : llvm::zip_equal(view.dims, view.strides))
    if (size == 1)
      stride = extent;
}

/// `value` as its own dense view, for a static tensor.
std::optional<StridedView> denseView(Value value) {
  std::optional<ArrayRef<int64_t>> shape = staticShape(value);
  if (!shape)
    return std::nullopt;
  return StridedView{value, 0, SmallVector<int64_t>(*shape), rowMajorStrides(*shape), {}};
}

bool isReshape(Operation *op) {
  return isa<graph::ReshapeOp, graph::SqueezeOp, graph::UnsqueezeOp, graph::FlattenOp>(op);
}

} // namespace

SmallVector<int64_t> rowMajorStrides(ArrayRef<int64_t> dims) {
  SmallVector<int64_t> strides(dims.size(), 1);
  for (int64_t i = static_cast<int64_t>(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  return strides;
}

SmallVector<int64_t> StridedView::encode() const {
  SmallVector<int64_t> values{offset};
  llvm::append_range(values, dims);
  llvm::append_range(values, strides);
  return values;
}

SmallVector<StridedView> traceOperand(Value operand) {
  std::optional<StridedView> dense = denseView(operand);
  if (!dense)
    return {};
  return traceView(std::move(*dense));
}

SmallVector<StridedView> traceView(StridedView view) {
  SmallVector<StridedView> candidates;
  Value current = view.base;
  while (Operation *def = current.getDefiningOp()) {
    if (def->getNumOperands() < 1)
      break;
    Value input = def->getOperand(0);
    std::optional<ArrayRef<int64_t>> inputShape = staticShape(input);
    std::optional<ArrayRef<int64_t>> currentShape = staticShape(current);
    if (!inputShape || !currentShape)
      break;
    if (isReshape(def)) {
      view.base = input;
      view.through.push_back(def);
      current = input;
      continue;
    }
    if (!isa<graph::TransposeOp, graph::SliceOp, graph::SplitOp>(def))
      break;
    std::optional<Steps> steps = decompose(view, *currentShape);
    if (!steps)
      break;
    size_t rank = currentShape->size();
    SmallVector<int64_t> target = llvm::to_vector(llvm::seq<int64_t>(0, rank));
    SmallVector<int64_t> scale(rank, 1), shift(rank, 0);
    if (auto transpose = dyn_cast<graph::TransposeOp>(def)) {
      target.assign(transpose.getPermutation().begin(), transpose.getPermutation().end());
    } else if (auto slice = dyn_cast<graph::SliceOp>(def)) {
      if (llvm::any_of(slice.getStrides(), [](int64_t s) { return s <= 0; }))
        break;
      scale.assign(slice.getStrides().begin(), slice.getStrides().end());
      shift.assign(slice.getStarts().begin(), slice.getStarts().end());
    } else {
      auto split = cast<graph::SplitOp>(def);
      unsigned piece = cast<OpResult>(current).getResultNumber();
      ArrayRef<int64_t> sizes = split.getSizes();
      shift[split.getAxis()] = std::accumulate(sizes.begin(), sizes.begin() + piece, int64_t{0});
    }
    remap(view, *steps, target, scale, shift, rowMajorStrides(*inputShape));
    view.base = input;
    view.through.push_back(def);
    current = input;
    candidates.push_back(view);
    settleUnitStrides(candidates.back());
  }
  return candidates;
}

std::optional<StridedView> ungroupHeads(const StridedView &view, int64_t *group) {
  auto reshape = view.base.getDefiningOp<graph::ReshapeOp>();
  auto expand = reshape ? reshape.getInput().getDefiningOp<graph::ExpandOp>() : nullptr;
  size_t rank = view.dims.size();
  if (!expand || rank < 3)
    return std::nullopt;
  std::optional<ArrayRef<int64_t>> repeated = staticShape(reshape.getResult());
  std::optional<ArrayRef<int64_t>> grouped = staticShape(expand.getResult());
  std::optional<ArrayRef<int64_t>> heads = staticShape(expand.getInput());
  if (!repeated || !grouped || !heads || grouped->size() != repeated->size() + 1)
    return std::nullopt;
  std::optional<Steps> steps = decompose(view, *repeated);
  // The view's heads (its last batch dim) must walk one dim of the repeated value in order.
  size_t k = rank - 3;
  if (!steps || steps->dim[k] < 0 || steps->step[k] != 1)
    return std::nullopt;
  size_t h = static_cast<size_t>(steps->dim[k]);
  if (steps->start[h] != 0 || view.dims[k] != (*repeated)[h] ||
      llvm::count(steps->dim, static_cast<int64_t>(h)) != 1)
    return std::nullopt;
  // The repeated value's dims with dim h split into [Hkv, g] (the expand's result) and [Hkv, 1]
  // (its input).
  SmallVector<int64_t> want(repeated->begin(), repeated->end()), input;
  int64_t g = (*grouped)[h + 1], kvHeads = (*grouped)[h];
  want[h] = kvHeads;
  want.insert(want.begin() + h + 1, g);
  input = want;
  input[h + 1] = 1;
  if (ArrayRef<int64_t>(want) != *grouped || ArrayRef<int64_t>(input) != *heads ||
      kvHeads * g != (*repeated)[h])
    return std::nullopt;
  // The view over the expand's input, laid out as the repeated value with Hkv heads.
  SmallVector<int64_t> shape(repeated->begin(), repeated->end());
  shape[h] = kvHeads;
  StridedView ungrouped = view;
  ungrouped.dims[k] = kvHeads;
  SmallVector<int64_t> identity = llvm::to_vector(llvm::seq<int64_t>(0, shape.size()));
  remap(ungrouped, *steps, identity, SmallVector<int64_t>(shape.size(), 1),
        SmallVector<int64_t>(shape.size(), 0), rowMajorStrides(shape));
  ungrouped.base = expand.getInput();
  ungrouped.through.append({reshape, expand});
  settleUnitStrides(ungrouped);
  *group = g;
  return ungrouped;
}

SmallVector<StridedView> traceResult(Value result) {
  SmallVector<StridedView> candidates;
  std::optional<StridedView> dense = denseView(result);
  if (!dense)
    return candidates;
  StridedView view = std::move(*dense);
  Value current = result;
  while (current.hasOneUse()) {
    Operation *user = *current.user_begin();
    if (user->getNumResults() != 1 || user->getOperand(0) != current)
      break;
    Value next = user->getResult(0);
    std::optional<ArrayRef<int64_t>> nextShape = staticShape(next);
    std::optional<ArrayRef<int64_t>> currentShape = staticShape(current);
    if (!nextShape || !currentShape)
      break;
    if (auto transpose = dyn_cast<graph::TransposeOp>(user)) {
      std::optional<Steps> steps = decompose(view, *currentShape);
      if (!steps)
        break;
      // Dimension j of the transpose's input is dimension inverse[j] of its result.
      ArrayRef<int64_t> permutation = transpose.getPermutation();
      SmallVector<int64_t> inverse(permutation.size());
      for (auto [i, j] : llvm::enumerate(permutation))
        inverse[j] = static_cast<int64_t>(i);
      SmallVector<int64_t> scale(permutation.size(), 1), shift(permutation.size(), 0);
      remap(view, *steps, inverse, scale, shift, rowMajorStrides(*nextShape));
    } else if (!isReshape(user)) {
      break;
    }
    view.base = next;
    view.through.push_back(user);
    current = next;
    if (isa<graph::TransposeOp>(user)) {
      candidates.push_back(view);
      settleUnitStrides(candidates.back());
    }
  }
  // The reshapes after the last transpose are written through too (their readers read the call).
  if (!candidates.empty()) {
    candidates.back().base = current;
    candidates.back().through.assign(view.through.begin(), view.through.end());
  }
  return candidates;
}

bool isMatrixLayout(const StridedView &view, bool isResult) {
  size_t rank = view.dims.size();
  if (rank < 2)
    return false;
  if (!contract::stridedMatrix(view.dims[rank - 2], view.dims[rank - 1], view.strides[rank - 2],
                               view.strides[rank - 1], /*transposable=*/!isResult))
    return false;
  // The batch dimensions of more than one entry, outermost first, must nest as one.
  int64_t previous = -1;
  for (size_t d = 0; d + 2 < rank; ++d) {
    if (view.dims[d] == 1)
      continue;
    if (previous >= 0 && view.strides[previous] != view.strides[d] * view.dims[d])
      return false;
    previous = static_cast<int64_t>(d);
  }
  return true;
}

} // namespace kiln
