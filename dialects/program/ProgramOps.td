//===- ProgramOps.td - The ops of the Kiln program dialect ------------------===//

#ifndef KILN_DIALECTS_PROGRAM_PROGRAMOPS_TD
#define KILN_DIALECTS_PROGRAM_PROGRAMOPS_TD

include "dialects/program/ProgramBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// The step interface
//===----------------------------------------------------------------------===//

def Program_StepOpInterface : OpInterface<"StepOpInterface"> {
  let cppNamespace = "::kiln::program";
  let description = [{
    A step of the program: it reads the buffers of `getStepInputs()` and writes those of
    `getStepOutputs()`, and runs on stream `getStreamIndex()` (0 unless set).
  }];
  let methods = [
    InterfaceMethod<"The buffers the step reads.", "::mlir::OperandRange", "getStepInputs">,
    InterfaceMethod<"The buffers the step writes.", "::mlir::OperandRange", "getStepOutputs">,
    InterfaceMethod<"The stream the step runs on.", "int64_t", "getStreamIndex", (ins), [{}], [{
      auto stream = $_op->template getAttrOfType<::mlir::IntegerAttr>("stream");
      return stream ? stream.getInt() : 0;
    }]>,
    InterfaceMethod<[{
      The (input, output) pairs, as positions among the step's inputs and outputs, whose buffers
      may share bytes (`in_place`); empty when none.
    }], "::llvm::ArrayRef<int64_t>", "getInPlacePairs", (ins), [{}], [{
      auto pairs = $_op->template getAttrOfType<::mlir::DenseI64ArrayAttr>("in_place");
      return pairs ? pairs.asArrayRef() : ::llvm::ArrayRef<int64_t>();
    }]>,
  ];
}

def Program_Buffer : MemRefOf<[AnyType]>;

//===----------------------------------------------------------------------===//
// The program
//===----------------------------------------------------------------------===//

def Program_ProgramOp : Program_Op<"program", [
    Symbol, IsolatedFromAbove, SingleBlock, NoTerminator]> {
  let summary = "The steps a device runs and the buffers they bind";
  let description = [{
    One program for one device. Its body lists buffers and steps; steps run in the order they are
    written. The inputs and outputs are numbered from 0 without gaps. Once memory is planned the
    program records the arena's size, the sum of its buffers (`naive_size`), the largest total of
    buffers live at one step (`peak_live_size`, a lower bound for any arena) and the alignment of
    every offset. `modeled_kernel_bytes` is what the fusion planner's cost model says the
    generated kernels read and write in one run. Compiled under a memory limit
    (`kiln-rematerialize`), it records `memory_limit` and the arena the program would take
    without it (`unlimited_arena_size`); steps carrying the `recomputed` attribute repeat an
    earlier step so that its result need not stay live. With steps spread over streams
    (`kiln-assign-streams`) it records `stream_count` and the arena one stream would take
    (`serial_arena_size`).

    ```mlir
    program.program @main device(cpu) {
      %x = program.input 0 "x" : memref<4xf32>
      %y = program.output 0 "y" : memref<4xf32>
      program.dispatch @kernels::@dispatch_0 ins(%x : memref<4xf32>) outs(%y : memref<4xf32>)
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, Program_Device:$device,
                       OptionalAttr<I64Attr>:$arena_size, OptionalAttr<I64Attr>:$naive_size,
                       OptionalAttr<I64Attr>:$peak_live_size, OptionalAttr<I64Attr>:$alignment,
                       OptionalAttr<I64Attr>:$modeled_kernel_bytes,
                       OptionalAttr<I64Attr>:$memory_limit,
                       OptionalAttr<I64Attr>:$unlimited_arena_size,
                       OptionalAttr<I64Attr>:$stream_count,
                       OptionalAttr<I64Attr>:$serial_arena_size);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name `device` `(` $device `)` attr-dict-with-keyword $body";
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::llvm::StringRef":$name, "::kiln::program::Device":$device)>];
  let extraClassDeclaration = [{
    /// Whether the memory plan has been made (every alloc has an offset).
    bool isPlanned() { return getArenaSize().has_value(); }
  }];
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

class Program_SignatureOp<string mnemonic, string role> : Program_Op<mnemonic, [
    Pure, HasParent<"ProgramOp">]> {
  let summary = "The caller's " # role # " tensor number `index`";
  let description = [{
    The caller's }] # role # [{ `index`, named `name` in the artifact's signature. `declared_type`
    keeps the element type the model declared where the lowering made it signless (an unsigned
    integer); `dim_symbols` names the dynamic dimensions the shape was bound from. An output with
    `check` is not the caller's: it holds booleans that must all be true after a run, or the run
    fails with `check` as its message (a shape operand known only at run time that disagrees with
    the shape the model declared). Check outputs come after every other output.

    ```mlir
    %0 = program.}] # mnemonic # [{ 0 "image" : memref<1x3x224x224xf32>
    ```
  }];
  let arguments = (ins I64Attr:$index, StrAttr:$name, OptionalAttr<TypeAttr>:$declared_type,
                       OptionalAttr<StrArrayAttr>:$dim_symbols, OptionalAttr<StrAttr>:$check);
  let results = (outs Program_Buffer:$result);
  let assemblyFormat = "$index $name attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Program_InputOp : Program_SignatureOp<"input", "input">;
def Program_OutputOp : Program_SignatureOp<"output", "output">;

def Program_ConstantOp : Program_Op<"constant", [Pure, HasParent<"ProgramOp">]> {
  let summary = "A constant buffer stored in the artifact";
  let description = [{
    ```mlir
    %w = program.constant dense<[1.0, 2.0]> : tensor<2xf32> -> memref<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Program_Buffer:$result);
  let assemblyFormat = "$value attr-dict `->` type($result)";
  let hasVerifier = 1;
}

def Program_AllocOp : Program_Op<"alloc", [HasParent<"ProgramOp">]> {
  let summary = "An intermediate buffer in the device's arena";
  let description = [{
    An intermediate buffer; its bytes live in the arena at `offset` once memory is planned.
    Buffers whose live ranges overlap never share bytes (`kiln-verify-memory-plan`).

    ```mlir
    %t = program.alloc {offset = 128} : memref<4x8xf32>
    ```
  }];
  let arguments = (ins OptionalAttr<I64Attr>:$offset);
  let results = (outs Program_Buffer:$result);
  let assemblyFormat = "attr-dict `:` type($result)";
  let hasVerifier = 1;
}

def Program_ViewOp : Program_Op<"view", [Pure]> {
  let summary = "Another buffer's bytes seen with another shape";
  let description = [{
    A reshape without moving data: the result reads and writes the source's bytes, so the two
    have the same byte size. With `byte_offset`, the result is the part of the source's bytes
    that starts there (a contiguous slice, such as one of the parts a split makes): it must fit
    inside the source.

    ```mlir
    %v = program.view %t : memref<4x8xf32> to memref<32xf32>
    %second = program.view %t {byte_offset = 64 : i64} : memref<4x8xf32> to memref<2x8xf32>
    ```
  }];
  let arguments = (ins Program_Buffer:$source, OptionalAttr<I64Attr>:$byte_offset);
  let results = (outs Program_Buffer:$result);
  let assemblyFormat = "$source attr-dict `:` type($source) `to` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Steps
//===----------------------------------------------------------------------===//

def Program_DispatchOp : Program_Op<"dispatch", [
    HasParent<"ProgramOp">, AttrSizedOperandSegments, DeclareOpInterfaceMethods<SymbolUserOpInterface>,
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    Program_StepOpInterface]> {
  let summary = "Runs a generated kernel over its bindings";
  let description = [{
    Launches the kernel `kernel` names (a dispatch function of the nested kernel module before
    code generation, a `program.kernel` of a `program.executable` after it) with its `ins` and
    `outs` as bindings, in that order. `in_place` lists pairs (input, output) whose bindings may
    share bytes: the kernel reads each element of the input only to write the same element of the
    output (an elementwise kernel), so the memory planner may place the output over the input when
    this step is the input's last use.

    ```mlir
    program.dispatch @kernels::@dispatch_0 ins(%x, %b : memref<4x8xf32>, memref<8xf32>)
        outs(%y : memref<4x8xf32>) {description = "linalg.generic (bias_add, relu)"}
    ```
  }];
  let arguments = (ins SymbolRefAttr:$kernel, Variadic<Program_Buffer>:$inputs,
                       Variadic<Program_Buffer>:$outputs, OptionalAttr<StrAttr>:$description,
                       OptionalAttr<DenseI64ArrayAttr>:$in_place, OptionalAttr<I64Attr>:$stream);
  let assemblyFormat = [{
    $kernel (`ins` `(` $inputs^ `:` type($inputs) `)`)?
    (`outs` `(` $outputs^ `:` type($outputs) `)`)? attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::OperandRange getStepInputs() { return getInputs(); }
    ::mlir::OperandRange getStepOutputs() { return getOutputs(); }
  }];
}

def Program_LibraryCallOp : Program_Op<"library_call", [
    HasParent<"ProgramOp">, AttrSizedOperandSegments, DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    Program_StepOpInterface]> {
  let summary = "Calls a vendor library's entry point";
  let description = [{
    Calls `callee` (`onednn.convolution`, `onednn.matmul`, `cudnn.convolution`,
    `cublaslt.matmul`) with `ins` and `outs` as its tensors and `params` as its parameters. The
    verifier knows each entry point: the number of tensors it takes, their element types, and
    each parameter's name, kind (integers, floats, strings) and count; an unknown entry point or
    parameter is an error, never silently passed on. `in_place` lists (input, output) pairs
    whose buffers may share bytes, as a dispatch's: the call reads all of the input before it
    writes any of the output (the addend a convolution's sum post-op accumulates into), so the
    memory planner may place the output over the input at the input's last use.

    ```mlir
    program.library_call "onednn.convolution" ins(%x, %w : memref<1x3x8x8xf32>, memref<4x3x3x3xf32>)
        outs(%y : memref<1x4x6x6xf32>) params({strides = array<i64: 1, 1>, groups = 1 : i64})
    ```
  }];
  let arguments = (ins StrAttr:$callee, Variadic<Program_Buffer>:$inputs,
                       Variadic<Program_Buffer>:$outputs, DictionaryAttr:$params,
                       OptionalAttr<StrAttr>:$description,
                       OptionalAttr<DenseI64ArrayAttr>:$in_place, OptionalAttr<I64Attr>:$stream);
  let assemblyFormat = [{
    $callee (`ins` `(` $inputs^ `:` type($inputs) `)`)?
    (`outs` `(` $outputs^ `:` type($outputs) `)`)? `params` `(` $params `)` attr-dict
  }];
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::OperandRange getStepInputs() { return getInputs(); }
    ::mlir::OperandRange getStepOutputs() { return getOutputs(); }
  }];
}

def Program_CopyOp : Program_Op<"copy", [
    HasParent<"ProgramOp">, DeclareOpInterfaceMethods<MemoryEffectsOpInterface>,
    Program_StepOpInterface]> {
  let summary = "Copies one buffer's bytes into another of the same size";
  let description = [{
    ```mlir
    program.copy %t to %y : memref<4xf32> to memref<4xf32> {description = "output 0"}
    ```
  }];
  let arguments = (ins Program_Buffer:$source, Program_Buffer:$target,
                       OptionalAttr<StrAttr>:$description, OptionalAttr<I64Attr>:$stream);
  let assemblyFormat = "$source `to` $target attr-dict `:` type($source) `to` type($target)";
  let hasVerifier = 1;
  let extraClassDeclaration = [{
    ::mlir::OperandRange getStepInputs() { return getOperation()->getOperands().take_front(1); }
    ::mlir::OperandRange getStepOutputs() { return getOperation()->getOperands().slice(1, 1); }
  }];
}

//===----------------------------------------------------------------------===//
// Compiled kernels
//===----------------------------------------------------------------------===//

def Program_ExecutableOp : Program_Op<"executable", [
    Symbol, SymbolTable, IsolatedFromAbove, SingleBlock, NoTerminator]> {
  let summary = "Compiled kernels: what each is, and the code objects that hold them";
  let description = [{
    The kernels of a module after code generation. Each `program.kernel` describes one dispatch's
    kernel; each `program.binary` is a code object (a host shared object, a cubin per GPU
    architecture, PTX) that exports every kernel's symbols, listed alike in each.

    ```mlir
    program.executable @kernels {
      program.kernel @dispatch_0 {symbol = "kiln_dispatch_0", workgroups = 4 : i64}
      program.binary "x86_64-unknown-linux-gnu" elf {symbols = ["kiln_dispatch_0"], data = "..."}
    }
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name);
  let regions = (region SizedRegion<1>:$body);
  let assemblyFormat = "$sym_name attr-dict-with-keyword $body";
  let hasRegionVerifier = 1;
  let skipDefaultBuilders = 1;
  let builders = [OpBuilder<(ins "::llvm::StringRef":$name)>];
}

def Program_KernelOp : Program_Op<"kernel", [Symbol, HasParent<"ExecutableOp">]> {
  let summary = "One dispatch's compiled kernel";
  let description = [{
    For the CPU, `symbol` is the exported function and `workgroups` how many workgroups the
    runtime runs it over. For CUDA, `launches` lists the kernels launched in order; `scratch` the
    buffers they need besides the dispatch's own, bound after its outputs.

    ```mlir
    program.kernel @dispatch_1 {launches = [#program.cuda_launch<"dispatch_1_k0", block = 256, items = 1024>]}
    ```
  }];
  let arguments = (ins SymbolNameAttr:$sym_name, OptionalAttr<StrAttr>:$symbol,
                       OptionalAttr<I64Attr>:$workgroups,
                       OptionalAttr<TypedArrayAttrBase<Program_CudaLaunchAttr, "CUDA launches">>:$launches,
                       OptionalAttr<TypeArrayAttr>:$scratch);
  let assemblyFormat = "$sym_name attr-dict";
  let hasVerifier = 1;
}

def Program_BinaryOp : Program_Op<"binary", [HasParent<"ExecutableOp">]> {
  let summary = "A code object holding every kernel of its executable";
  let description = [{
    ```mlir
    program.binary "sm_80" cubin {symbols = ["dispatch_0_k0"], data = "..."}
    ```
  }];
  let arguments = (ins StrAttr:$target, Program_CodeFormat:$format, StrArrayAttr:$symbols,
                       StrAttr:$data);
  let assemblyFormat = "$target $format attr-dict";
}

#endif // KILN_DIALECTS_PROGRAM_PROGRAMOPS_TD
