//===- AssignPrecision.cpp - fp16, bf16 and tf32 per graph op -----------------===//
//
// Classifies every float graph op (compute, follow, sensitive), decides which run in the low
// precision, and rewrites the function: constants converted once, casts where a value crosses
// between precisions, result types changed in place. Under `emulate` the types stay f32 and each
// candidate's operands and results are rounded through the low precision where a mask input says
// so: the evaluator of the `auto` search (tools/kiln/PrecisionSearch.cpp).
//
//===----------------------------------------------------------------------===//

#include "compiler/precision/Passes.h"
#include "dialects/kiln/KilnAttributes.h"

#include "compiler/options/EnumOption.h"
#include "contract/half_conversions.h"
#include "dialects/graph/GraphOps.h"

#include "mlir/IR/AsmState.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstring>
#include <vector>

namespace kiln {
#define GEN_PASS_DEF_ASSIGNPRECISIONPASS
#include "compiler/precision/Passes.h.inc"
} // namespace kiln

using namespace mlir;
using namespace kiln;
using namespace kiln::graph;

namespace {

enum class OpClass { Compute, Follow, Sensitive };

llvm::StringRef className(OpClass opClass) {
  switch (opClass) {
  case OpClass::Compute:
    return "compute";
  case OpClass::Follow:
    return "follow";
  case OpClass::Sensitive:
    return "sensitive";
  }
  return "";
}

/// The class of a float op: matrix products and convolutions are compute; ops whose result is an
/// input element, a bounded function of one, or one rounding of an exact result follow their
/// operands; everything that can overflow, cancel or accumulate error is sensitive.
OpClass classify(Operation *op) {
  if (isa<MatmulOp, GemmOp, ConvOp, ConvTransposeOp>(op))
    return OpClass::Compute;
  if (isa<AddOp, SubOp, MulOp, DivOp, MaxOp, MinOp, NegOp, AbsOp, SignOp, CeilOp, FloorOp, RoundOp,
          TanhOp, SigmoidOp, ErfOp, SqrtOp, SinOp, CosOp, SelectOp, ConcatOp, ExpandOp, FlattenOp,
          GatherOp, PadOp, ReshapeOp, SliceOp, SplitOp, SqueezeOp, TransposeOp, UnsqueezeOp,
          GatherElementsOp, GatherNdOp, ScatterElementsOp, ScatterNdOp, ResizeOp, MaxPoolOp,
          AvgPoolOp, GlobalAvgPoolOp, GlobalMaxPoolOp, ReduceMaxOp, ReduceMinOp, TopKOp>(op))
    return OpClass::Follow;
  return OpClass::Sensitive;
}

bool isF32Tensor(Type type) {
  auto tensor = dyn_cast<RankedTensorType>(type);
  return tensor && tensor.getElementType().isF32();
}

/// A candidate: a graph op (not a constant) with an f32 result.
bool isCandidate(Operation *op) {
  if (isa<ConstantOp>(op) || !isa<GraphDialect>(op->getDialect()))
    return false;
  return llvm::any_of(op->getResultTypes(), isF32Tensor);
}

/// The ONNX node an op comes from: the outer name of its location, or "" when it has none.
std::string nodeName(Operation *op) {
  if (auto name = dyn_cast<NameLoc>(op->getLoc()))
    return name.getName().str();
  if (auto fused = dyn_cast<FusedLoc>(op->getLoc()))
    for (Location inner : fused.getLocations())
      if (auto name = dyn_cast<NameLoc>(inner))
        return name.getName().str();
  return "";
}

RankedTensorType withElement(Type type, Type element) {
  auto tensor = cast<RankedTensorType>(type);
  return RankedTensorType::get(tensor.getShape(), element, tensor.getEncoding());
}

/// An f32 constant converted to the low precision: its value, or the magnitude that does not fit.
struct ConvertedConstant {
  Attribute value;
  /// The largest finite magnitude that became infinite (0 when everything fits).
  double overflow = 0;
};

/// Converts the elements of an f32 constant (inline or a resource blob) to `low`, rounding to
/// nearest even; NaN and the infinities stay what they are, a finite value that overflows is
/// reported. A constant of another type, or one whose bytes are unavailable, gives no value.
ConvertedConstant convertConstant(ConstantOp constant, FloatType low) {
  ConvertedConstant result;
  auto type = dyn_cast<RankedTensorType>(constant.getType());
  if (!type || !type.getElementType().isF32() || !type.hasStaticShape())
    return result;
  bool half = low.isF16();
  auto round = [&](float value, uint16_t &bits) {
    bits = half ? contract::floatToHalf(value) : contract::floatToBf16(value);
    bool infinite = (bits & 0x7FFFu) == (half ? 0x7C00u : 0x7F80u);
    if (infinite && std::isfinite(value))
      result.overflow = std::max(result.overflow, double(std::fabs(value)));
  };
  RankedTensorType lowType = withElement(type, low);
  Attribute attribute = constant.getValue();
  if (auto dense = dyn_cast<DenseElementsAttr>(attribute); dense && dense.isSplat()) {
    uint16_t bits = 0;
    round(dense.getSplatValue<float>(), bits);
    result.value =
        DenseElementsAttr::get(lowType, APFloat(low.getFloatSemantics(), APInt(16, bits)));
    return result;
  }
  std::optional<ArrayRef<char>> data = graph::rawConstantData(attribute);
  size_t count = static_cast<size_t>(type.getNumElements());
  if (!data || data->size() != count * sizeof(float))
    return result;
  std::vector<char> bytes(count * 2);
  for (size_t i = 0; i < count; ++i) {
    float value;
    std::memcpy(&value, data->data() + i * sizeof(float), sizeof value);
    uint16_t bits = 0;
    round(value, bits);
    std::memcpy(bytes.data() + 2 * i, &bits, 2);
  }
  result.value = graph::rawConstantLike(attribute, lowType, bytes, half ? "_f16" : "_bf16");
  return result;
}

struct Candidate {
  Operation *op;
  OpClass opClass;
  bool low = false;
  std::string reason;
};

class AssignPrecision : public kiln::impl::AssignPrecisionPassBase<AssignPrecision> {
public:
  using AssignPrecisionPassBase::AssignPrecisionPassBase;

  void runOnOperation() override;

private:
  LogicalResult decide(SmallVectorImpl<Candidate> &candidates, FloatType low);
  void rewrite(ArrayRef<Candidate> candidates, FloatType low);
  void emulateRounding(ArrayRef<Candidate> candidates, FloatType low);
  void markTf32(MutableArrayRef<Candidate> candidates);
  void record(ArrayRef<Candidate> candidates, llvm::StringRef lowName);

  /// Values of the low precision: the results of low candidates and, without keep-io-types, the
  /// f32 arguments.
  llvm::DenseSet<Value> lowValues;
  /// The f32 constants low candidates read, converted.
  llvm::DenseMap<Operation *, ConvertedConstant> converted;
};

void AssignPrecision::runOnOperation() {
  func::FuncOp function = getOperation();
  if (function.isExternal())
    return;
  lowValues.clear();
  converted.clear();
  if (precision == Precision::Auto) {
    function.emitError() << "precision 'auto' is kiln compile's search, not a precision to assign";
    return signalPassFailure();
  }
  llvm::StringRef precisionName(nameOf(precision.getValue()));
  SmallVector<Candidate> candidates;
  function.walk([&](Operation *op) {
    if (isCandidate(op))
      candidates.push_back({op, classify(op)});
  });
  function->setAttr(kPrecisionCandidatesAttr,
                    IntegerAttr::get(IntegerType::get(&getContext(), 64), candidates.size()));
  if (precision == Precision::Fp32) {
    for (Candidate &candidate : candidates)
      candidate.reason = "--precision fp32";
    record(candidates, "fp32");
    return;
  }
  if (precision == Precision::Tf32) {
    markTf32(candidates);
    record(candidates, "tf32");
    return;
  }
  FloatType low = precision == Precision::Fp16 ? FloatType(Float16Type::get(&getContext()))
                                               : FloatType(BFloat16Type::get(&getContext()));
  if (emulate) {
    for (Candidate &candidate : candidates) {
      candidate.low = true;
      candidate.reason = "under the mask";
    }
    emulateRounding(candidates, low);
    record(candidates, precisionName);
    return;
  }
  if (failed(decide(candidates, low)))
    return signalPassFailure();
  rewrite(candidates, low);
  record(candidates, precisionName);
}

LogicalResult AssignPrecision::decide(SmallVectorImpl<Candidate> &candidates, FloatType low) {
  func::FuncOp function = getOperation();
  llvm::StringSet<> forcedHigh;
  for (const std::string &name : keepHigh)
    forcedHigh.insert(name);
  for (int64_t index : this->low)
    if (index < 0 || index >= static_cast<int64_t>(candidates.size()))
      return function.emitError() << "precision candidate " << index << " does not exist (the "
                                  << "function has " << candidates.size() << ")";
  llvm::DenseSet<int64_t> chosen(this->low.begin(), this->low.end());
  llvm::DenseMap<int64_t, std::string> why;
  for (const std::string &entry : evidence) {
    auto [index, text] = llvm::StringRef(entry).split('=');
    int64_t number = 0;
    if (!index.getAsInteger(10, number))
      why[number] = text.str();
  }

  if (!keepIoTypes)
    for (BlockArgument argument : function.getArguments())
      if (isF32Tensor(argument.getType()))
        lowValues.insert(argument);

  for (auto [index, candidate] : llvm::enumerate(candidates)) {
    Operation *op = candidate.op;
    if (explicitLow) {
      candidate.low = chosen.contains(static_cast<int64_t>(index));
      candidate.reason = candidate.low ? "within the accuracy budget" : "kept high by the search";
      if (auto found = why.find(static_cast<int64_t>(index)); !candidate.low && found != why.end())
        candidate.reason += ": " + found->second;
    } else if (forcedHigh.contains(nodeName(op))) {
      candidate.reason = "--keep-high";
    } else if (candidate.opClass == OpClass::Compute) {
      candidate.low = true;
      candidate.reason = "compute op";
    } else if (candidate.opClass == OpClass::Sensitive) {
      candidate.reason = "sensitive op";
    } else {
      // Follow: low when every non-constant float operand is low (an embedding's gather from
      // a constant table has none: its table is stored low).
      bool any = false, all = true;
      for (Value operand : op->getOperands()) {
        if (!isa<FloatType>(getElementTypeOrSelf(operand.getType())) ||
            operand.getDefiningOp<ConstantOp>())
          continue;
        any = true;
        all &= lowValues.contains(operand);
      }
      candidate.low = all;
      candidate.reason = !all ? "an operand is fp32" : any ? "operands low" : "reads constants";
    }
    // Constants a low op reads are converted once; they must stay finite in the low precision.
    if (candidate.low) {
      for (Value operand : op->getOperands()) {
        auto constant = operand.getDefiningOp<ConstantOp>();
        if (!constant || !isF32Tensor(constant.getType()))
          continue;
        auto [it, inserted] = converted.try_emplace(constant.getOperation());
        if (inserted)
          it->second = convertConstant(constant, low);
        if (it->second.overflow > 0) {
          candidate.low = false;
          candidate.reason =
              llvm::formatv("a constant reaches {0:e}, beyond {1}'s range", it->second.overflow,
                            llvm::StringRef(nameOf(precision.getValue())))
                  .str();
        }
      }
    }
    if (candidate.low)
      for (Value result : op->getResults())
        if (isF32Tensor(result.getType()))
          lowValues.insert(result);
  }
  return success();
}

void AssignPrecision::rewrite(ArrayRef<Candidate> candidates, FloatType low) {
  func::FuncOp function = getOperation();
  Block &body = function.getBody().front();
  Float32Type f32 = Float32Type::get(&getContext());
  llvm::DenseMap<Value, Value> asLow, asHigh;
  llvm::DenseMap<Operation *, bool> lowOps;
  for (const Candidate &candidate : candidates)
    lowOps[candidate.op] = candidate.low;

  // The value of `value` in `element`, cast once right after its definition; an f32 constant
  // read in the low precision is its converted copy (decide() converted it).
  auto castOf = [&](Value value, Type element, llvm::DenseMap<Value, Value> &cache) {
    auto found = cache.find(value);
    if (found != cache.end())
      return found->second;
    OpBuilder builder(&getContext());
    auto constant = value.getDefiningOp<ConstantOp>();
    auto known = constant ? converted.find(constant.getOperation()) : converted.end();
    if (known != converted.end() && known->second.value && element == low) {
      builder.setInsertionPointAfter(constant);
      Value lowConstant =
          ConstantOp::create(builder, value.getLoc(), cast<ElementsAttr>(known->second.value));
      cache[value] = lowConstant;
      return lowConstant;
    }
    if (Operation *definition = value.getDefiningOp())
      builder.setInsertionPointAfter(definition);
    else
      builder.setInsertionPointToStart(&body);
    Value cast = CastOp::create(builder, value.getLoc(), withElement(value.getType(), element),
                                value, TypeAttr::get(element));
    cache[value] = cast;
    return cast;
  };

  // Arguments first: without keep-io-types their type changes, and their uses read the new type.
  if (!keepIoTypes) {
    for (BlockArgument argument : body.getArguments())
      if (isF32Tensor(argument.getType()))
        argument.setType(withElement(argument.getType(), low));
  }

  // Ops in order: a low op reads every float operand in the low precision and produces it; any
  // other op reads f32 where a low value arrives.
  // The casts this inserts are not visited: the ops are taken before any is inserted.
  SmallVector<Operation *> ops = llvm::map_to_vector(body, [](Operation &op) { return &op; });
  for (Operation *opPointer : ops) {
    Operation &op = *opPointer;
    auto found = lowOps.find(&op);
    bool isLow = found != lowOps.end() && found->second;
    for (OpOperand &use : op.getOpOperands()) {
      Value operand = use.get();
      if (isLow && isF32Tensor(operand.getType()))
        use.set(castOf(operand, low, asLow));
      else if (!isLow && lowValues.contains(operand) && !isa<func::ReturnOp>(&op))
        use.set(castOf(operand, f32, asHigh));
    }
    if (isLow)
      for (Value result : op.getResults())
        if (isF32Tensor(result.getType()))
          result.setType(withElement(result.getType(), low));
  }

  // Results: cast back under keep-io-types; otherwise the function returns the low values.
  auto returnOp = cast<func::ReturnOp>(body.getTerminator());
  for (OpOperand &use : returnOp->getOpOperands())
    if (keepIoTypes && lowValues.contains(use.get()))
      use.set(castOf(use.get(), f32, asHigh));
  function.setType(
      FunctionType::get(&getContext(), body.getArgumentTypes(), returnOp.getOperandTypes()));
}

void AssignPrecision::emulateRounding(ArrayRef<Candidate> candidates, FloatType low) {
  func::FuncOp function = getOperation();
  MLIRContext *context = &getContext();
  Float32Type f32 = Float32Type::get(context);
  auto i1 = IntegerType::get(context, 1);
  auto maskType = RankedTensorType::get({static_cast<int64_t>(candidates.size())}, i1);
  unsigned maskIndex = function.getNumArguments();
  if (failed(function.insertArgument(maskIndex, maskType, {}, function.getLoc())))
    return signalPassFailure();
  function.setArgAttr(maskIndex, ::kiln::attrs::kName,
                      StringAttr::get(context, kPrecisionMaskInput));
  Value mask = function.getArgument(maskIndex);
  Block &body = function.getBody().front();

  // round(x) = cast(cast(x, low), f32), once per value.
  llvm::DenseMap<Value, Value> rounded;
  auto roundedOf = [&](OpBuilder &builder, Value value) {
    auto found = rounded.find(value);
    if (found != rounded.end())
      return found->second;
    OpBuilder::InsertionGuard guard(builder);
    if (Operation *definition = value.getDefiningOp())
      builder.setInsertionPointAfter(definition);
    else
      builder.setInsertionPointToStart(&body);
    Value down = CastOp::create(builder, value.getLoc(), withElement(value.getType(), low), value,
                                TypeAttr::get(low));
    Value up = CastOp::create(builder, value.getLoc(), value.getType(), down, TypeAttr::get(f32));
    rounded[value] = up;
    return up;
  };
  auto scalarMask = RankedTensorType::get({}, i1);
  for (auto [index, candidate] : llvm::enumerate(candidates)) {
    Operation *op = candidate.op;
    OpBuilder builder(op);
    Location loc = op->getLoc();
    int64_t i = static_cast<int64_t>(index);
    Value bit = SliceOp::create(
        builder, loc, RankedTensorType::get({1}, i1), mask, builder.getDenseI64ArrayAttr({i}),
        builder.getDenseI64ArrayAttr({i + 1}), builder.getDenseI64ArrayAttr({1}));
    bit = ReshapeOp::create(builder, loc, scalarMask, bit, builder.getDenseI64ArrayAttr({}));
    for (OpOperand &use : op->getOpOperands()) {
      Value operand = use.get();
      if (!isF32Tensor(operand.getType()))
        continue;
      Value round = roundedOf(builder, operand);
      use.set(SelectOp::create(builder, loc, operand.getType(), bit, round, operand));
    }
    builder.setInsertionPointAfter(op);
    for (Value result : op->getResults()) {
      if (!isF32Tensor(result.getType()))
        continue;
      Value down = CastOp::create(builder, loc, withElement(result.getType(), low), result,
                                  TypeAttr::get(low));
      Value up = CastOp::create(builder, loc, result.getType(), down, TypeAttr::get(f32));
      auto select = SelectOp::create(builder, loc, result.getType(), bit, up, result);
      result.replaceAllUsesExcept(
          select, llvm::SmallPtrSet<Operation *, 2>{down.getDefiningOp(), select.getOperation()});
    }
  }
}

void AssignPrecision::markTf32(MutableArrayRef<Candidate> candidates) {
  StringAttr tf32 = StringAttr::get(&getContext(), "tf32");
  for (Candidate &candidate : candidates) {
    if (candidate.opClass != OpClass::Compute) {
      candidate.reason = "not a compute op";
      continue;
    }
    candidate.op->setAttr(::kiln::attrs::kMath, tf32);
    candidate.reason = "TF32 tensor cores in cuBLASLt and cuDNN calls; exact fp32 elsewhere";
  }
}

void AssignPrecision::record(ArrayRef<Candidate> candidates, llvm::StringRef lowName) {
  SmallVector<Attribute> lines;
  for (auto [index, candidate] : llvm::enumerate(candidates)) {
    std::string node = nodeName(candidate.op);
    bool low = candidate.low || (lowName == "tf32" && candidate.opClass == OpClass::Compute);
    lines.push_back(StringAttr::get(
        &getContext(),
        llvm::formatv("{0,4}  {1,-5}  {2,-10} {3,-24} {4}  ({5})", index,
                      low ? lowName : llvm::StringRef("fp32"), className(candidate.opClass),
                      candidate.op->getName().getStringRef(), node.empty() ? "-" : node,
                      candidate.reason.empty() ? (low ? "low" : "high") : candidate.reason)
            .str()));
  }
  getOperation()->setAttr(kPrecisionReportAttr, ArrayAttr::get(&getContext(), lines));
}

} // namespace
