//===- ArtifactWriter.cpp - Writing the program into a .kiln artifact ---------===//

#include "compiler/artifact/ArtifactWriter.h"

#include "compiler/artifact/MemoryPlanner.h"
#include "compiler/codegen/Passes.h"
#include "kiln/artifact_format.h"
#include "runtime/schema/artifact_generated.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Format.h"

namespace kiln {

using namespace mlir;
namespace fb = flatbuffers;
namespace art = kiln::artifact;

namespace {

constexpr uint64_t kAlignment = 64;

uint64_t alignUp(uint64_t value, uint64_t alignment) {
  return (value + alignment - 1) / alignment * alignment;
}

/// The kiln_element_type_t value of an MLIR element type, or 0.
int elementTypeCode(Type type) {
  if (type.isF32())
    return 1;
  if (type.isF16())
    return 2;
  if (type.isBF16())
    return 3;
  if (isa<Float8E4M3FNType>(type))
    return 4;
  if (isa<Float8E5M2Type>(type))
    return 5;
  if (type.isF64())
    return 6;
  if (auto integer = dyn_cast<IntegerType>(type)) {
    if (integer.getWidth() == 1)
      return 12;
    if (integer.isUnsigned())
      return integer.getWidth() == 8 ? 11 : 0;
    switch (integer.getWidth()) {
    case 64:
      return 7;
    case 32:
      return 8;
    case 16:
      return 9;
    case 8:
      return 10;
    default:
      return 0;
    }
  }
  return 0;
}

uint64_t elementBytes(Type type) {
  if (type.isInteger(1))
    return 1;
  return llvm::divideCeil(type.getIntOrFloatBitWidth(), 8);
}

uint64_t byteSize(RankedTensorType type) {
  return static_cast<uint64_t>(type.getNumElements()) * elementBytes(type.getElementType());
}

/// Where a buffer of the program lives.
struct Buffer {
  art::BufferKind kind = art::BufferKind::Arena;
  uint32_t index = 0;
  uint64_t offset = 0;
  uint64_t size = 0;
  int64_t firstStep = 0;
  int64_t lastStep = 0;
};

/// A value of the entry function: a buffer seen with a type (views share the buffer).
struct BoundValue {
  unsigned buffer;
  RankedTensorType type;
};

struct PendingBinding {
  unsigned buffer;
  RankedTensorType type;
};

struct PendingStep {
  enum Kind { Dispatch, Library, Copy } kind;
  std::string name;
  std::string description;
  const KernelTable::Entry *kernel = nullptr;
  SmallVector<PendingBinding> bindings;
  func::CallOp call;
};

class ProgramBuilder {
public:
  ProgramBuilder(func::FuncOp entry, const KernelTable &kernels)
      : entry_(entry), kernels_(kernels) {}

  LogicalResult build();
  std::string serialize(const ArtifactInfo &info);
  void report(llvm::raw_ostream &os) const;

private:
  unsigned newBuffer(art::BufferKind kind, uint64_t size, int64_t step) {
    Buffer buffer;
    buffer.kind = kind;
    buffer.size = size;
    buffer.firstStep = buffer.lastStep = step;
    buffers_.push_back(buffer);
    return buffers_.size() - 1;
  }
  FailureOr<BoundValue> lookup(Value value, Operation *user);
  LogicalResult addConstant(arith::ConstantOp op);
  LogicalResult addCall(func::CallOp call);
  LogicalResult addReturn(func::ReturnOp op);
  void use(unsigned buffer, int64_t step) {
    buffers_[buffer].lastStep = std::max(buffers_[buffer].lastStep, step);
  }

  func::FuncOp entry_;
  const KernelTable &kernels_;
  std::vector<Buffer> buffers_;
  llvm::DenseMap<Value, BoundValue> values_;
  std::vector<PendingStep> steps_;
  std::string constants_;
  ArenaPlan plan_;
};

FailureOr<BoundValue> ProgramBuilder::lookup(Value value, Operation *user) {
  auto it = values_.find(value);
  if (it != values_.end())
    return it->second;
  return user->emitError() << "operand of type " << value.getType()
                           << " has no buffer in the program (its producer was not compiled)";
}

LogicalResult ProgramBuilder::addConstant(arith::ConstantOp op) {
  auto type = dyn_cast<RankedTensorType>(op.getType());
  if (!type)
    return success(); // Scalars only feed kernels, which copied them.
  if (op->use_empty())
    return success();
  if (!type.hasStaticShape() || !elementTypeCode(type.getElementType()))
    return op.emitError() << "constant of type " << type << " cannot be stored in the artifact";
  uint64_t size = byteSize(type);
  uint64_t offset = alignUp(constants_.size(), kAlignment);
  constants_.resize(offset, '\0');
  if (auto dense = dyn_cast<DenseElementsAttr>(op.getValue())) {
    Type elementType = type.getElementType();
    if (elementType.isInteger(1)) {
      for (bool bit : dense.getValues<bool>())
        constants_.push_back(bit ? 1 : 0);
    } else {
      ArrayRef<char> raw = dense.getRawData();
      if (dense.isSplat()) {
        uint64_t width = elementBytes(elementType);
        for (int64_t i = 0; i < type.getNumElements(); ++i)
          constants_.append(raw.data(), width);
      } else {
        constants_.append(raw.data(), raw.size());
      }
    }
  } else if (auto resource = dyn_cast<DenseResourceElementsAttr>(op.getValue())) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return op.emitError("constant's resource data is missing");
    ArrayRef<char> data = blob->getData();
    constants_.append(data.data(), data.size());
  } else {
    return op.emitError("constant is neither dense data nor a resource");
  }
  if (constants_.size() != offset + size)
    return op.emitError() << "constant holds " << (constants_.size() - offset)
                          << " bytes, its type needs " << size;
  unsigned buffer = newBuffer(art::BufferKind::Constant, size, 0);
  buffers_[buffer].offset = offset;
  values_[op.getResult()] = {buffer, type};
  return success();
}

LogicalResult ProgramBuilder::addCall(func::CallOp call) {
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(call, call.getCalleeAttr());
  if (!callee)
    return call.emitError() << "call to unknown function @" << call.getCallee();
  int64_t step = steps_.size();
  PendingStep pending;
  pending.call = call;
  if (auto library = callee->getAttrOfType<StringAttr>(kLibraryCallAttr)) {
    pending.kind = PendingStep::Library;
    pending.name = library.getValue().str();
  } else if (callee->hasAttr(kDispatchAttr)) {
    pending.kind = PendingStep::Dispatch;
    pending.name = callee.getSymName().str();
    auto it = kernels_.dispatches.find(pending.name);
    if (it == kernels_.dispatches.end())
      return call.emitError() << "dispatch @" << pending.name << " was not compiled";
    pending.kernel = &it->second;
  } else {
    return call.emitError() << "call to @" << call.getCallee()
                            << ", which is neither a kernel nor a library call";
  }
  if (auto description = callee->getAttrOfType<StringAttr>(kDescriptionAttr))
    pending.description = description.getValue().str();
  else if (auto loc = dyn_cast<NameLoc>(call.getLoc()))
    pending.description = pending.name + " (" + loc.getName().getValue().str() + ")";
  else
    pending.description = pending.name;

  for (Value operand : call.getOperands()) {
    FailureOr<BoundValue> bound = lookup(operand, call);
    if (failed(bound))
      return failure();
    use(bound->buffer, step);
    pending.bindings.push_back({bound->buffer, bound->type});
  }
  for (Value result : call.getResults()) {
    auto type = dyn_cast<RankedTensorType>(result.getType());
    if (!type || !type.hasStaticShape())
      return call.emitError() << "result of type " << result.getType() << " is not static";
    unsigned buffer = newBuffer(art::BufferKind::Arena, byteSize(type), step);
    values_[result] = {buffer, type};
    pending.bindings.push_back({buffer, type});
  }
  steps_.push_back(std::move(pending));
  return success();
}

LogicalResult ProgramBuilder::addReturn(func::ReturnOp op) {
  llvm::DenseSet<unsigned> claimed;
  SmallVector<std::pair<unsigned, BoundValue>> copies;
  for (auto [i, operand] : llvm::enumerate(op.getOperands())) {
    FailureOr<BoundValue> bound = lookup(operand, op);
    if (failed(bound))
      return failure();
    Buffer &buffer = buffers_[bound->buffer];
    uint64_t size = byteSize(bound->type);
    // An output computed by a step is written straight into the caller's tensor.
    if (buffer.kind == art::BufferKind::Arena && buffer.size == size &&
        claimed.insert(bound->buffer).second) {
      buffer.kind = art::BufferKind::Output;
      buffer.index = i;
      continue;
    }
    copies.push_back({static_cast<unsigned>(i), *bound});
  }
  for (auto &[index, source] : copies) {
    int64_t step = steps_.size();
    PendingStep copy;
    copy.kind = PendingStep::Copy;
    copy.name = "copy";
    copy.description = "output " + std::to_string(index);
    use(source.buffer, step);
    unsigned output = newBuffer(art::BufferKind::Output, byteSize(source.type), step);
    buffers_[output].index = index;
    copy.bindings.push_back({source.buffer, source.type});
    copy.bindings.push_back({output, source.type});
    steps_.push_back(std::move(copy));
  }
  return success();
}

LogicalResult ProgramBuilder::build() {
  for (auto [i, argument] : llvm::enumerate(entry_.getArguments())) {
    auto type = dyn_cast<RankedTensorType>(argument.getType());
    if (!type || !type.hasStaticShape())
      return entry_.emitError() << "input " << i << " has type " << argument.getType()
                                << "; bind its dynamic dimensions with --shape";
    unsigned buffer = newBuffer(art::BufferKind::Input, byteSize(type), 0);
    buffers_[buffer].index = i;
    values_[argument] = {buffer, type};
  }
  for (Operation &op : entry_.getBody().front()) {
    LogicalResult result = success();
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      result = addConstant(constant);
    } else if (isViewOp(&op)) {
      FailureOr<BoundValue> source = lookup(op.getOperand(0), &op);
      if (failed(source))
        return failure();
      auto type = dyn_cast<RankedTensorType>(op.getResult(0).getType());
      if (!type || !type.hasStaticShape() || byteSize(type) != byteSize(source->type))
        return op.emitError() << "view to " << op.getResult(0).getType()
                              << " does not keep the byte size of " << source->type;
      values_[op.getResult(0)] = {source->buffer, type};
      use(source->buffer, steps_.size());
    } else if (auto call = dyn_cast<func::CallOp>(op)) {
      result = addCall(call);
    } else if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      result = addReturn(ret);
    } else if (isa<tensor::EmptyOp>(op) && op.use_empty()) {
      continue;
    } else {
      return op.emitError() << "'" << op.getName() << "' was not compiled into a kernel";
    }
    if (failed(result))
      return failure();
  }
  // A view used after its source's last step keeps the source alive: uses of views were
  // recorded on the shared buffer, so lifetimes are already complete here.
  std::vector<BufferLifetime> lifetimes;
  std::vector<unsigned> arenaBuffers;
  for (auto [id, buffer] : llvm::enumerate(buffers_)) {
    if (buffer.kind != art::BufferKind::Arena)
      continue;
    arenaBuffers.push_back(id);
    lifetimes.push_back({buffer.size, buffer.firstStep, buffer.lastStep});
  }
  plan_ = planArena(lifetimes, kAlignment);
  // An arena buffer's index names its value (artifact.fbs), so the runtime can tell values that
  // share a range apart.
  for (auto [i, id] : llvm::enumerate(arenaBuffers)) {
    buffers_[id].offset = plan_.offsets[i];
    buffers_[id].index = i;
  }
  return success();
}

fb::Offset<art::TensorType> tensorType(fb::FlatBufferBuilder &fbb, RankedTensorType type) {
  std::vector<int64_t> dims(type.getShape().begin(), type.getShape().end());
  return art::CreateTensorTypeDirect(fbb, elementTypeCode(type.getElementType()), &dims);
}

std::string ProgramBuilder::serialize(const ArtifactInfo &info) {
  fb::FlatBufferBuilder fbb(1 << 16);
  auto bufferRef = [&](unsigned id) {
    const Buffer &buffer = buffers_[id];
    return art::BufferRef(buffer.kind, buffer.index, buffer.offset, buffer.size);
  };
  auto bindings = [&](ArrayRef<PendingBinding> list) {
    std::vector<fb::Offset<art::Binding>> result;
    for (const PendingBinding &binding : list) {
      art::BufferRef ref = bufferRef(binding.buffer);
      result.push_back(art::CreateBinding(fbb, &ref, tensorType(fbb, binding.type)));
    }
    return fbb.CreateVector(result);
  };

  std::vector<fb::Offset<art::Step>> steps;
  for (const PendingStep &step : steps_) {
    switch (step.kind) {
    case PendingStep::Dispatch: {
      if (info.device == "cuda") {
        // One step per kernel; on one stream they run in order. They share the dispatch's
        // bindings and description in the file.
        auto shared = bindings(step.bindings);
        auto description = fbb.CreateString(step.description);
        for (const KernelTable::CudaLaunch &launch : step.kernel->cudaLaunches) {
          uint64_t blocks = llvm::divideCeil(launch.workItems, launch.blockSize);
          std::vector<uint32_t> count{
              static_cast<uint32_t>(std::min<uint64_t>(blocks, UINT32_MAX)), 1, 1};
          auto cuda = art::CreateCudaLaunch(fbb, launch.blockSize, launch.workItems);
          auto dispatch = art::CreateDispatch(fbb, 0, launch.kernel, fbb.CreateVector(count),
                                              shared, description, cuda);
          steps.push_back(art::CreateStep(fbb, art::StepKind::Dispatch, dispatch.Union()));
        }
        break;
      }
      std::vector<uint32_t> count{static_cast<uint32_t>(step.kernel->workgroupCount), 1, 1};
      auto dispatch = art::CreateDispatch(fbb, step.kernel->codeObject, step.kernel->kernel,
                                          fbb.CreateVector(count), bindings(step.bindings),
                                          fbb.CreateString(step.description));
      steps.push_back(art::CreateStep(fbb, art::StepKind::Dispatch, dispatch.Union()));
      break;
    }
    case PendingStep::Library: {
      std::vector<fb::Offset<art::IntParam>> ints;
      std::vector<fb::Offset<art::FloatParam>> floats;
      std::vector<fb::Offset<art::StringParam>> strings;
      for (NamedAttribute attr : step.call->getDiscardableAttrs()) {
        std::string key = attr.getName().str();
        Attribute value = attr.getValue();
        std::vector<int64_t> intValues;
        std::vector<float> floatValues;
        std::vector<std::string> stringValues;
        auto addElement = [&](Attribute element) {
          if (auto boolean = dyn_cast<BoolAttr>(element))
            intValues.push_back(boolean.getValue());
          else if (auto integer = dyn_cast<IntegerAttr>(element))
            intValues.push_back(integer.getInt());
          else if (auto real = dyn_cast<FloatAttr>(element))
            floatValues.push_back(real.getValueAsDouble());
          else if (auto text = dyn_cast<StringAttr>(element))
            stringValues.push_back(text.getValue().str());
        };
        if (auto array = dyn_cast<DenseI64ArrayAttr>(value))
          intValues.assign(array.asArrayRef().begin(), array.asArrayRef().end());
        else if (auto array = dyn_cast<DenseF32ArrayAttr>(value))
          floatValues.assign(array.asArrayRef().begin(), array.asArrayRef().end());
        else if (auto array = dyn_cast<ArrayAttr>(value))
          llvm::for_each(array, addElement);
        else
          addElement(value);
        if (!stringValues.empty() ||
            (isa<ArrayAttr>(value) && intValues.empty() && floatValues.empty())) {
          std::vector<fb::Offset<fb::String>> texts;
          for (const std::string &text : stringValues)
            texts.push_back(fbb.CreateString(text));
          strings.push_back(art::CreateStringParam(fbb, fbb.CreateString(key),
                                                   fbb.CreateVector(texts)));
        } else if (!floatValues.empty()) {
          floats.push_back(art::CreateFloatParamDirect(fbb, key.c_str(), &floatValues));
        } else {
          ints.push_back(art::CreateIntParamDirect(fbb, key.c_str(), &intValues));
        }
      }
      auto call = art::CreateLibraryCall(
          fbb, fbb.CreateString(step.name), bindings(step.bindings), fbb.CreateVector(ints),
          fbb.CreateVector(floats), fbb.CreateVector(strings), fbb.CreateString(step.description));
      steps.push_back(art::CreateStep(fbb, art::StepKind::LibraryCall, call.Union()));
      break;
    }
    case PendingStep::Copy: {
      art::BufferRef source = bufferRef(step.bindings[0].buffer);
      art::BufferRef destination = bufferRef(step.bindings[1].buffer);
      auto copy =
          art::CreateCopy(fbb, art::CreateBinding(fbb, &source, tensorType(fbb, step.bindings[0].type)),
                          art::CreateBinding(fbb, &destination,
                                             tensorType(fbb, step.bindings[1].type)));
      steps.push_back(art::CreateStep(fbb, art::StepKind::Copy, copy.Union()));
      break;
    }
    }
  }
  auto program = art::CreateProgram(fbb, fbb.CreateVector(steps), plan_.arenaSize,
                                    plan_.naiveSize, kAlignment);

  std::vector<fb::Offset<art::CodeObject>> codeObjects;
  for (const CodeObjectImage &image : kernels_.codeObjects) {
    std::vector<fb::Offset<fb::String>> symbols;
    for (const std::string &symbol : image.kernels)
      symbols.push_back(fbb.CreateString(symbol));
    auto data = fbb.CreateVector(reinterpret_cast<const uint8_t *>(image.data.data()),
                                 image.data.size());
    codeObjects.push_back(art::CreateCodeObject(fbb, fbb.CreateString(image.target),
                                                static_cast<art::CodeFormat>(image.format), data,
                                                fbb.CreateVector(symbols)));
  }

  auto signature = [&](bool outputs) {
    std::vector<fb::Offset<art::TensorSignature>> result;
    auto names = outputs ? entry_.getAllResultAttrs() : entry_.getAllArgAttrs();
    TypeRange types = outputs ? entry_.getResultTypes() : entry_.getArgumentTypes();
    const std::vector<Type> &declared = outputs ? info.outputTypes : info.inputTypes;
    if (declared.size() == types.size())
      types = TypeRange(declared);
    for (auto [i, type] : llvm::enumerate(types)) {
      std::string name = (outputs ? "output_" : "input_") + std::to_string(i);
      if (names && i < names.size())
        if (auto dict = dyn_cast_or_null<DictionaryAttr>(names[i]))
          if (auto attr = dict.getAs<StringAttr>("kiln.name"))
            name = attr.getValue().str();
      auto tensor = cast<RankedTensorType>(type);
      std::vector<fb::Offset<fb::String>> symbols;
      if (auto dict = names && i < names.size() ? dyn_cast_or_null<DictionaryAttr>(names[i])
                                                : DictionaryAttr())
        if (auto array = dict.getAs<ArrayAttr>("kiln.dim_symbols"))
          for (Attribute symbol : array)
            symbols.push_back(fbb.CreateString(cast<StringAttr>(symbol).getValue().str()));
      result.push_back(art::CreateTensorSignature(fbb, fbb.CreateString(name),
                                                  tensorType(fbb, tensor),
                                                  symbols.empty() ? 0 : fbb.CreateVector(symbols)));
    }
    return fbb.CreateVector(result);
  };
  auto inputs = signature(false);
  auto outputs = signature(true);

  fbb.ForceVectorAlignment(constants_.size(), 1, kAlignment);
  auto constants =
      fbb.CreateVector(reinterpret_cast<const uint8_t *>(constants_.data()), constants_.size());
  auto artifact = art::CreateArtifact(
      fbb, KILN_ARTIFACT_FORMAT_VERSION, fbb.CreateString(info.producer),
      fbb.CreateString(info.device), fbb.CreateString(info.source), inputs, outputs, constants,
      fbb.CreateVector(codeObjects), program);
  art::FinishArtifactBuffer(fbb, artifact);
  return std::string(reinterpret_cast<const char *>(fbb.GetBufferPointer()), fbb.GetSize());
}

void ProgramBuilder::report(llvm::raw_ostream &os) const {
  os << "program: " << steps_.size() << " steps\n";
  for (auto [i, step] : llvm::enumerate(steps_)) {
    os << llvm::format("  %3zu ", i);
    switch (step.kind) {
    case PendingStep::Dispatch:
      if (!step.kernel->cudaLaunches.empty()) {
        os << "kernel  " << step.name << " (" << step.kernel->cudaLaunches.size()
           << (step.kernel->cudaLaunches.size() == 1 ? " launch" : " launches");
        for (const KernelTable::CudaLaunch &launch : step.kernel->cudaLaunches)
          os << ", " << launch.workItems << " items";
        os << "): " << step.description << "\n";
        break;
      }
      os << "kernel  " << step.name << " x" << step.kernel->workgroupCount << ": "
         << step.description << "\n";
      break;
    case PendingStep::Library:
      os << "library " << step.name << ": " << step.description << "\n";
      break;
    case PendingStep::Copy:
      os << "copy    " << step.description << "\n";
      break;
    }
  }
  os << "memory plan: arena " << plan_.arenaSize << " bytes (without reuse "
     << plan_.naiveSize << "), constants " << constants_.size() << " bytes\n";
}

} // namespace

FailureOr<std::string> writeArtifact(func::FuncOp entry, const KernelTable &kernels,
                                     const ArtifactInfo &info, llvm::raw_ostream *report) {
  ProgramBuilder builder(entry, kernels);
  if (failed(builder.build()))
    return failure();
  if (report)
    builder.report(*report);
  return builder.serialize(info);
}

} // namespace kiln
