//===- Common.cpp - What the partitioning passes share ---------------------===//

#include "compiler/partition/Common.h"

#include "compiler/partition/Passes.h"

#include "dialects/graph/GraphOps.h"

#include "mlir/Dialect/Utils/IndexingUtils.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;

namespace kiln::partition {

LogicalResult partitionEntry(ModuleOp module, StringRef pass,
                             function_ref<LogicalResult(func::FuncOp)> partition) {
  func::FuncOp entry;
  if (auto main = module.lookupSymbol<func::FuncOp>("main"); main && !main.isExternal())
    entry = main;
  for (auto function : module.getOps<func::FuncOp>())
    if (!entry && !function.isExternal() && !function.isPrivate())
      entry = function;
  if (!entry)
    return success();
  if (entry.getBody().getBlocks().size() != 1)
    return entry.emitError() << pass << ": the entry function has more than one block";
  return partition(entry);
}

RankedTensorType staticType(Value value) {
  auto type = dyn_cast<RankedTensorType>(value.getType());
  return type && type.hasStaticShape() ? type : RankedTensorType();
}

bool isConstant(Value value) { return value.getDefiningOp<graph::ConstantOp>() != nullptr; }

std::string describe(Operation *op) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << op->getName().getStringRef();
  if (auto name = dyn_cast<NameLoc>(op->getLoc()))
    os << " '" << name.getName().getValue() << "'";
  else if (auto fused = dyn_cast<FusedLoc>(op->getLoc()))
    for (Location inner : fused.getLocations())
      if (auto innerName = dyn_cast<NameLoc>(inner)) {
        os << " '" << innerName.getName().getValue() << "'";
        break;
      }
  return text;
}

std::string mebibytes(uint64_t bytes) {
  return llvm::formatv("{0:F2} MiB", static_cast<double>(bytes) / (1 << 20)).str();
}

void setPartitionReport(ModuleOp module, ArrayRef<std::string> lines) {
  SmallVector<Attribute> attributes;
  for (const std::string &line : lines)
    attributes.push_back(StringAttr::get(module.getContext(), line));
  module->setAttr(kPartitionReportAttr, ArrayAttr::get(module.getContext(), attributes));
}

namespace {
constexpr double kCollectiveStepSeconds = 25e-6;
constexpr double kCollectiveBytesPerSecond = 4e9;
} // namespace

double allReduceSeconds(double bytes, int64_t devices) {
  return 2.0 * double(devices - 1) *
         (kCollectiveStepSeconds + bytes / double(devices) / kCollectiveBytesPerSecond);
}

double allGatherSeconds(double bytes, int64_t devices) {
  return double(devices - 1) *
         (kCollectiveStepSeconds + bytes / double(devices) / kCollectiveBytesPerSecond);
}

double transferSeconds(double bytes) {
  return kCollectiveStepSeconds + bytes / kCollectiveBytesPerSecond;
}

double broadcastSeconds(double bytes, int64_t devices) {
  return double(devices - 1) * transferSeconds(bytes);
}

void setPredictedRun(ModuleOp module, double milliseconds) {
  module->setAttr(kPartitionPredictedAttr,
                  FloatAttr::get(Float64Type::get(module.getContext()), milliseconds));
}

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

fusion::KernelWork workOf(Operation *op) {
  fusion::KernelWork work;
  if (isa<graph::ConstantOp>(op))
    return work;
  for (Value operand : op->getOperands())
    work.bytes += fusion::tensorBytes(operand.getType());
  for (Value result : op->getResults()) {
    work.bytes += fusion::tensorBytes(result.getType());
    if (RankedTensorType type = staticType(result))
      work.flops += double(type.getNumElements());
  }
  if (auto matmul = dyn_cast<graph::MatmulOp>(op))
    if (RankedTensorType lhs = staticType(matmul.getLhs()))
      work.flops *= 2.0 * double(lhs.getShape().back());
  if (auto gemm = dyn_cast<graph::GemmOp>(op))
    if (RankedTensorType a = staticType(gemm.getA()))
      work.flops *= 2.0 * double(a.getDimSize(gemm.getTransA() ? 0 : 1));
  // A convolution's output element sums over its filter's input channels and window.
  if (auto conv = dyn_cast<graph::ConvOp>(op))
    if (RankedTensorType filter = staticType(conv.getFilter()))
      work.flops *= 2.0 * double(filter.getNumElements() / filter.getDimSize(0));
  return work;
}

} // namespace kiln::partition
