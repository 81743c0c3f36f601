//===- GraphOps.td - Operations of the Kiln graph dialect -------------------===//
//
// Grouped as: constants; elementwise unary; elementwise binary, comparison and select; casts;
// data movement; reductions; linear algebra; convolution and pooling; normalization.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_GRAPH_GRAPHOPS_TD
#define KILN_DIALECTS_GRAPH_GRAPHOPS_TD

include "dialects/graph/GraphBase.td"
include "dialects/graph/GraphEnums.td"
include "dialects/graph/GraphAttrs.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

def Graph_ConstantOp : Graph_Op<"constant", [ConstantLike]> {
  let summary = "a tensor constant";
  let description = [{
    Produces the tensor held by `value`; the result type is the attribute's type.

    ```mlir
    %w = graph.constant dense<[[1.0, 2.0], [3.0, 4.0]]> : tensor<2x2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Elementwise unary
//===----------------------------------------------------------------------===//

class Graph_UnaryOp<string mnemonic, Type operandType, string math, list<Trait> traits = []>
    : Graph_SameTypeOp<mnemonic, !listconcat([Elementwise], traits)> {
  let summary = "computes " # math # " elementwise";
  let description = [{
    Computes }] # math # [{ of each element; the result has the operand's type.

    ```mlir
    %y = graph.}] # mnemonic # [{ %x : tensor<2x?xf32>
    ```
  }];
  let arguments = (ins operandType:$input);
  let results = (outs operandType:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
}

def Graph_AbsOp : Graph_UnaryOp<"abs", Graph_NumericTensor, "the absolute value"> {
  let hasFolder = 1;
}
def Graph_AtanOp : Graph_UnaryOp<"atan", Graph_FloatTensor, "the arctangent">;
def Graph_CeilOp : Graph_UnaryOp<"ceil", Graph_FloatTensor, "the ceiling">;
def Graph_CosOp : Graph_UnaryOp<"cos", Graph_FloatTensor, "the cosine">;
def Graph_ErfOp : Graph_UnaryOp<"erf", Graph_FloatTensor, "the Gauss error function">;
def Graph_ExpOp : Graph_UnaryOp<"exp", Graph_FloatTensor, "the natural exponential">;
def Graph_FloorOp : Graph_UnaryOp<"floor", Graph_FloatTensor, "the floor">;
def Graph_LogOp : Graph_UnaryOp<"log", Graph_FloatTensor, "the natural logarithm">;
def Graph_NegOp : Graph_UnaryOp<"neg", Graph_NumericTensor, "the negation"> {
  let hasFolder = 1;
}
def Graph_NotOp : Graph_UnaryOp<"not", Graph_IntOrBoolTensor,
                                "the bitwise complement (logical negation for i1)"> {
  let hasFolder = 1;
}
def Graph_ReciprocalOp : Graph_UnaryOp<"reciprocal", Graph_FloatTensor, "the reciprocal (1 / x)">;
def Graph_RoundOp : Graph_UnaryOp<"round", Graph_FloatTensor,
                                  "the nearest integer, halves to even">;
def Graph_RsqrtOp : Graph_UnaryOp<"rsqrt", Graph_FloatTensor, "the reciprocal square root">;
def Graph_SigmoidOp : Graph_UnaryOp<"sigmoid", Graph_FloatTensor,
                                    "the logistic sigmoid 1 / (1 + exp(-x))">;
def Graph_SignOp : Graph_UnaryOp<"sign", Graph_NumericTensor, "the sign (-1, 0 or 1)">;
def Graph_SinOp : Graph_UnaryOp<"sin", Graph_FloatTensor, "the sine">;
def Graph_SqrtOp : Graph_UnaryOp<"sqrt", Graph_FloatTensor, "the square root">;
def Graph_TanhOp : Graph_UnaryOp<"tanh", Graph_FloatTensor, "the hyperbolic tangent">;

class Graph_FloatPredicateOp<string mnemonic, string test>
    : Graph_Op<mnemonic, [Elementwise]> {
  let summary = "tests each element for " # test;
  let description = [{
    Produces `true` where the element is }] # test # [{ and `false` elsewhere.

    ```mlir
    %m = graph.}] # mnemonic # [{ %x : (tensor<2x?xf32>) -> tensor<2x?xi1>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input);
  let results = (outs Graph_BoolTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Graph_IsInfOp : Graph_FloatPredicateOp<"is_inf", "an infinity of either sign">;
def Graph_IsNanOp : Graph_FloatPredicateOp<"is_nan", "NaN">;

//===----------------------------------------------------------------------===//
// Elementwise binary with NumPy broadcasting
//===----------------------------------------------------------------------===//

class Graph_BinaryOp<string mnemonic, Type operandType, string math, list<Trait> traits = []>
    : Graph_Op<mnemonic, !listconcat([SameOperandsAndResultElementType], traits)> {
  let summary = "computes " # math # " elementwise, with broadcasting";
  let description = [{
    Computes }] # math # [{ of the operands after broadcasting them to a common shape by NumPy's
    rules (shapes aligned at the trailing dimension; a dimension of 1 stretches).

    ```mlir
    %z = graph.}] # mnemonic # [{ %x, %y : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins operandType:$lhs, operandType:$rhs);
  let results = (outs operandType:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def Graph_AddOp : Graph_BinaryOp<"add", Graph_NumericTensor, "the sum", [Commutative]> {
  let hasFolder = 1;
}
def Graph_AndOp : Graph_BinaryOp<"and", Graph_IntOrBoolTensor,
                                 "the bitwise and (logical for i1)", [Commutative]>;
def Graph_DivOp : Graph_BinaryOp<"div", Graph_NumericTensor,
                                 "the quotient (truncating for integers)"> {
  let hasFolder = 1;
}
def Graph_MaxOp : Graph_BinaryOp<"max", Graph_NumericTensor, "the maximum", [Commutative]>;
def Graph_MinOp : Graph_BinaryOp<"min", Graph_NumericTensor, "the minimum", [Commutative]>;
def Graph_MulOp : Graph_BinaryOp<"mul", Graph_NumericTensor, "the product", [Commutative]> {
  let hasFolder = 1;
}
def Graph_OrOp : Graph_BinaryOp<"or", Graph_IntOrBoolTensor, "the bitwise or (logical for i1)",
                                [Commutative]>;
def Graph_PowOp : Graph_BinaryOp<"pow", Graph_NumericTensor, "lhs raised to the power rhs">;
def Graph_RemOp : Graph_BinaryOp<"rem", Graph_NumericTensor,
                                 "the remainder, with the sign of the dividend">;
def Graph_SubOp : Graph_BinaryOp<"sub", Graph_NumericTensor, "the difference"> {
  let hasFolder = 1;
}
def Graph_ShiftLeftOp : Graph_BinaryOp<"shift_left", Graph_IntTensor,
    "lhs shifted left by rhs bits (the bits shifted past the top, the sign bit included, are "
    "discarded; a shift by a negative amount or by the bit width or more gives 0)">;
def Graph_ShiftRightOp : Graph_BinaryOp<"shift_right", Graph_IntTensor,
    "lhs shifted right by rhs bits, arithmetic (filling with the sign bit) for signed integers "
    "and logical for unsigned ones (a shift by a negative amount or by the bit width or more "
    "gives what the fill alone gives: -1 for a negative signed lhs, otherwise 0)">;
def Graph_XorOp : Graph_BinaryOp<"xor", Graph_IntOrBoolTensor,
                                 "the bitwise exclusive or (logical for i1)", [Commutative]>;

def Graph_CompareOp : Graph_Op<"compare", [AllElementTypesMatch<["lhs", "rhs"]>]> {
  let summary = "elementwise comparison with broadcasting";
  let description = [{
    Compares the broadcast operands element by element in the given direction and produces a
    boolean tensor. Floating-point comparisons are ordered: any comparison with NaN is false except
    `ne`, which is true.

    ```mlir
    %m = graph.compare lt, %x, %y : (tensor<4x3xf32>, tensor<4x3xf32>) -> tensor<4x3xi1>
    ```
  }];
  let arguments = (ins Graph_ComparisonDirection:$direction, Graph_Tensor:$lhs, Graph_Tensor:$rhs);
  let results = (outs Graph_BoolTensor:$result);
  let assemblyFormat =
      "$direction `,` $lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

def Graph_SelectOp : Graph_Op<"select", [
    AllElementTypesMatch<["on_true", "on_false", "result"]>]> {
  let summary = "elementwise choice between two tensors";
  let description = [{
    Takes each element from `on_true` where `condition` is true and from `on_false` elsewhere; the
    three operands broadcast together (ONNX `Where`).

    ```mlir
    %r = graph.select %c, %a, %b : (tensor<4x1xi1>, tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Graph_BoolTensor:$condition, Graph_Tensor:$on_true, Graph_Tensor:$on_false);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat =
      "$condition `,` $on_true `,` $on_false attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

//===----------------------------------------------------------------------===//
// Casts
//===----------------------------------------------------------------------===//

def Graph_CastOp : Graph_Op<"cast", [Elementwise]> {
  let summary = "elementwise conversion to another element type";
  let description = [{
    Converts each element to the element type `to`: floats round to nearest even, float to integer
    truncates toward zero, any non-zero value becomes `true` when cast to `i1`.

    ```mlir
    %h = graph.cast %x : tensor<2x?xf32> to f16
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, TypeAttrOf<Graph_Element>:$to);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` $to";
  let hasFolder = 1;
}

def Graph_BitcastOp : Graph_Op<"bitcast", [Elementwise]> {
  let summary = "elementwise reinterpretation of the bits as another element type";
  let description = [{
    Each element's bits read as the element type `to`, of the same width: `f32` to `i32`, `ui16`
    to `i16`. `i1`, stored as a byte, reads as the 8-bit integer 0 or 1.

    ```mlir
    %i = graph.bitcast %x : tensor<2x3xf32> to i32
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, TypeAttrOf<Graph_Element>:$to);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `to` $to";
}

//===----------------------------------------------------------------------===//
// Data movement
//===----------------------------------------------------------------------===//

def Graph_ConcatOp : Graph_Op<"concat", [SameOperandsAndResultElementType]> {
  let summary = "concatenation along an axis";
  let description = [{
    Joins the operands along `axis`; all other dimensions must agree.

    ```mlir
    %r = graph.concat %a, %b {axis = 1 : i64} : (tensor<2x3xf32>, tensor<2x5xf32>) -> tensor<2x8xf32>
    ```
  }];
  let arguments = (ins Variadic<Graph_Tensor>:$inputs, I64Attr:$axis);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$inputs attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_ExpandOp : Graph_Op<"expand", []> {
  let summary = "broadcast to a shape";
  let description = [{
    Broadcasts the operand together with `shape` by NumPy's rules (ONNX `Expand`): the result shape
    is the broadcast of the operand's shape and `shape`. An entry `?` takes its size from the next
    of `sizes` (a size of the run, `graph.dim` of another tensor: a class token expanded to the
    batch).

    ```mlir
    %r = graph.expand %x to [4, 1, 3] : tensor<2x1xf32> -> tensor<4x2x3xf32>
    %c = graph.expand %cls to [%b, 1, 1] : tensor<1x1x768xf32> -> tensor<?x1x768xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Variadic<Index>:$sizes, DenseI64ArrayAttr:$shape);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `to` custom<DynamicIndexList>($sizes, $shape) attr-dict `:` "
                       "type($input) `->` type($result)";
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$input,
                   "::llvm::ArrayRef<int64_t>":$shape), [{
      build($_builder, $_state, result, input, ::mlir::ValueRange(), shape);
    }]>
  ];
  let hasFolder = 1;
}

def Graph_FlattenOp : Graph_Op<"flatten", [SameOperandsAndResultElementType]> {
  let summary = "reshape to a matrix at an axis";
  let description = [{
    Collapses dimensions `[0, axis)` into the first result dimension and `[axis, rank)` into the
    second (ONNX `Flatten`); `axis` lies in `[0, rank]`.

    ```mlir
    %r = graph.flatten %x {axis = 1 : i64} : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, I64Attr:$axis);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasCanonicalizer = 1;
}

def Graph_GatherOp : Graph_Op<"gather", [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "gathers slices along an axis by index";
  let description = [{
    Picks entries of `input` along `axis` at `indices` (ONNX `Gather`): the result shape is
    `input.shape[:axis] + indices.shape + input.shape[axis+1:]`. Negative indices count from the end.

    ```mlir
    %r = graph.gather %table, %ids {axis = 0 : i64} : (tensor<1000x64xf32>, tensor<2x8xi64>) -> tensor<2x8x64xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
}

def Graph_PadOp : Graph_Op<"pad", [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "pads or crops each dimension";
  let description = [{
    Adds `pad_low[d]` elements before and `pad_high[d]` after dimension `d` (negative amounts crop).
    In `constant` mode new elements take the rank-0 `value` (zero when absent); `reflect` mirrors the
    interior without repeating the edge; `edge` repeats the edge element.

    ```mlir
    %r = graph.pad reflect %x low [0, 1] high [0, 2] : (tensor<2x3xf32>) -> tensor<2x6xf32>
    %s = graph.pad constant %x, %zero low [1, 0] high [1, 0] : (tensor<2x3xf32>, tensor<f32>) -> tensor<4x3xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Optional<Graph_Tensor>:$value,
                       DenseI64ArrayAttr:$pad_low, DenseI64ArrayAttr:$pad_high,
                       DefaultValuedAttr<Graph_PadMode, "::kiln::graph::PadMode::constant">:$mode);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$mode $input (`,` $value^)? `low` $pad_low `high` $pad_high attr-dict `:` "
                       "functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_ReshapeOp : Graph_Op<"reshape", []> {
  let summary = "reinterprets the elements with another shape";
  let description = [{
    Gives the elements, in row-major order, the shape `shape`. At most one entry may be `-1`; that
    dimension is whatever makes the element counts agree. An entry `?` takes its size from the next
    of `sizes` (index values of the run, `graph.dim` of another tensor in exported shape code), so
    that a reshape may keep several dynamic dimensions (`[batch, sequence, 12, 64]`).

    ```mlir
    %r = graph.reshape %x to [-1, 12] : tensor<?x3x4xf32> -> tensor<?x12xf32>
    %h = graph.reshape %y to [%b, %s, 12, 64] : tensor<?x?x768xf32> -> tensor<?x?x12x64xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Variadic<Index>:$sizes, DenseI64ArrayAttr:$shape);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `to` custom<DynamicIndexList>($sizes, $shape) attr-dict `:` "
                       "type($input) `->` type($result)";
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$input,
                   "::mlir::DenseI64ArrayAttr":$shape), [{
      build($_builder, $_state, result, input, ::mlir::ValueRange(), shape);
    }]>,
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$input,
                   "::llvm::ArrayRef<int64_t>":$shape), [{
      build($_builder, $_state, result, input, ::mlir::ValueRange(), shape);
    }]>,
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::DenseI64ArrayAttr":$shape), [{
      build($_builder, $_state, input, ::mlir::ValueRange(), shape);
    }]>
  ];
  let hasFolder = 1;
}

def Graph_SliceOp : Graph_Op<"slice", []> {
  let summary = "a strided slice";
  let description = [{
    Takes, in each dimension `d`, the indices `starts[d] + k * strides[d]` that lie before
    `limits[d]` (after it for a negative stride). For a positive stride
    `0 <= starts[d] <= limits[d] <= dim`; for a negative one `-1 <= limits[d] <= starts[d] < dim`.
    Frontends normalize negative and out-of-range indices before creating the op. A limit that is
    `?` (ShapedType::kDynamic) is the next of `dynamic_limits`, an index value of the run (a
    sequence length, `graph.dim` of another tensor) that must lie in `[starts[d], dim]`; its
    stride must be positive.

    ```mlir
    %r = graph.slice %x {starts = array<i64: 0, 1>, limits = array<i64: 4, 7>, strides = array<i64: 2, 3>} : (tensor<4x8xf32>) -> tensor<2x2xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Variadic<Index>:$dynamic_limits,
                       DenseI64ArrayAttr:$starts, DenseI64ArrayAttr:$limits,
                       DenseI64ArrayAttr:$strides);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input (`limits` `(` $dynamic_limits^ `)`)? attr-dict `:` "
                       "functional-type(operands, results)";
  let builders = [
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$input,
                   "::mlir::DenseI64ArrayAttr":$starts, "::mlir::DenseI64ArrayAttr":$limits,
                   "::mlir::DenseI64ArrayAttr":$strides), [{
      build($_builder, $_state, result, input, ::mlir::ValueRange(), starts, limits, strides);
    }]>,
    OpBuilder<(ins "::mlir::Value":$input, "::mlir::DenseI64ArrayAttr":$starts,
                   "::mlir::DenseI64ArrayAttr":$limits, "::mlir::DenseI64ArrayAttr":$strides), [{
      build($_builder, $_state, input, ::mlir::ValueRange(), starts, limits, strides);
    }]>,
    OpBuilder<(ins "::mlir::Type":$result, "::mlir::Value":$input,
                   "::llvm::ArrayRef<int64_t>":$starts, "::llvm::ArrayRef<int64_t>":$limits,
                   "::llvm::ArrayRef<int64_t>":$strides), [{
      build($_builder, $_state, result, input, ::mlir::ValueRange(), starts, limits, strides);
    }]>
  ];
  let hasFolder = 1;
}

def Graph_DimOp : Graph_Op<"dim", []> {
  let summary = "one dimension of a tensor, as an index value";
  let description = [{
    The size of dimension `dim` of `input`: the shape arithmetic that exporters write on a dynamic
    dimension (Shape, Gather) ends here, and ops whose sizes come from it (`graph.reshape`,
    `graph.slice`, `graph.iota`) take it as an operand. Folds to a constant for a static
    dimension.

    ```mlir
    %s = graph.dim %tokens[1] : tensor<?x?xi64>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, I64Attr:$dim);
  // Not `Index`, whose buildable type would make ODS infer the result instead of the adaptor.
  let results = (outs AnyTypeOf<[Index]>:$result);
  let assemblyFormat = "$input `[` $dim `]` attr-dict `:` type($input)";
  let hasFolder = 1;
}

def Graph_ShapeOfOp : Graph_Op<"shape_of", []> {
  let summary = "the dimensions of a tensor, as an i64 vector of the run";
  let description = [{
    The shape of `input` as a tensor value, for exported shape code that computes with it at run
    time (index arithmetic over a dynamic batch and sequence). Folds to a constant for a static
    shape.

    ```mlir
    %s = graph.shape_of %mask : tensor<?x?xi1> -> tensor<2xi64>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def Graph_IotaOp : Graph_Op<"iota", []> {
  let summary = "0, 1, ..., n - 1";
  let description = [{
    A vector holding its own positions, `n` of them, of the numeric element type `element_type`
    (ONNX Range over a dynamic length becomes `start + iota * delta`).

    ```mlir
    %p = graph.iota %n : i64 -> tensor<?xi64>
    ```
  }];
  let arguments = (ins Index:$length, TypeAttr:$element_type);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = "$length `:` $element_type attr-dict `->` type($result)";
}

def Graph_SplitOp : Graph_Op<"split", []> {
  let summary = "splits a tensor into pieces along an axis";
  let description = [{
    Cuts the operand along `axis` into consecutive pieces of the given `sizes`, which add up to that
    dimension.

    ```mlir
    %a, %b = graph.split %x {axis = 1 : i64, sizes = array<i64: 2, 6>} : (tensor<4x8xf32>) -> (tensor<4x2xf32>, tensor<4x6xf32>)
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, I64Attr:$axis, DenseI64ArrayAttr:$sizes);
  let results = (outs Variadic<Graph_Tensor>:$results);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Graph_SqueezeOp : Graph_Op<"squeeze", [SameOperandsAndResultElementType]> {
  let summary = "removes dimensions of size one";
  let description = [{
    Removes the dimensions listed in `axes` (sorted, unique, each of size 1).

    ```mlir
    %r = graph.squeeze %x {axes = array<i64: 0, 2>} : (tensor<1x3x1xf32>) -> tensor<3xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasCanonicalizer = 1;
}

def Graph_TransposeOp : Graph_Op<"transpose", [SameOperandsAndResultElementType]> {
  let summary = "permutes the dimensions";
  let description = [{
    Result dimension `i` is operand dimension `permutation[i]`.

    ```mlir
    %r = graph.transpose %x, [0, 2, 1] : tensor<2x3x4xf32> -> tensor<2x4x3xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$permutation);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `,` $permutation attr-dict `:` type($input) `->` type($result)";
  let hasFolder = 1;
}

def Graph_UnsqueezeOp : Graph_Op<"unsqueeze", [SameOperandsAndResultElementType]> {
  let summary = "inserts dimensions of size one";
  let description = [{
    Inserts a dimension of size 1 at each position of `axes` (sorted, unique, positions in the
    result).

    ```mlir
    %r = graph.unsqueeze %x {axes = array<i64: 0, 3>} : (tensor<3x4xf32>) -> tensor<1x3x4x1xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, DenseI64ArrayAttr:$axes);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasCanonicalizer = 1;
}

def Graph_GatherElementsOp : Graph_Op<"gather_elements",
    [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "gathers single elements along an axis by index";
  let description = [{
    `result[i0, ..., in] = input[i0, ..., indices[i0, ..., in], ..., in]`, the index replacing
    dimension `axis` (ONNX `GatherElements`). The result has the shape of `indices`; both operands
    have the same rank. Negative indices count from the end.

    ```mlir
    %r = graph.gather_elements %x, %idx {axis = 1 : i64} : (tensor<3x4xf32>, tensor<3x2xi64>) -> tensor<3x2xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_IndexTensor:$indices, I64Attr:$axis);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
}

def Graph_GatherNdOp : Graph_Op<"gather_nd", [AllElementTypesMatch<["input", "result"]>]> {
  let summary = "gathers slices by multi-dimensional index";
  let description = [{
    Each vector in the last dimension of `indices` (of static length `k`) indexes the `k`
    dimensions of `input` after its first `batch_dims` dimensions (ONNX `GatherND`). The result
    shape is `indices.shape[:-1] + input.shape[batch_dims + k:]`.

    ```mlir
    %r = graph.gather_nd %x, %idx {batch_dims = 0 : i64} : (tensor<4x5x6xf32>, tensor<2x2xi64>) -> tensor<2x6xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_IndexTensor:$indices,
                       DefaultValuedAttr<I64Attr, "0">:$batch_dims);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat = "$input `,` $indices attr-dict `:` functional-type(operands, results)";
}

def Graph_ScatterElementsOp : Graph_Op<"scatter_elements",
    [AllElementTypesMatch<["input", "updates", "result"]>]> {
  let summary = "writes single elements along an axis by index";
  let description = [{
    Copies `input` and, for every position of `indices`, combines the element of `updates` at that
    position into the copy at the same position with dimension `axis` replaced by the index (ONNX
    `ScatterElements`). `reduction` says how: `none` overwrites, the others accumulate.

    ```mlir
    %r = graph.scatter_elements %x, %idx, %upd {axis = 0 : i64, reduction = #graph<scatter_reduction add>} : (tensor<3x3xf32>, tensor<2x3xi64>, tensor<2x3xf32>) -> tensor<3x3xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_IndexTensor:$indices, Graph_Tensor:$updates,
                       I64Attr:$axis,
                       DefaultValuedAttr<Graph_ScatterReductionAttr,
                                         "::kiln::graph::ScatterReduction::none">:$reduction);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat =
      "$input `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)";
}

def Graph_ScatterNdOp : Graph_Op<"scatter_nd",
    [AllElementTypesMatch<["input", "updates", "result"]>]> {
  let summary = "writes slices by multi-dimensional index";
  let description = [{
    Copies `input` and writes (or, per `reduction`, accumulates) each slice of `updates` at the
    position given by the matching vector in the last dimension of `indices` (ONNX `ScatterND`).
    `updates` has shape `indices.shape[:-1] + input.shape[k:]` with `k` the static length of the
    index vectors.

    ```mlir
    %r = graph.scatter_nd %x, %idx, %upd : (tensor<4x4xf32>, tensor<2x1xi64>, tensor<2x4xf32>) -> tensor<4x4xf32>
    ```
  }];
  let arguments = (ins Graph_Tensor:$input, Graph_IndexTensor:$indices, Graph_Tensor:$updates,
                       DefaultValuedAttr<Graph_ScatterReductionAttr,
                                         "::kiln::graph::ScatterReduction::none">:$reduction);
  let results = (outs Graph_Tensor:$result);
  let assemblyFormat =
      "$input `,` $indices `,` $updates attr-dict `:` functional-type(operands, results)";
}

def Graph_ResizeOp : Graph_Op<"resize", [SameOperandsAndResultElementType]> {
  let summary = "resizes a tensor by interpolation";
  let description = [{
    Produces a tensor of shape `sizes` whose elements interpolate `input` (ONNX `Resize`).
    Output coordinate `x` in dimension `d` maps to an input coordinate by
    `coordinate_transform` with scale `scales[d]`; `mode` chooses nearest-neighbour (rounded by
    `nearest_rounding`), linear or cubic (coefficient `cubic_coeff_a`, `exclude_outside`)
    interpolation. With `antialias`, linear and cubic interpolation that shrinks a dimension
    (scale below 1) stretch their filter by 1 / scale, so every input element within its reach
    contributes (the weights normalized to sum to 1). Frontends resolve `sizes` and `scales` from
    the model. With the
    `tf_crop_and_resize` transform, `roi` (starts then ends, one of each per dimension, as
    fractions of the input's extent) is the region resized, and an output element whose position
    falls outside the input is `extrapolation_value`.

    ```mlir
    %r = graph.resize %x {mode = #graph<resize_mode linear>, scales = array<f32: 1.0, 1.0, 2.0, 2.0>, sizes = array<i64: 1, 3, 64, 64>} : (tensor<1x3x32x32xf32>) -> tensor<1x3x64x64xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, DenseI64ArrayAttr:$sizes,
                       DenseF32ArrayAttr:$scales,
                       DefaultValuedAttr<Graph_ResizeModeAttr,
                                         "::kiln::graph::ResizeMode::nearest">:$mode,
                       DefaultValuedAttr<Graph_CoordinateTransformAttr,
                           "::kiln::graph::CoordinateTransform::half_pixel">:$coordinate_transform,
                       DefaultValuedAttr<Graph_NearestRoundingAttr,
                           "::kiln::graph::NearestRounding::round_prefer_floor">:$nearest_rounding,
                       DefaultValuedAttr<F32Attr, "-0.75f">:$cubic_coeff_a,
                       DefaultValuedAttr<BoolAttr, "false">:$exclude_outside,
                       DefaultValuedAttr<BoolAttr, "false">:$antialias,
                       OptionalAttr<DenseF32ArrayAttr>:$roi,
                       DefaultValuedAttr<F32Attr, "0.0f">:$extrapolation_value);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Graph_GridSampleOp : Graph_Op<"grid_sample"> {
  let summary = "samples a tensor at the positions a grid gives, by interpolation";
  let description = [{
    ONNX `GridSample`: `input` is `N x C x D1 ... Dn` (n = 1, 2 or 3), `grid` is
    `N x G1 ... Gn x n`, and the result `N x C x G1 ... Gn` holds `input` sampled at each grid
    position. A position's components are normalized to [-1, 1] and listed innermost dimension
    first (x, then y, then z); `align_corners` says whether -1 and 1 are the centres of the corner
    elements or their outer edges. `mode` picks nearest (rounding half to even), linear or cubic
    (coefficient -0.75, n = 2 only) interpolation; `padding` what positions outside the input
    read: zeros, the border element, or the input reflected at its border.

    ```mlir
    %y = graph.grid_sample %x, %grid {mode = #graph<resize_mode linear>, padding = #graph<grid_sample_padding zeros>} : (tensor<1x3x8x8xf32>, tensor<1x4x4x2xf32>) -> tensor<1x3x4x4xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$grid,
                       DefaultValuedAttr<Graph_ResizeModeAttr,
                                         "::kiln::graph::ResizeMode::linear">:$mode,
                       DefaultValuedAttr<Graph_GridSamplePaddingAttr,
                                         "::kiln::graph::GridSamplePadding::zeros">:$padding,
                       DefaultValuedAttr<BoolAttr, "false">:$align_corners);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input `,` $grid attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Reductions
//===----------------------------------------------------------------------===//

class Graph_ReduceOp<string mnemonic, Type operandType, string math>
    : Graph_Op<mnemonic, [SameOperandsAndResultElementType]> {
  let summary = "reduces dimensions to their " # math;
  let description = [{
    Reduces the dimensions listed in `axes` (sorted, unique) to their }] # math # [{. With `keepdims`
    the reduced dimensions stay as size 1. An empty `axes` leaves the operand as it is.

    ```mlir
    %r = graph.}] # mnemonic # [{ %x {axes = array<i64: 1>, keepdims = true} : (tensor<2x3xf32>) -> tensor<2x1xf32>
    ```
  }];
  let arguments = (ins operandType:$input, DenseI64ArrayAttr:$axes,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdims);
  let results = (outs operandType:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
  let hasFolder = 1;
}

def Graph_ReduceMaxOp : Graph_ReduceOp<"reduce_max", Graph_NumericTensor, "maximum">;
def Graph_ReduceMeanOp : Graph_ReduceOp<"reduce_mean", Graph_FloatTensor, "mean">;
def Graph_ReduceMinOp : Graph_ReduceOp<"reduce_min", Graph_NumericTensor, "minimum">;
def Graph_ReduceProdOp : Graph_ReduceOp<"reduce_prod", Graph_NumericTensor, "product">;
def Graph_ReduceSumOp : Graph_ReduceOp<"reduce_sum", Graph_NumericTensor, "sum">;

class Graph_ArgReduceOp<string mnemonic, string math>
    : Graph_Op<mnemonic, []> {
  let summary = "index of the " # math # " along an axis";
  let description = [{
    Produces the `i64` index of the }] # math # [{ along `axis`, the first one among equals unless
    `select_last_index`. With `keepdims` the axis stays as size 1.

    ```mlir
    %i = graph.}] # mnemonic # [{ %x {axis = 1 : i64, keepdims = true} : (tensor<8x1000xf32>) -> tensor<8x1xi64>
    ```
  }];
  let arguments = (ins Graph_NumericTensor:$input, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "false">:$keepdims,
                       DefaultValuedAttr<BoolAttr, "false">:$select_last_index);
  let results = (outs RankedTensorOf<[I64]>:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Graph_ArgMaxOp : Graph_ArgReduceOp<"arg_max", "maximum">;
def Graph_ArgMinOp : Graph_ArgReduceOp<"arg_min", "minimum">;

class Graph_CumulativeOp<string mnemonic, string what, string identity>
    : Graph_SameTypeOp<mnemonic> {
  let summary = "cumulative " # what # " along an axis";
  let description = [{
    Element `i` along `axis` is the }] # what # [{ of elements `0..i` (`0..i-1` when `exclusive`,
    whose first element is }] # identity # [{); with `reverse` it runs from the end.

    ```mlir
    %s = graph.}] # mnemonic # [{ %x {axis = 1 : i64, exclusive = false, reverse = false} : tensor<2x5xf32>
    ```
  }];
  let arguments = (ins Graph_NumericTensor:$input, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "false">:$exclusive,
                       DefaultValuedAttr<BoolAttr, "false">:$reverse);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Graph_CumsumOp : Graph_CumulativeOp<"cumsum", "sum", "0">;
def Graph_CumprodOp : Graph_CumulativeOp<"cumprod", "product", "1">;

def Graph_TopKOp : Graph_Op<"top_k", [AllElementTypesMatch<["input", "values"]>]> {
  let summary = "the k largest or smallest elements along an axis";
  let description = [{
    Produces the `k` largest (or smallest, without `largest`) elements along `axis` and their
    `i64` indices, sorted in that order when `sorted`; ties keep the lower index first.

    ```mlir
    %v, %i = graph.top_k %x {axis = 1 : i64, k = 5 : i64} : (tensor<8x1000xf32>) -> (tensor<8x5xf32>, tensor<8x5xi64>)
    ```
  }];
  let arguments = (ins Graph_NumericTensor:$input, I64Attr:$k, I64Attr:$axis,
                       DefaultValuedAttr<BoolAttr, "true">:$largest,
                       DefaultValuedAttr<BoolAttr, "true">:$sorted);
  let results = (outs Graph_NumericTensor:$values, RankedTensorOf<[I64]>:$indices);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Linear algebra
//===----------------------------------------------------------------------===//

def Graph_GemmOp : Graph_Op<"gemm", [AllElementTypesMatch<["a", "b", "result"]>]> {
  let summary = "general matrix multiply with optional transposes and addend";
  let description = [{
    Computes `alpha * op(a) * op(b) + beta * c` with `op` a transpose when `trans_a` / `trans_b` is
    set (ONNX `Gemm`). `a` and `b` are matrices; `c`, when present, broadcasts to the `M x N` result.

    ```mlir
    %y = graph.gemm %x, %w, %bias {trans_b = true} : (tensor<8x64xf32>, tensor<32x64xf32>, tensor<32xf32>) -> tensor<8x32xf32>
    ```
  }];
  let arguments = (ins Graph_NumericTensor:$a, Graph_NumericTensor:$b,
                       Optional<Graph_NumericTensor>:$c,
                       DefaultValuedAttr<BoolAttr, "false">:$trans_a,
                       DefaultValuedAttr<BoolAttr, "false">:$trans_b,
                       DefaultValuedAttr<F32Attr, "1.0f">:$alpha,
                       DefaultValuedAttr<F32Attr, "1.0f">:$beta);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = "$a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)";
}

def Graph_MatmulOp : Graph_Op<"matmul", [SameOperandsAndResultElementType]> {
  let summary = "batched matrix product with broadcasting";
  let description = [{
    NumPy `matmul` (ONNX `MatMul`): the last two dimensions multiply as matrices and the leading
    (batch) dimensions broadcast. A 1-D `lhs` is a row vector and a 1-D `rhs` a column vector; the
    dimension they add is removed from the result.

    ```mlir
    %y = graph.matmul %x, %w : (tensor<4x128x768xf32>, tensor<768x3072xf32>) -> tensor<4x128x3072xf32>
    ```
  }];
  let arguments = (ins Graph_NumericTensor:$lhs, Graph_NumericTensor:$rhs);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict `:` functional-type(operands, results)";
}

//===----------------------------------------------------------------------===//
// Convolution and pooling
//===----------------------------------------------------------------------===//

def Graph_ConvOp : Graph_Op<"conv", [AllElementTypesMatch<["input", "filter", "result"]>]> {
  let summary = "grouped N-d convolution (NCHW layout)";
  let description = [{
    Cross-correlates `input` (`N x C x D1 ... Dn`, n from 1 to 3) with `filter`
    (`M x C/groups x K1 ... Kn`) and adds `bias` (`M`) when present. Each spatial output dimension is
    `floor((D + pad_low + pad_high - dilation * (K - 1) - 1) / stride) + 1`.

    ```mlir
    %y = graph.conv %x, %w, %b {dilations = array<i64: 1, 1>, groups = 1 : i64, pad_high = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x3x224x224xf32>, tensor<64x3x3x3xf32>, tensor<64xf32>) -> tensor<1x64x112x112xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$filter,
                       Optional<Graph_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$pad_low, DenseI64ArrayAttr:$pad_high,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat =
      "$input `,` $filter (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
}

def Graph_ConvTransposeOp : Graph_Op<"conv_transpose",
    [AllElementTypesMatch<["input", "filter", "result"]>]> {
  let summary = "grouped N-d transposed convolution (NCHW layout)";
  let description = [{
    The gradient of `graph.conv` with respect to its input (ONNX `ConvTranspose`): `input` is
    `N x C x D1 ... Dn`, `filter` is `C x M/groups x K1 ... Kn`, `bias` (`M`) is optional. Each
    spatial output dimension is
    `stride * (D - 1) + output_padding + dilation * (K - 1) + 1 - pad_low - pad_high`.

    ```mlir
    %y = graph.conv_transpose %x, %w {dilations = array<i64: 1, 1>, output_padding = array<i64: 1, 1>, pad_high = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x16x8x8xf32>, tensor<16x8x3x3xf32>) -> tensor<1x8x16x16xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$filter,
                       Optional<Graph_FloatTensor>:$bias,
                       DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                       DenseI64ArrayAttr:$pad_low, DenseI64ArrayAttr:$pad_high,
                       DenseI64ArrayAttr:$output_padding,
                       DefaultValuedAttr<I64Attr, "1">:$groups);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat =
      "$input `,` $filter (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
}

class Graph_WindowPoolOp<string mnemonic, string math, dag extraArgs = (ins)>
    : Graph_Op<mnemonic, [SameOperandsAndResultElementType]> {
  let summary = "N-d " # math # " pooling over windows (NCHW layout, or NHWC)";
  let description = [{
    Takes the }] # math # [{ of each `kernel_shape` window of the spatial dimensions of `input`
    (`N x C x D1 ... Dn`, or `N x D1 ... Dn x C` with `channels_last`; the result has the same
    layout). Each spatial output dimension is
    `(D + pad_low + pad_high - dilation * (K - 1) - 1) / stride + 1`, rounded down, or up with
    `ceil_mode` (a window that would start in the high padding is dropped).

    ```mlir
    %y = graph.}] # mnemonic # [{ %x {ceil_mode = false, dilations = array<i64: 1, 1>, kernel_shape = array<i64: 3, 3>, pad_high = array<i64: 1, 1>, pad_low = array<i64: 1, 1>, strides = array<i64: 2, 2>} : (tensor<1x64x112x112xf32>) -> tensor<1x64x56x56xf32>
    ```
  }];
  let arguments = !con((ins Graph_NumericTensor:$input, DenseI64ArrayAttr:$kernel_shape,
                            DenseI64ArrayAttr:$strides, DenseI64ArrayAttr:$dilations,
                            DenseI64ArrayAttr:$pad_low, DenseI64ArrayAttr:$pad_high,
                            DefaultValuedAttr<BoolAttr, "false">:$ceil_mode,
                            DefaultValuedAttr<BoolAttr, "false">:$channels_last), extraArgs);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Graph_AvgPoolOp : Graph_WindowPoolOp<"avg_pool", "average",
    (ins DefaultValuedAttr<BoolAttr, "false">:$count_include_pad)>;
def Graph_MaxPoolOp : Graph_WindowPoolOp<"max_pool", "maximum">;

class Graph_GlobalPoolOp<string mnemonic, string math>
    : Graph_Op<mnemonic, [SameOperandsAndResultElementType]> {
  let summary = "global " # math # " pooling (NCHW layout)";
  let description = [{
    Reduces every spatial dimension of `input` (`N x C x D1 ... Dn`) to size 1 by its }] # math # [{.

    ```mlir
    %y = graph.}] # mnemonic # [{ %x : (tensor<1x2048x7x7xf32>) -> tensor<1x2048x1x1xf32>
    ```
  }];
  let arguments = (ins Graph_NumericTensor:$input);
  let results = (outs Graph_NumericTensor:$result);
  let assemblyFormat = "$input attr-dict `:` functional-type(operands, results)";
}

def Graph_GlobalAvgPoolOp : Graph_GlobalPoolOp<"global_avg_pool", "average">;
def Graph_GlobalMaxPoolOp : Graph_GlobalPoolOp<"global_max_pool", "maximum">;

//===----------------------------------------------------------------------===//
// Normalization and softmax
//===----------------------------------------------------------------------===//

def Graph_BatchNormOp : Graph_Op<"batch_norm", [SameOperandsElementType,
                                                SameOperandsAndResultElementType]> {
  let summary = "batch normalization with running statistics (inference)";
  let description = [{
    Normalizes channel `c` (dimension 1) of `input` as
    `scale[c] * (x - mean[c]) / sqrt(variance[c] + epsilon) + bias[c]`.

    ```mlir
    %y = graph.batch_norm %x, %scale, %bias, %mean, %var {epsilon = 1.0e-05 : f32} : (tensor<1x64x56x56xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>, tensor<64xf32>) -> tensor<1x64x56x56xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$scale, Graph_FloatTensor:$bias,
                       Graph_FloatTensor:$mean, Graph_FloatTensor:$variance,
                       DefaultValuedAttr<F32Attr, "1.0e-5f">:$epsilon);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input `,` $scale `,` $bias `,` $mean `,` $variance attr-dict `:` "
                       "functional-type(operands, results)";
}

def Graph_LayerNormOp : Graph_Op<"layer_norm", [SameOperandsElementType,
                                                SameOperandsAndResultElementType]> {
  let summary = "layer normalization over the trailing dimensions";
  let description = [{
    Normalizes `input` over dimensions `[axis, rank)` to zero mean and unit variance (with
    `epsilon` added to the variance), then multiplies by `scale` and adds `bias` when present; both
    broadcast to `input.shape[axis:]`.

    ```mlir
    %y = graph.layer_norm %x, %gamma, %beta {axis = 2 : i64, epsilon = 1.0e-05 : f32} : (tensor<2x128x768xf32>, tensor<768xf32>, tensor<768xf32>) -> tensor<2x128x768xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, Graph_FloatTensor:$scale,
                       Optional<Graph_FloatTensor>:$bias, I64Attr:$axis,
                       DefaultValuedAttr<F32Attr, "1.0e-5f">:$epsilon);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat =
      "$input `,` $scale (`,` $bias^)? attr-dict `:` functional-type(operands, results)";
}

class Graph_SoftmaxOpBase<string mnemonic, string math>
    : Graph_SameTypeOp<mnemonic> {
  let summary = math # " along one axis";
  let description = [{
    Computes the }] # math # [{ of `input` along `axis`, numerically stable (the maximum is
    subtracted first).

    ```mlir
    %p = graph.}] # mnemonic # [{ %x {axis = 1 : i64} : tensor<8x1000xf32>
    ```
  }];
  let arguments = (ins Graph_FloatTensor:$input, I64Attr:$axis);
  let results = (outs Graph_FloatTensor:$result);
  let assemblyFormat = "$input attr-dict `:` type($input)";
  let hasVerifier = 1;
}

def Graph_LogSoftmaxOp : Graph_SoftmaxOpBase<"log_softmax", "log of the softmax">;
def Graph_SoftmaxOp : Graph_SoftmaxOpBase<"softmax", "softmax">;

#endif // KILN_DIALECTS_GRAPH_GRAPHOPS_TD
