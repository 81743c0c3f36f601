//===- ChannelsLast.cpp - Channels-last values between convolutions -------===//
//
// cuDNN's tensor-core convolution kernels and its fused engines are written for NHWC, and
// oneDNN's fast CPU convolutions run NHWC or channel-blocked; an ONNX model is NCHW.
// kiln-cuda-channels-last (half-precision cudnn.convolution calls) and kiln-cpu-channels-last
// (every onednn.convolution call) give each chosen call channels-last operands and
// result (`channels_last = true`: x, the addend and y as N spatial... C, the filter as
// K spatial... C/groups) and places the transposes the model's NCHW semantics then need where they
// cost least:
//
//   1. Each call reads transpose(x, to-last) and its result is read through transpose(y, to-first)
//      (constant filters are reordered at compile time instead).
//   2. A to-first transpose sinks below the elementwise ops that read it (unary ops, casts,
//      broadcasting binary ops and selects whose other operands are transposed alike or
//      constants, which are reordered), below max and average pools (which pool channels-last;
//      on the CPU onednn.pooling calls too), below a batch norm (a per-channel factor and
//      shift), and below a global pool, which becomes a reduction over the spatial dims of the
//      channels-last value.
//   3. transpose(transpose(v, to-first), to-last) is v.
//
// In a CNN the transposes then cancel between consecutive convolutions, their ReLU/clip ops and
// residual adds and pools; what remains sits at the model's input (after its cast), before ops
// that need NCHW (reshapes, pads, resizes, normalizations, ...), and at its outputs.
//
//===----------------------------------------------------------------------===//

#include "compiler/librarycalls/Declarations.h"

#include "compiler/librarycalls/Passes.h"
#include "compiler/librarycalls/StridedOperands.h"
#include "contract/library_calls.h"
#include "dialects/graph/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallVector.h"

#include <cstring>
#include <optional>
#include <vector>

namespace kiln {
#define GEN_PASS_DEF_CUDACHANNELSLASTPASS
#define GEN_PASS_DEF_CPUCHANNELSLASTPASS
#include "compiler/librarycalls/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

/// The permutation from (N, C, spatial...) to (N, spatial..., C), and its inverse.
SmallVector<int64_t> toLast(int64_t rank) {
  SmallVector<int64_t> permutation{0};
  for (int64_t i = 2; i < rank; ++i)
    permutation.push_back(i);
  permutation.push_back(1);
  return permutation;
}

SmallVector<int64_t> toFirst(int64_t rank) {
  SmallVector<int64_t> permutation{0, rank - 1};
  for (int64_t i = 1; i < rank - 1; ++i)
    permutation.push_back(i);
  return permutation;
}

RankedTensorType permuted(RankedTensorType type, ArrayRef<int64_t> permutation) {
  SmallVector<int64_t> shape;
  for (int64_t index : permutation)
    shape.push_back(type.getDimSize(index));
  return RankedTensorType::get(shape, type.getElementType());
}

Value transpose(OpBuilder &builder, Location loc, Value value, ArrayRef<int64_t> permutation) {
  auto type = cast<RankedTensorType>(value.getType());
  return graph::TransposeOp::create(builder, loc, permuted(type, permutation), value,
                                    builder.getDenseI64ArrayAttr(permutation));
}

/// The transpose to channels-first that defines `value`, if any.
graph::TransposeOp toFirstTranspose(Value value) {
  auto op = value.getDefiningOp<graph::TransposeOp>();
  if (!op)
    return nullptr;
  int64_t rank = cast<RankedTensorType>(op.getType()).getRank();
  return rank >= 3 && llvm::equal(op.getPermutation(), toFirst(rank)) ? op : nullptr;
}

/// `constant` of rank at most `rank`, broadcast-aligned to `rank` (leading ones) and permuted,
/// as a new constant; none for a constant whose bytes are not at hand.
std::optional<Value> permuteConstant(OpBuilder &builder, graph::ConstantOp constant, int64_t rank,
                                     ArrayRef<int64_t> permutation) {
  auto type = dyn_cast<RankedTensorType>(constant.getType());
  if (!type || !type.hasStaticShape() || type.getRank() > rank)
    return std::nullopt;
  SmallVector<int64_t> shape(rank - type.getRank(), 1);
  llvm::append_range(shape, type.getShape());
  auto aligned = RankedTensorType::get(shape, type.getElementType());
  RankedTensorType result = permuted(aligned, permutation);
  Attribute value = constant.getValue();
  auto create = [&](Attribute attribute) -> Value {
    return graph::ConstantOp::create(builder, constant.getLoc(), result,
                                     cast<ElementsAttr>(attribute));
  };
  if (auto dense = dyn_cast<DenseElementsAttr>(value); dense && dense.isSplat())
    return create(dense.resizeSplat(result));
  std::optional<ArrayRef<char>> raw = graph::rawConstantData(value);
  size_t count = static_cast<size_t>(type.getNumElements());
  size_t element = type.getElementTypeBitWidth() / 8;
  if (!raw || raw->size() != count * element)
    return std::nullopt;
  ArrayRef<char> data = *raw;
  // Element i of the result (row-major over `result`) is the aligned source's element at the
  // permuted index.
  SmallVector<int64_t> sourceStrides = rowMajorStrides(shape), resultShape(result.getShape());
  std::vector<char> bytes(data.size());
  SmallVector<int64_t> index(rank, 0);
  for (size_t i = 0; i < count; ++i) {
    int64_t source = 0;
    for (int64_t d = 0; d < rank; ++d)
      source += index[d] * sourceStrides[permutation[d]];
    std::memcpy(bytes.data() + i * element, data.data() + source * element, element);
    for (int64_t d = rank - 1; d >= 0; --d) {
      if (++index[d] < resultShape[d])
        break;
      index[d] = 0;
    }
  }
  return create(graph::rawConstantLike(value, result, bytes, "_channels_last"));
}

/// `value`, of rank at most the permutation's, broadcast-aligned to it (leading ones) and
/// permuted: a reordered constant where it is one, a reshape and a transpose otherwise. The
/// addends of a convolution's `add` post-ops broadcast against its result, so they may be of
/// lower rank (a scalar, a per-channel C x 1 x 1).
Value permute(OpBuilder &builder, Location loc, Value value, ArrayRef<int64_t> permutation) {
  auto type = cast<RankedTensorType>(value.getType());
  auto rank = static_cast<int64_t>(permutation.size());
  assert(type.getRank() <= rank && "a value permuted to a lower rank");
  if (auto constant = value.getDefiningOp<graph::ConstantOp>())
    if (std::optional<Value> reordered = permuteConstant(builder, constant, rank, permutation))
      return *reordered;
  if (type.getRank() < rank) {
    SmallVector<int64_t> shape(rank - type.getRank(), 1);
    llvm::append_range(shape, type.getShape());
    value = graph::ReshapeOp::create(builder, loc,
                                     RankedTensorType::get(shape, type.getElementType()), value,
                                     builder.getDenseI64ArrayAttr(shape));
  }
  return transpose(builder, loc, value, permutation);
}

/// The rewrite both passes run: `convolution` names the library call made channels-last.
class Rewriter {
public:
  Rewriter(ModuleOp module, StringRef convolution, bool allTypes, bool cpu)
      : module(module), symbols(module), builder(module.getContext()), convolution(convolution),
        allTypes(allTypes), cpu(cpu) {}

  void run() {
    SmallVector<func::CallOp> calls;
    module.walk([&](func::CallOp call) {
      if (isChosen(call))
        calls.push_back(call);
    });
    if (calls.empty())
      return;
    for (func::CallOp call : calls) {
      callees.insert(symbols.lookup<func::FuncOp>(call.getCallee()));
      convert(call);
    }
    for (bool changed = true; changed;) {
      changed = cancelTransposes(module);
      module.walk([&](Operation *op) { changed |= sink(op); });
    }
    cancelTransposes(module);
    reshapeUnitTransposes(builder, module);
    for (func::FuncOp callee : callees)
      if (SymbolTable::symbolKnownUseEmpty(callee, module))
        symbols.erase(callee);
  }

private:
  /// The library name of `call`'s callee, or "".
  StringRef libraryName(func::CallOp call) {
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    auto name = callee ? callee->getAttrOfType<StringAttr>(kLibraryCallAttr) : StringAttr();
    return name ? name.getValue() : StringRef();
  }

  /// A convolution call not yet channels-last: on CUDA a 2-D one that runs on tensor cores (f16,
  /// bf16, or f32 with allow_tf32; any type with all-types), on the CPU every one.
  bool isChosen(func::CallOp call) {
    if (libraryName(call) != convolution || call->hasAttr(contract::param::kChannelsLast.name) ||
        call.getNumResults() != 1)
      return false;
    auto type = cast<RankedTensorType>(call.getResult(0).getType());
    if (cpu)
      return type.hasStaticShape() && type.getRank() >= 3 && type.getRank() <= 5;
    Type element = type.getElementType();
    auto tf32 = call->getAttrOfType<BoolAttr>(contract::param::kAllowTf32.name);
    return type.getRank() == 4 &&
           (allTypes || element.isF16() || element.isBF16() || (tf32 && tf32.getValue()));
  }

  /// Makes `call` channels-last between transposes (step 1).
  void convert(func::CallOp call) {
    Location loc = call.getLoc();
    builder.setInsertionPoint(call);
    auto resultType = cast<RankedTensorType>(call.getResult(0).getType());
    int64_t rank = resultType.getRank();
    SmallVector<int64_t> last = toLast(rank);
    // Operands: x, w, [bias], then the addends of the `add` post-ops, which are indexed as y is.
    size_t adds = 0;
    if (auto postOps = call->getAttrOfType<ArrayAttr>(contract::param::kPostOps.name))
      adds = llvm::count_if(postOps, [](Attribute kind) {
        return cast<StringAttr>(kind).getValue() == contract::postOpName(contract::PostOp::Add);
      });
    SmallVector<Value> operands(call.getOperands());
    size_t firstAddend = operands.size() - adds;
    for (auto [index, operand] : llvm::enumerate(operands))
      if (index < 2 || index >= firstAddend)
        operand = permute(builder, loc, operand, last);
    SmallVector<Type> types = llvm::to_vector(ValueRange(operands).getTypes());
    RankedTensorType lastType = permuted(resultType, last);
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    func::FuncOp declaration = libraryCallDeclaration(
        symbols, module, callee->getAttrOfType<StringAttr>(kLibraryCallAttr).getValue(),
        builder.getFunctionType(types, {lastType}));
    auto converted = func::CallOp::create(builder, loc, declaration, operands);
    for (NamedAttribute attribute : call->getDiscardableAttrs())
      converted->setAttr(attribute.getName(), attribute.getValue());
    converted->setAttr(contract::param::kChannelsLast.name, builder.getBoolAttr(true));
    builder.setInsertionPointAfter(converted);
    call.getResult(0).replaceAllUsesWith(
        transpose(builder, loc, converted.getResult(0), toFirst(rank)));
    call.erase();
  }

  /// A transpose that moves only dims of size 1 moves no data: it becomes a reshape (which
  /// folds into the reshapes around it).
  static void reshapeUnitTransposes(OpBuilder &builder, ModuleOp module) {
    module.walk([&](graph::TransposeOp op) {
      auto type = cast<RankedTensorType>(op.getType());
      auto input = cast<RankedTensorType>(op.getInput().getType());
      if (!type.hasStaticShape())
        return;
      int64_t previous = -1;
      for (int64_t index : op.getPermutation()) {
        if (input.getDimSize(index) == 1)
          continue;
        if (index < previous)
          return;
        previous = index;
      }
      builder.setInsertionPoint(op);
      op.getResult().replaceAllUsesWith(
          graph::ReshapeOp::create(builder, op.getLoc(), type, op.getInput(),
                                   builder.getDenseI64ArrayAttr(type.getShape())));
      op.erase();
    });
  }

  /// Step 3 over the module; erases what becomes dead. Whether anything changed.
  static bool cancelTransposes(ModuleOp module) {
    bool changed = false;
    SmallVector<graph::TransposeOp> transposes;
    module.walk([&](graph::TransposeOp op) { transposes.push_back(op); });
    for (graph::TransposeOp op : transposes) {
      auto inner = op.getInput().getDefiningOp<graph::TransposeOp>();
      if (!inner)
        continue;
      SmallVector<int64_t> composed;
      for (int64_t index : op.getPermutation())
        composed.push_back(inner.getPermutation()[index]);
      if (!llvm::equal(composed, llvm::seq<int64_t>(0, composed.size())))
        continue;
      op.getResult().replaceAllUsesWith(inner.getInput());
      op.erase();
      if (inner->use_empty())
        inner.erase();
      changed = true;
    }
    return changed;
  }

  /// Whether every reader of `transposed` is an op a transpose sinks below, so that it dies
  /// once they have all been moved.
  bool onlySinkingReaders(graph::TransposeOp transposed) {
    return llvm::all_of(transposed->getUsers(), [&](Operation *user) {
      if (auto call = dyn_cast<func::CallOp>(user))
        return isPoolingCall(call);
      return graph::isElementwise(user) ||
             isa<graph::ConcatOp, graph::MaxPoolOp, graph::AvgPoolOp, graph::GlobalAvgPoolOp,
                 graph::GlobalMaxPoolOp, graph::BatchNormOp>(user);
    });
  }

  /// An onednn.pooling call (CPU) not yet channels-last.
  bool isPoolingCall(func::CallOp call) {
    return cpu && libraryName(call) == contract::callee::kOneDnnPooling &&
           !call->hasAttr(contract::param::kChannelsLast.name) && call.getNumOperands() == 1 &&
           call.getNumResults() == 1;
  }

  /// Step 2 for `op`: whether it was rewritten.
  bool sink(Operation *op) {
    if (auto call = dyn_cast<func::CallOp>(op))
      return isPoolingCall(call) && sinkPoolingCall(call);
    if (auto pool = dyn_cast<graph::GlobalAvgPoolOp>(op))
      return sinkPool(op, pool.getInput(), /*average=*/true);
    if (auto pool = dyn_cast<graph::GlobalMaxPoolOp>(op))
      return sinkPool(op, pool.getInput(), /*average=*/false);
    if (isa<graph::MaxPoolOp, graph::AvgPoolOp>(op))
      return sinkWindowPool(op);
    if (auto norm = dyn_cast<graph::BatchNormOp>(op))
      return sinkBatchNorm(norm);
    if (auto concat = dyn_cast<graph::ConcatOp>(op))
      return sinkConcat(concat);
    if (!graph::isElementwise(op))
      return false;
    auto resultType = dyn_cast<RankedTensorType>(op->getResult(0).getType());
    if (!resultType || !resultType.hasStaticShape() || resultType.getRank() < 3)
      return false;
    int64_t rank = resultType.getRank();
    // Every operand must be transposed alike or be a constant; a transpose that only ops which
    // sink read pays for the transpose of the result.
    bool pays = false;
    for (Value operand : op->getOperands()) {
      if (graph::TransposeOp transposed = toFirstTranspose(operand)) {
        if (cast<RankedTensorType>(transposed.getType()).getRank() != rank)
          return false;
        pays |= onlySinkingReaders(transposed);
        continue;
      }
      auto constant = operand.getDefiningOp<graph::ConstantOp>();
      auto type = dyn_cast<RankedTensorType>(operand.getType());
      if (!constant || !type || !type.hasStaticShape() || type.getRank() > rank)
        return false;
    }
    if (!pays)
      return false;
    builder.setInsertionPoint(op);
    SmallVector<Value> operands;
    for (Value operand : op->getOperands()) {
      if (graph::TransposeOp transposed = toFirstTranspose(operand)) {
        operands.push_back(transposed.getInput());
        continue;
      }
      std::optional<Value> reordered =
          permuteConstant(builder, operand.getDefiningOp<graph::ConstantOp>(), rank, toLast(rank));
      if (!reordered)
        return false;
      operands.push_back(*reordered);
    }
    Operation *moved = builder.clone(*op);
    moved->setOperands(operands);
    moved->getResult(0).setType(permuted(resultType, toLast(rank)));
    replaceThroughTranspose(builder, op, moved->getResult(0));
    return true;
  }

  /// A concatenation of channels-first transposes concatenates the channels-last values along
  /// the axis the transposes move to `axis`.
  bool sinkConcat(graph::ConcatOp op) {
    auto resultType = cast<RankedTensorType>(op.getType());
    int64_t rank = resultType.getRank();
    if (rank < 3 || op.getInputs().empty())
      return false;
    bool pays = false;
    SmallVector<Value> inputs;
    for (Value input : op.getInputs()) {
      graph::TransposeOp transposed = toFirstTranspose(input);
      if (!transposed || cast<RankedTensorType>(transposed.getType()).getRank() != rank)
        return false;
      pays |= onlySinkingReaders(transposed);
      inputs.push_back(transposed.getInput());
    }
    if (!pays)
      return false;
    builder.setInsertionPoint(op);
    int64_t axis = toFirst(rank)[op.getAxis()];
    auto moved = graph::ConcatOp::create(builder, op.getLoc(), permuted(resultType, toLast(rank)),
                                         inputs, builder.getI64IntegerAttr(axis));
    replaceThroughTranspose(builder, op, moved);
    return true;
  }

  /// A max or average pool of a channels-first transpose pools the channels-last value.
  bool sinkWindowPool(Operation *op) {
    graph::TransposeOp transposed = toFirstTranspose(op->getOperand(0));
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    auto already = op->getAttrOfType<BoolAttr>(contract::param::kChannelsLast.name);
    if (!transposed || !onlySinkingReaders(transposed) || (already && already.getValue()) ||
        resultType.getRank() != cast<RankedTensorType>(transposed.getType()).getRank())
      return false;
    int64_t rank = resultType.getRank();
    builder.setInsertionPoint(op);
    Operation *moved = builder.clone(*op);
    moved->setOperand(0, transposed.getInput());
    moved->setAttr(contract::param::kChannelsLast.name, builder.getBoolAttr(true));
    moved->getResult(0).setType(permuted(resultType, toLast(rank)));
    replaceThroughTranspose(builder, op, moved->getResult(0));
    return true;
  }

  /// A batch norm of a channels-first transpose: the channels-last value times the per-channel
  /// factor scale / sqrt(variance + epsilon) plus the shift bias - mean * factor (the lowering's
  /// arithmetic), both of C elements, which broadcast along the last axis.
  bool sinkBatchNorm(graph::BatchNormOp op) {
    graph::TransposeOp transposed = toFirstTranspose(op.getInput());
    if (!transposed || !onlySinkingReaders(transposed))
      return false;
    auto channelType = cast<RankedTensorType>(op.getScale().getType());
    auto resultType = cast<RankedTensorType>(op.getType());
    if (channelType.getRank() != 1 || !resultType.hasStaticShape())
      return false;
    Location loc = op.getLoc();
    builder.setInsertionPoint(op);
    Type element = channelType.getElementType();
    auto scalarType = RankedTensorType::get({}, element);
    Value epsilon = graph::ConstantOp::create(
        builder, loc, scalarType,
        DenseElementsAttr::get(scalarType,
                               builder.getFloatAttr(element, op.getEpsilon().convertToDouble())));
    Value variance = graph::AddOp::create(builder, loc, channelType, op.getVariance(), epsilon);
    Value root = graph::SqrtOp::create(builder, loc, channelType, variance);
    Value factor = graph::DivOp::create(builder, loc, channelType, op.getScale(), root);
    Value centre = graph::MulOp::create(builder, loc, channelType, op.getMean(), factor);
    Value shift = graph::SubOp::create(builder, loc, channelType, op.getBias(), centre);
    RankedTensorType lastType = permuted(resultType, toLast(resultType.getRank()));
    Value scaled = graph::MulOp::create(builder, loc, lastType, transposed.getInput(), factor);
    Value moved = graph::AddOp::create(builder, loc, lastType, scaled, shift);
    replaceThroughTranspose(builder, op, moved);
    return true;
  }

  /// An onednn.pooling call of a channels-first transpose pools the channels-last value.
  bool sinkPoolingCall(func::CallOp call) {
    graph::TransposeOp transposed = toFirstTranspose(call.getOperand(0));
    auto resultType = cast<RankedTensorType>(call.getResult(0).getType());
    if (!transposed || !onlySinkingReaders(transposed) ||
        resultType.getRank() != cast<RankedTensorType>(transposed.getType()).getRank())
      return false;
    int64_t rank = resultType.getRank();
    builder.setInsertionPoint(call);
    Value input = transposed.getInput();
    auto callee = symbols.lookup<func::FuncOp>(call.getCallee());
    callees.insert(callee);
    func::FuncOp declaration = libraryCallDeclaration(
        symbols, module, contract::callee::kOneDnnPooling,
        builder.getFunctionType({input.getType()}, {permuted(resultType, toLast(rank))}));
    auto moved = func::CallOp::create(builder, call.getLoc(), declaration, ValueRange{input});
    for (NamedAttribute attribute : call->getDiscardableAttrs())
      moved->setAttr(attribute.getName(), attribute.getValue());
    moved->setAttr(contract::param::kChannelsLast.name, builder.getBoolAttr(true));
    replaceThroughTranspose(builder, call, moved.getResult(0));
    return true;
  }

  /// A global pool of a channels-first transpose: the reduction over the spatial dims of the
  /// channels-last value, whose N x 1.. x 1 x C result, transposed, is the pool's (a transpose
  /// of unit dims, which becomes a reshape at the end).
  bool sinkPool(Operation *op, Value input, bool average) {
    graph::TransposeOp transposed = toFirstTranspose(input);
    if (!transposed || !onlySinkingReaders(transposed))
      return false;
    auto resultType = cast<RankedTensorType>(op->getResult(0).getType());
    int64_t rank = resultType.getRank();
    if (!resultType.hasStaticShape() || rank != cast<RankedTensorType>(input.getType()).getRank())
      return false;
    builder.setInsertionPoint(op);
    Location loc = op->getLoc();
    Value source = transposed.getInput();
    RankedTensorType reducedType = permuted(resultType, toLast(rank));
    auto axes = builder.getDenseI64ArrayAttr(llvm::to_vector(llvm::seq<int64_t>(1, rank - 1)));
    auto keep = builder.getBoolAttr(true);
    Value reduced =
        average
            ? graph::ReduceMeanOp::create(builder, loc, reducedType, source, axes, keep).getResult()
            : graph::ReduceMaxOp::create(builder, loc, reducedType, source, axes, keep).getResult();
    replaceThroughTranspose(builder, op, reduced);
    return true;
  }

  /// Replaces `op` by `moved`, its channels-last form, read through a transpose back to
  /// channels-first; erases `op` and what only it read.
  static void replaceThroughTranspose(OpBuilder &builder, Operation *op, Value moved) {
    builder.setInsertionPointAfterValue(moved);
    int64_t rank = cast<RankedTensorType>(moved.getType()).getRank();
    op->getResult(0).replaceAllUsesWith(transpose(builder, op->getLoc(), moved, toFirst(rank)));
    eraseWithDeadOperands(op);
  }

  static void eraseWithDeadOperands(Operation *op) {
    SmallVector<Operation *> producers;
    for (Value operand : op->getOperands())
      if (Operation *producer = operand.getDefiningOp())
        producers.push_back(producer);
    op->erase();
    for (Operation *producer : producers)
      if (producer->use_empty() && isa<graph::TransposeOp, graph::ConstantOp>(producer))
        producer->erase();
  }

  ModuleOp module;
  SymbolTable symbols;
  OpBuilder builder;
  StringRef convolution;
  bool allTypes;
  bool cpu;
  /// Declarations calls were moved away from, erased at the end when nothing calls them.
  llvm::SetVector<func::FuncOp> callees;
};

class CudaChannelsLast : public impl::CudaChannelsLastPassBase<CudaChannelsLast> {
public:
  using CudaChannelsLastPassBase::CudaChannelsLastPassBase;
  void runOnOperation() override {
    Rewriter(getOperation(), contract::callee::kCudnnConvolution, allTypes, /*cpu=*/false).run();
  }
};

class CpuChannelsLast : public impl::CpuChannelsLastPassBase<CpuChannelsLast> {
public:
  using CpuChannelsLastPassBase::CpuChannelsLastPassBase;
  void runOnOperation() override {
    Rewriter(getOperation(), contract::callee::kOneDnnConvolution, /*allTypes=*/true, /*cpu=*/true)
        .run();
  }
};

} // namespace
} // namespace kiln
