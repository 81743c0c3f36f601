//===- PrecisionTest.cpp - The precision search and the weights' rounding --===//

#include "compiler/precision/Search.h"
#include "contract/half_conversions.h"

#include "llvm/ADT/APFloat.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <limits>
#include <random>
#include <set>

namespace {

using kiln::precision::Evaluation;
using kiln::precision::searchLowPrecision;
using kiln::contract::floatToBf16;
using kiln::contract::floatToHalf;

uint16_t apfloatBits(float value, const llvm::fltSemantics &semantics) {
  llvm::APFloat converted(value);
  bool lost = false;
  converted.convert(semantics, llvm::APFloat::rmNearestTiesToEven, &lost);
  return static_cast<uint16_t>(converted.bitcastToAPInt().getZExtValue());
}

float fromBits(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// Every class of float: random bit patterns (normals of every exponent, subnormals, NaNs), the
// halfway cases of both formats, and the edges of fp16's range.
TEST(PrecisionRounding, MatchesAPFloatBitForBit) {
  std::mt19937 engine(11);
  std::vector<float> values = {0.0f,
                               -0.0f,
                               65504.0f,
                               65520.0f,
                               65519.99f,
                               -65536.0f,
                               5.9604645e-08f,
                               2.9802322e-08f,
                               2.9802326e-08f,
                               6.1035156e-05f,
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity(),
                               1.0009765625f,
                               1.00048828125f,
                               1.00146484375f,
                               3.0517578e-05f};
  for (int i = 0; i < 200000; ++i)
    values.push_back(fromBits(engine()));
  for (uint32_t mantissa : {0x1000u, 0x3000u, 0x8000u, 0x18000u})
    for (uint32_t exponent = 90; exponent < 150; ++exponent)
      values.push_back(fromBits((exponent << 23) | mantissa));
  for (float value : values) {
    if (std::isnan(value)) {
      EXPECT_EQ(floatToHalf(value) & 0x7C00u, 0x7C00u);
      EXPECT_NE(floatToHalf(value) & 0x3FFu, 0u);
      EXPECT_EQ(floatToBf16(value) & 0x7F80u, 0x7F80u);
      EXPECT_NE(floatToBf16(value) & 0x7Fu, 0u);
      continue;
    }
    ASSERT_EQ(floatToHalf(value), apfloatBits(value, llvm::APFloat::IEEEhalf())) << value;
    ASSERT_EQ(floatToBf16(value), apfloatBits(value, llvm::APFloat::BFloat())) << value;
  }
}

/// An evaluator where the given candidates break the budget whenever they are low.
struct BadCandidates {
  std::set<int64_t> bad;
  int64_t calls = 0;
  Evaluation operator()(const std::vector<bool> &low) {
    ++calls;
    Evaluation evaluation;
    evaluation.withinBudget = true;
    for (int64_t candidate : bad)
      if (low[candidate]) {
        evaluation.withinBudget = false;
        evaluation.budgetRatio = 10;
        evaluation.detail = "candidate " + std::to_string(candidate);
      }
    return evaluation;
  }
};

TEST(PrecisionSearch, AllLowWithinTheBudgetTakesOneEvaluation) {
  BadCandidates model;
  auto result = searchLowPrecision(100, {}, std::ref(model));
  EXPECT_EQ(result.evaluations, 1);
  EXPECT_EQ(std::count(result.low.begin(), result.low.end(), true), 100);
  EXPECT_TRUE(result.blamed.empty());
}

// b bad candidates among N are blamed exactly, everything else is low, and the number of
// evaluations stays within about 2·b·log2(N).
TEST(PrecisionSearch, BlamesExactlyTheBadCandidatesInLogarithmicEvaluations) {
  std::mt19937 engine(5);
  for (int64_t n : {1, 2, 7, 64, 100, 1000}) {
    for (int64_t b : {1, 2, 3}) {
      if (b > n)
        continue;
      BadCandidates model;
      while (static_cast<int64_t>(model.bad.size()) < b)
        model.bad.insert(std::uniform_int_distribution<int64_t>(0, n - 1)(engine));
      auto result = searchLowPrecision(n, {}, std::ref(model));
      std::set<int64_t> blamed;
      for (const auto &blame : result.blamed) {
        blamed.insert(blame.candidate);
        EXPECT_EQ(blame.evidence.detail, "candidate " + std::to_string(blame.candidate));
      }
      EXPECT_EQ(blamed, model.bad) << "n=" << n << " b=" << b;
      for (int64_t i = 0; i < n; ++i)
        EXPECT_EQ(result.low[i], model.bad.count(i) == 0) << "candidate " << i;
      double bound = 2.0 * b * std::ceil(std::log2(double(n))) + 1;
      EXPECT_LE(result.evaluations, bound) << "n=" << n << " b=" << b;
      EXPECT_EQ(result.evaluations, model.calls);
    }
  }
}

TEST(PrecisionSearch, IneligibleCandidatesStayHighUnevaluated) {
  BadCandidates model;
  model.bad = {3};
  std::vector<bool> eligible(8, true);
  eligible[3] = false;
  auto result = searchLowPrecision(8, eligible, std::ref(model));
  EXPECT_EQ(result.evaluations, 1);
  EXPECT_FALSE(result.low[3]);
  EXPECT_TRUE(result.blamed.empty());
}

} // namespace
