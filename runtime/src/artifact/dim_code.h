//===- dim_code.h - The dimensions of a program for a range of shapes -*- C++ -*-===//
//
// A program compiled for a range of shapes names its dynamic dimensions as symbols and every
// other dynamic dimension as DimExpr code over them (artifact.fbs): a stack program of constants,
// symbols and integer operations. The verifier checks the code when the artifact loads; the
// devices evaluate it once per run (RunShapes, the CUDA device's work items).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_ARTIFACT_DIM_CODE_H_
#define KILN_RUNTIME_SRC_ARTIFACT_DIM_CODE_H_

#include <cstddef>
#include <cstdint>
#include <string>

#include "contract/artifact_generated.h"

namespace kiln::runtime {

/// A symbol's `max` where its dimension has no upper bound (artifact.fbs, Symbol).
constexpr int64_t kUnboundedDim = INT64_MAX;

/// Evaluates DimExpr code with the symbols' `values`; false where the code is malformed (an
/// unknown opcode or symbol, a stack that does not end with one value) or divides by zero.
bool evaluateDimCode(const flatbuffers::Vector<int64_t>& code, const int64_t* values,
                     size_t value_count, int64_t* result);

/// What is wrong with DimExpr code over `symbol_count` symbols: "" when nothing.
std::string checkDimCode(const flatbuffers::Vector<int64_t>& code, size_t symbol_count);

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_SRC_ARTIFACT_DIM_CODE_H_
