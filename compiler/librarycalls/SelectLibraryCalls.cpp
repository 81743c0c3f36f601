//===- SelectLibraryCalls.cpp - Convolutions and matrix products to vendor libraries -===//
//
// Replaces graph.conv, graph.matmul and graph.gemm with calls of library-call declarations
// (oneDNN on the CPU, cuDNN and cuBLASLt on CUDA) and proposes their single-use elementwise
// epilogues (bias and residual adds, ReLU and clips, scales by constants, GELU, SiLU, a widening
// cast) to the fusion planner (compiler/fusion/Epilogues.h) step by step, as far as the target's
// library fuses them; the steps it takes become the calls' post-ops. The parameter encoding is
// the runtime's
// (runtime/src/cpu/onednn/onednn_kernels.h, runtime/src/cuda/cuda_library_call.h).
//
//===----------------------------------------------------------------------===//

#include "compiler/fusion/Epilogues.h"

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

namespace kiln {
#define GEN_PASS_DEF_SELECTCPULIBRARYCALLSPASS
#define GEN_PASS_DEF_SELECTCUDALIBRARYCALLSPASS
#include "compiler/librarycalls/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
using contract::PostOp;

namespace {

struct CallPlan;

/// The library a pass instance selects calls of, and what that library fuses.
struct Target {
  llvm::StringLiteral convolution;
  llvm::StringLiteral matmul;
  /// The fused attention call and the pooling call ("" where the target has none).
  llvm::StringLiteral attention;
  llvm::StringLiteral pooling;
  /// Whether f16 and bf16 operands are taken besides f32 (others are widened to f32 around the
  /// call).
  bool f16, bf16;
  /// Whether a matmul operand may broadcast some of the result's batch dimensions and not others
  /// (oneDNN's per-dimension broadcast); cuBLASLt's strided batches take all of them or none.
  bool partialBatchBroadcast;
  /// Whether the plan's epilogue is one the library fuses; `why` says why not.
  bool (*supports)(const CallPlan &plan, std::string &why);
  /// The post-ops of GELU's erf form and its tanh approximation (none where not fused).
  std::optional<PostOp> geluErf, geluTanh;
  /// The post-op of SiLU (swish), x * sigmoid(x) (none where not fused).
  std::optional<PostOp> swish;
  /// Whether strided operands must be matrix layouts (cuBLASLt) rather than any strides (oneDNN).
  bool matrixLayoutsOnly;
  /// Whether the library takes `allow_tf32` (set where kiln-assign-precision marked the op
  /// `kiln.math = "tf32"`).
  bool tf32;
  /// Whether a bf16 call may write an f32 result (oneDNN does; the CUDA calls take one element
  /// type for every tensor), so that a cast of the result to f32 joins the call.
  bool f32Result;
  /// Whether the attention call computes f16 and bf16 products (cuDNN's fused attention) rather
  /// than f32 ones (Kiln's CPU kernel); it takes one or the other.
  bool halfAttention;
  /// Whether the attention call zeroes the rows the mask leaves no key in (zero_masked_rows).
  bool attentionZeroesMaskedRows;
  /// Whether the call adds its bias after a leading `linear` scales the product (cuBLASLt's
  /// alpha and bias epilogue) rather than before its post-ops (oneDNN).
  bool biasAfterScale;
  /// Whether the attention call reads its operands through views fixed at compile time, so
  /// static shapes only (cuDNN's, and the kernel Kiln generates on CUDA), rather than taking
  /// each binding as it lies when the shapes are the run's.
  bool attentionNeedsViews;
  /// The attention call for f32 products where `attention` takes half precision ("" where
  /// none): on CUDA, "kiln.attention" becomes a kernel Kiln generates
  /// (kiln-generate-cuda-attention), for heads of at most kMaxGeneratedHeadDim elements.
  llvm::StringLiteral f32Attention;
  /// The longest query, key and value rows the attention call takes (0: any).
  int64_t attentionMaxHeadDim = 0;
};
/// The longest query, key and value rows the generated CUDA attention keeps in registers.
constexpr int64_t kMaxGeneratedHeadDim = 128;
constexpr float kInfinity = std::numeric_limits<float>::infinity();

/// How an addend broadcasts against a call's result, by the shapes oneDNN's binary post-ops
/// implement.
enum class Broadcast { None, Full, Scalar, BiasAxis, Rows };

/// A library call being assembled from an anchor op and its epilogue.
struct CallPlan {
  const Target *target = nullptr;
  StringRef name;
  Operation *anchor = nullptr;
  /// The axis a bias broadcasts along: 1 (channels) for convolutions, the last for products.
  int64_t biasAxis = 1;
  SmallVector<Value> operands;
  bool hasBias = false;
  SmallVector<NamedAttribute> attributes;
  SmallVector<PostOp> postOps;
  SmallVector<float> postOpArgs;
  SmallVector<Value> addends;
  /// The epilogue ops after the anchor, in order.
  SmallVector<Operation *> fused;
  Value result;
  /// The data movement the call reads its operands through (from the operands outward), erased
  /// after the anchor where nothing else reads it, and the data movement it writes its result
  /// through (from the last op back to the result's reader), erased before the anchor.
  SmallVector<Operation *> readThrough, writtenThrough;
  /// Where the call writes: the end of the data movement after the result, when absorbed.
  Value written;
  /// Whether a cast of the result to f32 joined the call.
  bool widened = false;
};

/// The element type every operand and result of `op` has, when all are static tensors of one
/// (or, with `dynamicBatch`, static but for their first dimension: a convolution of a program
/// for a range of batches, whose calls the runtime sets up per shape; with `anyDynamic`, of any
/// shape: a product over a dynamic batch and sequence); null otherwise.
Type staticUniformElementType(Operation *op, bool dynamicBatch = false, bool anyDynamic = false) {
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
bool hasStaticLibraryTypes(Operation *op, const Target &target, bool dynamicBatch = false,
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
Value asBias(OpBuilder &builder, Value value, int64_t size) {
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
void appendBound(CallPlan &plan, bool isMax, float bound) {
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
LogicalResult appendAddend(OpBuilder &builder, CallPlan &plan, Value addend) {
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
std::optional<double> evaluateElementwise(Operation *op, ArrayRef<double> operands) {
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
std::pair<StringRef, SmallVector<Operation *>> matchActivation(Value x) {
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
LogicalResult scaleBias(OpBuilder &builder, CallPlan &plan, Operation *at, float factor) {
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
void appendScale(CallPlan &plan, float factor) {
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
bool isBinaryEpilogueOp(Operation *op) {
  return isa<graph::MaxOp, graph::MinOp, graph::AddOp, graph::MulOp, graph::DivOp>(op);
}

/// Whether a generated kernel computes `op` inside its readers: each element from its operands'
/// (broadcast) elements alone.
bool computedInReaders(Operation *op) {
  return graph::isElementwise(op) || isa<graph::ExpandOp>(op);
}

/// What the planner weighs a step against out of the call: whether its result's one reader is a
/// generated kernel's op (elementwise, a reduction, a normalization), and whether its operand is
/// computed for it alone by an elementwise op, which that kernel would compute instead of
/// reading it.
void describeSurroundings(fusion::EpilogueStep &step) {
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
void fuseEpilogue(OpBuilder &builder, CallPlan &plan, fusion::EpiloguePlanner &planner) {
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
FailureOr<CallPlan> planConvolution(graph::ConvOp conv, const Target &target) {
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
template <typename PoolOp> FailureOr<CallPlan> planPooling(PoolOp pool, const Target &target) {
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

FailureOr<CallPlan> planMatmul(graph::MatmulOp matmul, const Target &target) {
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
FailureOr<CallPlan> planGemm(OpBuilder &builder, graph::GemmOp gemm, const Target &target) {
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
void absorbDataMovement(CallPlan &plan) {
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

/// Whether a GEMM reads the last two dims of `view` as they lie or transposed: the BLAS rule of
/// contract/matrix_layout.h, which the runtime's attention call checks too.
bool gemmReadable(const StridedView &view) {
  size_t rank = view.dims.size();
  return contract::stridedMatrix(view.dims[rank - 2], view.dims[rank - 1], view.strides[rank - 2],
                                 view.strides[rank - 1], /*transposable=*/true)
      .has_value();
}

/// `view` with `batch` (the result's batch dims) in front of its last two dims: missing leading
/// dims and dims of size 1 broadcast with stride 0; with `broadcastMatrix`, its last two dims
/// broadcast to `rows` x `cols` too (an additive mask). Fails for dims that do not broadcast.
std::optional<StridedView> alignView(StridedView view, ArrayRef<int64_t> batch,
                                     bool broadcastMatrix, int64_t rows, int64_t cols) {
  size_t rank = batch.size() + 2;
  if (view.dims.size() > rank || view.dims.size() < (broadcastMatrix ? 0 : 2))
    return std::nullopt;
  size_t missing = rank - view.dims.size();
  view.dims.insert(view.dims.begin(), missing, 1);
  view.strides.insert(view.strides.begin(), missing, 0);
  SmallVector<int64_t> want(batch);
  want.append({rows, cols});
  for (size_t d = 0; d < rank; ++d) {
    if (view.dims[d] == want[d])
      continue;
    if (view.dims[d] != 1 || (d + 2 >= rank && !broadcastMatrix))
      return std::nullopt;
    view.dims[d] = want[d];
    view.strides[d] = 0;
  }
  return view;
}

/// The farthest view of a product operand the attention call reads (the operand itself when no
/// data movement before it can be read through), aligned to the result's batch dims. With
/// `group` (Kᵀ and V), heads repeated for grouped queries are read where they lie, once
/// (ungroupHeads): the view then has the result's batch dims with the last divided by the
/// group, which is set (1 where nothing is repeated).
std::optional<StridedView> attentionOperand(Value operand, ArrayRef<int64_t> batch,
                                            int64_t *group = nullptr) {
  auto type = cast<RankedTensorType>(operand.getType());
  SmallVector<StridedView> candidates = traceOperand(operand);
  candidates.insert(
      candidates.begin(),
      StridedView{
          operand, 0, SmallVector<int64_t>(type.getShape()), rowMajorStrides(type.getShape()), {}});
  int64_t rank = type.getRank();
  auto farthest = [&](ArrayRef<StridedView> views,
                      ArrayRef<int64_t> batchDims) -> std::optional<StridedView> {
    for (const StridedView &view : llvm::reverse(views)) {
      if (!gemmReadable(view))
        continue;
      if (std::optional<StridedView> aligned = alignView(
              view, batchDims, false, type.getDimSize(rank - 2), type.getDimSize(rank - 1)))
        return aligned;
    }
    return std::nullopt;
  };
  if (group) {
    *group = 1;
    for (const StridedView &candidate : candidates) {
      if (candidate.dims.size() != batch.size() + 2)
        continue;
      int64_t g = 1;
      std::optional<StridedView> ungrouped = ungroupHeads(candidate, &g);
      if (!ungrouped || g < 2)
        continue;
      SmallVector<StridedView> further = traceView(*ungrouped);
      further.insert(further.begin(), *ungrouped);
      SmallVector<int64_t> kvBatch(batch);
      kvBatch.back() /= g;
      if (std::optional<StridedView> view = farthest(further, kvBatch)) {
        *group = g;
        return view;
      }
    }
  }
  return farthest(candidates, batch);
}

/// Whether cuDNN's fused attention (runtime/src/cuda/cudnn_attention.cpp, with the limits the
/// cuDNN frontend checks for f16 and bf16) reads or writes `view` of Q, Kᵀ, V or the result:
/// its batch dims (all but the last two) not broadcast, unit stride along `unit` (the head dim:
/// the last for Q, V and the result, the row for Kᵀ), every other stride of a dim above 1 and
/// the offset in whole 16 bytes (8 elements), and a head dim of at most 128 in multiples of 8.
bool cudnnAttentionTakes(const StridedView &view, size_t unit) {
  constexpr int64_t kElementsPer16Bytes = 8;
  if (view.dims.size() > 4 || view.offset % kElementsPer16Bytes != 0 || view.strides[unit] != 1 ||
      view.dims[unit] > 128 || view.dims[unit] % 8 != 0)
    return false;
  for (size_t dim = 0; dim < view.dims.size(); ++dim) {
    bool batchDim = dim + 2 < view.dims.size();
    if (batchDim && view.dims[dim] > 1 && view.strides[dim] == 0)
      return false;
    if (dim != unit && view.dims[dim] > 1 && view.strides[dim] % kElementsPer16Bytes != 0)
      return false;
  }
  return true;
}

/// The attention call over dynamic shapes: Q, Kᵀ, V, the mask and the result as they lie (no
/// views: the runtime reads each binding with its run's strides, leading dims aligned with the
/// result's and dims of 1 broadcast), so each must have the result's rank at most and batch dims
/// that are the result's or 1; the mask f32.
FailureOr<CallPlan> planDenseAttention(const Target &target, graph::MatmulOp scores,
                                       graph::MatmulOp context, Value mask, float scale,
                                       graph::SelectOp guard, ArrayRef<Operation *> chain,
                                       graph::SoftmaxOp softmax, ArrayRef<Operation *> guardOps) {
  auto resultType = cast<RankedTensorType>(context.getType());
  int64_t rank = resultType.getRank();
  ArrayRef<int64_t> batch = resultType.getShape().drop_back(2);
  auto aligned = [&](Value value, bool matrixMayBroadcast) {
    auto type = dyn_cast<RankedTensorType>(value.getType());
    if (!type || type.getRank() > rank || (!matrixMayBroadcast && type.getRank() < 2))
      return false;
    int64_t missing = rank - type.getRank();
    for (int64_t d = 0; d < type.getRank(); ++d) {
      int64_t at = d + missing;
      if (at >= rank - 2)
        continue;
      if (type.getDimSize(d) != 1 && type.getDimSize(d) != batch[at])
        return false;
    }
    return true;
  };
  if (!aligned(scores.getLhs(), false) || !aligned(scores.getRhs(), false) ||
      !aligned(context.getRhs(), false))
    return failure();
  if (mask) {
    auto maskType = dyn_cast<RankedTensorType>(mask.getType());
    if (!maskType || !maskType.getElementType().isF32() || !aligned(mask, true))
      return failure();
  }
  Builder b(softmax.getContext());
  CallPlan plan = startPlan(target, target.attention, scores, rank - 1,
                            {scores.getLhs(), scores.getRhs(), context.getRhs()});
  if (mask)
    plan.operands.push_back(mask);
  plan.attributes = {b.getNamedAttr(contract::param::kScale.name, b.getDenseF32ArrayAttr({scale}))};
  if (guard)
    plan.attributes.push_back(
        b.getNamedAttr(contract::param::kZeroMaskedRows.name, b.getDenseI64ArrayAttr({1})));
  plan.fused.assign(chain.rbegin(), chain.rend());
  plan.fused.push_back(softmax);
  llvm::append_range(plan.fused, guardOps);
  plan.fused.push_back(context);
  plan.result = context.getResult();
  return plan;
}

/// Plans `softmax(scale * Q Kᵀ [+ mask]) V` around `softmax` as one attention call, the form
/// exporters write: a graph.matmul of Q and Kᵀ, multiplications and divisions by splat constants,
/// at most one addend (the mask, after the scaling), the softmax along the last axis (optionally
/// zeroed on the rows where the mask is -inf everywhere, as the ONNX Attention operator does),
/// and a graph.matmul of its result and V; each intermediate read only by the next, every tensor
/// static. The products are f32 on the CPU, f16 or bf16 on CUDA, where the scores may be widened
/// to f32 on the way to the softmax and its result narrowed back (kiln-assign-precision's form:
/// one cast before the softmax, anywhere among the scaling and the mask, and one after it).
/// Q, Kᵀ and V are read where their data lies (through the transposes, slices and splits before
/// them; Kᵀ and V before heads repeated for grouped queries, with `kv_group`) and the result is
/// written through the transposes and reshapes after it. Fails for
/// anything else, or what the target's call does not take (cudnnAttentionTakes); the ops then
/// stay for the library calls and kernels they were.
FailureOr<CallPlan> planAttention(graph::SoftmaxOp softmax, const Target &target) {
  auto scoresType = dyn_cast<RankedTensorType>(softmax.getType());
  // Over dynamic shapes (a program for a range of shapes) Kiln's call reads each operand as it
  // lies, its strides the run's (no views); cuDNN's takes static shapes only.
  bool dynamic = scoresType && !scoresType.hasStaticShape();
  if (target.attention.empty() || !scoresType || (dynamic && target.attentionNeedsViews) ||
      scoresType.getRank() < 2 || !softmax->hasOneUse())
    return failure();
  int64_t rank = scoresType.getRank();
  int64_t axis = static_cast<int64_t>(softmax.getAxis());
  // A guard may zero the rows the mask leaves no key in (the ONNX Attention operator's form):
  // select(max(mask along the keys) == -inf, 0, softmax), checked against the mask below.
  Operation *user = *softmax->getUsers().begin();
  Value probabilities = softmax.getResult();
  auto guard = dyn_cast<graph::SelectOp>(user);
  if (guard) {
    std::optional<float> zero = splatConstant(guard.getOnTrue());
    if (!guard->hasOneUse() || guard.getOnFalse() != probabilities || !zero || *zero != 0.0f ||
        guard.getType() != scoresType)
      return failure();
    probabilities = guard.getResult();
    user = *guard->getUsers().begin();
  }
  if (guard && !target.attentionZeroesMaskedRows)
    return failure();
  // The probabilities narrowed to the products' precision.
  auto narrow = dyn_cast<graph::CastOp>(user);
  if (narrow) {
    if (!narrow->hasOneUse())
      return failure();
    probabilities = narrow.getResult();
    user = *narrow->getUsers().begin();
  }
  auto context = dyn_cast<graph::MatmulOp>(user);
  Type element = context ? staticUniformElementType(context, false, dynamic) : Type();
  if (axis != rank - 1 || !context || context.getLhs() != probabilities ||
      context.getRhs() == probabilities || !element ||
      !(target.halfAttention ? isHalfPrecision(element) : element.isF32()))
    return failure();

  // Back from the softmax to the product of Q and Kᵀ: the mask first, then the scaling, with at
  // most one cast among them (`chainType` is the type of the scores where the walk is).
  float scale = 1.0f;
  bool scaled = false;
  Value mask;
  Operation *maskAdd = nullptr;
  SmallVector<Operation *> chain;
  Value current = softmax.getInput();
  RankedTensorType chainType = scoresType;
  graph::CastOp widen;
  graph::MatmulOp scores;
  while (true) {
    Operation *def = current.getDefiningOp();
    if (!def || !current.hasOneUse() || def->getBlock() != softmax->getBlock() ||
        current.getType() != chainType)
      return failure();
    if ((scores = dyn_cast<graph::MatmulOp>(def)))
      break;
    if (auto cast = dyn_cast<graph::CastOp>(def)) {
      auto from = dyn_cast<RankedTensorType>(cast.getInput().getType());
      if (widen || !from || from.getShape() != scoresType.getShape() ||
          !isa<FloatType>(from.getElementType()))
        return failure();
      widen = cast;
      chainType = from;
      current = cast.getInput();
      chain.push_back(def);
      continue;
    }
    if (!isa<graph::AddOp, graph::MulOp, graph::DivOp>(def))
      return failure();
    Value lhs = def->getOperand(0), rhs = def->getOperand(1);
    if (isa<graph::AddOp>(def)) {
      // One mask, added after every scaling (walking back, before any is seen).
      if (mask || scaled)
        return failure();
      // The scores are the operand of their own type, read only here, made by the product, a
      // scaling or the cast; the mask is the other.
      auto onChain = [&](Value value) {
        Operation *producer = value.getDefiningOp();
        return producer && value.hasOneUse() && value.getType() == chainType &&
               isa<graph::MatmulOp, graph::MulOp, graph::DivOp, graph::CastOp>(producer);
      };
      bool lhsChain = onChain(lhs);
      if (!lhsChain && !onChain(rhs))
        return failure();
      mask = lhsChain ? rhs : lhs;
      maskAdd = def;
      current = lhsChain ? lhs : rhs;
    } else if (isa<graph::MulOp>(def)) {
      std::optional<float> factor = splatConstant(rhs);
      Value other = lhs;
      if (!factor) {
        factor = splatConstant(lhs);
        other = rhs;
      }
      if (!factor)
        return failure();
      scale *= *factor;
      scaled = true;
      current = other;
    } else {
      std::optional<float> divisor = splatConstant(rhs);
      if (!divisor || *divisor == 0.0f)
        return failure();
      scale /= *divisor;
      scaled = true;
      current = lhs;
    }
    chain.push_back(def);
  }
  // The cast between the products and the softmax comes with the one after it, and only where
  // the products are in a lower precision than the softmax.
  if (staticUniformElementType(scores, false, dynamic) != element || !std::isfinite(scale) ||
      static_cast<bool>(widen) != static_cast<bool>(narrow) ||
      (narrow && (getElementTypeOrSelf(widen.getInput().getType()) != element ||
                  scoresType.getElementType() == element)))
    return failure();
  // The guard's condition: the mask's row maximum (kept as a dimension) equal to -inf.
  SmallVector<Operation *> guardOps;
  if (guard) {
    auto test = guard.getCondition().getDefiningOp<graph::CompareOp>();
    if (!mask || !test || !test->hasOneUse() ||
        test.getDirection() != graph::ComparisonDirection::eq)
      return failure();
    auto largest = test.getLhs().getDefiningOp<graph::ReduceMaxOp>();
    std::optional<float> bound = splatConstant(test.getRhs());
    if (!largest || !largest->hasOneUse() || largest.getInput() != mask || !largest.getKeepdims() ||
        largest.getAxes().size() != 1 ||
        largest.getAxes()[0] != cast<RankedTensorType>(mask.getType()).getRank() - 1 || !bound ||
        !std::isinf(*bound) || *bound > 0)
      return failure();
    guardOps = {largest, test, guard};
  }
  auto contextType = cast<RankedTensorType>(context.getType());
  ArrayRef<int64_t> batch = scoresType.getShape().drop_back(2);
  if (contextType.getRank() != rank || contextType.getShape().drop_back(2) != batch)
    return failure();
  if (dynamic)
    return planDenseAttention(target, scores, context, mask, scale, guard, chain, softmax,
                              guardOps);
  int64_t sq = scoresType.getDimSize(rank - 2), skv = scoresType.getDimSize(rank - 1);
  if (target.attentionMaxHeadDim > 0 &&
      (cast<RankedTensorType>(scores.getLhs().getType()).getShape().back() >
           target.attentionMaxHeadDim ||
       contextType.getShape().back() > target.attentionMaxHeadDim))
    return failure();

  // Grouped-query attention reads Kᵀ and V before their heads are repeated, both with one
  // group; otherwise as they are.
  int64_t kGroup = 1, vGroup = 1;
  std::optional<StridedView> q = attentionOperand(scores.getLhs(), batch);
  std::optional<StridedView> kt = attentionOperand(scores.getRhs(), batch, &kGroup);
  std::optional<StridedView> v = attentionOperand(context.getRhs(), batch, &vGroup);
  if (kGroup != vGroup) {
    kGroup = 1;
    kt = attentionOperand(scores.getRhs(), batch);
    v = attentionOperand(context.getRhs(), batch);
  }
  if (!q || !kt || !v)
    return failure();
  size_t last = static_cast<size_t>(rank) - 1;
  if (target.halfAttention &&
      !(cudnnAttentionTakes(*q, last) && cudnnAttentionTakes(*kt, last - 1) &&
        cudnnAttentionTakes(*v, last)))
    return failure();
  std::optional<StridedView> maskView;
  if (mask) {
    auto maskType = dyn_cast<RankedTensorType>(mask.getType());
    if (!maskType || !maskType.hasStaticShape() || !isa<FloatType>(maskType.getElementType()))
      return failure();
    maskView = alignView(StridedView{mask,
                                     0,
                                     SmallVector<int64_t>(maskType.getShape()),
                                     rowMajorStrides(maskType.getShape()),
                                     {}},
                         batch, true, sq, skv);
    // A mask that is not in the products' type is converted (below); on CUDA it must not
    // broadcast along the keys (cuDNN reads them with unit stride).
    if (!maskView || (target.halfAttention && maskType.getShape().back() != skv) ||
        (!target.halfAttention && !maskType.getElementType().isF32()))
      return failure();
  }

  // The result's view (written through the data movement after it where that is a view).
  auto contextShape = SmallVector<int64_t>(contextType.getShape());
  StridedView dst{context.getResult(), 0, contextShape, rowMajorStrides(contextShape), {}};
  SmallVector<StridedView> written = traceResult(context.getResult());
  if (!written.empty() && written.back().dims.size() == static_cast<size_t>(rank) &&
      (!target.halfAttention || cudnnAttentionTakes(written.back(), last)))
    dst = written.back();

  // Every check has passed: a mask of another type is converted to the products' (f32 masks of
  // the f16 and bf16 calls, which take one element type).
  if (mask && cast<RankedTensorType>(mask.getType()).getElementType() != element) {
    // One conversion serves every attention of the mask (a model's layers share theirs).
    auto maskType = cast<RankedTensorType>(mask.getType());
    auto converted = llvm::find_if(mask.getUsers(), [&](Operation *op) {
      auto cast = dyn_cast<graph::CastOp>(op);
      return cast && cast.getType() == maskType.clone(element) &&
             cast->getBlock() == maskAdd->getBlock() && cast->isBeforeInBlock(maskAdd);
    });
    if (converted != mask.getUsers().end()) {
      mask = (*converted)->getResult(0);
    } else {
      OpBuilder builder(maskAdd);
      mask = graph::CastOp::create(builder, mask.getLoc(), maskType.clone(element), mask,
                                   TypeAttr::get(element));
    }
    maskView = alignView(StridedView{mask,
                                     0,
                                     SmallVector<int64_t>(maskType.getShape()),
                                     rowMajorStrides(maskType.getShape()),
                                     {}},
                         batch, true, sq, skv);
  }

  Builder b(softmax.getContext());
  CallPlan plan =
      startPlan(target, target.attention, scores, rank - 1, {q->base, kt->base, v->base});
  if (mask)
    plan.operands.push_back(mask);
  plan.attributes = {
      b.getNamedAttr(contract::param::kQView.name, b.getDenseI64ArrayAttr(q->encode())),
      b.getNamedAttr(contract::param::kKView.name, b.getDenseI64ArrayAttr(kt->encode())),
      b.getNamedAttr(contract::param::kVView.name, b.getDenseI64ArrayAttr(v->encode())),
      b.getNamedAttr(contract::param::kScale.name, b.getDenseF32ArrayAttr({scale}))};
  if (maskView)
    plan.attributes.push_back(b.getNamedAttr(contract::param::kMaskView.name,
                                             b.getDenseI64ArrayAttr(maskView->encode())));
  if (guard)
    plan.attributes.push_back(
        b.getNamedAttr(contract::param::kZeroMaskedRows.name, b.getDenseI64ArrayAttr({1})));
  if (kGroup != 1)
    plan.attributes.push_back(
        b.getNamedAttr(contract::param::kKvGroup.name, b.getI64IntegerAttr(kGroup)));
  for (const StridedView &view : {*q, *kt, *v})
    llvm::append_range(plan.readThrough, view.through);
  plan.fused.assign(chain.rbegin(), chain.rend());
  plan.fused.push_back(softmax);
  llvm::append_range(plan.fused, guardOps);
  if (narrow)
    plan.fused.push_back(narrow);
  plan.fused.push_back(context);
  plan.result = context.getResult();
  if (dst.base != plan.result) {
    plan.written = dst.base;
    plan.writtenThrough.assign(dst.through.rbegin(), dst.through.rend());
  }
  plan.attributes.push_back(
      b.getNamedAttr(contract::param::kDstView.name, b.getDenseI64ArrayAttr(dst.encode())));
  return plan;
}

/// What cuDNN and cuBLASLt fuse (runtime/src/cuda/cuda_library_call.h): for matrix products
/// `[linear(alpha, 0)] [add FULL] [relu | gelu]` with a bias only without `linear`; for
/// convolutions `[add FULL] [relu]`.
bool cudaSupports(const CallPlan &plan, std::string &why) {
  auto resultType = cast<RankedTensorType>(plan.result.getType());
  bool matmul = plan.name == contract::callee::kCublasLtMatmul;
  size_t next = 0, addends = 0;
  enum { kStart, kLinear, kAdd, kActivation } stage = kStart;
  for (PostOp kind : plan.postOps) {
    if (kind == PostOp::Linear) {
      if (!matmul)
        why = "cuDNN's fused convolutions take no scale";
      else if (stage != kStart)
        why = "cuBLASLt's alpha scales the product alone, before its addend";
      else if (plan.postOpArgs[next + 1] != 0.0f)
        why = "cuBLASLt's alpha scales without a shift";
      if (!why.empty())
        return false;
      next += 2;
      stage = kLinear;
    } else if (kind == PostOp::Add) {
      if (stage == kAdd || stage == kActivation) {
        why = stage == kAdd ? "the CUDA libraries add one tensor" : "an add after the activation";
        return false;
      }
      auto addendType = cast<RankedTensorType>(plan.addends[addends++].getType());
      if (classifyAddend(addendType, resultType, plan.biasAxis) != Broadcast::Full ||
          addendType.getShape() != resultType.getShape()) {
        why = "the CUDA libraries add a tensor of the result's shape (or a bias)";
        return false;
      }
      stage = kAdd;
    } else if (kind == PostOp::Relu || (kind == PostOp::Gelu && matmul)) {
      if (stage == kActivation) {
        why = "a second activation";
        return false;
      }
      stage = kActivation;
    } else {
      why = (kind == PostOp::Gelu
                 ? "cuDNN's fused convolutions take relu alone"
                 : llvm::formatv("{0} takes no {1}", plan.name, contract::postOpName(kind)).str());
      return false;
    }
  }
  return true;
}

bool cpuSupports(const CallPlan &plan, std::string &why) {
  if (eltwiseParametersAgree(plan))
    return true;
  why = "oneDNN keeps one set of parameters per activation kind in a call";
  return false;
}

// cuBLASLt's GELU epilogue is the tanh approximation; the erf form stays a generated kernel.
constexpr Target kCudaTarget{contract::callee::kCudnnConvolution,
                             contract::callee::kCublasLtMatmul,
                             contract::callee::kCudnnAttention,
                             "",
                             /*f16=*/true,
                             /*bf16=*/true,
                             /*partialBatchBroadcast=*/false,
                             cudaSupports,
                             /*geluErf=*/std::nullopt,
                             /*geluTanh=*/PostOp::Gelu,
                             /*swish=*/std::nullopt,
                             /*matrixLayoutsOnly=*/true,
                             /*tf32=*/true,
                             /*f32Result=*/false,
                             /*halfAttention=*/true,
                             /*attentionZeroesMaskedRows=*/false,
                             /*biasAfterScale=*/true,
                             /*attentionNeedsViews=*/true,
                             /*f32Attention=*/contract::callee::kKilnAttention};

constexpr Target kCpuTarget{contract::callee::kOneDnnConvolution,
                            contract::callee::kOneDnnMatmul,
                            contract::callee::kKilnAttention,
                            contract::callee::kOneDnnPooling,
                            /*f16=*/false,
                            /*bf16=*/false,
                            /*partialBatchBroadcast=*/true,
                            cpuSupports,
                            /*geluErf=*/PostOp::GeluErf,
                            /*geluTanh=*/PostOp::GeluTanh,
                            /*swish=*/PostOp::Swish,
                            /*matrixLayoutsOnly=*/false,
                            /*tf32=*/false,
                            /*f32Result=*/true,
                            /*halfAttention=*/false,
                            /*attentionZeroesMaskedRows=*/true,
                            /*biasAfterScale=*/false,
                            /*attentionNeedsViews=*/false,
                            /*f32Attention=*/""};

/// For a library that does not compute in a half precision (oneDNN's f16 here, and its bf16 on a
/// CPU without AVX512-BF16): a f16 or bf16 matmul, gemm or convolution becomes the same op in f32
/// between casts. The values between kernels and the
/// weights stay in the low precision (the weights are widened as the program runs); the
/// product accumulates in f32, which is the precision contract. Returns the f32 op.
Operation *widenToF32(OpBuilder &builder, Operation *op) {
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
    if (auto math = plan.anchor->getAttrOfType<StringAttr>("kiln.math");
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

struct SelectCpuLibraryCallsPass
    : impl::SelectCpuLibraryCallsPassBase<SelectCpuLibraryCallsPass> {
  using SelectCpuLibraryCallsPassBase::SelectCpuLibraryCallsPassBase;

  void runOnOperation() override {
    Target target = kCpuTarget;
    target.bf16 = nativeBf16;
    if (!fuseAttention)
      target.attention = "";
    if (failed(selectLibraryCalls(getOperation(), target, device)))
      signalPassFailure();
  }
};

struct SelectCudaLibraryCallsPass
    : impl::SelectCudaLibraryCallsPassBase<SelectCudaLibraryCallsPass> {
  using SelectCudaLibraryCallsPassBase::SelectCudaLibraryCallsPassBase;

  void runOnOperation() override {
    Target target = kCudaTarget;
    if (!fuseAttention)
      target.attention = target.f32Attention = "";
    if (failed(selectLibraryCalls(getOperation(), target, device)))
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
