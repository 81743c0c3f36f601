//===- StepCost.cpp - The modeled time of a program step ----------------------===//

#include "compiler/program/StepCost.h"

#include "contract/library_calls.h"

namespace kiln {

using namespace mlir;

namespace {

int64_t elementCount(Value buffer) { return cast<MemRefType>(buffer.getType()).getNumElements(); }

} // namespace

fusion::KernelWork stepWork(Operation *step) {
  fusion::KernelWork work;
  for (Value operand : step->getOperands())
    work.bytes += double(program::bufferBytes(cast<MemRefType>(operand.getType())));
  auto call = dyn_cast<program::LibraryCallOp>(step);
  if (!call || call.getOutputs().empty() || call.getInputs().size() < 2)
    return work;
  double results = double(elementCount(call.getOutputs().front()));
  StringRef callee = call.getCallee();
  if (callee.ends_with("matmul")) {
    // a is [..., M, K] (or its view [offset, dims..., strides...]).
    int64_t depth = 1;
    if (auto view = call.getParams().getAs<DenseI64ArrayAttr>(contract::param::kAView.name);
        view && view.size() >= 3)
      depth = view.asArrayRef()[(view.size() - 1) / 2];
    else if (auto a = cast<MemRefType>(call.getInputs()[0].getType()); a.getRank() > 0)
      depth = a.getShape().back();
    work.flops = 2 * results * double(depth);
  } else if (callee.ends_with(".attention")) {
    // Two products: scores (Sq x D by D x Skv) and the weighted values (Sq x Skv by Skv x Dv),
    // per batch index; the softmax's work is small beside them. q_view is [offset, B.., Sq, D,
    // strides...], k_view [offset, B.., D, Skv, strides...].
    auto q = call.getParams().getAs<DenseI64ArrayAttr>(contract::param::kQView.name);
    auto k = call.getParams().getAs<DenseI64ArrayAttr>(contract::param::kKView.name);
    auto dst = call.getParams().getAs<DenseI64ArrayAttr>(contract::param::kDstView.name);
    if (q && k && dst && q.size() >= 5 && q.size() == k.size() && q.size() == dst.size()) {
      size_t rank = (q.size() - 1) / 2;
      double outputs = 1;
      for (int64_t d : dst.asArrayRef().slice(1, rank))
        outputs *= double(d);
      double depth = double(q.asArrayRef()[rank]), keys = double(k.asArrayRef()[rank]);
      double dv = double(dst.asArrayRef()[rank]);
      work.flops = 2 * outputs * keys + 2 * (outputs / dv) * keys * depth;
    }
  } else if (callee.ends_with("convolution")) {
    auto weights = cast<MemRefType>(call.getInputs()[1].getType());
    double perResult = 1;
    for (int64_t d : weights.getShape().drop_front())
      perResult *= double(d);
    work.flops = 2 * results * perResult;
  }
  return work;
}

double stepSeconds(Operation *step, const fusion::DeviceDescription &device) {
  return fusion::kernelSeconds(device, stepWork(step));
}

fusion::DeviceDescription programDevice(program::ProgramOp program) {
  return *fusion::DeviceDescription::named(program.getDevice() == program::Device::cuda ? "a100"
                                                                                        : "cpu");
}

} // namespace kiln
