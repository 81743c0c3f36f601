//===- Passes.td - Precision assignment -------------------------------------===//

#ifndef KILN_COMPILER_PRECISION_PASSES_TD
#define KILN_COMPILER_PRECISION_PASSES_TD

include "mlir/Pass/PassBase.td"

def AssignPrecisionPass : Pass<"kiln-assign-precision", "mlir::func::FuncOp"> {
  let summary = "Chooses fp32, tf32, bf16 or fp16 per graph op and inserts the casts between";
  let description = [{
    Gives each floating-point graph op of an f32 program a precision, by class:

    - compute (matmul, gemm, conv, conv_transpose): low precision always;
    - follow (elementwise arithmetic, data movement, pooling, max/min reductions, bounded
      activations): low when every non-constant float operand is low;
    - sensitive (exp, log, pow, reciprocal, softmax, normalizations, sums, products, cumulative
      ops, casts): high, unless `low` names them.

    Low ops store their operands and results as `precision` (f16 or bf16) and accumulate in f32
    (the lowering's rule); constants are converted once here; a constant outside the format's
    finite range keeps its op high. Casts are inserted wherever a value crosses between
    precisions. `keep-io-types` keeps the function's argument and result types; otherwise f32
    inputs and outputs become `precision` too.

    `tf32` changes no type: compute ops get `kiln.math = "tf32"`, which CUDA library calls honour
    (cuBLASLt's fast-TF32 compute type).

    `low` (the `auto` search's answer) replaces the policy: exactly the candidates with these
    indices are low. `emulate` (the search's evaluator) changes no type: it appends an input
    `kiln.precision_mask` (one i1 per candidate) and rounds each candidate's float operands and
    results through `precision` where its mask element is set, which gives the values a program
    with those candidates low would compute.

    The decisions are recorded on the function as `kiln.precision_report`, one line per candidate,
    and `kiln.precision_candidates`, their count.
  }];
  let options = [
    Option<"precision", "precision", "::kiln::Precision", "::kiln::Precision::Fp32",
           "fp32, tf32, bf16 or fp16 (compiler/options/CompileOptions.h)",
           "::kiln::EnumValues<::kiln::Precision>()">,
    Option<"keepIoTypes", "keep-io-types", "bool", "false",
           "Inputs and outputs keep their declared types">,
    ListOption<"keepHigh", "keep-high", "std::string",
               "Nodes (their ONNX names) kept in fp32 whatever their class">,
    ListOption<"low", "low", "int64_t",
               "Exactly these candidates are low (the auto search's answer)">,
    ListOption<"evidence", "evidence", "std::string",
               "INDEX=TEXT: why the search kept a candidate high (for the report)">,
    Option<"explicitLow", "explicit-low", "bool", "false",
           "Use `low` instead of the policy (even when it is empty)">,
    Option<"emulate", "emulate", "bool", "false",
           "Round through the precision under a mask input instead of changing types">
  ];
  let dependentDialects = ["::kiln::graph::GraphDialect"];
}

#endif // KILN_COMPILER_PRECISION_PASSES_TD
