//===- Pipelines.h - Kiln's lowering pipelines -------------------------------===//
//
// The pass pipelines that take a graph program to executable code: the compile pipeline, the
// stages `kiln compile` runs for the CPU or CUDA (buildCompileStage, built from one
// kiln::CompileOptions), and a standalone lowering
// for NVIDIA GPUs down to `gpu.binary` ops holding PTX or cubin (from ptxas) per architecture.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_PIPELINES_PIPELINES_H
#define KILN_COMPILER_PIPELINES_PIPELINES_H

#include "compiler/options/CompileOptions.h"
#include "compiler/transforms/Passes.h"

#include "mlir/Pass/PassManager.h"
#include "mlir/Pass/PassOptions.h"

#include <string>

#ifndef KILN_DEFAULT_LIBDEVICE
#define KILN_DEFAULT_LIBDEVICE ""
#endif

namespace kiln {

/// Graph to linalg, elementwise fusion and bufferization: the front of buildCudaPipeline.
void buildGraphToBuffersPipeline(mlir::OpPassManager &pm);

struct CudaPipelineOptions : mlir::PassPipelineOptions<CudaPipelineOptions> {
  Option<std::string> chip{*this, "chip", llvm::cl::desc("GPU architecture, e.g. sm_90"),
                           llvm::cl::init("sm_80")};
  Option<std::string> features{*this, "features",
                               llvm::cl::desc("PTX ISA features, e.g. +ptx80"),
                               llvm::cl::init("+ptx80")};
  Option<std::string> libdevice{*this, "libdevice",
                                llvm::cl::desc("CUDA's libdevice bitcode, linked into every kernel "
                                               "for math functions"),
                                llvm::cl::init(KILN_DEFAULT_LIBDEVICE)};
  Option<std::string> format{*this, "format",
                             llvm::cl::desc("Kernel format: isa (PTX), bin (cubin via ptxas) or "
                                            "fatbin"),
                             llvm::cl::init("bin")};
};

/// Graph program to host code plus `gpu.binary` kernels for one NVIDIA architecture: loops over
/// the result become a grid of thread blocks, outlined into kernels and compiled through NVVM.
void buildCudaPipeline(mlir::OpPassManager &pm, const CudaPipelineOptions &options);

/// The stages of the compile pipeline for `target`, in order: graph, linalg, kernels, program,
/// the target's code generation stages, memory.
llvm::ArrayRef<llvm::StringRef> compileStages(TargetKind target);

/// The bindings `shapes` (CompileOptions::shapes) make, as kiln-refine-shapes takes them.
std::vector<ShapeBinding> shapeBindingsOf(llvm::ArrayRef<InputShape> shapes);

/// The first passes of the graph stage: the inputs' shapes bound (`shapes`, else
/// options.shapes) and propagated, then, for several devices, the partitioning pass of
/// options.partition (tensor, pipeline or batch) keeping options.deviceRank's part.
void addShapeAndPartitionPasses(mlir::OpPassManager &pm, const CompileOptions &options,
                                llvm::ArrayRef<ShapeBinding> shapes);

/// Adds the passes of one stage of the compile pipeline to `pm` (on builtin.module). The code
/// generation stages run nested on the kernel module `@kernels`. `options.target` is as
/// resolveTarget leaves it; every pass's options are filled from `options` here.
/// `shapes`, when given, bind the inputs' dimensions instead of options.shapes.
void buildCompileStage(mlir::OpPassManager &pm, llvm::StringRef stage,
                       const CompileOptions &options, llvm::ArrayRef<ShapeBinding> shapes = {});

/// Every stage (up to options.stopAfter): what `kiln compile` runs before writing the artifact.
void buildCompilePipeline(mlir::OpPassManager &pm, const CompileOptions &options);

/// Parses `kiln-compile-pipeline`'s textual options ("target=cuda gpu-arch=sm_80,sm_90") into
/// `options` through compileOptionTable's rows of the pipeline scope, and resolves the target.
/// Returns the first error ("precision: 'fp8' is not one of ...") or an empty string.
std::string parseCompilePipelineOptions(llvm::StringRef text, CompileOptions &options);

/// Registers `kiln-compile-pipeline` and `kiln-cuda-pipeline` for kiln-opt.
void registerPipelines();

} // namespace kiln

#endif // KILN_COMPILER_PIPELINES_PIPELINES_H
