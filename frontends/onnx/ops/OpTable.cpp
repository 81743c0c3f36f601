//===- OpTable.cpp - The operator table and the node translation context ---===//

#include "frontends/onnx/ops/OpTable.h"

#include "frontends/onnx/ModelLoader.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Utils/StaticValueUtils.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <functional>
#include <limits>
#include <optional>
#include <vector>

using namespace mlir;

namespace kiln::onnx_frontend {

Type convertElementType(MLIRContext &context, int32_t dataType) {
  Builder b(&context);
  switch (dataType) {
  case onnx::TensorProto::FLOAT:
    return b.getF32Type();
  case onnx::TensorProto::DOUBLE:
    return b.getF64Type();
  case onnx::TensorProto::FLOAT16:
    return b.getF16Type();
  case onnx::TensorProto::BFLOAT16:
    return b.getBF16Type();
  case 17: // FLOAT8E4M3FN
    return b.getType<Float8E4M3FNType>();
  case 18: // FLOAT8E4M3FNUZ
    return b.getType<Float8E4M3FNUZType>();
  case 19: // FLOAT8E5M2
    return b.getType<Float8E5M2Type>();
  case 20: // FLOAT8E5M2FNUZ
    return b.getType<Float8E5M2FNUZType>();
  case onnx::TensorProto::INT64:
    return b.getI64Type();
  case onnx::TensorProto::INT32:
    return b.getI32Type();
  case onnx::TensorProto::INT16:
    return b.getI16Type();
  case onnx::TensorProto::INT8:
    return b.getI8Type();
  case onnx::TensorProto::UINT8:
    return IntegerType::get(&context, 8, IntegerType::Unsigned);
  case onnx::TensorProto::UINT16:
    return IntegerType::get(&context, 16, IntegerType::Unsigned);
  case onnx::TensorProto::UINT32:
    return IntegerType::get(&context, 32, IntegerType::Unsigned);
  case onnx::TensorProto::UINT64:
    return IntegerType::get(&context, 64, IntegerType::Unsigned);
  case onnx::TensorProto::BOOL:
    return b.getI1Type();
  default:
    // INT4, UINT4, INT2 and UINT2: one element per byte (subByteInteger).
    if (std::optional<SubByteInteger> integer = subByteInteger(dataType))
      return integer->isSigned ? b.getI8Type()
                               : Type(IntegerType::get(&context, 8, IntegerType::Unsigned));
    // FLOAT4E2M1 and FLOAT8E8M0: their codes in a uint8 (kFloat4E2M1, kFloat8E8M0).
    if (dataType == kFloat4E2M1 || dataType == kFloat8E8M0)
      return IntegerType::get(&context, 8, IntegerType::Unsigned);
    return Type();
  }
}

//===----------------------------------------------------------------------===//
// NodeContext
//===----------------------------------------------------------------------===//

int32_t NodeContext::declaredElementType(int index) const {
  if (!hasInput(index))
    return 0;
  const std::string &name = node_.input(index);
  if (const TensorView *initializer = model_.findInitializer(name))
    return initializer->dataType;
  const onnx::GraphProto &graph = model_.proto().graph();
  for (const auto *values : {&graph.input(), &graph.value_info(), &graph.output()})
    for (const onnx::ValueInfoProto &value : *values)
      if (value.name() == name && value.type().has_tensor_type())
        return value.type().tensor_type().elem_type();
  return 0;
}

namespace {

/// The type the graph declares for value `name` (a graph output or a value_info) when every
/// dimension is known; null otherwise.
RankedTensorType declaredTypeOf(const onnx::GraphProto &graph, const std::string &name,
                                MLIRContext &context) {
  for (const auto *values : {&graph.output(), &graph.value_info()}) {
    for (const onnx::ValueInfoProto &value : *values) {
      if (value.name() != name || !value.type().has_tensor_type() ||
          !value.type().tensor_type().has_shape())
        continue;
      const onnx::TensorShapeProto &shape = value.type().tensor_type().shape();
      SmallVector<int64_t> dims;
      for (const onnx::TensorShapeProto::Dimension &dim : shape.dim()) {
        if (!dim.has_dim_value() || dim.dim_value() < 0)
          return {};
        dims.push_back(dim.dim_value());
      }
      Type element = convertElementType(context, value.type().tensor_type().elem_type());
      if (!element)
        return {};
      return RankedTensorType::get(dims, element);
    }
  }
  return {};
}

/// The number of elements of a tensor's dims.
int64_t elementCount(const google::protobuf::RepeatedField<int64_t> &dims) {
  int64_t count = 1;
  for (int64_t dim : dims)
    count *= dim;
  return count;
}

} // namespace

RankedTensorType NodeContext::declaredOutputType(int index) const {
  if (!outputUsed(index))
    return {};
  return declaredTypeOf(model_.proto().graph(), node_.output(index), *builder_.getContext());
}

std::optional<SmallVector<int64_t>> NodeContext::shapeDeclaredDownstream(int index) const {
  if (RankedTensorType declared = declaredOutputType(index))
    return SmallVector<int64_t>(declared.getShape());
  if (!outputUsed(index))
    return std::nullopt;
  const onnx::GraphProto &graph = model_.proto().graph();
  // A single element of rank 0 or 1 broadcasts without changing the other operand's shape.
  auto isSingle = [&](const std::string &name) {
    if (name.empty())
      return false;
    if (Value value = lookup_(name)) {
      auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
      return type && type.hasStaticShape() && type.getNumElements() == 1 && type.getRank() <= 1;
    }
    if (const TensorView *initializer = model_.findInitializer(name))
      return initializer->dims.size() <= 1 && initializer->elementCount == 1;
    for (const onnx::NodeProto &node : graph.node())
      if (node.op_type() == "Constant" && node.output_size() == 1 && node.output(0) == name)
        for (const onnx::AttributeProto &attribute : node.attribute())
          if (attribute.name() == "value" && attribute.has_t())
            return attribute.t().dims_size() <= 1 && elementCount(attribute.t().dims()) == 1;
    return false;
  };
  static const char *const kElementwise[] = {
      "Identity", "Cast", "Neg", "Abs", "Sign", "Floor", "Ceil", "Round",   "Reciprocal",
      "Sqrt",     "Exp",  "Log", "Sin", "Cos",  "Tan",   "Tanh", "Sigmoid", "Relu",
      "Erf",      "Add",  "Sub", "Mul", "Div",  "Pow",   "Max",  "Min"};
  std::vector<std::string> same{node_.output(index)};
  auto isSame = [&](const std::string &name) { return llvm::is_contained(same, name); };
  bool after = false;
  for (const onnx::NodeProto &node : graph.node()) {
    if (!after) {
      after = llvm::is_contained(node.output(), node_.output(index));
      continue;
    }
    if (!(node.domain().empty() || node.domain() == "ai.onnx") ||
        !llvm::is_contained(kElementwise, node.op_type()) || node.output_size() != 1)
      continue;
    bool reaches = llvm::any_of(node.input(), isSame);
    bool neutral = llvm::all_of(
        node.input(), [&](const std::string &name) { return isSame(name) || isSingle(name); });
    if (!reaches || !neutral)
      continue;
    if (RankedTensorType declared = declaredTypeOf(graph, node.output(0), *builder_.getContext()))
      return SmallVector<int64_t>(declared.getShape());
    same.push_back(node.output(0));
  }
  return std::nullopt;
}

LogicalResult NodeContext::addCheck(Value holds, StringRef what) {
  auto type = llvm::dyn_cast_or_null<RankedTensorType>(holds ? holds.getType() : Type());
  if (!type || !type.getElementType().isInteger(1) || !check_)
    return emitError() << "cannot check " << what << " at run time";
  std::string message;
  llvm::raw_string_ostream os(message);
  os << "node '" << label_ << "' (" << node_.op_type() << ", opset " << opset_ << "): " << what;
  check_(holds, std::move(message));
  return success();
}

InFlightDiagnostic NodeContext::emitError() {
  InFlightDiagnostic diagnostic = mlir::emitError(loc_);
  diagnostic << "node '" << label_ << "' (" << node_.op_type() << ", opset " << opset_ << "): ";
  return diagnostic;
}

LogicalResult NodeContext::requireInputs(int count) {
  for (int i = 0; i < count; ++i)
    if (!hasInput(i))
      return emitError() << "expects input " << i << ", which is missing";
  return success();
}

LogicalResult NodeContext::requireUnusedOutputsFrom(int count) {
  for (int i = count; i < node_.output_size(); ++i)
    if (!node_.output(i).empty())
      return emitError() << "output " << i << " ('" << node_.output(i)
                         << "') is not supported; only the first " << count
                         << (count == 1 ? " output is" : " outputs are") << " produced";
  return success();
}

const onnx::AttributeProto *NodeContext::attribute(StringRef name) const {
  for (const onnx::AttributeProto &attribute : node_.attribute())
    if (attribute.name() == name)
      return &attribute;
  return nullptr;
}

int64_t NodeContext::intAttr(StringRef name, int64_t defaultValue) const {
  const onnx::AttributeProto *a = attribute(name);
  return a ? a->i() : defaultValue;
}

float NodeContext::floatAttr(StringRef name, float defaultValue) const {
  const onnx::AttributeProto *a = attribute(name);
  return a ? a->f() : defaultValue;
}

std::string NodeContext::stringAttr(StringRef name, StringRef defaultValue) const {
  const onnx::AttributeProto *a = attribute(name);
  return a ? a->s() : defaultValue.str();
}

std::optional<SmallVector<int64_t>> NodeContext::intsAttr(StringRef name) const {
  const onnx::AttributeProto *a = attribute(name);
  if (!a)
    return std::nullopt;
  return SmallVector<int64_t>(a->ints().begin(), a->ints().end());
}

std::optional<SmallVector<float>> NodeContext::floatsAttr(StringRef name) const {
  const onnx::AttributeProto *a = attribute(name);
  if (!a)
    return std::nullopt;
  return SmallVector<float>(a->floats().begin(), a->floats().end());
}

std::optional<DenseElementsAttr> NodeContext::constantElements(Value value) {
  if (!value)
    return std::nullopt;
  auto constant = value.getDefiningOp<graph::ConstantOp>();
  if (!constant)
    return std::nullopt;
  auto elements = llvm::dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!elements)
    return std::nullopt;
  return elements;
}

std::optional<DenseElementsAttr> NodeContext::constantInput(int index) {
  return hasInput(index) ? constantElements(specialized(input(index))) : std::nullopt;
}

namespace {

using ShapeEntry = NodeContext::ShapeEntry;

/// The elements of a small integer tensor known at import time, in row-major order; an element
/// may be a dynamic dimension of another value.
struct KnownIntegers {
  SmallVector<int64_t> shape;
  SmallVector<ShapeEntry> values;
};

ShapeEntry number(int64_t value) {
  ShapeEntry entry;
  entry.value = value;
  return entry;
}

/// Tensors with more elements are not evaluated: shape arithmetic works on a handful of values.
constexpr int64_t kMaxEvaluatedElements = 4096;

/// A dynamic entry's expression over s0, its dimension (s0 itself when it has none).
AffineExpr expressionOf(const ShapeEntry &entry, MLIRContext *context) {
  if (!entry.isDynamicDim())
    return getAffineConstantExpr(entry.value, context);
  return entry.expr ? entry.expr : getAffineSymbolExpr(0, context);
}

/// Whether `expr` over a dimension (never negative) is never negative.
bool nonNegative(AffineExpr expr) {
  if (auto constant = llvm::dyn_cast<AffineConstantExpr>(expr))
    return constant.getValue() >= 0;
  if (llvm::isa<AffineSymbolExpr>(expr))
    return true;
  auto binary = llvm::dyn_cast<AffineBinaryOpExpr>(expr);
  if (!binary)
    return false;
  if (expr.getKind() == AffineExprKind::Add || expr.getKind() == AffineExprKind::Mul)
    return nonNegative(binary.getLHS()) && nonNegative(binary.getRHS());
  auto divisor = llvm::dyn_cast<AffineConstantExpr>(binary.getRHS());
  return divisor && divisor.getValue() > 0 && nonNegative(binary.getLHS());
}

/// Shape arithmetic on a dynamic dimension (Swin's `batch * windows / windows`): an Add, Sub or
/// Mul with a number or the same dimension's expression, or a Div by a positive number of a
/// never-negative dividend (where ONNX's truncation is the floor), as an expression of that
/// dimension; a number where it folds to one. Nothing for any other arithmetic.
std::optional<ShapeEntry> dynamicArithmetic(Operation *op, const ShapeEntry &a,
                                            const ShapeEntry &b) {
  if (a.isDynamicDim() && b.isDynamicDim() && (a.source != b.source || a.dim != b.dim))
    return std::nullopt;
  MLIRContext *context = op->getContext();
  AffineExpr x = expressionOf(a, context), y = expressionOf(b, context), result;
  if (llvm::isa<graph::AddOp>(op)) {
    result = x + y;
  } else if (llvm::isa<graph::SubOp>(op)) {
    result = x - y;
  } else if (llvm::isa<graph::MulOp>(op) && !(a.isDynamicDim() && b.isDynamicDim())) {
    result = x * y;
  } else if (llvm::isa<graph::DivOp>(op) && !b.isDynamicDim() && b.value > 0 && nonNegative(x)) {
    result = x.floorDiv(b.value);
  } else {
    return std::nullopt;
  }
  result = simplifyAffineExpr(result, /*numDims=*/0, /*numSymbols=*/1);
  if (auto constant = llvm::dyn_cast<AffineConstantExpr>(result))
    return number(constant.getValue());
  ShapeEntry entry = a.isDynamicDim() ? a : b;
  entry.value = 0;
  entry.expr = llvm::isa<AffineSymbolExpr>(result) ? AffineExpr() : result;
  return entry;
}

/// Evaluates `value` when it is an integer tensor computed from constants by the ops exported
/// shape arithmetic uses (Shape folded to a constant, then Gather, Unsqueeze, Concat, Slice, Cast
/// and elementwise arithmetic, as PyTorch writes `x.view(x.size(0), -1)`). Graph inputs the
/// import is specialized for are turned into constants by `specialize` on the way.
std::optional<KnownIntegers> evaluateIntegers(Value value, const NodeContext &ctx, int depth = 0) {
  value = ctx.specialized(value);
  auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
  if (!type || !type.hasStaticShape() || type.getNumElements() > kMaxEvaluatedElements ||
      depth > 32)
    return std::nullopt;
  KnownIntegers result;
  result.shape.assign(type.getShape().begin(), type.getShape().end());
  // A tensor without elements is known whatever computes it (a graph input included).
  if (type.getNumElements() == 0)
    return result;
  Operation *op = value.getDefiningOp();
  if (!op)
    return std::nullopt;
  if (auto constant = llvm::dyn_cast<graph::ConstantOp>(op)) {
    // Integer tensors kept as resource blobs (--resource-threshold) are read in place.
    if (auto blob = llvm::dyn_cast<DenseI64ResourceElementsAttr>(constant.getValue())) {
      std::optional<ArrayRef<int64_t>> values = blob.tryGetAsArrayRef();
      if (!values)
        return std::nullopt;
      for (int64_t element : *values)
        result.values.push_back(number(element));
      return result;
    }
    if (auto blob = llvm::dyn_cast<DenseI32ResourceElementsAttr>(constant.getValue())) {
      std::optional<ArrayRef<int32_t>> values = blob.tryGetAsArrayRef();
      if (!values)
        return std::nullopt;
      for (int32_t element : *values)
        result.values.push_back(number(element));
      return result;
    }
    auto elements = llvm::dyn_cast<DenseElementsAttr>(constant.getValue());
    if (!elements)
      return std::nullopt;
    if (llvm::isa<IntegerType>(elements.getElementType())) {
      for (const APInt &element : elements.getValues<APInt>())
        result.values.push_back(number(elements.getElementType().isInteger(1) ||
                                               elements.getElementType().isUnsignedInteger()
                                           ? static_cast<int64_t>(element.getZExtValue())
                                           : element.getSExtValue()));
      return result;
    }
    return std::nullopt;
  }
  if (!llvm::isa<IntegerType>(type.getElementType()))
    return std::nullopt;
  auto operand = [&](unsigned index) {
    return evaluateIntegers(op->getOperand(index), ctx, depth + 1);
  };
  // A placeholder of Shape: its static dimensions are numbers, the dynamic ones stay symbolic.
  if (auto placeholder = llvm::dyn_cast<UnrealizedConversionCastOp>(op)) {
    auto start = placeholder->getAttrOfType<IntegerAttr>(NodeContext::kShapeStartAttr);
    if (!start || placeholder->getNumOperands() != 1)
      return std::nullopt;
    Value source = placeholder->getOperand(0);
    auto sourceType = llvm::cast<RankedTensorType>(source.getType());
    for (int64_t i = 0; i < type.getNumElements(); ++i) {
      int64_t dim = start.getInt() + i;
      ShapeEntry entry = number(sourceType.getDimSize(dim));
      if (sourceType.isDynamicDim(dim)) {
        entry.source = source;
        entry.dim = dim;
      }
      result.values.push_back(entry);
    }
    return result;
  }
  // Ops that keep the elements in order and only change the shape.
  if (llvm::isa<graph::CastOp, graph::ReshapeOp, graph::FlattenOp, graph::SqueezeOp,
                graph::UnsqueezeOp>(op)) {
    std::optional<KnownIntegers> input = operand(0);
    if (!input)
      return std::nullopt;
    result.values = std::move(input->values);
    return result;
  }
  if (auto concat = llvm::dyn_cast<graph::ConcatOp>(op)) {
    if (type.getRank() != 1)
      return std::nullopt;
    for (unsigned i = 0; i < op->getNumOperands(); ++i) {
      std::optional<KnownIntegers> input = operand(i);
      if (!input)
        return std::nullopt;
      result.values.append(input->values);
    }
    return result;
  }
  if (auto gather = llvm::dyn_cast<graph::GatherOp>(op)) {
    std::optional<KnownIntegers> input = operand(0), indices = operand(1);
    if (!input || !indices || input->shape.size() != 1)
      return std::nullopt;
    int64_t size = input->shape[0];
    for (const ShapeEntry &entry : indices->values) {
      if (entry.isDynamicDim())
        return std::nullopt;
      int64_t index = entry.value;
      if (index < 0)
        index += size;
      if (index < 0 || index >= size)
        return std::nullopt;
      result.values.push_back(input->values[index]);
    }
    return result;
  }
  // Rearrangements of a known tensor of any rank (F.pad's exporters reverse and transpose the
  // [before, after] pairs of its padding): each result element read from its source position.
  if (llvm::isa<graph::SliceOp, graph::TransposeOp, graph::ExpandOp>(op)) {
    std::optional<KnownIntegers> input = operand(0);
    if (!input)
      return std::nullopt;
    ArrayRef<int64_t> from = input->shape, to = result.shape;
    SmallVector<int64_t> index(to.size(), 0), source(from.size(), 0);
    for (int64_t i = 0; i < type.getNumElements(); ++i) {
      // `index` is element i's position in the result, row-major.
      for (int64_t d = static_cast<int64_t>(to.size()) - 1, rest = i; d >= 0; --d) {
        index[d] = rest % to[d];
        rest /= to[d];
      }
      if (auto slice = llvm::dyn_cast<graph::SliceOp>(op)) {
        for (size_t d = 0; d < from.size(); ++d)
          source[d] = slice.getStarts()[d] + index[d] * slice.getStrides()[d];
      } else if (auto transpose = llvm::dyn_cast<graph::TransposeOp>(op)) {
        for (size_t d = 0; d < to.size(); ++d)
          source[transpose.getPermutation()[d]] = index[d];
      } else {
        // Broadcasting: the operand's dimensions align with the result's last ones.
        size_t offset = to.size() - from.size();
        for (size_t d = 0; d < from.size(); ++d)
          source[d] = from[d] == 1 ? 0 : index[d + offset];
      }
      int64_t flat = 0;
      for (size_t d = 0; d < from.size(); ++d) {
        if (source[d] < 0 || source[d] >= from[d])
          return std::nullopt;
        flat = flat * from[d] + source[d];
      }
      result.values.push_back(input->values[flat]);
    }
    return result;
  }
  if (llvm::isa<graph::NegOp, graph::AbsOp, graph::NotOp>(op)) {
    std::optional<KnownIntegers> input = operand(0);
    if (!input)
      return std::nullopt;
    // Not is logical on booleans (i1) and bitwise on other integers.
    bool boolean = type.getElementType().isInteger(1);
    for (const ShapeEntry &element : input->values) {
      if (element.isDynamicDim())
        return std::nullopt;
      int64_t v = element.value;
      if (llvm::isa<graph::NegOp>(op))
        v = -v;
      else if (llvm::isa<graph::AbsOp>(op))
        v = v < 0 ? -v : v;
      else
        v = boolean ? (v == 0 ? 1 : 0) : ~v;
      result.values.push_back(number(v));
    }
    return result;
  }
  // Arithmetic, and the logic the exporters' shape code uses to pick between sizes (ONNX's
  // Attention expansion computes the grouped-query repeat count with Div, Mod, Equal, Not and
  // And on head counts).
  if (llvm::isa<graph::AddOp, graph::SubOp, graph::MulOp, graph::DivOp, graph::MaxOp,
                graph::MinOp, graph::RemOp, graph::AndOp, graph::OrOp, graph::XorOp>(op)) {
    std::optional<KnownIntegers> lhs = operand(0), rhs = operand(1);
    int64_t count = type.getNumElements();
    // Only equal sizes and single elements broadcast here.
    auto at = [count](const KnownIntegers &known, int64_t i) -> std::optional<ShapeEntry> {
      size_t index = known.values.size() == 1 ? 0 : static_cast<size_t>(i);
      if (known.values.size() != 1 && static_cast<int64_t>(known.values.size()) != count)
        return std::nullopt;
      return known.values[index];
    };
    if (!lhs || !rhs)
      return std::nullopt;
    for (int64_t i = 0; i < count; ++i) {
      std::optional<ShapeEntry> left = at(*lhs, i), right = at(*rhs, i);
      if (!left || !right)
        return std::nullopt;
      if (left->isDynamicDim() || right->isDynamicDim()) {
        std::optional<ShapeEntry> entry = dynamicArithmetic(op, *left, *right);
        if (!entry)
          return std::nullopt;
        result.values.push_back(*entry);
        continue;
      }
      const int64_t a = left->value, b = right->value;
      int64_t element;
      if (llvm::isa<graph::AddOp>(op))
        element = a + b;
      else if (llvm::isa<graph::SubOp>(op))
        element = a - b;
      else if (llvm::isa<graph::MulOp>(op))
        element = a * b;
      else if (llvm::isa<graph::MaxOp>(op))
        element = std::max(a, b);
      else if (llvm::isa<graph::MinOp>(op))
        element = std::min(a, b);
      else if (llvm::isa<graph::AndOp>(op))
        element = a & b;
      else if (llvm::isa<graph::OrOp>(op))
        element = a | b;
      else if (llvm::isa<graph::XorOp>(op))
        element = a ^ b;
      else if (b == 0 || (a == std::numeric_limits<int64_t>::min() && b == -1))
        return std::nullopt;
      else if (llvm::isa<graph::RemOp>(op))
        element = a % b; // The sign of the dividend, as graph.rem defines it.
      else
        element = a / b;
      result.values.push_back(number(element));
    }
    return result;
  }
  // Comparisons and selections between known numbers: the TorchScript exporter computes the
  // shape of `expand(-1, ...)` as Where(Equal(shape, -1), ones, shape).
  if (llvm::isa<graph::CompareOp, graph::SelectOp>(op)) {
    SmallVector<KnownIntegers> inputs;
    for (unsigned i = 0; i < op->getNumOperands(); ++i) {
      std::optional<KnownIntegers> input = operand(i);
      if (!input)
        return std::nullopt;
      inputs.push_back(std::move(*input));
    }
    int64_t count = type.getNumElements();
    for (int64_t i = 0; i < count; ++i) {
      SmallVector<ShapeEntry> entries;
      for (const KnownIntegers &input : inputs) {
        // Only equal sizes and single elements broadcast here.
        int64_t size = static_cast<int64_t>(input.values.size());
        if (size != 1 && size != count)
          return std::nullopt;
        entries.push_back(input.values[size == 1 ? 0 : i]);
      }
      auto compare = llvm::dyn_cast<graph::CompareOp>(op);
      if (llvm::any_of(entries, [](const ShapeEntry &e) { return e.isDynamicDim(); })) {
        // A dynamic dimension is never negative, and equals itself: the exporters' test of a
        // shape for -1 (expand(-1, ...)) decides; a selection with a known condition picks an
        // entry, dynamic or not.
        if (!compare) {
          if (entries[0].isDynamicDim())
            return std::nullopt;
          result.values.push_back(entries[0].value != 0 ? entries[1] : entries[2]);
          continue;
        }
        const ShapeEntry &a = entries[0], &b = entries[1];
        MLIRContext *context = op->getContext();
        std::optional<bool> equal;
        if (a.isDynamicDim() && b.isDynamicDim() && a.source == b.source && a.dim == b.dim &&
            a.expr == b.expr)
          equal = true;
        else if ((a.isDynamicDim() && !b.isDynamicDim() && b.value < 0 &&
                  nonNegative(expressionOf(a, context))) ||
                 (b.isDynamicDim() && !a.isDynamicDim() && a.value < 0 &&
                  nonNegative(expressionOf(b, context))))
          equal = false;
        graph::ComparisonDirection direction = compare.getDirection();
        if (!equal || (direction != graph::ComparisonDirection::eq &&
                       direction != graph::ComparisonDirection::ne))
          return std::nullopt;
        bool holds = direction == graph::ComparisonDirection::eq ? *equal : !*equal;
        result.values.push_back(number(holds ? 1 : 0));
        continue;
      }
      SmallVector<int64_t> elements;
      for (const ShapeEntry &entry : entries)
        elements.push_back(entry.value);
      if (compare) {
        int64_t a = elements[0], b = elements[1];
        bool holds = false;
        switch (compare.getDirection()) {
        case graph::ComparisonDirection::eq: holds = a == b; break;
        case graph::ComparisonDirection::ne: holds = a != b; break;
        case graph::ComparisonDirection::lt: holds = a < b; break;
        case graph::ComparisonDirection::gt: holds = a > b; break;
        case graph::ComparisonDirection::le: holds = a <= b; break;
        case graph::ComparisonDirection::ge: holds = a >= b; break;
        }
        result.values.push_back(number(holds ? 1 : 0));
      } else {
        result.values.push_back(number(elements[0] != 0 ? elements[1] : elements[2]));
      }
    }
    return result;
  }
  return std::nullopt;
}

} // namespace

bool ShapeEntry::neverNegative() const {
  if (!isDynamicDim())
    return value >= 0;
  return !expr || nonNegative(expr);
}

FailureOr<SmallVector<ShapeEntry>> NodeContext::shapeEntries(int index, StringRef what) {
  std::optional<KnownIntegers> known = evaluateIntegers(input(index), *this);
  if (!known) {
    emitError() << what << " (input " << index << ") must be an integer constant "
                << "(an initializer, a Constant node or shape arithmetic on them) to be imported";
    return failure();
  }
  return known->values;
}

bool NodeContext::knownAtImport(int index) const {
  return hasInput(index) && evaluateIntegers(input(index), *this).has_value();
}

std::optional<SmallVector<int64_t>> NodeContext::knownInts(Value value) const {
  std::optional<KnownIntegers> known = evaluateIntegers(value, *this);
  if (!known)
    return std::nullopt;
  SmallVector<int64_t> values;
  for (const ShapeEntry &entry : known->values) {
    if (entry.isDynamicDim())
      return std::nullopt;
    values.push_back(entry.value);
  }
  return values;
}

FailureOr<SmallVector<int64_t>> NodeContext::constantInts(int index, StringRef what) {
  FailureOr<SmallVector<ShapeEntry>> entries = shapeEntries(index, what);
  if (failed(entries))
    return failure();
  SmallVector<int64_t> values;
  for (const ShapeEntry &entry : *entries) {
    if (entry.isDynamicDim()) {
      emitError() << what << " (input " << index << ") depends on dynamic dimension "
                  << entry.dim << " of a value of type " << entry.source.getType()
                  << "; bind the graph inputs' shapes with --shape";
      return failure();
    }
    values.push_back(entry.value);
  }
  return values;
}

std::optional<std::pair<Value, int64_t>> NodeContext::dimRoot(Value value, int64_t dim,
                                                               bool farthest) {
  for (int steps = 0; steps < 4096; ++steps) {
    auto type = llvm::dyn_cast<RankedTensorType>(value.getType());
    if (!type || dim < 0 || dim >= type.getRank() || !type.isDynamicDim(dim))
      return std::nullopt;
    Operation *op = value.getDefiningOp();
    if (!op)
      return std::make_pair(value, dim);
    // The first operand whose aligned dimension is dynamic (a broadcast reads `?` against `?`
    // as one dimension).
    auto aligned = [&](ValueRange operands) -> std::optional<std::pair<Value, int64_t>> {
      for (Value operand : operands) {
        auto operandType = llvm::dyn_cast<RankedTensorType>(operand.getType());
        if (!operandType)
          continue;
        int64_t at = dim - (type.getRank() - operandType.getRank());
        if (at >= 0 && operandType.isDynamicDim(at))
          return std::make_pair(operand, at);
      }
      return std::nullopt;
    };
    // A size of the run read with graph.dim.
    auto fromSize = [](Value size) -> std::optional<std::pair<Value, int64_t>> {
      if (auto read = size.getDefiningOp<graph::DimOp>())
        return std::make_pair(read.getInput(), static_cast<int64_t>(read.getDim()));
      return std::nullopt;
    };
    std::optional<std::pair<Value, int64_t>> next;
    if (op->hasTrait<OpTrait::Elementwise>() ||
        llvm::isa<graph::AddOp, graph::SubOp, graph::MulOp, graph::DivOp, graph::PowOp,
                  graph::MaxOp, graph::MinOp, graph::RemOp, graph::AndOp, graph::OrOp, graph::XorOp,
                  graph::CompareOp, graph::SelectOp, graph::CastOp, graph::ShiftLeftOp,
                  graph::ShiftRightOp>(op)) {
      next = aligned(op->getOperands());
    } else if (llvm::isa<graph::LayerNormOp, graph::SoftmaxOp, graph::LogSoftmaxOp,
                         graph::BatchNormOp>(op)) {
      next = aligned(op->getOperands().take_front(1));
    } else if (auto transpose = llvm::dyn_cast<graph::TransposeOp>(op)) {
      next = std::make_pair(transpose.getInput(), transpose.getPermutation()[dim]);
    } else if (auto matmul = llvm::dyn_cast<graph::MatmulOp>(op)) {
      int64_t rank = type.getRank();
      auto lhs = llvm::cast<RankedTensorType>(matmul.getLhs().getType());
      auto rhs = llvm::cast<RankedTensorType>(matmul.getRhs().getType());
      if (dim == rank - 1 && rhs.getRank() >= 2)
        next = std::make_pair(matmul.getRhs(), rhs.getRank() - 1);
      else if (dim == rank - 2 && lhs.getRank() >= 2)
        next = std::make_pair(matmul.getLhs(), lhs.getRank() - 2);
      else if (dim < rank - 2)
        next = aligned(ValueRange{matmul.getLhs(), matmul.getRhs()});
    } else if (llvm::isa<graph::ReshapeOp, graph::FlattenOp, graph::SqueezeOp, graph::UnsqueezeOp>(
                   op)) {
      auto reshape = llvm::dyn_cast<graph::ReshapeOp>(op);
      SmallVector<OpFoldResult> shape;
      if (reshape)
        shape = getMixedValues(reshape.getShape(), reshape.getSizes(), op->getContext());
      auto input = llvm::cast<RankedTensorType>(op->getOperand(0).getType());
      auto staticProduct = [](RankedTensorType t) {
        int64_t product = 1;
        for (int64_t size : t.getShape())
          if (size != ShapedType::kDynamic)
            product *= size;
        return product;
      };
      if (dim < static_cast<int64_t>(shape.size()) && llvm::isa<Value>(shape[dim])) {
        next = fromSize(llvm::cast<Value>(shape[dim]));
      } else if (type.getNumDynamicDims() == 1 && input.getNumDynamicDims() == 1 &&
                 staticProduct(type) == staticProduct(input)) {
        // One dynamic dimension on each side and the same static elements: they are equal.
        for (int64_t d = 0; d < input.getRank(); ++d)
          if (input.isDynamicDim(d))
            next = std::make_pair(op->getOperand(0), d);
      }
    } else if (auto expand = llvm::dyn_cast<graph::ExpandOp>(op)) {
      SmallVector<OpFoldResult> shape =
          getMixedValues(expand.getShape(), expand.getSizes(), op->getContext());
      int64_t entry = dim - (type.getRank() - static_cast<int64_t>(shape.size()));
      next = aligned(ValueRange{expand.getInput()});
      if (!next && entry >= 0 && llvm::isa<Value>(shape[entry]))
        next = fromSize(llvm::cast<Value>(shape[entry]));
    } else if (auto gather = llvm::dyn_cast<graph::GatherOp>(op)) {
      int64_t axis = static_cast<int64_t>(gather.getAxis());
      int64_t indices = llvm::cast<RankedTensorType>(gather.getIndices().getType()).getRank();
      if (dim < axis)
        next = std::make_pair(gather.getInput(), dim);
      else if (dim < axis + indices)
        next = std::make_pair(gather.getIndices(), dim - axis);
      else
        next = std::make_pair(gather.getInput(), dim - indices + 1);
    } else if (auto slice = llvm::dyn_cast<graph::SliceOp>(op)) {
      if (slice.getStarts()[dim] == 0 && slice.getStrides()[dim] == 1 &&
          slice.getLimits()[dim] == std::numeric_limits<int64_t>::max())
        next = std::make_pair(slice.getInput(), dim);
    } else if (auto concat = llvm::dyn_cast<graph::ConcatOp>(op)) {
      if (static_cast<int64_t>(concat.getAxis()) != dim)
        next = aligned(concat.getInputs());
    }
    if (!next)
      return farthest ? std::make_optional(std::make_pair(value, dim)) : std::nullopt;
    std::tie(value, dim) = *next;
  }
  return std::nullopt;
}

Value NodeContext::sizeOf(const ShapeEntry &entry) {
  if (!entry.isDynamicDim())
    return arith::ConstantIndexOp::create(builder_, loc_, entry.value);
  auto [source, dim] =
      dimRoot(entry.source, entry.dim).value_or(std::make_pair(entry.source, entry.dim));
  Value size = graph::DimOp::create(builder_, loc_, source, dim);
  if (!entry.expr)
    return size;
  // Arithmetic on the dimension, as index arithmetic of the run. dynamicArithmetic divides
  // only never-negative dividends by positive numbers, so the divisions are unsigned.
  std::function<Value(AffineExpr)> expand = [&](AffineExpr expr) -> Value {
    if (auto constant = llvm::dyn_cast<AffineConstantExpr>(expr))
      return arith::ConstantIndexOp::create(builder_, loc_, constant.getValue());
    auto binary = llvm::dyn_cast<AffineBinaryOpExpr>(expr);
    if (!binary)
      return size;
    Value lhs = expand(binary.getLHS()), rhs = expand(binary.getRHS());
    switch (expr.getKind()) {
    case AffineExprKind::Add:
      return arith::AddIOp::create(builder_, loc_, lhs, rhs);
    case AffineExprKind::Mul:
      return arith::MulIOp::create(builder_, loc_, lhs, rhs);
    case AffineExprKind::FloorDiv:
      return arith::DivUIOp::create(builder_, loc_, lhs, rhs);
    case AffineExprKind::CeilDiv:
      return arith::CeilDivUIOp::create(builder_, loc_, lhs, rhs);
    default:
      return arith::RemUIOp::create(builder_, loc_, lhs, rhs);
    }
  };
  return expand(entry.expr);
}

Value NodeContext::dynamicShapeOf(Value input, int64_t start, int64_t end) {
  auto type = RankedTensorType::get({end - start}, builder_.getI64Type());
  auto placeholder = UnrealizedConversionCastOp::create(builder_, loc_, TypeRange{type}, input);
  placeholder->setAttr(kShapeStartAttr, builder_.getI64IntegerAttr(start));
  return placeholder.getResult(0);
}

Value NodeContext::constant(DenseElementsAttr attr) {
  return graph::ConstantOp::create(builder_, loc_, attr).getResult();
}

Value NodeContext::scalar(Type elementType, double value) {
  auto type = RankedTensorType::get({}, elementType);
  Attribute element;
  if (auto floatType = llvm::dyn_cast<FloatType>(elementType))
    element = builder_.getFloatAttr(floatType, value);
  else if (elementType.isInteger(1))
    element = builder_.getBoolAttr(value != 0);
  else
    element = builder_.getIntegerAttr(elementType, static_cast<int64_t>(value));
  return constant(DenseElementsAttr::get(type, element));
}

Value NodeContext::i64Vector(ArrayRef<int64_t> values) {
  auto type = RankedTensorType::get({static_cast<int64_t>(values.size())}, builder_.getI64Type());
  return constant(DenseElementsAttr::get(type, values));
}

//===----------------------------------------------------------------------===//
// OpTable
//===----------------------------------------------------------------------===//

void OpTable::add(StringRef domain, StringRef opType, int64_t sinceVersion, TranslateFn fn) {
  entries_[{domain.str(), opType.str()}][sinceVersion] = fn;
}

void OpTable::add(StringRef domain, StringRef opType, std::initializer_list<int64_t> versions,
                  TranslateFn fn) {
  for (int64_t version : versions)
    add(domain, opType, version, fn);
}

TranslateFn OpTable::lookup(StringRef domain, StringRef opType, int64_t opset) const {
  StringRef canonical = domain == "ai.onnx" ? StringRef() : domain;
  auto found = entries_.find({canonical.str(), opType.str()});
  if (found == entries_.end())
    return nullptr;
  auto versions = found->second.upper_bound(opset);
  if (versions == found->second.begin())
    return nullptr;
  auto entry = std::prev(versions);
  std::optional<int64_t> revision = onnxRevision(canonical, opType, opset);
  if (revision && *revision > entry->first)
    return nullptr; // ONNX changed the operator after the newest revision translated
  return entry->second;
}

void OpTable::addTypeOnlyRevisions(StringRef domain, StringRef opType,
                                   std::initializer_list<int64_t> revisions) {
  auto &versions = entries_[{domain.str(), opType.str()}];
  for (int64_t revision : revisions) {
    auto previous = versions.lower_bound(revision);
    assert(previous != versions.begin() && "a type-only revision needs an earlier one");
    versions[revision] = std::prev(previous)->second;
  }
}

namespace {

struct OnnxRelease {
  const char *version;
  int64_t irVersion;
  int64_t defaultOpset;
};

#define KILN_ONNX_RELEASE(version, ir, opset) constexpr OnnxRelease kOnnxRelease{version, ir, opset};
#define KILN_ONNX_OPERATOR(...)
#include "frontends/onnx/ops/OnnxOperatorVersions.inc"
#undef KILN_ONNX_RELEASE
#undef KILN_ONNX_OPERATOR

const std::map<std::pair<std::string, std::string>, std::vector<int64_t>> &operatorRevisions() {
  static const auto *table = [] {
    auto *result = new std::map<std::pair<std::string, std::string>, std::vector<int64_t>>();
#define KILN_ONNX_RELEASE(...)
#define KILN_ONNX_OPERATOR(domain, opType, ...)                                                   \
  (*result)[{domain, opType}] = {__VA_ARGS__};
#include "frontends/onnx/ops/OnnxOperatorVersions.inc"
#undef KILN_ONNX_RELEASE
#undef KILN_ONNX_OPERATOR
    return result;
  }();
  return *table;
}

/// ONNX revisions that only widen the element types an operator accepts (bfloat16 at 22,
/// float4e2m1 at 23, float8e8m0 at 24, int2/uint2 at 25, float6 at 28, fewer for
/// ReduceLogSum(Exp) at 28), checked against the schemas of onnx 1.23:
/// same attributes, inputs and outputs. Cast/CastLike-24 add `round_mode`, which applies only to
/// float8e8m0, a type Kiln refuses; Range-27 adds `stash_type`, which applies only to float16 and
/// bfloat16 accumulation. Not here: revisions whose translators handle what changed (Mod-28,
/// SpaceToDepth-28 and DepthToSpace-28, registered with their operators), and QuantizeLinear-23
/// (`precision`) and DequantizeLinear-23 (`output_dtype`), which are not translated, and BitShift-28,
/// whose signed integers shift arithmetically to the right (its translator decides by opset).
void registerTypeOnlyRevisions(OpTable &t) {
  for (const char *op : {"Acos", "Acosh", "Asin", "Asinh", "Atan", "Atanh", "AveragePool", "Conv",
                         "ConvTranspose", "Cos", "Cosh", "Dropout", "Elu", "EyeLike", "GRU",
                         "GlobalAveragePool", "GlobalLpPool", "GlobalMaxPool", "HardSigmoid",
                         "HardSwish", "InstanceNormalization", "LSTM", "LpNormalization", "LpPool",
                         "MaxPool", "MaxUnpool", "Mish", "NegativeLogLikelihoodLoss", "RNN",
                         "Round", "Selu", "Sin", "Sinh", "Softplus", "Softsign", "Tan",
                         "ThresholdedRelu"})
    t.addTypeOnlyRevisions("", op, {22});
  for (const char *op : {"Constant", "ConstantOfShape", "Flatten", "Identity", "Pad", "Reshape",
                         "Shape", "Size", "Squeeze", "Transpose", "Unsqueeze"})
    t.addTypeOnlyRevisions("", op, {23, 24, 25});
  t.addTypeOnlyRevisions("", "Cast", {23, 24, 25, 28});
  t.addTypeOnlyRevisions("", "CastLike", {23, 24, 25});
  for (const char *op : {"Celu", "Compress", "Einsum", "OneHot", "ReduceLogSum",
                         "ReduceLogSumExp", "ReverseSequence"})
    t.addTypeOnlyRevisions("", op, {28});
  t.addTypeOnlyRevisions("", "TopK", {24});
  t.addTypeOnlyRevisions("", "Range", {27});
}

} // namespace

std::optional<int64_t> onnxRevision(StringRef domain, StringRef opType, int64_t opset) {
  StringRef canonical = domain == "ai.onnx" ? StringRef() : domain;
  const auto &table = operatorRevisions();
  auto found = table.find({canonical.str(), opType.str()});
  if (found == table.end())
    return std::nullopt;
  std::optional<int64_t> revision;
  for (int64_t version : found->second)
    if (version <= opset)
      revision = version;
  return revision;
}

int64_t newestKnownIrVersion() { return kOnnxRelease.irVersion; }
int64_t newestKnownDefaultOpset() { return kOnnxRelease.defaultOpset; }

const OpTable &defaultOpTable() {
  static const OpTable table = [] {
    OpTable t;
    registerElementwiseOps(t);
    registerShapeOps(t);
    registerNNOps(t);
    registerMathOps(t);
    registerConvTransposeOps(t);
    registerResamplingOps(t);
    registerPoolingOps(t);
    registerNormalizationOps(t);
    registerIndexingOps(t);
    registerLossOps(t);
    registerQuantizationOps(t);
    registerSignalOps(t);
    registerTrainingOps(t);
    registerFeatureExtractionOps(t);
    registerRecurrentOps(t);
    registerTransformerOps(t);
    registerTypeOnlyRevisions(t);
    return t;
  }();
  return table;
}

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

FailureOr<int64_t> normalizeAxis(NodeContext &ctx, int64_t axis, int64_t rank, StringRef what) {
  if (axis < -rank || axis >= rank) {
    ctx.emitError() << what << " " << axis << " is outside [" << -rank << ", " << rank
                    << ") for an input of rank " << rank;
    return failure();
  }
  return axis < 0 ? axis + rank : axis;
}

FailureOr<SmallVector<int64_t>> normalizeAxes(NodeContext &ctx, ArrayRef<int64_t> axes,
                                              int64_t rank, StringRef what) {
  SmallVector<int64_t> result;
  for (int64_t axis : axes) {
    FailureOr<int64_t> normalized = normalizeAxis(ctx, axis, rank, what);
    if (failed(normalized))
      return failure();
    result.push_back(*normalized);
  }
  llvm::sort(result);
  if (std::adjacent_find(result.begin(), result.end()) != result.end()) {
    ctx.emitError() << what << " repeat an axis";
    return failure();
  }
  return result;
}

} // namespace kiln::onnx_frontend
