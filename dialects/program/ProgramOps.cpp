//===- ProgramOps.cpp - Verifiers and folders of the program dialect ---------===//

#include "dialects/program/ProgramOps.h"
#include "dialects/kiln/KilnAttributes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"

#include "llvm/ADT/DenseSet.h"

using namespace mlir;

namespace kiln::program {

#include "dialects/program/ProgramInterfaces.cpp.inc"

uint64_t bufferBytes(MemRefType type) {
  Type element = type.getElementType();
  uint64_t width = element.isIntOrFloat() ? llvm::divideCeil(element.getIntOrFloatBitWidth(), 8)
                                          : 0;
  return static_cast<uint64_t>(type.getNumElements()) * width;
}

Value rootBuffer(Value value) {
  while (auto view = value.getDefiningOp<ViewOp>())
    value = view.getSource();
  return value;
}

uint64_t viewByteOffset(Value value) {
  uint64_t offset = 0;
  while (auto view = value.getDefiningOp<ViewOp>()) {
    offset += view.getByteOffset().value_or(0);
    value = view.getSource();
  }
  return offset;
}

namespace {

/// Buffers are static, dense (identity layout) memrefs of integers or floats.
LogicalResult verifyBufferType(Operation *op, Type type, StringRef what) {
  auto memref = dyn_cast<MemRefType>(type);
  if (!memref || !memref.hasStaticShape() || !memref.getLayout().isIdentity() ||
      !memref.getElementType().isIntOrFloat())
    return op->emitOpError() << what << " must be a static, dense memref of integers or floats, "
                             << "not " << type;
  return success();
}

LogicalResult verifyBuffers(Operation *op) {
  for (Type type : op->getOperandTypes())
    if (failed(verifyBufferType(op, type, "a binding")))
      return failure();
  for (Type type : op->getResultTypes())
    if (failed(verifyBufferType(op, type, "a buffer")))
      return failure();
  return success();
}

void addEffects(Operation *op, OperandRange reads, OperandRange writes,
                SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {
  for (OpOperand &operand : op->getOpOperands()) {
    unsigned index = operand.getOperandNumber();
    bool read = index >= reads.getBeginOperandIndex() &&
                index < reads.getBeginOperandIndex() + reads.size();
    bool write = index >= writes.getBeginOperandIndex() &&
                 index < writes.getBeginOperandIndex() + writes.size();
    if (read)
      effects.emplace_back(MemoryEffects::Read::get(), &operand);
    if (write)
      effects.emplace_back(MemoryEffects::Write::get(), &operand);
  }
}

} // namespace

//===----------------------------------------------------------------------===//
// ProgramOp
//===----------------------------------------------------------------------===//

void ProgramOp::build(OpBuilder &builder, OperationState &state, StringRef name, Device device) {
  state.addAttribute(getSymNameAttrName(state.name), builder.getStringAttr(name));
  state.addAttribute(getDeviceAttrName(state.name),
                     DeviceAttr::get(builder.getContext(), device));
  Region *body = state.addRegion();
  body->emplaceBlock();
}

LogicalResult ProgramOp::verify() {
  if (auto alignment = getAlignment())
    if (*alignment < 1 || !llvm::isPowerOf2_64(*alignment))
      return emitOpError() << "alignment " << *alignment << " is not a power of two";
  return success();
}

LogicalResult ProgramOp::verifyRegions() {
  // The signature: indices 0..n-1, each once.
  for (bool outputs : {false, true}) {
    llvm::DenseMap<int64_t, Operation *> seen;
    auto check = [&](Operation *op, int64_t index) -> LogicalResult {
      if (index < 0)
        return op->emitOpError() << "has the negative index " << index;
      auto [it, inserted] = seen.try_emplace(index, op);
      if (!inserted)
        return op->emitOpError() << "repeats " << (outputs ? "output " : "input ") << index;
      return success();
    };
    for (Operation &op : getBody().front()) {
      LogicalResult result = success();
      if (auto input = dyn_cast<InputOp>(op); input && !outputs)
        result = check(input, input.getIndex());
      else if (auto output = dyn_cast<OutputOp>(op); output && outputs)
        result = check(output, output.getIndex());
      if (failed(result))
        return failure();
    }
    for (int64_t i = 0, e = seen.size(); i < e; ++i)
      if (!seen.count(i))
        return emitOpError() << "has " << e << (outputs ? " outputs" : " inputs") << " but none is "
                             << (outputs ? "output " : "input ") << i;
  }

  bool planned = isPlanned();
  for (Operation &op : getBody().front()) {
    if (auto alloc = dyn_cast<AllocOp>(op)) {
      if (planned != alloc.getOffset().has_value())
        return alloc.emitOpError() << (planned ? "has no offset in a planned program"
                                               : "has an offset in a program not yet planned "
                                                 "(no arena_size)");
      if (planned && alloc.getOffset() &&
          static_cast<uint64_t>(*alloc.getOffset()) + bufferBytes(alloc.getType()) >
              static_cast<uint64_t>(*getArenaSize()))
        return alloc.emitOpError() << "ends at byte "
                                   << *alloc.getOffset() + bufferBytes(alloc.getType())
                                   << ", past the arena's " << *getArenaSize();
      continue;
    }
    auto step = dyn_cast<StepOpInterface>(op);
    if (!step)
      continue;
    // A step writes only what the program owns: its intermediates and the caller's outputs.
    for (Value output : step.getStepOutputs()) {
      Operation *root = rootBuffer(output).getDefiningOp();
      if (!isa_and_nonnull<AllocOp, OutputOp>(root))
        return op.emitOpError() << "writes "
                                << (isa_and_nonnull<InputOp>(root)      ? "an input"
                                    : isa_and_nonnull<ConstantOp>(root) ? "a constant"
                                                                        : "a buffer it does not own")
                                << "; steps write only allocations and outputs";
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

static LogicalResult verifySignatureOp(Operation *op, MemRefType type,
                                       std::optional<Type> declared,
                                       std::optional<ArrayAttr> symbols) {
  if (failed(verifyBuffers(op)))
    return failure();
  if (declared) {
    auto tensor = dyn_cast<RankedTensorType>(*declared);
    if (!tensor || tensor.getShape() != type.getShape() ||
        !tensor.getElementType().isIntOrFloat() ||
        tensor.getElementType().getIntOrFloatBitWidth() !=
            type.getElementType().getIntOrFloatBitWidth())
      return op->emitOpError() << "declares the type " << *declared << ", which is not "
                               << type << " with an element type of the same width";
  }
  if (symbols && static_cast<int64_t>(symbols->size()) != type.getRank())
    return op->emitOpError() << "names " << symbols->size() << " dimensions; the buffer has "
                             << type.getRank();
  return success();
}

LogicalResult InputOp::verify() {
  if (getCheck())
    return emitOpError() << "carries a check message; only outputs are checks";
  return verifySignatureOp(*this, getType(), getDeclaredType(), getDimSymbols());
}

LogicalResult OutputOp::verify() {
  if (getCheck() && !getType().getElementType().isInteger(1))
    return emitOpError() << "is a check, whose buffer must hold i1, not " << getType();
  return verifySignatureOp(*this, getType(), getDeclaredType(), getDimSymbols());
}

LogicalResult ConstantOp::verify() {
  if (failed(verifyBuffers(*this)))
    return failure();
  auto shaped = cast<ShapedType>(getValue().getType());
  if (shaped.getShape() != getType().getShape() ||
      shaped.getElementType() != getType().getElementType())
    return emitOpError() << "holds a value of type " << shaped << " in a buffer of type "
                         << getType();
  return success();
}

LogicalResult AllocOp::verify() {
  if (failed(verifyBuffers(*this)))
    return failure();
  if (IntegerAttr offsetAttr = getOffsetAttr()) {
    int64_t offset = offsetAttr.getInt();
    if (offset < 0)
      return emitOpError() << "has the negative offset " << offset;
    auto program = (*this)->getParentOfType<ProgramOp>();
    if (auto alignment = program.getAlignment();
        alignment && static_cast<uint64_t>(offset) % *alignment != 0)
      return emitOpError() << "has the offset " << offset << ", not a multiple of the "
                           << "program's alignment " << *alignment;
  }
  return success();
}

LogicalResult ViewOp::verify() {
  if (failed(verifyBuffers(*this)))
    return failure();
  uint64_t source = bufferBytes(getSource().getType()), bytes = bufferBytes(getType());
  std::optional<int64_t> offset = getByteOffset();
  if (!offset) {
    if (source != bytes)
      return emitOpError() << "views the " << source << " bytes of " << getSource().getType()
                           << " as " << getType() << ", which has " << bytes;
    return success();
  }
  if (*offset < 0 || static_cast<uint64_t>(*offset) > source ||
      bytes > source - static_cast<uint64_t>(*offset))
    return emitOpError() << "views bytes [" << *offset << ", " << *offset + bytes << ") of "
                         << getSource().getType() << ", which has " << source;
  return success();
}

OpFoldResult ViewOp::fold(FoldAdaptor) {
  if (getSource().getType() == getType() && getByteOffset().value_or(0) == 0)
    return getSource();
  // A view of a view views the first source, at the sum of their offsets.
  if (auto inner = getSource().getDefiningOp<ViewOp>()) {
    std::optional<int64_t> outer = getByteOffset(), first = inner.getByteOffset();
    if (outer || first)
      setByteOffset(outer.value_or(0) + first.value_or(0));
    getSourceMutable().assign(inner.getSource());
    return getResult();
  }
  return {};
}

//===----------------------------------------------------------------------===//
// Steps
//===----------------------------------------------------------------------===//

/// A step's `in_place` pairs name bindings it has, of the same byte size.
static LogicalResult verifyInPlacePairs(StepOpInterface step) {
  ArrayRef<int64_t> pairs = step.getInPlacePairs();
  Operation *op = step.getOperation();
  if (pairs.size() % 2 != 0)
    return op->emitOpError() << "in_place lists " << pairs.size()
                             << " numbers; it holds (input, output) pairs";
  OperandRange inputs = step.getStepInputs(), outputs = step.getStepOutputs();
  for (size_t i = 0; i < pairs.size(); i += 2) {
    int64_t input = pairs[i], output = pairs[i + 1];
    if (input < 0 || input >= static_cast<int64_t>(inputs.size()) || output < 0 ||
        output >= static_cast<int64_t>(outputs.size()))
      return op->emitOpError() << "in_place pair (" << input << ", " << output
                               << ") names a binding the step does not have";
    if (bufferBytes(cast<MemRefType>(inputs[input].getType())) !=
        bufferBytes(cast<MemRefType>(outputs[output].getType())))
      return op->emitOpError() << "in_place pair (" << input << ", " << output
                               << ") binds buffers of different sizes";
  }
  return success();
}

LogicalResult DispatchOp::verify() {
  if (failed(verifyBuffers(*this)))
    return failure();
  if (getOutputs().empty())
    return emitOpError("writes no buffer");
  return verifyInPlacePairs(cast<StepOpInterface>(getOperation()));
}

LogicalResult DispatchOp::verifySymbolUses(SymbolTableCollection &symbols) {
  Operation *kernel = symbols.lookupNearestSymbolFrom(*this, getKernelAttr());
  if (!kernel)
    return emitOpError() << "dispatches " << getKernel() << ", which is not in the module";
  if (auto function = dyn_cast<func::FuncOp>(kernel)) {
    if (!function->hasAttr(::kiln::attrs::kDispatch))
      return emitOpError() << "dispatches " << getKernel() << ", a function that is not a "
                           << "dispatch function (kiln.dispatch)";
    // On tensors a dispatch function takes the inputs and returns the outputs, or in
    // destination-passing style takes both; once bufferized it also takes scratch buffers and
    // the workgroup id, which code generation adds.
    unsigned inputs = getInputs().size(), outputs = getOutputs().size();
    bool onTensors = llvm::all_of(function.getArgumentTypes(),
                                  [](Type type) { return isa<RankedTensorType>(type); });
    bool returns = function.getNumArguments() == inputs && function.getNumResults() == outputs;
    bool destinations = function.getNumArguments() == inputs + outputs;
    if (onTensors && !returns && !destinations)
      return emitOpError() << "binds " << inputs << " inputs and " << outputs << " outputs; "
                           << getKernel() << " takes " << function.getNumArguments()
                           << " and returns " << function.getNumResults();
    return success();
  }
  // A dispatch function lowered further (to the LLVM dialect) keeps its attribute.
  if (kernel->hasAttr(::kiln::attrs::kDispatch))
    return success();
  if (auto compiled = dyn_cast<KernelOp>(kernel)) {
    size_t scratch = compiled.getScratch() ? compiled.getScratch()->size() : 0;
    if (getOutputs().size() < scratch)
      return emitOpError() << "binds " << getOutputs().size() << " outputs; " << getKernel()
                           << " needs " << scratch << " scratch buffers after the outputs";
    return success();
  }
  return emitOpError() << "dispatches " << getKernel() << ", which is neither a dispatch "
                       << "function nor a program.kernel";
}

void DispatchOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {
  addEffects(*this, getInputs(), getOutputs(), effects);
}

LogicalResult LibraryCallOp::verify() {
  if (failed(verifyBuffers(*this)) ||
      failed(verifyInPlacePairs(cast<StepOpInterface>(getOperation()))))
    return failure();
  return verifyLibraryCall(*this);
}

void LibraryCallOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {
  addEffects(*this, getInputs(), getOutputs(), effects);
}

LogicalResult CopyOp::verify() {
  if (failed(verifyBuffers(*this)))
    return failure();
  if (bufferBytes(getSource().getType()) != bufferBytes(getTarget().getType()))
    return emitOpError() << "copies " << bufferBytes(getSource().getType()) << " bytes into a "
                         << "buffer of " << bufferBytes(getTarget().getType());
  return success();
}

void CopyOp::getEffects(
    SmallVectorImpl<SideEffects::EffectInstance<MemoryEffects::Effect>> &effects) {
  addEffects(*this, getStepInputs(), getStepOutputs(), effects);
}

//===----------------------------------------------------------------------===//
// Kernels
//===----------------------------------------------------------------------===//

void ExecutableOp::build(OpBuilder &builder, OperationState &state, StringRef name) {
  state.addAttribute(getSymNameAttrName(state.name), builder.getStringAttr(name));
  state.addRegion()->emplaceBlock();
}

LogicalResult ExecutableOp::verifyRegions() {
  // Every code object exports every kernel's symbols, and lists them alike.
  llvm::DenseSet<StringRef> needed;
  for (auto kernel : getBody().front().getOps<KernelOp>()) {
    if (auto symbol = kernel.getSymbol())
      needed.insert(*symbol);
    if (auto launches = kernel.getLaunches())
      for (Attribute launch : *launches)
        needed.insert(cast<CudaLaunchAttr>(launch).getKernel());
  }
  ArrayAttr first;
  for (auto binary : getBody().front().getOps<BinaryOp>()) {
    if (!first)
      first = binary.getSymbols();
    else if (binary.getSymbols() != first)
      return binary.emitOpError() << "lists other symbols than the executable's first binary";
    llvm::DenseSet<StringRef> listed;
    for (Attribute symbol : binary.getSymbols())
      listed.insert(cast<StringAttr>(symbol).getValue());
    for (StringRef symbol : needed)
      if (!listed.count(symbol))
        return binary.emitOpError() << "does not export '" << symbol << "', which a kernel uses";
  }
  return success();
}

LogicalResult KernelOp::verify() {
  bool cpu = getSymbol().has_value() || getWorkgroups().has_value();
  bool cuda = getLaunches().has_value();
  if (cpu == cuda)
    return emitOpError() << "describes " << (cpu ? "both a CPU (symbol, workgroups) and a CUDA "
                                                 "(launches)"
                                               : "neither a CPU (symbol, workgroups) nor a CUDA "
                                                 "(launches)")
                         << " kernel";
  if (cpu && (!getSymbol() || !getWorkgroups()))
    return emitOpError("a CPU kernel has both a symbol and a workgroup count");
  if (auto workgroups = getWorkgroups(); workgroups && *workgroups < 1)
    return emitOpError() << "runs over " << *workgroups << " workgroups";
  if (auto scratch = getScratch())
    for (Attribute type : *scratch)
      if (failed(verifyBufferType(*this, cast<TypeAttr>(type).getValue(), "a scratch buffer")))
        return failure();
  return success();
}

} // namespace kiln::program

#define GET_OP_CLASSES
#include "dialects/program/ProgramOps.cpp.inc"
