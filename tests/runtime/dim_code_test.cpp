//===- dim_code_test.cpp - Tests of the run-time dimension codes ----------===//
//
// evaluateDimCode computes an artifact's dimensions for a run from its symbols: floor and ceiling
// division and the floor modulo must follow their definitions for every sign, and a code whose
// answer has no 64-bit value (a division by zero, INT64_MIN / -1, an overflow) must give no
// size, never trap: the codes come from the artifact, which may be crafted.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/artifact/dim_code.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <optional>
#include <vector>

#include "kiln/artifact_format.h"

namespace {

constexpr int64_t kMin = std::numeric_limits<int64_t>::min();
constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

/// a OP b through a code, or nothing when it gives no size.
std::optional<int64_t> evaluate(int64_t a, int64_t op, int64_t b) {
  flatbuffers::FlatBufferBuilder builder;
  std::vector<int64_t> code = {KILN_DIM_SYMBOL, 0, KILN_DIM_CONSTANT, b, op};
  builder.Finish(builder.CreateVector(code));
  const auto* vector = flatbuffers::GetRoot<flatbuffers::Vector<int64_t>>(
      builder.GetBufferPointer());
  EXPECT_EQ(kiln::runtime::checkDimCode(*vector, 1), "");
  int64_t result = 0;
  if (!kiln::runtime::evaluateDimCode(*vector, &a, 1, &result)) return std::nullopt;
  return result;
}

/// The exact floor and ceiling of a / b, in 128 bits.
__int128 floorOf(__int128 a, __int128 b) {
  __int128 q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}

// Tests floor and ceiling division and the floor modulo against their definitions (computed in
// 128 bits) for every sign, and at the ends of the 64-bit range.
TEST(DimCodeTest, DivisionsFollowTheirDefinitionsAtEverySignAndBothEnds) {
  const std::vector<int64_t> as = {0, 1, 7, -7, 8, -8, kMax, kMin, kMin + 1, kMax - 1};
  const std::vector<int64_t> bs = {1, -1, 2, -2, 3, -3, 8, kMax, kMin};
  for (int64_t a : as) {
    for (int64_t b : bs) {
      if (a == kMin && b == -1) continue;  // no 64-bit quotient; the next test
      __int128 floor = floorOf(a, b);
      __int128 ceil = -floorOf(-static_cast<__int128>(a), b);
      __int128 mod = static_cast<__int128>(a) - floor * b;
      EXPECT_EQ(evaluate(a, KILN_DIM_FLOOR_DIV, b), static_cast<int64_t>(floor)) << a << " / " << b;
      EXPECT_EQ(evaluate(a, KILN_DIM_CEIL_DIV, b), static_cast<int64_t>(ceil)) << a << " / " << b;
      EXPECT_EQ(evaluate(a, KILN_DIM_MOD, b), static_cast<int64_t>(mod)) << a << " % " << b;
    }
  }
}

// Tests that the codes without a 64-bit answer give no size instead of trapping: INT64_MIN / -1
// raised SIGFPE (x86's idiv), and the ceiling's negation of INT64_MIN overflowed.
TEST(DimCodeTest, CodesWithoutAnAnswerGiveNoSize) {
  for (int64_t op : {KILN_DIM_FLOOR_DIV, KILN_DIM_CEIL_DIV, KILN_DIM_MOD}) {
    EXPECT_EQ(evaluate(kMin, op, -1), std::nullopt) << op;
    EXPECT_EQ(evaluate(5, op, 0), std::nullopt) << op;
  }
  EXPECT_EQ(evaluate(kMax, KILN_DIM_ADD, 1), std::nullopt);
  EXPECT_EQ(evaluate(kMin, KILN_DIM_MUL, -1), std::nullopt);
  EXPECT_EQ(evaluate(kMin, KILN_DIM_CEIL_DIV, 2), kMin / 2);
}

}  // namespace
