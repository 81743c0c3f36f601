//===- RefineShapes.cpp - Bind input shapes and propagate static shapes -----===//

#include "compiler/transforms/Passes.h"
#include "dialects/graph/GraphOps.h"
#include "dialects/kiln/KilnAttributes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/Interfaces/InferTypeOpInterface.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>

namespace kiln {
#define GEN_PASS_DEF_REFINESHAPESPASS
#include "compiler/transforms/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

/// The attribute frontends put on function arguments to keep the model's input names.
constexpr llvm::StringLiteral kNameAttr = ::kiln::attrs::kName;

/// The more static of two compatible types: each dimension of `refined` that is static wins.
RankedTensorType meet(RankedTensorType current, RankedTensorType refined) {
  SmallVector<int64_t> shape(current.getShape());
  for (auto [dim, other] : llvm::zip_equal(shape, refined.getShape()))
    if (dim == graph::kDynamic)
      dim = other;
  return current.clone(shape);
}

/// A slice's start and limit may lie past a dynamic dimension's size (frontends cannot clamp
/// them; the lowering clamps them at run time), but not past a static one's. Once refinement
/// makes the dimension static, they are clamped to its size, as a frontend would have.
void clampSliceBounds(graph::SliceOp slice) {
  RankedTensorType input = slice.getInput().getType();
  SmallVector<int64_t> starts(slice.getStarts()), limits(slice.getLimits());
  ArrayRef<int64_t> strides = slice.getStrides();
  int64_t rank = input.getRank();
  if (int64_t(starts.size()) != rank || int64_t(limits.size()) != rank ||
      int64_t(strides.size()) != rank)
    return; // The inference names the attribute that does not cover the rank.
  for (int64_t d = 0; d < rank; ++d) {
    if (input.isDynamicDim(d) || strides[d] < 0)
      continue;
    starts[d] = std::min(starts[d], input.getDimSize(d));
    limits[d] = std::min(limits[d], input.getDimSize(d));
  }
  slice.setStarts(starts);
  slice.setLimits(limits);
}

struct RefineShapesPass : impl::RefineShapesPassBase<RefineShapesPass> {
  using RefineShapesPassBase::RefineShapesPassBase;

  explicit RefineShapesPass(ArrayRef<ShapeBinding> values)
      : given(values.begin(), values.end()) {}

  /// Bindings given as values (createRefineShapesPass); the textual option's otherwise.
  SmallVector<ShapeBinding> given;

  void runOnOperation() override {
    func::FuncOp function = getOperation();
    if (failed(bindArguments(function)))
      return signalPassFailure();
    bool failedInference = false;
    function.walk([&](Operation *op) {
      if (op->getDialect() && llvm::isa<graph::GraphDialect>(op->getDialect()))
        if (failed(refineResults(op)))
          failedInference = true;
    });
    if (failedInference)
      return signalPassFailure();
    updateFunctionType(function);
  }

  LogicalResult bindArguments(func::FuncOp function) {
    if (function.isExternal())
      return success();
    Block &entry = function.front();
    SmallVector<ShapeBinding> all(given);
    for (const std::string &text : bindings) {
      FailureOr<ShapeBinding> parsed = parseShapeBinding(text);
      if (failed(parsed))
        return function.emitError("malformed shape binding '")
               << text << "', expected NAME=DIMS like input=1x3x224x224";
      all.push_back(*parsed);
    }
    for (const ShapeBinding &shape : all) {
      StringRef name = shape.name;
      const SmallVector<int64_t> *dims = &shape.dims;
      std::string binding = formatShapeBinding(shape);
      std::optional<unsigned> index;
      for (unsigned i = 0; i < function.getNumArguments(); ++i) {
        auto argName = function.getArgAttrOfType<StringAttr>(i, kNameAttr);
        if ((argName && argName.getValue() == name) || name == llvm::utostr(i))
          index = i;
      }
      if (!index)
        return function.emitError("shape binding '") << binding << "' names no argument";
      BlockArgument argument = entry.getArgument(*index);
      auto type = llvm::dyn_cast<RankedTensorType>(argument.getType());
      RankedTensorType bound = type ? type.clone(*dims) : RankedTensorType();
      if (!type || type.getRank() != static_cast<int64_t>(dims->size()) ||
          !graph::areRefinableTypes(TypeRange{type}, TypeRange{bound}))
        return function.emitError("shape binding '")
               << binding << "' does not fit argument " << *index << " of type " << argument.getType();
      argument.setType(meet(type, bound));
      if (shape.hasRange()) {
        auto refined = cast<RankedTensorType>(argument.getType());
        for (auto [d, range] : llvm::enumerate(shape.bounds))
          if (!refined.isDynamicDim(d) &&
              (refined.getDimSize(d) < range.first ||
               (range.second != graph::kDynamic && refined.getDimSize(d) > range.second)))
            return function.emitError("shape binding '")
                   << binding << "': dimension " << d << " of argument " << *index << " is "
                   << refined.getDimSize(d) << ", outside the range";
        SmallVector<int64_t> bounds;
        for (auto [low, high] : shape.bounds)
          bounds.append({low, high});
        function.setArgAttr(*index, kDimBoundsAttr,
                            Builder(function.getContext()).getDenseI64ArrayAttr(bounds));
      }
    }
    return success();
  }

  LogicalResult refineResults(Operation *op) {
    if (auto slice = llvm::dyn_cast<graph::SliceOp>(op))
      clampSliceBounds(slice);
    auto inferable = llvm::dyn_cast<InferTypeOpInterface>(op);
    if (!inferable)
      return success();
    SmallVector<Type> inferred;
    if (failed(inferable.inferReturnTypes(op->getContext(), op->getLoc(), op->getOperands(),
                                          op->getRawDictionaryAttrs(),
                                          op->getPropertiesStorage(), op->getRegions(),
                                          inferred)))
      return failure();
    for (auto [result, type] : llvm::zip_equal(op->getResults(), inferred)) {
      auto current = llvm::dyn_cast<RankedTensorType>(result.getType());
      auto refined = llvm::dyn_cast<RankedTensorType>(type);
      if (!current || !refined || current.getRank() != refined.getRank())
        continue;
      if (!graph::areRefinableTypes(TypeRange{refined}, TypeRange{current}))
        return op->emitOpError("inferred type ") << refined << " contradicts " << current;
      result.setType(meet(current, refined));
    }
    return success();
  }

  static void updateFunctionType(func::FuncOp function) {
    if (function.isExternal())
      return;
    SmallVector<Type> results(function.getResultTypes());
    function.walk([&](func::ReturnOp ret) { results.assign(ret.getOperandTypes().begin(),
                                                           ret.getOperandTypes().end()); });
    function.setType(FunctionType::get(function.getContext(),
                                       function.front().getArgumentTypes(), results));
  }
};

} // namespace
FailureOr<ShapeBinding> parseShapeBinding(StringRef text) {
  auto [name, dimsText] = text.rsplit('=');
  if (name.empty() || dimsText.empty() || !text.contains('='))
    return failure();
  ShapeBinding binding;
  binding.name = name.str();
  SmallVector<StringRef> parts;
  dimsText.split(parts, 'x');
  bool ranged = false;
  for (StringRef part : parts) {
    int64_t size, low, high;
    if (part == "?") {
      binding.dims.push_back(graph::kDynamic);
      binding.bounds.push_back({1, graph::kDynamic});
      ranged = true;
    } else if (auto [lowText, highText] = part.split(".."); part.contains("..")) {
      // "LO..HI", or "LO.." without an upper bound.
      high = graph::kDynamic;
      if (lowText.getAsInteger(10, low) || low < 1 ||
          (!highText.empty() && (highText.getAsInteger(10, high) || high < low)))
        return failure();
      binding.dims.push_back(graph::kDynamic);
      binding.bounds.push_back({low, high});
      ranged = true;
    } else if (part.getAsInteger(10, size) || size < 0) {
      return failure();
    } else {
      binding.dims.push_back(size);
      binding.bounds.push_back({size, size});
    }
  }
  // Bounds matter where a dimension is left dynamic: "?" (1 or more, no upper bound) or a range.
  if (!ranged)
    binding.bounds.clear();
  return binding;
}

std::string formatShapeBinding(const ShapeBinding &binding) {
  std::string text = binding.name + "=";
  for (auto [i, dim] : llvm::enumerate(binding.dims)) {
    text += i ? "x" : "";
    if (dim != graph::kDynamic)
      text += std::to_string(dim);
    else if (binding.hasRange() && binding.bounds[i].second != graph::kDynamic)
      text +=
          std::to_string(binding.bounds[i].first) + ".." + std::to_string(binding.bounds[i].second);
    else if (binding.hasRange() && binding.bounds[i].first > 1)
      text += std::to_string(binding.bounds[i].first) + "..";
    else
      text += "?";
  }
  return text;
}

std::unique_ptr<Pass> createRefineShapesPass(ArrayRef<ShapeBinding> bindings) {
  return std::make_unique<RefineShapesPass>(bindings);
}

} // namespace kiln
