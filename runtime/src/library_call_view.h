//===- library_call_view.h - Reading a LibraryCall's bindings and parameters -*- C++ -*-===//
//
// What every device's library calls share: typed access to a LibraryCall table's bindings and
// parameters, with errors that name the call. The CPU's oneDNN calls (src/cpu/onednn) and the
// CUDA device's cuBLASLt / cuDNN calls (src/cuda) both read their calls through it, so that the
// two accept the same encoding and word their errors alike. Which parameters a call takes, and
// of which kind, is the contract's (contract/library_calls.h): a call is checked against its
// entry when it is read, and each parameter is read through its typed key.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_LIBRARY_CALL_VIEW_H_
#define KILN_RUNTIME_SRC_LIBRARY_CALL_VIEW_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "contract/library_calls.h"
#include "kiln/runtime.hpp"
#include "contract/artifact_generated.h"

namespace kiln::runtime {

/// A binding as the libraries see it: where it lives, its element type and its static dims.
struct LibraryCallBinding {
  kiln::artifact::BufferKind kind = kiln::artifact::BufferKind::Arena;
  uint64_t offset = 0;
  kiln_element_type_t element_type = KILN_ELEMENT_TYPE_F32;
  std::vector<int64_t> dims;
};

/// A strided view of a binding, as matrix products read their operands and write their result
/// through transposes, slices and splits: element (i_0, .., i_r-1) of the tensor the library sees
/// is element `offset + sum_k i_k * strides[k]` of the binding's row-major buffer. The parameter
/// `<operand>_view` encodes it as [offset, dims..., strides...].
struct StridedView {
  int64_t offset = 0;
  std::vector<int64_t> dims, strides;
  /// False for the binding itself (no parameter): offset 0, its dims, row-major strides.
  bool given = false;
};

/// Row-major strides of `dims`, in elements (the last dimension's is 1).
std::vector<int64_t> rowMajorStrides(const std::vector<int64_t>& dims);

/// Dims as a type spells them, "2x3x4" for {2, 3, 4} (as in 2x3x4xf32), or "scalar" for none;
/// for messages. (tensor.h's formatDims writes "[2, 3, 4]" for the C API's shapes.)
std::string formatTypeDims(const std::vector<int64_t>& dims);

/// One LibraryCall with its parameters indexed by key. Every accessor returns INVALID_ARGUMENT
/// naming the call (its name and description) and the offending binding or parameter.
class LibraryCallView {
 public:
  /// Indexes `call`; fails on a missing binding table, duplicate keys, a parameter its entry in
  /// the contract does not take or of another kind, a post-op it does not fuse (or with the wrong
  /// number of arguments), a dimension that is not a
  /// static size, a buffer too small for its type, or a binding whose element type is not one of
  /// `element_types` (the message then ends in "; " + `element_types_text`, which says what the
  /// library takes, e.g. "oneDNN calls take f32 tensors only").
  /// `run_dims`, when given, holds each binding's dimensions for one shape of a program compiled
  /// for a range of shapes, which replace the artifact's (the caller has checked them against
  /// the binding's bytes: RunShapes).
  static Status create(const kiln::artifact::LibraryCall& call,
                       const std::vector<kiln_element_type_t>& element_types,
                       const std::string& element_types_text, LibraryCallView* out,
                       const std::vector<std::vector<int64_t>>* run_dims = nullptr);

  /// "library call 'onednn.convolution' (description)", for messages.
  const std::string& label() const { return label_; }
  const std::string& name() const { return name_; }
  const std::vector<LibraryCallBinding>& bindings() const { return bindings_; }

  /// An INVALID_ARGUMENT status "<label>: <message>".
  Status invalid(const std::string& message) const;
  /// An UNIMPLEMENTED status "<label>: <message>", for a well-formed call the library cannot run.
  Status unimplemented(const std::string& message) const;

  /// The parameter `key` with exactly `count` values (any count when count < 0); `fallback`
  /// when absent (an error when absent and fallback is null).
  Status ints(const contract::IntsKey& key, int count, const std::vector<int64_t>* fallback,
              std::vector<int64_t>* out) const;
  /// Whether the call gives the parameter `key`.
  bool has(const contract::IntsKey& key) const;
  /// A single int parameter with a default.
  Status integer(const contract::IntKey& key, int64_t fallback, int64_t* out) const;
  /// A boolean parameter (stored as 0 or 1) with a default.
  Status flag(const contract::BoolKey& key, bool fallback, bool* out) const;
  /// String and float parameters; empty when absent.
  std::vector<std::string> strings(const contract::StringsKey& key) const;
  std::vector<float> floats(const contract::FloatsKey& key) const;
  /// The post-ops in order (contract::PostOp; the call's entry has checked their names).
  std::vector<contract::PostOp> postOps() const;

  /// The view parameter `key` of binding `binding` (the binding itself when absent). Fails
  /// naming the parameter for a malformed encoding, a rank below 2, a size below 1, a negative
  /// stride, an element outside the binding, and, when `written`, an element reached twice
  /// (contract/strided_view.h, the check the program verifier makes).
  Status view(const contract::IntsKey& key, size_t binding, bool written, StridedView* out) const;

 private:
  /// Checks the parameters against the call's entry in the contract (contract/library_calls.h).
  Status checkContract() const;
  Status readInts(const std::string& key, int count, const std::vector<int64_t>* fallback,
                  std::vector<int64_t>* out) const;

  std::string name_;
  std::string label_;
  std::vector<LibraryCallBinding> bindings_;
  std::unordered_map<std::string, std::vector<int64_t>> ints_;
  std::unordered_map<std::string, std::vector<float>> floats_;
  std::unordered_map<std::string, std::vector<std::string>> strings_;
};

/// A scaled dot-product attention call as both devices encode it ("kiln.attention" on the CPU,
/// "cudnn.attention" on CUDA; runtime/src/cpu/attention.h documents the encoding): bindings q,
/// k (Kᵀ), v, an optional additive mask, dst, each read through its required view, and
///   dst[b] = softmax(scale * Q[b] Kᵀ[kv(b)] + mask[b], along Skv) V[kv(b)],
/// where kv(b) is b with its last index h read as h / kv_group (grouped-query attention: each
/// key and value head serves kv_group query heads; 1 without groups).
struct AttentionCall {
  StridedView q, k, v, mask, dst;
  bool has_mask = false;
  float scale = 1.0f;
  /// Whether a row whose scores are all -inf gives zeros rather than NaN.
  bool zero_masked_rows = false;
  /// The batch dims Q, the mask and dst share (dst's dims but the last two), and the sizes.
  std::vector<int64_t> batch_dims;
  /// Query heads per key and value head; Kᵀ and V have batch_dims with the last divided by it.
  int64_t kv_group = 1;
  int64_t sq = 0, skv = 0, d = 0, dv = 0;
};

/// Reads and checks an attention call: its keys, 4 or 5 bindings, one finite scale, a kv_group
/// that divides the last batch dim, and views whose dims agree (Q Sq x D, Kᵀ D x Skv, V Skv x Dv,
/// mask Sq x Skv, dst Sq x Dv, all with dst's batch dims, Kᵀ's and V's last one divided by
/// kv_group). Element types are the caller's to check.
Status readAttentionCall(const LibraryCallView& view, AttentionCall* out);

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_SRC_LIBRARY_CALL_VIEW_H_
