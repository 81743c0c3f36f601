//===- BindRunSizes.cpp - The run's sizes for kernels with dynamic bindings ===//
//
// A kernel of a program compiled for a range of shapes takes, besides its bindings, the sizes of
// every binding's dimensions for the run (kernel_abi.h); dynamic bindings are passed as bare
// pointers and seen again with their dimensions in the body.
//
//===----------------------------------------------------------------------===//

#include "compiler/codegen/Passes.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Arith/Utils/Utils.h"
#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/IR/Builders.h"

namespace kiln {
#define GEN_PASS_DEF_BINDRUNSIZESPASS
#include "compiler/codegen/Passes.h.inc"
} // namespace kiln

using namespace mlir;

namespace kiln {

Value viewWithRunSizes(OpBuilder &builder, Location loc, Value buffer, MemRefType type,
                       ArrayRef<OpFoldResult> sizes) {
  // Row-major: each stride is the product of the sizes after it.
  SmallVector<OpFoldResult> strides(type.getRank());
  OpFoldResult stride = builder.getIndexAttr(1);
  for (int64_t d = type.getRank() - 1; d >= 0; --d) {
    strides[d] = stride;
    if (d == 0)
      break;
    std::optional<int64_t> a = getConstantIntValue(stride), b = getConstantIntValue(sizes[d]);
    if (a && b) {
      stride = builder.getIndexAttr(*a * *b);
      continue;
    }
    stride =
        arith::MulIOp::create(builder, loc, getValueOrCreateConstantIndexOp(builder, loc, stride),
                              getValueOrCreateConstantIndexOp(builder, loc, sizes[d]))
            .getResult();
  }
  return memref::ReinterpretCastOp::create(builder, loc, type, buffer, builder.getIndexAttr(0),
                                           sizes, strides);
}

namespace {

bool isDynamicBinding(Type type) {
  auto memref = dyn_cast<MemRefType>(type);
  return memref && !memref.hasStaticShape();
}

struct BindRunSizesPass : impl::BindRunSizesPassBase<BindRunSizesPass> {
  using Base::Base;

  void runOnOperation() override {
    bool takesWorkgroupId = workgroupId;
    WalkResult walked = getOperation().walk([&](func::FuncOp function) {
      if (!function->hasAttr(kDispatchAttr) || function.isExternal() ||
          llvm::none_of(function.getArgumentTypes(), isDynamicBinding))
        return WalkResult::advance();
      MLIRContext *context = function.getContext();
      Block &entry = function.getBody().front();
      // The bindings, then the workgroup id (kiln-distribute-workgroups put it last) on the CPU.
      unsigned bindings = function.getNumArguments() - (takesWorkgroupId ? 1 : 0);
      if (takesWorkgroupId && !entry.getArgument(bindings).getType().isIndex()) {
        function.emitError("a dispatch function with dynamic bindings must take the workgroup "
                           "id last");
        return WalkResult::interrupt();
      }
      int64_t dims = 0;
      for (unsigned i = 0; i < bindings; ++i) {
        auto memref = dyn_cast<MemRefType>(entry.getArgument(i).getType());
        if (!memref || !memref.getLayout().isIdentity()) {
          function.emitError() << "binding " << i << " of type " << entry.getArgument(i).getType()
                               << " is not a memref with the identity layout";
          return WalkResult::interrupt();
        }
        dims += memref.getRank();
      }
      auto sizesType = MemRefType::get({std::max<int64_t>(dims, 1)}, IntegerType::get(context, 64));
      if (failed(function.insertArgument(bindings, sizesType, {}, function.getLoc()))) {
        function.emitError("cannot add the run's sizes argument");
        return WalkResult::interrupt();
      }
      BlockArgument sizes = entry.getArgument(bindings);

      OpBuilder builder = OpBuilder::atBlockBegin(&entry);
      Location loc = function.getLoc();
      int64_t position = 0;
      for (unsigned i = 0; i < bindings; ++i) {
        BlockArgument argument = entry.getArgument(i);
        auto type = cast<MemRefType>(argument.getType());
        int64_t first = position;
        position += type.getRank();
        if (type.hasStaticShape())
          continue;
        SmallVector<OpFoldResult> runSizes;
        for (int64_t d = 0; d < type.getRank(); ++d) {
          if (!type.isDynamicDim(d)) {
            runSizes.push_back(builder.getIndexAttr(type.getDimSize(d)));
            continue;
          }
          Value index = arith::ConstantIndexOp::create(builder, loc, first + d);
          Value size = memref::LoadOp::create(builder, loc, sizes, index);
          runSizes.push_back(
              arith::IndexCastOp::create(builder, loc, builder.getIndexType(), size).getResult());
        }
        auto pointer = MemRefType::get({1}, type.getElementType(), MemRefLayoutAttrInterface{},
                                       type.getMemorySpace());
        argument.setType(pointer);
        Value view = viewWithRunSizes(builder, loc, argument, type, runSizes);
        argument.replaceAllUsesExcept(view, view.getDefiningOp());
      }
      function.setFunctionType(
          FunctionType::get(context, entry.getArgumentTypes(), function.getResultTypes()));
      function->setAttr(kRunSizesAttr, builder.getI64IntegerAttr(dims));
      return WalkResult::advance();
    });
    if (walked.wasInterrupted())
      signalPassFailure();
  }
};

} // namespace
} // namespace kiln
