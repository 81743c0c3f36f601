//===- AssignStreams.cpp - Independent steps on separate streams --------------===//
//
// List scheduling over the program's data dependencies with the cost model's step times: each
// step goes to the stream where it can start first. See Passes.td.
//
//===----------------------------------------------------------------------===//

#include "compiler/program/Liveness.h"
#include "compiler/program/Passes.h"
#include "compiler/program/StepCost.h"
#include "compiler/program/StepOrder.h"

#include "mlir/IR/Builders.h"

#include <algorithm>
#include <vector>

namespace kiln {

#define GEN_PASS_DEF_ASSIGNSTREAMSPASS
#include "compiler/program/Passes.h.inc"

using namespace mlir;

namespace {

LogicalResult assignStreams(program::ProgramOp program, int64_t streams, uint64_t alignment) {
  StepOrder order(program);
  for (Operation *op : order.steps())
    if (cast<program::StepOpInterface>(op).getStreamIndex() != 0)
      return op->emitError() << "already runs on stream "
                             << cast<program::StepOpInterface>(op).getStreamIndex()
                             << "; streams are assigned once";
  Builder builder(program.getContext());
  uint64_t serial =
      planArena(computeLiveness(program, /*inPlace=*/true).slots, alignment).arenaSize;

  fusion::DeviceDescription device = programDevice(program);
  size_t count = order.steps().size();
  std::vector<double> finish(count, 0), freeAt(streams, 0);
  std::vector<int64_t> tail(streams, -1);
  int64_t used = 1;
  for (size_t j = 0; j < count; ++j) {
    ArrayRef<int64_t> predecessors = order.dataPredecessors(j);
    double ready = 0;
    for (int64_t p : predecessors)
      ready = std::max(ready, finish[p]);
    int64_t best = 0;
    double bestStart = 0;
    bool bestContinues = false;
    for (int64_t s = 0; s < streams; ++s) {
      double start = std::max(ready, freeAt[s]);
      bool continues = tail[s] >= 0 && llvm::is_contained(predecessors, tail[s]);
      double tolerance = 1e-9 * std::max(1.0, bestStart);
      if (s == 0 || start < bestStart - tolerance ||
          (start <= bestStart + tolerance && continues && !bestContinues)) {
        best = s;
        bestStart = start;
        bestContinues = continues;
      }
    }
    Operation *op = order.steps()[j];
    finish[j] = bestStart + stepSeconds(op, device);
    freeAt[best] = finish[j];
    tail[best] = j;
    used = std::max(used, best + 1);
    if (best != 0)
      op->setAttr("stream", builder.getI64IntegerAttr(best));
  }
  program.setStreamCountAttr(builder.getI64IntegerAttr(used));
  program.setSerialArenaSizeAttr(builder.getI64IntegerAttr(int64_t(serial)));
  return success();
}

struct AssignStreamsPass : impl::AssignStreamsPassBase<AssignStreamsPass> {
  using Base::Base;

  void runOnOperation() override {
    if (streams < 1) {
      getOperation().emitError() << "--streams " << streams << " is below 1";
      return signalPassFailure();
    }
    if (streams == 1)
      return;
    if (alignment < 1 || !llvm::isPowerOf2_64(alignment)) {
      getOperation().emitError() << "the alignment " << alignment << " is not a power of two";
      return signalPassFailure();
    }
    for (auto program : getOperation().getOps<program::ProgramOp>())
      if (failed(assignStreams(program, streams, uint64_t(alignment))))
        return signalPassFailure();
  }
};

} // namespace
} // namespace kiln
