//===- RunTimeOperands.h - Shape operands known only at run time ----------===//
//
// An operand that decides a result's shape (Reshape's shape, Unsqueeze's axes, Tile's repeats,
// a reduction's axes, ...) may be a value of the run: a graph input, or computed from one. The
// graph dialect types every value statically, so such a node is imported when the model
// declares its result's type in full: the result takes the declared shape, the operand is read
// at run time only where it decides values (which axes a reduction sums), and a check of every
// run (NodeContext::addCheck) verifies that the operand agrees with the declaration, failing
// the run with a message that names the node otherwise.
//
//===----------------------------------------------------------------------===//

#ifndef FRONTENDS_ONNX_OPS_RUNTIMEOPERANDS_H
#define FRONTENDS_ONNX_OPS_RUNTIMEOPERANDS_H

#include "frontends/onnx/ops/Decomposition.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace kiln::onnx_frontend {

/// The statically typed result of a node whose shape an operand known only at run time decides:
/// the declared type of output `output`, or null with an error naming `what` (input `index`)
/// when the model declares none in full.
mlir::RankedTensorType declaredResultType(NodeContext &ctx, int output, int index,
                                          llvm::StringRef what);

/// Input `index` as a rank-1 i64 value of the run (a shape, axes, repeats, split sizes); a
/// scalar is read as one element, floating-point values truncated (OneHot's depth). Null, with
/// the error reported, for a higher rank or a dynamic length.
mlir::Value runTimeVector(Decomposition &d, int index, llvm::StringRef what);

/// The number of elements of runTimeVector(index) (its static length).
int64_t runTimeLength(NodeContext &ctx, int index);

/// An i1 scalar: whether every element of `flags` (i1, any shape; true when empty) is true.
mlir::Value allTrue(Decomposition &d, mlir::Value flags);

/// i1 scalar: whether `values` (i64, rank 1) equals `expected` element by element.
mlir::Value equalsConstant(Decomposition &d, mlir::Value values, llvm::ArrayRef<int64_t> expected);

/// i64 [rank] of 0s and 1s: the positions that `axes` (i64, rank 1; negative counts from the
/// end) names. An axis out of range names none; repeated axes name one.
mlir::Value axesMask(Decomposition &d, mlir::Value axes, int64_t rank);

/// The most choices of axes masksOf considers.
constexpr int64_t kMaxAxesChoices = 4096;

/// Every mask of `rank` positions with `count` of them set (as 0s and 1s) that `accept` takes,
/// in lexicographic order of the set positions. Fails, naming `what`, when there are more than
/// kMaxAxesChoices choices to consider (axes of the run over a high rank).
mlir::FailureOr<llvm::SmallVector<llvm::SmallVector<int64_t>>>
masksOf(NodeContext &ctx, llvm::StringRef what, int64_t rank, int64_t count,
        llvm::function_ref<bool(llvm::ArrayRef<int64_t>)> accept);

/// Adds the check that `mask` (from axesMask) is one of `candidates`; `what` names the operand
/// for the message. Fails (reported) when there is no candidate: no value of the operand gives
/// the declared shape.
mlir::LogicalResult checkMaskIsOneOf(Decomposition &d, mlir::Value mask,
                                     llvm::ArrayRef<llvm::SmallVector<int64_t>> candidates,
                                     llvm::StringRef what, mlir::RankedTensorType declared);

/// The integer elements of input `index` (a shape, repeats, a count): read at import time when
/// they are known there (NodeContext::constantInts); otherwise `derive` computes what they must
/// be from the declared type of output `output`, and a check of every run verifies that the
/// run's value equals that. Errors are reported.
mlir::FailureOr<llvm::SmallVector<int64_t>> intsKnownOrChecked(
    NodeContext &ctx, int index, llvm::StringRef what, int output,
    llvm::function_ref<mlir::FailureOr<llvm::SmallVector<int64_t>>(mlir::RankedTensorType)> derive);

/// The i64 positions `index` clamped into [0, size - 1], so that a gather of a dimension of `size`
/// elements stays inside it whatever the run's operands (a check reports the run's error).
mlir::Value clampIndex(Decomposition &d, mlir::Value index, int64_t size);

/// Element `index` of the rank-1 `values` as a rank-0 value (a constant when `values` is one).
mlir::Value elementOf(Decomposition &d, mlir::Value values, int64_t index);

/// Binds output 0 to `result` after adding the check of every run that `holds` (an i1 scalar),
/// whose message is `what`; fails when any step of `d` did.
mlir::LogicalResult finishChecked(Decomposition &d, mlir::Value result, mlir::Value holds,
                                  const llvm::Twine &what);

/// "[2,3,4]".
std::string formatShape(llvm::ArrayRef<int64_t> shape);

} // namespace kiln::onnx_frontend

#endif // FRONTENDS_ONNX_OPS_RUNTIMEOPERANDS_H
