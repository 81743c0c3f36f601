//===- strided_view.h - The strided views of library-call operands -*- C++ -*-===//
//
// Matrix products and attention read their operands and write their result through transposes,
// slices and splits: a view parameter `<operand>_view` encodes [offset, dims..., strides...], so
// that element (i_0, .., i_r-1) of the tensor the library sees is element
// `offset + sum_k i_k * strides[k]` of the binding's row-major buffer. One check of an encoding,
// shared by the program dialect's verifier (when a call is made) and the runtime (when an
// artifact is loaded), so that both accept the same views.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CONTRACT_STRIDED_VIEW_H_
#define KILN_CONTRACT_STRIDED_VIEW_H_

#include <cstddef>
#include <cstdint>
#include <vector>

namespace kiln::contract {

/// A decoded view: its offset, dims and strides, in elements.
struct StridedViewParts {
  int64_t offset = 0;
  std::vector<int64_t> dims, strides;
};

/// What is wrong with a view, if anything.
enum class ViewProblem {
  None,
  /// Not [offset, dims..., strides...] of rank 2 or more (fewer than 5 values, or an even count).
  Malformed,
  /// An element outside the buffer, a size below 1, a negative stride, or sizes and strides
  /// too large to add up (each below 2^40).
  OutOfBounds,
  /// A written view that reaches some element twice (`stride` inside `extent`).
  WrittenTwice,
};

struct ViewCheck {
  ViewProblem problem = ViewProblem::None;
  /// For WrittenTwice: the stride that falls inside the extent of the dimensions below it.
  int64_t stride = 0, extent = 0;
};

/// Decodes the `count` values of a view into `parts` (when not Malformed) and checks it against a
/// buffer of `elements` elements; a `written` view must reach no element twice.
ViewCheck checkStridedView(const int64_t* values, size_t count, int64_t elements, bool written,
                           StridedViewParts* parts);

}  // namespace kiln::contract

#endif  // KILN_CONTRACT_STRIDED_VIEW_H_
