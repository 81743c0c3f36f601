//===- CallPlan.h - A library call being planned, and the library it targets -*- C++ -*-===//
//
// What the library-call selection shares between its files: the target library's description
// (Target: what it computes and fuses, one per device in CpuLibraryCalls.cpp and
// CudaLibraryCalls.cpp), the plan of one call (CallPlan) with its epilogue, the helpers that
// read operands and addends, and the attention planning (PlanAttention.cpp). The encoding of
// every call is the contract's (contract/library_calls.h).
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_LIBRARYCALLS_CALLPLAN_H_
#define KILN_COMPILER_LIBRARYCALLS_CALLPLAN_H_

#include "contract/library_calls.h"
#include "dialects/graph/GraphOps.h"

#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <limits>
#include <optional>
#include <string>

namespace kiln::librarycalls {

using contract::PostOp;
using namespace mlir;

struct CallPlan;

/// The library a pass instance selects calls of, and what that library fuses.
struct Target {
  llvm::StringLiteral convolution;
  llvm::StringLiteral matmul;
  /// The fused attention call and the pooling call ("" where the target has none).
  llvm::StringLiteral attention;
  llvm::StringLiteral pooling;
  /// Whether f16 and bf16 operands are taken besides f32 (others are widened to f32 around the
  /// call).
  bool f16, bf16;
  /// Whether a matmul operand may broadcast some of the result's batch dimensions and not others
  /// (oneDNN's per-dimension broadcast); cuBLASLt's strided batches take all of them or none.
  bool partialBatchBroadcast;
  /// Whether the plan's epilogue is one the library fuses; `why` says why not.
  bool (*supports)(const CallPlan &plan, std::string &why);
  /// The post-ops of GELU's erf form and its tanh approximation (none where not fused).
  std::optional<PostOp> geluErf, geluTanh;
  /// The post-op of SiLU (swish), x * sigmoid(x) (none where not fused).
  std::optional<PostOp> swish;
  /// Whether strided operands must be matrix layouts (cuBLASLt) rather than any strides (oneDNN).
  bool matrixLayoutsOnly;
  /// Whether the library takes `allow_tf32` (set where kiln-assign-precision marked the op
  /// `kiln.math = "tf32"`).
  bool tf32;
  /// Whether a bf16 call may write an f32 result (oneDNN does; the CUDA calls take one element
  /// type for every tensor), so that a cast of the result to f32 joins the call.
  bool f32Result;
  /// Whether the attention call computes f16 and bf16 products (cuDNN's fused attention) rather
  /// than f32 ones (Kiln's CPU kernel); it takes one or the other.
  bool halfAttention;
  /// Whether the attention call zeroes the rows the mask leaves no key in (zero_masked_rows).
  bool attentionZeroesMaskedRows;
  /// Whether the call adds its bias after a leading `linear` scales the product (cuBLASLt's
  /// alpha and bias epilogue) rather than before its post-ops (oneDNN).
  bool biasAfterScale;
  /// Whether the attention call reads its operands through views fixed at compile time, so
  /// static shapes only (cuDNN's, and the kernel Kiln generates on CUDA), rather than taking
  /// each binding as it lies when the shapes are the run's.
  bool attentionNeedsViews;
  /// The attention call for f32 products where `attention` takes half precision ("" where
  /// none): on CUDA, "kiln.attention" becomes a kernel Kiln generates
  /// (kiln-generate-cuda-attention), for heads of at most kMaxGeneratedHeadDim elements.
  llvm::StringLiteral f32Attention;
  /// The longest query, key and value rows the attention call takes (0: any).
  int64_t attentionMaxHeadDim = 0;
};
/// The longest query, key and value rows the generated CUDA attention keeps in registers.
constexpr int64_t kMaxGeneratedHeadDim = 128;
constexpr float kInfinity = std::numeric_limits<float>::infinity();

/// How an addend broadcasts against a call's result, by the shapes oneDNN's binary post-ops
/// implement.
enum class Broadcast { None, Full, Scalar, BiasAxis, Rows };

/// A library call being assembled from an anchor op and its epilogue.
struct CallPlan {
  const Target *target = nullptr;
  StringRef name;
  Operation *anchor = nullptr;
  /// The axis a bias broadcasts along: 1 (channels) for convolutions, the last for products.
  int64_t biasAxis = 1;
  SmallVector<Value> operands;
  bool hasBias = false;
  SmallVector<NamedAttribute> attributes;
  SmallVector<PostOp> postOps;
  SmallVector<float> postOpArgs;
  SmallVector<Value> addends;
  /// The epilogue ops after the anchor, in order.
  SmallVector<Operation *> fused;
  Value result;
  /// The data movement the call reads its operands through (from the operands outward), erased
  /// after the anchor where nothing else reads it, and the data movement it writes its result
  /// through (from the last op back to the result's reader), erased before the anchor.
  SmallVector<Operation *> readThrough, writtenThrough;
  /// Where the call writes: the end of the data movement after the result, when absorbed.
  Value written;
  /// Whether a cast of the result to f32 joined the call.
  bool widened = false;
};

/// The element type every operand and result of `op` has, when all are static tensors of one
/// (or, with `dynamicBatch`, static but for their first dimension; with `anyDynamic`, of any
/// shape); null otherwise.
Type staticUniformElementType(Operation *op, bool dynamicBatch = false, bool anyDynamic = false);
/// Whether `element` is f16 or bf16.
bool isHalfPrecision(Type element);
/// Whether `target`'s library takes tensors of `element`.
bool takes(const Target &target, Type element);
/// The value of a splat f32 constant, or nothing.
std::optional<float> splatConstant(Value value);
/// How `addend` broadcasts against a call's `result` with its bias along `biasAxis`.
Broadcast classifyAddend(RankedTensorType addend, RankedTensorType result, int64_t biasAxis);
/// Whether every eltwise post-op of one kind has the same parameters (oneDNN's rule).
bool eltwiseParametersAgree(const CallPlan &plan);
/// A plan of a call of `name` computing `anchor` from `operands`, its bias along `biasAxis`.
CallPlan startPlan(const Target &target, StringRef name, Operation *anchor, int64_t biasAxis,
                   ArrayRef<Value> operands);
/// Plans `softmax(scale * Q Kᵀ [+ mask]) V` around `softmax` as one attention call of
/// `target` (PlanAttention.cpp).
FailureOr<CallPlan> planAttention(graph::SoftmaxOp softmax, const Target &target);
/// Selects the calls of `target` in `module`, their epilogues decided by the fusion planner with
/// the cost model of `device` (a name or a description file), and records its decisions.
LogicalResult selectLibraryCalls(ModuleOp module, const Target &target, StringRef device);

} // namespace kiln::librarycalls

#endif // KILN_COMPILER_LIBRARYCALLS_CALLPLAN_H_
