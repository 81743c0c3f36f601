//===- Passes.h - Kernel-group formation and code generation ----*- C++ -*-===//

#ifndef KILN_COMPILER_CODEGEN_PASSES_H
#define KILN_COMPILER_CODEGEN_PASSES_H

#include "dialects/kiln/KilnAttributes.h"
#include "mlir/Dialect/Affine/IR/AffineOps.h"
#include "mlir/Dialect/Bufferization/IR/Bufferization.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/GPU/IR/GPUDialect.h"
#include "mlir/Dialect/LLVMIR/LLVMDialect.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/SCF/IR/SCF.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/Dialect/Vector/IR/VectorOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Pass/Pass.h"

#include "compiler/fusion/Passes.h"
#include "dialects/program/ProgramDialect.h"

namespace kiln {

#define GEN_PASS_DECL
#include "compiler/codegen/Passes.h.inc"

#define GEN_PASS_REGISTRATION
#include "compiler/codegen/Passes.h.inc"

/// The unit attribute marking a dispatch function, and the attributes it carries.
inline constexpr llvm::StringLiteral kDispatchAttr = ::kiln::attrs::kDispatch;
inline constexpr llvm::StringLiteral kDescriptionAttr = ::kiln::attrs::kDescription;
inline constexpr llvm::StringLiteral kWorkgroupCountAttr = ::kiln::attrs::kWorkgroupCount;
/// On a dispatch function's argument or result with dynamic dimensions: the shape at the
/// program's upper bounds (kiln-form-program), which tiling sizes its tiles for.
inline constexpr llvm::StringLiteral kBoundsAttr = ::kiln::attrs::kBounds;
/// On a dispatch function of a program with a dimension given without an upper bound: its
/// kiln.bounds are the nominal shape's, fit for tiling choices but no buffer's size.
inline constexpr llvm::StringLiteral kNominalBoundsAttr = ::kiln::attrs::kNominalBounds;
/// On a dispatch function split over a number of workgroups known only at run time: for each
/// loop of the grid, (binding, dimension, tile): the count is the product of
/// ceil(dimension `dimension` of binding `binding` / tile); binding -1 names a static extent
/// `dimension`.
inline constexpr llvm::StringLiteral kWorkgroupDimsAttr = ::kiln::attrs::kWorkgroupDims;
/// On a dispatch function kiln-bind-run-sizes gave the run's sizes: how many it reads.
inline constexpr llvm::StringLiteral kRunSizesAttr = ::kiln::attrs::kRunSizes;
/// On a library function declaration: the library call's name (e.g. "onednn.convolution").
inline constexpr llvm::StringLiteral kLibraryCallAttr = ::kiln::attrs::kLibraryCall;
inline constexpr llvm::StringLiteral kCudaLaunchesAttr = ::kiln::attrs::kCudaLaunches;
/// The memref types of the scratch bindings a CUDA dispatch takes after its outputs.
inline constexpr llvm::StringLiteral kCudaScratchAttr = ::kiln::attrs::kCudaScratch;
/// Beside it, in a program with a dimension given without an upper bound: per scratch buffer,
/// its dimensions as an affine map of the run's sizes (symbol k: entry k of the dispatch's
/// binding dimensions), or a unit attribute for one of static shape. Program formation sizes
/// the buffer per run from them (kiln.dims).
inline constexpr llvm::StringLiteral kCudaScratchDimsAttr = ::kiln::attrs::kCudaScratchDims;
/// On an scf.for kiln-lower-linalg-to-loops made for a parallel dimension: its LLVM loop
/// annotation, a `parallelAccesses` group that kiln-attach-access-groups gives the loop's loads
/// and stores (convert-scf-to-cf carries it to the loop's back edge).
inline constexpr llvm::StringLiteral kParallelLoopAttr = "llvm.loop_annotation";
/// The gpu.module holding every generated CUDA kernel.
inline constexpr llvm::StringLiteral kCudaKernelModule = "kiln_kernels";

/// Returns true for ops of the entry function that only reinterpret their operand's bytes
/// (reshapes and casts of contiguous tensors, and contiguous slices at an aligned offset): they
/// are views, not steps.
bool isViewOp(mlir::Operation *op);

/// Whether `op` may write memory: ops with unknown effects count as writing, allocations and
/// deallocations do not.
bool mayWriteMemory(mlir::Operation *op);

/// `buffer` seen as `type` (identity layout, dynamic dims) with the run's `sizes` (one per
/// dimension of `type`): a memref.reinterpret_cast at offset 0 with row-major strides.
mlir::Value viewWithRunSizes(mlir::OpBuilder &builder, mlir::Location loc, mlir::Value buffer,
                             mlir::MemRefType type, llvm::ArrayRef<mlir::OpFoldResult> sizes);

} // namespace kiln

#endif // KILN_COMPILER_CODEGEN_PASSES_H
