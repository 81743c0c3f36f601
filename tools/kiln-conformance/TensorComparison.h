//===- TensorComparison.h - Comparing a run's outputs with reference tensors -===//
//
// The conformance runner's notion of "the same result": shapes and element types equal, floating
// point elements within a relative and absolute tolerance (NaN equals NaN, infinities must match
// exactly), integers and booleans exact.
//
//===----------------------------------------------------------------------===//

#ifndef TOOLS_KILN_CONFORMANCE_TENSORCOMPARISON_H
#define TOOLS_KILN_CONFORMANCE_TENSORCOMPARISON_H

#include "kiln/runtime.h"

#include <optional>
#include <string>

namespace kiln::conformance {

/// How far a floating-point element may be from its reference: |actual - expected| <=
/// absolute + relative * |expected|.
struct Tolerance {
  double relative = 1e-3;
  double absolute = 1e-7;
};

/// The least tolerance a bfloat16 output is compared with: torch.testing's default for bfloat16.
/// bfloat16 keeps 8 significant bits (a step of 2^-7 relative), so operators computed through
/// several bfloat16 intermediates (the Attention expansions) differ from the reference by an
/// ulp or two, far beyond the float tolerance.
inline constexpr Tolerance kBfloat16Tolerance = {1.6e-2, 1e-5};

/// Compares `actual` with `expected`. bfloat16 elements use the larger of `tolerance` and
/// kBfloat16Tolerance. Returns nullopt when they agree, otherwise a message that
/// names `what` (e.g. "output 'y'") and says how they differ: the element types, the shapes, or
/// the number of mismatching elements and the worst one (its index, both values).
std::optional<std::string> compareTensors(const kiln_tensor_t *actual,
                                          const kiln_tensor_t *expected, const std::string &what,
                                          const Tolerance &tolerance);

/// Formats a tensor's type as "f32[2,3]".
std::string formatTensorType(const kiln_tensor_t *tensor);

} // namespace kiln::conformance

#endif // TOOLS_KILN_CONFORMANCE_TENSORCOMPARISON_H
