//===- CompileOptions.cpp - The compile option table ---------------------------===//

#include "compiler/options/CompileOptions.h"

#include "compiler/transforms/Passes.h"

#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"

namespace kiln {
namespace {

static_assert(InputShape::kDynamic == mlir::ShapedType::kDynamic,
              "InputShape and ShapeBinding mark a dynamic dimension alike");

using Values = std::vector<std::string>;

std::string quoted(const std::string &text) { return "'" + text + "'"; }

/// Sets an enum option from its one value.
template <typename Enum, Enum CompileOptions::*field>
std::string setEnum(CompileOptions &options, const Values &values) {
  std::optional<Enum> value = parseEnum<Enum>(values.front());
  if (!value)
    return quoted(values.front()) + " is not one of " + enumChoices<Enum>();
  options.*field = *value;
  return "";
}
template <typename Enum, Enum CompileOptions::*field>
Values getEnum(const CompileOptions &options) {
  return {std::string(nameOf(options.*field))};
}

/// Sets a count option from its one value, between `low` and `high`.
template <int64_t CompileOptions::*field, int64_t low, int64_t high>
std::string setCount(CompileOptions &options, const Values &values) {
  int64_t value = 0;
  if (llvm::StringRef(values.front()).trim().getAsInteger(10, value))
    return quoted(values.front()) + " is not a number";
  if (value < low || value > high)
    return std::to_string(value) + " is not between " + std::to_string(low) + " and " +
           std::to_string(high);
  options.*field = value;
  return "";
}
template <int64_t CompileOptions::*field> Values getCount(const CompileOptions &options) {
  return {std::to_string(options.*field)};
}

template <std::string CompileOptions::*field>
std::string setText(CompileOptions &options, const Values &values) {
  options.*field = values.front();
  return "";
}
template <std::string CompileOptions::*field> Values getText(const CompileOptions &options) {
  return {options.*field};
}

template <std::vector<std::string> CompileOptions::*field>
std::string setTexts(CompileOptions &options, const Values &values) {
  options.*field = values;
  return "";
}
template <std::vector<std::string> CompileOptions::*field>
Values getTexts(const CompileOptions &options) {
  return options.*field;
}

std::optional<bool> parseBool(const std::string &text) {
  if (text.empty() || text == "true" || text == "1")
    return true;
  if (text == "false" || text == "0")
    return false;
  return std::nullopt;
}
template <bool CompileOptions::*field>
std::string setBool(CompileOptions &options, const Values &values) {
  std::optional<bool> value = parseBool(values.front());
  if (!value)
    return quoted(values.front()) + " is not true or false";
  options.*field = *value;
  return "";
}
template <bool CompileOptions::*field> Values getBool(const CompileOptions &options) {
  return {options.*field ? "true" : "false"};
}

std::string formatShape(const InputShape &shape) {
  ShapeBinding binding{shape.name,
                       llvm::SmallVector<int64_t>(shape.dims.begin(), shape.dims.end()),
                       {shape.bounds.begin(), shape.bounds.end()}};
  return formatShapeBinding(binding);
}

/// --shape replaces the bindings; --shape-range (after it in the table) adds to them.
template <bool append> std::string setShapes(CompileOptions &options, const Values &values) {
  std::vector<InputShape> shapes;
  for (const std::string &text : values) {
    std::optional<InputShape> shape = parseInputShape(text);
    if (!shape)
      return quoted(text) +
             " is not NAME=DIMS (dimensions separated by 'x', e.g. image=1x3x224x224)";
    shapes.push_back(std::move(*shape));
  }
  if (!append)
    options.shapes.clear();
  options.shapes.insert(options.shapes.end(), shapes.begin(), shapes.end());
  return "";
}
Values getShapes(const CompileOptions &options) {
  Values values;
  for (const InputShape &shape : options.shapes)
    values.push_back(formatShape(shape));
  return values;
}

/// --gpu-arch: sm_NN architectures, and `cuda-sim`, the simulated CUDA device's code object.
std::string setGpuArchs(CompileOptions &options, const Values &values) {
  Target &target = options.target;
  target.gpuArchs.clear();
  target.cudaSim = false;
  for (const std::string &text : values) {
    if (text == "cuda-sim") {
      target.cudaSim = true;
    } else if (std::optional<unsigned> arch = parseGpuArch(text)) {
      target.gpuArchs.push_back(*arch);
    } else {
      return quoted(text) + " is not a GPU architecture (sm_80, sm_90, ...) or cuda-sim";
    }
  }
  return "";
}
Values getGpuArchs(const CompileOptions &options) { return options.target.gpuArchNames(); }

std::string setTargetKind(CompileOptions &options, const Values &values) {
  std::optional<TargetKind> kind = parseEnum<TargetKind>(values.front());
  if (!kind)
    return quoted(values.front()) + " is not one of " + enumChoices<TargetKind>();
  options.target.kind = *kind;
  return "";
}
Values getTargetKind(const CompileOptions &options) {
  return {std::string(nameOf(options.target.kind))};
}

template <std::string Target::*field>
std::string setTargetText(CompileOptions &options, const Values &values) {
  options.target.*field = values.front();
  return "";
}
template <std::string Target::*field> Values getTargetText(const CompileOptions &options) {
  return {options.target.*field};
}

std::string setMemoryLimit(CompileOptions &options, const Values &values) {
  std::optional<uint64_t> limit = parseByteSize(values.front());
  if (!limit)
    return quoted(values.front()) +
           " is not a positive size such as 262144, 512KiB, 256MiB or 1.5GiB";
  options.memoryLimit = *limit;
  return "";
}
Values getMemoryLimit(const CompileOptions &options) {
  return {options.memoryLimit ? std::to_string(options.memoryLimit) : std::string()};
}

std::string setAutoPrecision(CompileOptions &options, const Values &values) {
  std::optional<Precision> precision = parseEnum<Precision>(values.front());
  if (precision != Precision::Fp16 && precision != Precision::Bf16)
    return quoted(values.front()) + " is not fp16 or bf16";
  options.autoPrecision = *precision;
  return "";
}

std::string setPrecisionLow(CompileOptions &options, const Values &values) {
  std::vector<int64_t> low;
  for (const std::string &text : values) {
    int64_t index = 0;
    if (llvm::StringRef(text).getAsInteger(10, index) || index < 0)
      return quoted(text) + " is not a candidate's index";
    low.push_back(index);
  }
  options.precisionLow = std::move(low);
  return "";
}
Values getPrecisionLow(const CompileOptions &options) {
  Values values;
  if (options.precisionLow)
    for (int64_t index : *options.precisionLow)
      values.push_back(std::to_string(index));
  return values;
}

std::string setExplicitLow(CompileOptions &options, const Values &values) {
  std::optional<bool> value = parseBool(values.front());
  if (!value)
    return quoted(values.front()) + " is not true or false";
  if (*value && !options.precisionLow)
    options.precisionLow.emplace();
  if (!*value)
    options.precisionLow.reset();
  return "";
}
Values getExplicitLow(const CompileOptions &options) {
  return {options.precisionLow ? "true" : "false"};
}

using Arity = OptionSpec::Arity;
constexpr unsigned kJit = kCompileScope | kRunScope | kBenchScope;
constexpr unsigned kAll = kJit | kPipelineScope;

} // namespace

bool Target::hasCpuFeature(std::string_view feature) const {
  std::string enabled = "+" + std::string(feature);
  for (const std::string &entry : cpuFeatures)
    if (entry == enabled)
      return true;
  return false;
}

std::string Target::gpuArchName(unsigned arch) { return "sm_" + std::to_string(arch); }

std::vector<std::string> Target::gpuArchNames() const {
  std::vector<std::string> names;
  for (unsigned arch : gpuArchs)
    names.push_back(gpuArchName(arch));
  if (cudaSim)
    names.push_back("cuda-sim");
  return names;
}

std::optional<InputShape> parseInputShape(std::string_view text) {
  mlir::FailureOr<ShapeBinding> binding = parseShapeBinding(llvm::StringRef(text));
  if (mlir::failed(binding))
    return std::nullopt;
  InputShape shape;
  shape.name = binding->name;
  shape.dims.assign(binding->dims.begin(), binding->dims.end());
  shape.bounds.assign(binding->bounds.begin(), binding->bounds.end());
  return shape;
}

std::optional<uint64_t> parseByteSize(std::string_view text) {
  llvm::StringRef rest = llvm::StringRef(text).trim();
  double number = 0;
  size_t digits = rest.find_first_not_of("0123456789.");
  llvm::StringRef value = rest.take_front(digits), unit = rest.drop_front(value.size()).trim();
  uint64_t scale = 0;
  if (unit.empty() || unit.equals_insensitive("b"))
    scale = 1;
  else if (unit.equals_insensitive("kib") || unit.equals_insensitive("k"))
    scale = 1ull << 10;
  else if (unit.equals_insensitive("mib") || unit.equals_insensitive("m"))
    scale = 1ull << 20;
  else if (unit.equals_insensitive("gib") || unit.equals_insensitive("g"))
    scale = 1ull << 30;
  if (value.empty() || value.getAsDouble(number) || scale == 0 || !(number > 0) ||
      number * double(scale) >= 9.2e18)
    return std::nullopt;
  return static_cast<uint64_t>(number * double(scale));
}

std::optional<unsigned> parseGpuArch(std::string_view text) {
  llvm::StringRef rest(text);
  unsigned number = 0;
  if (!rest.consume_front("sm_") || rest.getAsInteger(10, number))
    return std::nullopt;
  return number;
}

const std::vector<OptionSpec> &compileOptionTable() {
  static const std::vector<OptionSpec> table = {
      {"target", "Device to compile for: cpu or cuda", Arity::Value, kCompileScope | kPipelineScope,
       false, setTargetKind, getTargetKind},
      {"gpu-arch",
       "CUDA architectures to build cubins for, e.g. sm_80,sm_90 (the oldest one's PTX is kept "
       "as the fallback for newer GPUs); cuda-sim adds the simulated CUDA device's code object",
       Arity::List, kCompileScope | kPipelineScope, true, setGpuArchs, getGpuArchs},
      {"shape",
       "Bind an input's shape, NAME=1x3x224x224 (dynamic dims must be bound, or given a range; "
       "'?' keeps one dynamic)",
       Arity::List, kAll, false, setShapes<false>, getShapes},
      {"shape-range",
       "Keep an input's dimensions dynamic within ranges, NAME=1..32x128 (one artifact runs "
       "every shape in them)",
       Arity::List, kCompileScope, false, setShapes<true>, nullptr},
      {"memory-limit",
       "The most memory the arena may take, e.g. 256MiB (B, KiB, MiB, GiB): values are "
       "recomputed until the plan fits, or the compile fails",
       Arity::Value, kAll, false, setMemoryLimit, getMemoryLimit},
      {"memory-plan",
       "A program for a range of shapes: plan the arena for the upper bounds (bounds), per run "
       "for each shape (per-run), or whichever the smallest shape shows cheaper (auto; a "
       "dimension without an upper bound is per run)",
       Arity::Value, kCompileScope | kPipelineScope, false,
       setEnum<MemoryPlanMode, &CompileOptions::memoryPlan>,
       getEnum<MemoryPlanMode, &CompileOptions::memoryPlan>},
      {"cost-model",
       "The device the fusion planner's cost model describes: cpu, a100, h100, l4, a JSON "
       "description (kiln calibrate writes one), or host (this host, measured once into Kiln's "
       "cache); default: cpu, or the oldest GPU of --gpu-arch",
       Arity::Value, kCompileScope | kPipelineScope, false, setTargetText<&Target::costModel>,
       getTargetText<&Target::costModel>},
      {"target-cpu",
       "The LLVM CPU the CPU code object is built for, e.g. x86-64-v3 or znver3 (default: the "
       "host's); its features decide where oneDNN computes bf16",
       Arity::Value, kCompileScope | kPipelineScope, false, setTargetText<&Target::cpu>,
       getTargetText<&Target::cpu>},
      {"libdevice", "CUDA's libdevice bitcode for math functions (default: the toolkit's)",
       Arity::Value, kPipelineScope, false, setTargetText<&Target::libdevice>,
       getTargetText<&Target::libdevice>},
      {"streams", "Run independent steps on up to N streams at once (CPU; 1: one after another)",
       Arity::Value, kAll, false, setCount<&CompileOptions::streams, 1, 64>,
       getCount<&CompileOptions::streams>},
      {"devices",
       "Split the model over N devices (one artifact holding every device's program; run and "
       "bench run them all in this process, a thread each)",
       Arity::Value, kAll, false, setCount<&CompileOptions::devices, 1, 64>,
       getCount<&CompileOptions::devices>},
      {"partition",
       "How to split over --devices: tensor (transformer blocks the Megatron way), pipeline (a "
       "stage per device), batch (a share of the batch per device) or auto (the one the cost "
       "model predicts fastest)",
       Arity::Value, kAll, false, setEnum<PartitionMode, &CompileOptions::partition>,
       getEnum<PartitionMode, &CompileOptions::partition>},
      {"micro-batches",
       "With --partition pipeline: cut the batch into M micro-batches that flow through the "
       "stages one after another (several in flight at once)",
       Arity::Value, kAll, false, setCount<&CompileOptions::microBatches, 1, 4096>,
       getCount<&CompileOptions::microBatches>},
      {"device-rank", "The device whose program is compiled", Arity::Value, kPipelineScope, false,
       setCount<&CompileOptions::deviceRank, 0, 63>, getCount<&CompileOptions::deviceRank>},
      {"precision",
       "fp32, tf32, bf16, fp16 or auto (kiln compile: the largest low-precision set within "
       "--accuracy-budget)",
       Arity::Value, kAll, false, setEnum<Precision, &CompileOptions::precision>,
       getEnum<Precision, &CompileOptions::precision>},
      {"keep-io-types", "Inputs and outputs keep their declared types under a lower precision",
       Arity::Flag, kAll, false, setBool<&CompileOptions::keepIoTypes>,
       getBool<&CompileOptions::keepIoTypes>},
      {"keep-high", "Keep this ONNX node in fp32 (repeatable)", Arity::List, kAll, false,
       setTexts<&CompileOptions::keepHigh>, getTexts<&CompileOptions::keepHigh>},
      {"conv-layout",
       "The tensor layout of convolutions: auto (CPU: NHWC; CUDA: NHWC for fp16, bf16 and tf32, "
       "what tensor cores want), nchw (the model's layout) or nhwc (every type)",
       Arity::Value, kAll, false, setEnum<ConvLayout, &CompileOptions::convLayout>,
       getEnum<ConvLayout, &CompileOptions::convLayout>},
      {"attention",
       "fused (attention as one step: Kiln's call on the CPU; on CUDA cuDNN's in fp16 and bf16, "
       "a generated kernel in fp32) or unfused (two products and a softmax)",
       Arity::Value, kAll, false, setEnum<AttentionMode, &CompileOptions::attention>,
       getEnum<AttentionMode, &CompileOptions::attention>},
      {"auto-precision", "The low precision --precision auto tries: fp16 or bf16", Arity::Value,
       kCompileScope, false, setAutoPrecision, getEnum<Precision, &CompileOptions::autoPrecision>},
      {"accuracy-budget",
       "--precision auto: 'rtol=R,atol=A' on every output, or 'top1[=F]' agreement", Arity::Value,
       kCompileScope, false, setText<&CompileOptions::accuracyBudget>,
       getText<&CompileOptions::accuracyBudget>},
      {"calibration-inputs",
       "--precision auto: a directory of NAME.npy files, or of one folder of them per sample "
       "(default: seeded random inputs)",
       Arity::Value, kCompileScope, false, setText<&CompileOptions::calibrationInputs>,
       getText<&CompileOptions::calibrationInputs>},
      {"calibration-samples",
       "--precision auto: how many seeded random samples without --calibration-inputs",
       Arity::Value, kCompileScope, false,
       setCount<&CompileOptions::calibrationSamples, 1, 1 << 20>,
       getCount<&CompileOptions::calibrationSamples>},
      {"precision-low", "Exactly these precision candidates are low (the search's answer)",
       Arity::List, kPipelineScope, true, setPrecisionLow, getPrecisionLow},
      {"explicit-low", "precision-low replaces the policy, even when it names no candidate",
       Arity::Flag, kPipelineScope, false, setExplicitLow, getExplicitLow},
      {"precision-evidence", "INDEX=TEXT: why the search kept a candidate high", Arity::List,
       kPipelineScope, true, setTexts<&CompileOptions::precisionEvidence>,
       getTexts<&CompileOptions::precisionEvidence>},
      {"emulate-precision", "Round through the precision under a mask input", Arity::Flag,
       kPipelineScope, false, setBool<&CompileOptions::emulatePrecision>,
       getBool<&CompileOptions::emulatePrecision>},
      {"report", "Print the kernels, library calls and memory plan of the program", Arity::Flag,
       kCompileScope, false, setBool<&CompileOptions::report>, getBool<&CompileOptions::report>},
      {"dump-ir", "Write the IR after each stage into this directory", Arity::Value, kCompileScope,
       false, setText<&CompileOptions::dumpIrDirectory>, getText<&CompileOptions::dumpIrDirectory>},
      {"entry", "The model's function, which becomes the program", Arity::Value, kPipelineScope,
       false, setText<&CompileOptions::entry>, getText<&CompileOptions::entry>},
      {"stop-after", "The last stage to run (all when empty)", Arity::Value, kPipelineScope, false,
       setText<&CompileOptions::stopAfter>, getText<&CompileOptions::stopAfter>},
  };
  return table;
}

const OptionSpec *findCompileOption(std::string_view name) {
  for (const OptionSpec &spec : compileOptionTable())
    if (spec.name == name)
      return &spec;
  return nullptr;
}

} // namespace kiln
