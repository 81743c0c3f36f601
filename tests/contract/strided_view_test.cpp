//===- strided_view_test.cpp - One check of strided views for both sides -----===//
//
// The program verifier and the runtime accept exactly the views this check accepts.

#include "contract/strided_view.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

namespace kiln::contract {
namespace {

ViewCheck check(const std::vector<int64_t>& values, int64_t elements, bool written,
                StridedViewParts* parts = nullptr) {
  StridedViewParts unused;
  return checkStridedView(values.data(), values.size(), elements, written,
                          parts != nullptr ? parts : &unused);
}

// Tests that a transposed 4x8 matrix inside a 40-element buffer decodes and passes, and that
// the same view one element further reaches outside.
TEST(StridedViewTest, DecodesAndBoundsAView) {
  StridedViewParts parts;
  EXPECT_EQ(check({8, 4, 8, 1, 4}, 40, false, &parts).problem, ViewProblem::None);
  EXPECT_EQ(parts.offset, 8);
  EXPECT_EQ(parts.dims, (std::vector<int64_t>{4, 8}));
  EXPECT_EQ(parts.strides, (std::vector<int64_t>{1, 4}));
  // The last element is 8 + 3 * 1 + 7 * 4 = 39: inside 40 elements, outside 39.
  EXPECT_EQ(check({8, 4, 8, 1, 4}, 39, false).problem, ViewProblem::OutOfBounds);
}

// Tests the encodings that are not a view: fewer than five values or an even count.
TEST(StridedViewTest, RefusesMalformedEncodings) {
  EXPECT_EQ(check({0, 4, 1}, 16, false).problem, ViewProblem::Malformed);
  EXPECT_EQ(check({0, 4, 4, 4, 1, 1}, 16, false).problem, ViewProblem::Malformed);
}

// Tests sizes below 1, negative strides and offsets, and sizes whose reach would overflow.
TEST(StridedViewTest, RefusesOutOfBoundsSizesAndStrides) {
  EXPECT_EQ(check({0, 0, 4, 4, 1}, 16, false).problem, ViewProblem::OutOfBounds);
  EXPECT_EQ(check({0, 4, 4, -4, 1}, 16, false).problem, ViewProblem::OutOfBounds);
  EXPECT_EQ(check({-1, 4, 4, 4, 1}, 16, false).problem, ViewProblem::OutOfBounds);
  const int64_t huge = int64_t{1} << 62;
  EXPECT_EQ(check({0, huge, 2, huge, 1}, INT64_MAX, false).problem, ViewProblem::OutOfBounds);
}

// Tests that a written view may not reach an element twice (a stride inside the extent of the
// smaller dimensions), while a read view may (a broadcast row, stride 0).
TEST(StridedViewTest, AWrittenViewReachesEachElementOnce) {
  EXPECT_EQ(check({0, 4, 4, 0, 1}, 16, false).problem, ViewProblem::None);
  ViewCheck twice = check({0, 2, 4, 2, 1}, 16, true);
  EXPECT_EQ(twice.problem, ViewProblem::WrittenTwice);
  EXPECT_EQ(twice.stride, 2);
  EXPECT_EQ(twice.extent, 4);
  // Rows 8 apart over 4 columns leave gaps but reach nothing twice.
  EXPECT_EQ(check({0, 2, 4, 8, 1}, 16, true).problem, ViewProblem::None);
  // A dimension of size 1 has no extent of its own, whatever its stride.
  EXPECT_EQ(check({0, 1, 4, 0, 1}, 4, true).problem, ViewProblem::None);
}

}  // namespace
}  // namespace kiln::contract
