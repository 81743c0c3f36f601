//===- Passes.td - Selection of vendor-library calls ------------------------===//

#ifndef KILN_COMPILER_LIBRARYCALLS_PASSES_TD
#define KILN_COMPILER_LIBRARYCALLS_PASSES_TD

include "mlir/Pass/PassBase.td"

//===----------------------------------------------------------------------===//
// CPU library calls
//===----------------------------------------------------------------------===//

def SelectCpuLibraryCallsPass : Pass<"kiln-select-cpu-library-calls", "mlir::ModuleOp"> {
  let summary = "Replaces f32 convolutions and matrix products with oneDNN calls and their epilogues";
  let description = [{
    Runs on graph programs before `kiln-convert-graph-to-linalg`. Each f32 `graph.conv` (1 to 3
    spatial dimensions, any groups, strides, dilations and pads), `graph.matmul` whose operands
    both have rank 2 or more (batch dimensions broadcast) and `graph.gemm` with static shapes
    becomes a `func.call` of a private declaration tagged `kiln.library_call` ("onednn.convolution"
    or "onednn.matmul"); one declaration per call name and signature, named `<name>_<k>`. It
    is a module pass because it adds those declarations to the module.

    Epilogues are fused while the intermediate value has a single use. Each step is proposed to
    the fusion planner (compiler/fusion/Epilogues.h), which takes it where the library takes it
    and its cost model (`device`) says the call beats the kernel the step would otherwise be,
    and records its decisions on the module (`kiln.epilogue_report`: each call's steps, each
    refused step with the reason), which kiln-plan-fusion moves into the fusion report:

    - `graph.max(x, 0)` becomes the post-op `relu`; `graph.max` / `graph.min` with any other
      splat constant become `clip` (a `min` right after a `relu` or a lower `clip` tightens it,
      so ONNX Clip and ReLU6 are one post-op);
    - `graph.add` of a tensor that broadcasts along the channel axis (convolutions, `C x 1 .. 1`)
      or the last axis (matrix products, `N`) becomes the call's bias when it is the first epilogue
      and the call has none (a constant channel bias is reshaped to `C`), otherwise the post-op
      `add` with that tensor as an extra operand;
    - `graph.add` of a tensor of the result's shape (a residual) becomes the post-op `add`;
    - `graph.mul` by a splat constant, or `graph.div` of the result by one (a multiplication by
      its reciprocal, within a rounding of the division), becomes the post-op `linear(c, 0)`,
      or scales the `linear` right before it;
    - GELU, however the exporter wrote it (the elementwise ops reading the result, with splat
      constants, recognized by evaluating them): the exact form becomes oneDNN's `gelu_erf`
      (cuBLASLt has none: it stays a generated kernel), the tanh approximation oneDNN's
      `gelu_tanh` and cuBLASLt's `gelu` epilogue; SiLU (`x * sigmoid(x)`, recognized the same
      way) becomes oneDNN's `swish` (on CUDA it stays a generated kernel).

    A `graph.matmul` reads its operands through the `graph.transpose`, `graph.slice` (positive
    steps), `graph.split` and reshapes before them, and writes its result through the
    single-use transposes and reshapes after it, wherever strides express the data movement
    (always on the CPU): the call binds the value the data lives in and the parameters `a_view`,
    `b_view`, `dst_view` (`[offset, dims..., strides...]`) say how to index it. Attention's Q, K
    and V out of the fused projection, Kᵀ and the merged heads then cost no kernel. A result
    with an `add` post-op keeps its layout.

    Attention, `softmax(scale * Q Kᵀ [+ mask]) V` as exporters write it (a `graph.matmul` of Q
    and Kᵀ, multiplications and divisions by splat constants, at most one addend after them,
    `graph.softmax` along the last axis, a `graph.matmul` of the probabilities and V, each
    intermediate read only by the next, static f32 tensors), becomes one `kiln.attention` call
    (runtime/src/cpu/attention.h) before any product is selected: Kiln's own blocked kernel with
    an online softmax, which never stores the scores. It reads Q, Kᵀ and V through the data
    movement before them where a GEMM can (unit stride along one of the last two dims) and
    writes through the transposes and reshapes after it; every view is given (`q_view`,
    `k_view`, `v_view`, `mask_view`, `dst_view`, with dst's batch dims; stride 0 broadcasts),
    and `scale` is the product of the scalings. Key and value heads repeated for grouped
    queries (`reshape(expand(X))` from Hkv to Hkv * g heads) are read once, before the repeat:
    `kv_group` g, and Kᵀ's and V's last batch dim is Hkv.

    `graph.gemm` maps to `onednn.matmul` with `trans_a` / `trans_b`; `alpha * AB + beta * C` is
    the bias (alpha = beta = 1 and C of shape `N`), or the post-ops `linear(alpha, 0)`, `add C`,
    or, for beta other than 1, `linear(alpha / beta, 0)`, `add C`, `linear(beta, 0)`.

    The call's attributes are the parameters of the runtime's oneDNN kernels
    (runtime/src/cpu/onednn/onednn_kernels.h): `strides`, `dilations`, `pads_begin`, `pads_end`,
    `groups` for convolutions; `trans_a`, `trans_b` for matrix products; `post_ops` (strings) and
    `post_op_args` (the post-ops' float arguments, concatenated) for both. The call's operands
    are the inputs, the optional bias, then the extra operand of each `add` post-op in order.

    Over dynamic shapes (a program for a range of shapes) matrix products of any shape and
    convolutions and pools over a dynamic batch are still calls, which the runtime sets up for
    each shape; other dynamic ops, other element types, 1-D matmul operands or addends that
    oneDNN cannot broadcast stay as graph ops and are code-generated.

    f16 convolutions and products (and bf16 ones without `native-bf16`) become the f32 call
    between casts: storage stays in the low precision, oneDNN computes in f32. With
    `native-bf16` (set by the pipeline when the host has AVX512-BF16), bf16 ones are bf16 calls:
    oneDNN's bf16 kernels, accumulating in f32.
  }];
  let options = [
    Option<"fuseAttention", "fuse-attention", "bool", /*default=*/"true",
           "Attention becomes one kiln.attention call (false: products and a softmax)">,
    Option<"nativeBf16", "native-bf16", "bool", /*default=*/"false",
           "bf16 convolutions and products are bf16 oneDNN calls (the CPU computes bf16)">,
    Option<"device", "device", "std::string", /*default=*/"\"cpu\"",
           "The fusion planner's device model for the epilogue decisions (cpu, or a `kiln "
           "calibrate` description file)">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect", "::kiln::graph::GraphDialect"];
}

//===----------------------------------------------------------------------===//
// CUDA library calls
//===----------------------------------------------------------------------===//

def SelectCudaLibraryCallsPass : Pass<"kiln-select-cuda-library-calls", "mlir::ModuleOp"> {
  let summary = "Replaces convolutions and matrix products with cuDNN and cuBLASLt calls and their epilogues";
  let description = [{
    The CUDA counterpart of `kiln-select-cpu-library-calls`, with the same operands, attributes
    and parameter encoding (runtime/src/cuda/cuda_library_call.h): `graph.conv` becomes
    "cudnn.convolution", `graph.matmul` and `graph.gemm` "cublaslt.matmul". Operands may be f32,
    f16 or bf16 (all of one type).

    Only the epilogues the libraries fuse are taken, in this order: a bias (channel axis for
    convolutions, last axis for matrix products), for matrix products a leading `linear(alpha, 0)`
    (cuBLASLt's alpha: a gemm's alpha, or a scale of the product by a constant; the library adds
    the bias after the scaling, so a scale written after a bias is taken only where the bias is a
    constant, scaled with it, and a bias written after the scale is the call's), at most one `add` of
    a tensor of the result's shape (cuBLASLt's C with beta 1, cuDNN's pointwise add), and a final
    `relu` (or, for matrix products, GELU's tanh approximation). Clips, shifts, SiLU, GELU's erf
    form and broadcast adds stay graph ops and are fused into generated kernels; the fusion
    planner decides each step and reports the refused ones with the reason, as on the CPU.

    Strided operands and results are taken as far back (or forward) along the data movement as
    cuBLASLt's matrix layouts express them: unit stride along one of the last two dimensions and
    the batch dimensions nesting as one strided batch. Where the farthest view is not a layout a
    nearer one is tried (at batch 2 BERT's heads-first transpose stays, and Kᵀ is still read by
    strides from its output).

    Half-precision attention (f16 or bf16 products, optionally with the scores widened to f32
    for the mask and the softmax and the probabilities narrowed back, as kiln-assign-precision
    leaves it) becomes one "cudnn.attention" call (runtime/src/cuda/cudnn_attention.cpp, cuDNN's
    fused flash attention), with the parameters of the CPU's kiln.attention, where cuDNN takes
    its shapes: at most two batch dims, head dims of at most 128 in multiples of 8, unit stride
    along the head dim and 16-byte strides and offsets. An f32 mask is converted to the products'
    type once per mask.

    f32 attention becomes one "kiln.attention" call, the CPU's encoding (any strides, masks
    broadcast over any dims, `kv_group`, `zero_masked_rows`) for heads of at most 128 elements:
    kiln-generate-cuda-attention makes it a generated flash-attention kernel, so the scores are
    never stored there either.

    Over dynamic shapes (a program for a range of shapes) matrix products of any shape and
    convolutions over a dynamic batch are still calls, which the runtime sets up for each shape
    (read as they lie, without views); attention stays two products and a softmax there.
  }];
  let options = [
    Option<"fuseAttention", "fuse-attention", "bool", /*default=*/"true",
           "Attention becomes one call: cudnn.attention in half precision, a generated kernel "
           "(kiln.attention) in f32 (false: products and a softmax)">,
    Option<"device", "device", "std::string", /*default=*/"\"a100\"",
           "The fusion planner's device model for the epilogue decisions (a100, h100, l4)">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect", "::kiln::graph::GraphDialect"];
}

def CudaChannelsLastPass : Pass<"kiln-cuda-channels-last", "mlir::ModuleOp"> {
  let summary = "Gives half-precision cuDNN convolutions channels-last (NHWC) tensors and places the transposes";
  let description = [{
    Runs after `kiln-select-cuda-library-calls`. cuDNN's tensor-core convolutions and fused
    engines are written for NHWC; ONNX models are NCHW. Each 2-D `cudnn.convolution` call with
    f16 or bf16 tensors, or f32 ones with `allow_tf32` (any float type with `all-types`), gets
    `channels_last = true`: it reads x
    and its `add` operand as N x H x W x C, its filter as K x R x S x C/groups (a constant filter
    is reordered at compile time), and writes N x H x W x K. The NCHW values the rest of the
    graph reads are transposes, which are then moved where they cost least:

    - a transpose to channels-first sinks below the elementwise ops that read it (unary ops,
      casts, broadcasting binary ops and selects whose other operands are transposed alike or
      constants, which are reordered), when one transpose it consumes has no other reader;
    - a max or average pool of one pools the channels-last value (`channels_last = true`);
    - a global average or max pool of one becomes a reduction over the spatial dims of the
      channels-last value, then a reshape (no data moves);
    - a transpose to channels-last of a transpose to channels-first is the value itself.

    Between consecutive convolutions, with their ReLU, clip and residual adds, the transposes
    cancel; they remain at the model's input, before ops that need NCHW (reshapes,
    pads, resizes, normalizations, ...) and at its outputs.
  }];
  let options = [
    Option<"allTypes", "all-types", "bool", /*default=*/"false",
           "Also convolutions with f32 tensors">,
  ];
  let dependentDialects = ["::mlir::func::FuncDialect", "::kiln::graph::GraphDialect"];
}

def CpuChannelsLastPass : Pass<"kiln-cpu-channels-last", "mlir::ModuleOp"> {
  let summary = "Gives oneDNN convolutions and pools channels-last (NHWC) tensors and places the transposes";
  let description = [{
    Runs after `kiln-select-cpu-library-calls`; the rewrite of `kiln-cuda-channels-last` for
    `onednn.convolution` calls of every element type and rank (1-D to 3-D convolutions). oneDNN's
    fast convolutions (`brgconv`) run channels-last or channel-blocked; without this pass every
    call converts an NCHW operand in and its result out, and a value that several convolutions
    read (an Inception block's input) is converted by each. Besides what the CUDA pass moves the
    transposes through, an `onednn.pooling` call of a transpose to channels-first pools the
    channels-last value (`channels_last = true`). Between the convolutions of a CNN, with their
    activations, residual adds, pools and concatenations along the channels, the transposes
    cancel; they remain at the model's input, before ops that need NCHW and at its outputs.
  }];
  let dependentDialects = ["::mlir::func::FuncDialect", "::kiln::graph::GraphDialect"];
}

#endif // KILN_COMPILER_LIBRARYCALLS_PASSES_TD
