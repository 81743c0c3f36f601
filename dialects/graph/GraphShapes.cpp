//===- GraphShapes.cpp - Shape rules shared by the graph dialect ------------===//

#include "dialects/graph/GraphShapes.h"

#include "llvm/Support/MathExtras.h"

#include <algorithm>
#include <string>

namespace kiln::graph {

std::optional<llvm::SmallVector<int64_t>> broadcastShapes(llvm::ArrayRef<int64_t> lhs,
                                                          llvm::ArrayRef<int64_t> rhs) {
  size_t rank = std::max(lhs.size(), rhs.size());
  llvm::SmallVector<int64_t> result(rank, 1);
  for (size_t i = 0; i < rank; ++i) {
    int64_t l = i < rank - lhs.size() ? 1 : lhs[i - (rank - lhs.size())];
    int64_t r = i < rank - rhs.size() ? 1 : rhs[i - (rank - rhs.size())];
    if (l == r) {
      result[i] = l;
    } else if (l == 1) {
      result[i] = r;
    } else if (r == 1) {
      result[i] = l;
    } else if (l == kDynamic) {
      result[i] = r;
    } else if (r == kDynamic) {
      result[i] = l;
    } else {
      return std::nullopt;
    }
  }
  return result;
}

bool broadcastsTo(llvm::ArrayRef<int64_t> from, llvm::ArrayRef<int64_t> to) {
  if (from.size() > to.size())
    return false;
  size_t offset = to.size() - from.size();
  for (size_t i = 0; i < from.size(); ++i) {
    int64_t f = from[i], t = to[i + offset];
    if (f != 1 && f != kDynamic && t != kDynamic && f != t)
      return false;
  }
  return true;
}

int64_t productOfDims(llvm::ArrayRef<int64_t> dims) {
  int64_t product = 1;
  for (int64_t d : dims) {
    if (d == kDynamic)
      return kDynamic;
    int64_t next;
    if (llvm::MulOverflow(product, d, next))
      return kDynamic;
    product = next;
  }
  return product;
}

bool areRefinableTypes(mlir::TypeRange inferred, mlir::TypeRange actual) {
  if (inferred.size() != actual.size())
    return false;
  for (auto [i, a] : llvm::zip_equal(inferred, actual)) {
    if (i == a)
      continue; // Equal types, tensors or not (graph.dim's index).
    auto it = llvm::dyn_cast<mlir::RankedTensorType>(i);
    auto at = llvm::dyn_cast<mlir::RankedTensorType>(a);
    if (!it || !at || it.getElementType() != at.getElementType() || it.getRank() != at.getRank())
      return false;
    for (auto [id, ad] : llvm::zip_equal(it.getShape(), at.getShape()))
      if (id != kDynamic && ad != kDynamic && id != ad)
        return false;
  }
  return true;
}

std::string formatShape(llvm::ArrayRef<int64_t> shape) {
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i)
      text += 'x';
    text += shape[i] == kDynamic ? std::string("?") : std::to_string(shape[i]);
  }
  return text;
}

} // namespace kiln::graph
