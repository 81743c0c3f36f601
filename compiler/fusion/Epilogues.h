//===- Epilogues.h - The fusion planner's decisions on library epilogues -*- C++ -*-===//
//
// The elementwise ops after a convolution or a matrix product that its library call computes as
// the call writes its result (oneDNN post-ops, cuBLASLt epilogues, cuDNN's fused operation
// graph) are the planner's decisions, made with the cost model the planner ranks generated
// kernels by. Library-call selection (compiler/librarycalls) proposes each step of an anchor's
// epilogue in order (a bias, a residual add, a bound, a scale, an activation, a widening cast)
// with what its library takes; the planner takes a step when the library takes it and the call
// doing it costs no more than the generated kernel that would otherwise do it (the step's
// reader's, or one of its own), and says why a step stays out. The
// decisions are recorded on the module and printed with the fusion report
// (`kiln compile --report`).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_FUSION_EPILOGUES_H
#define KILN_COMPILER_FUSION_EPILOGUES_H

#include "compiler/fusion/CostModel.h"
#include "dialects/kiln/KilnAttributes.h"

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Operation.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <string>

namespace kiln::fusion {

/// On the module: the planner's lines on library epilogues (an array of strings), which
/// kiln-plan-fusion moves into the fusion report.
inline constexpr llvm::StringLiteral kEpilogueReportAttr = ::kiln::attrs::kEpilogueReport;

/// One step of a library call's epilogue: the value it reads (the call's result so far), the
/// graph ops it replaces, in order (their last result is the step's result), and the tensor the
/// call reads for it besides its own result (a bias, a residual; null for a bound, a scale, an
/// activation or a cast).
struct EpilogueStep {
  llvm::StringRef kind;
  mlir::Value input;
  llvm::SmallVector<mlir::Operation *> ops;
  mlir::Value operand;
  /// The op computing `operand` for this step alone (its one reader), which out of the call would
  /// be computed inside the step's kernel and never stored (a broadcast sum of a bias and a
  /// mask), and in the call must be a kernel of its own; null where the operand exists anyway.
  mlir::Operation *operandProducer = nullptr;
  /// Whether the step's result has one reader that is a generated kernel's op, which would take
  /// the step's ops into its kernel (a softmax after a masked product): out of the call the step
  /// costs that kernel's extra reads, not a kernel of its own.
  bool readerFuses = false;
};

/// The planner's epilogue decisions for one module.
class EpiloguePlanner {
public:
  explicit EpiloguePlanner(DeviceDescription device) : device_(std::move(device)) {}

  /// Starts the epilogue of a call of `library` (e.g. "onednn.matmul") computing `anchor`.
  void begin(llvm::StringRef library, mlir::Operation *anchor);
  /// Whether `step`, which the library takes, joins the call. In the call it costs reading its
  /// operand as the call writes, and the kernel computing the operand where the step was its
  /// only reader; out of the call, the extra reads of the kernel its reader would take it into
  /// (the call's result and the operand, or the operand's own inputs), or a kernel of its own.
  /// Ties go to the call. Taken steps are recorded; a step the model refuses is reported.
  bool take(const EpilogueStep &step);
  /// Records that `step` stays out of the call because the library (or the graph) does not
  /// allow it: `why` says which. The refusal is dropped if a later call takes the step's ops (a
  /// residual add beside other readers of one call's result is the next call's epilogue).
  void refuse(const EpilogueStep &step, llvm::StringRef why);
  /// Ends the current call's epilogue.
  void end();

  /// Stores the decisions on `module` (kEpilogueReportAttr): a summary line, one line per call
  /// that took steps (the kernel its steps would have been together: the bytes and the modeled
  /// time saved), one per refused step.
  void record(mlir::ModuleOp module) const;

private:
  DeviceDescription device_;
  llvm::StringRef library_;
  mlir::Operation *anchor_ = nullptr;
  llvm::SmallVector<std::string> kinds_;
  llvm::SmallVector<mlir::Operation *> ops_;
  /// The steps taken so far: their FLOPs, the bytes of the value the first reads, of their
  /// operands, and of the value the last writes.
  double flops_ = 0, inputBytes_ = 0, operandBytes_ = 0, outputBytes_ = 0;
  /// The kernels computing taken steps' operands for the call alone.
  double producerSeconds_ = 0;

  llvm::SmallVector<std::string> calls_;
  /// A refused step: its first op (compared with later calls' steps only, never dereferenced:
  /// the op may be gone by the time the report is recorded) and the report's line.
  struct Refusal {
    mlir::Operation *op;
    std::string line;
  };
  llvm::SmallVector<Refusal> refusals_;
  size_t callsWithSteps_ = 0, stepsTaken_ = 0, opsTaken_ = 0;
  double totalSaving_ = 0, totalBytes_ = 0;
};

} // namespace kiln::fusion

#endif // KILN_COMPILER_FUSION_EPILOGUES_H
