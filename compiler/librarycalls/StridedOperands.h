//===- StridedOperands.h - Data movement read through as strides -*- C++ -*-===//
//
// A matrix product reads its operands and writes its result through memory descriptors with
// strides (oneDNN memory descriptors, cuBLASLt matrix layouts), so the transposes, reshapes,
// slices and splits that exporters put around attention's products need not be kernels of their
// own. These helpers find, for a product's operand, the value the data really comes from and the
// strides that read it there, and for its result, the value that the data movement after it
// finally makes and the strides that write it there.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_LIBRARYCALLS_STRIDEDOPERANDS_H
#define KILN_COMPILER_LIBRARYCALLS_STRIDEDOPERANDS_H

#include "mlir/IR/Operation.h"
#include "mlir/IR/Value.h"
#include "llvm/ADT/SmallVector.h"

#include <optional>

namespace kiln {

/// Element (i_0, .., i_r-1) of a tensor of `dims` is element `offset + sum_k i_k * strides[k]`
/// of `base`'s row-major buffer (static shapes only).
struct StridedView {
  mlir::Value base;
  int64_t offset = 0;
  llvm::SmallVector<int64_t> dims, strides;
  /// The data movement ops the view reads or writes through, from the product outward.
  llvm::SmallVector<mlir::Operation *> through;

  /// The encoding of the library calls' `a_view`, `b_view` and `dst_view` parameters:
  /// [offset, dims..., strides...].
  llvm::SmallVector<int64_t> encode() const;
};

/// Row-major strides of `dims`.
llvm::SmallVector<int64_t> rowMajorStrides(llvm::ArrayRef<int64_t> dims);

/// The views `operand` can be read through, traced back through graph.reshape, squeeze,
/// unsqueeze, flatten, transpose, slice (positive strides) and split as far as strides express
/// it: one after each transpose, slice or split, nearest first (none when the operand is its own
/// dense view). A library that takes only some strides picks the farthest it takes.
llvm::SmallVector<StridedView> traceOperand(mlir::Value operand);

/// traceOperand continued from `view` (of its base, any strides): the views further back.
llvm::SmallVector<StridedView> traceView(StridedView view);

/// Grouped-query attention as exporters write it (Llama's repeat_kv, the ONNX Attention
/// operator's decomposition): Kᵀ or V of H = Hkv * g heads is
/// `reshape(expand(X : [.., Hkv, 1, S, D] -> [.., Hkv, g, S, D]) -> [.., H, S, D])`. For a
/// view of that reshape's result (`view.base`) whose last batch dim (its rank minus 3) walks
/// the H heads in order, returns the same view of X with Hkv heads there (query head h reads
/// head h / g) and sets `group` to g; none for anything else.
std::optional<StridedView> ungroupHeads(const StridedView &view, int64_t *group);

/// The views `result` can be written through when the single-use chain of graph.reshape,
/// squeeze, unsqueeze, flatten and transpose after it is absorbed: one after each transpose,
/// nearest first; the last also takes the reshapes after it, so that its `base` is the chain's
/// last value.
llvm::SmallVector<StridedView> traceResult(mlir::Value result);

/// Whether cuBLASLt's matrix layouts express `view` of a product operand or (`isResult`) its
/// result: unit stride along one of its last two dimensions (the last for the result), by the
/// runtime's rule (contract/matrix_layout.h), and the batch dimensions of more than one entry
/// merged into one strided batch.
bool isMatrixLayout(const StridedView &view, bool isResult);

} // namespace kiln

#endif // KILN_COMPILER_LIBRARYCALLS_STRIDEDOPERANDS_H
