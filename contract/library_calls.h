//===- library_calls.h - What each library entry point takes -----*- C++ -*-===//
//
// One declarative description of every library call the runtime implements (oneDNN on the CPU,
// cuBLASLt, cuDNN and NCCL on CUDA, Gloo between CPU devices, Kiln's own CPU attention): its
// tensors, element types, parameters, post-ops and strided views. Everything that names a call,
// a parameter or a post-op takes it from here:
//   - the program dialect's verifier (dialects/program/LibraryCalls.cpp) checks every
//     program.library_call against the table;
//   - the compiler writes parameter keys as `param::kStrides.name` (compiler/librarycalls/,
//     compiler/partition/, compiler/program/), never as a string of its own;
//   - the runtime's reader (runtime/src/library_call_view.h) checks a call's parameters against
//     its entry when it loads it, and reads them through the typed keys below, so that reading a
//     parameter of the wrong kind does not compile.
// Adding a library call is one entry in library_calls.cpp plus its implementations.
//
// Plain C++17, no MLIR and no runtime types: it sits under both the compiler and the runtime.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_CONTRACT_LIBRARY_CALLS_H_
#define KILN_CONTRACT_LIBRARY_CALLS_H_

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace kiln::contract {

/// How a parameter is stored: the program dialect's attribute, and the artifact's table.
enum class ParamKind : uint8_t {
  Ints,     ///< array<i64>; the artifact's int_params
  Int,      ///< one i64; an int_param of one value
  Bool,     ///< a boolean; an int_param of one value, 0 or 1
  Floats,   ///< array<f32>; the artifact's float_params
  Strings,  ///< an array of strings; the artifact's string_params
};

/// How many values an integer parameter has: any number, or one per spatial dimension of the
/// call's first tensor (its rank minus batch and channels).
enum class ParamCount : uint8_t { Any, Spatial };

/// A parameter's key, typed by its kind: the runtime's readers take a key of the kind they read.
template <ParamKind K>
struct ParamKey {
  /// A C string, so that std::string, std::string_view and llvm::StringRef all compare with it.
  const char* name;
  ParamCount count = ParamCount::Any;
  /// Whether every call that takes it must give it.
  bool required = false;
};
using IntsKey = ParamKey<ParamKind::Ints>;
using IntKey = ParamKey<ParamKind::Int>;
using BoolKey = ParamKey<ParamKind::Bool>;
using FloatsKey = ParamKey<ParamKind::Floats>;
using StringsKey = ParamKey<ParamKind::Strings>;

/// Every parameter key of every library call, spelled once.
namespace param {
// Convolution and pooling.
inline constexpr IntsKey kStrides{"strides", ParamCount::Spatial, true};
inline constexpr IntsKey kDilations{"dilations", ParamCount::Spatial, true};
inline constexpr IntsKey kPadsBegin{"pads_begin", ParamCount::Spatial, true};
inline constexpr IntsKey kPadsEnd{"pads_end", ParamCount::Spatial, true};
inline constexpr IntKey kGroups{"groups", ParamCount::Any, true};
/// Pooling: the window and its kind (a PoolingKind's name).
inline constexpr IntsKey kKernel{"kernel", ParamCount::Spatial, true};
inline constexpr StringsKey kPoolingKind{"kind", ParamCount::Any, true};
// Matrix products: transposed operands and strided views ([offset, dims..., strides...]).
inline constexpr BoolKey kTransA{"trans_a"};
inline constexpr BoolKey kTransB{"trans_b"};
inline constexpr IntsKey kAView{"a_view"};
inline constexpr IntsKey kBView{"b_view"};
inline constexpr IntsKey kDstView{"dst_view"};
// Attention (runtime/src/cpu/attention.h documents the encoding).
inline constexpr IntsKey kQView{"q_view"};
inline constexpr IntsKey kKView{"k_view"};
inline constexpr IntsKey kVView{"v_view"};
inline constexpr IntsKey kMaskView{"mask_view"};
inline constexpr FloatsKey kScale{"scale", ParamCount::Any, true};
inline constexpr IntsKey kZeroMaskedRows{"zero_masked_rows"};
inline constexpr IntKey kKvGroup{"kv_group"};
// Epilogues: the post-ops in order (PostOp names) and their arguments, concatenated.
inline constexpr StringsKey kPostOps{"post_ops"};
inline constexpr FloatsKey kPostOpArgs{"post_op_args"};
// Collectives: the devices taking part, the one that sends, the other end and the slot.
inline constexpr IntKey kDevices{"devices", ParamCount::Any, true};
inline constexpr IntKey kRoot{"root", ParamCount::Any, true};
inline constexpr IntKey kPeer{"peer", ParamCount::Any, true};
inline constexpr IntKey kTag{"tag", ParamCount::Any, true};
// The libraries' own switches: TF32 tensor cores (cuBLASLt, cuDNN), channels-last tensors
// (cuDNN, oneDNN: x, the addend and y as N spatial... C, w as K spatial... C/groups).
inline constexpr BoolKey kAllowTf32{"allow_tf32"};
inline constexpr BoolKey kChannelsLast{"channels_last"};
}  // namespace param

/// A parameter of an entry, whatever its kind.
struct ParamSpec {
  const char* name;
  ParamKind kind;
  ParamCount count;
  bool required;
  template <ParamKind K>
  constexpr ParamSpec(const ParamKey<K>& key)  // NOLINT: implicit on purpose, for the tables.
      : name(key.name), kind(K), count(key.count), required(key.required) {}
};

/// The epilogue operations a call may fuse, applied in order to its result.
enum class PostOp : uint8_t {
  Relu,      ///< max(x, 0)
  Clip,      ///< min(max(x, a), b); args a, b
  Linear,    ///< a * x + b; args a, b
  Add,       ///< x + the next 'add' operand (a tensor after the leading ones and the bias)
  GeluErf,   ///< x * Phi(x), the erf form
  GeluTanh,  ///< GELU's tanh approximation
  Gelu,      ///< cuBLASLt's GELU epilogue (the tanh form)
  Swish,     ///< x * sigmoid(x)
};
/// The name a call's `post_ops` parameter spells it with.
const char* postOpName(PostOp op);
/// The post-op of that name, or nothing.
std::optional<PostOp> parsePostOp(std::string_view name);
/// How many values of `post_op_args` it takes.
unsigned postOpArgCount(PostOp op);

/// The pooling kinds of `onednn.pooling`.
enum class PoolingKind : uint8_t { Max, AvgIncludePad, AvgExcludePad };
const char* poolingKindName(PoolingKind kind);
std::optional<PoolingKind> parsePoolingKind(std::string_view name);

/// The element types a call's tensors may have.
enum class ElementTypes : uint8_t {
  F32OrBf16,      ///< oneDNN: f32, and bf16 where the CPU computes it
  F32F16OrBf16,   ///< the CUDA libraries
  F32Only,        ///< Kiln's CPU attention, Gloo's all-reduce
  F16OrBf16Only,  ///< cuDNN's fused attention
  Any,            ///< collectives that move bytes
};
/// "f32 or bf16", for messages.
const char* elementTypesText(ElementTypes types);

/// A strided view parameter and the input it indexes (-1: the output).
struct ViewSpec {
  IntsKey key;
  int input;
};

/// A contiguous run of table rows (std::span is C++20).
template <typename T>
struct TableList {
  const T* first = nullptr;
  size_t count = 0;
  constexpr TableList() = default;
  template <size_t N>
  constexpr TableList(const T (&array)[N]) : first(array), count(N) {}  // NOLINT: implicit.
  constexpr const T* begin() const { return first; }
  constexpr const T* end() const { return first + count; }
  constexpr size_t size() const { return count; }
  constexpr bool empty() const { return count == 0; }
};

/// What one library entry point takes.
struct LibraryCallSpec {
  const char* callee;
  /// The leading tensors, always present ("src, weights"), for messages, and how many they are.
  const char* operands;
  size_t leading;
  /// Whether a bias (for attention: an additive mask) may follow them.
  bool bias;
  /// The first tensor's ranks.
  int64_t min_rank, max_rank;
  ElementTypes element_types;
  /// The operation's parameters (shared by the libraries that implement it), then the
  /// library's own switches.
  TableList<ParamSpec> params, library_params;
  TableList<PostOp> post_ops;
  TableList<ViewSpec> views;
  /// Whether it takes the parameter `name`, and its spec.
  const ParamSpec* findParam(std::string_view name) const;
  /// Whether it fuses `op`.
  bool fuses(PostOp op) const;
};

/// Every library entry point's name, spelled once (C strings, as the parameter keys).
namespace callee {
inline constexpr char kOneDnnConvolution[] = "onednn.convolution";
inline constexpr char kOneDnnMatmul[] = "onednn.matmul";
inline constexpr char kOneDnnPooling[] = "onednn.pooling";
inline constexpr char kKilnAttention[] = "kiln.attention";
inline constexpr char kCudnnConvolution[] = "cudnn.convolution";
inline constexpr char kCudnnAttention[] = "cudnn.attention";
inline constexpr char kCublasLtMatmul[] = "cublaslt.matmul";
inline constexpr char kNcclAllReduce[] = "nccl.all_reduce";
inline constexpr char kNcclAllGather[] = "nccl.all_gather";
inline constexpr char kGlooAllReduce[] = "gloo.all_reduce";
inline constexpr char kGlooAllGather[] = "gloo.all_gather";
inline constexpr char kGlooBroadcast[] = "gloo.broadcast";
inline constexpr char kGlooReceive[] = "gloo.receive";
inline constexpr char kGlooSend[] = "gloo.send";
inline constexpr char kGlooRecv[] = "gloo.recv";
}  // namespace callee

/// Every library entry point.
TableList<LibraryCallSpec> libraryCalls();
/// The entry of `callee`, or null.
const LibraryCallSpec* findLibraryCall(std::string_view callee);

}  // namespace kiln::contract

#endif  // KILN_CONTRACT_LIBRARY_CALLS_H_
