//===- FormDispatches.cpp - Outline kernel groups into dispatch functions ----===//
//
// The entry function, lowered to linalg/tensor and fused, becomes the program: each root op and
// the cheap producers it needs are outlined into a `kiln.dispatch` function, leaving calls,
// views, constants and library calls behind. The artifact writer turns that function into steps.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/Passes.h"
#include "compiler/fusion/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Transforms/RegionUtils.h"

#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/StringSet.h"

namespace kiln {
#define GEN_PASS_DEF_FORMDISPATCHESPASS
#include "compiler/codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {

bool isViewOp(Operation *op) {
  return isa<tensor::CollapseShapeOp, tensor::ExpandShapeOp, tensor::CastOp, tensor::ReshapeOp>(
             op) ||
         contiguousSliceByteOffset(op).has_value();
}

namespace {

bool isLibraryCall(Operation *op) {
  auto call = dyn_cast<func::CallOp>(op);
  if (!call)
    return false;
  auto callee = SymbolTable::lookupNearestSymbolFrom<func::FuncOp>(op, call.getCalleeAttr());
  return callee && callee->hasAttr(kLibraryCallAttr);
}

struct FormDispatchesPass : impl::FormDispatchesPassBase<FormDispatchesPass> {
  using Base::Base;

  /// Whether `op` is cloned into every group that uses it instead of becoming a binding.
  bool isCloneable(Operation *op) const {
    if (isa<tensor::EmptyOp>(op))
      return true;
    // Scalars (an element read from a tensor, index arithmetic) are computed inside each kernel
    // that needs them: a binding holds a tensor. Divisions of sizes of the run are not
    // speculatable (their divisor is not a constant), but the kernel computes them where the
    // program would have, so reading no memory is enough.
    if (op->getNumRegions() == 0 && op->getNumResults() > 0 && isMemoryEffectFree(op) &&
        llvm::none_of(op->getResultTypes(), [](Type type) { return isa<ShapedType>(type); }) &&
        llvm::none_of(op->getOperands(),
                      [](Value value) { return isa<BaseMemRefType>(value.getType()); }))
      return true;
    if (auto constant = dyn_cast<arith::ConstantOp>(op)) {
      auto type = dyn_cast<RankedTensorType>(constant.getType());
      if (!type)
        return true;
      auto dense = dyn_cast<DenseElementsAttr>(constant.getValue());
      return dense && (dense.isSplat() || type.getNumElements() <= inlineConstantLimit);
    }
    // A view of something cloneable (the reshaped init of a reduction) is cloned with it.
    if (isViewOp(op))
      return llvm::all_of(op->getOperands(), [&](Value operand) {
        Operation *producer = operand.getDefiningOp();
        return producer && isCloneable(producer);
      });
    if (auto fill = dyn_cast<linalg::FillOp>(op)) {
      Operation *value = fill.getInputs()[0].getDefiningOp();
      Operation *init = fill.getOutputs()[0].getDefiningOp();
      return value && init && isCloneable(value) && isCloneable(init);
    }
    return false;
  }

  /// Whether `op` stays in the entry function rather than becoming or joining a kernel group.
  bool staysInProgram(Operation *op) const {
    return op->hasTrait<OpTrait::IsTerminator>() || isViewOp(op) || isLibraryCall(op) ||
           isa<arith::ConstantOp>(op) || isCloneable(op);
  }

  void runOnOperation() override {
    ModuleOp module = getOperation();
    auto entry = module.lookupSymbol<func::FuncOp>(entryName);
    if (!entry || entry.isExternal()) {
      module.emitError() << "no entry function '" << entryName << "' to form kernels from";
      return signalPassFailure();
    }
    if (!entry.getBody().hasOneBlock()) {
      entry.emitError() << "the entry function must be a single block";
      return signalPassFailure();
    }
    SymbolTable symbols(module);
    Block &body = entry.getBody().front();

    // Walk backwards so each root sees which of its producers it can absorb before they are
    // visited as roots themselves.
    SmallVector<Operation *> ops;
    for (Operation &op : body)
      ops.push_back(&op);
    // The groups kiln-plan-fusion formed, each in block order (its root last).
    llvm::DenseMap<int64_t, SmallVector<Operation *>> fused;
    for (Operation *op : ops)
      if (auto group = op->getAttrOfType<IntegerAttr>(kFusionGroupAttr))
        fused[group.getInt()].push_back(op);
    llvm::DenseSet<Operation *> absorbed;
    int dispatchIndex = 0;
    for (Operation *root : llvm::reverse(ops)) {
      if (absorbed.contains(root))
        continue;
      // Users come before producers in this walk, so a cloneable op every consumer copied is
      // dead by now; erasing it at once lets its own producers see their true uses.
      if (isCloneable(root) && root->use_empty()) {
        root->erase();
        continue;
      }
      // A fill that some program step (the return, a library call, a view) still reads computes
      // a buffer of its own.
      bool liveFill = isa<linalg::FillOp>(root);
      if (!liveFill && staysInProgram(root))
        continue;
      SmallVector<Operation *> members;
      if (auto group = root->getAttrOfType<IntegerAttr>(kFusionGroupAttr))
        members = fused[group.getInt()];
      else
        members = insertSliceChain(root);
      if (failed(outline(members, absorbed, symbols, entry, dispatchIndex++)))
        return signalPassFailure();
    }

    // Cloneable producers that every consumer copied are dead now.
    for (Operation &op : llvm::make_early_inc_range(llvm::reverse(body)))
      if (isCloneable(&op) && op.use_empty())
        op.erase();
  }

  /// The ops that form the group of a root kiln-plan-fusion left alone: the root and the chain
  /// of insert_slice ops writing the same destination before it, each used only by the next.
  SmallVector<Operation *> insertSliceChain(Operation *root) {
    SmallVector<Operation *> members{root};
    Operation *current = root;
    while (auto insert = dyn_cast<tensor::InsertSliceOp>(current)) {
      Operation *dest = insert.getDest().getDefiningOp();
      if (!dest || !isa<tensor::InsertSliceOp>(dest) || !dest->hasOneUse())
        break;
      members.push_back(dest);
      current = dest;
    }
    std::reverse(members.begin(), members.end());
    return members;
  }

  /// Outlines `members` (in block order; only the last one's results are read outside them).
  LogicalResult outline(ArrayRef<Operation *> members, llvm::DenseSet<Operation *> &absorbed,
                        SymbolTable &symbols, func::FuncOp entry, int index) {
    Operation *root = members.back();
    llvm::DenseSet<Operation *> memberSet(members.begin(), members.end());
    for (Operation *member : members)
      absorbed.insert(member);

    // Values the group reads from outside: cloneable producers are copied in (with their own
    // operands, transitively); everything else becomes an argument.
    llvm::SetVector<Operation *> clones;
    llvm::SetVector<Value> arguments;
    std::function<void(Value)> visit = [&](Value value) {
      Operation *producer = value.getDefiningOp();
      if (producer && memberSet.contains(producer))
        return;
      if (producer && isCloneable(producer)) {
        if (clones.contains(producer))
          return;
        for (Value operand : producer->getOperands())
          visit(operand);
        clones.insert(producer);
        return;
      }
      arguments.insert(value);
    };
    for (Operation *member : members) {
      for (Value operand : member->getOperands())
        visit(operand);
      llvm::SetVector<Value> captured;
      for (Region &region : member->getRegions())
        getUsedValuesDefinedAbove(region, captured);
      for (Value value : captured)
        visit(value);
    }
    // Dynamic dimensions (a program for a range of shapes) are the run's: kiln-form-program
    // says what each is in the inputs' dimensions, and the kernel reads them at run time.
    for (Value argument : arguments)
      if (!isa<RankedTensorType>(argument.getType()))
        return root->emitError() << "cannot form a kernel of '" << root->getName()
                                 << "': operand of type " << argument.getType()
                                 << " is not a ranked tensor";
    for (Type type : root->getResultTypes())
      if (!isa<RankedTensorType>(type))
        return root->emitError() << "cannot form a kernel of '" << root->getName()
                                 << "': result of type " << type << " is not a ranked tensor";

    OpBuilder builder(entry);
    SmallVector<Type> argumentTypes;
    for (Value argument : arguments)
      argumentTypes.push_back(argument.getType());
    auto function = func::FuncOp::create(builder, root->getLoc(),
                                         ("dispatch_" + llvm::Twine(index)).str(),
                                         builder.getFunctionType(argumentTypes,
                                                                 root->getResultTypes()));
    function.setPrivate();
    function->setAttr(kDispatchAttr, builder.getUnitAttr());
    function->setAttr(kDescriptionAttr, builder.getStringAttr(describeOps(members)));
    symbols.insert(function);

    Block *block = function.addEntryBlock();
    IRMapping mapping;
    for (auto [argument, blockArgument] : llvm::zip(arguments, block->getArguments()))
      mapping.map(argument, blockArgument);
    builder.setInsertionPointToEnd(block);
    for (Operation *clone : clones)
      builder.clone(*clone, mapping);
    for (Operation *member : members)
      builder.clone(*member, mapping)->removeAttr(kFusionGroupAttr);
    SmallVector<Value> results;
    for (Value result : root->getResults())
      results.push_back(mapping.lookup(result));
    func::ReturnOp::create(builder, root->getLoc(), results);

    builder.setInsertionPoint(root);
    auto call = func::CallOp::create(builder, root->getLoc(), function, arguments.getArrayRef());
    root->replaceAllUsesWith(call.getResults());
    for (Operation *member : llvm::reverse(members))
      member->erase();
    return success();
  }
};

} // namespace
} // namespace kiln
