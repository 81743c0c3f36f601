//===- library_calls.cpp - What each library entry point takes ---------------===//
//
// The table of library_calls.h. An entry per entry point: its tensors, element types, the
// operation's parameters and the library's own switches, the post-ops it fuses and the views it
// reads its tensors through.
//
//===----------------------------------------------------------------------===//

#include "contract/library_calls.h"

#include <algorithm>
#include <iterator>

namespace kiln::contract {
namespace {

using namespace param;

constexpr ParamSpec kConvolutionParams[] = {kStrides, kDilations, kPadsBegin, kPadsEnd,
                                            kGroups,  kPostOps,   kPostOpArgs};
constexpr ParamSpec kMatmulParams[] = {kTransA,   kTransB,  kAView,     kBView,
                                       kDstView,  kPostOps, kPostOpArgs};
/// Attention's views are all given or none (a call over dynamic shapes, set up per shape, reads
/// its bindings as they lie: runtime/src/cpu/attention.h).
constexpr ParamSpec kAttentionParams[] = {kQView,   kKView, kVView,          kMaskView,
                                          kDstView, kScale, kZeroMaskedRows, kKvGroup};
constexpr ParamSpec kPoolingParams[] = {kPoolingKind, kKernel,   kStrides,
                                        kDilations,   kPadsBegin, kPadsEnd};
constexpr ViewSpec kMatmulViews[] = {{kAView, 0}, {kBView, 1}, {kDstView, -1}};
constexpr ViewSpec kAttentionViews[] = {
    {kQView, 0}, {kKView, 1}, {kVView, 2}, {kMaskView, 3}, {kDstView, -1}};
/// The all-reduce of tensor parallelism (compiler/partition): the devices that sum.
constexpr ParamSpec kCollectiveParams[] = {kDevices};
/// The broadcasts of pipeline parallelism: the devices, and the one that sends.
constexpr ParamSpec kBroadcastParams[] = {kDevices, kRoot};
/// Point-to-point transfers of a pipeline with micro-batches: the devices, the other end, and
/// the slot both ends name.
constexpr ParamSpec kPointToPointParams[] = {kDevices, kPeer, kTag};
constexpr ParamSpec kCublasLtParams[] = {kAllowTf32};
constexpr ParamSpec kCudnnParams[] = {kAllowTf32, kChannelsLast};
/// oneDNN's channels-last tensors (kiln-cpu-channels-last), as cuDNN's.
constexpr ParamSpec kOneDnnLayoutParams[] = {kChannelsLast};

constexpr PostOp kOneDnnPostOps[] = {PostOp::Relu,    PostOp::Clip,     PostOp::Linear,
                                     PostOp::Add,     PostOp::GeluErf, PostOp::GeluTanh,
                                     PostOp::Swish};
constexpr PostOp kCudnnPostOps[] = {PostOp::Add, PostOp::Relu};
constexpr PostOp kCublasLtPostOps[] = {PostOp::Linear, PostOp::Add, PostOp::Relu, PostOp::Gelu};

/// An entry point: the rows below name their fields.
struct Row {
  const char *callee, *operands;
  size_t leading;
  bool bias;
  int64_t min_rank, max_rank;
  ElementTypes types;
  TableList<ParamSpec> params, library_params = {};
  TableList<PostOp> post_ops = {};
  TableList<ViewSpec> views = {};
  constexpr operator LibraryCallSpec() const {  // NOLINT: implicit, for the table.
    return {callee, operands, leading,        bias,     min_rank,
            max_rank, types,  params, library_params, post_ops, views};
  }
};

const LibraryCallSpec kEntries[] = {
    Row{callee::kOneDnnConvolution, "src, weights", 2, true, 3, 5, ElementTypes::F32OrBf16,
        kConvolutionParams, kOneDnnLayoutParams, kOneDnnPostOps},
    Row{callee::kOneDnnMatmul, "a, b", 2, true, 2, 8, ElementTypes::F32OrBf16, kMatmulParams, {},
        kOneDnnPostOps, kMatmulViews},
    Row{callee::kCudnnConvolution, "x, w", 2, true, 3, 5, ElementTypes::F32F16OrBf16,
        kConvolutionParams, kCudnnParams, kCudnnPostOps},
    Row{callee::kCublasLtMatmul, "a, b", 2, true, 2, 8, ElementTypes::F32F16OrBf16,
        kMatmulParams, kCublasLtParams, kCublasLtPostOps, kMatmulViews},
    Row{callee::kOneDnnPooling, "src", 1, false, 3, 5, ElementTypes::F32OrBf16, kPoolingParams,
        kOneDnnLayoutParams},
    // Kiln's own fused attention on the CPU (runtime/src/cpu/attention.h): the optional fourth
    // tensor is the additive mask.
    Row{callee::kKilnAttention, "q, k, v", 3, true, 2, 8, ElementTypes::F32Only,
        kAttentionParams, {}, {}, kAttentionViews},
    // The sum over every device of a tensor parallel program, written to the result (Gloo
    // between CPU devices, NCCL between GPUs).
    Row{callee::kGlooAllReduce, "input", 1, false, 0, 8, ElementTypes::F32Only,
        kCollectiveParams},
    // The same as kiln.attention on CUDA in half precision, through cuDNN's fused attention
    // (runtime/src/cuda/cudnn_attention.cpp).
    Row{callee::kCudnnAttention, "q, k, v", 3, true, 2, 8, ElementTypes::F16OrBf16Only,
        kAttentionParams, {}, {}, kAttentionViews},
    Row{callee::kNcclAllReduce, "input", 1, false, 0, 8, ElementTypes::F32F16OrBf16,
        kCollectiveParams},
    // Batch parallelism's outputs: every device's part of a value, device after device, on
    // every device (the result holds `devices` times the input).
    Row{callee::kNcclAllGather, "input", 1, false, 0, 8, ElementTypes::F32F16OrBf16,
        kCollectiveParams},
    Row{callee::kGlooAllGather, "input", 1, false, 0, 8, ElementTypes::Any, kCollectiveParams},
    // A value one device of a pipeline computes and the others need: the root sends its input
    // (and writes it to its result too); every other device receives it into its result.
    Row{callee::kGlooBroadcast, "input", 1, false, 0, 8, ElementTypes::Any, kBroadcastParams},
    // A value one stage of a pipeline with micro-batches sends to another stage (its result is
    // a placeholder nothing reads), and the receiving end.
    Row{callee::kGlooSend, "input", 1, false, 0, 8, ElementTypes::Any, kPointToPointParams},
    Row{callee::kGlooRecv, "", 0, false, 0, 8, ElementTypes::Any, kPointToPointParams},
    Row{callee::kGlooReceive, "", 0, false, 0, 8, ElementTypes::Any, kBroadcastParams},
};

struct PostOpRow {
  PostOp op;
  const char* name;
  unsigned args;
};
constexpr PostOpRow kPostOpRows[] = {
    {PostOp::Relu, "relu", 0},          {PostOp::Clip, "clip", 2},
    {PostOp::Linear, "linear", 2},      {PostOp::Add, "add", 0},
    {PostOp::GeluErf, "gelu_erf", 0},   {PostOp::GeluTanh, "gelu_tanh", 0},
    {PostOp::Gelu, "gelu", 0},          {PostOp::Swish, "swish", 0},
};

struct PoolingRow {
  PoolingKind kind;
  const char* name;
};
constexpr PoolingRow kPoolingRows[] = {{PoolingKind::Max, "max"},
                                       {PoolingKind::AvgIncludePad, "avg_include_pad"},
                                       {PoolingKind::AvgExcludePad, "avg_exclude_pad"}};

const PostOpRow& postOpRow(PostOp op) {
  return *std::find_if(std::begin(kPostOpRows), std::end(kPostOpRows),
                       [&](const PostOpRow& row) { return row.op == op; });
}

}  // namespace

const char* postOpName(PostOp op) { return postOpRow(op).name; }

unsigned postOpArgCount(PostOp op) { return postOpRow(op).args; }

std::optional<PostOp> parsePostOp(std::string_view name) {
  for (const PostOpRow& row : kPostOpRows)
    if (row.name == name) return row.op;
  return std::nullopt;
}

const char* poolingKindName(PoolingKind kind) {
  for (const PoolingRow& row : kPoolingRows)
    if (row.kind == kind) return row.name;
  return "";
}

std::optional<PoolingKind> parsePoolingKind(std::string_view name) {
  for (const PoolingRow& row : kPoolingRows)
    if (row.name == name) return row.kind;
  return std::nullopt;
}

const char* elementTypesText(ElementTypes types) {
  switch (types) {
    case ElementTypes::F32OrBf16:
      return "f32 or bf16";
    case ElementTypes::F32F16OrBf16:
      return "f32, f16 or bf16";
    case ElementTypes::F32Only:
      return "f32";
    case ElementTypes::F16OrBf16Only:
      return "f16 or bf16";
    case ElementTypes::Any:
      return "any element type";
  }
  return "";
}

const ParamSpec* LibraryCallSpec::findParam(std::string_view name) const {
  for (const TableList<ParamSpec>* list : {&params, &library_params})
    for (const ParamSpec& spec : *list)
      if (spec.name == name) return &spec;
  return nullptr;
}

bool LibraryCallSpec::fuses(PostOp op) const {
  return std::find(post_ops.begin(), post_ops.end(), op) != post_ops.end();
}

TableList<LibraryCallSpec> libraryCalls() { return kEntries; }

const LibraryCallSpec* findLibraryCall(std::string_view name) {
  for (const LibraryCallSpec& entry : kEntries)
    if (entry.callee == name) return &entry;
  return nullptr;
}

}  // namespace kiln::contract
