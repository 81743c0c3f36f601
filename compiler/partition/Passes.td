//===- Passes.td - Partitioning a graph program over several devices --------===//

#ifndef KILN_COMPILER_PARTITION_PASSES_TD
#define KILN_COMPILER_PARTITION_PASSES_TD

include "mlir/Pass/PassBase.td"

def PartitionTensorPass : Pass<"kiln-partition-tensor", "mlir::ModuleOp"> {
  let summary = "Splits transformer blocks over devices the Megatron way; keeps one device's part";
  let description = [{
    Tensor parallelism over `devices` devices, rewriting the entry function into the program of
    device `rank` (every device's program has the same ops; only the weights it holds differ).

    A matmul whose right operand is a 2-D constant and whose left operand is replicated starts a
    *column-parallel region*: its weight's columns are split, and the split is propagated forward
    through elementwise ops (constant operands sliced alike, broadcast operands kept), reshapes,
    transposes, splits, softmax and batched matmuls whose operands are split alike (attention,
    one group of heads per device). Every path out of the region must end in a matmul that
    contracts over the split dimension with a 2-D constant weight: that matmul becomes
    *row-parallel* (its weight's rows split) and is followed by one all-reduce (a call of the
    library entry point `collective`, summing the partial products of every device). Anything
    else that reads a split value (a layer norm over it, a function result, an op the propagation
    does not know) rejects the region and the matmul stays replicated, as do layer norms,
    embeddings and heads outside regions.

    A split is block-cyclic: coordinate `c` of the split dimension belongs to device
    `(c / block) % devices`. The start's block is the largest one for which the region holds
    (the QKV projection of a fused `[hidden, 3 * hidden]` weight gets `hidden / devices`, so that
    each device holds its heads' query, key and value columns).

    The module gets `kiln.partition_report`: one line per region or rejected candidate.
  }];
  let options = [
    Option<"devices", "devices", "int64_t", /*default=*/"2", "How many devices share the model">,
    Option<"rank", "rank", "int64_t", /*default=*/"0", "The device whose program is kept">,
    Option<"collective", "collective", "std::string", /*default=*/"\"gloo.all_reduce\"",
           "The library entry point of the all-reduce (gloo.all_reduce, nccl.all_reduce)">
  ];
  let dependentDialects = ["::kiln::graph::GraphDialect", "::mlir::func::FuncDialect"];
}

def PartitionPipelinePass : Pass<"kiln-partition-pipeline", "mlir::ModuleOp"> {
  let summary = "Cuts the program into stages, one per device; keeps one device's stage";
  let description = [{
    Pipeline parallelism over `devices` devices, rewriting the entry function into the program of
    device `rank`. The ops (in program order) are cut into `devices` stages of about equal cost by
    the cost model (the `cpu` device description); each cut is placed where the fewest bytes cross
    it, within a quarter of a stage's cost of the balanced point.

    Device `rank` keeps its stage's ops and the weights they read. Every value a stage computes
    and another stage (or the function's result) needs is broadcast from its device: the library
    call `gloo.broadcast` on that device, `gloo.receive` on the others, at the place the value is
    defined, so that every device makes the same collective calls in the same order. Every device
    returns the model's outputs and takes its inputs.

    With `micro-batches` M > 1 the batch (dimension 0 of the inputs, as kiln-partition-batch
    finds it) is cut into M micro-batches that flow through the stages one after another, so
    that stage k works on micro-batch m while stage k + 1 works on micro-batch m - 1: the function
    is unrolled into M copies, each typed at B / M, every op of a copy on its original op's
    stage. A value one stage computes and another reads goes there point to point (`gloo.send`
    after its definition, `gloo.recv` before its first reader, both naming the transfer by its
    number in program order); the outputs are joined on the stage that computes them and
    broadcast from there.

    The module gets `kiln.partition_report`: the stages with their ops, modeled time and the bytes
    they send, and `kiln.partition_predicted_ms`.
  }];
  let options = [
    Option<"devices", "devices", "int64_t", /*default=*/"2", "How many devices share the model">,
    Option<"rank", "rank", "int64_t", /*default=*/"0", "The device whose program is kept">,
    Option<"microBatches", "micro-batches", "int64_t", /*default=*/"1",
           "Micro-batches in flight (1: a run passes through the stages in turn)">
  ];
  let dependentDialects = ["::kiln::graph::GraphDialect", "::mlir::func::FuncDialect"];
}

def PartitionBatchPass : Pass<"kiln-partition-batch", "mlir::ModuleOp"> {
  let summary = "Splits the batch over devices; keeps one device's part";
  let description = [{
    Batch (data) parallelism over `devices` devices, rewriting the entry function into the program
    of device `rank`: every device holds all the weights and computes its share of the samples.

    The batch is dimension 0 of the inputs (the size of the first input's; inputs of another size
    there are read whole). It must divide into the devices. Device `rank` takes samples
    `[rank B/N, (rank+1) B/N)` of each input, and the split is propagated forward through every op
    that keeps the samples apart: elementwise ops (a replicated operand that is not broadcast along
    the batch is read in part: a constant sliced, anything else sliced at run time), products
    (the batch in the rows, the columns or a batch dimension, never in the sum), reshapes and
    transposes (the split may become block-cyclic, as in kiln-partition-tensor), slices, splits,
    concatenations, expands, pads and resizes away from the batch, softmax, layer norm, scans,
    top-k and reductions over other dimensions, gathers (the batch in the indices or in the
    table), convolutions, pooling and batch normalization (the batch in dimension 0). An op that
    would mix samples (a reduction over the batch, a product summing over it) fails the pass,
    naming the op.

    Each output the batch reaches is gathered from every device with the library call `gather`
    (all-gather, device-major) and put back in order; every device returns the whole outputs.

    The module gets `kiln.partition_report` and `kiln.partition_predicted_ms`.
  }];
  let options = [
    Option<"devices", "devices", "int64_t", /*default=*/"2", "How many devices share the batch">,
    Option<"rank", "rank", "int64_t", /*default=*/"0", "The device whose program is kept">,
    Option<"gather", "gather", "std::string", /*default=*/"\"gloo.all_gather\"",
           "The library entry point of the all-gather (gloo.all_gather, nccl.all_gather)">
  ];
  let dependentDialects = ["::kiln::graph::GraphDialect", "::mlir::func::FuncDialect"];
}

#endif // KILN_COMPILER_PARTITION_PASSES_TD
