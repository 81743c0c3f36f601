//===- Compile.h - Compiling a graph program into a .kiln artifact -*- C++ -*-===//
//
// The compiler's entry point: a graph-dialect module in, the bytes of a .kiln artifact out
// (contract/artifact.fbs). Used by `kiln compile`, `kiln run` (just in time), `kiln bench`
// and the conformance runner.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_COMPILE_H_
#define KILN_COMPILER_DRIVER_COMPILE_H_

#include "compiler/codegen/Executable.h"
#include "compiler/transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include "llvm/ADT/StringRef.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

struct CompileOptions {
  /// "cpu" (the host) or "cuda".
  std::string device = "cpu";
  /// CUDA: the architectures to assemble cubins for ("sm_80", "sm_90", ...); the oldest one's
  /// PTX (ptxFallbackArch) also goes into the artifact, for GPUs none of the cubins fits.
  std::vector<std::string> gpuArchs = {"sm_80", "sm_90"};
  /// CUDA: libdevice bitcode linked into kernels for math functions; empty for the toolkit's.
  std::string libdevice;
  /// The fusion cost model's device: empty for the target's default (cpu; the oldest GPU of
  /// gpuArchs), a published description (cpu, a100, h100, l4), or a JSON description file
  /// (`kiln calibrate` measures the host into one).
  std::string costModel;
  /// Shape bindings for dynamic inputs (parseShapeBinding reads `--shape NAME=1x3x224x224`).
  std::vector<ShapeBinding> shapeBindings;
  /// The most bytes the arena may take (0: no limit): values are recomputed near their late
  /// uses until the plan fits, or compilation fails naming what could not be freed.
  uint64_t memoryLimit = 0;
  /// A program for a range of shapes: "bounds" plans its arena once for the upper bounds,
  /// "per-run" leaves the runtime to pack it for each shape (kiln-plan-memory), "auto" takes
  /// per-run where the smallest shape's arena is under half the upper bounds' (on the CPU).
  /// A dimension without an upper bound is always planned per run.
  std::string memoryPlan = "auto";
  /// The most streams independent steps are spread over (1: one after another).
  int64_t streams = 1;
  /// Devices the model is split over (kiln-partition-tensor; 1: not split) and how. The artifact
  /// is device 0's, carrying the others' (contract/artifact.fbs, Partition).
  int64_t devices = 1;
  std::string partition = "tensor";
  /// With --partition pipeline: how many micro-batches are in flight (1: a run passes through
  /// the stages in turn).
  int64_t microBatches = 1;
  /// The device compiled (set by the driver for each device in turn).
  int64_t deviceRank = 0;
  /// The precision (kiln-assign-precision): "fp32" (no change), "tf32", "bf16" or "fp16".
  std::string precision = "fp32";
  /// Inputs and outputs keep their declared types under a lower precision.
  bool keepIoTypes = false;
  /// The tensor layout of convolutions: "auto" (CPU: NHWC, kiln-cpu-channels-last; CUDA: NHWC
  /// for f16, bf16 and tf32, what tensor cores want, NCHW for f32, kiln-cuda-channels-last),
  /// "nchw" (the model's), or "nhwc" (every type).
  std::string convLayout = "auto";
  /// "fused": attention becomes one step where the target takes it (kiln.attention on the CPU;
  /// on CUDA cuDNN's in f16 and bf16, a generated kernel in f32); "unfused": two products and a
  /// softmax.
  std::string attention = "fused";
  /// ONNX nodes kept in fp32 whatever their class.
  std::vector<std::string> keepHigh;
  /// When set, exactly these precision candidates are low (the `auto` search's answer).
  std::optional<std::vector<int64_t>> precisionLow;
  /// Round through `precision` under a mask input instead of changing types (the search's
  /// evaluator; the artifact gains the input `kiln.precision_mask`).
  bool emulatePrecision = false;
  /// INDEX=TEXT lines: why the search kept each of those candidates high (for the report).
  std::vector<std::string> precisionEvidence;
  /// When not empty, the IR after each stage is written here as NN-stage.mlir.
  std::string dumpIrDirectory;
  /// The model's file name, recorded in the artifact and used in messages.
  std::string sourceName;
  /// Called as each stage starts, with the stage's name (for progress output).
  std::function<void(llvm::StringRef stage)> onStage;
  /// When set, receives the fusion report: each kernel group and library call with the ops it
  /// holds, and the memory plan.
  llvm::raw_ostream *report = nullptr;
};

/// The function compileToArtifact compiles: `@main`, or the module's only public function.
/// Emits an error on the module and fails when there is none, or several and no `@main`.
mlir::FailureOr<mlir::func::FuncOp> findEntryFunction(mlir::ModuleOp module);

/// Compiles the module's entry function (`@main`, or its only public function) into the bytes of
/// a .kiln artifact. Errors are emitted as diagnostics on the module's context (naming the op and
/// its location) and the result is failure.
mlir::FailureOr<std::string> compileToArtifact(mlir::ModuleOp module, const CompileOptions &options);

/// The same, writing the artifact to `os` as it is produced: the weights go from the module to
/// `os` without another copy in memory (what `kiln compile` uses for a file). Nothing is written
/// when compilation fails.
mlir::LogicalResult compileToArtifact(mlir::ModuleOp module, const CompileOptions &options,
                                      llvm::raw_ostream &os);

} // namespace kiln

#endif // KILN_COMPILER_DRIVER_COMPILE_H_
