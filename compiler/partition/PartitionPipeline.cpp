//===- PartitionPipeline.cpp - Pipeline parallelism -----------------------------===//
//
// kiln-partition-pipeline (Passes.td): the entry function's ops cut into stages of balanced
// modeled cost, the cuts placed where few bytes cross; one device's stage kept, with broadcasts
// of the values that cross stages.
//
//===----------------------------------------------------------------------===//

#include "compiler/partition/Passes.h"

#include "compiler/librarycalls/Declarations.h"
#include "compiler/partition/Common.h"
#include "dialects/graph/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <string>
#include <vector>

namespace kiln {
#define GEN_PASS_DEF_PARTITIONPIPELINEPASS
#include "compiler/partition/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {
namespace {

using namespace partition;

class Pipeliner {
public:
  Pipeliner(ModuleOp module, func::FuncOp entry, int64_t devices, int64_t rank)
      : module(module), entry(entry), devices(devices), rank(rank) {}

  LogicalResult run();

private:
  /// The bytes of the values defined before op `cut` (of `ops`) and read at or after it.
  uint64_t crossingBytes(size_t cut) const;

  ModuleOp module;
  func::FuncOp entry;
  int64_t devices, rank;
  /// The ops that compute (constants aside), in program order, and where each one is.
  std::vector<Operation *> ops;
  llvm::DenseMap<Operation *, size_t> position;
};

uint64_t Pipeliner::crossingBytes(size_t cut) const {
  uint64_t bytes = 0;
  for (size_t i = 0; i < cut; ++i)
    for (Value result : ops[i]->getResults()) {
      bool later = llvm::any_of(result.getUsers(), [&](Operation *user) {
        auto it = position.find(user);
        return it == position.end() || it->second >= cut; // the return op counts as later
      });
      if (later)
        bytes += uint64_t(fusion::tensorBytes(result.getType()));
    }
  return bytes;
}

LogicalResult Pipeliner::run() {
  if (devices < 2 || rank < 0 || rank >= devices)
    return module.emitError() << "kiln-partition-pipeline: rank " << rank << " is not one of "
                              << devices << " devices";
  Block &body = entry.getBody().front();
  for (Operation &op : body.without_terminator())
    if (!isa<graph::ConstantOp>(op)) {
      position[&op] = ops.size();
      ops.push_back(&op);
    }
  if (ops.size() < static_cast<size_t>(devices))
    return entry.emitError() << "kiln-partition-pipeline: " << ops.size() << " ops cannot make "
                             << devices << " stages";

  // The cost before each op, by the cost model.
  std::optional<fusion::DeviceDescription> cpu = fusion::DeviceDescription::named("cpu");
  std::vector<double> before(ops.size() + 1, 0.0);
  for (size_t i = 0; i < ops.size(); ++i)
    before[i + 1] = before[i] + fusion::kernelSeconds(*cpu, workOf(ops[i]));
  double total = before.back(), share = total / double(devices);

  // Each cut: the fewest crossing bytes within a quarter stage of the balanced point, the
  // closest to it among equals.
  std::vector<size_t> cuts{0};
  for (int64_t k = 1; k < devices; ++k) {
    double target = share * double(k);
    size_t best = 0;
    uint64_t bestBytes = UINT64_MAX;
    double bestDistance = INFINITY;
    bool bestInWindow = false;
    // Every later stage keeps at least one op.
    for (size_t cut = cuts.back() + 1; cut + static_cast<size_t>(devices - k) <= ops.size();
         ++cut) {
      double distance = std::fabs(before[cut] - target);
      bool inWindow = distance <= share / 4;
      if (!inWindow && (bestInWindow || distance >= bestDistance))
        continue;
      uint64_t bytes = crossingBytes(cut);
      if (inWindow && bestInWindow &&
          (bytes > bestBytes || (bytes == bestBytes && distance >= bestDistance)))
        continue;
      best = cut;
      bestBytes = bytes;
      bestDistance = distance;
      bestInWindow = inWindow;
    }
    cuts.push_back(best);
  }
  cuts.push_back(ops.size());
  auto stageOf = [&](Operation *op) {
    size_t i = position.lookup(op);
    return static_cast<int64_t>(std::upper_bound(cuts.begin(), cuts.end(), i) - cuts.begin() - 1);
  };

  // The values a stage sends: read by another stage or returned.
  Operation *terminator = body.getTerminator();
  SmallVector<Value> sent;
  for (Operation *op : ops)
    for (Value result : op->getResults())
      if (llvm::any_of(result.getUsers(), [&](Operation *user) {
            return user == terminator || stageOf(user) != stageOf(op);
          }))
        sent.push_back(result);

  std::vector<std::string> report;
  report.push_back(llvm::formatv("pipeline over {0} devices (this program: device {1}): {2} "
                                 "stages, {3} values broadcast",
                                 devices, rank, devices, sent.size())
                       .str());
  double slowest = 0, sendSeconds = 0;
  for (Value value : sent)
    sendSeconds += broadcastSeconds(fusion::tensorBytes(value.getType()), devices);
  for (int64_t k = 0; k < devices; ++k) {
    double seconds = before[cuts[k + 1]] - before[cuts[k]];
    slowest = std::max(slowest, seconds);
    uint64_t bytes = 0;
    for (Value value : sent)
      if (stageOf(value.getDefiningOp()) == k)
        bytes += uint64_t(fusion::tensorBytes(value.getType()));
    report.push_back(llvm::formatv("stage {0}: ops {1}-{2} ({3} to {4}), {5:F2} ms modeled, "
                                   "sends {6}",
                                   k, cuts[k], cuts[k + 1] - 1, describe(ops[cuts[k]]),
                                   describe(ops[cuts[k + 1] - 1]), seconds * 1e3, mebibytes(bytes))
                         .str());
  }
  // On one host the devices share its cores (a thread each of cores / devices): the stage that
  // runs has 1 / min(devices, cores) of the host.
  double sharing = total * double(std::min<int64_t>(devices, cpu->parallelUnits));
  report.insert(report.begin() + 1,
                llvm::formatv("predicted (cost model 'cpu'): one run {0:F2} ms through the "
                              "stages in turn, each device on a host of its own (compute {1:F2} "
                              "ms, broadcasts {2:F2} ms; {3:F2} ms with the {4} devices sharing "
                              "one host); with a run in every stage at once, one every {5:F2} ms "
                              "(the slowest stage)",
                              (total + sendSeconds) * 1e3, total * 1e3, sendSeconds * 1e3,
                              (sharing + sendSeconds) * 1e3, devices, slowest * 1e3)
                    .str());
  setPredictedRun(module, (total + sendSeconds) * 1e3);

  // This device's program: the broadcasts where the sent values are defined, then only its
  // stage's ops.
  OpBuilder builder(module.getContext());
  SymbolTable symbols(module);
  for (Value value : sent) {
    Operation *def = value.getDefiningOp();
    int64_t root = stageOf(def);
    Type type = value.getType();
    func::CallOp call;
    if (root == rank) {
      builder.setInsertionPointAfter(def);
      func::FuncOp callee = libraryCallDeclaration(symbols, module, "gloo.broadcast",
                                                   builder.getFunctionType({type}, {type}));
      call = func::CallOp::create(builder, def->getLoc(), callee, ValueRange{value});
    } else {
      builder.setInsertionPoint(def);
      func::FuncOp callee = libraryCallDeclaration(symbols, module, "gloo.receive",
                                                   builder.getFunctionType({}, {type}));
      call = func::CallOp::create(builder, def->getLoc(), callee, ValueRange{});
      value.replaceAllUsesWith(call.getResult(0));
    }
    call->setAttr("devices", builder.getI64IntegerAttr(devices));
    call->setAttr("root", builder.getI64IntegerAttr(root));
  }
  for (Operation *op : llvm::reverse(ops))
    if (stageOf(op) != rank) {
      if (!op->use_empty())
        return op->emitError() << "kiln-partition-pipeline: device " << stageOf(op)
                               << "'s op is still read on device " << rank;
      op->erase();
    }
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
    if (isa<graph::ConstantOp>(op) && op.use_empty())
      op.erase();

  setPartitionReport(module, report);
  return success();
}

class PartitionPipelinePass : public impl::PartitionPipelinePassBase<PartitionPipelinePass> {
public:
  using PartitionPipelinePassBase::PartitionPipelinePassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(partitionEntry(module, getArgument(), [&](func::FuncOp entry) {
          return Pipeliner(module, entry, devices, rank).run();
        })))
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
