//===- SymbolicShapes.cpp - Dimensions as functions of the inputs' --------===//

#include "compiler/program/SymbolicShapes.h"
#include "dialects/kiln/KilnAttributes.h"

#include "contract/library_calls.h"

#include <limits>

#include "compiler/codegen/Passes.h"
#include "compiler/transforms/Passes.h"

#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/AffineExprVisitor.h"
#include "mlir/IR/Builders.h"
#include "mlir/Interfaces/DestinationStyleOpInterface.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/MathExtras.h"

#include <algorithm>

using namespace mlir;

namespace kiln {

std::pair<int64_t, int64_t> exprBounds(AffineExpr expr, ArrayRef<DimSymbol> symbols) {
  if (auto constant = dyn_cast<AffineConstantExpr>(expr))
    return {constant.getValue(), constant.getValue()};
  if (auto symbol = dyn_cast<AffineSymbolExpr>(expr)) {
    const DimSymbol &s = symbols[symbol.getPosition()];
    return {s.min, s.max};
  }
  auto binary = cast<AffineBinaryOpExpr>(expr);
  auto [a, b] = exprBounds(binary.getLHS(), symbols);
  auto [c, d] = exprBounds(binary.getRHS(), symbols);
  auto extremes = [](std::initializer_list<int64_t> values) {
    return std::make_pair(std::min(values), std::max(values));
  };
  // A symbol without an upper bound is kUnboundedDim; sums and products saturate at the int64
  // limits (so that an expression over it stays unbounded).
  auto saturate = [](bool overflowed, int64_t result, bool negative) {
    if (!overflowed)
      return result;
    return negative ? std::numeric_limits<int64_t>::min() : kUnboundedDim;
  };
  auto add = [&](int64_t x, int64_t y) {
    int64_t result = 0;
    bool overflowed = __builtin_add_overflow(x, y, &result);
    return saturate(overflowed, result, x < 0);
  };
  auto multiply = [&](int64_t x, int64_t y) {
    int64_t result = 0;
    bool overflowed = __builtin_mul_overflow(x, y, &result);
    return saturate(overflowed, result, (x < 0) != (y < 0));
  };
  switch (binary.getKind()) {
  case AffineExprKind::Add:
    return {add(a, c), add(b, d)};
  case AffineExprKind::Mul:
    return extremes({multiply(a, c), multiply(a, d), multiply(b, c), multiply(b, d)});
  case AffineExprKind::FloorDiv:
  case AffineExprKind::CeilDiv: {
    // Divisors of a shape are positive; a range that reaches 0 is clamped to 1.
    c = std::max<int64_t>(c, 1);
    d = std::max<int64_t>(d, 1);
    auto divide = [&](int64_t x, int64_t y) {
      return binary.getKind() == AffineExprKind::FloorDiv ? llvm::divideFloorSigned(x, y)
                                                          : llvm::divideCeilSigned(x, y);
    };
    return extremes({divide(a, c), divide(a, d), divide(b, c), divide(b, d)});
  }
  case AffineExprKind::Mod:
    // In [0, divisor); no more than the dividend where that is non-negative.
    return {0, a >= 0 ? std::min(b, std::max<int64_t>(d, 1) - 1) : std::max<int64_t>(d, 1) - 1};
  default:
    return {0, 0};
  }
}

/// `expr` as coefficient * rest (rest 1 for a constant).
std::pair<int64_t, AffineExpr> splitCoefficient(AffineExpr expr) {
  if (auto constant = dyn_cast<AffineConstantExpr>(expr))
    return {constant.getValue(), getAffineConstantExpr(1, expr.getContext())};
  if (expr.getKind() == AffineExprKind::Mul) {
    auto binary = cast<AffineBinaryOpExpr>(expr);
    if (auto constant = dyn_cast<AffineConstantExpr>(binary.getRHS()))
      return {constant.getValue(), binary.getLHS()};
    if (auto constant = dyn_cast<AffineConstantExpr>(binary.getLHS()))
      return {constant.getValue(), binary.getRHS()};
  }
  return {1, expr};
}

/// A division of two multiples of one positive expression (a size split by a reshape and read
/// back: (s0 * 150528) floordiv (s0 * 50176) is 3), which the affine simplifier leaves as it is.
std::optional<AffineExpr> divideCommonFactor(AffineExpr lhs, AffineExpr rhs, bool ceil,
                                             ArrayRef<DimSymbol> symbols) {
  auto [a, common] = splitCoefficient(lhs);
  auto [b, other] = splitCoefficient(rhs);
  if (common != other || b <= 0 || isa<AffineConstantExpr>(common) ||
      exprBounds(common, symbols).first < 1)
    return std::nullopt;
  return getAffineConstantExpr(ceil ? llvm::divideCeilSigned(a, b) : llvm::divideFloorSigned(a, b),
                               lhs.getContext());
}

ArrayAttr symbolsAttr(MLIRContext *context, ArrayRef<DimSymbol> symbols) {
  Builder builder(context);
  SmallVector<Attribute> entries;
  for (const DimSymbol &symbol : symbols) {
    SmallVector<NamedAttribute> fields = {
        builder.getNamedAttr("name", builder.getStringAttr(symbol.name)),
        builder.getNamedAttr("input", builder.getI64IntegerAttr(symbol.input)),
        builder.getNamedAttr("dim", builder.getI64IntegerAttr(symbol.dim)),
        builder.getNamedAttr("min", builder.getI64IntegerAttr(symbol.min)),
        builder.getNamedAttr("max", builder.getI64IntegerAttr(symbol.max))};
    if (symbol.open)
      fields.push_back(builder.getNamedAttr("open", builder.getUnitAttr()));
    entries.push_back(builder.getDictionaryAttr(fields));
  }
  return builder.getArrayAttr(entries);
}

SmallVector<DimSymbol> symbolsFromAttr(ArrayAttr attr) {
  SmallVector<DimSymbol> symbols;
  if (!attr)
    return symbols;
  for (Attribute entry : attr) {
    auto dictionary = cast<DictionaryAttr>(entry);
    DimSymbol symbol;
    symbol.name = dictionary.getAs<StringAttr>("name").getValue().str();
    symbol.input = dictionary.getAs<IntegerAttr>("input").getInt();
    symbol.dim = dictionary.getAs<IntegerAttr>("dim").getInt();
    symbol.min = dictionary.getAs<IntegerAttr>("min").getInt();
    symbol.max = dictionary.getAs<IntegerAttr>("max").getInt();
    symbol.open = dictionary.contains("open");
    symbols.push_back(symbol);
  }
  return symbols;
}

FailureOr<SymbolicShapes> SymbolicShapes::create(func::FuncOp entry, ModuleOp kernels) {
  SymbolicShapes shapes(entry, kernels);
  llvm::StringMap<int64_t> named;
  for (auto [i, type] : llvm::enumerate(entry.getArgumentTypes())) {
    auto tensor = dyn_cast<RankedTensorType>(type);
    SmallVector<int64_t> perDim;
    if (!tensor) {
      shapes.argumentSymbols_.push_back(perDim);
      continue;
    }
    auto inputName = entry.getArgAttrOfType<StringAttr>(i, ::kiln::attrs::kName);
    auto dimNames = entry.getArgAttrOfType<ArrayAttr>(i, ::kiln::attrs::kDimSymbols);
    auto bounds = entry.getArgAttrOfType<DenseI64ArrayAttr>(i, kDimBoundsAttr);
    for (int64_t d = 0; d < tensor.getRank(); ++d) {
      if (!tensor.isDynamicDim(d)) {
        perDim.push_back(-1);
        continue;
      }
      if (!bounds || bounds.size() != 2 * tensor.getRank())
        return entry.emitError() << "dimension " << d << " of input "
                                 << (inputName ? "'" + inputName.getValue().str() + "'"
                                               : std::to_string(i))
                                 << " is dynamic without a range; give one with --shape-range "
                                    "(or none: --shape NAME=?x...)";
      DimSymbol symbol;
      StringRef dimName;
      if (dimNames && d < static_cast<int64_t>(dimNames.size()))
        if (auto text = dyn_cast<StringAttr>(dimNames[d]))
          dimName = text.getValue();
      symbol.name = !dimName.empty()
                        ? dimName.str()
                        : (inputName ? inputName.getValue().str() : "input" + std::to_string(i)) +
                              "." + std::to_string(d);
      symbol.input = static_cast<int64_t>(i);
      symbol.dim = d;
      symbol.min = bounds[2 * d];
      symbol.max = ShapedType::isDynamic(bounds[2 * d + 1]) ? kUnboundedDim : bounds[2 * d + 1];
      symbol.open = !symbol.bounded();
      // Dimensions the model names alike are one symbol, within both ranges.
      if (!dimName.empty()) {
        auto [it, inserted] = named.try_emplace(dimName, shapes.symbols_.size());
        if (!inserted) {
          DimSymbol &shared = shapes.symbols_[it->second];
          shared.min = std::max(shared.min, symbol.min);
          shared.max = std::min(shared.max, symbol.max);
          shared.open = shared.open && symbol.open;
          if (shared.min > shared.max)
            return entry.emitError()
                   << "the ranges given for dimension '" << dimName << "' do not overlap";
          perDim.push_back(it->second);
          continue;
        }
      }
      perDim.push_back(static_cast<int64_t>(shapes.symbols_.size()));
      shapes.symbols_.push_back(symbol);
    }
    shapes.argumentSymbols_.push_back(perDim);
  }
  return shapes;
}

unsigned SymbolicShapes::find(unsigned symbol) {
  while (parent_[symbol] != symbol)
    symbol = parent_[symbol] = parent_[parent_[symbol]];
  return symbol;
}

LogicalResult SymbolicShapes::requireEqual(AffineExpr a, AffineExpr b, Operation *op) {
  // Read each symbol as its class's representative.
  auto canonical = [&](AffineExpr expr) {
    SmallVector<AffineExpr> replacements;
    for (unsigned s = 0; s < symbols_.size(); ++s)
      replacements.push_back(getAffineSymbolExpr(find(s), op->getContext()));
    return simplifyAffineExpr(expr.replaceSymbols(replacements), 0, symbols_.size());
  };
  a = canonical(a);
  b = canonical(b);
  if (a == b)
    return success();
  auto symbolA = dyn_cast<AffineSymbolExpr>(a);
  auto symbolB = dyn_cast<AffineSymbolExpr>(b);
  auto describe = [&](AffineExpr expr) {
    std::string text;
    llvm::raw_string_ostream os(text);
    if (auto symbol = dyn_cast<AffineSymbolExpr>(expr))
      os << "'" << symbols_[symbol.getPosition()].name << "'";
    else
      os << expr;
    return text;
  };
  if (symbolA && symbolB) {
    DimSymbol &kept = symbols_[symbolA.getPosition()];
    const DimSymbol &merged = symbols_[symbolB.getPosition()];
    kept.min = std::max(kept.min, merged.min);
    kept.max = std::min(kept.max, merged.max);
    kept.open = kept.open && merged.open;
    if (kept.min > kept.max)
      return op->emitError() << "reads dimensions " << describe(a) << " and " << describe(b)
                             << " as one, but their ranges do not overlap";
    parent_[symbolB.getPosition()] = symbolA.getPosition();
    return success();
  }
  auto constant = dyn_cast<AffineConstantExpr>(symbolA ? b : a);
  AffineSymbolExpr symbol = symbolA ? symbolA : symbolB;
  if (symbol && constant) {
    DimSymbol &only = symbols_[symbol.getPosition()];
    if (constant.getValue() < only.min || constant.getValue() > only.max)
      return op->emitError() << "reads dimension " << describe(symbol) << " as "
                             << constant.getValue() << ", outside its range " << only.min << ".."
                             << only.max;
    only.min = only.max = constant.getValue();
    only.open = false;
    return success();
  }
  return op->emitError() << "reads dimensions " << describe(a) << " and " << describe(b)
                         << " as one, which the inputs' ranges do not make equal; bind the "
                            "inputs' shapes with --shape";
}

LogicalResult SymbolicShapes::requireExpandAgrees(tensor::ExpandShapeOp expand,
                                                  const ArgumentDims &arguments) {
  // A source dimension expanded to one result dimension whose size the graph gave (a
  // reshape's `?` entry paired with the dimension at its position) is that dimension.
  for (auto [source, group] : llvm::enumerate(expand.getReassociationIndices())) {
    if (group.size() != 1 || !expand.getResultType().isDynamicDim(group[0]))
      continue;
    FailureOr<AffineExpr> input = dim(expand.getSrc(), static_cast<unsigned>(source), arguments);
    if (failed(input))
      return failure();
    FailureOr<AffineExpr> output =
        dim(expand.getResult(), static_cast<unsigned>(group[0]), arguments);
    if (failed(output) || failed(requireEqual(*input, *output, expand)))
      return failure();
  }
  return success();
}

LogicalResult SymbolicShapes::unify() {
  parent_.clear();
  for (unsigned s = 0; s < symbols_.size(); ++s)
    parent_.push_back(s);
  WalkResult walked = entry_.walk([&](func::CallOp call) {
    func::FuncOp callee = calleeOf(call);
    if (callee && callee.isExternal()) {
      // A product reads its operands' contraction dimensions as one.
      auto name = callee->getAttrOfType<StringAttr>(kLibraryCallAttr);
      if (name && name.getValue().ends_with(".matmul") && call.getNumOperands() >= 2) {
        auto lhs = dyn_cast<ShapedType>(call.getOperand(0).getType());
        auto rhs = dyn_cast<ShapedType>(call.getOperand(1).getType());
        // (Only a product over dynamic shapes: those read their operands as they lie, while a
        // static one may read them transposed or through views.)
        if (lhs && rhs && lhs.getRank() >= 2 && rhs.getRank() >= 2 &&
            (lhs.isDynamicDim(lhs.getRank() - 1) || rhs.isDynamicDim(rhs.getRank() - 2))) {
          FailureOr<AffineExpr> k =
              hostDim(call.getOperand(0), static_cast<unsigned>(lhs.getRank() - 1));
          FailureOr<AffineExpr> other =
              hostDim(call.getOperand(1), static_cast<unsigned>(rhs.getRank() - 2));
          if (failed(k) || failed(other) || failed(requireEqual(*k, *other, call)))
            return WalkResult::interrupt();
        }
      }
      // Attention over dynamic shapes reads Q's width as Kᵀ's rows, Kᵀ's columns (the keys) as
      // V's rows and the mask's columns.
      if (isDenseAttention(call)) {
        auto dimOf = [&](unsigned index,
                         int64_t fromEnd) -> std::optional<std::pair<Value, int64_t>> {
          if (index >= call.getNumOperands())
            return std::nullopt;
          auto type = dyn_cast<ShapedType>(call.getOperand(index).getType());
          if (!type || type.getRank() < fromEnd)
            return std::nullopt;
          return std::make_pair(call.getOperand(index), type.getRank() - fromEnd);
        };
        const std::pair<std::pair<unsigned, int64_t>, std::pair<unsigned, int64_t>> pairs[] = {
            {{0, 1}, {1, 2}}, {{1, 1}, {2, 2}}, {{3, 1}, {1, 1}}};
        for (auto [a, b] : pairs) {
          auto x = dimOf(a.first, a.second), y = dimOf(b.first, b.second);
          if (!x || !y)
            continue;
          auto xType = cast<ShapedType>(x->first.getType());
          auto yType = cast<ShapedType>(y->first.getType());
          // A mask's column of 1 broadcasts over the keys.
          if ((!xType.isDynamicDim(x->second) && !yType.isDynamicDim(y->second)) ||
              (a.first == 3 && xType.getDimSize(x->second) == 1))
            continue;
          FailureOr<AffineExpr> lhs = hostDim(x->first, static_cast<unsigned>(x->second));
          FailureOr<AffineExpr> rhs = hostDim(y->first, static_cast<unsigned>(y->second));
          if (failed(lhs) || failed(rhs) || failed(requireEqual(*lhs, *rhs, call)))
            return WalkResult::interrupt();
        }
      }
      // A library call reads the dynamic dimensions of its operands of the result's rank as
      // the result's.
      for (Value value : call.getResults()) {
        auto type = dyn_cast<ShapedType>(value.getType());
        for (int64_t d = 0; type && d < type.getRank(); ++d) {
          SmallVector<std::pair<Value, int64_t>> sources = libraryCallSources(call, value, d);
          if (sources.empty())
            continue;
          FailureOr<AffineExpr> size = hostDim(value, static_cast<unsigned>(d));
          if (failed(size))
            return WalkResult::interrupt();
          for (auto [operand, at] : sources) {
            FailureOr<AffineExpr> other = hostDim(operand, static_cast<unsigned>(at));
            if (failed(other) || failed(requireEqual(*size, *other, call)))
              return WalkResult::interrupt();
          }
        }
      }
      return WalkResult::advance();
    }
    if (!callee)
      return WalkResult::advance();
    ArgumentDims inner = [&](BlockArgument argument, unsigned d) -> FailureOr<AffineExpr> {
      if (argument.getOwner() != &callee.getBody().front())
        return failure();
      return hostDim(call.getOperand(argument.getArgNumber()), d);
    };
    WalkResult inside = callee.walk([&](Operation *operation) {
      if (auto expand = dyn_cast<tensor::ExpandShapeOp>(operation))
        return failed(requireExpandAgrees(expand, inner)) ? WalkResult::interrupt()
                                                          : WalkResult::advance();
      auto op = dyn_cast<linalg::LinalgOp>(operation);
      if (!op)
        return WalkResult::advance();
      // The first operand dimension each loop reads, against which the others must agree.
      SmallVector<std::optional<AffineExpr>> loops(op.getNumLoops());
      for (OpOperand &operand : op->getOpOperands()) {
        auto type = dyn_cast<ShapedType>(operand.get().getType());
        if (!type)
          continue;
        AffineMap map = op.getMatchingIndexingMap(&operand);
        for (auto [d, result] : llvm::enumerate(map.getResults())) {
          auto loop = dyn_cast<AffineDimExpr>(result);
          if (!loop)
            continue;
          FailureOr<AffineExpr> size = dim(operand.get(), static_cast<unsigned>(d), inner);
          if (failed(size))
            return WalkResult::interrupt();
          std::optional<AffineExpr> &first = loops[loop.getPosition()];
          if (!first) {
            first = *size;
            continue;
          }
          if (failed(requireEqual(*first, *size, op)))
            return WalkResult::interrupt();
        }
      }
      return WalkResult::advance();
    });
    return inside.wasInterrupted() ? WalkResult::interrupt() : WalkResult::advance();
  });
  if (walked.wasInterrupted())
    return failure();
  ArgumentDims host = [this](BlockArgument argument, unsigned d) { return hostDim(argument, d); };
  if (entry_
          .walk([&](tensor::ExpandShapeOp expand) {
            return failed(requireExpandAgrees(expand, host)) ? WalkResult::interrupt()
                                                             : WalkResult::advance();
          })
          .wasInterrupted())
    return failure();

  // The representatives, renumbered; each argument dimension reads its class's symbol.
  SmallVector<DimSymbol> kept;
  SmallVector<int64_t> renumbered(symbols_.size(), -1);
  for (unsigned s = 0; s < symbols_.size(); ++s)
    if (find(s) == s) {
      renumbered[s] = static_cast<int64_t>(kept.size());
      kept.push_back(symbols_[s]);
    }
  for (SmallVector<int64_t> &dims : argumentSymbols_)
    for (int64_t &symbol : dims)
      if (symbol >= 0)
        symbol = renumbered[find(static_cast<unsigned>(symbol))];
  symbols_ = std::move(kept);
  parent_.clear();
  cache_.clear();
  return success();
}

SmallVector<int64_t> SymbolicShapes::upperBounds(AffineMap shape) const {
  // A symbol given without a bound is read at its nominal size (also once the model bounded
  // it: every type of the program reads it alike).
  SmallVector<DimSymbol> symbols(symbols_);
  for (DimSymbol &symbol : symbols)
    if (symbol.open)
      symbol.max = std::clamp(kNominalUnboundedDim, symbol.min, symbol.max);
  SmallVector<int64_t> dims;
  for (AffineExpr expr : shape.getResults())
    dims.push_back(std::max<int64_t>(exprBounds(expr, symbols).second, 0));
  return dims;
}

FailureOr<AffineMap> SymbolicShapes::shapeOf(Value value) {
  auto type = cast<ShapedType>(value.getType());
  SmallVector<AffineExpr> dims;
  for (int64_t d = 0; d < type.getRank(); ++d) {
    FailureOr<AffineExpr> expr = hostDim(value, static_cast<unsigned>(d));
    if (failed(expr))
      return failure();
    dims.push_back(*expr);
  }
  return AffineMap::get(0, symbols_.size(), dims, value.getContext());
}

FailureOr<AffineExpr> SymbolicShapes::hostDim(Value value, unsigned d) {
  auto key = std::make_pair(value, d);
  if (auto it = cache_.find(key); it != cache_.end())
    return it->second;
  ArgumentDims arguments = [this](BlockArgument argument, unsigned dim) -> FailureOr<AffineExpr> {
    MLIRContext *context = argument.getContext();
    if (argument.getOwner() != &entry_.getBody().front())
      return failure();
    int64_t symbol = argumentSymbols_[argument.getArgNumber()][dim];
    if (symbol < 0)
      return getAffineConstantExpr(cast<ShapedType>(argument.getType()).getDimSize(dim), context);
    return getAffineSymbolExpr(static_cast<unsigned>(symbol), context);
  };
  FailureOr<AffineExpr> expr = this->dim(value, d, arguments);
  if (succeeded(expr))
    cache_[key] = *expr;
  return expr;
}

FailureOr<AffineExpr> SymbolicShapes::dim(Value value, unsigned d, const ArgumentDims &arguments) {
  MLIRContext *context = value.getContext();
  auto type = cast<ShapedType>(value.getType());
  if (d >= type.getRank()) {
    emitError(value.getLoc()) << "dimension " << d << " of " << type << " does not exist";
    if (Operation *op = value.getDefiningOp())
      op->emitRemark() << "defined here";
    return failure();
  }
  if (!type.isDynamicDim(d))
    return getAffineConstantExpr(type.getDimSize(d), context);
  auto fail = [&](StringRef why) -> FailureOr<AffineExpr> {
    Location loc = value.getLoc();
    emitError(loc) << "dimension " << d << " of " << type
                   << " is no affine function of the inputs' dimensions (" << why
                   << "); bind the inputs' shapes with --shape";
    return failure();
  };
  if (auto argument = dyn_cast<BlockArgument>(value)) {
    FailureOr<AffineExpr> expr = arguments(argument, d);
    if (failed(expr))
      return fail("an argument of a nested region");
    return expr;
  }
  Operation *op = value.getDefiningOp();
  unsigned result = cast<OpResult>(value).getResultNumber();
  auto folded = [&](OpFoldResult size) -> FailureOr<AffineExpr> {
    if (auto attr = dyn_cast<Attribute>(size))
      return getAffineConstantExpr(cast<IntegerAttr>(attr).getInt(), context);
    return scalar(cast<Value>(size), arguments);
  };
  if (auto empty = dyn_cast<tensor::EmptyOp>(op))
    return scalar(empty.getDynamicSize(d), arguments);
  if (auto destination = dyn_cast<DestinationStyleOpInterface>(op))
    if (destination.getNumDpsInits() > result &&
        isa<ShapedType>(destination.getDpsInits()[result].getType()))
      return dim(destination.getDpsInits()[result], d, arguments);
  if (auto cast = dyn_cast<tensor::CastOp>(op))
    return dim(cast.getSource(), d, arguments);
  if (auto expand = dyn_cast<tensor::ExpandShapeOp>(op))
    return folded(expand.getMixedOutputShape()[d]);
  if (auto collapse = dyn_cast<tensor::CollapseShapeOp>(op)) {
    AffineExpr product = getAffineConstantExpr(1, context);
    SmallVector<ReassociationIndices> groups = collapse.getReassociationIndices();
    for (int64_t source : groups[d]) {
      FailureOr<AffineExpr> factor =
          dim(collapse.getSrc(), static_cast<unsigned>(source), arguments);
      if (failed(factor))
        return failure();
      product = product * *factor;
    }
    return product;
  }
  if (auto slice = dyn_cast<tensor::ExtractSliceOp>(op)) {
    llvm::SmallBitVector dropped = slice.getDroppedDims();
    unsigned seen = 0;
    for (auto [i, size] : llvm::enumerate(slice.getMixedSizes())) {
      if (dropped.test(i))
        continue;
      if (seen++ == d)
        return folded(size);
    }
  }
  if (auto pad = dyn_cast<tensor::PadOp>(op)) {
    FailureOr<AffineExpr> source = dim(pad.getSource(), d, arguments);
    if (failed(source))
      return failure();
    FailureOr<AffineExpr> low = folded(pad.getMixedLowPad()[d]);
    if (failed(low))
      return failure();
    FailureOr<AffineExpr> high = folded(pad.getMixedHighPad()[d]);
    if (failed(high))
      return failure();
    return *source + *low + *high;
  }
  if (auto concat = dyn_cast<tensor::ConcatOp>(op)) {
    // Along another dimension every input has the result's size.
    if (concat.getDim() != d)
      return dim(concat.getInputs().front(), d, arguments);
    AffineExpr sum = getAffineConstantExpr(0, context);
    for (Value input : concat.getInputs()) {
      FailureOr<AffineExpr> part = dim(input, d, arguments);
      if (failed(part))
        return failure();
      sum = sum + *part;
    }
    return sum;
  }
  if (auto call = dyn_cast<func::CallOp>(op)) {
    func::FuncOp callee = calleeOf(call);
    if (callee && !callee.isExternal()) {
      auto ret = cast<func::ReturnOp>(callee.getBody().front().getTerminator());
      ArgumentDims inner = [&](BlockArgument argument, unsigned dim) -> FailureOr<AffineExpr> {
        if (argument.getOwner() != &callee.getBody().front())
          return failure();
        return this->dim(call.getOperand(argument.getArgNumber()), dim, arguments);
      };
      return dim(ret.getOperand(result), d, inner);
    }
    // A library call (a convolution over a dynamic batch): a dynamic dimension of its result is
    // that of its first operand of the same rank (unify() checks that the others agree).
    SmallVector<std::pair<Value, int64_t>> sources = libraryCallSources(call, value, d);
    if (!sources.empty())
      return dim(sources.front().first, static_cast<unsigned>(sources.front().second), arguments);
  }
  return fail(("computed by '" + op->getName().getStringRef() + "'").str());
}

bool SymbolicShapes::isDenseAttention(func::CallOp call) {
  func::FuncOp callee = calleeOf(call);
  auto name = callee ? callee->getAttrOfType<StringAttr>(kLibraryCallAttr) : StringAttr();
  return name && name.getValue().ends_with(".attention") &&
         !call->hasAttr(contract::param::kQView.name);
}

func::FuncOp SymbolicShapes::calleeOf(func::CallOp call) {
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(call, call.getCalleeAttr());
  if (!callee && kernels_)
    callee = kernels_.lookupSymbol<func::FuncOp>(call.getCalleeAttr());
  return callee;
}

SmallVector<std::pair<Value, int64_t>> SymbolicShapes::libraryCallSources(func::CallOp call,
                                                                          Value result, int64_t d) {
  func::FuncOp callee = calleeOf(call);
  auto type = cast<ShapedType>(result.getType());
  SmallVector<std::pair<Value, int64_t>> sources;
  if (!callee || !callee->hasAttr(kLibraryCallAttr) || !type.isDynamicDim(d))
    return sources;
  // Attention over dynamic shapes (its operands as they lie, aligned with the result's trailing
  // dims): the batch dims are every operand's, the query rows Q's (and the mask's), the value
  // width V's.
  if (isDenseAttention(call)) {
    int64_t rank = type.getRank();
    auto add = [&](unsigned index, int64_t dim) {
      if (index >= call.getNumOperands())
        return;
      auto operandType = dyn_cast<ShapedType>(call.getOperand(index).getType());
      int64_t at = operandType ? dim - (rank - operandType.getRank()) : -1;
      if (at >= 0 && operandType.isDynamicDim(at))
        sources.push_back({call.getOperand(index), at});
    };
    if (d < rank - 2) {
      for (unsigned index = 0; index < 4; ++index)
        add(index, d);
    } else if (d == rank - 2) {
      add(0, d);
      add(3, d);
    } else {
      add(2, d);
    }
    return sources;
  }
  for (Value operand : call.getOperands()) {
    auto operandType = dyn_cast<ShapedType>(operand.getType());
    if (operandType && operandType.getRank() == type.getRank() && operandType.isDynamicDim(d))
      sources.push_back({operand, d});
  }
  return sources;
}

FailureOr<std::pair<AffineExpr, AffineExpr>>
SymbolicShapes::scalarOperands(Operation *op, const ArgumentDims &arguments) {
  FailureOr<AffineExpr> lhs = scalar(op->getOperand(0), arguments);
  if (failed(lhs))
    return failure();
  FailureOr<AffineExpr> rhs = scalar(op->getOperand(1), arguments);
  if (failed(rhs))
    return failure();
  return std::make_pair(*lhs, *rhs);
}

FailureOr<AffineExpr> SymbolicShapes::scalar(Value value, const ArgumentDims &arguments) {
  MLIRContext *context = value.getContext();
  auto fail = [&](StringRef why) -> FailureOr<AffineExpr> {
    emitError(value.getLoc()) << "a size computed " << why
                              << " is no affine function of the inputs' dimensions; bind the "
                                 "inputs' shapes with --shape";
    return failure();
  };
  Operation *op = value.getDefiningOp();
  if (!op)
    return fail("from an argument");
  if (auto constant = dyn_cast<arith::ConstantOp>(op))
    if (auto integer = dyn_cast<IntegerAttr>(constant.getValue()))
      return getAffineConstantExpr(integer.getInt(), context);
  if (auto dimOp = dyn_cast<tensor::DimOp>(op))
    if (std::optional<int64_t> index = dimOp.getConstantIndex())
      return dim(dimOp.getSource(), static_cast<unsigned>(*index), arguments);
  if (isa<arith::IndexCastOp, arith::IndexCastUIOp>(op))
    return scalar(op->getOperand(0), arguments);
  if (auto apply = dyn_cast<affine::AffineApplyOp>(op)) {
    AffineMap map = apply.getAffineMap();
    SmallVector<AffineExpr> operands;
    for (Value operand : apply.getMapOperands()) {
      FailureOr<AffineExpr> expr = scalar(operand, arguments);
      if (failed(expr))
        return failure();
      operands.push_back(*expr);
    }
    ArrayRef<AffineExpr> all(operands);
    return map.getResult(0).replaceDimsAndSymbols(all.take_front(map.getNumDims()),
                                                  all.drop_front(map.getNumDims()));
  }
  if (op->getNumOperands() == 2 && isa<arith::AddIOp, arith::SubIOp, arith::MulIOp, arith::DivSIOp,
                                       arith::DivUIOp, arith::FloorDivSIOp, arith::CeilDivSIOp,
                                       arith::CeilDivUIOp, arith::RemSIOp, arith::RemUIOp>(op)) {
    FailureOr<std::pair<AffineExpr, AffineExpr>> operands = scalarOperands(op, arguments);
    if (failed(operands))
      return failure();
    auto [lhs, rhs] = *operands;
    if (isa<arith::AddIOp>(op))
      return lhs + rhs;
    if (isa<arith::SubIOp>(op))
      return lhs - rhs;
    if (isa<arith::MulIOp>(op))
      return lhs * rhs;
    // Sizes are non-negative: truncating and flooring division agree.
    bool ceil = isa<arith::CeilDivSIOp, arith::CeilDivUIOp>(op);
    if (ceil || isa<arith::DivSIOp, arith::DivUIOp, arith::FloorDivSIOp>(op)) {
      if (std::optional<AffineExpr> quotient = divideCommonFactor(lhs, rhs, ceil, symbols_))
        return *quotient;
      return ceil ? lhs.ceilDiv(rhs) : lhs.floorDiv(rhs);
    }
    return lhs % rhs;
  }
  // A clamp (a slice's limit against a dynamic dimension) the ranges decide: the smaller or
  // larger side over every shape of the ranges.
  if (isa<arith::MinSIOp, arith::MaxSIOp, arith::MinUIOp, arith::MaxUIOp>(op)) {
    FailureOr<std::pair<AffineExpr, AffineExpr>> operands = scalarOperands(op, arguments);
    if (failed(operands))
      return failure();
    auto [lhs, rhs] = *operands;
    auto [lhsMin, lhsMax] = exprBounds(lhs, symbols_);
    auto [rhsMin, rhsMax] = exprBounds(rhs, symbols_);
    bool minimum = isa<arith::MinSIOp, arith::MinUIOp>(op);
    if (lhsMax <= rhsMin)
      return minimum ? lhs : rhs;
    if (rhsMax <= lhsMin)
      return minimum ? rhs : lhs;
    // A dimension without an upper bound clamped by a constant C (a slice of a table of C rows
    // by the sequence length: GPT-2's causal mask): the model bounds it at C, and the runtime
    // refuses a run past C, naming the dimension and its range.
    if (minimum)
      for (auto [side, other] : {std::make_pair(lhs, rhs), std::make_pair(rhs, lhs)}) {
        auto symbol = dyn_cast<AffineSymbolExpr>(side);
        auto constant = dyn_cast<AffineConstantExpr>(other);
        if (!symbol || !constant)
          continue;
        DimSymbol &narrowed = symbols_[symbol.getPosition()];
        if (narrowed.bounded() || constant.getValue() < narrowed.min)
          continue;
        narrowed.max = constant.getValue();
        return side;
      }
    return fail(
        ("by '" + op->getName().getStringRef() + "', whose operands' order the ranges leave open")
            .str());
  }
  return fail(("by '" + op->getName().getStringRef() + "'").str());
}

} // namespace kiln
