//===- GraphBase.td - The Kiln graph dialect and its op base class ---------===//
//
// The graph dialect is Kiln's core tensor IR: value-semantic ops on ranked tensors with static or
// dynamic dimensions, in the spirit of XLA's HLO. Frontends lower into it; the compiler's passes
// transform it before fusion and code generation.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_GRAPH_GRAPHBASE_TD
#define KILN_DIALECTS_GRAPH_GRAPHBASE_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/Interfaces/InferTypeOpInterface.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Graph_Dialect : Dialect {
  let name = "graph";
  let cppNamespace = "::kiln::graph";
  let summary = "Kiln's core tensor graph IR";
  let description = [{
    The `graph` dialect is the compact core that every Kiln frontend produces and every backend
    consumes: elementwise math with NumPy broadcasting, comparisons and select, casts, data movement
    (reshape, transpose, slice, concat, pad, gather, expand), reductions, matmul and gemm,
    convolution and pooling, and a few composite ops that libraries and fused kernels want whole
    (softmax, batch norm, layer norm). Tensors are ranked; each dimension is static or dynamic (`?`).

    Every op infers its result types from its operands and attributes. A written result type may be
    more static than the inferred one (a dynamic dimension refined to a known size) but must agree
    with it wherever both are known.
  }];
  let hasConstantMaterializer = 1;
  let useDefaultAttributePrinterParser = 1;
  // graph.dim folds to arith.constant (an index).
  let dependentDialects = ["::mlir::arith::ArithDialect", "::kiln::KilnDialect"];
}

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

def Graph_FloatElement : AnyTypeOf<[F64, F32, F16, BF16, F8E4M3FN, F8E5M2,
                                      F8E4M3FNUZ, F8E5M2FNUZ], "floating-point">;
def Graph_IntElement : AnyTypeOf<[I64, I32, I16, I8, UI64, UI32, UI16, UI8], "integer">;
def Graph_Element : AnyTypeOf<[F64, F32, F16, BF16, F8E4M3FN, F8E5M2, F8E4M3FNUZ, F8E5M2FNUZ,
                               I64, I32, I16, I8, UI64, UI32, UI16, UI8, I1],
                              "Kiln element type">;

def Graph_Tensor : RankedTensorOf<[Graph_Element]>;
def Graph_FloatTensor : RankedTensorOf<[Graph_FloatElement]>;
def Graph_NumericTensor : RankedTensorOf<[Graph_FloatElement, Graph_IntElement]>;
def Graph_IntTensor : RankedTensorOf<[Graph_IntElement]>;
def Graph_IntOrBoolTensor : RankedTensorOf<[Graph_IntElement, I1]>;
def Graph_BoolTensor : RankedTensorOf<[I1]>;
def Graph_IndexTensor : RankedTensorOf<[I32, I64]>;

//===----------------------------------------------------------------------===//
// Traits
//===----------------------------------------------------------------------===//

// Result types are inferred from the adaptor; a written result type may refine dynamic dimensions
// of the inferred one (see `areRefinableTypes`).
def Graph_InferTypes : InferTypeOpAdaptorBase<[{
  static bool isCompatibleReturnTypes(::mlir::TypeRange inferred, ::mlir::TypeRange actual) {
    return ::kiln::graph::areRefinableTypes(inferred, actual);
  }
}]>;

//===----------------------------------------------------------------------===//
// Op base class
//===----------------------------------------------------------------------===//

// An op whose result types are inferred by its own `inferReturnTypes`, which is also its verifier:
// operands and attributes that admit no result type are reported with the reason.
class Graph_Op<string mnemonic, list<Trait> traits = []>
    : Op<Graph_Dialect, mnemonic, !listconcat([Pure, Graph_InferTypes], traits)> {
  let hasVerifier = 1;
  let extraClassDefinition = [{
    ::llvm::LogicalResult $cppClass::verify() {
      return ::kiln::graph::verifyByInference(*this);
    }
  }];
}

// An op whose single result has exactly its operands' type; ODS generates the inference.
class Graph_SameTypeOp<string mnemonic, list<Trait> traits = []>
    : Op<Graph_Dialect, mnemonic,
         !listconcat([Pure, SameOperandsAndResultType, InferTypeOpInterface], traits)>;

#endif // KILN_DIALECTS_GRAPH_GRAPHBASE_TD
