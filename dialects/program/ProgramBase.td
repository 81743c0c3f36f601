//===- ProgramBase.td - The Kiln program dialect, its enums and attributes ---===//
//
// The program dialect is the runtime program as typed IR: the steps a device runs (kernel
// dispatches, library calls, copies), the buffers they bind (inputs, outputs, constants, arena
// allocations and views of them) and the compiled kernels. Program passes (memory planning today;
// rematerialization, stream scheduling and partitioning to come) transform it; the artifact writer
// translates it into the .kiln file without deciding anything.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_PROGRAM_PROGRAMBASE_TD
#define KILN_DIALECTS_PROGRAM_PROGRAMBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/EnumAttr.td"

def Program_Dialect : Dialect {
  let name = "program";
  let cppNamespace = "::kiln::program";
  let summary = "The runtime program: steps, buffers and kernels";
  let description = [{
    A `program.program` holds the steps a device runs, in order, and the buffers they bind.
    Buffers are static memrefs: `program.input` and `program.output` are the caller's tensors,
    `program.constant` the artifact's weights, `program.alloc` an intermediate in the device's
    arena (with its `offset` once memory is planned) and `program.view` a reinterpretation of
    another buffer's bytes. Steps read their `ins` and write their `outs`:
    `program.dispatch` launches a generated kernel, `program.library_call` calls a vendor
    library (oneDNN, cuDNN, cuBLASLt) with parameters the verifier checks per entry point, and
    `program.copy` moves bytes.

    The kernels a program dispatches live in the same module: before code generation as the
    dispatch functions of a nested `builtin.module`, afterwards as a `program.executable` that
    lists each kernel and holds the code objects compiled for it.

    Every step carries an optional `stream` (`kiln-assign-streams`, `--streams N`); the
    runtime runs independent steps on their streams, ordered by the events the program records.
  }];
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::kiln::KilnDialect"];
}

def Program_Device : I32EnumAttr<"Device", "the kind of device a program runs on", [
    I32EnumAttrCase<"cpu", 0>,
    I32EnumAttrCase<"cuda", 1>,
  ]> {
  let cppNamespace = "::kiln::program";
}

// The values are artifact.fbs's CodeFormat, checked by static_assert in the writer.
def Program_CodeFormat : I32EnumAttr<"CodeFormat", "the format of a compiled code object", [
    I32EnumAttrCase<"elf", 0>,
    I32EnumAttrCase<"cubin", 1>,
    I32EnumAttrCase<"ptx", 2>,
  ]> {
  let cppNamespace = "::kiln::program";
}

def Program_CudaLaunchAttr : AttrDef<Program_Dialect, "CudaLaunch"> {
  let mnemonic = "cuda_launch";
  let summary = "One CUDA kernel launch of a dispatch";
  let description = [{
    The kernel (its entry symbol in the code objects), the threads per block and the number of
    work items; the grid has `ceil(items / block)` blocks. In a program for a range of shapes a
    kernel whose loops count the run's sizes has `items = 0` and `run_items`: the work items as a
    map of symbols only, symbol k being dimension k of the dispatch's bindings (every dimension of
    every binding in binding order, as the kernel's sizes binding holds them).

    ```mlir
    #program.cuda_launch<"dispatch_3_kernel", block = 256, items = 4096>
    #program.cuda_launch<"dispatch_4_kernel", block = 256, items = 0,
                         run_items = affine_map<()[s0, s1, s2, s3] -> (s0 * 8)>>
    ```
  }];
  let parameters = (ins StringRefParameter<"the kernel's entry symbol">:$kernel,
                        "int64_t":$block, "int64_t":$items,
                        OptionalParameter<"::mlir::AffineMapAttr",
                                          "the work items in the run's sizes">:$run_items);
  let assemblyFormat = "`<` $kernel `,` `block` `=` $block `,` `items` `=` $items "
                       "(`,` `run_items` `=` $run_items^)? `>`";
  let genVerifyDecl = 1;
}

class Program_Op<string mnemonic, list<Trait> traits = []>
    : Op<Program_Dialect, mnemonic, traits>;

#endif // KILN_DIALECTS_PROGRAM_PROGRAMBASE_TD
