//===- LinalgBuilders.h - Building blocks of the graph-to-linalg lowering ---===//
//
// Helpers shared by the lowering patterns: the signless type conversion, uninitialized results
// with their dynamic sizes, broadcasting indexing maps, parallel linalg.generic construction,
// indexed reads, reductions and the signedness-aware scalar comparisons and combiners.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_CONVERSION_LINALGBUILDERS_H
#define KILN_COMPILER_CONVERSION_LINALGBUILDERS_H

#include "mlir/IR/AffineMap.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/IR/Value.h"
#include "mlir/Transforms/DialectConversion.h"
#include "llvm/ADT/STLFunctionalExtras.h"

namespace kiln::conversion {

/// True when `type` (or its element type) is a floating-point type.
bool isFloat(mlir::Type type);

/// True when `type` (or its element type) is an unsigned integer type.
bool isUnsigned(mlir::Type type);

/// True when any operand or result of `op` has unsigned integer elements: linalg and arith work
/// on signless integers, so the lowering picks the unsigned arith ops for them.
bool hasUnsignedElements(mlir::Operation *op);

/// Maps unsigned integer types (and tensors of them) to the signless type of the same width,
/// every other type to itself. The bits do not change, so values cross the conversion as they are.
class SignlessTypeConverter : public mlir::TypeConverter {
public:
  SignlessTypeConverter();
};

/// The type of `value` after the signless conversion.
mlir::RankedTensorType signlessType(mlir::Value value);

/// Base of the lowering patterns: an OpConversionPattern that knows the signless conversion.
template <typename OpTy> struct GraphLowering : mlir::OpConversionPattern<OpTy> {
  GraphLowering(const mlir::TypeConverter &converter, mlir::MLIRContext *context)
      : mlir::OpConversionPattern<OpTy>(converter, context) {}
};

/// A scalar constant of `type` (float or integer) holding `value`.
mlir::Value scalarConstant(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type, double value);

/// An uninitialized tensor of `type` whose dynamic sizes are read from `operands`: result
/// dimension d takes the size of the first operand whose (trailing-aligned) dimension is dynamic.
mlir::Value emptyForResult(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type,
                           mlir::ValueRange operands);

/// The indexing map reading `operand` (NumPy-broadcast, trailing-aligned) at result indices.
mlir::AffineMap broadcastMap(mlir::MLIRContext *context, mlir::RankedTensorType operand,
                             mlir::RankedTensorType result);

using ScalarFn =
    llvm::function_ref<mlir::Value(mlir::OpBuilder &, mlir::Location, mlir::ValueRange)>;

/// A parallel linalg.generic producing `resultType` into `init` from `operands` read through
/// `maps`, each element computed by `fn` from the operands' elements.
mlir::Value buildGeneric(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType resultType,
                         mlir::ValueRange operands, llvm::ArrayRef<mlir::AffineMap> maps,
                         mlir::Value init, ScalarFn fn);

/// The elementwise `fn` of `operands` broadcast to `resultType`.
mlir::Value buildElementwise(mlir::OpBuilder &b, mlir::Location loc,
                             mlir::RankedTensorType resultType, mlir::ValueRange operands,
                             ScalarFn fn);

/// A linalg.generic over `resultType` whose body computes, from the result indices and the
/// elements of `extraInputs` (read through `extraMaps`), the indices of `input` to read; the
/// element there is the result.
mlir::Value buildIndexedRead(
    mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType resultType, mlir::Value input,
    mlir::ValueRange extraInputs, llvm::ArrayRef<mlir::AffineMap> extraMaps, mlir::Value init,
    llvm::function_ref<llvm::SmallVector<mlir::Value>(mlir::OpBuilder &, mlir::Location,
                                                      mlir::ValueRange indices,
                                                      mlir::ValueRange extraElements)>
        indexFn);

/// The integer `index` (any width) as an `index` value, a negative one counted back from `size`.
mlir::Value wrapIndex(mlir::OpBuilder &b, mlir::Location loc, mlir::Value index, mlir::Value size);

/// The size of dimension `dim` of `tensor` as an OpFoldResult (an attribute when static).
mlir::OpFoldResult dimSize(mlir::OpBuilder &b, mlir::Location loc, mlir::Value tensor, int64_t dim);

/// An uninitialized tensor of `type` whose dynamic dimension d has the size of dimension
/// `sources[d].second` of `sources[d].first`.
mlir::Value emptyWithSizes(mlir::OpBuilder &b, mlir::Location loc, mlir::RankedTensorType type,
                           llvm::ArrayRef<std::pair<mlir::Value, int64_t>> sources);

/// Scalar `lhs > rhs` (floats ordered, integers signed or unsigned).
mlir::Value greaterThan(mlir::OpBuilder &b, mlir::Location loc, mlir::Value lhs, mlir::Value rhs,
                        bool isUnsigned);

/// Scalar `lhs == rhs` (floats ordered).
mlir::Value equalTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value lhs, mlir::Value rhs);

enum class Combiner { Sum, Prod, Max, Min };

/// The identity of `combiner` for `type` (0, 1, -inf or the smallest integer, +inf or the
/// largest); `isUnsigned` reads integers as unsigned.
mlir::Value combinerIdentity(mlir::OpBuilder &b, mlir::Location loc, mlir::Type type,
                             Combiner combiner, bool isUnsigned = false);

/// `lhs` combined with `rhs`; `isUnsigned` picks the unsigned integer max and min.
mlir::Value combine(mlir::OpBuilder &b, mlir::Location loc, Combiner combiner, mlir::Value lhs,
                    mlir::Value rhs, bool isUnsigned = false);

/// The element type a reduction with `combiner` accumulates `element` in: f32 for the sums and
/// products of f16 and bf16 (low-precision storage, fp32 accumulation), `element` otherwise.
mlir::Type accumulatorType(mlir::Type element, Combiner combiner);

/// `value` (a tensor) converted elementwise to `resultType`'s float element type (truncf or extf),
/// or `value` itself when the types agree.
mlir::Value convertFloatTensor(mlir::OpBuilder &b, mlir::Location loc, mlir::Value value,
                               mlir::RankedTensorType resultType);

/// Reduces `input` over the sorted `axes` with `combiner`; the result drops those dimensions.
/// Sums and products of f16 and bf16 accumulate in f32 and round once at the end.
mlir::Value reduceAlong(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
                        llvm::ArrayRef<int64_t> axes, Combiner combiner, bool isUnsigned = false);

/// Reduces `input` over the sorted `axes` with `combiner`, divides by the element count when
/// `mean`, and re-inserts the reduced dimensions as size 1 when `resultType` keeps them.
mlir::Value reduceInto(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
                       llvm::ArrayRef<int64_t> axes, Combiner combiner, bool mean,
                       mlir::RankedTensorType resultType, bool isUnsigned = false);

/// The number of elements `input` has along `axes`, as a scalar of `type`.
mlir::Value countAlong(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
                       llvm::ArrayRef<int64_t> axes, mlir::Type type);

/// Reinterprets `input` with `resultType` (same element count) by collapsing to one dimension
/// and expanding again; both are views. A dynamic result dimension takes its entry of `sizes`
/// (one per result dimension, as for reshapeToSizes) where there is one; at most one is left,
/// the element count over the others. Null when more are left.
mlir::Value reshapeTo(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
                      mlir::RankedTensorType resultType,
                      llvm::ArrayRef<mlir::OpFoldResult> sizes = {});

/// Reinterprets `input` with `resultType` where several result dimensions may be dynamic:
/// `sizes` holds one entry per result dimension, the size of the run for a dynamic one given by
/// the graph (null where the element count decides it). Dimensions keep their groups when the
/// shapes pair up in order (dynamic with dynamic, static products with static products: a view
/// of the same dimensions, as exporters write the heads' reshapes), else as reshapeTo does.
/// Null when a dynamic result dimension has no size.
mlir::Value reshapeToSizes(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
                           mlir::RankedTensorType resultType,
                           llvm::ArrayRef<mlir::OpFoldResult> sizes);

/// Re-inserts the reduced `axes` of `reduced` as size-1 dimensions, giving `resultType`.
mlir::Value expandReducedDims(mlir::OpBuilder &b, mlir::Location loc, mlir::Value reduced,
                              mlir::RankedTensorType resultType, llvm::ArrayRef<int64_t> axes);

/// `input` padded by the non-negative `low` and `high` amounts with the scalar `value`.
mlir::Value padWith(mlir::OpBuilder &b, mlir::Location loc, mlir::Value input,
                    llvm::ArrayRef<int64_t> low, llvm::ArrayRef<int64_t> high, mlir::Value value);

/// Adds the lowerings of data-movement ops (GraphToLinalgData.cpp).
void populateDataMovementLowerings(const mlir::TypeConverter &converter,
                                   mlir::RewritePatternSet &patterns);
/// Adds the lowerings of gathers and scatters by index tensors (GraphToLinalgIndexing.cpp).
void populateIndexingLowerings(const mlir::TypeConverter &converter,
                               mlir::RewritePatternSet &patterns);
/// Adds the lowerings of matmul, gemm, convolution, pooling and normalization
/// (GraphToLinalgNN.cpp).
void populateNeuralNetworkLowerings(const mlir::TypeConverter &converter,
                                    mlir::RewritePatternSet &patterns);
/// Adds the lowerings of resize (GraphToLinalgResize.cpp).
void populateResizeLowerings(const mlir::TypeConverter &converter,
                             mlir::RewritePatternSet &patterns);
/// Adds the lowerings of the ops that walk an axis in order: arg max / min, cumsum and top-k
/// (GraphToLinalgScan.cpp).
void populateScanLowerings(const mlir::TypeConverter &converter, mlir::RewritePatternSet &patterns);

} // namespace kiln::conversion

#endif // KILN_COMPILER_CONVERSION_LINALGBUILDERS_H
