//===- Epilogues.cpp - The fusion planner's decisions on library epilogues -===//

#include "compiler/fusion/Epilogues.h"

#include "compiler/fusion/Passes.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace kiln::fusion {
namespace {

/// The bytes of `value` (0 for a dynamic shape or none).
double bytesOf(Value value) { return value ? tensorBytes(value.getType()) : 0; }

/// The elements of `value`'s static shape (0 for a dynamic one).
double elementsOf(Value value) {
  auto type = dyn_cast<ShapedType>(value.getType());
  return type && type.hasStaticShape() ? double(type.getNumElements()) : 0;
}

/// The FLOPs of one element of an epilogue op, as the generated kernels' model counts them:
/// transcendental functions expand into polynomials.
double elementFlops(Operation *op) {
  StringRef name = op->getName().getStringRef();
  if (name == "graph.erf" || name == "graph.tanh" || name == "graph.exp" ||
      name == "graph.sigmoid" || name == "graph.pow")
    return 16;
  if (name == "graph.div" || name == "graph.sqrt")
    return 4;
  return 1;
}

/// The model nodes an op came from, or its name.
std::string nodeOf(Operation *op) {
  llvm::SetVector<StringRef> names;
  collectNodeNames(op->getLoc(), names);
  return names.empty() ? op->getName().getStringRef().str()
                       : llvm::join(names.getArrayRef(), ", ");
}

} // namespace

void EpiloguePlanner::begin(StringRef library, Operation *anchor) {
  library_ = library;
  anchor_ = anchor;
  kinds_.clear();
  ops_.clear();
  flops_ = inputBytes_ = operandBytes_ = outputBytes_ = producerSeconds_ = 0;
}

bool EpiloguePlanner::take(const EpilogueStep &step) {
  Value out = step.ops.back()->getResult(0);
  double elements = elementsOf(out), flops = 0;
  for (Operation *op : step.ops)
    flops += elementFlops(op) * elements;
  double bandwidth = device_.bytesPerSecond;
  double operandBytes = bytesOf(step.operand);
  // What the operand is read from out of the call: itself, or its producer's inputs, which the
  // kernel taking the step computes it from.
  double sourceBytes = operandBytes, producerSeconds = 0;
  if (Operation *producer = step.operandProducer) {
    sourceBytes = 0;
    llvm::SmallPtrSet<Value, 4> read;
    for (Value operand : producer->getOperands())
      if (read.insert(operand).second)
        sourceBytes += bytesOf(operand);
    KernelWork work{elementFlops(producer) * elementsOf(step.operand), sourceBytes + operandBytes};
    producerSeconds = kernelSeconds(device_, work);
  }
  // In the call: the library reads the operand as it writes (the arithmetic overlaps the write).
  double fused = producerSeconds + operandBytes / bandwidth;
  // Out of it: the reader's kernel reads the call's result and the operand's sources instead of
  // the step's result, or the step is a kernel of its own.
  double unfused =
      step.readerFuses
          ? std::max(0.0, bytesOf(step.input) + sourceBytes - bytesOf(out)) / bandwidth
          : kernelSeconds(device_, {flops, bytesOf(step.input) + sourceBytes + bytesOf(out)});
  if (fused > unfused) {
    refuse(step,
           llvm::formatv("modeled slower in the call ({0:F2} us, its operand a kernel's "
                         "result of its own) than {1} ({2:F2} us)",
                         fused * 1e6,
                         step.readerFuses ? "in its reader's kernel" : "as a kernel of its own",
                         unfused * 1e6)
               .str());
    return false;
  }
  // An op another call refused (an add beside other readers of that call's result) is this
  // call's step now: no refusal stands for it.
  llvm::erase_if(refusals_,
                 [&](const Refusal &refusal) { return llvm::is_contained(step.ops, refusal.op); });
  if (kinds_.empty())
    inputBytes_ = bytesOf(step.input);
  kinds_.push_back(step.kind.str());
  llvm::append_range(ops_, step.ops);
  flops_ += flops;
  operandBytes_ += operandBytes;
  producerSeconds_ += producerSeconds;
  outputBytes_ = bytesOf(out);
  return true;
}

void EpiloguePlanner::refuse(const EpilogueStep &step, StringRef why) {
  refusals_.push_back(
      {step.ops.front(), llvm::formatv("not in the epilogue of {0} ({1}): {2}: {3}", library_,
                                       nodeOf(anchor_), describeOps(step.ops), why)});
}

void EpiloguePlanner::end() {
  if (kinds_.empty())
    return;
  // The steps taken would have been one kernel together (a chain of elementwise ops fuses),
  // reading the call's result and the steps' operands and writing the last step's result: the
  // call saves that kernel but for reading the operands.
  KernelWork kernel{flops_, inputBytes_ + operandBytes_ + outputBytes_};
  double saving =
      kernelSeconds(device_, kernel) - operandBytes_ / device_.bytesPerSecond - producerSeconds_;
  double bytes = inputBytes_ + outputBytes_;
  calls_.push_back(llvm::formatv("{0} ({1}) with {2}: {3} ops; {4:F1} KiB, {5:F2} us modeled saved",
                                 library_, nodeOf(anchor_), llvm::join(kinds_, ", "), ops_.size(),
                                 bytes / 1024, saving * 1e6));
  ++callsWithSteps_;
  stepsTaken_ += kinds_.size();
  opsTaken_ += ops_.size();
  totalSaving_ += saving;
  totalBytes_ += bytes;
  kinds_.clear();
}

void EpiloguePlanner::record(ModuleOp module) const {
  Builder builder(module.getContext());
  SmallVector<Attribute> lines;
  lines.push_back(builder.getStringAttr(llvm::formatv(
      "library epilogues ({0} device model): {1} calls take {2} ops in {3} steps: {1} kernels, "
      "{4:F1} MiB, {5:F1} us modeled saved; {6} steps stay out",
      device_.name, callsWithSteps_, opsTaken_, stepsTaken_, totalBytes_ / (1 << 20),
      totalSaving_ * 1e6, refusals_.size())));
  for (const std::string &line : calls_)
    lines.push_back(builder.getStringAttr(line));
  for (const Refusal &refusal : refusals_)
    lines.push_back(builder.getStringAttr(refusal.line));
  module->setAttr(kEpilogueReportAttr, builder.getArrayAttr(lines));
}

} // namespace kiln::fusion
