//===- SelectLibraryCalls.cpp - Convolutions and matrix products to vendor libraries -===//
//
// Replaces graph.conv, graph.matmul and graph.gemm with calls of library-call declarations
// (oneDNN on the CPU, cuDNN and cuBLASLt on CUDA) and proposes their single-use elementwise
// epilogues (bias and residual adds, ReLU and clips, scales by constants, GELU, SiLU, a widening
// cast) to the fusion planner (compiler/fusion/Epilogues.h) step by step, as far as the target's
// library fuses them; the steps it takes become the calls' post-ops. What is common to every
// target lives here; each target's description and pass in CpuLibraryCalls.cpp and
// CudaLibraryCalls.cpp, attention in PlanAttention.cpp. The parameter encoding is the
// contract's (contract/library_calls.h).
//
//===----------------------------------------------------------------------===//

#include "compiler/fusion/Epilogues.h"
#include "dialects/kiln/KilnAttributes.h"

#include "compiler/librarycalls/CallPlan.h"
#include "compiler/librarycalls/Declarations.h"
#include "compiler/librarycalls/Passes.h"
#include "compiler/librarycalls/StridedOperands.h"
#include "contract/library_calls.h"
#include "contract/matrix_layout.h"
#include "dialects/graph/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/SymbolTable.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/Twine.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

using namespace mlir;

namespace kiln::librarycalls {

/// The element type every operand and result of `op` has, when all are static tensors of one
/// (or, with `dynamicBatch`, static but for their first dimension: a convolution of a program
/// for a range of batches, whose calls the runtime sets up per shape; with `anyDynamic`, of any
/// shape: a product over a dynamic batch and sequence); null otherwise.
Type staticUniformElementType(Operation *op, bool dynamicBatch, bool anyDynamic) {
  Type element;
  auto uniform = [&](Type type) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    if (!tensor)
      return false;
    ArrayRef<int64_t> shape = tensor.getShape();
    auto isStatic = [](int64_t dim) { return !ShapedType::isDynamic(dim); };
    bool static_ =
        tensor.hasStaticShape() || anyDynamic ||
        (dynamicBatch && tensor.getRank() > 0 && llvm::all_of(shape.drop_front(), isStatic));
    if (!static_)
      return false;
    if (!element)
      element = tensor.getElementType();
    return tensor.getElementType() == element;
  };
  if (!llvm::all_of(op->getOperandTypes(), uniform) || !llvm::all_of(op->getResultTypes(), uniform))
    return Type();
  return element;
}

bool isHalfPrecision(Type element) { return element && (element.isF16() || element.isBF16()); }

/// Whether the target's library computes in `element`.
bool takes(const Target &target, Type element) {
  return element &&
         (element.isF32() || (element.isF16() && target.f16) || (element.isBF16() && target.bf16));
}

/// Whether every operand and result of `op` is a static tensor of one element type the target's
/// library computes in.
static bool hasStaticLibraryTypes(Operation *op, const Target &target, bool dynamicBatch = false,
                                  bool anyDynamic = false) {
  return takes(target, staticUniformElementType(op, dynamicBatch, anyDynamic));
}

/// The value of `value` when it is a splat f32, f16 or bf16 graph.constant other than NaN.
std::optional<float> splatConstant(Value value) {
  auto constant = value.getDefiningOp<graph::ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto dense = dyn_cast<DenseFPElementsAttr>(constant.getValue());
  Type element = dense ? dense.getElementType() : Type();
  if (!dense || !dense.isSplat() || !(element.isF32() || element.isF16() || element.isBF16()))
    return std::nullopt;
  APFloat splatValue = dense.getSplatValue<APFloat>();
  bool lost = false;
  splatValue.convert(APFloat::IEEEsingle(), APFloat::rmNearestTiesToEven, &lost);
  float splat = splatValue.convertToFloat();
  if (std::isnan(splat))
    return std::nullopt;
  return splat;
}

/// Classifies how `addend` broadcasts to `result` (right-aligned, NumPy rules).
Broadcast classifyAddend(RankedTensorType addend, RankedTensorType result, int64_t biasAxis) {
  ArrayRef<int64_t> dims = result.getShape();
  if (addend.getRank() > result.getRank())
    return Broadcast::None;
  SmallVector<int64_t> aligned(result.getRank() - addend.getRank(), 1);
  llvm::append_range(aligned, addend.getShape());
  if (ArrayRef<int64_t>(aligned) == dims)
    return Broadcast::Full;
  auto onlyAxis = [&](int64_t axis) {
    for (int64_t d = 0; d < result.getRank(); ++d)
      if (aligned[d] != 1 && (d != axis || aligned[d] != dims[d]))
        return false;
    return true;
  };
  if (onlyAxis(-1))
    return Broadcast::Scalar;
  if (onlyAxis(biasAxis))
    return Broadcast::BiasAxis;
  // A per-row addend (M x 1) of a plain matrix product.
  if (result.getRank() == 2 && biasAxis == 1 && onlyAxis(0))
    return Broadcast::Rows;
  return Broadcast::None;
}

/// `value` as a rank-1 bias of `size` elements: itself when it already is one, a reshaped copy
/// of a constant, or null.
static Value asBias(OpBuilder &builder, Value value, int64_t size) {
  auto type = cast<RankedTensorType>(value.getType());
  if (type.getRank() == 1)
    return value;
  auto constant = value.getDefiningOp<graph::ConstantOp>();
  if (!constant)
    return Value();
  auto biasType = RankedTensorType::get({size}, type.getElementType());
  Attribute reshaped;
  if (auto dense = dyn_cast<DenseElementsAttr>(constant.getValue()))
    reshaped = dense.reshape(biasType);
  else if (auto resource = dyn_cast<DenseResourceElementsAttr>(constant.getValue()))
    reshaped = DenseResourceElementsAttr::get(biasType, resource.getRawHandle());
  if (!reshaped)
    return Value();
  return graph::ConstantOp::create(builder, constant.getLoc(), cast<ElementsAttr>(reshaped));
}

/// Appends `graph.max(x, low)` (`isMax`) or `graph.min(x, high)` to the epilogue, tightening a
/// relu or clip right before it into one clip.
static void appendBound(CallPlan &plan, bool isMax, float bound) {
  auto lastIs = [&](PostOp kind) { return !plan.postOps.empty() && plan.postOps.back() == kind; };
  if (isMax) {
    if (lastIs(PostOp::Clip) && plan.postOpArgs.end()[-2] == -kInfinity &&
        bound <= plan.postOpArgs.back()) {
      plan.postOpArgs.end()[-2] = bound;
      return;
    }
    if (bound == 0.0f) {
      plan.postOps.push_back(PostOp::Relu);
      return;
    }
    plan.postOps.push_back(PostOp::Clip);
    plan.postOpArgs.append({bound, kInfinity});
    return;
  }
  if (lastIs(PostOp::Relu) && bound >= 0.0f) {
    plan.postOps.back() = PostOp::Clip;
    plan.postOpArgs.append({0.0f, bound});
    return;
  }
  if (lastIs(PostOp::Clip) && plan.postOpArgs.back() == kInfinity &&
      bound >= plan.postOpArgs.end()[-2]) {
    plan.postOpArgs.back() = bound;
    return;
  }
  plan.postOps.push_back(PostOp::Clip);
  plan.postOpArgs.append({-kInfinity, bound});
}

/// Whether every eltwise post-op of one kind has the same parameters. oneDNN 2.6 keeps one
/// injector per eltwise algorithm in a fused kernel, so a second post-op of a kind would run with
/// the first one's parameters.
bool eltwiseParametersAgree(const CallPlan &plan) {
  llvm::SmallDenseMap<unsigned, std::pair<float, float>> seen;
  size_t next = 0;
  for (PostOp kind : plan.postOps) {
    if (kind == PostOp::Add)
      continue;
    std::pair<float, float> args{0.0f, 0.0f};
    if (contract::postOpArgCount(kind) == 2) {
      args = {plan.postOpArgs[next], plan.postOpArgs[next + 1]};
      next += 2;
    }
    auto [it, inserted] = seen.try_emplace(static_cast<unsigned>(kind), args);
    if (!inserted && it->second != args)
      return false;
  }
  return true;
}

/// Adds `addend` to the epilogue: as the bias when it is the first epilogue step of a call
/// without one, as a shift when it is a splat constant, otherwise as an `add` post-op. Fails
/// when oneDNN cannot broadcast it.
static LogicalResult appendAddend(OpBuilder &builder, CallPlan &plan, Value addend) {
  auto resultType = cast<RankedTensorType>(plan.result.getType());
  auto addendType = dyn_cast<RankedTensorType>(addend.getType());
  if (!addendType || addendType.getElementType() != resultType.getElementType())
    return failure();
  if (!addendType.hasStaticShape()) {
    // A convolution over a dynamic batch (set up per shape) adds a residual of its result's
    // shape; the runtime checks that their batches agree (the same symbol).
    if (plan.name != contract::callee::kOneDnnConvolution ||
        addendType.getShape() != resultType.getShape())
      return failure();
    plan.postOps.push_back(PostOp::Add);
    plan.addends.push_back(addend);
    return success();
  }
  Broadcast broadcast =
      classifyAddend(cast<RankedTensorType>(addend.getType()), resultType, plan.biasAxis);
  if (broadcast == Broadcast::None)
    return failure();
  // A rank-1 addend along the bias axis is a bias even where it also covers the whole result
  // (a gemm's C of shape N with M = 1).
  bool biasShaped = addendType.getRank() == 1 && plan.biasAxis == resultType.getRank() - 1 &&
                    addendType.getDimSize(0) == resultType.getDimSize(plan.biasAxis);
  // The bias is the first epilogue step, or, where the library adds it after scaling the
  // product, the first after that scale.
  bool biasNext =
      plan.postOps.empty() || (plan.target->biasAfterScale && plan.postOps.size() == 1 &&
                               plan.postOps[0] == PostOp::Linear);
  if ((broadcast == Broadcast::BiasAxis || biasShaped) && !plan.hasBias && biasNext) {
    if (Value bias = asBias(builder, addend, resultType.getDimSize(plan.biasAxis))) {
      plan.operands.push_back(bias);
      plan.hasBias = true;
      return success();
    }
  }
  if (broadcast == Broadcast::Scalar) {
    if (std::optional<float> shift = splatConstant(addend)) {
      plan.postOps.push_back(PostOp::Linear);
      plan.postOpArgs.append({1.0f, *shift});
      if (eltwiseParametersAgree(plan))
        return success();
      plan.postOps.pop_back();
      plan.postOpArgs.pop_back_n(2);
    }
  }
  plan.postOps.push_back(PostOp::Add);
  plan.addends.push_back(addend);
  return success();
}

/// The elementwise ops a GELU or SiLU may be written with, evaluated on one value; nothing for
/// others.
static std::optional<double> evaluateElementwise(Operation *op, ArrayRef<double> operands) {
  StringRef name = op->getName().getStringRef();
  if (operands.size() == 2) {
    double a = operands[0], b = operands[1];
    if (name == "graph.add")
      return a + b;
    if (name == "graph.sub")
      return a - b;
    if (name == "graph.mul")
      return a * b;
    if (name == "graph.div")
      return a / b;
    if (name == "graph.pow")
      return std::pow(a, b);
    return std::nullopt;
  }
  if (operands.size() == 1) {
    double a = operands[0];
    if (name == "graph.tanh")
      return std::tanh(a);
    if (name == "graph.erf")
      return std::erf(a);
    if (name == "graph.neg")
      return -a;
    if (name == "graph.sqrt")
      return std::sqrt(a);
    if (name == "graph.exp")
      return std::exp(a);
    if (name == "graph.sigmoid")
      return 1.0 / (1.0 + std::exp(-a));
  }
  return std::nullopt;
}

/// The activation that elementwise ops reading `x` compute, whatever order and association the
/// exporter wrote it in, with those ops in block order (the last one's result is the
/// activation of x): "gelu_erf" for x (1 + erf(x / sqrt 2)) / 2, "gelu_tanh" for GELU's tanh
/// approximation, "swish" for SiLU, x sigmoid(x) (`x * Sigmoid(x)` as exporters write it). The
/// candidates are the elementwise ops after `x` computing from `x`, each other and splat
/// constants only; each candidate result is tried with the ops it depends on, which must be
/// every reader of `x` and read only by each other. They are recognized by evaluating them where
/// the two forms (and anything else) differ, within what the constants' precision allows: in
/// bf16, 1 / sqrt 2 and tanh's constants are off by up to 2e-3 (relative), more than the two forms
/// differ, so there the form is the one whose function (erf or tanh) the ops hold.
static std::pair<StringRef, SmallVector<Operation *>> matchActivation(Value x) {
  constexpr size_t kMaxOps = 16;
  Operation *definer = x.getDefiningOp();
  if (!definer || x.use_empty())
    return {};
  llvm::SetVector<Operation *> cone;
  for (Operation *op = definer->getNextNode(); op && cone.size() < kMaxOps;
       op = op->getNextNode()) {
    if (op->getNumResults() != 1 || op->getResult(0).getType() != x.getType() ||
        op->getNumOperands() < 1 || op->getNumOperands() > 2 ||
        !isa<graph::GraphDialect>(op->getDialect()))
      continue;
    bool computesFromX = false, closed = true;
    for (Value operand : op->getOperands()) {
      if (operand == x || cone.contains(operand.getDefiningOp()))
        computesFromX = true;
      else if (!splatConstant(operand))
        closed = false;
    }
    if (computesFromX && closed)
      cone.insert(op);
  }
  auto evaluate = [&](ArrayRef<Operation *> ops, double at) -> std::optional<double> {
    llvm::DenseMap<Operation *, double> values;
    for (Operation *op : ops) {
      SmallVector<double> operands;
      for (Value operand : op->getOperands()) {
        if (operand == x)
          operands.push_back(at);
        else if (auto found = values.find(operand.getDefiningOp()); found != values.end())
          operands.push_back(found->second);
        else
          operands.push_back(*splatConstant(operand));
      }
      std::optional<double> result = evaluateElementwise(op, operands);
      if (!result)
        return std::nullopt;
      values[op] = *result;
    }
    return values[ops.back()];
  };
  auto geluErf = [](double v) { return 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))); };
  auto geluTanh = [](double v) {
    return 0.5 * v * (1.0 + std::tanh(std::sqrt(2.0 / M_PI) * (v + 0.044715 * v * v * v)));
  };
  auto swish = [](double v) { return v / (1.0 + std::exp(-v)); };
  for (Operation *last : cone) {
    // The ops `last` depends on, in block order.
    llvm::SmallPtrSet<Operation *, 16> slice{last};
    for (Operation *op : llvm::reverse(cone))
      if (slice.contains(op))
        for (Value operand : op->getOperands())
          if (Operation *producer = operand.getDefiningOp(); cone.contains(producer))
            slice.insert(producer);
    SmallVector<Operation *> ops;
    for (Operation *op : cone)
      if (slice.contains(op))
        ops.push_back(op);
    bool whole = llvm::all_of(x.getUsers(), [&](Operation *user) { return slice.contains(user); });
    for (Operation *op : ops)
      if (op != last)
        whole &=
            llvm::all_of(op->getUsers(), [&](Operation *user) { return slice.contains(user); });
    if (!whole)
      continue;
    // The constants' rounding bounds how far the ops may be from the exact form.
    Type element = cast<RankedTensorType>(x.getType()).getElementType();
    double tolerance = element.isBF16() ? 1e-2 : element.isF16() ? 2e-3 : 1e-5;
    // Past the two forms' 5e-4 difference, the function the ops hold tells them apart (tanh's
    // form may be written with a sigmoid: (1 + tanh z) / 2 = sigmoid(2z)).
    bool byFunction = tolerance > 1e-4;
    bool erfForm =
        !byFunction || llvm::any_of(ops, [](Operation *op) { return isa<graph::ErfOp>(op); });
    bool tanhForm = !byFunction || llvm::any_of(ops, [](Operation *op) {
      return isa<graph::TanhOp, graph::SigmoidOp>(op);
    });
    bool swishForm = true;
    for (double at : {-6.0, -3.0, -1.5, -0.7, -0.2, 0.0, 0.3, 0.9, 1.7, 2.5, 5.0}) {
      std::optional<double> value = evaluate(ops, at);
      if (!value) {
        erfForm = tanhForm = swishForm = false;
        break;
      }
      auto near = [&](double expected) {
        return std::abs(*value - expected) <= tolerance * std::max(1.0, std::abs(expected));
      };
      erfForm &= near(geluErf(at));
      tanhForm &= near(geluTanh(at));
      swishForm &= near(swish(at));
    }
    // SiLU differs from both GELUs by 0.1 and more at these points.
    if (swishForm)
      return {"swish", ops};
    // The two forms differ by up to 5e-4 at these points: at most one matches.
    if (erfForm != tanhForm)
      return {erfForm ? "gelu_erf" : "gelu_tanh", ops};
  }
  return {};
}

/// Replaces the plan's bias (its last operand) by the same f32 constant times `factor`, created
/// before `at`; fails for a bias that is no f32 constant with its bytes at hand.
static LogicalResult scaleBias(OpBuilder &builder, CallPlan &plan, Operation *at, float factor) {
  auto constant = plan.operands.back().getDefiningOp<graph::ConstantOp>();
  auto type = constant ? dyn_cast<RankedTensorType>(constant.getType()) : RankedTensorType();
  if (!type || !type.getElementType().isF32())
    return failure();
  SmallVector<float> values;
  if (auto dense = dyn_cast<DenseFPElementsAttr>(constant.getValue()); dense && dense.isSplat()) {
    values.assign(type.getNumElements(), dense.getSplatValue<float>());
  } else if (std::optional<ArrayRef<char>> bytes = graph::rawConstantData(constant.getValue())) {
    values.resize(bytes->size() / sizeof(float));
    std::memcpy(values.data(), bytes->data(), values.size() * sizeof(float));
  } else {
    return failure();
  }
  for (float &value : values)
    value *= factor;
  builder.setInsertionPoint(at);
  ArrayRef<char> scaled(reinterpret_cast<const char *>(values.data()),
                        values.size() * sizeof(float));
  plan.operands.back() = graph::ConstantOp::create(
      builder, constant.getLoc(), type,
      graph::rawConstantLike(constant.getValue(), type, scaled, "_scaled"));
  return success();
}

/// Appends a scale by `factor` to the epilogue: it scales a `linear` right before it, or becomes
/// `linear(factor, 0)`.
static void appendScale(CallPlan &plan, float factor) {
  if (!plan.postOps.empty() && plan.postOps.back() == PostOp::Linear) {
    plan.postOpArgs.end()[-2] *= factor;
    plan.postOpArgs.end()[-1] *= factor;
    return;
  }
  plan.postOps.push_back(PostOp::Linear);
  plan.postOpArgs.append({factor, 0.0f});
}

/// Whether `op` is of a kind a call's epilogue may take with another operand: a bound (max,
/// min), an add (bias, residual, shift) or a scale (mul, div).
static bool isBinaryEpilogueOp(Operation *op) {
  return isa<graph::MaxOp, graph::MinOp, graph::AddOp, graph::MulOp, graph::DivOp>(op);
}

/// Whether a generated kernel computes `op` inside its readers: each element from its operands'
/// (broadcast) elements alone.
static bool computedInReaders(Operation *op) {
  return graph::isElementwise(op) || isa<graph::ExpandOp>(op);
}

/// What the planner weighs a step against out of the call: whether its result's one reader is a
/// generated kernel's op (elementwise, a reduction, a normalization), and whether its operand is
/// computed for it alone by an elementwise op, which that kernel would compute instead of
/// reading it.
static void describeSurroundings(fusion::EpilogueStep &step) {
  Value result = step.ops.back()->getResult(0);
  if (result.hasOneUse()) {
    Operation *reader = *result.getUsers().begin();
    step.readerFuses =
        computedInReaders(reader) ||
        isa<graph::SoftmaxOp, graph::LogSoftmaxOp, graph::LayerNormOp, graph::ReduceSumOp,
            graph::ReduceMeanOp, graph::ReduceMaxOp, graph::ReduceMinOp>(reader);
  }
  if (Operation *producer = step.operand ? step.operand.getDefiningOp() : nullptr;
      producer && step.operand.hasOneUse() && computedInReaders(producer))
    step.operandProducer = producer;
}

/// The chain of ops the planner takes into the call after its anchor (single-use max / min /
/// add, scales by constants, a widening cast, GELU or SiLU), a step at a time, each as far as
/// the library takes it and the cost model says it pays (compiler/fusion/Epilogues.h).
static void fuseEpilogue(OpBuilder &builder, CallPlan &plan, fusion::EpiloguePlanner &planner) {
  planner.begin(plan.name, plan.anchor);
  const Target &target = *plan.target;
  // Takes the step the plan now ends with, or restores `before`.
  auto decide = [&](CallPlan &before, fusion::EpilogueStep step) {
    std::string why;
    if (!target.supports(plan, why)) {
      plan = std::move(before);
      planner.refuse(step, why);
      return false;
    }
    describeSurroundings(step);
    if (!planner.take(step)) {
      plan = std::move(before);
      return false;
    }
    llvm::append_range(plan.fused, step.ops);
    plan.result = step.ops.back()->getResult(0);
    return true;
  };
  while (true) {
    CallPlan before = plan;
    if (auto [form, activation] = matchActivation(plan.result); !activation.empty()) {
      fusion::EpilogueStep step{form, plan.result, activation, Value()};
      std::optional<PostOp> kind = form == "gelu_erf"    ? target.geluErf
                                   : form == "gelu_tanh" ? target.geluTanh
                                                         : target.swish;
      if (!kind) {
        planner.refuse(step, form == "gelu_erf" && target.geluTanh && plan.name == target.matmul
                                 ? llvm::formatv("{0}'s GELU is the tanh approximation, not "
                                                 "the erf form",
                                                 plan.name)
                                       .str()
                                 : llvm::formatv("{0} takes no {1}", plan.name, form).str());
        break;
      }
      plan.postOps.push_back(*kind);
      if (!decide(before, step))
        break;
      continue;
    }
    if (!plan.result.hasOneUse()) {
      // A call writes one value: an epilogue op beside other readers would leave them without
      // the value before it.
      for (Operation *user : plan.result.getUsers())
        if (isBinaryEpilogueOp(user) && user->getResult(0).getType() == plan.result.getType()) {
          planner.refuse({"", plan.result, {user}, Value()},
                         llvm::formatv("the value before it has {0} readers",
                                       llvm::range_size(plan.result.getUsers()))
                             .str());
          break;
        }
      break;
    }
    Operation *user = *plan.result.getUsers().begin();
    if (user->getBlock() != plan.anchor->getBlock())
      break;
    // A bf16 product whose result is cast to f32 (a low op feeding an fp32 one, such as the
    // residual stream of a half-precision transformer) writes f32 itself: the cast is not a
    // kernel, the rounding to bf16 is skipped, and what follows (the residual add) can join
    // the epilogue.
    if (auto widen = dyn_cast<graph::CastOp>(user)) {
      auto from = cast<RankedTensorType>(plan.result.getType());
      auto to = cast<RankedTensorType>(widen.getType());
      if (plan.widened || !from.getElementType().isBF16() || !to.getElementType().isF32() ||
          from.getShape() != to.getShape())
        break;
      fusion::EpilogueStep step{"f32 result", plan.result, {user}, Value()};
      if (!target.f32Result) {
        planner.refuse(step, llvm::formatv("{0} writes its operands' type", plan.name).str());
        break;
      }
      plan.widened = true;
      if (!decide(before, step))
        break;
      continue;
    }
    if (!isBinaryEpilogueOp(user))
      break;
    // The result keeps the call's shape: the other operand broadcasts into it.
    if (user->getResult(0).getType() != plan.result.getType())
      break;
    Value other = user->getOperand(0) == plan.result ? user->getOperand(1) : user->getOperand(0);
    if (other == plan.result)
      break;
    fusion::EpilogueStep step{"", plan.result, {user}, Value()};
    if (isa<graph::AddOp>(user)) {
      builder.setInsertionPoint(user);
      if (failed(appendAddend(builder, plan, other))) {
        planner.refuse(step, llvm::formatv("{0} cannot add {1} to a result of {2}", plan.name,
                                           other.getType(), plan.result.getType())
                                 .str());
        break;
      }
      step.kind = plan.hasBias && !before.hasBias
                      ? StringRef("bias")
                      : StringRef(contract::postOpName(plan.postOps.back()));
      // A splat shift is a parameter of the call, not a tensor it reads.
      step.operand = step.kind == contract::postOpName(PostOp::Linear) ? Value() : other;
    } else if (isa<graph::MulOp, graph::DivOp>(user)) {
      // A scale by a constant: x * c, c * x, x / c (x * (1 / c), within a rounding of x / c).
      std::optional<float> factor = splatConstant(other);
      bool divides = isa<graph::DivOp>(user);
      if (!factor || (divides && user->getOperand(0) != plan.result))
        break;
      float scale = divides ? 1.0f / *factor : *factor;
      step.kind = "scale";
      if (!std::isfinite(scale) || scale == 0.0f) {
        planner.refuse(step, "a scale by 0 or by a factor f32 cannot hold");
        break;
      }
      // Where the library scales the product before adding the bias, a scale after the bias
      // scales the bias too: a constant bias is scaled here.
      if (target.biasAfterScale && plan.hasBias) {
        if (!plan.postOps.empty() || failed(scaleBias(builder, plan, user, scale))) {
          planner.refuse(step, "cuBLASLt's alpha scales the product alone, before its bias "
                               "(a bias that is no f32 constant is not scaled with it)");
          break;
        }
      }
      appendScale(plan, scale);
    } else {
      std::optional<float> bound = splatConstant(other);
      if (!bound)
        break;
      appendBound(plan, isa<graph::MaxOp>(user), *bound);
      step.kind = contract::postOpName(plan.postOps.back());
    }
    if (!decide(before, step))
      break;
  }
  planner.end();
}

/// A plan for `anchor` as a call of `name` with `operands`, before any epilogue.
CallPlan startPlan(const Target &target, StringRef name, Operation *anchor, int64_t biasAxis,
                   ArrayRef<Value> operands) {
  CallPlan plan;
  plan.target = &target;
  plan.name = name;
  plan.anchor = anchor;
  plan.biasAxis = biasAxis;
  plan.operands.assign(operands.begin(), operands.end());
  plan.result = anchor->getResult(0);
  return plan;
}

/// Plans a convolution call, or fails for one the runtime does not take.
static FailureOr<CallPlan> planConvolution(graph::ConvOp conv, const Target &target) {
  auto inputType = cast<RankedTensorType>(conv.getInput().getType());
  // Convolutions are set up per shape at run time (oneDNN's primitives, cuDNN's plans): a
  // dynamic batch is theirs to take.
  if (!hasStaticLibraryTypes(conv, target, /*dynamicBatch=*/true) || inputType.getRank() < 3 ||
      inputType.getRank() > 5)
    return failure();
  Builder b(conv.getContext());
  CallPlan plan =
      startPlan(target, target.convolution, conv, 1, {conv.getInput(), conv.getFilter()});
  if (conv.getBias()) {
    plan.operands.push_back(conv.getBias());
    plan.hasBias = true;
  }
  plan.attributes = {
      b.getNamedAttr(contract::param::kStrides.name, conv.getStridesAttr()),
      b.getNamedAttr(contract::param::kDilations.name, conv.getDilationsAttr()),
      b.getNamedAttr(contract::param::kPadsBegin.name, conv.getPadLowAttr()),
      b.getNamedAttr(contract::param::kPadsEnd.name, conv.getPadHighAttr()),
      b.getNamedAttr(contract::param::kGroups.name, b.getI64IntegerAttr(conv.getGroups()))};
  return plan;
}

/// Plans a max or average pooling call (NCHW, 1 to 3 spatial dims) for a pool with padding: the
/// library reads the padding as absent, where a generated kernel reads a padded copy of its input
/// (a step and a buffer of its own). A pool without padding stays a generated kernel, which reads
/// its input in place and takes the elementwise ops before it (a batch norm and ReLU) along.
/// Ceil mode becomes a larger end padding; an average that counts the padding keeps its
/// generated kernel there (the positions ceil mode adds are not counted).
template <typename PoolOp>
static FailureOr<CallPlan> planPooling(PoolOp pool, const Target &target) {
  auto inputType = cast<RankedTensorType>(pool.getInput().getType());
  auto resultType = cast<RankedTensorType>(pool.getType());
  bool dynamicBatch = target.pooling == contract::callee::kOneDnnPooling;
  if (target.pooling.empty() || !hasStaticLibraryTypes(pool, target, dynamicBatch) ||
      inputType.getRank() < 3 || inputType.getRank() > 5 || pool.getChannelsLast())
    return failure();
  bool isMax = std::is_same_v<PoolOp, graph::MaxPoolOp>;
  bool countPad = false;
  if constexpr (std::is_same_v<PoolOp, graph::AvgPoolOp>)
    countPad = pool.getCountIncludePad();
  ArrayRef<int64_t> kernel = pool.getKernelShape(), strides = pool.getStrides(),
                    dilations = pool.getDilations(), padLow = pool.getPadLow(),
                    padHigh = pool.getPadHigh();
  SmallVector<int64_t> padEnd;
  for (size_t i = 0; i < kernel.size(); ++i) {
    int64_t in = inputType.getDimSize(i + 2), out = resultType.getDimSize(i + 2);
    int64_t window = (kernel[i] - 1) * dilations[i] + 1;
    int64_t reach = (out - 1) * strides[i] + window;
    int64_t extra = std::max<int64_t>(0, reach - (in + padLow[i] + padHigh[i]));
    // Every window holds an input element (a window of padding only has no defined maximum).
    if ((extra > 0 && countPad) || padLow[i] >= window || padHigh[i] + extra >= window)
      return failure();
    padEnd.push_back(padHigh[i] + extra);
  }
  if (llvm::all_of(padLow, [](int64_t p) { return p == 0; }) &&
      llvm::all_of(padEnd, [](int64_t p) { return p == 0; }))
    return failure();
  Builder b(pool.getContext());
  StringRef kind = contract::poolingKindName(isMax      ? contract::PoolingKind::Max
                                             : countPad ? contract::PoolingKind::AvgIncludePad
                                                        : contract::PoolingKind::AvgExcludePad);
  CallPlan plan = startPlan(target, target.pooling, pool, 1, {pool.getInput()});
  plan.attributes = {
      b.getNamedAttr(contract::param::kPoolingKind.name, b.getStrArrayAttr({kind})),
      b.getNamedAttr(contract::param::kKernel.name, pool.getKernelShapeAttr()),
      b.getNamedAttr(contract::param::kStrides.name, pool.getStridesAttr()),
      b.getNamedAttr(contract::param::kDilations.name, pool.getDilationsAttr()),
      b.getNamedAttr(contract::param::kPadsBegin.name, pool.getPadLowAttr()),
      b.getNamedAttr(contract::param::kPadsEnd.name, b.getDenseI64ArrayAttr(padEnd))};
  return plan;
}

static FailureOr<CallPlan> planMatmul(graph::MatmulOp matmul, const Target &target) {
  auto lhs = cast<RankedTensorType>(matmul.getLhs().getType());
  auto rhs = cast<RankedTensorType>(matmul.getRhs().getType());
  // Products over a dynamic batch and sequence (projections and attention's) are the library's
  // to take: the runtime sets them up per shape (oneDNN's primitives, cuBLASLt's plans).
  if (!hasStaticLibraryTypes(matmul, target, /*dynamicBatch=*/true, /*anyDynamic=*/true) ||
      lhs.getRank() < 2 || rhs.getRank() < 2)
    return failure();
  if (!target.partialBatchBroadcast) {
    // Each operand's batch dimensions (right-aligned) must be all of the result's or all 1.
    auto result = cast<RankedTensorType>(matmul.getType());
    int64_t batchRank = result.getRank() - 2;
    for (RankedTensorType operand : {lhs, rhs}) {
      int64_t offset = batchRank - (operand.getRank() - 2);
      bool all = true, none = true;
      for (int64_t i = 0; i < batchRank; ++i) {
        int64_t size = i < offset ? 1 : operand.getDimSize(i - offset);
        all &= size == result.getDimSize(i);
        none &= size == 1;
      }
      if (!all && !none)
        return failure();
    }
  }
  return startPlan(target, target.matmul, matmul,
                   cast<RankedTensorType>(matmul.getType()).getRank() - 1,
                   {matmul.getLhs(), matmul.getRhs()});
}

/// Gemm: `alpha * op(a) op(b) + beta * c` as a bias or post-ops (see the pass description).
static FailureOr<CallPlan> planGemm(OpBuilder &builder, graph::GemmOp gemm, const Target &target) {
  if (!hasStaticLibraryTypes(gemm, target))
    return failure();
  Builder b(gemm.getContext());
  CallPlan plan = startPlan(target, target.matmul, gemm, 1, {gemm.getA(), gemm.getB()});
  if (gemm.getTransA())
    plan.attributes.push_back(b.getNamedAttr(contract::param::kTransA.name, b.getBoolAttr(true)));
  if (gemm.getTransB())
    plan.attributes.push_back(b.getNamedAttr(contract::param::kTransB.name, b.getBoolAttr(true)));
  float alpha = gemm.getAlpha().convertToFloat(), beta = gemm.getBeta().convertToFloat();
  Value c = gemm.getC();
  if (!c || beta == 0.0f) {
    if (alpha != 1.0f) {
      plan.postOps.push_back(PostOp::Linear);
      plan.postOpArgs.append({alpha, 0.0f});
    }
    std::string why;
    if (!target.supports(plan, why))
      return failure();
    return plan;
  }
  if (alpha != 1.0f) {
    plan.postOps.push_back(PostOp::Linear);
    plan.postOpArgs.append({alpha, 0.0f});
  }
  builder.setInsertionPoint(gemm);
  Operation *scaled = nullptr;
  if (beta != 1.0f) {
    // beta * c is computed before the call: oneDNN 2.6 applies the parameters of the first
    // eltwise post-op to every later one when a binary post-op sits between them, and cuBLASLt's
    // own beta would leave a bias-shaped C out of its epilogue.
    auto cType = cast<RankedTensorType>(c.getType());
    auto scalarType = RankedTensorType::get({}, cType.getElementType());
    Value factor = graph::ConstantOp::create(
        builder, gemm.getLoc(),
        cast<ElementsAttr>(DenseElementsAttr::get(
            scalarType, ArrayRef<Attribute>{builder.getFloatAttr(cType.getElementType(), beta)})));
    scaled = graph::MulOp::create(builder, gemm.getLoc(), cType, c, factor);
    c = scaled->getResult(0);
  }
  std::string why;
  if (failed(appendAddend(builder, plan, c)) || !target.supports(plan, why)) {
    if (scaled) {
      Operation *factor = scaled->getOperand(1).getDefiningOp();
      scaled->erase();
      factor->erase();
    }
    return failure();
  }
  return plan;
}

/// Reads a matrix product's operands and writes its result through strides where transposes,
/// slices and splits (and the reshapes between them) move the data: attention's Q, K and V out
/// of the fused projection, Kᵀ, and the heads merged back. The operand becomes the value the
/// data comes from and `a_view` / `b_view` / `dst_view` say how to index it; cuBLASLt takes only
/// what its matrix layouts express (unit stride in one of the last two dimensions, the batch
/// dimensions nesting as one stride). A result with an `add` post-op keeps its layout (the addend
/// is indexed as the result is).
static void absorbDataMovement(CallPlan &plan) {
  // A product over a dynamic batch reads its operands as they lie: views are static strides.
  auto isDynamic = [](Value value) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    return type && !type.hasStaticShape();
  };
  if (llvm::any_of(plan.operands, isDynamic) || isDynamic(plan.result))
    return;
  if (!isa<graph::MatmulOp>(plan.anchor))
    return;
  Builder b(plan.anchor->getContext());
  // The farthest view the library takes. oneDNN takes any strides, but writes a result whose
  // rows are not contiguous (ConvNeXt's linear layers written back through the permute to
  // channels-first) only with its reference matmul, seconds where its own kernels take
  // milliseconds: such a result keeps its layout and the transpose stays a kernel.
  auto takes = [&](const StridedView &view, bool isResult) {
    if (plan.target->matrixLayoutsOnly)
      return isMatrixLayout(view, isResult);
    return !isResult || view.dims.empty() || view.dims.back() == 1 || view.strides.back() == 1;
  };
  auto choose = [&](ArrayRef<StridedView> candidates, bool isResult) -> const StridedView * {
    for (const StridedView &view : llvm::reverse(candidates))
      if (takes(view, isResult))
        return &view;
    return nullptr;
  };
  const StringRef kOperandViews[] = {contract::param::kAView.name, contract::param::kBView.name};
  for (auto [index, name] : llvm::enumerate(kOperandViews)) {
    SmallVector<StridedView> candidates = traceOperand(plan.operands[index]);
    const StridedView *view = choose(candidates, /*isResult=*/false);
    if (!view)
      continue;
    plan.operands[index] = view->base;
    plan.attributes.push_back(b.getNamedAttr(name, b.getDenseI64ArrayAttr(view->encode())));
    llvm::append_range(plan.readThrough, view->through);
  }
  if (!plan.addends.empty())
    return;
  SmallVector<StridedView> candidates = traceResult(plan.result);
  const StridedView *view = choose(candidates, /*isResult=*/true);
  if (!view)
    return;
  plan.written = view->base;
  plan.attributes.push_back(
      b.getNamedAttr(contract::param::kDstView.name, b.getDenseI64ArrayAttr(view->encode())));
  plan.writtenThrough.assign(view->through.rbegin(), view->through.rend());
}

/// For a library that does not compute in a half precision (oneDNN's f16 here, and its bf16 on a
/// CPU without AVX512-BF16): a f16 or bf16 matmul, gemm or convolution becomes the same op in f32
/// between casts. The values between kernels and the
/// weights stay in the low precision (the weights are widened as the program runs); the
/// product accumulates in f32, which is the precision contract. Returns the f32 op.
static Operation *widenToF32(OpBuilder &builder, Operation *op) {
  builder.setInsertionPoint(op);
  Type f32 = builder.getF32Type();
  auto widened = [&](Type type) {
    auto tensor = cast<RankedTensorType>(type);
    return RankedTensorType::get(tensor.getShape(), f32);
  };
  SmallVector<Value> operands;
  for (Value operand : op->getOperands())
    operands.push_back(graph::CastOp::create(builder, op->getLoc(), widened(operand.getType()),
                                             operand, TypeAttr::get(f32)));
  Operation *wide = builder.clone(*op);
  wide->setOperands(operands);
  Value result = wide->getResult(0);
  Type narrow = result.getType();
  result.setType(widened(narrow));
  builder.setInsertionPointAfter(wide);
  Value back =
      graph::CastOp::create(builder, op->getLoc(), narrow, result,
                            TypeAttr::get(cast<RankedTensorType>(narrow).getElementType()));
  op->getResult(0).replaceAllUsesWith(back);
  op->erase();
  return wide;
}

namespace {

/// Selects the library calls of `target` in a module.
class LibraryCallSelector {
public:
  LibraryCallSelector(const Target &target, fusion::EpiloguePlanner &planner)
      : target(target), planner(planner) {}
  LibraryCallSelector(Target &&) = delete;

  void run(ModuleOp module) {
    SymbolTable symbols(module);
    OpBuilder builder(module.getContext());
    // Attention first: its products are then no longer anchors of their own.
    if (!target.attention.empty()) {
      SmallVector<graph::SoftmaxOp> softmaxes;
      module.walk([&](graph::SoftmaxOp op) { softmaxes.push_back(op); });
      // Where the target's call takes half precision, f32 attention may have a call of its own.
      std::optional<Target> f32Target;
      if (!target.f32Attention.empty()) {
        f32Target = target;
        f32Target->attention = target.f32Attention;
        f32Target->f32Attention = "";
        f32Target->halfAttention = false;
        f32Target->attentionZeroesMaskedRows = true;
        f32Target->attentionMaxHeadDim = kMaxGeneratedHeadDim;
      }
      for (graph::SoftmaxOp softmax : softmaxes) {
        FailureOr<CallPlan> plan = planAttention(softmax, target);
        if (failed(plan) && f32Target)
          plan = planAttention(softmax, *f32Target);
        if (succeeded(plan))
          emitCall(builder, symbols, module, *plan);
      }
    }
    SmallVector<Operation *> anchors;
    module.walk([&](Operation *op) {
      if (isa<graph::ConvOp, graph::MatmulOp, graph::GemmOp>(op) ||
          (!target.pooling.empty() && isa<graph::MaxPoolOp, graph::AvgPoolOp>(op)))
        anchors.push_back(op);
    });
    for (Operation *&anchor : anchors) {
      Type element = staticUniformElementType(anchor);
      if (isHalfPrecision(element) && !takes(target, element) &&
          !isa<graph::MaxPoolOp, graph::AvgPoolOp>(anchor))
        anchor = widenToF32(builder, anchor);
    }
    for (Operation *anchor : anchors) {
      FailureOr<CallPlan> plan =
          llvm::TypeSwitch<Operation *, FailureOr<CallPlan>>(anchor)
              .Case([&](graph::ConvOp op) { return planConvolution(op, target); })
              .Case([&](graph::MatmulOp op) { return planMatmul(op, target); })
              .Case([&](graph::GemmOp op) { return planGemm(builder, op, target); })
              .Case([&](graph::MaxPoolOp op) { return planPooling(op, target); })
              .Case([&](graph::AvgPoolOp op) { return planPooling(op, target); });
      if (failed(plan))
        continue;
      if (plan->name == target.pooling) {
        emitCall(builder, symbols, module, *plan);
        continue;
      }
      fuseEpilogue(builder, *plan, planner);
      absorbDataMovement(*plan);
      emitCall(builder, symbols, module, *plan);
    }
  }

  void emitCall(OpBuilder &builder, SymbolTable &symbols, ModuleOp module, CallPlan &plan) {
    SmallVector<Value> operands(plan.operands);
    llvm::append_range(operands, plan.addends);
    Value written = plan.written ? plan.written : plan.result;
    auto type = FunctionType::get(module.getContext(), ValueRange(operands).getTypes(),
                                  {written.getType()});
    func::FuncOp callee = libraryCallDeclaration(symbols, module, plan.name, type);

    Operation *last = plan.fused.empty() ? plan.anchor : plan.fused.back();
    builder.setInsertionPoint(last);
    auto call = func::CallOp::create(builder, last->getLoc(), callee, operands);
    for (NamedAttribute attribute : plan.attributes)
      call->setAttr(attribute.getName(), attribute.getValue());
    if (!plan.postOps.empty()) {
      SmallVector<Attribute> kinds;
      for (PostOp kind : plan.postOps)
        kinds.push_back(builder.getStringAttr(contract::postOpName(kind)));
      call->setAttr(contract::param::kPostOps.name, builder.getArrayAttr(kinds));
    }
    if (!plan.postOpArgs.empty())
      call->setAttr(contract::param::kPostOpArgs.name,
                    builder.getDenseF32ArrayAttr(plan.postOpArgs));
    if (auto math = plan.anchor->getAttrOfType<StringAttr>(::kiln::attrs::kMath);
        target.tf32 && math && math.getValue() == "tf32")
      call->setAttr(contract::param::kAllowTf32.name, builder.getBoolAttr(true));

    written.replaceAllUsesWith(call.getResult(0));
    for (Operation *op : plan.writtenThrough)
      op->erase();
    for (Operation *op : llvm::reverse(plan.fused))
      op->erase();
    plan.anchor->erase();
    // Operands may share their data movement (Q, K and V out of one split): erase what nothing
    // reads until nothing changes.
    llvm::SetVector<Operation *> pending(plan.readThrough.begin(), plan.readThrough.end());
    for (bool erased = true; erased;) {
      erased = false;
      for (Operation *op : pending.takeVector()) {
        if (op->use_empty()) {
          op->erase();
          erased = true;
        } else {
          pending.insert(op);
        }
      }
    }
  }

  const Target &target;
  fusion::EpiloguePlanner &planner;
};

} // namespace

/// Selects the calls of `target` in `module`, their epilogues decided by the fusion planner with
/// the cost model of `device` (a name or a description file), and records its decisions.
LogicalResult selectLibraryCalls(ModuleOp module, const Target &target, StringRef device) {
  std::string error;
  std::optional<fusion::DeviceDescription> description =
      fusion::DeviceDescription::load(device, error);
  if (!description)
    return module.emitError() << "the fusion cost model: " << error;
  fusion::EpiloguePlanner planner(*description);
  LibraryCallSelector(target, planner).run(module);
  planner.record(module);
  return success();
}

} // namespace kiln::librarycalls
