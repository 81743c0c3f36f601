//===- strided_view.cpp - The strided views of library-call operands -----------===//

#include "contract/strided_view.h"

#include <algorithm>
#include <utility>

namespace kiln::contract {

ViewCheck checkStridedView(const int64_t* values, size_t count, int64_t elements, bool written,
                           StridedViewParts* parts) {
  ViewCheck check;
  if (count < 5 || count % 2 == 0) {
    check.problem = ViewProblem::Malformed;
    return check;
  }
  size_t rank = (count - 1) / 2;
  parts->offset = values[0];
  parts->dims.assign(values + 1, values + 1 + rank);
  parts->strides.assign(values + 1 + rank, values + count);
  // Sizes and strides are bounded first, so that the reach below cannot overflow.
  constexpr int64_t kLimit = int64_t{1} << 40;
  bool valid = parts->offset >= 0 && parts->offset < kLimit;
  int64_t last = parts->offset;
  for (size_t i = 0; i < rank && valid; ++i) {
    int64_t size = parts->dims[i], stride = parts->strides[i];
    valid = size >= 1 && size < kLimit && stride >= 0 && stride < kLimit &&
            (size - 1) <= kLimit / std::max<int64_t>(1, stride);
    if (valid) last += (size - 1) * stride;
  }
  if (!valid || last >= elements) {
    check.problem = ViewProblem::OutOfBounds;
    return check;
  }
  if (written) {
    // Dimensions by stride: each must step past everything the smaller ones reach.
    std::vector<std::pair<int64_t, int64_t>> order;
    for (size_t i = 0; i < rank; ++i)
      if (parts->dims[i] > 1) order.emplace_back(parts->strides[i], parts->dims[i]);
    std::sort(order.begin(), order.end());
    int64_t extent = 1;
    for (const auto& [stride, size] : order) {
      if (stride < extent) {
        check.problem = ViewProblem::WrittenTwice;
        check.stride = stride;
        check.extent = extent;
        return check;
      }
      extent = stride * size;
    }
  }
  return check;
}

}  // namespace kiln::contract
