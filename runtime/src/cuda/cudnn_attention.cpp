//===- cudnn_attention.cpp - The cudnn.attention library call -------------===//
//
// Scaled dot-product attention in one step on CUDA: softmax(scale * Q Kᵀ [+ mask]) V over f16 or
// bf16 tensors, the scores never leaving the chip. The call is the CPU's kiln.attention encoding
// (runtime/src/cpu/attention.h); the compiler selects it (kiln-select-cuda-library-calls) where
// the half-precision products and the softmax between them are the form exporters write.
//
// cuDNN runs it with its fused flash-attention engines. Their operation graph (two matrix
// products, the scale, the bias, and the softmax as reductions and pointwise operations in the
// exact pattern those engines match) is what the cuDNN frontend's SDPA node builds, with the
// support checks of each cuDNN release (head dims, strides, alignment), so the graph is built
// with the frontend (NVIDIA's header-only C++ API; scripts/install-deps.sh provides the pinned
// release) rather than by hand: the intermediate type is f32, the scale a value, the mask the
// SDPA bias, no statistics (inference).
//
// A session builds each distinct problem's graph and plan once (heuristics mode A, the first plan
// that builds) and its calls of that problem share it; a run only enqueues the execution on the
// run's stream.
//
//===----------------------------------------------------------------------===//

#include <cudnn_frontend.h>
#include <dlfcn.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <ios>
#include <memory>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/src/cuda/cuda_library_problem.h"
#include "runtime/src/cuda/cuda_status.h"
#include "runtime/src/element_type.h"
#include "runtime/src/library_call_view.h"

// The frontend is built to look cuDNN's functions up (NV_CUDNN_FRONTEND_USE_DYNAMIC_LOADING, see
// runtime/CMakeLists.txt) in this handle: the process's own symbols, since the runtime links cuDNN.
namespace cudnn_frontend {
void* cudnn_dlhandle = RTLD_DEFAULT;
}  // namespace cudnn_frontend

namespace kiln::runtime::cuda {
namespace {

namespace fe = cudnn_frontend;

/// The unique ids of the variant pack.
enum AttentionUid : int64_t { kQ = 1, kK, kV, kMask, kO };

/// `view` (rank 2 to 4: at most two batch dims, leading) as [B, H, rows, cols], missing batch
/// dims of 1.
StridedView fourDims(StridedView view) {
  size_t missing = 4 - view.dims.size();
  view.dims.insert(view.dims.begin(), missing, 1);
  view.strides.insert(view.strides.begin(), missing, 0);
  return view;
}

/// Every dim but the last that broadcasts (stride 0) or has size 1 as a dim of 1 with the stride
/// a dense tensor would have there (cuDNN reads a dim of 1 as broadcast).
void broadcastAsOne(StridedView* view) {
  int64_t dense = view->dims.back();
  for (size_t i = view->dims.size() - 1; i-- > 0;) {
    if (view->strides[i] == 0 || view->dims[i] == 1) {
      view->dims[i] = 1;
      view->strides[i] = dense;
    }
    dense *= view->dims[i];
  }
}

Status frontendStatus(fe::error_t error, const std::string& label, const char* step) {
  if (error.is_good()) return Status();
  kiln_status_code_t code = error.get_code() == fe::error_code_t::GRAPH_NOT_SUPPORTED
                                ? KILN_STATUS_UNIMPLEMENTED
                                : KILN_STATUS_INTERNAL;
  return Status(code,
                label + ": the cuDNN frontend failed to " + step + ": " + error.get_message());
}

fe::graph::Tensor_attributes tensorOf(const char* name, int64_t uid, const StridedView& view,
                                      fe::DataType_t type) {
  return fe::graph::Tensor_attributes()
      .set_name(name)
      .set_uid(uid)
      .set_dim(view.dims)
      .set_stride(view.strides)
      .set_data_type(type);
}

/// The frontend graph of `problem`: its tensors and the SDPA node, not yet validated; for a GPU
/// of `sm_version` (the nodes copy it when they are made), or the current device's when 0.
std::shared_ptr<fe::graph::Graph> describeGraph(const AttentionProblem& problem,
                                                int sm_version = 0) {
  fe::DataType_t type = problem.common.element_type == KILN_ELEMENT_TYPE_BF16
                            ? fe::DataType_t::BFLOAT16
                            : fe::DataType_t::HALF;
  auto graph = std::make_shared<fe::graph::Graph>();
  if (sm_version > 0) graph->set_sm_version(sm_version);
  graph->set_io_data_type(type)
      .set_intermediate_data_type(fe::DataType_t::FLOAT)
      .set_compute_data_type(fe::DataType_t::FLOAT);
  auto q = graph->tensor(tensorOf("q", kQ, problem.q, type));
  auto k = graph->tensor(tensorOf("k", kK, problem.k, type));
  auto v = graph->tensor(tensorOf("v", kV, problem.v, type));
  auto options = fe::graph::SDPA_attributes()
                     .set_name("attention")
                     .set_generate_stats(false)
                     .set_attn_scale(problem.call.scale);
  if (problem.call.has_mask)
    options.set_bias(graph->tensor(tensorOf("mask", kMask, problem.mask, type)));
  auto outputs = graph->sdpa(q, k, v, options);
  outputs[0]->set_output(true).set_uid(kO).set_dim(problem.o.dims).set_stride(problem.o.strides);
  return graph;
}

/// The frontend graph of `problem`, validated (which needs the device's compute capability, so a
/// GPU), then built on `handle` with its first plan. The frontend throws where it cannot load a
/// library (std::runtime_error), and callers take a status.
Status buildGraphOrThrow(const AttentionProblem& problem, cudnnHandle_t handle,
                         std::shared_ptr<fe::graph::Graph>* out) {
  const std::string& label = problem.common.label;
  std::shared_ptr<fe::graph::Graph> graph = describeGraph(problem);
  Status status;
  if (!(status = frontendStatus(graph->validate(), label, "validate the graph")).ok() ||
      !(status = frontendStatus(graph->build_operation_graph(handle), label,
                                "build the operation graph"))
           .ok() ||
      !(status = frontendStatus(graph->create_execution_plans({fe::HeurMode_t::A}), label,
                                "find engines for the graph"))
           .ok() ||
      !(status = frontendStatus(graph->check_support(), label, "find an engine that supports it"))
           .ok() ||
      !(status = frontendStatus(graph->build_plans(fe::BuildPlanPolicy_t::HEURISTICS_CHOICE), label,
                                "build a plan"))
           .ok())
    return status;
  *out = std::move(graph);
  return Status();
}

Status buildGraph(const AttentionProblem& problem, cudnnHandle_t handle,
                  std::shared_ptr<fe::graph::Graph>* out) {
  try {
    return buildGraphOrThrow(problem, handle, out);
  } catch (const std::exception& error) {
    return Status(KILN_STATUS_INTERNAL,
                  problem.common.label + ": the cuDNN frontend failed: " + error.what());
  }
}

/// The text that names a problem on one handle: the calls of a session with equal texts share
/// their graph.
std::string problemKey(const AttentionProblem& problem, cudnnHandle_t handle) {
  std::ostringstream key;
  // The scale in full (hexadecimal floating point): calls whose scales differ share no graph.
  key << handle << ' ' << problem.common.element_type << ' ' << std::hexfloat << problem.call.scale
      << std::defaultfloat << ' ' << problem.call.has_mask;
  for (const StridedView* view : {&problem.q, &problem.k, &problem.v, &problem.mask, &problem.o}) {
    key << " |";
    for (int64_t d : view->dims) key << ' ' << d;
    key << " :";
    for (int64_t s : view->strides) key << ' ' << s;
  }
  return key.str();
}

/// Graphs by problem and handle, alive while a call holds them.
class GraphCache {
 public:
  static GraphCache& instance() {
    static GraphCache cache;
    return cache;
  }
  Status find(const AttentionProblem& problem, cudnnHandle_t handle,
              std::shared_ptr<fe::graph::Graph>* out) {
    std::string key = problemKey(problem, handle);
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = graphs_.find(key); it != graphs_.end())
      if ((*out = it->second.lock())) return Status();
    Status status = buildGraph(problem, handle, out);
    if (status.ok()) graphs_[key] = *out;
    return status;
  }

 private:
  std::mutex mutex_;
  std::unordered_map<std::string, std::weak_ptr<fe::graph::Graph>> graphs_;
};

class CudnnAttention : public CudaLibraryCall {
 public:
  CudnnAttention(const AttentionProblem& problem, cudnnHandle_t handle,
                 std::shared_ptr<fe::graph::Graph> graph, int64_t workspace)
      : common_(problem.common), handle_(handle), graph_(std::move(graph)), workspace_(workspace) {
    offsets_ = {problem.q.offset, problem.k.offset, problem.v.offset, problem.mask.offset,
                problem.o.offset};
    has_mask_ = problem.call.has_mask;
  }

  size_t workspaceSize() const override { return static_cast<size_t>(workspace_); }

  Status enqueue(cudaStream_t stream, void* const* buffers, void* workspace) const override {
    Status status = checkAlignments(common_, buffers);
    if (!status.ok()) return status;
    // f16 and bf16: two bytes an element.
    auto at = [&](int binding, int64_t offset) {
      return static_cast<void*>(static_cast<char*>(buffers[binding]) + offset * 2);
    };
    std::unordered_map<int64_t, void*> pack = {{kQ, at(0, offsets_[0])},
                                               {kK, at(1, offsets_[1])},
                                               {kV, at(2, offsets_[2])},
                                               {kO, at(common_.result_binding, offsets_[4])}};
    if (has_mask_) pack[kMask] = at(3, offsets_[3]);
    // The handle is the session's: it takes this run's stream before every execution.
    KILN_CUDA_RETURN_IF_ERROR(cudnnSetStream(handle_, stream));
    try {
      return frontendStatus(graph_->execute(handle_, pack, workspace), common_.label,
                            "execute the graph");
    } catch (const std::exception& error) {
      return Status(KILN_STATUS_INTERNAL,
                    common_.label + ": the cuDNN frontend failed: " + error.what());
    }
  }

 private:
  CudaCallCommon common_;
  cudnnHandle_t handle_ = nullptr;
  std::shared_ptr<fe::graph::Graph> graph_;
  int64_t workspace_ = 0;
  std::vector<int64_t> offsets_;
  bool has_mask_ = false;
};

}  // namespace

Status readAttentionProblem(const LibraryCallView& view, AttentionProblem* out) {
  AttentionProblem problem;
  Status status = readAttentionCall(view, &problem.call);
  if (!status.ok()) return status;
  if (!(status = readCudaCallBindings(view, &problem.common)).ok()) return status;
  const CudaCallCommon& common = problem.common;
  if (common.element_type != KILN_ELEMENT_TYPE_F16 && common.element_type != KILN_ELEMENT_TYPE_BF16)
    return view.unimplemented("takes f16 or bf16 tensors (cuDNN's fused attention), not " +
                              describeElementType(common.element_type));
  const AttentionCall& call = problem.call;
  if (call.zero_masked_rows)
    return view.unimplemented("'zero_masked_rows' is not a cuDNN attention option");
  if (call.batch_dims.size() > 2)
    return view.unimplemented("has " + std::to_string(call.batch_dims.size()) +
                              " batch dims; cuDNN's attention takes two (batch and heads)");
  // readAttentionCall gave every view the batch dims and two more: ranks 2 to 4 here.
  problem.q = fourDims(call.q);
  problem.v = fourDims(call.v);
  problem.o = fourDims(call.dst);
  if (call.has_mask) problem.mask = fourDims(call.mask);
  // K as cuDNN takes it: Kᵀ's last two dims swapped.
  problem.k = fourDims(call.k);
  std::swap(problem.k.dims[2], problem.k.dims[3]);
  std::swap(problem.k.strides[2], problem.k.strides[3]);
  for (auto [tensor, name] :
       {std::pair{&problem.q, "q"}, {&problem.k, "k"}, {&problem.v, "v"}, {&problem.o, "dst"}}) {
    if (tensor->strides[3] != 1)
      return view.unimplemented(std::string(name) + "'s view has stride " +
                                std::to_string(tensor->strides[3]) + " along the head dim; " +
                                "cuDNN's attention reads it with unit stride");
    for (size_t dim = 0; dim < 2; ++dim)
      if (tensor->dims[dim] > 1 && tensor->strides[dim] == 0)
        return view.unimplemented(std::string(name) +
                                  " broadcasts along a batch dim; cuDNN's attention does not");
    broadcastAsOne(tensor);
  }
  if (call.has_mask) {
    if (problem.mask.strides[3] != 1)
      return view.unimplemented("the mask's view has stride " +
                                std::to_string(problem.mask.strides[3]) +
                                " along the keys; cuDNN's attention reads it with unit stride");
    broadcastAsOne(&problem.mask);
  }
  *out = std::move(problem);
  return Status();
}

Status checkCudnnAttentionGraph(const AttentionProblem& problem, int sm_version) {
  try {
    std::shared_ptr<fe::graph::Graph> graph = describeGraph(problem, sm_version);
    return frontendStatus(graph->validate(), problem.common.label,
                          ("validate the graph for sm_" + std::to_string(sm_version)).c_str());
  } catch (const std::exception& error) {
    return Status(KILN_STATUS_INTERNAL,
                  problem.common.label + ": the cuDNN frontend failed: " + error.what());
  }
}

Status createCudnnAttention(const AttentionProblem& problem, const CudaLibraryContext& context,
                            std::unique_ptr<CudaLibraryCall>* out) {
  // The frontend asks the current device for its compute capability.
  KILN_CUDA_RETURN_IF_ERROR(cudaSetDevice(context.device));
  std::shared_ptr<fe::graph::Graph> graph;
  Status status = GraphCache::instance().find(problem, context.cudnn, &graph);
  if (!status.ok()) return status;
  int64_t workspace = 0;
  if (!(status = frontendStatus(graph->get_workspace_size(workspace), problem.common.label,
                                "size the workspace"))
           .ok())
    return status;
  *out = std::make_unique<CudnnAttention>(problem, context.cudnn, std::move(graph), workspace);
  return Status();
}

}  // namespace kiln::runtime::cuda
