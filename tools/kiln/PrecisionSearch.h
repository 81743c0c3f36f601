//===- PrecisionSearch.h - kiln compile --precision auto --------*- C++ -*-===//
//
// The accuracy-budget search: the model is compiled once for the host CPU with every precision
// candidate's rounding behind a mask input (kiln-assign-precision's `emulate`), run in fp32 for
// the reference, then run with candidate masks chosen by bisection (compiler/precision/Search.h)
// on the calibration inputs. The answer is the candidates to compile in the low precision.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_PRECISIONSEARCH_H
#define KILN_TOOLS_KILN_PRECISIONSEARCH_H

#include "Program.h"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kiln::cli {

/// `--accuracy-budget`: every output element within atol + rtol·|reference|, or (top1) the
/// arg max over the last axis of every output agreeing with the reference's on at least a
/// fraction `top1` of the rows.
struct AccuracyBudget {
  bool top1 = false;
  double rtol = 1e-2;
  double atol = 1e-3;
  double agreement = 1.0;
};

/// Parses "rtol=R,atol=A" (either may be left out: 1e-2 and 1e-3), "top1" or "top1=F"; reports
/// a malformed budget and returns nothing.
std::optional<AccuracyBudget> parseAccuracyBudget(const std::string &text);

std::string describeBudget(const AccuracyBudget &budget);

struct PrecisionSearchOptions {
  /// The low precision the search tries: Fp16 or Bf16.
  Precision lowPrecision = Precision::Fp16;
  AccuracyBudget budget;
  /// A directory of NAME.npy (or .pb) files, or of folders of them (one per sample); empty:
  /// `samples` seeded random inputs.
  std::string calibrationInputs;
  int samples = 4;
  uint64_t seed = 0;
  bool progress = false;
};

/// Runs the search for the model at `path` compiled with `settings` (its device is ignored: the
/// search runs on the host CPU). Prints the evaluations and each candidate kept high with its
/// evidence to `report`; returns the low candidates and the evidence, or nothing after an error
/// (printed).
struct PrecisionChoice {
  std::vector<int64_t> low;
  /// INDEX=TEXT for each candidate kept high (CompileSettings::precisionEvidence).
  std::vector<std::string> evidence;
};
std::optional<PrecisionChoice> searchPrecision(const std::string &path,
                                               const CompileSettings &settings,
                                               const PrecisionSearchOptions &options,
                                               llvm::raw_ostream &report);

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_PRECISIONSEARCH_H
