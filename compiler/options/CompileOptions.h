//===- CompileOptions.h - Every compile option, and the table that binds them -*- C++ -*-===//
//
// One object holds what a compilation is asked for (kiln::CompileOptions, with its target
// description kiln::Target), and one table (compileOptionTable) says, for each option, how it is
// spelled, what it means, and how its text parses into the object and prints back. The `kiln`
// command line binds its flags from the table (tools/kiln/CompileFlags.h), `kiln-opt
// --kiln-compile-pipeline="..."` parses its options through it (compiler/pipelines), and a Python
// binding can iterate it for keyword arguments. No MLIR or LLVM type appears here.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_OPTIONS_COMPILEOPTIONS_H
#define KILN_COMPILER_OPTIONS_COMPILEOPTIONS_H

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace kiln {

/// The device a program is compiled for.
enum class TargetKind { Cpu, Cuda };
/// The precision policy (kiln-assign-precision); Auto is kiln compile's search for the largest
/// low-precision set within an accuracy budget, which replaces it before the driver runs.
enum class Precision { Fp32, Tf32, Bf16, Fp16, Auto };
/// The tensor layout of convolutions.
enum class ConvLayout { Auto, Nchw, Nhwc };
/// Attention as one step where the target takes it, or two products and a softmax.
enum class AttentionMode { Fused, Unfused };
/// How a program for a range of shapes plans its arena.
enum class MemoryPlanMode { Auto, Bounds, PerRun };
/// How a model is split over devices.
enum class PartitionMode { Auto, Tensor, Pipeline, Batch };

/// The spelling of each value of an enum, indexed by the value: the one place the names are
/// written (command line, pipeline options, pass options and messages all read them here).
template <typename Enum> struct EnumSpelling;
template <> struct EnumSpelling<TargetKind> {
  static constexpr std::string_view names[] = {"cpu", "cuda"};
};
template <> struct EnumSpelling<Precision> {
  static constexpr std::string_view names[] = {"fp32", "tf32", "bf16", "fp16", "auto"};
};
template <> struct EnumSpelling<ConvLayout> {
  static constexpr std::string_view names[] = {"auto", "nchw", "nhwc"};
};
template <> struct EnumSpelling<AttentionMode> {
  static constexpr std::string_view names[] = {"fused", "unfused"};
};
template <> struct EnumSpelling<MemoryPlanMode> {
  static constexpr std::string_view names[] = {"auto", "bounds", "per-run"};
};
template <> struct EnumSpelling<PartitionMode> {
  static constexpr std::string_view names[] = {"auto", "tensor", "pipeline", "batch"};
};

/// The name of `value` ("bf16").
template <typename Enum> std::string_view nameOf(Enum value) {
  return EnumSpelling<Enum>::names[static_cast<size_t>(value)];
}

/// The value named `text`, or nothing.
template <typename Enum> std::optional<Enum> parseEnum(std::string_view text) {
  constexpr size_t count = std::size(EnumSpelling<Enum>::names);
  for (size_t i = 0; i < count; ++i)
    if (EnumSpelling<Enum>::names[i] == text)
      return static_cast<Enum>(i);
  return std::nullopt;
}

/// Every name of the enum, separated by ", " ("fp32, tf32, bf16, fp16, auto").
template <typename Enum> std::string enumChoices() {
  std::string text;
  for (std::string_view name : EnumSpelling<Enum>::names)
    text.append(text.empty() ? "" : ", ").append(name);
  return text;
}

/// An input's shape as `--shape NAME=1x3x224x224` or `--shape-range NAME=1..32x128` gives it
/// (compiler/transforms' ShapeBinding, without MLIR types).
struct InputShape {
  /// The dimension a binding leaves dynamic ("?" or a range); mlir::ShapedType::kDynamic.
  static constexpr int64_t kDynamic = INT64_MIN;
  std::string name;
  std::vector<int64_t> dims;
  /// Empty, or one [min, max] per dimension (ShapeBinding::bounds).
  std::vector<std::pair<int64_t, int64_t>> bounds;
};

/// What a program is compiled for. The command line and the pipeline options give the kind, the
/// GPU architectures, the simulated device, the CPU and the cost model; resolveTarget fills in
/// the rest once, at the driver's start, and the pipeline reads it unchanged.
struct Target {
  TargetKind kind = TargetKind::Cpu;
  /// CUDA: the architectures to assemble cubins for, as numbers (80 for sm_80), in the order
  /// given; the oldest one's PTX also goes into the artifact, for GPUs none of the cubins fits.
  std::vector<unsigned> gpuArchs = {80, 90};
  /// CUDA: whether the simulated CUDA device's code object (the same kernels retargeted to the
  /// host, `--device cuda-sim`) goes into the artifact too.
  bool cudaSim = false;
  /// CUDA: libdevice bitcode linked into kernels for math functions; empty for the toolkit's.
  std::string libdevice;
  /// The LLVM CPU the CPU code object is built for ("x86-64-v3", "znver3"); empty: the host's.
  /// resolveTarget sets the host's name here.
  std::string cpu;
  /// The features of `cpu` as LLVM spells them, each enabled ("+avx2") or not ("-avx512bf16"):
  /// filled once by resolveTarget (the host's, detected).
  std::vector<std::string> cpuFeatures;
  /// The fusion cost model's device: a published description (cpu, a100, h100, l4) or a JSON
  /// description file (`kiln calibrate`); empty until resolveTarget picks the target's default
  /// (cpu; the oldest GPU of gpuArchs with a published description, else a100).
  std::string costModel;

  /// Whether cpuFeatures enables `feature` ("avx512bf16").
  bool hasCpuFeature(std::string_view feature) const;
  /// "sm_80": how an architecture number is spelled.
  static std::string gpuArchName(unsigned arch);
  /// The architecture lists kiln-emit-cuda-executable takes: each of gpuArchs as "sm_NN", then
  /// "cuda-sim" when cudaSim.
  std::vector<std::string> gpuArchNames() const;
};

/// Fills in what `target` leaves to be found: the host CPU's name and features, and the cost
/// model's device. Returns the error ("--target-cpu: ...") or an empty string.
std::string resolveTarget(Target &target);

/// Every option of a compilation. Defaults are those of `kiln compile`.
struct CompileOptions {
  Target target;
  /// Bindings of the inputs' dynamic dimensions (--shape, --shape-range).
  std::vector<InputShape> shapes;
  /// The most bytes the arena may take (0: no limit): values are recomputed near their late
  /// uses until the plan fits, or compilation fails naming what could not be freed.
  uint64_t memoryLimit = 0;
  /// A program for a range of shapes: Bounds plans its arena once for the upper bounds, PerRun
  /// leaves the runtime to pack it for each shape (kiln-plan-memory), Auto takes per-run where the
  /// smallest shape's arena is under half the upper bounds' (on the CPU). A dimension without an
  /// upper bound is always planned per run.
  MemoryPlanMode memoryPlan = MemoryPlanMode::Auto;
  /// The most streams independent steps are spread over (1: one after another).
  int64_t streams = 1;
  /// Devices the model is split over (1: not split) and how. The artifact is device 0's,
  /// carrying the others' (contract/artifact.fbs, Partition).
  int64_t devices = 1;
  PartitionMode partition = PartitionMode::Tensor;
  /// With PartitionMode::Pipeline: how many micro-batches are in flight (1: a run passes
  /// through the stages in turn).
  int64_t microBatches = 1;
  /// The device compiled (the driver sets it for each device in turn).
  int64_t deviceRank = 0;
  Precision precision = Precision::Fp32;
  /// Inputs and outputs keep their declared types under a lower precision.
  bool keepIoTypes = false;
  /// ONNX nodes kept in fp32 whatever their class.
  std::vector<std::string> keepHigh;
  /// Auto (CPU: NHWC, kiln-cpu-channels-last; CUDA: NHWC for f16, bf16 and tf32, what tensor
  /// cores want, NCHW for f32), Nchw (the model's) or Nhwc (every type).
  ConvLayout convLayout = ConvLayout::Auto;
  /// Fused: attention becomes one step where the target takes it (kiln.attention on the CPU; on
  /// CUDA cuDNN's in f16 and bf16, a generated kernel in f32); Unfused: two products and a
  /// softmax.
  AttentionMode attention = AttentionMode::Fused;
  /// Precision::Auto: the low precision the search tries (fp16 or bf16), its accuracy budget
  /// ("rtol=R,atol=A", "top1[=F]"), its calibration inputs (a directory; empty: seeded random
  /// ones) and how many random samples.
  Precision autoPrecision = Precision::Fp16;
  std::string accuracyBudget = "rtol=0.01,atol=0.001";
  std::string calibrationInputs;
  int64_t calibrationSamples = 4;
  /// When set, exactly these precision candidates are low (the search's answer).
  std::optional<std::vector<int64_t>> precisionLow;
  /// Round through `precision` under a mask input instead of changing types (the search's
  /// evaluator; the artifact gains the input `kiln.precision_mask`).
  bool emulatePrecision = false;
  /// INDEX=TEXT lines: why the search kept each of those candidates high (for the report).
  std::vector<std::string> precisionEvidence;
  /// Print the kernels, library calls and memory plan of the program.
  bool report = false;
  /// When not empty, the IR after each stage is written here as NN-stage.mlir.
  std::string dumpIrDirectory;
  /// The model's function that becomes the program (kiln-opt; the driver finds it).
  std::string entry = "main";
  /// The last stage of the compile pipeline to run (kiln-opt; empty: all).
  std::string stopAfter;
};

/// Where an option is taken: flags of `kiln compile`, of `kiln run` and `kiln bench` (which
/// compile a model just in time), and `kiln-opt --kiln-compile-pipeline` options.
enum OptionScope : unsigned {
  kCompileScope = 1,
  kRunScope = 2,
  kBenchScope = 4,
  kPipelineScope = 8,
};

/// One compile option: its name (`--NAME` on the command line, `NAME=` in pipeline options,
/// the keyword NAME with '-' as '_' in Python), its help, where it is taken, and how its values
/// set and read a CompileOptions.
struct OptionSpec {
  enum class Arity {
    /// No value on the command line (`--report`); "true"/"false" in pipeline options.
    Flag,
    /// One value.
    Value,
    /// Any number of values (repeated, or separated by commas where `commas`).
    List,
  };
  std::string_view name;
  std::string_view help;
  Arity arity;
  unsigned scopes;
  /// A list's values may be given separated by commas (`--gpu-arch sm_80,sm_90`).
  bool commas = false;
  /// Sets the option from the values given (one for Flag and Value; a list's replace its
  /// default, except where the row appends to another's storage). Returns the reason the values
  /// are not valid, to follow "--NAME " in a message, or an empty string.
  std::string (*set)(CompileOptions &options, const std::vector<std::string> &values);
  /// The option's values in `options`, as `set` reads them (an unset Value is empty).
  std::vector<std::string> (*get)(const CompileOptions &options);
};

/// Every compile option, in the order `--help` lists them.
const std::vector<OptionSpec> &compileOptionTable();

/// The row named `name`, or null.
const OptionSpec *findCompileOption(std::string_view name);

/// Parses `NAME=DIMS` ("image=1x3x224x224", "?" or "8.." for a dimension without an upper
/// bound, "1..32" for a range); nothing when it is not one.
std::optional<InputShape> parseInputShape(std::string_view text);

/// Parses a size with an optional unit (B, KiB, MiB, GiB; K, M, G mean the same): "256MiB".
std::optional<uint64_t> parseByteSize(std::string_view text);

/// Parses "sm_80" into 80; nothing for anything else.
std::optional<unsigned> parseGpuArch(std::string_view text);

} // namespace kiln

#endif // KILN_COMPILER_OPTIONS_COMPILEOPTIONS_H
