//===- Split.cpp - How a value is divided between devices -----------------===//

#include "compiler/partition/Split.h"

#include "dialects/graph/GraphOps.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"

#include "llvm/Support/FormatVariadic.h"

using namespace mlir;

namespace kiln::partition {

RankedTensorType staticType(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() ? type : RankedTensorType();
}

bool isConstant(Value value) { return value.getDefiningOp<graph::ConstantOp>() != nullptr; }

RankedTensorType localType(RankedTensorType type, Split split, int64_t devices) {
  SmallVector<int64_t> shape(type.getShape());
  shape[split.dim] /= devices;
  return RankedTensorType::get(shape, type.getElementType());
}

bool divides(RankedTensorType type, Split split, int64_t devices) {
  return split.dim >= 0 && split.dim < type.getRank() &&
         type.getDimSize(split.dim) % (split.block * devices) == 0;
}

Value sliceConstant(OpBuilder &builder, Value value, Split split, int64_t devices, int64_t rank) {
  auto constant = value.getDefiningOp<graph::ConstantOp>();
  auto type = cast<RankedTensorType>(value.getType());
  RankedTensorType local = localType(type, split, devices);
  Attribute attr = constant.getValue();
  ElementsAttr sliced;
  if (auto dense = dyn_cast<DenseElementsAttr>(attr); dense && dense.isSplat()) {
    sliced = dense.resizeSplat(local);
  } else if (std::optional<ArrayRef<char>> raw = graph::rawConstantData(attr)) {
    int64_t elementBytes = type.getElementTypeBitWidth() / 8;
    int64_t outer = 1;
    for (int64_t d = 0; d < split.dim; ++d)
      outer *= type.getDimSize(d);
    int64_t size = type.getDimSize(split.dim);
    int64_t inner = computeStrides(type.getShape())[split.dim] * elementBytes;
    int64_t chunkBytes = split.block * inner;
    std::vector<char> bytes;
    bytes.reserve(raw->size() / devices);
    for (int64_t o = 0; o < outer; ++o)
      for (int64_t c = rank * split.block; c < size; c += split.block * devices) {
        const char *from = raw->data() + (o * size + c) * inner;
        bytes.insert(bytes.end(), from, from + chunkBytes);
      }
    sliced = graph::rawConstantLike(attr, local, bytes, llvm::formatv(".device{0}", rank).str());
  } else {
    // i1 and other non-byte elements: through the attribute's values.
    auto dense = cast<DenseElementsAttr>(attr);
    SmallVector<Attribute> values(dense.getValues<Attribute>());
    SmallVector<Attribute> kept;
    int64_t size = type.getDimSize(split.dim);
    int64_t inner = computeStrides(type.getShape())[split.dim];
    for (int64_t i = 0; i < static_cast<int64_t>(values.size()); ++i) {
      int64_t c = (i / inner) % size;
      if ((c / split.block) % devices == rank)
        kept.push_back(values[i]);
    }
    sliced = DenseElementsAttr::get(local, kept);
  }
  return graph::ConstantOp::create(builder, constant.getLoc(), sliced).getResult();
}

std::optional<Split> reshapedSplit(RankedTensorType from, ArrayRef<int64_t> to, Split split,
                                   int64_t devices) {
  int64_t unit = split.block * computeStrides(from.getShape())[split.dim];
  SmallVector<int64_t> strides = computeStrides(to);
  for (int64_t d = 0; d < static_cast<int64_t>(to.size()); ++d) {
    int64_t stride = strides[d];
    if (unit % stride == 0 && (stride * to[d]) % (unit * devices) == 0)
      return Split{d, unit / stride};
  }
  return std::nullopt;
}

} // namespace kiln::partition
