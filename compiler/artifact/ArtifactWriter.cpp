//===- ArtifactWriter.cpp - Translating the program into a .kiln artifact -----===//

#include "compiler/artifact/ArtifactWriter.h"

#include "compiler/codegen/Passes.h"
#include "compiler/program/StepOrder.h"
#include "compiler/program/SymbolicShapes.h"

#include "contract/artifact_generated.h"
#include "kiln/artifact_format.h"
#include "kiln/runtime.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MathExtras.h"

#include <cstring>

namespace kiln {

using namespace mlir;
namespace fb = flatbuffers;
namespace art = kiln::artifact;

static_assert(static_cast<int>(program::CodeFormat::elf) ==
                  static_cast<int>(art::CodeFormat::ElfSharedObject) &&
              static_cast<int>(program::CodeFormat::cubin) ==
                  static_cast<int>(art::CodeFormat::Cubin) &&
              static_cast<int>(program::CodeFormat::ptx) == static_cast<int>(art::CodeFormat::Ptx),
              "program.binary formats are artifact.fbs's CodeFormat values");

namespace {

/// Constants are laid out in the artifact at this alignment.
constexpr uint64_t kConstantAlignment = 64;

/// Where the program's constants go in the artifact: in program order, each at an offset aligned
/// to kConstantAlignment.
struct ConstantLayout {
  SmallVector<std::pair<program::ConstantOp, uint64_t>> offsets;
  uint64_t size = 0;
};

ConstantLayout layOutConstants(program::ProgramOp program) {
  ConstantLayout layout;
  for (auto op : program.getBody().front().getOps<program::ConstantOp>()) {
    uint64_t offset = llvm::alignTo(layout.size, kConstantAlignment);
    layout.offsets.push_back({op, offset});
    layout.size = offset + program::bufferBytes(op.getType());
  }
  return layout;
}

/// The runtime's element type (kiln_element_type_t, the one numbering the artifact and the C API
/// share) of an MLIR element type, or 0 for one the runtime has no type for.
int elementTypeCode(Type type) {
  if (type.isF32())
    return KILN_ELEMENT_TYPE_F32;
  if (type.isF16())
    return KILN_ELEMENT_TYPE_F16;
  if (type.isBF16())
    return KILN_ELEMENT_TYPE_BF16;
  if (isa<Float8E4M3FNType>(type))
    return KILN_ELEMENT_TYPE_F8E4M3FN;
  if (isa<Float8E5M2Type>(type))
    return KILN_ELEMENT_TYPE_F8E5M2;
  if (isa<Float8E4M3FNUZType>(type))
    return KILN_ELEMENT_TYPE_F8E4M3FNUZ;
  if (isa<Float8E5M2FNUZType>(type))
    return KILN_ELEMENT_TYPE_F8E5M2FNUZ;
  if (type.isF64())
    return KILN_ELEMENT_TYPE_F64;
  auto integer = dyn_cast<IntegerType>(type);
  if (!integer)
    return 0;
  if (integer.getWidth() == 1)
    return KILN_ELEMENT_TYPE_BOOL;
  if (integer.isUnsigned()) {
    switch (integer.getWidth()) {
    case 64:
      return KILN_ELEMENT_TYPE_U64;
    case 32:
      return KILN_ELEMENT_TYPE_U32;
    case 16:
      return KILN_ELEMENT_TYPE_U16;
    case 8:
      return KILN_ELEMENT_TYPE_U8;
    default:
      return 0;
    }
  }
  switch (integer.getWidth()) {
  case 64:
    return KILN_ELEMENT_TYPE_I64;
  case 32:
    return KILN_ELEMENT_TYPE_I32;
  case 16:
    return KILN_ELEMENT_TYPE_I16;
  case 8:
    return KILN_ELEMENT_TYPE_I8;
  default:
    return 0;
  }
}

class Translator {
public:
  Translator(program::ProgramOp program, const ArtifactInfo &info)
      : program_(program), info_(info), fbb_(initialSize(program)) {}

  /// The table's size, about: the builder never grows (growing copies it). The constants are
  /// not in it.
  static size_t initialSize(program::ProgramOp program) {
    size_t size = 1 << 20;
    if (auto module = program->getParentOfType<ModuleOp>())
      module.walk([&](program::BinaryOp binary) { size += binary.getData().size() + 64; });
    return size;
  }

  /// Writes the artifact to `os`: the table, then the constants section, streamed from the
  /// module's constants without another copy of them.
  LogicalResult run(llvm::raw_ostream &os);

private:
  LogicalResult addConstants();
  void writeConstants(llvm::raw_ostream &os, uint64_t written);
  FailureOr<art::BufferRef> bufferRef(Value value, Operation *user);
  FailureOr<fb::Offset<fb::Vector<fb::Offset<art::Binding>>>> bindings(ValueRange values,
                                                                         Operation *user);
  /// `type` as the artifact writes it, with the run's dimensions where `buffer` (a program
  /// buffer) has dynamic ones (kiln.dims on the op defining it).
  fb::Offset<art::TensorType> tensorType(ShapedType type, Value buffer = nullptr) {
    std::vector<int64_t> dims(type.getShape().begin(), type.getShape().end());
    AffineMapAttr shape;
    if (buffer)
      if (Operation *definer = buffer.getDefiningOp())
        shape = definer->getAttrOfType<AffineMapAttr>(kDimsAttr);
    std::vector<fb::Offset<art::DimExpr>> dynamicDims;
    if (shape && shape.getValue().getNumResults() == dims.size())
      for (AffineExpr expr : shape.getValue().getResults()) {
        std::vector<int64_t> code;
        if (!isa<AffineConstantExpr>(expr))
          encodeDim(expr, code);
        dynamicDims.push_back(art::CreateDimExprDirect(fbb_, &code));
      }
    return art::CreateTensorTypeDirect(fbb_, elementTypeCode(type.getElementType()), &dims,
                                       dynamicDims.empty() ? nullptr : &dynamicDims);
  }
  /// `expr` in the postfix code of artifact.fbs's DimExpr.
  static void encodeDim(AffineExpr expr, std::vector<int64_t> &code) {
    if (auto constant = dyn_cast<AffineConstantExpr>(expr)) {
      code.insert(code.end(), {KILN_DIM_CONSTANT, constant.getValue()});
      return;
    }
    if (auto symbol = dyn_cast<AffineSymbolExpr>(expr)) {
      code.insert(code.end(), {KILN_DIM_SYMBOL, static_cast<int64_t>(symbol.getPosition())});
      return;
    }
    auto binary = cast<AffineBinaryOpExpr>(expr);
    encodeDim(binary.getLHS(), code);
    encodeDim(binary.getRHS(), code);
    switch (binary.getKind()) {
    case AffineExprKind::Add:
      code.push_back(KILN_DIM_ADD);
      break;
    case AffineExprKind::Mul:
      code.push_back(KILN_DIM_MUL);
      break;
    case AffineExprKind::FloorDiv:
      code.push_back(KILN_DIM_FLOOR_DIV);
      break;
    case AffineExprKind::CeilDiv:
      code.push_back(KILN_DIM_CEIL_DIV);
      break;
    default:
      code.push_back(KILN_DIM_MOD);
      break;
    }
  }
  fb::Offset<fb::Vector<fb::Offset<art::Symbol>>> symbols() {
    std::vector<fb::Offset<art::Symbol>> result;
    for (const DimSymbol &symbol :
         symbolsFromAttr(program_->getAttrOfType<ArrayAttr>(kSymbolsAttr)))
      result.push_back(
          art::CreateSymbolDirect(fbb_, symbol.name.c_str(), static_cast<uint32_t>(symbol.input),
                                  static_cast<uint32_t>(symbol.dim), symbol.min, symbol.max));
    return result.empty() ? 0 : fbb_.CreateVector(result);
  }
  FailureOr<unsigned> codeObjectOf(program::ExecutableOp executable);
  LogicalResult addDispatch(program::DispatchOp op);
  LogicalResult addLibraryCall(program::LibraryCallOp op);
  fb::Offset<fb::Vector<fb::Offset<art::TensorSignature>>> signature(bool outputs);
  LogicalResult planWaits();
  /// Appends an artifact step for the program step being translated, with its stream and waits.
  void addStep(art::StepKind kind, fb::Offset<void> step);
  /// An allocation of a program planned per run as an ArenaValue (kiln-plan-memory gave it its
  /// slot).
  FailureOr<fb::Offset<art::ArenaValue>> arenaValue(program::AllocOp alloc);
  /// The slots of a program planned per run, with their live artifact steps.
  std::vector<art::ArenaSlot> arenaSlots();

  program::ProgramOp program_;
  const ArtifactInfo &info_;
  fb::FlatBufferBuilder fbb_;
  ConstantLayout constants_;
  DenseMap<Operation *, art::BufferRef> roots_;
  unsigned arenaBuffers_ = 0;
  /// A program with a dimension without an upper bound plans its memory per run: its arena
  /// values (artifact.fbs, ArenaValue), in BufferRef index order.
  bool perRunPlan_ = false;
  std::vector<fb::Offset<art::ArenaValue>> arenaValues_;
  /// The first artifact step of each program step (-1 for one that became none).
  std::vector<int64_t> firstArtifactStep_;
  std::vector<fb::Offset<art::Step>> steps_;
  /// Per program step: its stream, the earlier program steps of other streams it waits for,
  /// and the last artifact step it became (a dispatch of several CUDA launches becomes several).
  std::vector<uint32_t> streams_;
  std::vector<std::vector<int64_t>> waits_;
  std::vector<uint32_t> lastArtifactStep_;
  int64_t current_ = -1;
  /// Whether the current program step's waits went with its first artifact step already.
  bool waitsWritten_ = false;
  std::vector<fb::Offset<art::CodeObject>> codeObjects_;
  DenseMap<Operation *, unsigned> firstCodeObject_;
};

/// The bytes of a constant as they are in the module: `raw` holds the whole buffer, or one
/// element repeated (a splat), or one bool per element (i1, stored one byte each).
struct ConstantBytes {
  enum Kind { Raw, Splat, Bits } kind = Raw;
  ArrayRef<char> raw;
};

/// Checks that a constant's data fills exactly its buffer, and where the data is.
FailureOr<ConstantBytes> constantBytes(program::ConstantOp op) {
  MemRefType type = op.getType();
  uint64_t size = program::bufferBytes(type);
  if (auto dense = dyn_cast<DenseElementsAttr>(op.getValue())) {
    if (type.getElementType().isInteger(1))
      return ConstantBytes{ConstantBytes::Bits, {}};
    ArrayRef<char> raw = dense.getRawData();
    if (dense.isSplat())
      return ConstantBytes{ConstantBytes::Splat, raw};
    if (raw.size() != size)
      return op.emitError() << "constant holds " << raw.size() << " bytes, its type needs " << size;
    return ConstantBytes{ConstantBytes::Raw, raw};
  }
  if (auto resource = dyn_cast<DenseResourceElementsAttr>(op.getValue())) {
    AsmResourceBlob *blob = resource.getRawHandle().getBlob();
    if (!blob)
      return op.emitError("constant's resource data is missing");
    ArrayRef<char> data = blob->getData();
    if (data.size() != size)
      return op.emitError() << "constant holds " << data.size() << " bytes, its type needs "
                            << size;
    return ConstantBytes{ConstantBytes::Raw, data};
  }
  return op.emitError("constant is neither dense data nor a resource");
}

/// Writes `count` zero bytes.
void writeZeros(llvm::raw_ostream &os, uint64_t count) {
  static const char zeros[4096] = {};
  for (; count > sizeof(zeros); count -= sizeof(zeros))
    os.write(zeros, sizeof(zeros));
  os.write(zeros, count);
}

/// Writes a constant that constantBytes accepted: exactly its buffer's bytes.
void streamConstant(program::ConstantOp op, llvm::raw_ostream &os) {
  ConstantBytes bytes = *constantBytes(op);
  MemRefType type = op.getType();
  switch (bytes.kind) {
  case ConstantBytes::Raw:
    os.write(bytes.raw.data(), bytes.raw.size());
    return;
  case ConstantBytes::Bits:
    for (bool bit : cast<DenseElementsAttr>(op.getValue()).getValues<bool>())
      os << static_cast<char>(bit ? 1 : 0);
    return;
  case ConstantBytes::Splat: {
    // One element repeated, a block at a time.
    uint64_t width = llvm::divideCeil(type.getElementType().getIntOrFloatBitWidth(), 8);
    std::vector<char> block(width * 1024);
    for (size_t i = 0; i < block.size(); i += width)
      std::memcpy(block.data() + i, bytes.raw.data(), width);
    uint64_t left = program::bufferBytes(type);
    for (; left > block.size(); left -= block.size())
      os.write(block.data(), block.size());
    os.write(block.data(), left);
    return;
  }
  }
}

/// Lays the constants out at aligned offsets of the constants section and checks their data;
/// writeConstants streams them once the table is written.
LogicalResult Translator::addConstants() {
  constants_ = layOutConstants(program_);
  for (auto [op, offset] : constants_.offsets) {
    if (!elementTypeCode(op.getType().getElementType()))
      return op.emitError() << "constant of type " << op.getType()
                            << " cannot be stored in the artifact";
    if (failed(constantBytes(op)))
      return failure();
    roots_[op] = art::BufferRef(art::BufferKind::Constant, 0, offset,
                                program::bufferBytes(op.getType()));
  }
  return success();
}

/// Writes the constants section after the `written` bytes of the table, with the padding the
/// layout asks for.
void Translator::writeConstants(llvm::raw_ostream &os, uint64_t written) {
  if (constants_.size == 0)
    return;
  uint64_t section = llvm::alignTo(written, kConstantAlignment);
  writeZeros(os, section - written);
  uint64_t at = 0;
  for (auto [op, offset] : constants_.offsets) {
    writeZeros(os, offset - at);
    streamConstant(op, os);
    at = offset + program::bufferBytes(op.getType());
  }
  // The section ends where its size says (another device's artifact may follow it).
  if (at < constants_.size)
    writeZeros(os, constants_.size - at);
}

FailureOr<art::BufferRef> Translator::bufferRef(Value value, Operation *user) {
  Operation *root = program::rootBuffer(value).getDefiningOp();
  auto it = roots_.find(root);
  if (it == roots_.end())
    return user->emitError() << "binds a buffer that is not an input, output, constant or "
                                "allocation of the program";
  // A view into part of its root's bytes (a contiguous slice) names just those bytes.
  uint64_t offset = program::viewByteOffset(value);
  uint64_t bytes = program::bufferBytes(cast<MemRefType>(value.getType()));
  // Planned per run, a value whose size varies is seen from its start only (an offset into it
  // would be the nominal shape's).
  if (perRunPlan_ && offset != 0 && root->hasAttr(kDimsAttr))
    return user->emitError() << "binds a view at byte " << offset
                             << " of a buffer whose size varies from run to run";
  if (offset == 0 && bytes == it->second.size())
    return it->second;
  return art::BufferRef(it->second.kind(), it->second.index(), it->second.offset() + offset, bytes);
}

FailureOr<fb::Offset<fb::Vector<fb::Offset<art::Binding>>>>
Translator::bindings(ValueRange values, Operation *user) {
  std::vector<fb::Offset<art::Binding>> result;
  for (Value value : values) {
    FailureOr<art::BufferRef> ref = bufferRef(value, user);
    if (failed(ref))
      return failure();
    result.push_back(
        art::CreateBinding(fbb_, &*ref, tensorType(cast<MemRefType>(value.getType()), value)));
  }
  return fbb_.CreateVector(result);
}

/// The artifact's code objects are every binary of every executable, in module order; returns
/// the index of the executable's first one.
FailureOr<unsigned> Translator::codeObjectOf(program::ExecutableOp executable) {
  auto it = firstCodeObject_.find(executable);
  if (it != firstCodeObject_.end())
    return it->second;
  unsigned first = codeObjects_.size();
  for (auto binary : executable.getBody().front().getOps<program::BinaryOp>()) {
    std::vector<fb::Offset<fb::String>> symbols;
    for (Attribute symbol : binary.getSymbols())
      symbols.push_back(fbb_.CreateString(cast<StringAttr>(symbol).getValue().str()));
    StringRef data = binary.getData();
    auto bytes = fbb_.CreateVector(reinterpret_cast<const uint8_t *>(data.data()), data.size());
    codeObjects_.push_back(art::CreateCodeObject(
        fbb_, fbb_.CreateString(binary.getTarget().str()),
        static_cast<art::CodeFormat>(binary.getFormat()), bytes, fbb_.CreateVector(symbols)));
  }
  if (codeObjects_.size() == first)
    return executable.emitError("has no code object");
  firstCodeObject_[executable] = first;
  return first;
}

LogicalResult Translator::addDispatch(program::DispatchOp op) {
  auto kernel = SymbolTable::lookupNearestSymbolFrom<program::KernelOp>(op, op.getKernelAttr());
  if (!kernel)
    return op.emitError() << "dispatches " << op.getKernel() << ", which was not compiled";
  auto executable = cast<program::ExecutableOp>(kernel->getParentOp());
  FailureOr<unsigned> codeObject = codeObjectOf(executable);
  if (failed(codeObject))
    return failure();
  ArrayAttr symbols =
      (*executable.getBody().front().getOps<program::BinaryOp>().begin()).getSymbols();
  auto symbolIndex = [&](StringRef name) -> unsigned {
    return llvm::find(symbols, StringAttr::get(op.getContext(), name)) - symbols.begin();
  };
  std::string text = op.getDescription().value_or(kernel.getSymName()).str();
  auto bound = bindings(op->getOperands(), op);
  if (failed(bound))
    return failure();
  auto description = fbb_.CreateString(text);
  if (auto launches = kernel.getLaunches()) {
    // One step per kernel launch; on one stream they run in order, sharing the dispatch's
    // bindings and description in the file.
    for (Attribute attr : *launches) {
      auto launch = cast<program::CudaLaunchAttr>(attr);
      // A launch sized by the run (run_items) is sized again by the runtime for each run.
      uint64_t blocks =
          std::max<uint64_t>(llvm::divideCeil(launch.getItems(), launch.getBlock()), 1);
      std::vector<uint32_t> count{static_cast<uint32_t>(std::min<uint64_t>(blocks, UINT32_MAX)),
                                  1, 1};
      fb::Offset<fb::Vector<int64_t>> runItems;
      if (AffineMapAttr items = launch.getRunItems()) {
        std::vector<int64_t> code;
        encodeDim(items.getValue().getResult(0), code);
        runItems = fbb_.CreateVector(code);
      }
      auto cuda = art::CreateCudaLaunch(fbb_, launch.getBlock(), launch.getItems(), runItems);
      auto dispatch = art::CreateDispatch(fbb_, *codeObject, symbolIndex(launch.getKernel()),
                                          fbb_.CreateVector(count), *bound, description, cuda);
      addStep(art::StepKind::Dispatch, dispatch.Union());
    }
    return success();
  }
  std::vector<uint32_t> count{static_cast<uint32_t>(*kernel.getWorkgroups()), 1, 1};
  fb::Offset<fb::Vector<int64_t>> workgroupDims;
  if (auto dims = kernel->getAttrOfType<DenseI64ArrayAttr>(kWorkgroupDimsAttr))
    workgroupDims = fbb_.CreateVector(dims.asArrayRef().data(), dims.size());
  auto dispatch =
      art::CreateDispatch(fbb_, *codeObject, symbolIndex(*kernel.getSymbol()),
                          fbb_.CreateVector(count), *bound, description, 0, workgroupDims);
  addStep(art::StepKind::Dispatch, dispatch.Union());
  return success();
}

LogicalResult Translator::addLibraryCall(program::LibraryCallOp op) {
  std::vector<fb::Offset<art::IntParam>> ints;
  std::vector<fb::Offset<art::FloatParam>> floats;
  std::vector<fb::Offset<art::StringParam>> strings;
  // The verifier checked each parameter's kind against the entry point.
  for (NamedAttribute param : op.getParams()) {
    std::string key = param.getName().str();
    Attribute value = param.getValue();
    if (auto array = dyn_cast<DenseI64ArrayAttr>(value)) {
      std::vector<int64_t> values(array.asArrayRef().begin(), array.asArrayRef().end());
      ints.push_back(art::CreateIntParamDirect(fbb_, key.c_str(), &values));
    } else if (auto boolean = dyn_cast<BoolAttr>(value)) {
      std::vector<int64_t> values{boolean.getValue()};
      ints.push_back(art::CreateIntParamDirect(fbb_, key.c_str(), &values));
    } else if (auto integer = dyn_cast<IntegerAttr>(value)) {
      std::vector<int64_t> values{integer.getInt()};
      ints.push_back(art::CreateIntParamDirect(fbb_, key.c_str(), &values));
    } else if (auto array = dyn_cast<DenseF32ArrayAttr>(value)) {
      std::vector<float> values(array.asArrayRef().begin(), array.asArrayRef().end());
      floats.push_back(art::CreateFloatParamDirect(fbb_, key.c_str(), &values));
    } else if (auto array = dyn_cast<ArrayAttr>(value)) {
      std::vector<fb::Offset<fb::String>> texts;
      for (Attribute text : array)
        texts.push_back(fbb_.CreateString(cast<StringAttr>(text).getValue().str()));
      strings.push_back(
          art::CreateStringParam(fbb_, fbb_.CreateString(key), fbb_.CreateVector(texts)));
    } else {
      return op.emitError() << "parameter '" << key << "' has no encoding in the artifact";
    }
  }
  auto bound = bindings(op->getOperands(), op);
  if (failed(bound))
    return failure();
  auto call = art::CreateLibraryCall(
      fbb_, fbb_.CreateString(op.getCallee().str()), *bound, fbb_.CreateVector(ints),
      fbb_.CreateVector(floats), fbb_.CreateVector(strings),
      fbb_.CreateString(op.getDescription().value_or(op.getCallee()).str()));
  addStep(art::StepKind::LibraryCall, call.Union());
  return success();
}

fb::Offset<fb::Vector<fb::Offset<art::TensorSignature>>> Translator::signature(bool outputs) {
  SmallVector<Operation *> ops;
  for (Operation &op : program_.getBody().front())
    if (outputs ? isa<program::OutputOp>(op) : isa<program::InputOp>(op))
      ops.push_back(&op);
  auto indexOf = [](Operation *op) {
    return cast<IntegerAttr>(op->getAttr("index")).getInt();
  };
  llvm::sort(ops, [&](Operation *a, Operation *b) { return indexOf(a) < indexOf(b); });
  std::vector<fb::Offset<art::TensorSignature>> result;
  for (Operation *op : ops) {
    auto memref = cast<MemRefType>(op->getResult(0).getType());
    ShapedType type = memref;
    if (auto declared = op->getAttrOfType<TypeAttr>("declared_type"))
      type = cast<ShapedType>(declared.getValue());
    std::vector<fb::Offset<fb::String>> symbols;
    if (auto names = op->getAttrOfType<ArrayAttr>("dim_symbols"))
      for (Attribute symbol : names)
        symbols.push_back(fbb_.CreateString(cast<StringAttr>(symbol).getValue().str()));
    auto name = op->getAttrOfType<StringAttr>("name").getValue().str();
    fb::Offset<fb::String> check;
    if (auto message = op->getAttrOfType<StringAttr>("check"))
      check = fbb_.CreateString(message.getValue().str());
    result.push_back(art::CreateTensorSignature(
        fbb_, fbb_.CreateString(name), tensorType(type, op->getResult(0)),
        symbols.empty() ? 0 : fbb_.CreateVector(symbols), check));
  }
  return fbb_.CreateVector(result);
}

LogicalResult Translator::planWaits() {
  // A step waits for its data predecessors on other streams, unless an earlier wait of its
  // stream already covers one: what each step's completion implies about every stream (the
  // latest step known finished there) is carried along.
  StepOrder order(program_);
  size_t count = order.steps().size();
  int64_t streamCount = program_.getStreamCount().value_or(1);
  streams_.assign(count, 0);
  waits_.assign(count, {});
  lastArtifactStep_.assign(count, 0);
  std::vector<std::vector<int64_t>> known(streamCount, std::vector<int64_t>(streamCount, -1));
  std::vector<std::vector<int64_t>> knownAfter(count);
  for (size_t j = 0; j < count; ++j) {
    int64_t stream = cast<program::StepOpInterface>(order.steps()[j]).getStreamIndex();
    if (stream < 0 || stream >= streamCount)
      return order.steps()[j]->emitError()
             << "runs on stream " << stream << " of a program with " << streamCount << " stream(s)";
    streams_[j] = static_cast<uint32_t>(stream);
    std::vector<int64_t> &mine = known[stream];
    for (int64_t p : order.dataPredecessors(j)) {
      int64_t other = streams_[p];
      if (other == stream || p <= mine[other])
        continue;
      waits_[j].push_back(p);
      for (int64_t s = 0; s < streamCount; ++s)
        mine[s] = std::max(mine[s], knownAfter[p][s]);
    }
    mine[stream] = static_cast<int64_t>(j);
    knownAfter[j] = mine;
  }
  return success();
}

void Translator::addStep(art::StepKind kind, fb::Offset<void> step) {
  uint32_t stream = current_ >= 0 ? streams_[current_] : 0;
  std::vector<uint32_t> waits;
  if (current_ >= 0 && !waitsWritten_)
    for (int64_t p : waits_[current_])
      waits.push_back(lastArtifactStep_[p]);
  waitsWritten_ = true;
  steps_.push_back(
      art::CreateStep(fbb_, kind, step, stream, waits.empty() ? 0 : fbb_.CreateVector(waits)));
  if (current_ >= 0) {
    lastArtifactStep_[current_] = static_cast<uint32_t>(steps_.size() - 1);
    if (firstArtifactStep_[current_] < 0)
      firstArtifactStep_[current_] = static_cast<int64_t>(steps_.size() - 1);
  }
}

FailureOr<fb::Offset<art::ArenaValue>> Translator::arenaValue(program::AllocOp alloc) {
  auto slot = alloc->getAttrOfType<IntegerAttr>(kArenaSlotAttr);
  if (!slot)
    return alloc.emitError("has no arena slot in a program planned per run (run "
                           "kiln-plan-memory before writing it)");
  // The value's bytes for the run: its element size times each dimension (kiln.dims where they
  // vary).
  MemRefType type = alloc.getType();
  std::vector<int64_t> code = {
      KILN_DIM_CONSTANT,
      static_cast<int64_t>(program::bufferBytes(MemRefType::get({1}, type.getElementType())))};
  for (AffineExpr dim : bufferDims(alloc, type)) {
    encodeDim(dim, code);
    code.push_back(KILN_DIM_MUL);
  }
  return art::CreateArenaValue(fbb_, static_cast<uint32_t>(slot.getInt()),
                               art::CreateDimExprDirect(fbb_, &code));
}

std::vector<art::ArenaSlot> Translator::arenaSlots() {
  std::vector<art::ArenaSlot> slots;
  ArrayRef<int64_t> steps = program_->getAttrOfType<DenseI64ArrayAttr>(kSlotStepsAttr);
  const int64_t count = static_cast<int64_t>(firstArtifactStep_.size());
  for (size_t i = 0; i + 1 < steps.size(); i += 2) {
    // The program steps' first and last artifact steps (a step that became none is skipped).
    int64_t first = -1, last = -1;
    for (int64_t p = std::max<int64_t>(steps[i], 0); p < count && first < 0; ++p)
      first = firstArtifactStep_[p];
    for (int64_t p = std::min(steps[i + 1], count - 1); p >= 0 && last < 0; --p)
      if (firstArtifactStep_[p] >= 0)
        last = lastArtifactStep_[p];
    if (first < 0 || last < first) {
      // A slot no artifact step uses: live at step 0 alone.
      first = last = 0;
    }
    slots.emplace_back(static_cast<uint32_t>(first), static_cast<uint32_t>(last));
  }
  return slots;
}

LogicalResult Translator::run(llvm::raw_ostream &os) {
  if (!program_.isPlanned())
    return program_.emitError("has no memory plan (run kiln-plan-memory before writing it)");
  if (failed(addConstants()))
    return failure();
  // Every executable's code objects, in module order, whether or not a step dispatches one of
  // its kernels: the runtime checks them against the device at load time.
  if (auto module = program_->getParentOfType<ModuleOp>())
    for (auto executable : module.getOps<program::ExecutableOp>())
      if (failed(codeObjectOf(executable)))
        return failure();
  if (failed(planWaits()))
    return failure();
  firstArtifactStep_.assign(lastArtifactStep_.size(), -1);
  perRunPlan_ = program_->hasAttr(kSlotStepsAttr);
  for (Operation &op : program_.getBody().front()) {
    if (isa<program::StepOpInterface>(op)) {
      ++current_;
      waitsWritten_ = false;
    }
    LogicalResult result = success();
    if (auto input = dyn_cast<program::InputOp>(op)) {
      roots_[input] = art::BufferRef(art::BufferKind::Input, input.getIndex(), 0,
                                     program::bufferBytes(input.getType()));
    } else if (auto output = dyn_cast<program::OutputOp>(op)) {
      roots_[output] = art::BufferRef(art::BufferKind::Output, output.getIndex(), 0,
                                      program::bufferBytes(output.getType()));
    } else if (auto alloc = dyn_cast<program::AllocOp>(op)) {
      // An arena buffer's index names its value (artifact.fbs), so the runtime can tell values
      // that share a range apart.
      roots_[alloc] = art::BufferRef(art::BufferKind::Arena, arenaBuffers_++,
                                     perRunPlan_ ? 0 : *alloc.getOffset(),
                                     program::bufferBytes(alloc.getType()));
      if (perRunPlan_) {
        FailureOr<fb::Offset<art::ArenaValue>> value = arenaValue(alloc);
        if (failed(value))
          return failure();
        arenaValues_.push_back(*value);
      }
    } else if (auto dispatch = dyn_cast<program::DispatchOp>(op)) {
      result = addDispatch(dispatch);
    } else if (auto call = dyn_cast<program::LibraryCallOp>(op)) {
      result = addLibraryCall(call);
    } else if (auto copy = dyn_cast<program::CopyOp>(op)) {
      FailureOr<art::BufferRef> source = bufferRef(copy.getSource(), copy);
      FailureOr<art::BufferRef> target = bufferRef(copy.getTarget(), copy);
      if (failed(source) || failed(target))
        return failure();
      auto step = art::CreateCopy(
          fbb_,
          art::CreateBinding(fbb_, &*source,
                             tensorType(copy.getSource().getType(), copy.getSource())),
          art::CreateBinding(fbb_, &*target,
                             tensorType(copy.getTarget().getType(), copy.getTarget())));
      addStep(art::StepKind::Copy, step.Union());
    } else if (!isa<program::ViewOp, program::ConstantOp>(op)) {
      return op.emitError() << "'" << op.getName() << "' has no translation into the artifact";
    }
    if (failed(result))
      return failure();
  }
  fb::Offset<fb::Vector<fb::Offset<art::ArenaValue>>> arenaValues;
  fb::Offset<fb::Vector<const art::ArenaSlot *>> arenaSlotsVector;
  if (perRunPlan_) {
    arenaValues = fbb_.CreateVector(arenaValues_);
    arenaSlotsVector = fbb_.CreateVectorOfStructs(arenaSlots());
  }
  auto program = art::CreateProgram(
      fbb_, fbb_.CreateVector(steps_), *program_.getArenaSize(),
      program_.getNaiveSize().value_or(0), program_.getAlignment().value_or(64),
      program_.getPeakLiveSize().value_or(0), program_.getModeledKernelBytes().value_or(0),
      program_.getMemoryLimit().value_or(0), program_.getUnlimitedArenaSize().value_or(0),
      static_cast<uint32_t>(program_.getStreamCount().value_or(1)),
      program_.getSerialArenaSize().value_or(0), arenaValues, arenaSlotsVector);
  auto inputs = signature(false);
  auto outputs = signature(true);
  auto codeObjects = fbb_.CreateVector(codeObjects_);
  auto producer = fbb_.CreateString(info_.producer);
  auto device = fbb_.CreateString(program::stringifyDevice(program_.getDevice()).str());
  auto source = fbb_.CreateString(info_.source);
  auto dimSymbols = symbols();
  flatbuffers::Offset<art::Partition> partition;
  std::vector<art::DeviceArtifactRange> ranges;
  if (!info_.partitionMode.empty()) {
    if (info_.deviceArtifacts)
      for (const std::string &bytes : *info_.deviceArtifacts)
        ranges.emplace_back(/*offset=*/0, bytes.size()); // offsets set once the table is done
    partition =
        art::CreatePartition(fbb_, fbb_.CreateString(info_.partitionMode), info_.devices,
                             info_.rank, ranges.empty() ? 0 : fbb_.CreateVectorOfStructs(ranges));
  }
  // The section's offset is the table's size rounded up, known only once the table is finished:
  // the field is stored even while 0 and set in place afterwards.
  fbb_.ForceDefaults(true);
  auto artifact =
      art::CreateArtifact(fbb_, KILN_ARTIFACT_FORMAT_VERSION, producer, device, source, inputs,
                          outputs, codeObjects, program,
                          /*constants_offset=*/0, constants_.size, partition, dimSymbols);
  fbb_.ForceDefaults(false);
  art::FinishArtifactBuffer(fbb_, artifact);
  uint64_t tableSize = fbb_.GetSize();
  art::Artifact *written = art::GetMutableArtifact(fbb_.GetBufferPointer());
  if (constants_.size != 0 &&
      !written->mutate_constants_offset(llvm::alignTo(tableSize, kConstantAlignment)))
    return program_.emitError("the artifact's constants offset could not be recorded");
  // The other devices' artifacts follow the constants, each at a 64-byte aligned offset.
  const uint64_t constantsEnd = constants_.size != 0
                                    ? llvm::alignTo(tableSize, kConstantAlignment) + constants_.size
                                    : tableSize;
  uint64_t end = constantsEnd;
  std::vector<uint64_t> offsets;
  for (const art::DeviceArtifactRange &range : ranges) {
    offsets.push_back(llvm::alignTo(end, kConstantAlignment));
    end = offsets.back() + range.size();
  }
  if (!ranges.empty()) {
    auto *stored = written->mutable_partition()->mutable_device_artifacts();
    for (size_t i = 0; i < offsets.size(); ++i)
      stored->GetMutableObject(i)->mutate_offset(offsets[i]);
  }
  os.write(reinterpret_cast<const char *>(fbb_.GetBufferPointer()), tableSize);
  writeConstants(os, tableSize);
  uint64_t position = constantsEnd;
  for (size_t i = 0; i < offsets.size(); ++i) {
    writeZeros(os, offsets[i] - position);
    const std::string &bytes = (*info_.deviceArtifacts)[i];
    os.write(bytes.data(), bytes.size());
    position = offsets[i] + bytes.size();
  }
  return success();
}

} // namespace

FailureOr<program::ProgramOp> findProgram(ModuleOp module) {
  auto programs = module.getOps<program::ProgramOp>();
  if (programs.empty())
    return module.emitError("the module has no program.program");
  if (std::next(programs.begin()) != programs.end())
    return module.emitError("the module has several programs; an artifact holds one");
  return *programs.begin();
}

LogicalResult writeArtifact(ModuleOp module, const ArtifactInfo &info, llvm::raw_ostream &os) {
  FailureOr<program::ProgramOp> program = findProgram(module);
  if (failed(program))
    return failure();
  return Translator(*program, info).run(os);
}

FailureOr<std::string> writeArtifact(ModuleOp module, const ArtifactInfo &info) {
  std::string bytes;
  llvm::raw_string_ostream os(bytes);
  if (failed(writeArtifact(module, info, os)))
    return failure();
  os.flush();
  return bytes;
}

void printProgramReport(program::ProgramOp program, llvm::raw_ostream &os) {
  SmallVector<Operation *> steps;
  for (Operation &op : program.getBody().front())
    if (isa<program::StepOpInterface>(op))
      steps.push_back(&op);
  os << "program: " << steps.size() << " steps\n";
  bool streams = program.getStreamCount().value_or(1) > 1;
  for (auto [i, op] : llvm::enumerate(steps)) {
    os << llvm::format("  %3zu ", i);
    if (streams)
      os << "[stream " << cast<program::StepOpInterface>(op).getStreamIndex() << "] ";
    if (auto dispatch = dyn_cast<program::DispatchOp>(op)) {
      auto kernel =
          SymbolTable::lookupNearestSymbolFrom<program::KernelOp>(op, dispatch.getKernelAttr());
      StringRef name = dispatch.getKernel().getLeafReference().getValue();
      StringRef description = dispatch.getDescription().value_or(name);
      if (kernel && kernel.getLaunches()) {
        ArrayAttr launches = *kernel.getLaunches();
        os << "kernel  " << name << " (" << launches.size()
           << (launches.size() == 1 ? " launch" : " launches");
        for (Attribute attr : launches) {
          auto launch = cast<program::CudaLaunchAttr>(attr);
          if (AffineMapAttr items = launch.getRunItems())
            os << ", " << items.getValue().getResult(0) << " items of the run";
          else
            os << ", " << launch.getItems() << " items";
        }
        os << "): " << description << "\n";
      } else {
        os << "kernel  " << name << " x";
        // A grid known at run time: the product of ceil(binding dimension / tile).
        if (auto grid = kernel ? kernel->getAttrOfType<DenseI64ArrayAttr>(kWorkgroupDimsAttr)
                               : DenseI64ArrayAttr()) {
          for (int64_t i = 0; i + 2 < grid.size(); i += 3) {
            os << (i ? "*" : "(");
            if (grid[i] < 0)
              os << llvm::divideCeil(grid[i + 1], grid[i + 2]);
            else
              os << "ceil(b" << grid[i] << ".d" << grid[i + 1] << "/" << grid[i + 2] << ")";
          }
          os << ")";
        } else {
          os << (kernel ? *kernel.getWorkgroups() : 0);
        }
        os << ": " << description << "\n";
      }
    } else if (auto call = dyn_cast<program::LibraryCallOp>(op)) {
      os << "library " << call.getCallee() << ": "
         << call.getDescription().value_or(call.getCallee()) << "\n";
    } else if (auto copy = dyn_cast<program::CopyOp>(op)) {
      os << "copy    " << copy.getDescription().value_or("") << "\n";
    }
  }
  uint64_t constants = layOutConstants(program).size;
  uint64_t arena = program.getArenaSize().value_or(0);
  uint64_t bound = program.getPeakLiveSize().value_or(0);
  SmallVector<DimSymbol> symbols = symbolsFromAttr(program->getAttrOfType<ArrayAttr>(kSymbolsAttr));
  auto smallest = program->getAttrOfType<IntegerAttr>(kSmallestArenaAttr);
  if (auto slots = program->getAttrOfType<DenseI64ArrayAttr>(kSlotStepsAttr)) {
    // The runtime packs the slots for each shape.
    os << "memory plan: per run, " << slots.size() / 2
       << " slots packed for each shape a run brings";
    if (plannedPerRun(symbols)) {
      os << " (";
      llvm::interleaveComma(
          llvm::make_filter_range(symbols, [](const DimSymbol &symbol) { return symbol.open; }), os,
          [&](const DimSymbol &symbol) {
            os << symbol.name;
            if (symbol.bounded())
              os << " (the model bounds it at " << symbol.max << ")";
          });
      os << " given without an upper bound); at the nominal shape (such a dimension at "
         << kNominalUnboundedDim << "):\n";
    } else {
      os << " (the smallest shape takes " << (smallest ? smallest.getInt() : 0)
         << " bytes; --memory-plan bounds plans once for the upper bounds); at the upper "
            "bounds:\n";
    }
  } else if (smallest) {
    os << "memory plan: for the upper bounds (per run, the smallest shape would take "
       << smallest.getInt() << " bytes: --memory-plan per-run):\n";
  }
  os << "memory plan: arena " << arena << " bytes (lower bound " << bound;
  if (bound)
    os << llvm::format(", %.3fx", double(arena) / double(bound));
  os << "; without reuse " << program.getNaiveSize().value_or(0) << "), constants " << constants
     << " bytes\n";
  if (auto limit = program.getMemoryLimit()) {
    unsigned recomputed = 0;
    for (Operation *op : steps)
      recomputed += op->hasAttr("recomputed");
    os << "memory limit: " << *limit << " bytes; without it the arena is "
       << program.getUnlimitedArenaSize().value_or(0) << " bytes; " << recomputed
       << (recomputed == 1 ? " step recomputes a value" : " steps recompute values") << "\n";
  }
  if (auto count = program.getStreamCount(); count && *count > 1)
    os << "streams: " << *count << "; on one stream the arena would be "
       << program.getSerialArenaSize().value_or(0) << " bytes\n";
}

} // namespace kiln
