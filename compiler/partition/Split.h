//===- Split.h - How a value is divided between devices ---------*- C++ -*-===//

#ifndef KILN_COMPILER_PARTITION_SPLIT_H
#define KILN_COMPILER_PARTITION_SPLIT_H

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"

#include <cstdint>
#include <optional>

namespace kiln::partition {

/// How a value is divided between the devices: coordinate c of dimension `dim` belongs to device
/// (c / block) % devices, and a device holds size / devices of that dimension. In flat (row-major)
/// element terms the owner of element f is (f / U) % devices with U = block times the stride of
/// `dim`, which is what lets a reshape carry a split to whichever dimension of its result holds
/// that pattern.
struct Split {
  int64_t dim;
  int64_t block;
  bool operator==(const Split &other) const { return dim == other.dim && block == other.block; }
};

/// `type` with its split dimension divided between `devices`.
mlir::RankedTensorType localType(mlir::RankedTensorType type, Split split, int64_t devices);

/// Whether `type`'s split dimension holds whole blocks for every one of `devices`.
bool divides(mlir::RankedTensorType type, Split split, int64_t devices);

/// A new constant holding device `rank`'s part of the constant `value` (a graph.constant).
mlir::Value sliceConstant(mlir::OpBuilder &builder, mlir::Value value, Split split,
                          int64_t devices, int64_t rank);

/// Where a reshape-like op (reshape, squeeze, unsqueeze, flatten: the element order kept) carries
/// the split `split` of its operand of type `from` to, in its result of shape `to`: the result
/// dimension that holds the same ownership pattern, or nothing when the reshape pulls it apart.
std::optional<Split> reshapedSplit(mlir::RankedTensorType from, llvm::ArrayRef<int64_t> to,
                                   Split split, int64_t devices);

/// The value's type when it is a static ranked tensor, else null.
mlir::RankedTensorType staticType(mlir::Value value);

bool isConstant(mlir::Value value);

} // namespace kiln::partition

#endif // KILN_COMPILER_PARTITION_SPLIT_H
