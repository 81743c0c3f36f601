//===- Pipelines.h - Kiln's lowering pipelines -------------------------------===//
//
// The pass pipelines that take a graph program to executable code: the compile pipeline, the
// stages `kiln compile` runs for the CPU or CUDA (buildCompileStage), and a standalone lowering
// for NVIDIA GPUs down to `gpu.binary` ops holding PTX or cubin (from ptxas) per architecture.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_PIPELINES_PIPELINES_H
#define KILN_COMPILER_PIPELINES_PIPELINES_H

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

/// What `kiln compile` compiles for, as pipeline options: `kiln-opt
/// --kiln-compile-pipeline="target=cpu"` runs what the driver runs.
struct CompilePipelineOptions : mlir::PassPipelineOptions<CompilePipelineOptions> {
  Option<std::string> target{*this, "target", llvm::cl::desc("cpu or cuda"),
                             llvm::cl::init("cpu")};
  Option<std::string> entry{*this, "entry",
                            llvm::cl::desc("The model's function, which becomes the program"),
                            llvm::cl::init("main")};
  ListOption<std::string> gpuArchs{*this, "gpu-arch",
                                   llvm::cl::desc("CUDA: the architectures to assemble for")};
  Option<std::string> costModel{
      *this, "cost-model",
      llvm::cl::desc("The fusion cost model's device: cpu, a100, h100, l4 or a JSON description "
                     "file (default: cpu, or the oldest GPU of gpu-arch)"),
      llvm::cl::init("")};
  ListOption<std::string> shapes{*this, "shape",
                                 llvm::cl::desc("NAME=DIMS bindings of dynamic input dimensions")};
  Option<std::string> libdevice{*this, "libdevice",
                                llvm::cl::desc("CUDA's libdevice bitcode for math functions"),
                                llvm::cl::init(KILN_DEFAULT_LIBDEVICE)};
  Option<int64_t> memoryLimit{*this, "memory-limit",
                              llvm::cl::desc("The most bytes the arena may take; values are "
                                             "recomputed to fit (0: no limit)"),
                              llvm::cl::init(0)};
  Option<int64_t> streams{*this, "streams",
                          llvm::cl::desc("The most streams independent steps run on (CPU)"),
                          llvm::cl::init(1)};
  Option<std::string> memoryPlan{
      *this, "memory-plan",
      llvm::cl::desc("A program for a range of shapes: auto, bounds or per-run (kiln-plan-memory)"),
      llvm::cl::init("auto")};
  Option<std::string> precision{*this, "precision",
                                llvm::cl::desc("fp32, tf32, bf16 or fp16 (kiln-assign-precision)"),
                                llvm::cl::init("fp32")};
  Option<bool> keepIoTypes{*this, "keep-io-types",
                           llvm::cl::desc("Inputs and outputs keep their declared types"),
                           llvm::cl::init(false)};
  Option<std::string> convLayout{
      *this, "conv-layout",
      llvm::cl::desc("CUDA convolutions: auto (NHWC in f16/bf16), nchw or nhwc"),
      llvm::cl::init("auto")};
  Option<std::string> attention{
      *this, "attention",
      llvm::cl::desc("fused (attention as one library call where the target takes it) or "
                     "unfused (two products and a softmax)"),
      llvm::cl::init("fused")};
  ListOption<std::string> keepHigh{*this, "keep-high",
                                   llvm::cl::desc("ONNX nodes kept in fp32 whatever their class")};
  ListOption<int64_t> precisionLow{*this, "precision-low",
                                   llvm::cl::desc("Exactly these precision candidates are low")};
  ListOption<std::string> precisionEvidence{
      *this, "precision-evidence",
      llvm::cl::desc("INDEX=TEXT: why the search kept a candidate high")};
  Option<bool> explicitLow{*this, "explicit-low",
                           llvm::cl::desc("precision-low replaces the policy"),
                           llvm::cl::init(false)};
  Option<bool> emulatePrecision{*this, "emulate-precision",
                                llvm::cl::desc("Round through the precision under a mask input"),
                                llvm::cl::init(false)};
  Option<int64_t> devices{*this, "devices",
                          llvm::cl::desc("Devices the model is split over (kiln-partition-tensor)"),
                          llvm::cl::init(1)};
  Option<std::string> partition{*this, "partition",
                                llvm::cl::desc("How the devices share it: tensor, pipeline or batch"),
                                llvm::cl::init("tensor")};
  Option<int64_t> microBatches{*this, "micro-batches",
                               llvm::cl::desc("Pipeline: micro-batches in flight (1: none)"),
                               llvm::cl::init(1)};
  Option<int64_t> deviceRank{*this, "device-rank",
                             llvm::cl::desc("The device whose program is compiled"),
                             llvm::cl::init(0)};
  Option<std::string> stopAfter{*this, "stop-after",
                                llvm::cl::desc("The last stage to run (all when empty)"),
                                llvm::cl::init("")};
};

/// The stages of the compile pipeline for `target` ("cpu" or "cuda"), in order: graph, linalg,
/// kernels, program, the target's code generation stages, memory.
llvm::ArrayRef<llvm::StringRef> compileStages(llvm::StringRef target);

/// The first passes of the graph stage: the inputs' shapes bound (`shapes`, else
/// options.shapes) and propagated, then, for several devices, the partitioning pass of
/// options.partition (tensor, pipeline or batch) keeping options.deviceRank's part.
void addShapeAndPartitionPasses(mlir::OpPassManager &pm, const CompilePipelineOptions &options,
                                llvm::ArrayRef<ShapeBinding> shapes);

/// Adds the passes of one stage of the compile pipeline to `pm` (on builtin.module). The code
/// generation stages run nested on the kernel module `@kernels`.
/// `shapes`, when given, bind the inputs' dimensions instead of the textual `shape` option.
void buildCompileStage(mlir::OpPassManager &pm, llvm::StringRef stage,
                       const CompilePipelineOptions &options,
                       llvm::ArrayRef<ShapeBinding> shapes = {});

/// Every stage (up to `stop-after`): what `kiln compile` runs before writing the artifact.
void buildCompilePipeline(mlir::OpPassManager &pm, const CompilePipelineOptions &options);

/// Registers `kiln-compile-pipeline` and `kiln-cuda-pipeline` for kiln-opt.
void registerPipelines();

} // namespace kiln

#endif // KILN_COMPILER_PIPELINES_PIPELINES_H
