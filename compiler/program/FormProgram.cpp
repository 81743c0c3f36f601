//===- FormProgram.cpp - The entry function as a program over buffers --------===//

#include "compiler/codegen/Passes.h"
#include "dialects/kiln/KilnAttributes.h"

#include "compiler/fusion/Passes.h"
#include "compiler/program/Passes.h"
#include "compiler/program/SymbolicShapes.h"
#include "contract/library_calls.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/ScopeExit.h"

namespace kiln {

#define GEN_PASS_DEF_FORMPROGRAMPASS
#include "compiler/program/Passes.h.inc"

using namespace mlir;

namespace {

MemRefType bufferType(RankedTensorType type) {
  return MemRefType::get(type.getShape(), type.getElementType());
}

/// The (input, output) pairs of a dispatch function that is one elementwise linalg.generic: an
/// argument read only at the element being written, by identity indexing maps, and an output
/// of the same shape and element width that starts from an empty tensor.
SmallVector<int64_t> inPlacePairs(func::FuncOp function) {
  Block &body = function.getBody().front();
  linalg::GenericOp generic;
  for (Operation &op : body) {
    if (auto candidate = dyn_cast<linalg::GenericOp>(op)) {
      if (generic)
        return {};
      generic = candidate;
    } else if (!isa<arith::ConstantOp, tensor::EmptyOp, func::ReturnOp>(op)) {
      return {};
    }
  }
  if (!generic || generic.getNumLoops() != generic.getNumParallelLoops() ||
      body.getTerminator()->getOperands() != ValueRange(generic.getResults()))
    return {};
  SmallVector<int64_t> pairs;
  for (auto [o, init] : llvm::enumerate(generic.getDpsInitsMutable())) {
    if (!generic.getMatchingIndexingMap(&init).isIdentity() ||
        !init.get().getDefiningOp<tensor::EmptyOp>() || generic.payloadUsesValueFromOperand(&init))
      continue;
    auto result = cast<RankedTensorType>(generic.getResult(o).getType());
    for (BlockArgument argument : function.getArguments()) {
      auto type = dyn_cast<RankedTensorType>(argument.getType());
      if (!type || type.getShape() != result.getShape() ||
          !type.getElementType().isIntOrFloat() || !result.getElementType().isIntOrFloat() ||
          type.getElementType().getIntOrFloatBitWidth() !=
              result.getElementType().getIntOrFloatBitWidth() ||
          argument.use_empty())
        continue;
      bool elementwise = llvm::all_of(argument.getUses(), [&](OpOperand &use) {
        return use.getOwner() == generic.getOperation() && generic.isDpsInput(&use) &&
               generic.getMatchingIndexingMap(&use).isIdentity();
      });
      if (elementwise)
        pairs.append({static_cast<int64_t>(argument.getArgNumber()), static_cast<int64_t>(o)});
    }
  }
  return pairs;
}

class ProgramFormer {
public:
  ProgramFormer(ModuleOp module, func::FuncOp entry, ModuleOp kernels, program::Device device)
      : module_(module), entry_(entry), kernels_(kernels), device_(device),
        builder_(module.getContext()) {}

  LogicalResult run();

private:
  FailureOr<Value> lookup(Value value, Operation *user) {
    auto it = buffers_.find(value);
    if (it != buffers_.end())
      return it->second;
    return user->emitError() << "operand of type " << value.getType()
                             << " has no buffer in the program (its producer was not compiled)";
  }
  /// The buffer type of host value `value`: its own type where static; otherwise the type at
  /// the symbols' upper bounds, with the run's dimensions put on `definer` (kiln.dims) once it
  /// exists. A null type for what no buffer holds (not a ranked tensor, or dynamic without
  /// ranges).
  FailureOr<MemRefType> bufferTypeOf(Value value);
  void setDims(Value value, Operation *definer);
  LogicalResult addCall(func::CallOp call);
  LogicalResult addReturn(func::ReturnOp op);
  std::string describe(func::CallOp call, func::FuncOp callee);

  ModuleOp module_;
  func::FuncOp entry_;
  ModuleOp kernels_;
  program::Device device_;
  OpBuilder builder_;
  program::ProgramOp program_;
  DenseMap<Value, Value> buffers_;
  std::optional<SymbolicShapes> shapes_;
};

FailureOr<MemRefType> ProgramFormer::bufferTypeOf(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  if (!type)
    return MemRefType();
  if (type.hasStaticShape())
    return bufferType(type);
  if (!shapes_)
    return MemRefType();
  FailureOr<AffineMap> shape = shapes_->shapeOf(value);
  if (failed(shape))
    return failure();
  return MemRefType::get(shapes_->upperBounds(*shape), type.getElementType());
}

void ProgramFormer::setDims(Value value, Operation *definer) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.hasStaticShape() || !shapes_)
    return;
  FailureOr<AffineMap> shape = shapes_->shapeOf(value);
  if (succeeded(shape))
    definer->setAttr(kDimsAttr, AffineMapAttr::get(*shape));
}

/// oneDNN's convolution accumulates its first 'add' post-op operand of the result's shape into
/// the result (a sum post-op: the result starts as a copy of it, runtime/src/cpu/onednn), and so
/// does its matmul when that 'add' is the first post-op (a residual after the bias); the two may
/// then share bytes: the (input, output) pair, or nothing.
static SmallVector<int64_t> sumAddendPair(StringRef callee, DictionaryAttr params,
                                          ArrayRef<Value> inputs, ArrayRef<Value> outputs) {
  auto kinds = params.getAs<ArrayAttr>(contract::param::kPostOps.name);
  bool matmul = callee == contract::callee::kOneDnnMatmul;
  if ((callee != contract::callee::kOneDnnConvolution && !matmul) || !kinds || outputs.size() != 1)
    return {};
  auto isAdd = [](Attribute kind) {
    auto name = dyn_cast<StringAttr>(kind);
    return name && name.getValue() == contract::postOpName(contract::PostOp::Add);
  };
  int64_t adds = llvm::count_if(kinds, isAdd);
  int64_t first = static_cast<int64_t>(inputs.size()) - adds;
  if (adds == 0 || first < 2)
    return {};
  if (matmul) {
    if (!isAdd(kinds[0]) || params.get(contract::param::kDstView.name) ||
        inputs[first].getType() != outputs[0].getType())
      return {};
    return {first, 0};
  }
  for (int64_t i = first; i < static_cast<int64_t>(inputs.size()); ++i)
    if (inputs[i].getType() == outputs[0].getType())
      return {i, 0};
  return {};
}

std::string ProgramFormer::describe(func::CallOp call, func::FuncOp callee) {
  if (auto description = callee->getAttrOfType<StringAttr>(kDescriptionAttr))
    return description.getValue().str();
  auto library = callee->getAttrOfType<StringAttr>(kLibraryCallAttr);
  std::string name = (library ? library.getValue() : callee.getSymName()).str();
  if (auto loc = dyn_cast<NameLoc>(call.getLoc()))
    return name + " (" + loc.getName().getValue().str() + ")";
  return name;
}

LogicalResult ProgramFormer::addCall(func::CallOp call) {
  auto callee = kernels_.lookupSymbol<func::FuncOp>(call.getCalleeAttr());
  if (!callee)
    callee = module_.lookupSymbol<func::FuncOp>(call.getCalleeAttr());
  if (!callee)
    return call.emitError() << "call to unknown function @" << call.getCallee();
  SmallVector<Value> inputs, outputs;
  for (Value operand : call.getOperands()) {
    FailureOr<Value> buffer = lookup(operand, call);
    if (failed(buffer))
      return failure();
    inputs.push_back(*buffer);
  }
  for (Value result : call.getResults()) {
    FailureOr<MemRefType> type = bufferTypeOf(result);
    if (failed(type))
      return failure();
    if (!*type)
      return call.emitError() << "result of type " << result.getType() << " is not static";
    Value buffer = program::AllocOp::create(builder_, call.getLoc(), *type, IntegerAttr());
    setDims(result, buffer.getDefiningOp());
    buffers_[result] = buffer;
    outputs.push_back(buffer);
  }
  StringAttr description = builder_.getStringAttr(describe(call, callee));
  if (auto library = callee->getAttrOfType<StringAttr>(kLibraryCallAttr)) {
    DictionaryAttr params = call->getDiscardableAttrDictionary();
    SmallVector<int64_t> pairs = sumAddendPair(library.getValue(), params, inputs, outputs);
    program::LibraryCallOp::create(
        builder_, call.getLoc(), library, inputs, outputs, params, description,
        pairs.empty() ? DenseI64ArrayAttr() : builder_.getDenseI64ArrayAttr(pairs), IntegerAttr());
    return success();
  }
  if (!callee->hasAttr(kDispatchAttr) || callee->getParentOp() != kernels_)
    return call.emitError() << "call to @" << call.getCallee()
                            << ", which is neither a kernel nor a library call";
  // A kernel over dynamic dimensions learns their upper bounds, which its tiling is sized for;
  // where a dimension was given without one, they are nominal (kiln.nominal_bounds) and size
  // nothing a run uses.
  if (shapes_ && plannedPerRun(shapes_->symbols()) &&
      llvm::any_of(callee.getArgumentTypes(),
                   [](Type type) { return !cast<RankedTensorType>(type).hasStaticShape(); }))
    callee->setAttr(kNominalBoundsAttr, builder_.getUnitAttr());
  for (auto [i, input] : llvm::enumerate(inputs))
    if (!cast<RankedTensorType>(callee.getArgumentTypes()[i]).hasStaticShape())
      callee.setArgAttr(
          i, kBoundsAttr,
          builder_.getDenseI64ArrayAttr(cast<MemRefType>(input.getType()).getShape()));
  for (auto [i, output] : llvm::enumerate(outputs))
    if (!cast<RankedTensorType>(callee.getResultTypes()[i]).hasStaticShape())
      callee.setResultAttr(
          i, kBoundsAttr,
          builder_.getDenseI64ArrayAttr(cast<MemRefType>(output.getType()).getShape()));
  auto kernel = SymbolRefAttr::get(builder_.getContext(), kKernelsSymbol,
                                   {FlatSymbolRefAttr::get(callee.getSymNameAttr())});
  SmallVector<int64_t> pairs = inPlacePairs(callee);
  program::DispatchOp::create(builder_, call.getLoc(), kernel, inputs, outputs, description,
                              pairs.empty() ? DenseI64ArrayAttr()
                                            : builder_.getDenseI64ArrayAttr(pairs),
                              IntegerAttr());
  return success();
}

LogicalResult ProgramFormer::addReturn(func::ReturnOp op) {
  // An allocation that becomes an output, and the value that replaced it. Claimed allocations
  // are erased after the loop: a later output may return the same buffer (two results of one
  // value, or empty results folded into one), and copies the first output then.
  llvm::DenseMap<Operation *, Value> claimed;
  llvm::scope_exit eraseClaimed([&] {
    for (auto &entry : claimed)
      entry.first->erase();
  });
  for (auto [i, operand] : llvm::enumerate(op.getOperands())) {
    FailureOr<Value> buffer = lookup(operand, op);
    if (failed(buffer))
      return failure();
    FailureOr<MemRefType> outputBufferType = bufferTypeOf(operand);
    if (failed(outputBufferType))
      return failure();
    if (!*outputBufferType)
      return op.emitError() << "output " << i << " has type " << entry_.getResultTypes()[i]
                            << ", which is not static";
    auto name = entry_.getResultAttrOfType<StringAttr>(i, ::kiln::attrs::kName);
    auto declared = entry_.getResultAttrOfType<TypeAttr>(i, ::kiln::attrs::kDeclaredType);
    auto symbols = entry_.getResultAttrOfType<ArrayAttr>(i, ::kiln::attrs::kDimSymbols);
    auto check = entry_.getResultAttrOfType<StringAttr>(i, ::kiln::attrs::kCheck);
    MemRefType outputType = *outputBufferType;
    auto createOutput = [&](Location loc) {
      auto output = program::OutputOp::create(
          builder_, loc, outputType, builder_.getI64IntegerAttr(i),
          name ? name : builder_.getStringAttr("output_" + std::to_string(i)),
          declared ? declared : TypeAttr(), symbols ? symbols : ArrayAttr(), check);
      setDims(operand, output);
      return output;
    };
    // An output computed by a step is written straight into the caller's tensor: the
    // allocation becomes the output (seen through a view where the shapes differ).
    Value root = program::rootBuffer(*buffer);
    auto alloc = root.getDefiningOp<program::AllocOp>();
    if (alloc && program::bufferBytes(alloc.getType()) == program::bufferBytes(outputType) &&
        !claimed.count(alloc)) {
      OpBuilder::InsertionGuard guard(builder_);
      builder_.setInsertionPoint(alloc);
      Value output = createOutput(alloc.getLoc());
      if (output.getType() != alloc.getType()) {
        output = program::ViewOp::create(builder_, alloc.getLoc(), alloc.getType(), output);
        if (Attribute dims = alloc->getAttr(kDimsAttr))
          output.getDefiningOp()->setAttr(kDimsAttr, dims);
      }
      alloc.getResult().replaceAllUsesWith(output);
      claimed[alloc] = output;
      continue;
    }
    Value output = createOutput(op.getLoc());
    Value source = *buffer;
    if (auto replaced = claimed.find(alloc);
        alloc && replaced != claimed.end() && source == alloc.getResult())
      source = replaced->second;
    program::CopyOp::create(builder_, op.getLoc(), source, output,
                            builder_.getStringAttr("output " + std::to_string(i)),
                            IntegerAttr());
  }
  return success();
}

LogicalResult ProgramFormer::run() {
  builder_.setInsertionPoint(entry_);
  program_ = program::ProgramOp::create(builder_, entry_.getLoc(), entry_.getSymName(), device_);
  if (auto modeled =
          entry_->getParentOfType<ModuleOp>()->getAttrOfType<IntegerAttr>(kModeledKernelBytesAttr))
    program_.setModeledKernelBytesAttr(modeled);
  builder_.setInsertionPointToStart(&program_.getBody().front());

  if (llvm::any_of(entry_.getArgumentTypes(), [](Type type) {
        auto tensor = dyn_cast<RankedTensorType>(type);
        return tensor && !tensor.hasStaticShape();
      })) {
    FailureOr<SymbolicShapes> shapes = SymbolicShapes::create(entry_, kernels_);
    if (failed(shapes) || failed(shapes->unify()))
      return failure();
    shapes_.emplace(std::move(*shapes));
    program_->setAttr(kSymbolsAttr, symbolsAttr(program_.getContext(), shapes_->symbols()));
  }

  for (auto [i, argument] : llvm::enumerate(entry_.getArguments())) {
    FailureOr<MemRefType> inputType = bufferTypeOf(argument);
    if (failed(inputType))
      return failure();
    if (!*inputType)
      return entry_.emitError() << "input " << i << " has type " << argument.getType()
                                << "; bind its dynamic dimensions with --shape";
    auto name = entry_.getArgAttrOfType<StringAttr>(i, ::kiln::attrs::kName);
    auto declared = entry_.getArgAttrOfType<TypeAttr>(i, ::kiln::attrs::kDeclaredType);
    auto symbols = entry_.getArgAttrOfType<ArrayAttr>(i, ::kiln::attrs::kDimSymbols);
    auto input = program::InputOp::create(
        builder_, argument.getLoc(), *inputType, builder_.getI64IntegerAttr(i),
        name ? name : builder_.getStringAttr("input_" + std::to_string(i)),
        declared ? declared : TypeAttr(), symbols ? symbols : ArrayAttr(), StringAttr());
    setDims(argument, input);
    buffers_[argument] = input;
  }

  for (Operation &op : entry_.getBody().front()) {
    LogicalResult result = success();
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      auto type = dyn_cast<RankedTensorType>(constant.getType());
      if (!type || constant->use_empty())
        continue; // Scalars only feed kernels, which copied them.
      auto value = dyn_cast<ElementsAttr>(constant.getValue());
      if (!value || !type.hasStaticShape() || !type.getElementType().isIntOrFloat())
        return constant.emitError() << "constant of type " << type
                                    << " cannot be stored in the artifact";
      buffers_[constant] =
          program::ConstantOp::create(builder_, constant.getLoc(), bufferType(type), value);
    } else if (isViewOp(&op)) {
      FailureOr<Value> source = lookup(op.getOperand(0), &op);
      if (failed(source))
        return failure();
      FailureOr<MemRefType> viewType = bufferTypeOf(op.getResult(0));
      if (failed(viewType))
        return failure();
      // A contiguous slice views part of its operand's bytes; a reshape or cast views all.
      std::optional<int64_t> offset = contiguousSliceByteOffset(&op);
      if (!*viewType || (!offset && program::bufferBytes(*viewType) !=
                                        program::bufferBytes(cast<MemRefType>(source->getType()))))
        return op.emitError() << "view to " << op.getResult(0).getType()
                              << " does not keep the byte size of its operand";
      auto view = program::ViewOp::create(builder_, op.getLoc(), *viewType, *source);
      setDims(op.getResult(0), view);
      if (offset)
        view.setByteOffset(*offset);
      buffers_[op.getResult(0)] = view;
    } else if (auto call = dyn_cast<func::CallOp>(op)) {
      result = addCall(call);
    } else if (auto ret = dyn_cast<func::ReturnOp>(op)) {
      result = addReturn(ret);
    } else if (isa<tensor::EmptyOp>(op) && op.use_empty()) {
      continue;
    } else if (shapes_ && isMemoryEffectFree(&op) && op.getNumRegions() == 0 &&
               llvm::none_of(op.getResultTypes(),
                             [](Type type) { return isa<ShapedType>(type); })) {
      continue; // A size of a dynamic dimension: kiln.dims says what the run's is.
    } else {
      return op.emitError() << "'" << op.getName() << "' was not compiled into a kernel";
    }
    if (failed(result))
      return failure();
  }
  return success();
}

struct FormProgramPass : impl::FormProgramPassBase<FormProgramPass> {
  using Base::Base;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    std::optional<program::Device> kind = program::symbolizeDevice(device);
    if (!kind) {
      module.emitError() << "unknown device '" << device << "'; expected cpu or cuda";
      return signalPassFailure();
    }
    auto entryFunction = module.lookupSymbol<func::FuncOp>(entry);
    if (!entryFunction || entryFunction.isExternal()) {
      module.emitError() << "the module has no entry function @" << entry;
      return signalPassFailure();
    }
    if (module.lookupSymbol(kKernelsSymbol)) {
      module.emitError() << "the module already has a symbol @" << kKernelsSymbol;
      return signalPassFailure();
    }

    OpBuilder builder = OpBuilder::atBlockEnd(module.getBody());
    auto kernels = ModuleOp::create(builder, module.getLoc(), StringRef(kKernelsSymbol));
    for (auto function : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (function->hasAttr(kDispatchAttr) && !function.isExternal())
        function->moveBefore(kernels.getBody(), kernels.getBody()->end());

    if (failed(ProgramFormer(module, entryFunction, kernels, *kind).run()))
      return signalPassFailure();
    entryFunction.erase();
    for (auto function : llvm::make_early_inc_range(module.getOps<func::FuncOp>()))
      if (function->hasAttr(kLibraryCallAttr))
        function.erase();
  }
};

} // namespace
} // namespace kiln
