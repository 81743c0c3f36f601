//===- matrix_layout.h - A strided matrix as BLAS libraries take one -*- C++ -*-===//
//
// The rule for when a strided view's last two dimensions are a matrix a BLAS-style library
// (cuBLASLt, oneDNN's GEMM) takes: row-major with a leading dimension, or the transpose of one.
// Header-only and free of the runtime's types, so that the compiler's library-call selection
// (compiler/librarycalls/StridedOperands.cpp, SelectLibraryCalls.cpp) decides by the same rule
// the runtime's cuBLASLt call (runtime/src/cuda/cublaslt_matmul.cpp) and its CPU attention
// (runtime/src/cpu/attention.cpp) check.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CONTRACT_MATRIX_LAYOUT_H_
#define KILN_CONTRACT_MATRIX_LAYOUT_H_

#include <cstdint>
#include <optional>

namespace kiln::contract {

/// A rows x cols matrix stored row-major with leading dimension `ld` (its rows `ld` elements
/// apart), or, when `transposed`, stored as its cols x rows transpose that way.
struct StridedMatrix {
  bool transposed = false;
  int64_t ld = 0;
};

/// The rows x cols matrix whose elements are `row_stride` and `col_stride` apart, as a
/// StridedMatrix: unit stride along one dimension and the other's stride past its extent (rows
/// that do not overlap). A transposed answer only when `transposable` (a result written
/// column-major is not taken). Nothing when neither holds.
inline std::optional<StridedMatrix> stridedMatrix(int64_t rows, int64_t cols, int64_t row_stride,
                                                  int64_t col_stride, bool transposable) {
  if ((cols == 1 || col_stride == 1) && (rows == 1 || row_stride >= cols))
    return StridedMatrix{false, rows == 1 ? cols : row_stride};
  if (transposable && (rows == 1 || row_stride == 1) && (cols == 1 || col_stride >= rows))
    return StridedMatrix{true, cols == 1 ? rows : col_stride};
  return std::nullopt;
}

}  // namespace kiln::contract

#endif  // KILN_CONTRACT_MATRIX_LAYOUT_H_
