//===- FuseSiblingMatmuls.cpp - One product for one input and several weights ===//
//
// Horizontal fusion of matrix products (kiln-fuse-sibling-matmuls, Passes.td): the graph.matmul
// ops that multiply one value by constant 2-D weights become one product with the weights
// concatenated along their columns; each former result (with its bias added, when it had one)
// is a slice of the columns of the fused one. A product whose result (with its bias) is only
// multiplied by a constant scalar (attention's query scaled by 1/sqrt(d), as Whisper's exporter
// writes it) has the scalar folded into its columns of the weights and the bias, so its slice
// is read in place like the others' rather than copied by a kernel that scales it.
//
//===----------------------------------------------------------------------===//

#include "compiler/fusion/Passes.h"
#include "dialects/graph/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "llvm/ADT/MapVector.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"

#include <cmath>
#include <cstring>
#include <deque>
#include <optional>
#include <vector>

namespace kiln {
#define GEN_PASS_DEF_FUSESIBLINGMATMULSPASS
#include "compiler/fusion/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

/// A product of the shared input with constant weights, and the bias added to it, if any.
struct Sibling {
  graph::MatmulOp matmul;
  graph::ConstantOp weights;
  ArrayRef<char> weightBytes;
  /// The add of a constant of the product's columns that alone reads the product, or null.
  graph::AddOp biasAdd;
  ArrayRef<char> biasBytes;
  /// The product of a constant f32 scalar and the result above, its only reader, or null.
  graph::MulOp scaleMul;
  float scale = 1;

  int64_t columns() { return cast<RankedTensorType>(weights.getType()).getDimSize(1); }
  /// The product, with its bias, before any scale.
  Value unscaled() { return biasAdd ? biasAdd.getResult() : matmul.getResult(); }
  /// The value the rest of the graph reads.
  Value result() { return scaleMul ? scaleMul.getResult() : unscaled(); }
};

/// The value of the f32 constant scalar (rank 0, or one element) `mul` multiplies `value` by,
/// when it is finite and the product keeps `value`'s type.
std::optional<float> scaleOf(graph::MulOp mul, Value value) {
  Value other = mul.getLhs() == value ? mul.getRhs() : mul.getLhs();
  if (other == value || mul.getType() != value.getType())
    return std::nullopt;
  auto constant = other.getDefiningOp<graph::ConstantOp>();
  auto dense = constant ? dyn_cast<DenseFPElementsAttr>(constant.getValue()) : nullptr;
  if (!dense || !dense.getElementType().isF32() || dense.getNumElements() != 1)
    return std::nullopt;
  float scale = *dense.getValues<float>().begin();
  if (!std::isfinite(scale))
    return std::nullopt;
  return scale;
}

/// `bytes` (f32 values) times `scale`, into `into`.
void copyScaled(ArrayRef<char> bytes, float scale, char *into) {
  for (size_t i = 0; i + sizeof(float) <= bytes.size(); i += sizeof(float)) {
    float value;
    std::memcpy(&value, bytes.data() + i, sizeof(float));
    value *= scale;
    std::memcpy(into + i, &value, sizeof(float));
  }
}

/// The bytes of splat biases repeated, kept while the pass runs.
using SplatStore = std::deque<std::vector<char>>;

/// The bytes of the constant operand of `add` other than `product`, when it holds `columns`
/// values of the element type with their bytes at hand (a splat's repeated into `splats`).
std::optional<ArrayRef<char>> biasOf(graph::AddOp add, Value product, int64_t columns,
                                     SplatStore &splats) {
  Value other = add.getLhs() == product ? add.getRhs() : add.getLhs();
  if (other == product || add.getType() != product.getType())
    return std::nullopt;
  auto constant = other.getDefiningOp<graph::ConstantOp>();
  auto type = dyn_cast<RankedTensorType>(other.getType());
  if (!constant || !type || type.getShape() != ArrayRef<int64_t>{columns})
    return std::nullopt;
  std::optional<ArrayRef<char>> bytes = graph::rawConstantData(constant.getValue());
  if (bytes)
    return *bytes;
  auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat() || type.getElementTypeBitWidth() % 8 != 0)
    return std::nullopt;
  ArrayRef<char> one = dense.getRawData();
  size_t width = type.getElementTypeBitWidth() / 8;
  if (one.size() != width)
    return std::nullopt;
  std::vector<char> &repeated = splats.emplace_back();
  for (int64_t i = 0; i < columns; ++i)
    repeated.insert(repeated.end(), one.begin(), one.end());
  return ArrayRef<char>(repeated);
}

/// Whether every reader of `value` is a matrix product, reached through reshapes, transposes,
/// broadcasts, slices, concatenations and elementwise ops (attention's scale, a rotary
/// embedding, a gated MLP's activation and product): the library-call selection reads a slice
/// of the fused product through by strides, and a generated kernel through its indexing maps
/// (kiln-fold-data-movement). A slice that another op reads (a normalization, a graph output)
/// would be copied out by a kernel of its own.
bool slicesReadInPlace(Value value, DenseMap<Value, bool> &known, int depth = 0) {
  if (depth > 16)
    return false;
  auto [entry, inserted] = known.try_emplace(value, false);
  if (!inserted)
    return entry->second;
  bool readInPlace = llvm::all_of(value.getUsers(), [&](Operation *user) {
    if (isa<graph::MatmulOp>(user))
      return true;
    bool passesThrough =
        isa<graph::ReshapeOp, graph::TransposeOp, graph::ExpandOp, graph::SliceOp, graph::ConcatOp>(
            user) ||
        graph::isElementwise(user);
    return passesThrough && user->getNumResults() == 1 &&
           slicesReadInPlace(user->getResult(0), known, depth + 1);
  });
  known[value] = readInPlace;
  return readInPlace;
}

std::optional<Sibling> candidate(graph::MatmulOp op, SplatStore &splats) {
  auto lhs = dyn_cast<RankedTensorType>(op.getLhs().getType());
  auto result = dyn_cast<RankedTensorType>(op.getType());
  auto weights = op.getRhs().getDefiningOp<graph::ConstantOp>();
  auto weightsType = dyn_cast<RankedTensorType>(op.getRhs().getType());
  if (!lhs || !result || !weights || !weightsType || lhs.getRank() < 2 ||
      result.getRank() != lhs.getRank() || weightsType.getRank() != 2 ||
      !weightsType.hasStaticShape() || !result.hasStaticShape() ||
      lhs.getElementTypeBitWidth() % 8 != 0)
    return std::nullopt;
  std::optional<ArrayRef<char>> bytes = graph::rawConstantData(weights.getValue());
  if (!bytes)
    return std::nullopt;
  Sibling sibling{op, weights, *bytes, nullptr, {}, nullptr};
  if (op->hasOneUse())
    if (auto add = dyn_cast<graph::AddOp>(*op->getUsers().begin()))
      if (auto bias = biasOf(add, op.getResult(), sibling.columns(), splats)) {
        sibling.biasAdd = add;
        sibling.biasBytes = *bias;
      }
  Value unscaled = sibling.unscaled();
  if (lhs.getElementType().isF32() && weightsType.getElementType().isF32() && unscaled.hasOneUse())
    if (auto mul = dyn_cast<graph::MulOp>(*unscaled.getUsers().begin()))
      if (std::optional<float> scale = scaleOf(mul, unscaled)) {
        sibling.scaleMul = mul;
        sibling.scale = *scale;
      }
  DenseMap<Value, bool> known;
  if (!slicesReadInPlace(sibling.result(), known))
    return std::nullopt;
  return sibling;
}

class FuseSiblingMatmuls : public impl::FuseSiblingMatmulsPassBase<FuseSiblingMatmuls> {
public:
  void runOnOperation() override {
    llvm::MapVector<Value, SmallVector<Sibling>> byInput;
    SplatStore splats;
    getOperation().walk([&](graph::MatmulOp op) {
      if (std::optional<Sibling> sibling = candidate(op, splats))
        byInput[op.getLhs()].push_back(*sibling);
    });
    for (auto &[input, siblings] : byInput) {
      // Products in other blocks than the first one's stay as they are.
      Block *block = siblings.front().matmul->getBlock();
      llvm::erase_if(siblings,
                     [&](Sibling &sibling) { return sibling.matmul->getBlock() != block; });
      if (siblings.size() >= 2)
        fuse(input, siblings);
    }
  }

private:
  void fuse(Value input, MutableArrayRef<Sibling> siblings) {
    Sibling *first = &siblings.front();
    for (Sibling &sibling : siblings)
      if (sibling.matmul->isBeforeInBlock(first->matmul))
        first = &sibling;
    OpBuilder builder(first->matmul);
    SmallVector<Location> locations;
    for (Sibling &sibling : siblings) {
      locations.push_back(sibling.matmul.getLoc());
      if (sibling.biasAdd)
        locations.push_back(sibling.biasAdd.getLoc());
      if (sibling.scaleMul)
        locations.push_back(sibling.scaleMul.getLoc());
    }
    Location loc = builder.getFusedLoc(locations);

    auto inputType = cast<RankedTensorType>(input.getType());
    Type element = inputType.getElementType();
    const size_t elementBytes = element.getIntOrFloatBitWidth() / 8;
    const int64_t rows = cast<RankedTensorType>(first->weights.getType()).getDimSize(0);
    int64_t columns = 0;
    bool anyBias = false;
    for (Sibling &sibling : siblings) {
      columns += sibling.columns();
      anyBias |= static_cast<bool>(sibling.biasAdd);
    }

    // The weights side by side, row after row; the biases one after another (zeros for a
    // product that had none); a scaled product's columns and bias times its scale (f32).
    std::vector<char> weights(static_cast<size_t>(rows * columns) * elementBytes);
    std::vector<char> bias(anyBias ? static_cast<size_t>(columns) * elementBytes : 0, 0);
    size_t offset = 0;
    for (Sibling &sibling : siblings) {
      size_t width = static_cast<size_t>(sibling.columns()) * elementBytes;
      auto copy = [&](ArrayRef<char> from, char *into) {
        if (sibling.scaleMul)
          copyScaled(from, sibling.scale, into);
        else
          std::copy_n(from.data(), width, into);
      };
      for (int64_t row = 0; row < rows; ++row)
        copy(sibling.weightBytes.slice(row * width, width),
             weights.data() + row * columns * elementBytes + offset);
      if (sibling.biasAdd)
        copy(sibling.biasBytes.slice(0, width), bias.data() + offset);
      offset += width;
    }
    auto weightsType = RankedTensorType::get({rows, columns}, element);
    Value fusedWeights = graph::ConstantOp::create(
        builder, loc, weightsType,
        graph::rawConstantLike(first->weights.getValue(), weightsType, weights, "_siblings"));
    SmallVector<int64_t> shape(inputType.getShape());
    shape.back() = columns;
    auto resultType = RankedTensorType::get(shape, element);
    Value fused = graph::MatmulOp::create(builder, loc, resultType, input, fusedWeights);
    if (anyBias) {
      auto biasType = RankedTensorType::get({columns}, element);
      Value biasConstant = graph::ConstantOp::create(
          builder, loc, biasType,
          graph::rawConstantLike(first->weights.getValue(), biasType, bias, "_sibling_biases"));
      fused = graph::AddOp::create(builder, loc, resultType, fused, biasConstant);
    }

    // Every slice is made before any sibling is erased: the builder inserts before the first.
    int64_t start = 0;
    const size_t rank = shape.size();
    for (Sibling &sibling : siblings) {
      SmallVector<int64_t> starts(rank, 0), limits(shape), strides(rank, 1);
      starts.back() = start;
      limits.back() = start + sibling.columns();
      start = limits.back();
      Value slice = graph::SliceOp::create(
          builder, sibling.matmul.getLoc(), sibling.result().getType(), fused,
          builder.getDenseI64ArrayAttr(starts), builder.getDenseI64ArrayAttr(limits),
          builder.getDenseI64ArrayAttr(strides));
      sibling.result().replaceAllUsesWith(slice);
    }
    for (Sibling &sibling : siblings) {
      SmallVector<Operation *> dead;
      if (sibling.scaleMul)
        dead.push_back(sibling.scaleMul);
      if (sibling.biasAdd)
        dead.push_back(sibling.biasAdd);
      dead.push_back(sibling.matmul);
      for (Operation *op : dead) {
        SmallVector<Value> operands(op->getOperands());
        op->erase();
        for (Value operand : operands)
          if (auto constant = operand.getDefiningOp<graph::ConstantOp>();
              constant && constant->use_empty())
            constant.erase();
      }
    }
  }
};

} // namespace
} // namespace kiln
