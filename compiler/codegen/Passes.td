//===- Passes.td - Kernel-group formation and code generation --------------===//

#ifndef KILN_COMPILER_CODEGEN_PASSES_TD
#define KILN_COMPILER_CODEGEN_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// Kernel groups (fusion IR)
//===----------------------------------------------------------------------===//

def FormDispatchesPass : Pass<"kiln-form-dispatches", "mlir::ModuleOp"> {
  let summary = "Outlines each kernel group of the entry function into a dispatch function";
  let description = [{
    Runs on linalg/tensor IR after elementwise fusion. Every root op of the entry function (a
    linalg op, a pad, a concat, a loop nest, ...) becomes a private function marked
    `kiln.dispatch` and is replaced by a call to it. Cheap producers (`tensor.empty`,
    `linalg.fill` of a constant, scalar and small constants) are cloned into each group that uses
    them; a chain of `tensor.insert_slice` ops into one destination joins its consumer's group.
    Reshapes, casts, large constants and library calls stay in the entry function: they are
    views, constant buffers and library-call steps of the program. Each dispatch gets a
    `kiln.description` naming the model nodes it computes (from the ops' locations).

    ```mlir
    %0 = call @dispatch_0(%arg0, %cst) : (tensor<1x64xf32>, tensor<64xf32>) -> tensor<1x64xf32>
    ```
  }];
  let options = [
    Option<"entryName", "entry", "std::string", /*default=*/"\"main\"",
           "The function whose ops are grouped">,
    Option<"inlineConstantLimit", "inline-constant-limit", "int64_t", /*default=*/"16",
           "Tensor constants with at most this many elements (or splats) are cloned into "
           "kernels; larger ones are passed as constant buffers">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect"];
}

def TileDispatchesPass : Pass<"kiln-tile-dispatches", "mlir::ModuleOp"> {
  let summary = "Puts dispatch functions in destination-passing style and tiles them into workgroups";
  let description = [{
    For each `kiln.dispatch` function: every result becomes a trailing output argument
    (`bufferization.writable = true`) that the result is materialized into, with the root's
    fresh destination (a `tensor.empty`, a reshape of one, or a fill of either) replaced by that
    argument so no copy is needed; inputs are marked `bufferization.writable = false`, so a root
    that updates an input (a scatter) works on a copy. Then the root op (the producer of the
    single result) is tiled along its outer parallel loops with `scf.forall` and its producers
    fused into the tile; kiln-distribute-workgroups turns the tiles into workgroups. Kernels too
    small to split, with several results or a root that cannot be tiled stay whole. Before
    all this, a concatenation in the kernel (one no fusion took in) becomes the generic
    kiln-fold-data-movement writes for one, or, along the last axis, each operand inserted into
    its slice of the result (written into the output argument, one pass); a slice that is a
    result becomes a `linalg.copy` of it, tiled like any root; and a generic's inputs read
    through a wrapping map (a concatenation's generic) are read inside its body instead: tiling
    would slice them to the range between a tile's first and last index.
  }];
  let options = [
    Option<"targetWorkgroups", "target-workgroups", "int64_t", /*default=*/"64",
           "How many workgroups to aim for when splitting a kernel">,
    Option<"minElementsPerWorkgroup", "min-elements-per-workgroup", "int64_t",
           /*default=*/"4096",
           "Kernels whose iteration space is smaller than this are not split">,
    Option<"tile", "tile", "bool", /*default=*/"true",
           "Tile into workgroups (the CPU); CUDA kernels are distributed over threads instead">,
    Option<"rowTiles", "row-tiles", "bool", /*default=*/"false",
           "Without `tile`: split each fused group (a root with kiln.tile_dims), and each lone "
           "reduction of 512 or more contiguous elements per result, into one tile per row "
           "(producers fused in, but for a split reduction's partial values; the loop mapped to "
           "linear block dimensions so a single row stays a loop), for "
           "kiln-outline-cuda-kernels' row kernels">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::gpu::GPUDialect",
    "::mlir::bufferization::BufferizationDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def DistributeWorkgroupsPass : Pass<"kiln-distribute-workgroups", "mlir::ModuleOp"> {
  let summary = "Turns each bufferized dispatch's workgroup loop into its workgroup-id parameter";
  let description = [{
    After bufferization, a `kiln.dispatch` function whose only top-level memory effect is one
    `scf.forall` gets a trailing `index` argument, the workgroup id, and the loop's body runs
    for that one iteration (the id is delinearized over the loop's bounds). A dispatch with
    other top-level writes (a copy the bufferizer inserted, for instance) cannot be split
    safely: its loops run sequentially and its `kiln.workgroup_count` becomes 1.
  }];
  let dependentDialects = ["::mlir::affine::AffineDialect", "::mlir::scf::SCFDialect"];
}

def SplitReductionsPass : Pass<"kiln-split-reductions", "mlir::ModuleOp"> {
  let summary = "Splits reductions to few values over long rows into chunks (CUDA)";
  let description = [{
    Runs on the dispatch functions on tensors, before their row tiles, for CUDA, whose kernels
    spread the points of a reduction's result over the threads. A reduction with fewer than
    `max-results` result points and at least `min-length` elements reduced into each (a sum of a
    whole tensor, the norms of a few long rows) is split by upstream `linalg::splitReduction`:
    a first reduction computes a partial value per chunk of each result's elements (up to 65536
    partial values over all results, 4096 for a scalar result, chunks of at least 256 elements,
    their number dividing the length; chunk c takes the elements c, c + chunks, ..., so
    neighbouring threads read neighbouring elements), a second folds each result's partial
    values (a block per result after kiln-tile-dispatches' row tiles; one thread for a scalar). Several reduced dimensions are first collapsed into one
    where they are contiguous in every operand. The sum's rounding differs from the sequential
    one by what reordering a float sum costs; maxima and minima are unchanged.
  }];
  let options = [
    Option<"maxResults", "max-results", "int64_t", /*default=*/"64",
           "Split only reductions with fewer result points than this">,
    Option<"minLength", "min-length", "int64_t", /*default=*/"8192",
           "Split only reductions of at least this many elements into each result point">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect", "::mlir::tensor::TensorDialect",
                           "::mlir::arith::ArithDialect"];
}

def GenerateCudaAttentionPass : Pass<"kiln-generate-cuda-attention", "mlir::ModuleOp"> {
  let summary = "Turns each f32 kiln.attention call of a CUDA program into a generated kernel";
  let description = [{
    cuDNN's fused attention takes f16 and bf16 only; kiln-select-cuda-library-calls plans f32
    attention as a "kiln.attention" call (the CPU's encoding: q, k, v, [mask] and dst views,
    scale, kv_group, zero_masked_rows; static shapes). This pass replaces each such
    `program.library_call` with a `program.dispatch` of a kernel it writes into the kernel
    module's `gpu.module @kiln_kernels`: flash attention with an online softmax, a block of 32 or
    64 threads per 32 or 64 query rows of one batch index (a row per thread, held in registers),
    the keys and values taken up to 32 rows at a time into shared memory between barriers every
    thread reaches (each thread then scores the tile's keys four at a time and rescales once
    per four), and blocks striding over the (batch index, query tile) pairs. The score
    matrix is never stored; grouped-query attention reads key and value head h / g where the
    repeated heads would be. Calls with the same parameters and binding types share a kernel.
    The dispatch's record is a declaration with `kiln.dispatch` and `kiln.cuda_launches`, as
    kiln-outline-cuda-kernels leaves its own. Runs before the kernels are lowered to NVVM.
  }];
  let dependentDialects = ["mlir::arith::ArithDialect", "mlir::gpu::GPUDialect",
                           "mlir::math::MathDialect", "mlir::memref::MemRefDialect",
                           "mlir::scf::SCFDialect", "mlir::func::FuncDialect"];
}

def OutlineCudaKernelsPass : Pass<"kiln-outline-cuda-kernels", "mlir::ModuleOp"> {
  let summary = "Turns each bufferized dispatch function into grid-stride CUDA kernels";
  let description = [{
    Runs after bufferization and `convert-linalg-to-parallel-loops`. Each top-level op of a
    `kiln.dispatch` function that writes memory is one phase; phases run one after another, so
    each becomes its own `gpu.func` kernel in the module's `gpu.module @kiln_kernels`
    (launched in order on one stream). A phase that is an `scf.parallel` with static bounds is
    flattened over its iteration space: thread `blockIdx.x * blockDim.x + threadIdx.x` strides by
    `gridDim.x * blockDim.x` over the `work_items` points, so the grid may have any size and the
    runtime sizes it for the device it runs on. When the innermost loop's trip count is a
    multiple of the vector width and the body only loads, computes and stores along it
    contiguously, each thread handles neighbouring points with vector loads and stores of
    `vector-bytes` bytes (4 f32 or 8 f16 per access). A reduction along contiguous rows (a
    sequential loop that loads along the row and folds into one accumulator with an associative
    op) reads its row the same way into a vector of partial results, folded by
    `vector.reduction` at the end. A row phase (an `scf.forall` over rows, from
    `kiln-tile-dispatches`) gives each row a warp, or a whole block when its longest loop over
    the row has more than `block-row-length` points: the lanes take the row's points in turn, and
    a reduction's partial values are combined with warp shuffles, then across the block's warps
    through shared memory between two barriers. A phase without parallel loops runs on a single thread. Views, constants and index arithmetic the phases read are cloned
    into every kernel that needs them.

    A temporary buffer the dispatch allocates becomes a trailing argument (a scratch binding,
    listed in `kiln.cuda_scratch`), since kernels cannot allocate: the compiler gives the
    dispatch's call a result for each, so the arena plan holds them. Every kernel takes the
    dispatch's memref arguments, in order, as bare pointers. The
    function's `kiln.cuda_launches` lists its kernels as `[name, block size, work items]`; its
    body is left empty.
  }];
  let options = [
    Option<"blockSize", "block-size", "int64_t", /*default=*/"256",
           "Threads per block of the generated kernels">,
    Option<"vectorBytes", "vector-bytes", "int64_t", /*default=*/"16",
           "Bytes each vector access of a vectorizable kernel moves (0: never vectorize)">,
    Option<"blockRowLength", "block-row-length", "int64_t", /*default=*/"1024",
           "Rows of a row kernel longer than this take a block each instead of a warp (0: a warp always)">,
  ];
  let dependentDialects = [
    "::mlir::gpu::GPUDialect",
    "::mlir::scf::SCFDialect",
    "::mlir::vector::VectorDialect",
    "::mlir::affine::AffineDialect",
  ];
}

def BindRunSizesPass : Pass<"kiln-bind-run-sizes", "mlir::ModuleOp"> {
  let summary = "Gives dispatch functions with dynamic bindings the run's sizes";
  let description = [{
    Runs on the kernels module before the LLVM lowering (CPU). A program compiled for a range of
    shapes (`kiln compile --shape-range`) has kernels whose bindings have dynamic dimensions, which
    the bare-pointer calling convention cannot pass. Such a function takes one more binding before
    the workgroup id: `memref<Nxi64>`, every dimension of every binding in binding order, which
    the runtime fills for each run from the artifact's dimension expressions
    (runtime/include/kiln/kernel_abi.h). Each dynamic binding is passed as a bare pointer
    (`memref<1xT>`), which the body sees again with its run's dimensions through
    `memref.reinterpret_cast` (identity layout, row-major strides from the sizes). Functions
    whose bindings are all static are left as they are.

    On CUDA (`workgroup-id=false`) the functions take no workgroup id: the sizes are the last
    binding, a device buffer the runtime uploads with each run's inputs.
  }];
  let options = [
    Option<"workgroupId", "workgroup-id", "bool", /*default=*/"true",
           "Whether the functions take the workgroup id last (the CPU's dispatch ABI); the sizes "
           "go before it, else last">,
  ];
  let dependentDialects = ["::mlir::memref::MemRefDialect", "::mlir::arith::ArithDialect"];
}

def EraseEmptyBindingsPass : Pass<"kiln-erase-empty-bindings", "mlir::ModuleOp"> {
  let summary = "Gives the bindings of dispatch functions that have no elements a plain 1-D type";
  let description = [{
    Runs on the kernels module before the LLVM lowering (CPU) or kernel outlining (CUDA). A binding whose static shape has no
    elements (a zero-sized reduction's input, `tril` of an empty matrix) is never read or
    written, but the bare-pointer calling convention refuses a memref with a zero dimension
    after the first (its strides are not those of a contiguous row-major buffer), which left such
    dispatches unlowered. The argument becomes `memref<0xT>` and its uses read a local
    zero-sized `memref.alloca` of the original type instead, which is equally empty; the binding
    keeps its position, so the runtime's calling convention does not change.
  }];
  let dependentDialects = ["::mlir::memref::MemRefDialect"];
}

def ExportCpuDispatchAbiPass : Pass<"kiln-export-cpu-dispatch-abi", "mlir::ModuleOp"> {
  let summary = "Wraps lowered dispatch functions in Kiln's CPU kernel calling convention";
  let description = [{
    Runs on the LLVM dialect after bare-pointer lowering. For each dispatch function
    `@dispatch_N(ptr, ..., ptr, i64)` it adds an exported
    `@kiln_dispatch_N(ptr %bindings, i64 %workgroup)` that loads the binding addresses and calls
    it (runtime/include/kiln/kernel_abi.h); the dispatch itself becomes internal.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

//===----------------------------------------------------------------------===//
// Lowering and code objects
//===----------------------------------------------------------------------===//

def AttachAccessGroupsPass : Pass<"kiln-attach-access-groups", "mlir::ModuleOp"> {
  let summary = "Puts the loads and stores of each loop annotated parallel in its access group";
  let description = [{
    Runs on the LLVM dialect. A back edge (`llvm.br`) carrying the discardable
    `llvm.loop_annotation` kiln-lower-linalg-to-loops put on an `scf.for` gets it as its own loop
    annotation, and every memory operation of that loop (the header and each block that reaches
    the back edge without passing it) joins the annotation's `parallelAccesses` groups, so that
    LLVM reads the loop as parallel (`llvm.loop.parallel_accesses`) and the vectorizer needs no
    run-time alias check.
  }];
  let dependentDialects = ["::mlir::LLVM::LLVMDialect"];
}

def LowerLinalgToLoopsPass : Pass<"kiln-lower-linalg-to-loops", "mlir::ModuleOp"> {
  let summary = "Lowers linalg ops to scf.for loops, marking the innermost parallel ones";
  let description = [{
    Upstream's `convert-linalg-to-loops` (one `scf.for` per dimension, the index arithmetic
    folded), run on bufferized ops. When an op's innermost dimension is parallel and indexes
    every output, its loop gets an LLVM loop annotation with an access group of its own
    (`parallelAccesses`): iterations of it touch disjoint output elements, inputs are only read,
    and an input that shares an output's buffer (an in-place kernel) is read at the element being
    written. Without the annotation the LLVM vectorizer checks the pointers' overlap at run time,
    and an in-place kernel fails the check and runs scalar code. kiln-attach-access-groups puts
    the loop's accesses in the group after the lowering to the LLVM dialect.
  }];
  let dependentDialects = ["::mlir::scf::SCFDialect", "::mlir::memref::MemRefDialect",
                           "::mlir::affine::AffineDialect", "::mlir::LLVM::LLVMDialect"];
}

def ApproximateMathPass : Pass<"kiln-approximate-math", "mlir::ModuleOp"> {
  let summary = "Replaces f32 transcendental math with MLIR's polynomial approximations";
  let description = [{
    exp, log, tanh, erf and the others on f32 become plain arithmetic the LLVM vectorizer turns
    into vector code, where the libm calls they would otherwise become keep every loop scalar. The
    approximations stay within a few ulp of libm.
  }];
}

def ExpandFloat8ConversionsPass : Pass<"kiln-expand-float8-conversions", "mlir::ModuleOp"> {
  let summary = "Rewrites conversions to and from 8-bit floats as integer arithmetic on their bits";
  let description = [{
    LLVM has no 8-bit float types and MLIR's arith-to-LLVM lowering leaves `arith.extf` from and
    `arith.truncf` to f8E4M3FN, f8E5M2, f8E4M3FNUZ, f8E5M2FNUZ, f8E4M3 and f8E3M4 unconverted.
    This pass decodes and encodes their bits with i32 arithmetic, the format's parameters (bias,
    mantissa width, largest finite code, infinity and NaN codes, signed zero) read from LLVM's
    APFloat semantics: extension is exact; truncation from f32 rounds to nearest even, with
    APFloat's overflow rule (infinity where the format has one, NaN otherwise) and NaN kept NaN.
    Conversions through other float types go through f32, which holds every value exactly.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def ReassociateReductionsPass : Pass<"kiln-reassociate-reductions", "mlir::ModuleOp"> {
  let summary = "Marks the float arithmetic of reductions `reassoc`, so that LLVM vectorizes them";
  let description = [{
    In every `linalg.generic` with a reduction loop, the float arithmetic of the body (the adds,
    maxima and minima that combine into the result, and what feeds them) gets the fast-math flag
    `reassoc`. The LLVM loop vectorizer then keeps a partial result per vector lane instead of
    running the chain one element at a time (the CPU's softmax, layer norm, sums and means).
    Sums may round differently from the sequential order; maxima and minima do not change. Only
    f32 and f64 arithmetic is marked: an f16 or bf16 sum keeps its order.
  }];
  let dependentDialects = ["::mlir::arith::ArithDialect"];
}

def EmitCpuExecutablePass : Pass<"kiln-emit-cpu-executable", "mlir::ModuleOp"> {
  let summary = "Compiles the lowered @kernels module into a shared object in a program.executable";
  let description = [{
    Runs on the top module once `@kernels` is in the LLVM dialect with its `kiln_<dispatch>`
    entry points. The kernels are compiled at -O3 for the host CPU and linked into an ELF shared
    object; `@kernels` becomes a `program.executable` with a `program.kernel` per dispatch (its
    symbol and workgroup count) and the object as its `program.binary`. `cpu` and `features`
    name another CPU (the compile pipeline passes its target's, kiln::Target).
  }];
  let options = [
    Option<"cpu", "cpu", "std::string", "\"\"",
           "The LLVM CPU to compile for (empty: the host's, with its features)">,
    ListOption<"features", "features", "std::string",
               "The CPU's features, each +NAME or -NAME (with cpu)">
  ];
  let dependentDialects = ["kiln::program::ProgramDialect"];
}

def EmitCudaExecutablePass : Pass<"kiln-emit-cuda-executable", "mlir::ModuleOp"> {
  let summary = "Assembles the CUDA kernels of @kernels into cubins and PTX in a program.executable";
  let description = [{
    Runs on the top module once `@kernels` holds the host dispatch functions (with their
    `kiln.cuda_launches` and `kiln.cuda_scratch`) and the `gpu.module` of NVVM kernels. Each
    architecture gets a cubin (ptxas), the oldest one's PTX is kept as the fallback, libdevice is
    linked into each. `@kernels` becomes a `program.executable` with a `program.kernel` per
    dispatch (its launches and scratch buffers) and a `program.binary` per code object; each
    dispatch's scratch buffers become allocations bound after its outputs. The pseudo-architecture
    `cuda-sim` adds the simulated CUDA device's code object: the same kernels retargeted to the
    host (CudaSimObject.h), an ELF shared object.
  }];
  let options = [
    ListOption<"gpuArchs", "gpu-archs", "std::string",
               "The GPU architectures to assemble cubins for (sm_80, ...)">,
    Option<"libdevice", "libdevice", "std::string", "\"\"",
           "CUDA's libdevice bitcode, linked into every kernel for math functions">,
  ];
  let dependentDialects = ["kiln::program::ProgramDialect"];
}

def PrintCudaSimIRPass : Pass<"kiln-print-cuda-sim-ir", "mlir::gpu::GPUModuleOp"> {
  let summary = "Prints the LLVM IR of NVVM kernels retargeted to the simulated CUDA device";
  let description = [{
    What `--gpu-arch cuda-sim` compiles into the simulator's code object (CudaSimObject.h),
    printed to standard output before optimization: GPU instructions as calls through the
    `kiln_sim_runtime` table, checked memory accesses, the exported `void K(void**)` entries and
    their `kiln_sim_info_K`. For tests and for reading what the simulator runs.
  }];
  let options = [
    Option<"libdevice", "libdevice", "std::string", "\"\"",
           "CUDA's libdevice bitcode, linked when the kernels call its functions">,
  ];
}

def LowerMemRefCopiesPass : Pass<"kiln-lower-memref-copies", "mlir::ModuleOp"> {
  let summary = "Rewrites memref.copy as a linalg copy";
  let description = [{
    So that it lowers to loops instead of a call into MLIR's runner library, which kernels do not
    link.
  }];
  let dependentDialects = ["mlir::linalg::LinalgDialect"];
}

#endif // KILN_COMPILER_CODEGEN_PASSES_TD
