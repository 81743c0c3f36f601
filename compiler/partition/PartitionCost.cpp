//===- PartitionCost.cpp - The modeled time of a partitioned run ----------===//

#include "compiler/partition/PartitionCost.h"

#include "compiler/partition/Passes.h"
#include "compiler/partition/Split.h"

#include "dialects/graph/GraphOps.h"

using namespace mlir;

namespace kiln::partition {

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
