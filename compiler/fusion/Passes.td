//===- Passes.td - Fusion planning ------------------------------------------===//

#ifndef KILN_COMPILER_FUSION_PASSES_TD
#define KILN_COMPILER_FUSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def FuseElementwisePass : Pass<"kiln-fuse-elementwise", "mlir::func::FuncOp"> {
  let summary = "Fuses elementwise producers into their one reader, unless that repeats costly work";
  let description = [{
    Upstream `linalg-fuse-elementwise-ops`, with one veto, as XLA's fusion has it: a producer
    whose body holds costly ops (division, math functions) is not fused into a reader that
    reuses its elements (a loop of the reader does not index the producer's result: a
    squeeze-and-excitation block's multiply reads one sigmoid per channel at every pixel, and
    fused, computed that sigmoid once per pixel) more than `max-repeated-evaluations` times
    beyond the producer's own evaluations, about what a kernel of its own costs. The producer stays a kernel of its own, its
    result read as the reader reads any tensor. Reshape propagation, canonicalization and
    constant folding are upstream's.
  }];
  let options = [
    Option<"maxRepeatedEvaluations", "max-repeated-evaluations", "int64_t", /*default=*/"8192",
           "The most repeated evaluations of a costly producer's body a fusion may add (the "
           "default suits a CPU, where a kernel of its own costs a few microseconds)">,
  ];
  let dependentDialects = [
    "::mlir::affine::AffineDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::math::MathDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def FuseSiblingMatmulsPass : Pass<"kiln-fuse-sibling-matmuls", "mlir::func::FuncOp"> {
  let summary = "Makes the products of one input with several constant weights one product";
  let description = [{
    Horizontal fusion of the graph's matrix products, before library calls are chosen: the
    `graph.matmul`s that multiply the same value by constant 2-D weights of one contraction size
    and element type (a transformer layer's query, key and value projections; a gated MLP's gate
    and up projections) become one product with the weights concatenated along their columns,
    and each former result is a slice of its columns. A bias each of them adds (a constant of
    its columns, the `graph.add` being the product's only reader) is concatenated too and added
    once; a product without one adds zeros. An f32 product whose result (with its bias) is
    only multiplied by a constant scalar (a query scaled by 1/sqrt(d) after its projection) has
    the scalar folded into its columns of the weights and the bias, so no kernel scales its
    slice (exact for a power of two; otherwise within one rounding of the products' terms).
    One library call then does the work of several, at
    a width its kernels use better, and the slices are read through strides
    (`kiln-select-{cpu,cuda}-library-calls`) or through a generated kernel's indexing maps
    (`kiln-fold-data-movement`). A product is fused only where every path from its result leads
    to a product through reshapes, transposes, broadcasts, slices, concatenations and
    elementwise ops (a rotary embedding, a gated MLP's activation and multiply): a slice that
    something else reads (a normalization, a graph output) would be copied out. The weights and
    biases are concatenated at compile time; products whose weights' bytes are not at hand
    (splats) are left alone.
  }];
  let dependentDialects = ["::kiln::graph::GraphDialect"];
}

def FuseSharedProducersPass : Pass<"kiln-fuse-shared-producers", "mlir::func::FuncOp"> {
  let summary = "Computes cheap elementwise producers again inside each of their few readers";
  let description = [{
    Runs after `linalg-fuse-elementwise-ops`, which fuses a producer only into its one reader.
    An elementwise `linalg.generic` read only by generics, with at most `max-ops` ops in its
    body, is fused into each of its readers (and disappears) where the device's cost model says
    the copies pay: the producer's kernel (a launch, its reads and the tensor it writes and the
    readers read back) against what the readers compute and read more when each evaluates the
    producer at every one of its points. Softmax's exp(x - max) goes into its sum and its
    division, layer norm's x - mean into its variance and its normalization, BERT's attention
    mask into each layer's softmax. What then passes between the ops of a normalization is one
    value per row.

    A reader that would then hold more than `max-fused-ops` ops does not take the producer: each
    duplication is cheap, but a chain of them is not (a half-precision BERT's residual stream,
    where every layer norm's normalization is duplicated into the next layer's residual add,
    once made the last layer norm recompute all twelve layers, 8 ms a kernel).

    A producer that reads per-row values (a reduction's result, or elementwise ops on such
    results alone) is computed again only in readers that reduce or read per-row values
    themselves, the readers of the same normalization. A half-precision BERT's layer-norm
    normalization, read by the cast before the next product and by the next residual add, stays
    one kernel with its mean and variance instead of making each of them a kernel of its own.
  }];
  let options = [
    Option<"maxReaders", "max-readers", "int64_t", /*default=*/"0",
           "The most readers a producer is computed again in (0: as many as the cost model "
           "says pay)">,
    Option<"device", "device", "std::string", /*default=*/"\"cpu\"",
           "The device description the cost model uses (kiln-plan-fusion's option)">,
    Option<"maxOps", "max-ops", "int64_t", /*default=*/"8",
           "The most ops the body of a duplicated producer may have">,
    Option<"maxFusedOps", "max-fused-ops", "int64_t", /*default=*/"48",
           "The most ops a reader may hold after taking a duplicated producer">,
    Option<"maxRepeatedEvaluations", "max-repeated-evaluations", "int64_t", /*default=*/"8192",
           "As kiln-fuse-elementwise's: a producer whose costly body a reader would evaluate "
           "again more often than this for the elements it broadcasts is not duplicated">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def FoldDataMovementPass : Pass<"kiln-fold-data-movement", "mlir::func::FuncOp"> {
  let summary = "Reads slices, concatenations and transposes through the indexing maps of their "
                "elementwise readers, so elementwise fusion reaches through them";
  let description = [{
    Runs before `kiln-fuse-elementwise`, which fuses only linalg.generic producers into
    linalg.generic readers. Data movement between elementwise ops otherwise ends a fusion and
    becomes a kernel of its own, as XLA's loop fusion would not have it: rotary position
    embeddings (`x * cos + concat(-x[..., h:], x[..., :h]) * sin`) took a transpose, two slices,
    a negation, a concatenation and the multiply-add, six kernels for each of Q and K.

    - A `linalg.transpose` read only by generics, slices, concatenations or reshapes becomes a
      generic.
    - An expansion of a slice (a fused projection's columns split into heads) becomes a slice of
      the expanded source, where each cut dimension splits into an outer one the cut falls on.
    - A `tensor.extract_slice` with constant offsets and strides that is not a view (not one
      contiguous run at an aligned offset, which costs nothing) and that only generics read is
      read by each of them directly from its source: the reader's indexing map becomes
      `offset + stride * index`, or `index mod size` where that would be a bare index into a
      longer dimension (which would give the loop the source's extent).
    - A `tensor.expand_shape` or `tensor.collapse_shape` that only inserts or drops dimensions
      of one element (an unsqueeze before a broadcast; a reshape through one dimension is first
      made one reshape) and that only generics read is read by each of them from its source,
      where every dropped read is a constant or a loop the reader writes along.
    - A `tensor.concat` of at most `max-concat-operands` operands read only by generics becomes a
      generic that reads operand k at `(i - start_k) mod size_k` along the axis (in bounds at
      every point) and selects by `i`: its operands' producers and its readers then fuse with it.
      Tiling slices every operand to the range between a tile's first and last index, which a
      wrapping read leaves: `kiln-tile-dispatches` first reads such operands inside the body
      (`tensor.extract` at the map's indices), after fusion has taken their producers in, and
      leaves a kernel whole where such an operand alone gives a loop its extent.
  }];
  let options = [
    Option<"maxConcatOperands", "max-concat-operands", "int64_t", /*default=*/"4",
           "The most operands a concatenation written as a generic may have (each point "
           "evaluates every operand and selects one)">,
  ];
  let dependentDialects = [
    "::mlir::arith::ArithDialect",
    "::mlir::linalg::LinalgDialect",
    "::mlir::tensor::TensorDialect",
  ];
}

def GeneralizeReductionsPass : Pass<"kiln-generalize-reductions", "mlir::func::FuncOp"> {
  let summary = "Writes linalg.reduce ops as linalg.generic so elementwise fusion reaches them";
  let description = [{
    Runs before `linalg-fuse-elementwise-ops`, which fuses producers into generic consumers
    only: a reduction written as a generic absorbs the elementwise ops that feed it, so between
    the ops of a softmax or a normalization only one value per row remains to pass.
  }];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

def PlanFusionPass : Pass<"kiln-plan-fusion", "mlir::ModuleOp"> {
  let summary = "Decides which ops of the entry function share a kernel, by a cost model";
  let description = [{
    Runs on linalg/tensor IR after elementwise fusion, before kiln-form-dispatches. Every
    kernel op (a linalg op the dispatch formation would outline on its own) starts as a group
    of one. Priority fusion, the way XLA's GPU compiler does it: a producer group is merged into
    the groups that consume its result, all of them or none, when the modeled time saved (the
    producer's and the consumers' kernel times, unfused, minus the fused kernels') is positive,
    the largest saving first, until no candidate saves time. A producer read by several kernels
    is computed again in each (its ops copied), so the copies' work counts against the bytes
    and launches they save; `duplicate=false` refuses such producers instead. A body's FLOPs
    weigh divisions and roots 4 and other math functions 16. Vetoes, each reported with its
    reason (naming the reader that refused, where there are several):

    * the producer's result is also read outside kernels (returned, a library call's operand,
      viewed);
    * a consumer reads it through an indexing map that is not a projected permutation, or by
      index from inside its body (a gather);
    * the fused kernel would split into fewer workgroups than `min-workgroups` where the
      consumer alone did not (a reduction to a few values fused into its consumer); a kernel of
      fewer than `min-elements-per-workgroup` iterations is one workgroup either way;
    * the group would exceed `max-group-size` ops;
    * with `row-values-only` (CUDA), an op other than the root would pass more than one value
      per row of the group to the others.

    Then multi-output and horizontal fusion (`multi-output`), as XLA runs them after priority
    fusion: two groups whose roots compute every point of the same static loops independently,
    split along the same loops, neither depending on the other's result (through any op), become
    one group whose root is one `linalg.generic` computing both roots' results, where they read
    an input in common (a slice's source counts; bytes both read are read once) or both are
    launch-bound (modeled at most twice the launch; `horizontal=false` turns that part off, as
    a program of several streams does), and the cost model says the kernel of both
    is faster, the largest saving first. The root of both takes the earlier root's place or the
    later's; where neither suits (the earlier result is read before the later one's inputs
    exist) the pair is refused: no op is moved, so collectives and transfers keep their order.

    A group's workgroups are the loops of its root (the op whose result leaves it) that are
    parallel in every member: the root of each group with more than one op carries them as
    `kiln.tile_dims`, members carry `kiln.fusion_group`, and the module carries the decisions
    (`kiln.fusion_report`) that `kiln compile --report` prints. Kernel times come from the
    target's device description (CostModel.h): a roofline over FLOPs and bytes with overlap,
    its compute charged for idle units and partial waves of the group's workgroups, plus the
    launch cost. `device` names a published description or a JSON file (`kiln calibrate`
    measures the host into one).

    ```mlir
    %sum = linalg.reduce ins(%e : tensor<64x128xf32>) ... {kiln.fusion_group = 3 : i64}
    %div = linalg.generic ... {kiln.fusion_group = 3 : i64, kiln.tile_dims = array<i64: 0>}
    ```
  }];
  let options = [
    Option<"entryName", "entry", "std::string", /*default=*/"\"main\"",
           "The function whose ops are grouped">,
    Option<"device", "device", "std::string", /*default=*/"\"cpu\"",
           "The device description the cost model uses: cpu, a100, h100, l4, or the path "
           "of a JSON description (kiln calibrate writes one)">,
    Option<"minWorkgroups", "min-workgroups", "int64_t", /*default=*/"64",
           "A fusion may not leave fewer parallel iterations than this where the consumer had more">,
    Option<"minElementsPerWorkgroup", "min-elements-per-workgroup", "int64_t", /*default=*/"4096",
           "Kernels with fewer iterations run as one workgroup (kiln-tile-dispatches' option of "
           "the same name), so fusing them costs no parallelism">,
    Option<"rowValuesOnly", "row-values-only", "bool", /*default=*/"false",
           "Only one value per row may pass between the ops of a group (the CUDA row kernels, "
           "where a warp computes a row and keeps such values in registers)">,
    Option<"maxGroupSize", "max-group-size", "int64_t", /*default=*/"64",
           "The most ops one fused kernel may hold">,
    Option<"duplicate", "duplicate", "bool", /*default=*/"true",
           "A producer read by several kernels may be computed again in each of them, where "
           "the cost model says the copies pay">,
    Option<"multiOutput", "multi-output", "bool", /*default=*/"true",
           "Kernels over the same loops, neither reading the other's result, become one kernel "
           "with a result for each where they read an input in common or launches dominate "
           "both, when the cost model says it pays">,
    Option<"horizontal", "horizontal", "bool", /*default=*/"true",
           "With multi-output: independent launch-bound kernels reading nothing in common may "
           "share one too (off for a program of several streams, where it would join them)">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

#endif // KILN_COMPILER_FUSION_PASSES_TD
