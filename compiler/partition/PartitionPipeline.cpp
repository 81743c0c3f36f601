//===- PartitionPipeline.cpp - Pipeline parallelism -----------------------------===//
//
// kiln-partition-pipeline (Passes.td): the entry function's ops cut into stages of balanced
// modeled cost, the cuts placed where few bytes cross; one device's stage kept, with broadcasts
// of the values that cross stages.
//
//===----------------------------------------------------------------------===//

#include "compiler/partition/Passes.h"
#include "dialects/kiln/KilnAttributes.h"

#include "contract/library_calls.h"

#include "compiler/librarycalls/Declarations.h"
#include "compiler/partition/EntryFunction.h"
#include "compiler/partition/PartitionBatch.h"
#include "compiler/partition/PartitionCost.h"
#include "compiler/partition/PartitionReport.h"
#include "dialects/graph/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/SymbolTable.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/Support/FormatVariadic.h"

#include <cmath>
#include <set>
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
  Pipeliner(ModuleOp module, func::FuncOp entry, int64_t devices, int64_t rank,
            int64_t microBatches)
      : module(module), entry(entry), devices(devices), rank(rank), microBatches(microBatches) {}

  LogicalResult run();

private:
  /// The pipeline with `microBatches` micro-batches in flight: the function unrolled into one
  /// copy per micro-batch (each typed at its share of the batch), every op of a copy on its
  /// original op's stage, values sent point to point between stages, the outputs joined and
  /// broadcast from the stage that computes them.
  LogicalResult runMicroBatched(function_ref<int64_t(Operation *)> stageOf,
                                ArrayRef<double> stageSeconds, ArrayRef<std::string> stages);

  /// The bytes of the values defined before op `cut` (of `ops`) and read at or after it.
  uint64_t crossingBytes(size_t cut) const;

  ModuleOp module;
  func::FuncOp entry;
  int64_t devices, rank, microBatches;
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
  if (microBatches > 1) {
    std::vector<double> stageSeconds;
    for (int64_t k = 0; k < devices; ++k)
      stageSeconds.push_back(before[cuts[k + 1]] - before[cuts[k]]);
    std::vector<std::string> stages;
    for (int64_t k = 0; k < devices; ++k)
      stages.push_back(llvm::formatv("stage {0}: ops {1}-{2} ({3} to {4}), {5:F2} ms modeled "
                                     "for the whole batch",
                                     k, cuts[k], cuts[k + 1] - 1, describe(ops[cuts[k]]),
                                     describe(ops[cuts[k + 1] - 1]), stageSeconds[k] * 1e3)
                           .str());
    return runMicroBatched(stageOf, stageSeconds, stages);
  }

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
      func::FuncOp callee =
          libraryCallDeclaration(symbols, module, contract::callee::kGlooBroadcast,
                                 builder.getFunctionType({type}, {type}));
      call = func::CallOp::create(builder, def->getLoc(), callee, ValueRange{value});
    } else {
      builder.setInsertionPoint(def);
      func::FuncOp callee = libraryCallDeclaration(symbols, module, contract::callee::kGlooReceive,
                                                   builder.getFunctionType({}, {type}));
      call = func::CallOp::create(builder, def->getLoc(), callee, ValueRange{});
      value.replaceAllUsesWith(call.getResult(0));
    }
    call->setAttr(contract::param::kDevices.name, builder.getI64IntegerAttr(devices));
    call->setAttr(contract::param::kRoot.name, builder.getI64IntegerAttr(root));
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

/// The stage of each op while the pipeline is unrolled (-1: computed on every device that
/// reads it, from the inputs and constants alone).
constexpr StringLiteral kStageAttr = ::kiln::attrs::kStage;

int64_t stageAttr(Operation *op) {
  if (!op)
    return -1; // a function argument
  auto stage = op->getAttrOfType<IntegerAttr>(kStageAttr);
  return stage ? stage.getInt() : -1;
}

LogicalResult Pipeliner::runMicroBatched(function_ref<int64_t(Operation *)> stageOf,
                                         ArrayRef<double> stageSeconds,
                                         ArrayRef<std::string> stages) {
  MLIRContext *context = module.getContext();
  Block &body = entry.getBody().front();
  Operation *terminator = body.getTerminator();
  Builder attrs(context);
  for (Operation *op : ops)
    op->setAttr(kStageAttr, attrs.getI64IntegerAttr(stageOf(op)));
  SmallVector<Operation *> originals;
  for (Operation &op : body.without_terminator())
    originals.push_back(&op);

  // One copy of the function per micro-batch, each at its share of the batch, moved into the
  // entry function one after another.
  SymbolTable symbols(module);
  SmallVector<SmallVector<Value>> results;
  SmallVector<std::optional<Split>> resultSplits;
  // Copied before any is moved in.
  SmallVector<func::FuncOp> copies;
  for (int64_t m = 0; m < microBatches; ++m) {
    copies.push_back(entry.clone());
    copies.back().setPrivate();
    symbols.insert(copies.back());
  }
  for (int64_t m = 0; m < microBatches; ++m) {
    func::FuncOp copy = copies[m];
    SmallVector<std::optional<Split>> splits;
    if (failed(splitIntoBatchPart(module, copy, microBatches, m, "kiln-partition-pipeline",
                                  splits))) {
      for (int64_t rest = m; rest < microBatches; ++rest)
        copies[rest].erase();
      return failure();
    }
    resultSplits = splits;
    Block &part = copy.getBody().front();
    for (auto [from, to] : llvm::zip_equal(part.getArguments(), entry.getArguments()))
      from.replaceAllUsesWith(to);
    Operation *partReturn = part.getTerminator();
    results.emplace_back(partReturn->getOperands());
    body.getOperations().splice(terminator->getIterator(), part.getOperations(), part.begin(),
                                partReturn->getIterator());
    copy.erase();
  }
  // The outputs, whole again.
  OpBuilder builder(terminator);
  SmallVector<Value> outputs;
  for (auto [i, split] : llvm::enumerate(resultSplits)) {
    if (!split) {
      outputs.push_back(results[0][i]);
      continue;
    }
    SmallVector<Value> parts;
    for (auto &partResults : results)
      parts.push_back(partResults[i]);
    outputs.push_back(joinParts(builder, terminator->getLoc(), parts, *split,
                                cast<RankedTensorType>(entry.getResultTypes()[i])));
  }
  terminator->setOperands(outputs);
  for (Operation *op : llvm::reverse(originals))
    op->erase();

  // Ops the split added (inputs' parts, values read in part, the joins) run where their
  // operands are computed.
  for (Operation &op : body.without_terminator()) {
    if (op.hasAttr(kStageAttr) || isa<graph::ConstantOp>(op))
      continue;
    int64_t stage = -1;
    for (Value operand : op.getOperands())
      stage = std::max(stage, stageAttr(operand.getDefiningOp()));
    op.setAttr(kStageAttr, attrs.getI64IntegerAttr(stage));
  }

  // Every value one stage computes and another reads goes there point to point, each transfer
  // numbered in program order (the same on every device).
  struct Transfer {
    Value value;
    int64_t from, to, tag;
  };
  std::vector<Transfer> transfers;
  uint64_t transferBytes = 0;
  double sendSeconds = 0;
  for (Operation &op : body.without_terminator()) {
    int64_t from = stageAttr(&op);
    if (from < 0 || isa<graph::ConstantOp>(op))
      continue;
    for (Value value : op.getResults()) {
      std::set<int64_t> to;
      for (Operation *user : value.getUsers())
        if (user != terminator && stageAttr(user) != from)
          to.insert(stageAttr(user));
      for (int64_t k : to) {
        if (k < 0)
          return op.emitError() << "kiln-partition-pipeline: a value of stage " << from
                                << " is read by an op that runs on every device";
        transfers.push_back({value, from, k, static_cast<int64_t>(transfers.size())});
        transferBytes += uint64_t(fusion::tensorBytes(value.getType()));
        sendSeconds += transferSeconds(fusion::tensorBytes(value.getType()));
      }
    }
  }

  // The report: the stages and the model's prediction of one run of the whole batch.
  std::optional<fusion::DeviceDescription> cpu = fusion::DeviceDescription::named("cpu");
  double total = 0;
  for (double seconds : stageSeconds)
    total += seconds;
  // Each stage's time for one micro-batch, from the unrolled ops at their micro-batch types (a
  // launch costs as much at any size).
  std::vector<double> partSeconds(devices, 0.0);
  for (Operation &op : body.without_terminator())
    if (int64_t stage = stageAttr(&op); stage >= 0 && !isa<graph::ConstantOp>(op))
      partSeconds[stage] += fusion::kernelSeconds(*cpu, workOf(&op)) / double(microBatches);
  double fill = 0, slowest = 0;
  for (double seconds : partSeconds) {
    fill += seconds;
    slowest = std::max(slowest, seconds);
  }
  // The first micro-batch through every stage, then one more every slowest stage.
  double compute = fill + double(microBatches - 1) * slowest;
  uint64_t outputBytes = 0;
  for (Value output : outputs)
    if (stageAttr(output.getDefiningOp()) >= 0)
      outputBytes += uint64_t(fusion::tensorBytes(output.getType()));
  double broadcast = broadcastSeconds(double(outputBytes), devices);
  std::vector<std::string> report;
  report.push_back(llvm::formatv("pipeline over {0} devices (this program: device {1}): {2} "
                                 "stages, {3} micro-batches in flight; {4} transfers between "
                                 "stages ({5} per run), outputs broadcast ({6})",
                                 devices, rank, devices, microBatches, transfers.size(),
                                 mebibytes(transferBytes), mebibytes(outputBytes))
                       .str());
  report.push_back(llvm::formatv("predicted (cost model '{0}'): one run {1:F2} ms through the "
                                 "stages with {2} micro-batches, each device on a host of its "
                                 "own (compute {3:F2} ms: the first micro-batch through every "
                                 "stage, then one every {4:F2} ms; transfers {5:F2} ms, outputs "
                                 "{6:F2} ms); {8:F2} ms with the {9} devices sharing one host; "
                                 "without micro-batches {7:F2} ms",
                                 cpu->name, (compute + sendSeconds + broadcast) * 1e3,
                                 microBatches, compute * 1e3, slowest * 1e3,
                                 sendSeconds * 1e3, broadcast * 1e3, total * 1e3,
                                 // Sharing the host, every micro-batch's work in turn.
                                 (double(microBatches) * fill + sendSeconds + broadcast) * 1e3,
                                 devices)
                       .str());
  llvm::append_range(report, stages);
  setPredictedRun(module, (compute + sendSeconds + broadcast) * 1e3);

  // This device's program: its stage's ops of every micro-batch, in order, with the sends after
  // the values they send and the receives before their first reader here.
  SymbolTable declarations(module);
  auto call = [&](StringRef name, FunctionType type, ValueRange operands, Location loc,
                  ArrayRef<NamedAttribute> attributes) {
    func::FuncOp callee = libraryCallDeclaration(declarations, module, name, type);
    auto created = func::CallOp::create(builder, loc, callee, operands);
    for (const NamedAttribute &attribute : attributes)
      created->setAttr(attribute.getName(), attribute.getValue());
    created->setAttr(kStageAttr, attrs.getI64IntegerAttr(rank));
    return created;
  };
  for (const Transfer &transfer : transfers) {
    if (transfer.from != rank && transfer.to != rank)
      continue;
    Type type = transfer.value.getType();
    SmallVector<NamedAttribute> params{
        attrs.getNamedAttr(contract::param::kDevices.name, attrs.getI64IntegerAttr(devices)),
        attrs.getNamedAttr(
            contract::param::kPeer.name,
            attrs.getI64IntegerAttr(transfer.from == rank ? transfer.to : transfer.from)),
        attrs.getNamedAttr(contract::param::kTag.name, attrs.getI64IntegerAttr(transfer.tag))};
    Operation *def = transfer.value.getDefiningOp();
    if (transfer.from == rank) {
      builder.setInsertionPointAfter(def);
      call(contract::callee::kGlooSend, attrs.getFunctionType({type}, {type}), transfer.value,
           def->getLoc(), params);
      continue;
    }
    Operation *first = nullptr;
    for (Operation *user : transfer.value.getUsers())
      if (stageAttr(user) == rank && user != terminator &&
          (!first || user->isBeforeInBlock(first)))
        first = user;
    builder.setInsertionPoint(first);
    auto received = call(contract::callee::kGlooRecv, attrs.getFunctionType({}, {type}), {},
                         def->getLoc(), params);
    Value value = transfer.value;
    value.replaceUsesWithIf(received.getResult(0), [&](OpOperand &use) {
      return use.getOwner() != terminator && stageAttr(use.getOwner()) == rank;
    });
  }
  // Every device returns the outputs: broadcast from the stage that joins them.
  builder.setInsertionPoint(terminator);
  llvm::DenseMap<Value, Value> returned;
  for (OpOperand &operand : terminator->getOpOperands()) {
    Value output = operand.get();
    int64_t root = stageAttr(output.getDefiningOp());
    if (root < 0)
      continue;
    auto it = returned.find(output);
    if (it == returned.end()) {
      SmallVector<NamedAttribute> params{
          attrs.getNamedAttr(contract::param::kDevices.name, attrs.getI64IntegerAttr(devices)),
          attrs.getNamedAttr(contract::param::kRoot.name, attrs.getI64IntegerAttr(root))};
      Type type = output.getType();
      func::CallOp made =
          root == rank
              ? call(contract::callee::kGlooBroadcast, attrs.getFunctionType({type}, {type}),
                     output, terminator->getLoc(), params)
              : call(contract::callee::kGlooReceive, attrs.getFunctionType({}, {type}), {},
                     terminator->getLoc(), params);
      it = returned.insert({output, root == rank ? output : made.getResult(0)}).first;
    }
    operand.set(it->second);
  }
  // What other devices compute goes; what every device could compute stays where it is read.
  SmallVector<Operation *> all;
  for (Operation &op : body.without_terminator())
    all.push_back(&op);
  for (Operation *op : llvm::reverse(all)) {
    int64_t stage = stageAttr(op);
    if (stage != rank && (stage >= 0 || op->use_empty())) {
      if (!op->use_empty())
        return op->emitError() << "kiln-partition-pipeline: device " << stage
                               << "'s op is still read on device " << rank;
      op->erase();
      continue;
    }
    op->removeAttr(kStageAttr);
  }
  setPartitionReport(module, report);
  return success();
}

class PartitionPipelinePass : public impl::PartitionPipelinePassBase<PartitionPipelinePass> {
public:
  using PartitionPipelinePassBase::PartitionPipelinePassBase;

  void runOnOperation() override {
    ModuleOp module = getOperation();
    if (failed(partitionEntry(module, getArgument(), [&](func::FuncOp entry) {
          return Pipeliner(module, entry, devices, rank, microBatches).run();
        })))
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
