//===- SymbolicShapes.h - Dimensions as functions of the inputs' --*- C++ -*-===//
//
// A program compiled for a range of shapes (`kiln compile --shape-range`) keeps dynamic
// dimensions. Each dynamic dimension of an input is a symbol (inputs whose dimensions the model
// names alike, an ONNX dim_param such as "batch", share one); every other dimension of the
// program is an affine expression of the symbols (floor and ceiling divisions and remainders
// included), which the runtime evaluates once per run. Buffers are planned for the symbols'
// upper bounds: a program buffer keeps its static upper-bound type, and `kiln.dims` on the op
// that defines it says which dimensions the run sees. A symbol may have no upper bound
// (`--shape NAME=?x...`): the program's types then read it at a nominal size, and its memory is
// planned per run (kiln-plan-memory, the artifact's ArenaValue).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_PROGRAM_SYMBOLICSHAPES_H
#define KILN_COMPILER_PROGRAM_SYMBOLICSHAPES_H

#include "dialects/kiln/KilnAttributes.h"
#include "dialects/program/SymbolicDims.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineMap.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"

#include "llvm/ADT/DenseMap.h"

#include <limits>
#include <string>

namespace kiln {


/// The `max` of a dimension without an upper bound; sums and products of it saturate to it.
constexpr int64_t kUnboundedDim = std::numeric_limits<int64_t>::max();
/// The size the program's static types give a dimension without an upper bound (at least its
/// minimum). It sizes nothing a run uses: such a program plans its memory per run.
constexpr int64_t kNominalUnboundedDim = 64;

/// In a program with a dimension without an upper bound (planned per run): on each
/// program.alloc, the index of the arena slot it shares bytes in; on program.program, each
/// slot's first and last live step, flat pairs in slot order.
constexpr llvm::StringLiteral kArenaSlotAttr = ::kiln::attrs::kArenaSlot;
constexpr llvm::StringLiteral kSlotStepsAttr = ::kiln::attrs::kSlotSteps;
/// On program.program of a program for a range of shapes: the arena its smallest shape would
/// take (kiln-plan-memory's choice between the upper bounds and a plan per run).
constexpr llvm::StringLiteral kSmallestArenaAttr = ::kiln::attrs::kSmallestArena;

/// A dynamic dimension of an input.
struct DimSymbol {
  /// The model's name for it (a dim_param), or "INPUT.DIM" ("x.0").
  std::string name;
  int64_t input = 0;
  int64_t dim = 0;
  int64_t min = 1;
  /// kUnboundedDim where the dimension has no upper bound.
  int64_t max = 1;
  /// Given without an upper bound (`?`), even where the model then bounds it (a slice clamped
  /// by a constant): the program's types read it at its nominal size, and its memory is planned
  /// per run.
  bool open = false;

  bool bounded() const { return max != kUnboundedDim; }
};


/// Whether a program over `symbols` plans its memory per run (some symbol is open).
inline bool plannedPerRun(llvm::ArrayRef<DimSymbol> symbols) {
  return llvm::any_of(symbols, [](const DimSymbol &symbol) { return symbol.open; });
}

/// [min, max] of `expr` over the symbols' ranges.
std::pair<int64_t, int64_t> exprBounds(mlir::AffineExpr expr, llvm::ArrayRef<DimSymbol> symbols);

mlir::ArrayAttr symbolsAttr(mlir::MLIRContext *context, llvm::ArrayRef<DimSymbol> symbols);
llvm::SmallVector<DimSymbol> symbolsFromAttr(mlir::ArrayAttr attr);

/// The dimensions of the values of an entry function (after kiln-form-dispatches: views,
/// constants, calls of dispatch functions) as affine maps of its inputs' symbols.
class SymbolicShapes {
public:
  /// Fails, naming the input, where a dynamic dimension has no upper bound. The functions the
  /// entry calls are looked up beside it or in `kernels`.
  static mlir::FailureOr<SymbolicShapes> create(mlir::func::FuncOp entry,
                                                mlir::ModuleOp kernels = nullptr);

  /// Requires the dimensions that the kernels of the entry's calls iterate together (the operand
  /// dimensions a linalg op's loop reads) to be equal: two symbols become one (their ranges
  /// intersected; the runtime then checks that the inputs agree), a symbol equal to a constant
  /// keeps only that value; any other pair the compiler cannot show equal is an error naming the
  /// op. Run before shapeOf.
  mlir::LogicalResult unify();

  llvm::ArrayRef<DimSymbol> symbols() const { return symbols_; }
  bool empty() const { return symbols_.empty(); }

  /// `value`'s dimensions, `()[symbols] -> (dims)`; fails with an error at `value` where a
  /// dimension is no affine function of the symbols.
  mlir::FailureOr<mlir::AffineMap> shapeOf(mlir::Value value);

  /// The static type that holds `type` at the symbols' upper bounds for `shape` (an open
  /// symbol at kNominalUnboundedDim, within its range).
  llvm::SmallVector<int64_t> upperBounds(mlir::AffineMap shape) const;

private:
  SymbolicShapes(mlir::func::FuncOp entry, mlir::ModuleOp kernels)
      : entry_(entry), kernels_(kernels) {}

  using ArgumentDims =
      std::function<mlir::FailureOr<mlir::AffineExpr>(mlir::BlockArgument, unsigned)>;
  mlir::FailureOr<mlir::AffineExpr> dim(mlir::Value value, unsigned d,
                                        const ArgumentDims &arguments);
  mlir::FailureOr<mlir::AffineExpr> scalar(mlir::Value value, const ArgumentDims &arguments);
  /// The two operands of a binary index op, as scalar() reads them.
  mlir::FailureOr<std::pair<mlir::AffineExpr, mlir::AffineExpr>>
  scalarOperands(mlir::Operation *op, const ArgumentDims &arguments);
  mlir::FailureOr<mlir::AffineExpr> hostDim(mlir::Value value, unsigned d);
  unsigned find(unsigned symbol);
  /// The function `call` calls: beside the entry, or in the kernels module.
  mlir::func::FuncOp calleeOf(mlir::func::CallOp call);
  /// Whether `call` is an attention call without views (over dynamic shapes: its operands as
  /// they lie).
  bool isDenseAttention(mlir::func::CallOp call);
  /// For a library call's `result` with dynamic dimension `d`: its operands, and their
  /// dimension, that give the result's size there (those of the result's rank dynamic at `d`;
  /// for attention over dynamic shapes, by the operands' roles).
  llvm::SmallVector<std::pair<mlir::Value, int64_t>>
  libraryCallSources(mlir::func::CallOp call, mlir::Value result, int64_t d);
  mlir::LogicalResult requireEqual(mlir::AffineExpr a, mlir::AffineExpr b, mlir::Operation *op);
  /// An expansion whose one-dimensional groups pair a source dimension with a result
  /// dimension of the run keeps it: the two must agree.
  mlir::LogicalResult requireExpandAgrees(mlir::tensor::ExpandShapeOp expand,
                                          const ArgumentDims &arguments);

  mlir::func::FuncOp entry_;
  mlir::ModuleOp kernels_;
  llvm::SmallVector<DimSymbol> symbols_;
  /// Per entry argument, per dimension: its symbol, or -1 for a static dimension.
  llvm::SmallVector<llvm::SmallVector<int64_t>> argumentSymbols_;
  llvm::DenseMap<std::pair<mlir::Value, unsigned>, mlir::AffineExpr> cache_;
  /// Union-find over the symbols while unify() runs.
  llvm::SmallVector<unsigned> parent_;
};

} // namespace kiln

#endif // KILN_COMPILER_PROGRAM_SYMBOLICSHAPES_H
