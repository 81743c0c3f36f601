//===- Passes.h - Fusion planning -------------------------------*- C++ -*-===//

#ifndef KILN_COMPILER_FUSION_PASSES_H
#define KILN_COMPILER_FUSION_PASSES_H

#include "dialects/kiln/KilnAttributes.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include "llvm/ADT/SetVector.h"

namespace kiln {

#define GEN_PASS_DECL
#include "compiler/fusion/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/fusion/Passes.h.inc"

/// On each member of a fused group: the group's number (an i64 attribute).
inline constexpr llvm::StringLiteral kFusionGroupAttr = ::kiln::attrs::kFusionGroup;
/// On the root of a fused group: the root's loops the group may be split into workgroups along.
inline constexpr llvm::StringLiteral kTileDimsAttr = ::kiln::attrs::kTileDims;
/// On the module: one line per fusion decision, for `kiln compile --report`.
inline constexpr llvm::StringLiteral kFusionReportAttr = ::kiln::attrs::kFusionReport;
/// On the module: the bytes all planned kernels read and write in one run by the cost model
/// (an i64), which kiln-form-program records on the program.
inline constexpr llvm::StringLiteral kModeledKernelBytesAttr = ::kiln::attrs::kModeledKernelBytes;

/// Whether fusing the producer of `operand` (a linalg.generic) into its reader would compute the
/// producer's costly ops (division, math functions) again for each of several points reading
/// the same element (the reader broadcasts the producer's result), more than `maxRepeated`
/// times beyond the producer's own evaluations.
bool isCostlyToRepeat(mlir::OpOperand *operand, int64_t maxRepeated);

/// The largest size dimension `dim` of `value` takes in a program for a range of shapes, traced
/// back to the ranges of the entry function's inputs (kiln.dim_bounds) through the destinations
/// of linalg ops, the sizes of tensor.empty and tensor.dim; its size where static; nothing where
/// that leads nowhere.
std::optional<int64_t> largestDim(mlir::Value value, int64_t dim);
/// The largest trip count of loop `loop` of `op` (largestDim of an operand dimension it indexes).
std::optional<int64_t> largestLoop(mlir::linalg::LinalgOp op, unsigned loop);

/// The cost model's view of an op (PlanFusion.cpp), shared by the passes that decide by it.
/// The points of `op`'s iteration space; a dynamic loop counts as the largest the program's
/// ranges allow (a program compiled for the largest shape), else as 1024.
int64_t modeledIterations(mlir::linalg::LinalgOp op);
/// The bytes of `value`: over dynamic shapes at the largest sizes the program's ranges allow, or
/// none where they are not known.
double modeledBytes(mlir::Value value);
/// The bytes of `operand` that `op` reads: at most one element for each point of the loops its
/// indexing map uses (a slice read through the map touches only its own elements).
double touchedBytes(mlir::linalg::LinalgOp op, mlir::OpOperand &operand);
/// The FLOPs of one evaluation of `op` inside a kernel body: none for a constant; 1 for
/// arithmetic, comparisons and conversions; 4 for divisions and roots; 16 for the other math functions (exp, log, tanh, erf,
/// sin, pow, ...), which expand into polynomial evaluations (XLA's cost analysis charges
/// transcendental functions apart for the same reason).
double opFlops(mlir::Operation *op);
/// The FLOPs of one iteration of `op`: its body's ops (at least 1).
double iterationFlops(mlir::linalg::LinalgOp op);

/// A slice's first byte within its source, where `op` is a tensor.extract_slice that reads one
/// contiguous run of its statically shaped source starting at a multiple of kViewByteAlignment
/// (kiln-form-dispatches makes it a view); nothing otherwise.
std::optional<int64_t> contiguousSliceByteOffset(mlir::Operation *op);

/// Views into a buffer start at multiples of this: every arena offset stays aligned as the memory
/// plan aligns them (64 bytes) and as the CUDA libraries prefer (256).
inline constexpr int64_t kViewByteAlignment = 256;

/// Reads each input of `op` whose indexing map wraps (a `mod`: a concatenation written by
/// kiln-fold-data-movement) inside the body instead, by `tensor.extract` at the map's indices.
/// Tiling slices every operand to the range between a tile's first and last index, which a
/// wrapping read leaves; a tensor read in the body is not sliced. Returns false when an operand
/// had to stay (the only one reading along some loop by a bare index): `op` must not be tiled.
bool readWrappedOperandsInBody(mlir::RewriterBase &rewriter, mlir::linalg::GenericOp op);

/// Writes `concat` (static shape, at least two operands, none empty along the axis) as a
/// generic over its result that reads operand k at `(i - start_k) mod size_k` along the axis
/// (in bounds at every point) and selects by `i`; fails, changing nothing, otherwise.
mlir::FailureOr<mlir::linalg::GenericOp> writeConcatAsGeneric(mlir::RewriterBase &rewriter,
                                                              mlir::tensor::ConcatOp concat);

/// Collects the names of the model nodes recorded in a location (NameLoc inside FusedLoc and
/// CallSiteLoc).
void collectNodeNames(mlir::Location loc, llvm::SetVector<llvm::StringRef> &names);

/// "<last op's name> (<model nodes of all ops>)": how reports and dispatches name a group.
std::string describeOps(llvm::ArrayRef<mlir::Operation *> ops);

} // namespace kiln

#endif // KILN_COMPILER_FUSION_PASSES_H
