//===- Passes.td - Fusion planning ------------------------------------------===//

#ifndef KILN_COMPILER_FUSION_PASSES_TD
#define KILN_COMPILER_FUSION_PASSES_TD

include "mlir/Pass/PassBase.td"

def PlanFusionPass : Pass<"kiln-plan-fusion", "mlir::ModuleOp"> {
  let summary = "Decides which ops of the entry function share a kernel, by a cost model";
  let description = [{
    Runs on linalg/tensor IR after elementwise fusion, before kiln-form-dispatches. Every
    kernel op (a linalg op the dispatch formation would outline on its own) starts as a group
    of one. Priority fusion, the way XLA's GPU compiler does it: a producer group is merged into
    the group that consumes its result when the modeled time saved (the producer's and the
    consumer's kernel times, unfused, minus the fused kernel's) is positive, the largest saving
    first, until no candidate saves time. Vetoes, each reported with its reason:

    * the producer's result is also read outside kernels (returned, a library call's operand,
      viewed) or by more than one kernel;
    * a consumer reads it through an indexing map that is not a projected permutation, or by
      index from inside its body (a gather);
    * the fused kernel would split into fewer workgroups than `min-workgroups` where the
      consumer alone did not (a reduction to a few values fused into its consumer); a kernel of
      fewer than `min-elements-per-workgroup` iterations is one workgroup either way;
    * the group would exceed `max-group-size` ops.

    A group's workgroups are the loops of its root (the op whose result leaves it) that are
    parallel in every member: the root of each group with more than one op carries them as
    `kiln.tile_dims`, members carry `kiln.fusion_group`, and the module carries the decisions
    (`kiln.fusion_report`) that `kiln compile --report` prints. Kernel times come from the
    target's device description (CostModel.h): a roofline over FLOPs and bytes with overlap,
    plus the launch cost.

    ```mlir
    %sum = linalg.reduce ins(%e : tensor<64x128xf32>) ... {kiln.fusion_group = 3 : i64}
    %div = linalg.generic ... {kiln.fusion_group = 3 : i64, kiln.tile_dims = array<i64: 0>}
    ```
  }];
  let options = [
    Option<"entryName", "entry", "std::string", /*default=*/"\"main\"",
           "The function whose ops are grouped">,
    Option<"device", "device", "std::string", /*default=*/"\"cpu\"",
           "The device description the cost model uses: cpu, a100, h100 or l4">,
    Option<"minWorkgroups", "min-workgroups", "int64_t", /*default=*/"64",
           "A fusion may not leave fewer parallel iterations than this where the consumer had more">,
    Option<"minElementsPerWorkgroup", "min-elements-per-workgroup", "int64_t", /*default=*/"4096",
           "Kernels with fewer iterations run as one workgroup (kiln-tile-dispatches' option of "
           "the same name), so fusing them costs no parallelism">,
    Option<"maxGroupSize", "max-group-size", "int64_t", /*default=*/"64",
           "The most ops one fused kernel may hold">,
  ];
  let dependentDialects = ["::mlir::linalg::LinalgDialect"];
}

#endif // KILN_COMPILER_FUSION_PASSES_TD
