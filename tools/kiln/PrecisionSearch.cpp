//===- PrecisionSearch.cpp - kiln compile --precision auto --------------------===//

#include "PrecisionSearch.h"

#include "compiler/precision/Passes.h"
#include "compiler/precision/Search.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/Path.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>

namespace kiln::cli {

namespace {

std::optional<double> parseNumber(llvm::StringRef text) {
  double value = 0;
  if (text.getAsDouble(value) || !std::isfinite(value) || value < 0)
    return std::nullopt;
  return value;
}

std::string formatNumber(double value) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << llvm::format("%.6g", value);
  return text;
}

/// " (R x the budget)" for a tolerance budget; nothing for top-1 (the detail says it).
std::string ratioText(const precision::Evaluation &evaluation, const AccuracyBudget &budget) {
  if (budget.top1)
    return "";
  return " (" + formatNumber(evaluation.budgetRatio) + "x the budget)";
}

/// The files of one sample: NAME.npy or NAME.pb in `directory`.
std::optional<std::map<std::string, Tensor>> readSample(const std::string &directory) {
  std::vector<InputFile> files;
  std::error_code error;
  for (llvm::sys::fs::directory_iterator it(directory, error), end; it != end && !error;
       it.increment(error)) {
    llvm::StringRef path = it->path();
    llvm::StringRef extension = llvm::sys::path::extension(path);
    if (extension == ".npy" || extension == ".pb")
      files.push_back({llvm::sys::path::stem(path).str(), path.str()});
  }
  std::sort(files.begin(), files.end(),
            [](const InputFile &a, const InputFile &b) { return a.path < b.path; });
  return readInputFiles(files);
}

/// The calibration samples: the directory's sub-folders (one sample each), or the directory
/// itself; seeded random inputs when none is given.
std::optional<std::vector<std::vector<Tensor>>>
calibrationSamples(const Artifact &artifact, const PrecisionSearchOptions &options) {
  std::vector<std::vector<Tensor>> samples;
  size_t dataInputs = artifact.inputCount() - 1; // the mask is the last input
  auto arrange = [&](std::map<std::string, Tensor> given,
                     uint64_t seed) -> std::optional<std::vector<Tensor>> {
    std::vector<Tensor> inputs;
    for (size_t i = 0; i < dataInputs; ++i) {
      TensorSignature signature = artifact.input(i).value();
      auto found = given.find(signature.name);
      if (found == given.end()) {
        if (!options.calibrationInputs.empty()) {
          printError(options.calibrationInputs + ": no file for input '" + signature.name + "' (" +
                     describeSignature(signature) + ")");
          return std::nullopt;
        }
        inputs.push_back(randomTensor(signature, seed + i));
        continue;
      }
      if (found->second.elementType() != signature.elementType ||
          found->second.dims() != signature.dims) {
        printError(options.calibrationInputs + ": input '" + signature.name + "' is " +
                   describeTensor(found->second) + " but the model expects " +
                   describeSignature(signature));
        return std::nullopt;
      }
      inputs.push_back(std::move(found->second));
    }
    return inputs;
  };
  if (options.calibrationInputs.empty()) {
    for (int s = 0; s < options.samples; ++s) {
      auto inputs = arrange({}, options.seed + 1000 * static_cast<uint64_t>(s));
      if (!inputs)
        return std::nullopt;
      samples.push_back(std::move(*inputs));
    }
    return samples;
  }
  if (!llvm::sys::fs::is_directory(options.calibrationInputs)) {
    printError("--calibration-inputs " + options.calibrationInputs + " is not a directory");
    return std::nullopt;
  }
  std::vector<std::string> folders;
  std::error_code error;
  for (llvm::sys::fs::directory_iterator it(options.calibrationInputs, error), end;
       it != end && !error; it.increment(error))
    if (llvm::sys::fs::is_directory(it->path()))
      folders.push_back(it->path());
  std::sort(folders.begin(), folders.end());
  if (folders.empty())
    folders.push_back(options.calibrationInputs);
  for (const std::string &folder : folders) {
    std::optional<std::map<std::string, Tensor>> given = readSample(folder);
    if (!given)
      return std::nullopt;
    auto inputs = arrange(std::move(*given), 0);
    if (!inputs)
      return std::nullopt;
    samples.push_back(std::move(*inputs));
  }
  return samples;
}

/// Runs `session` on every sample (with `mask` appended when given); the outputs per sample, or
/// nothing after an error (printed, naming `path`).
std::optional<std::vector<std::vector<Tensor>>>
runSamples(const Session &session, std::vector<std::vector<Tensor>> &samples, const Tensor *mask,
           const std::string &path) {
  std::vector<std::vector<Tensor>> outputs;
  for (std::vector<Tensor> &sample : samples) {
    std::vector<const Tensor *> inputs;
    for (Tensor &tensor : sample)
      inputs.push_back(&tensor);
    if (mask)
      inputs.push_back(mask);
    Result<std::vector<Tensor>> result = session.run(inputs);
    if (!result.ok()) {
      printError(path + ": " + result.status().message());
      return std::nullopt;
    }
    outputs.push_back(std::move(result.value()));
  }
  return outputs;
}

/// Compares one run's outputs with the reference's under the budget.
class BudgetCheck {
public:
  BudgetCheck(const Artifact &artifact, const AccuracyBudget &budget)
      : artifact_(artifact), budget_(budget) {}

  void add(const std::vector<Tensor> &got, const std::vector<Tensor> &reference) {
    for (size_t o = 0; o < got.size(); ++o) {
      const Tensor &g = got[o], &r = reference[o];
      std::string name = artifact_.output(o).value().name;
      if (g.elementType() != KILN_ELEMENT_TYPE_F32) {
        if (g.byteSize() != r.byteSize() || std::memcmp(g.data(), r.data(), g.byteSize()) != 0)
          note(INFINITY, "output '" + name + "' (" + describeTensor(g) + ") changed");
        continue;
      }
      const float *gv = g.dataAs<float>(), *rv = r.dataAs<float>();
      size_t count = g.elementCount();
      if (budget_.top1) {
        std::vector<int64_t> dims = g.dims();
        size_t row = dims.empty() ? 1 : static_cast<size_t>(dims.back());
        for (size_t begin = 0; row > 0 && begin + row <= count; begin += row) {
          auto best = [&](const float *v) {
            return std::max_element(v + begin, v + begin + row) - (v + begin);
          };
          bool finite =
              std::all_of(gv + begin, gv + begin + row, [](float x) { return std::isfinite(x); });
          ++rows_;
          if (finite && best(gv) == best(rv))
            ++agreeing_;
          else if (!finite)
            note(INFINITY, "output '" + name + "' has a NaN or infinity in row " +
                               std::to_string(begin / row));
        }
        continue;
      }
      for (size_t i = 0; i < count; ++i) {
        double difference = std::fabs(double(gv[i]) - double(rv[i]));
        double allowed = budget_.atol + budget_.rtol * std::fabs(double(rv[i]));
        double ratio = std::isnan(difference) ? INFINITY : difference / allowed;
        if (ratio > worst_)
          note(ratio, (llvm::Twine("output '") + name + "'[" + llvm::Twine(i) +
                       "]: " + llvm::Twine(formatNumber(gv[i])) + " against " +
                       llvm::Twine(formatNumber(rv[i])))
                          .str());
      }
    }
  }

  precision::Evaluation result() const {
    precision::Evaluation evaluation;
    if (budget_.top1) {
      double agreement = rows_ ? double(agreeing_) / double(rows_) : 1.0;
      evaluation.withinBudget = std::isfinite(worst_) && agreement >= budget_.agreement;
      evaluation.budgetRatio = std::isfinite(worst_)
                                   ? (1.0 - agreement) / std::max(1e-9, 1.0 - budget_.agreement)
                                   : INFINITY;
      evaluation.detail = std::isfinite(worst_)
                              ? llvm::formatv("top-1 agreement {0}/{1}", agreeing_, rows_).str()
                              : worstDetail_;
      return evaluation;
    }
    evaluation.withinBudget = worst_ <= 1.0;
    evaluation.budgetRatio = worst_;
    evaluation.detail = worstDetail_.empty() ? "exact" : worstDetail_;
    return evaluation;
  }

private:
  void note(double ratio, std::string detail) {
    if (ratio > worst_ || worstDetail_.empty()) {
      worst_ = std::max(worst_, ratio);
      worstDetail_ = std::move(detail);
    }
  }

  const Artifact &artifact_;
  const AccuracyBudget &budget_;
  double worst_ = 0;
  std::string worstDetail_;
  size_t rows_ = 0, agreeing_ = 0;
};

} // namespace

std::optional<AccuracyBudget> parseAccuracyBudget(const std::string &text) {
  AccuracyBudget budget;
  llvm::SmallVector<llvm::StringRef> parts;
  llvm::StringRef(text).split(parts, ',', -1, false);
  for (llvm::StringRef part : parts) {
    auto [key, value] = part.split('=');
    std::optional<double> number = value.empty() ? std::nullopt : parseNumber(value);
    if (key == "top1" && (value.empty() || (number && *number <= 1.0))) {
      budget.top1 = true;
      budget.agreement = value.empty() ? 1.0 : *number;
    } else if (key == "rtol" && number) {
      budget.rtol = *number;
    } else if (key == "atol" && number) {
      budget.atol = *number;
    } else {
      printError("--accuracy-budget '" + text +
                 "' is not 'rtol=R,atol=A', 'top1' or 'top1=F' (F a fraction)");
      return std::nullopt;
    }
  }
  return budget;
}

std::string describeBudget(const AccuracyBudget &budget) {
  if (budget.top1)
    return llvm::formatv("top-1 agreement >= {0}", budget.agreement).str();
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "|got - fp32| <= " << llvm::format("%g", budget.atol) << " + "
     << llvm::format("%g", budget.rtol) << "·|fp32|";
  return text;
}

std::optional<PrecisionChoice> searchPrecision(const std::string &path,
                                               const CompileSettings &settings,
                                               const PrecisionSearchOptions &options,
                                               llvm::raw_ostream &report) {
  CompileSettings emulated = settings;
  CompileOptions &evaluator = emulated.options;
  evaluator.target.kind = TargetKind::Cpu;
  evaluator.precision = options.lowPrecision;
  evaluator.emulatePrecision = true;
  evaluator.precisionLow.reset();
  evaluator.report = false;
  evaluator.memoryLimit = 0;
  evaluator.streams = 1;
  emulated.progress = false;
  if (options.progress)
    llvm::errs() << "precision search: compiling the evaluator (every candidate's "
                 << nameOf(options.lowPrecision) << " rounding behind a mask)\n";
  std::optional<std::string> bytes = compileModel(path, emulated);
  if (!bytes)
    return std::nullopt;
  Result<Artifact> artifact = Artifact::loadMemory(bytes->data(), bytes->size());
  if (!artifact.ok()) {
    printError(artifact.status().message());
    return std::nullopt;
  }
  size_t maskIndex = artifact->inputCount() - 1;
  TensorSignature maskSignature = artifact->input(maskIndex).value();
  if (maskSignature.name != kPrecisionMaskInput || maskSignature.dims.size() != 1) {
    printError(path + ": the evaluator has no precision mask input");
    return std::nullopt;
  }
  int64_t candidates = maskSignature.dims[0];
  Result<Session> session = Session::create(*artifact);
  if (!session.ok()) {
    printError(session.status().message());
    return std::nullopt;
  }
  std::optional<std::vector<std::vector<Tensor>>> samples = calibrationSamples(*artifact, options);
  if (!samples)
    return std::nullopt;

  auto runWith = [&](const std::vector<bool> &low) {
    Tensor mask = Tensor::create(KILN_ELEMENT_TYPE_BOOL, {candidates}).value();
    auto *bits = static_cast<uint8_t *>(mask.data());
    for (int64_t i = 0; i < candidates; ++i)
      bits[i] = low.empty() ? 0 : uint8_t(low[i]);
    return runSamples(*session, *samples, &mask, path);
  };

  std::optional<std::vector<std::vector<Tensor>>> reference = runWith({});
  if (!reference)
    return std::nullopt;
  for (const std::vector<Tensor> &outputs : *reference)
    for (size_t o = 0; o < outputs.size(); ++o) {
      const Tensor &tensor = outputs[o];
      if (tensor.elementType() != KILN_ELEMENT_TYPE_F32)
        continue;
      const float *values = tensor.dataAs<float>();
      if (!std::all_of(values, values + tensor.elementCount(),
                       [](float x) { return std::isfinite(x); })) {
        printError(path + ": output '" + artifact->output(o).value().name +
                   "' is not finite in fp32 on the calibration inputs; no budget can be checked");
        return std::nullopt;
      }
    }

  bool failedRun = false;
  precision::Evaluator evaluate = [&](const std::vector<bool> &low) {
    precision::Evaluation evaluation;
    if (failedRun)
      return evaluation;
    std::optional<std::vector<std::vector<Tensor>>> got = runWith(low);
    if (!got) {
      failedRun = true;
      return evaluation;
    }
    BudgetCheck check(*artifact, options.budget);
    for (size_t s = 0; s < got->size(); ++s)
      check.add((*got)[s], (*reference)[s]);
    return check.result();
  };
  report << "precision search: " << candidates << " candidates, " << samples->size()
         << " calibration sample(s), budget " << describeBudget(options.budget) << "\n";
  precision::SearchResult result = precision::searchLowPrecision(
      candidates, {}, evaluate, [&](int64_t count, const precision::Evaluation &evaluation) {
        if (options.progress)
          llvm::errs() << "precision search: evaluation " << count << ": "
                       << (evaluation.withinBudget ? "within" : "over") << " budget ("
                       << evaluation.detail << ")\n";
      });
  if (failedRun)
    return std::nullopt;
  int64_t lowCount = std::count(result.low.begin(), result.low.end(), true);
  report << "precision search: " << result.evaluations << " evaluations; " << lowCount << " of "
         << candidates << " candidates in " << nameOf(options.lowPrecision) << ", "
         << result.blamed.size() << " kept in fp32:\n";
  PrecisionChoice choice;
  for (int64_t i = 0; i < candidates; ++i)
    if (result.low[i])
      choice.low.push_back(i);
  for (const precision::Blame &blame : result.blamed) {
    std::string evidence = blame.evidence.detail + ratioText(blame.evidence, options.budget);
    report << "  candidate " << blame.candidate << ": " << evidence << "\n";
    choice.evidence.push_back(std::to_string(blame.candidate) + "=" + evidence);
  }

  // The answer, compiled for real (the host CPU, fp32 inputs and outputs), must hold the budget
  // too: the emulation rounds where the real program stores, but sums in another order.
  CompileSettings real = emulated;
  real.options.emulatePrecision = false;
  real.options.keepIoTypes = true;
  real.options.precisionLow = choice.low;
  if (options.progress)
    llvm::errs() << "precision search: checking the mixed program compiled for the CPU\n";
  std::optional<std::string> realBytes = compileModel(path, real);
  if (!realBytes)
    return std::nullopt;
  Result<Artifact> realArtifact = Artifact::loadMemory(realBytes->data(), realBytes->size());
  Result<Session> realSession =
      realArtifact.ok() ? Session::create(*realArtifact) : Result<Session>(realArtifact.status());
  if (!realSession.ok()) {
    printError(realSession.status().message());
    return std::nullopt;
  }
  std::optional<std::vector<std::vector<Tensor>>> realOutputs =
      runSamples(*realSession, *samples, nullptr, path);
  if (!realOutputs)
    return std::nullopt;
  BudgetCheck check(*artifact, options.budget);
  for (size_t s = 0; s < samples->size(); ++s)
    check.add((*realOutputs)[s], (*reference)[s]);
  precision::Evaluation verified = check.result();
  report << "precision check: the mixed program compiled for the CPU: " << verified.detail
         << ratioText(verified, options.budget) << "\n";
  if (!verified.withinBudget) {
    printError(path + ": the mixed-precision program misses the accuracy budget (" +
               describeBudget(options.budget) + ") on the CPU: " + verified.detail +
               ", although its emulation was within it; give a larger budget or keep nodes "
               "high with --keep-high");
    return std::nullopt;
  }
  return choice;
}

} // namespace kiln::cli
