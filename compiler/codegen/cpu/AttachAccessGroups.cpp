//===- AttachAccessGroups.cpp - A parallel loop's accesses in its group ---------===//
//
// `llvm.loop.parallel_accesses` speaks only for the memory operations in the access groups it
// lists; LLVM treats a loop as parallel when every load and store in it is in one. The loops
// kiln-lower-linalg-to-loops marks reach the LLVM dialect with their annotation on the back
// edge; this pass puts each such loop's loads and stores (and memory intrinsics) in its group,
// and makes the annotation the branch's own, which is what the translation to LLVM IR reads.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/Passes.h"

#include "llvm/ADT/SetVector.h"

namespace kiln {

#define GEN_PASS_DEF_ATTACHACCESSGROUPSPASS
#include "compiler/codegen/Passes.h.inc"

using namespace mlir;

namespace {

/// The blocks of the loop whose back edge leaves `latch` for `header`: the header and every
/// block that reaches the latch without passing through the header.
llvm::SetVector<Block *> loopBlocks(Block *header, Block *latch) {
  llvm::SetVector<Block *> blocks;
  blocks.insert(header);
  SmallVector<Block *> work{latch};
  while (!work.empty()) {
    Block *block = work.pop_back_val();
    if (!blocks.insert(block))
      continue;
    for (Block *predecessor : block->getPredecessors())
      work.push_back(predecessor);
  }
  return blocks;
}

struct AttachAccessGroupsPass : impl::AttachAccessGroupsPassBase<AttachAccessGroupsPass> {
  void runOnOperation() override {
    SmallVector<LLVM::BrOp> backEdges;
    getOperation()->walk([&](Operation *op) {
      if (!op->hasAttr(kParallelLoopAttr))
        return;
      // scf.for's back edge is an unconditional branch; a loop reached otherwise stays one
      // whose independence LLVM checks itself.
      if (auto branch = dyn_cast<LLVM::BrOp>(op))
        backEdges.push_back(branch);
      else
        op->removeAttr(kParallelLoopAttr);
    });
    for (LLVM::BrOp branch : backEdges) {
      auto annotation = dyn_cast<LLVM::LoopAnnotationAttr>(branch->getAttr(kParallelLoopAttr));
      branch->removeAttr(kParallelLoopAttr);
      if (!annotation) {
        branch.emitError("expected an LLVM loop annotation in '") << kParallelLoopAttr << "'";
        return signalPassFailure();
      }
      branch.setLoopAnnotationAttr(annotation);
      ArrayRef<LLVM::AccessGroupAttr> groups = annotation.getParallelAccesses();
      if (groups.empty())
        continue;
      for (Block *block : loopBlocks(branch.getDest(), branch->getBlock())) {
        for (Operation &op : *block) {
          auto access = dyn_cast<LLVM::AccessGroupOpInterface>(op);
          if (!access)
            continue;
          SmallVector<Attribute> attached;
          if (ArrayAttr existing = access.getAccessGroupsOrNull())
            llvm::append_range(attached, existing.getValue());
          llvm::append_range(attached, groups);
          access.setAccessGroups(ArrayAttr::get(&getContext(), attached));
        }
      }
    }
  }
};

} // namespace
} // namespace kiln
