//===- cudnn_convolution.cpp - The cudnn.convolution library call ----------===//
//
// A forward convolution through cuDNN's graph (backend) API, with its epilogue fused into one
// operation graph:
//
//   x, w -> conv -> [+ bias] -> [+ addend] -> [relu] -> y
//
// The intermediate results are virtual fp32 tensors (cuDNN keeps them on chip); the convolution
// computes in fp32 for every element type. A 1-D convolution is a 2-D one with a unit height.
// Groups are implied by the shapes: cuDNN reads x's channels / w's input channels as the group
// count.
//
// Layout: the artifact's buffers are NCHW (NCDHW) row-major, or, for a call with
// channels_last = 1, NHWC (NDHWC; the filter KRSC), and cuDNN is told so, with their true
// strides; nothing is reordered. cuDNN's fused (runtime-fusion and pre-compiled ConvBiasAct)
// engines and its tensor-core kernels are written for NHWC, so for NCHW tensors a graph with an
// epilogue may find no engine, or only slow ones, especially in f16 and bf16; such a call fails
// with UNIMPLEMENTED when it is prepared. The compiler chooses NHWC for the values between
// half-precision convolutions (kiln-cuda-channels-last), not hidden transposes here.
//
// The engine comes from cuDNN's heuristics (mode A, then the fallback list), skipping engines
// whose numerics the call does not allow (reduced-precision accumulation; for f32, down-converted
// inputs, and tensor cores unless allow_tf32 is 1), and the first whose execution plan builds
// wins. The choice (engine index and knobs) is cached per problem and architecture, process-wide.
//
// Two paths, tried in this order:
//   1. The fused operation graph above. It is tried first because, where an engine takes it, the
//      epilogue never leaves the chip and one kernel does all; with an NHWC compiler it is the
//      fast path.
//   2. When no engine's plan builds for the graph (the usual case for NCHW f32, where runtime
//      fusion wants NHWC and tensor cores), the legacy convolution API, deprecated in cuDNN 9 but
//      shipped and covering every NCHW convolution: cudnnConvolutionBiasActivationForward
//      (y = act(conv(x, w) + alpha2 * z + bias), z the addend with alpha2 = 1, or y itself with
//      alpha2 = 0; a zero bias in the session's workspace, cleared on the stream, when the call has
//      none), or, without ReLU and where
//      IMPLICIT_PRECOMP_GEMM (which its identity activation requires) is not on offer,
//      cudnnConvolutionForward then cudnnAddTensor for the bias and the addend. The algorithm
//      comes from cudnnGetConvolutionForwardAlgorithm_v7 (heuristics, nothing timed), checked with
//      cudnnGetConvolutionForwardWorkspaceSize and cached per problem like the engine. The legacy
//      API pads both ends alike, so asymmetric pads stay UNIMPLEMENTED unless the graph took them.
// KILN_CUDNN_LEGACY=1 in the environment skips path 1 (for tests and for comparing the paths).
//
//===----------------------------------------------------------------------===//

#include <algorithm>
#include <array>
#include <climits>
#include <cstdint>
#include <cstdlib>
#include <mutex>
#include <sstream>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/src/cuda/cuda_library_problem.h"
#include "runtime/src/cuda/cuda_status.h"
#include "runtime/src/element_type.h"

// The handle attributes of the graph API and the whole legacy convolution API are deprecated in
// cuDNN 9 yet shipped by every cuDNN 9 release; this file uses both on purpose (see above).
#if defined(__GNUC__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
#endif

namespace kiln::runtime::cuda {

namespace param = contract::param;
namespace {

/// The most workspace a convolution's engine may ask for; engines above it are skipped.
constexpr int64_t kMaxWorkspaceBytes = int64_t{256} << 20;

/// The unique ids of the tensors in the variant pack, and of the virtual intermediates.
enum TensorId : int64_t { kX = 1, kW, kBias, kAddend, kY, kConvOut = 101, kBiasOut, kAddOut };

/// An owned cuDNN backend descriptor.
class BackendDescriptor {
 public:
  BackendDescriptor() = default;
  BackendDescriptor(const BackendDescriptor&) = delete;
  BackendDescriptor& operator=(const BackendDescriptor&) = delete;
  BackendDescriptor(BackendDescriptor&& other) noexcept
      : desc_(std::exchange(other.desc_, nullptr)) {}
  BackendDescriptor& operator=(BackendDescriptor&& other) noexcept {
    std::swap(desc_, other.desc_);
    return *this;
  }
  ~BackendDescriptor() {
    if (desc_) cudnnBackendDestroyDescriptor(desc_);  // frees host memory; cannot fail usefully
  }

  Status create(cudnnBackendDescriptorType_t type) {
    KILN_CUDA_RETURN_IF_ERROR(cudnnBackendCreateDescriptor(type, &desc_));
    return Status();
  }
  cudnnBackendDescriptor_t get() const { return desc_; }
  /// The address cudnnBackendSetAttribute reads one descriptor from.
  const cudnnBackendDescriptor_t* address() const { return &desc_; }

 private:
  cudnnBackendDescriptor_t desc_ = nullptr;
};

// The handle attributes are deprecated in cuDNN 9.19 in favour of device-property descriptors
// (9.8 and later); they still work and are what every cuDNN 9 release understands.
constexpr cudnnBackendAttributeName_t kGraphHandle = CUDNN_ATTR_OPERATIONGRAPH_HANDLE;
constexpr cudnnBackendAttributeName_t kPlanHandle = CUDNN_ATTR_EXECUTION_PLAN_HANDLE;

cudnnDataType_t cudnnDataTypeOf(kiln_element_type_t type) {
  switch (type) {
    case KILN_ELEMENT_TYPE_F16:
      return CUDNN_DATA_HALF;
    case KILN_ELEMENT_TYPE_BF16:
      return CUDNN_DATA_BFLOAT16;
    default:
      return CUDNN_DATA_FLOAT;
  }
}

Status makeTensor(int64_t uid, cudnnDataType_t type, const std::vector<int64_t>& dims,
                  bool channels_last, int64_t alignment, bool is_virtual, BackendDescriptor* out) {
  BackendDescriptor tensor;
  Status status = tensor.create(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  if (!status.ok()) return status;
  std::vector<int64_t> strides = tensorStrides(dims, channels_last);
  auto rank = static_cast<int64_t>(dims.size());
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendSetAttribute(tensor.get(), CUDNN_ATTR_TENSOR_UNIQUE_ID,
                                                     CUDNN_TYPE_INT64, 1, &uid));
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendSetAttribute(tensor.get(), CUDNN_ATTR_TENSOR_DATA_TYPE,
                                                     CUDNN_TYPE_DATA_TYPE, 1, &type));
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendSetAttribute(tensor.get(), CUDNN_ATTR_TENSOR_DIMENSIONS,
                                                     CUDNN_TYPE_INT64, rank, dims.data()));
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendSetAttribute(tensor.get(), CUDNN_ATTR_TENSOR_STRIDES,
                                                     CUDNN_TYPE_INT64, rank, strides.data()));
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendSetAttribute(tensor.get(), CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT,
                                                     CUDNN_TYPE_INT64, 1, &alignment));
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendSetAttribute(tensor.get(), CUDNN_ATTR_TENSOR_IS_VIRTUAL,
                                                     CUDNN_TYPE_BOOLEAN, 1, &is_virtual));
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendFinalize(tensor.get()));
  *out = std::move(tensor);
  return Status();
}

/// A pointwise operation y = mode(x[, b]) computed in fp32.
Status makePointwise(cudnnPointwiseMode_t mode, const BackendDescriptor& x,
                     const BackendDescriptor* b, const BackendDescriptor& y,
                     std::vector<BackendDescriptor>* keep, BackendDescriptor* out) {
  BackendDescriptor pointwise;
  Status status = pointwise.create(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  if (!status.ok()) return status;
  cudnnDataType_t precision = CUDNN_DATA_FLOAT;
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendSetAttribute(pointwise.get(), CUDNN_ATTR_POINTWISE_MODE,
                                                     CUDNN_TYPE_POINTWISE_MODE, 1, &mode));
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendSetAttribute(
      pointwise.get(), CUDNN_ATTR_POINTWISE_MATH_PREC, CUDNN_TYPE_DATA_TYPE, 1, &precision));
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendFinalize(pointwise.get()));

  BackendDescriptor operation;
  if (!(status = operation.create(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)).ok())
    return status;
  KILN_CUDA_RETURN_IF_ERROR(
      cudnnBackendSetAttribute(operation.get(), CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, pointwise.address()));
  KILN_CUDA_RETURN_IF_ERROR(
      cudnnBackendSetAttribute(operation.get(), CUDNN_ATTR_OPERATION_POINTWISE_XDESC,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, x.address()));
  if (b)
    KILN_CUDA_RETURN_IF_ERROR(
        cudnnBackendSetAttribute(operation.get(), CUDNN_ATTR_OPERATION_POINTWISE_BDESC,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, b->address()));
  KILN_CUDA_RETURN_IF_ERROR(
      cudnnBackendSetAttribute(operation.get(), CUDNN_ATTR_OPERATION_POINTWISE_YDESC,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, y.address()));
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendFinalize(operation.get()));
  keep->push_back(std::move(pointwise));
  *out = std::move(operation);
  return Status();
}

/// An engine choice that can be rebuilt for another handle: the engine's global index and the
/// knob values of its configuration.
struct EngineChoice {
  int64_t global_index = 0;
  std::vector<std::pair<cudnnBackendKnobType_t, int64_t>> knobs;
};

std::string problemKey(const ConvolutionProblem& problem, const CudaLibraryContext& context) {
  const CudaCallCommon& common = problem.common;
  std::ostringstream key;
  auto list = [&](const char* name, const std::vector<int64_t>& values) {
    key << ' ' << name << '=' << formatTypeDims(values);
  };
  key << "sm" << context.compute_capability_major << context.compute_capability_minor << ' '
      << describeElementType(common.element_type) << " tf32=" << common.allow_tf32;
  list("x", problem.x_dims);
  list("w", problem.w_dims);
  list("y", problem.y_dims);
  list("strides", problem.strides);
  list("dilations", problem.dilations);
  list("pads", problem.pads_begin);
  list("to", problem.pads_end);
  key << " channels_last=" << problem.channels_last
      << " bias=" << (common.epilogue.bias_binding >= 0)
      << " add=" << (common.epilogue.addend_binding >= 0)
      << " relu=" << (common.epilogue.activation == Activation::kRelu) << " align=";
  for (uint32_t alignment : common.alignments) key << alignment << ',';
  return key.str();
}

/// An owned descriptor of the legacy cuDNN API, destroyed with `Destroy`.
template <typename Handle, cudnnStatus_t (*Destroy)(Handle)>
class LegacyDescriptor {
 public:
  LegacyDescriptor() = default;
  LegacyDescriptor(const LegacyDescriptor&) = delete;
  LegacyDescriptor& operator=(const LegacyDescriptor&) = delete;
  ~LegacyDescriptor() {
    if (desc_) Destroy(desc_);  // frees host memory; cannot fail usefully
  }
  /// Where the create function writes the descriptor (once; the class owns it from then on).
  Handle* receive() { return &desc_; }
  Handle get() const { return desc_; }

 private:
  Handle desc_ = nullptr;
};
using LegacyTensor = LegacyDescriptor<cudnnTensorDescriptor_t, cudnnDestroyTensorDescriptor>;
using LegacyFilter = LegacyDescriptor<cudnnFilterDescriptor_t, cudnnDestroyFilterDescriptor>;
using LegacyConvolutionDescriptor =
    LegacyDescriptor<cudnnConvolutionDescriptor_t, cudnnDestroyConvolutionDescriptor>;
using LegacyActivation =
    LegacyDescriptor<cudnnActivationDescriptor_t, cudnnDestroyActivationDescriptor>;

/// Whether KILN_CUDNN_LEGACY=1 forces the legacy path. Read at every preparation, so that a test
/// can run both paths in one process.
bool legacyForced() {
  const char* value = std::getenv("KILN_CUDNN_LEGACY");
  return value && std::string(value) == "1";
}

/// `values` as the legacy API's ints; checkLegacyConvolution has checked the range.
std::vector<int> toInts(const std::vector<int64_t>& values) {
  return std::vector<int>(values.begin(), values.end());
}

Status setLegacyTensor(cudnnDataType_t type, const std::vector<int64_t>& dims, bool channels_last,
                       LegacyTensor* tensor) {
  KILN_CUDA_RETURN_IF_ERROR(cudnnCreateTensorDescriptor(tensor->receive()));
  std::vector<int> int_dims = toInts(dims), strides = toInts(tensorStrides(dims, channels_last));
  KILN_CUDA_RETURN_IF_ERROR(cudnnSetTensorNdDescriptor(
      tensor->get(), type, static_cast<int>(int_dims.size()), int_dims.data(), strides.data()));
  return Status();
}

class CudnnConvolution : public CudaLibraryCall {
 public:
  Status prepare(const ConvolutionProblem& problem, const CudaLibraryContext& context);
  /// Builds the operation graph of `problem`; with `operations_only`, stops before the graph
  /// itself (which needs a handle, hence a GPU), every tensor and operation finalized.
  Status buildGraph(const ConvolutionProblem& problem, bool operations_only = false);
  /// What checkCudnnConvolutionDescriptors needs of a call without a handle.
  void setCommon(const CudaCallCommon& common) { common_ = common; }

  size_t workspaceSize() const override {
    return static_cast<size_t>(zero_bias_bytes_ != 0 ? zero_bias_offset_ + zero_bias_bytes_
                                                     : workspace_size_);
  }

  Status enqueue(cudaStream_t stream, void* const* buffers, void* workspace) const override {
    Status status = checkAlignments(common_, buffers);
    if (!status.ok()) return status;
    return legacy_ ? enqueueLegacy(stream, buffers, workspace)
                   : enqueueGraph(stream, buffers, workspace);
  }

 private:
  /// Path 1: the fused operation graph, its engine from the cache or the heuristics.
  Status prepareGraph(const ConvolutionProblem& problem, const std::string& key);

  /// Builds the plan of `choice`; a status that is not OK when the engine cannot run the graph.
  Status buildPlan(const EngineChoice& choice);
  /// Runs the heuristics and builds the first allowed plan, returning its engine choice.
  Status searchPlan(EngineChoice* out);
  /// Whether the numerical notes of `engine` are ones the call allows.
  Status allowsEngine(const BackendDescriptor& engine, bool* allowed) const;
  Status enqueueGraph(cudaStream_t stream, void* const* buffers, void* workspace) const;

  /// Path 2: the legacy convolution API.
  Status prepareLegacy(const ConvolutionProblem& problem, const std::string& key);
  /// Sets `choice`'s math type and asks for its workspace; not OK when cuDNN cannot run it or its
  /// workspace is over the cap.
  Status acceptLegacyChoice(const LegacyConvolutionChoice& choice);
  Status enqueueLegacy(cudaStream_t stream, void* const* buffers, void* workspace) const;

  CudaCallCommon common_;
  cudnnHandle_t handle_ = nullptr;
  int64_t workspace_size_ = 0;

  /// Every descriptor the graph was built from, kept alive with it.
  std::vector<BackendDescriptor> keep_;
  BackendDescriptor graph_;
  BackendDescriptor plan_;
  /// The variant pack's unique ids and the binding each reads.
  std::vector<int64_t> uids_;
  std::vector<int> bindings_;
  mutable std::mutex mutex_;
  mutable BackendDescriptor variant_pack_;
  mutable std::array<void*, 5> pack_pointers_{};
  mutable void* pack_workspace_ = nullptr;

  /// Whether the legacy path runs the call, and its descriptors and choice.
  bool legacy_ = false;
  LegacyTensor x_desc_, y_desc_, bias_desc_;
  LegacyFilter w_desc_;
  LegacyConvolutionDescriptor conv_desc_;
  LegacyActivation activation_desc_;
  LegacyConvolutionChoice legacy_choice_;
  /// K zeros of the element type: the bias of cudnnConvolutionBiasActivationForward when the call
  /// has none (the function takes no null bias). They live in the session's workspace after
  /// cuDNN's (planned device memory, no allocation of the call's own) and are cleared on the
  /// run's stream before each use, since the other calls share the workspace.
  int64_t zero_bias_offset_ = 0;
  int64_t zero_bias_bytes_ = 0;
  /// The bytes of the result, which the legacy fused path zeroes when it has no addend.
  int64_t y_bytes_ = 0;
};

Status CudnnConvolution::enqueueGraph(cudaStream_t stream, void* const* buffers,
                                      void* workspace) const {
  std::array<void*, 5> pointers{};
  for (size_t i = 0; i < uids_.size(); ++i) pointers[i] = buffers[bindings_[i]];
  // A variant pack holds the addresses; it is rebuilt only when they move (the arena's never
  // do), so steady-state runs allocate nothing. Concurrent runs of the call take turns.
  std::lock_guard<std::mutex> lock(mutex_);
  if (!variant_pack_.get() || pointers != pack_pointers_ || workspace != pack_workspace_) {
    BackendDescriptor pack;
    Status status = pack.create(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR);
    if (!status.ok()) return status;
    auto count = static_cast<int64_t>(uids_.size());
    KILN_CUDA_RETURN_IF_ERROR(cudnnBackendSetAttribute(
        pack.get(), CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, count, uids_.data()));
    KILN_CUDA_RETURN_IF_ERROR(
        cudnnBackendSetAttribute(pack.get(), CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS,
                                 CUDNN_TYPE_VOID_PTR, count, pointers.data()));
    KILN_CUDA_RETURN_IF_ERROR(cudnnBackendSetAttribute(
        pack.get(), CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1, &workspace));
    KILN_CUDA_RETURN_IF_ERROR(cudnnBackendFinalize(pack.get()));
    variant_pack_ = std::move(pack);
    pack_pointers_ = pointers;
    pack_workspace_ = workspace;
  }
  // The handle is the session's: it takes this run's stream before every execution.
  KILN_CUDA_RETURN_IF_ERROR(cudnnSetStream(handle_, stream));
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendExecute(handle_, plan_.get(), variant_pack_.get()));
  return Status();
}

Status CudnnConvolution::enqueueLegacy(cudaStream_t stream, void* const* buffers,
                                       void* workspace) const {
  const CudaEpilogue& epilogue = common_.epilogue;
  // Scaling factors are host floats for f32, f16 and bf16 data alike.
  const float one = 1.0f, zero = 0.0f;
  void* y = buffers[common_.result_binding];
  auto workspace_bytes = static_cast<size_t>(workspace_size_);
  KILN_CUDA_RETURN_IF_ERROR(cudnnSetStream(handle_, stream));
  if (legacy_choice_.epilogue == LegacyEpilogue::kBiasActivation) {
    // z is the addend, or else y scaled by 0. cuDNN defines y = act(alpha1 * conv(x) + alpha2 *
    // z + bias) but does not promise that z goes unread when alpha2 is 0, and y holds whatever
    // the arena held before (NaN on the simulated device, possibly on a GPU too): 0 * NaN is
    // NaN. So y is zeroed first, on the run's stream.
    bool has_addend = epilogue.addend_binding >= 0;
    const void* z = has_addend ? buffers[epilogue.addend_binding] : y;
    if (!has_addend) {
      KILN_CUDA_RETURN_IF_ERROR(cudaMemsetAsync(y, 0, static_cast<size_t>(y_bytes_), stream));
    }
    const void* bias = epilogue.bias_binding >= 0 ? buffers[epilogue.bias_binding] : nullptr;
    if (bias == nullptr) {
      void* zeros = static_cast<uint8_t*>(workspace) + zero_bias_offset_;
      KILN_CUDA_RETURN_IF_ERROR(
          cudaMemsetAsync(zeros, 0, static_cast<size_t>(zero_bias_bytes_), stream));
      bias = zeros;
    }
    KILN_CUDA_RETURN_IF_ERROR(cudnnConvolutionBiasActivationForward(
        handle_, &one, x_desc_.get(), buffers[0], w_desc_.get(), buffers[1], conv_desc_.get(),
        legacy_choice_.algo, workspace, workspace_bytes, has_addend ? &one : &zero, y_desc_.get(),
        z, bias_desc_.get(), bias, activation_desc_.get(), y_desc_.get(), y));
    return Status();
  }
  KILN_CUDA_RETURN_IF_ERROR(cudnnConvolutionForward(
      handle_, &one, x_desc_.get(), buffers[0], w_desc_.get(), buffers[1], conv_desc_.get(),
      legacy_choice_.algo, workspace, workspace_bytes, &zero, y_desc_.get(), y));
  if (epilogue.bias_binding >= 0)
    KILN_CUDA_RETURN_IF_ERROR(cudnnAddTensor(
        handle_, &one, bias_desc_.get(), buffers[epilogue.bias_binding], &one, y_desc_.get(), y));
  if (epilogue.addend_binding >= 0)
    KILN_CUDA_RETURN_IF_ERROR(cudnnAddTensor(
        handle_, &one, y_desc_.get(), buffers[epilogue.addend_binding], &one, y_desc_.get(), y));
  return Status();
}

Status CudnnConvolution::buildGraph(const ConvolutionProblem& problem, bool operations_only) {
  const CudaEpilogue& epilogue = common_.epilogue;
  cudnnDataType_t io_type = cudnnDataTypeOf(common_.element_type);
  auto alignment = [&](int binding) -> int64_t { return common_.alignments[binding]; };
  // Virtual tensors never touch memory; their alignment is nominal.
  constexpr int64_t kVirtualAlignment = 16;
  bool has_bias = epilogue.bias_binding >= 0, has_addend = epilogue.addend_binding >= 0;
  bool has_relu = epilogue.activation == Activation::kRelu;
  const bool cl = problem.channels_last;
  int steps = int{has_bias} + int{has_addend} + int{has_relu};

  BackendDescriptor x, w, y;
  Status status;
  if (!(status = makeTensor(kX, io_type, problem.x_dims, cl, alignment(0), false, &x)).ok() ||
      !(status = makeTensor(kW, io_type, problem.w_dims, cl, alignment(1), false, &w)).ok() ||
      !(status = makeTensor(kY, io_type, problem.y_dims, cl, alignment(common_.result_binding),
                            false, &y))
           .ok())
    return status;
  uids_ = {kX, kW, kY};
  bindings_ = {0, 1, common_.result_binding};

  // The convolution: cross-correlation (what deep-learning frameworks call convolution).
  auto spatial = static_cast<int64_t>(problem.strides.size());
  std::vector<int64_t> dilations = problem.dilations;
  BackendDescriptor conv;
  if (!(status = conv.create(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR)).ok()) return status;
  cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendSetAttribute(conv.get(), CUDNN_ATTR_CONVOLUTION_COMP_TYPE,
                                                     CUDNN_TYPE_DATA_TYPE, 1, &compute));
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendSetAttribute(conv.get(), CUDNN_ATTR_CONVOLUTION_CONV_MODE,
                                                     CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode));
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendSetAttribute(
      conv.get(), CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, CUDNN_TYPE_INT64, 1, &spatial));
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendSetAttribute(conv.get(), CUDNN_ATTR_CONVOLUTION_DILATIONS,
                                                     CUDNN_TYPE_INT64, spatial,
                                                     problem.dilations.data()));
  KILN_CUDA_RETURN_IF_ERROR(
      cudnnBackendSetAttribute(conv.get(), CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES, CUDNN_TYPE_INT64,
                               spatial, problem.strides.data()));
  KILN_CUDA_RETURN_IF_ERROR(
      cudnnBackendSetAttribute(conv.get(), CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS, CUDNN_TYPE_INT64,
                               spatial, problem.pads_begin.data()));
  KILN_CUDA_RETURN_IF_ERROR(
      cudnnBackendSetAttribute(conv.get(), CUDNN_ATTR_CONVOLUTION_POST_PADDINGS, CUDNN_TYPE_INT64,
                               spatial, problem.pads_end.data()));
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendFinalize(conv.get()));

  // Without an epilogue the convolution writes y; otherwise a virtual fp32 tensor.
  BackendDescriptor current;
  if (steps > 0 && !(status = makeTensor(kConvOut, CUDNN_DATA_FLOAT, problem.y_dims, cl,
                                         kVirtualAlignment, true, &current))
                        .ok())
    return status;
  const BackendDescriptor& conv_out = steps > 0 ? current : y;
  BackendDescriptor conv_op;
  if (!(status = conv_op.create(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR)).ok())
    return status;
  float alpha = 1.0f, beta = 0.0f;
  KILN_CUDA_RETURN_IF_ERROR(
      cudnnBackendSetAttribute(conv_op.get(), CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, x.address()));
  KILN_CUDA_RETURN_IF_ERROR(
      cudnnBackendSetAttribute(conv_op.get(), CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, w.address()));
  KILN_CUDA_RETURN_IF_ERROR(
      cudnnBackendSetAttribute(conv_op.get(), CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, conv_out.address()));
  KILN_CUDA_RETURN_IF_ERROR(
      cudnnBackendSetAttribute(conv_op.get(), CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, conv.address()));
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendSetAttribute(
      conv_op.get(), CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1, &alpha));
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendSetAttribute(
      conv_op.get(), CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1, &beta));
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendFinalize(conv_op.get()));
  std::vector<cudnnBackendDescriptor_t> operations = {conv_op.get()};
  keep_.push_back(std::move(conv));
  keep_.push_back(std::move(conv_op));

  // The epilogue, one pointwise operation per step; the last one writes y.
  int remaining = steps;
  auto step = [&](cudnnPointwiseMode_t pointwise_mode, const BackendDescriptor* operand,
                  int64_t out_uid) -> Status {
    BackendDescriptor next;
    Status result;
    if (--remaining > 0 && !(result = makeTensor(out_uid, CUDNN_DATA_FLOAT, problem.y_dims, cl,
                                                 kVirtualAlignment, true, &next))
                                .ok())
      return result;
    const BackendDescriptor& target = remaining > 0 ? next : y;
    BackendDescriptor operation;
    if (!(result = makePointwise(pointwise_mode, current, operand, target, &keep_, &operation))
             .ok())
      return result;
    operations.push_back(operation.get());
    keep_.push_back(std::move(operation));
    keep_.push_back(std::move(current));
    if (remaining > 0) current = std::move(next);
    return Status();
  };
  if (has_bias) {
    // The bias broadcasts over everything but the channels: 1 x K x 1 x 1 (x 1).
    std::vector<int64_t> bias_dims(problem.y_dims.size(), 1);
    bias_dims[1] = problem.y_dims[1];
    BackendDescriptor bias;
    if (!(status = makeTensor(kBias, io_type, bias_dims, cl, alignment(epilogue.bias_binding),
                              false, &bias))
             .ok() ||
        !(status = step(CUDNN_POINTWISE_ADD, &bias, kBiasOut)).ok())
      return status;
    keep_.push_back(std::move(bias));
    uids_.push_back(kBias);
    bindings_.push_back(epilogue.bias_binding);
  }
  if (has_addend) {
    BackendDescriptor addend;
    if (!(status = makeTensor(kAddend, io_type, problem.y_dims, cl,
                              alignment(epilogue.addend_binding), false, &addend))
             .ok() ||
        !(status = step(CUDNN_POINTWISE_ADD, &addend, kAddOut)).ok())
      return status;
    keep_.push_back(std::move(addend));
    uids_.push_back(kAddend);
    bindings_.push_back(epilogue.addend_binding);
  }
  if (has_relu && !(status = step(CUDNN_POINTWISE_RELU_FWD, nullptr, 0)).ok()) return status;
  if (operations_only) {
    keep_.push_back(std::move(x));
    keep_.push_back(std::move(w));
    keep_.push_back(std::move(y));
    return Status();
  }

  if (!(status = graph_.create(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)).ok()) return status;
  KILN_CUDA_RETURN_IF_ERROR(
      cudnnBackendSetAttribute(graph_.get(), kGraphHandle, CUDNN_TYPE_HANDLE, 1, &handle_));
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendSetAttribute(
      graph_.get(), CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
      static_cast<int64_t>(operations.size()), operations.data()));
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendFinalize(graph_.get()));
  keep_.push_back(std::move(x));
  keep_.push_back(std::move(w));
  keep_.push_back(std::move(y));
  return Status();
}

Status CudnnConvolution::allowsEngine(const BackendDescriptor& engine, bool* allowed) const {
  std::array<cudnnBackendNumericalNote_t, CUDNN_NUMERICAL_NOTE_TYPE_COUNT> notes{};
  int64_t count = 0;
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendGetAttribute(
      engine.get(), CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE,
      static_cast<int64_t>(notes.size()), &count, notes.data()));
  bool f32 = common_.element_type == KILN_ELEMENT_TYPE_F32;
  *allowed = true;
  for (int64_t i = 0; i < count; ++i) {
    cudnnBackendNumericalNote_t note = notes[i];
    // The contract promises fp32 accumulation; f32 calls also keep fp32 inputs unless tf32 is
    // allowed.
    if (note == CUDNN_NUMERICAL_NOTE_REDUCED_PRECISION_REDUCTION ||
        (f32 && note == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS) ||
        (f32 && !common_.allow_tf32 && note == CUDNN_NUMERICAL_NOTE_TENSOR_CORE))
      *allowed = false;
  }
  return Status();
}

Status CudnnConvolution::buildPlan(const EngineChoice& choice) {
  BackendDescriptor engine, config, plan;
  Status status = engine.create(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
  if (!status.ok()) return status;
  KILN_CUDA_RETURN_IF_ERROR(
      cudnnBackendSetAttribute(engine.get(), CUDNN_ATTR_ENGINE_OPERATION_GRAPH,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, graph_.address()));
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendSetAttribute(engine.get(), CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
                                                     CUDNN_TYPE_INT64, 1, &choice.global_index));
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendFinalize(engine.get()));
  std::vector<BackendDescriptor> knobs(choice.knobs.size());
  std::vector<cudnnBackendDescriptor_t> knob_handles;
  for (size_t i = 0; i < knobs.size(); ++i) {
    if (!(status = knobs[i].create(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR)).ok()) return status;
    KILN_CUDA_RETURN_IF_ERROR(
        cudnnBackendSetAttribute(knobs[i].get(), CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                 CUDNN_TYPE_KNOB_TYPE, 1, &choice.knobs[i].first));
    KILN_CUDA_RETURN_IF_ERROR(
        cudnnBackendSetAttribute(knobs[i].get(), CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                                 CUDNN_TYPE_INT64, 1, &choice.knobs[i].second));
    KILN_CUDA_RETURN_IF_ERROR(cudnnBackendFinalize(knobs[i].get()));
    knob_handles.push_back(knobs[i].get());
  }
  if (!(status = config.create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)).ok()) return status;
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendSetAttribute(config.get(), CUDNN_ATTR_ENGINECFG_ENGINE,
                                                     CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                                     engine.address()));
  if (!knob_handles.empty())
    KILN_CUDA_RETURN_IF_ERROR(cudnnBackendSetAttribute(
        config.get(), CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
        static_cast<int64_t>(knob_handles.size()), knob_handles.data()));
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendFinalize(config.get()));

  if (!(status = plan.create(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR)).ok()) return status;
  KILN_CUDA_RETURN_IF_ERROR(
      cudnnBackendSetAttribute(plan.get(), kPlanHandle, CUDNN_TYPE_HANDLE, 1, &handle_));
  KILN_CUDA_RETURN_IF_ERROR(
      cudnnBackendSetAttribute(plan.get(), CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, config.address()));
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendFinalize(plan.get()));
  int64_t workspace = 0, count = 0;
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendGetAttribute(plan.get(),
                                                     CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                                     CUDNN_TYPE_INT64, 1, &count, &workspace));
  if (workspace > kMaxWorkspaceBytes)
    return Status(KILN_STATUS_RESOURCE_EXHAUSTED,
                  "the engine needs " + std::to_string(workspace) + " bytes of workspace");
  plan_ = std::move(plan);
  workspace_size_ = workspace;
  keep_.push_back(std::move(engine));
  keep_.push_back(std::move(config));
  for (BackendDescriptor& knob : knobs) keep_.push_back(std::move(knob));
  return Status();
}

/// Reads the engine index and knob values of the heuristics' engine configuration `config`.
Status readEngineChoice(const BackendDescriptor& config, const BackendDescriptor& engine,
                        EngineChoice* out) {
  EngineChoice choice;
  int64_t count = 0;
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendGetAttribute(engine.get(), CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
                                                     CUDNN_TYPE_INT64, 1, &count,
                                                     &choice.global_index));
  std::vector<BackendDescriptor> knobs(CUDNN_KNOB_TYPE_COUNTS);
  std::vector<cudnnBackendDescriptor_t> handles;
  for (BackendDescriptor& knob : knobs) {
    Status status = knob.create(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR);
    if (!status.ok()) return status;
    handles.push_back(knob.get());
  }
  KILN_CUDA_RETURN_IF_ERROR(cudnnBackendGetAttribute(
      config.get(), CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, CUDNN_TYPE_BACKEND_DESCRIPTOR,
      static_cast<int64_t>(handles.size()), &count, handles.data()));
  for (int64_t i = 0; i < count; ++i) {
    cudnnBackendKnobType_t type{};
    int64_t value = 0, got = 0;
    KILN_CUDA_RETURN_IF_ERROR(cudnnBackendGetAttribute(handles[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                                                       CUDNN_TYPE_KNOB_TYPE, 1, &got, &type));
    KILN_CUDA_RETURN_IF_ERROR(cudnnBackendGetAttribute(
        handles[i], CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE, CUDNN_TYPE_INT64, 1, &got, &value));
    choice.knobs.emplace_back(type, value);
  }
  *out = std::move(choice);
  return Status();
}

Status CudnnConvolution::searchPlan(EngineChoice* out) {
  std::string last_failure = "the heuristics proposed no engine";
  for (cudnnBackendHeurMode_t mode : {CUDNN_HEUR_MODE_A, CUDNN_HEUR_MODE_FALLBACK}) {
    BackendDescriptor heuristics;
    Status status = heuristics.create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    if (!status.ok()) return status;
    KILN_CUDA_RETURN_IF_ERROR(
        cudnnBackendSetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, graph_.address()));
    KILN_CUDA_RETURN_IF_ERROR(cudnnBackendSetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_MODE,
                                                       CUDNN_TYPE_HEUR_MODE, 1, &mode));
    // A mode that knows no engine for the graph fails to finalize: try the next one.
    cudnnStatus_t finalized = cudnnBackendFinalize(heuristics.get());
    if (finalized != CUDNN_STATUS_SUCCESS) {
      last_failure = cudaResultToStatus(finalized, "cudnnBackendFinalize(engine heuristics)",
                                        __FILE__, __LINE__)
                         .message();
      continue;
    }
    int64_t count = 0;
    KILN_CUDA_RETURN_IF_ERROR(
        cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr));
    std::vector<BackendDescriptor> configs(static_cast<size_t>(count));
    std::vector<cudnnBackendDescriptor_t> handles;
    for (BackendDescriptor& config : configs) {
      if (!(status = config.create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR)).ok()) return status;
      handles.push_back(config.get());
    }
    if (count > 0)
      KILN_CUDA_RETURN_IF_ERROR(
          cudnnBackendGetAttribute(heuristics.get(), CUDNN_ATTR_ENGINEHEUR_RESULTS,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &count, handles.data()));
    for (int64_t i = 0; i < count; ++i) {
      BackendDescriptor engine;
      if (!(status = engine.create(CUDNN_BACKEND_ENGINE_DESCRIPTOR)).ok()) return status;
      // Reading a descriptor attribute fills a descriptor the caller created.
      int64_t got = 0;
      cudnnBackendDescriptor_t engine_handle = engine.get();
      KILN_CUDA_RETURN_IF_ERROR(
          cudnnBackendGetAttribute(configs[i].get(), CUDNN_ATTR_ENGINECFG_ENGINE,
                                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &got, &engine_handle));
      bool allowed = false;
      if (!(status = allowsEngine(engine, &allowed)).ok()) return status;
      if (!allowed) {
        last_failure = "every proposed engine has numerics the call does not allow";
        continue;
      }
      EngineChoice choice;
      if (!(status = readEngineChoice(configs[i], engine, &choice)).ok()) return status;
      // Engines that cannot run this graph on this device fail here; the next may.
      if (!(status = buildPlan(choice)).ok()) {
        last_failure = status.message();
        continue;
      }
      *out = std::move(choice);
      return Status();
    }
  }
  return Status(KILN_STATUS_UNIMPLEMENTED,
                common_.label +
                    ": cuDNN has no engine for this convolution and epilogue over NCHW tensors "
                    "(fused engines mostly need NHWC); last failure: " +
                    last_failure);
}

Status CudnnConvolution::prepareGraph(const ConvolutionProblem& problem, const std::string& key) {
  Status status = buildGraph(problem);
  if (!status.ok()) return status;
  EngineChoice choice;
  if (ChoiceCache<EngineChoice>::instance().find(key, &choice) && buildPlan(choice).ok())
    return Status();
  if (!(status = searchPlan(&choice)).ok()) return status;
  ChoiceCache<EngineChoice>::instance().insert(key, choice);
  return Status();
}

Status CudnnConvolution::acceptLegacyChoice(const LegacyConvolutionChoice& choice) {
  KILN_CUDA_RETURN_IF_ERROR(cudnnSetConvolutionMathType(conv_desc_.get(), choice.math));
  size_t workspace = 0;
  KILN_CUDA_RETURN_IF_ERROR(cudnnGetConvolutionForwardWorkspaceSize(
      handle_, x_desc_.get(), w_desc_.get(), conv_desc_.get(), y_desc_.get(), choice.algo,
      &workspace));
  if (workspace > static_cast<size_t>(kMaxWorkspaceBytes))
    return Status(KILN_STATUS_RESOURCE_EXHAUSTED, "algorithm " + std::to_string(choice.algo) +
                                                      " needs " + std::to_string(workspace) +
                                                      " bytes of workspace");
  legacy_choice_ = choice;
  workspace_size_ = static_cast<int64_t>(workspace);
  return Status();
}

Status CudnnConvolution::prepareLegacy(const ConvolutionProblem& problem, const std::string& key) {
  Status status = checkLegacyConvolution(problem);
  if (!status.ok()) return status;
  const CudaEpilogue& epilogue = common_.epilogue;
  cudnnDataType_t io_type = cudnnDataTypeOf(common_.element_type);
  const bool cl = problem.channels_last;
  std::vector<int64_t> bias_dims(problem.y_dims.size(), 1);
  bias_dims[1] = problem.y_dims[1];
  if (!(status = setLegacyTensor(io_type, problem.x_dims, cl, &x_desc_)).ok() ||
      !(status = setLegacyTensor(io_type, problem.y_dims, cl, &y_desc_)).ok() ||
      !(status = setLegacyTensor(io_type, bias_dims, cl, &bias_desc_)).ok())
    return status;
  std::vector<int> w_dims = toInts(problem.w_dims);
  KILN_CUDA_RETURN_IF_ERROR(cudnnCreateFilterDescriptor(w_desc_.receive()));
  KILN_CUDA_RETURN_IF_ERROR(
      cudnnSetFilterNdDescriptor(w_desc_.get(), io_type, cl ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                                 static_cast<int>(w_dims.size()), w_dims.data()));
  // Cross-correlation computed in fp32 for every element type (FLOAT_CONFIG and the pseudo-half
  // and pseudo-bf16 configurations); checkLegacyConvolution made pads_begin the only pads.
  std::vector<int> pads = toInts(problem.pads_begin), strides = toInts(problem.strides),
                   dilations = toInts(problem.dilations);
  KILN_CUDA_RETURN_IF_ERROR(cudnnCreateConvolutionDescriptor(conv_desc_.receive()));
  KILN_CUDA_RETURN_IF_ERROR(cudnnSetConvolutionNdDescriptor(
      conv_desc_.get(), static_cast<int>(pads.size()), pads.data(), strides.data(),
      dilations.data(), CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT));
  KILN_CUDA_RETURN_IF_ERROR(
      cudnnSetConvolutionGroupCount(conv_desc_.get(), static_cast<int>(problem.groups)));
  KILN_CUDA_RETURN_IF_ERROR(cudnnSetConvolutionMathType(conv_desc_.get(), legacyMathType(problem)));

  // The heuristics' candidates, best first; the cached choice, if any, goes before them.
  int max_count = 0;
  KILN_CUDA_RETURN_IF_ERROR(cudnnGetConvolutionForwardAlgorithmMaxCount(handle_, &max_count));
  std::vector<cudnnConvolutionFwdAlgoPerf_t> results(static_cast<size_t>(std::max(max_count, 1)));
  int returned = 0;
  KILN_CUDA_RETURN_IF_ERROR(cudnnGetConvolutionForwardAlgorithm_v7(
      handle_, x_desc_.get(), w_desc_.get(), conv_desc_.get(), y_desc_.get(),
      static_cast<int>(results.size()), &returned, results.data()));
  std::vector<LegacyAlgorithmCandidate> candidates;
  for (int i = 0; i < returned; ++i)
    candidates.push_back(
        {results[i].algo, results[i].status, results[i].memory, results[i].mathType});
  std::vector<LegacyConvolutionChoice> choices =
      rankLegacyChoices(problem, candidates, static_cast<size_t>(kMaxWorkspaceBytes));
  std::string legacy_key = key + " legacy";
  LegacyConvolutionChoice cached;
  bool found = ChoiceCache<LegacyConvolutionChoice>::instance().find(legacy_key, &cached);
  if (found) choices.insert(choices.begin(), cached);

  std::string last_failure = "the heuristics proposed no algorithm the call allows";
  bool accepted = false;
  for (const LegacyConvolutionChoice& choice : choices) {
    if (!(status = acceptLegacyChoice(choice)).ok()) {
      last_failure = status.message();
      continue;
    }
    accepted = true;
    break;
  }
  if (!accepted)
    return Status(KILN_STATUS_UNIMPLEMENTED,
                  common_.label +
                      ": the legacy cuDNN convolution API has no algorithm for this "
                      "convolution; last failure: " +
                      last_failure);
  if (!found) ChoiceCache<LegacyConvolutionChoice>::instance().insert(legacy_key, legacy_choice_);

  if (legacy_choice_.epilogue == LegacyEpilogue::kBiasActivation) {
    y_bytes_ = common_.element_type == KILN_ELEMENT_TYPE_F32 ? 4 : 2;
    for (int64_t d : problem.y_dims) y_bytes_ *= d;
    bool relu = epilogue.activation == Activation::kRelu;
    KILN_CUDA_RETURN_IF_ERROR(cudnnCreateActivationDescriptor(activation_desc_.receive()));
    KILN_CUDA_RETURN_IF_ERROR(cudnnSetActivationDescriptor(
        activation_desc_.get(), relu ? CUDNN_ACTIVATION_RELU : CUDNN_ACTIVATION_IDENTITY,
        CUDNN_PROPAGATE_NAN, 0.0));
    if (epilogue.bias_binding < 0) {
      // After cuDNN's workspace, 256-byte aligned like every buffer cuDNN is given.
      zero_bias_offset_ = (workspace_size_ + 255) / 256 * 256;
      zero_bias_bytes_ =
          problem.y_dims[1] * (common_.element_type == KILN_ELEMENT_TYPE_F32 ? 4 : 2);
    }
  }
  legacy_ = true;
  return Status();
}

Status CudnnConvolution::prepare(const ConvolutionProblem& problem,
                                 const CudaLibraryContext& context) {
  common_ = problem.common;
  handle_ = context.cudnn;
  std::string key = problemKey(problem, context);
  if (legacyForced()) return prepareLegacy(problem, key);
  Status graph_status = prepareGraph(problem, key);
  if (graph_status.ok()) return graph_status;
  // No engine took the graph: drop what it built and fall back to the legacy API.
  keep_.clear();
  graph_ = BackendDescriptor();
  plan_ = BackendDescriptor();
  uids_.clear();
  bindings_.clear();
  workspace_size_ = 0;
  Status legacy_status = prepareLegacy(problem, key);
  if (legacy_status.ok()) return legacy_status;
  return Status(legacy_status.code(), legacy_status.message() + " (the fused graph failed first: " +
                                          graph_status.message() + ")");
}

}  // namespace

std::vector<int64_t> tensorStrides(const std::vector<int64_t>& dims, bool channels_last) {
  if (!channels_last || dims.size() < 3) return rowMajorStrides(dims);
  // (N, spatial..., C) row-major: C innermost, then the spatial dims from the last, then N.
  std::vector<int64_t> strides(dims.size(), 1);
  int64_t extent = dims[1];
  for (size_t i = dims.size() - 1; i >= 2; --i) {
    strides[i] = extent;
    extent *= dims[i];
  }
  strides[0] = extent;
  return strides;
}

Status checkLegacyConvolution(const ConvolutionProblem& problem) {
  const std::string& label = problem.common.label;
  for (size_t i = 0; i < problem.pads_begin.size(); ++i)
    if (problem.pads_begin[i] != problem.pads_end[i])
      return Status(KILN_STATUS_UNIMPLEMENTED,
                    label + ": pads_begin " + formatTypeDims(problem.pads_begin) +
                        " differ from pads_end " + formatTypeDims(problem.pads_end) +
                        ", and the legacy cuDNN convolution API (the fallback when no fused "
                        "engine takes the call) pads both ends alike");
  auto fits = [](const std::vector<int64_t>& dims) {
    std::vector<int64_t> strides = tensorStrides(dims, false);
    for (size_t i = 0; i < dims.size(); ++i)
      if (dims[i] > INT_MAX || strides[i] * dims[i] > INT_MAX) return false;
    return true;
  };
  if (!fits(problem.x_dims) || !fits(problem.w_dims) || !fits(problem.y_dims))
    return Status(KILN_STATUS_UNIMPLEMENTED,
                  label +
                      ": a tensor has more elements than the legacy cuDNN convolution API's "
                      "int dims and strides reach");
  return Status();
}

cudnnMathType_t legacyMathType(const ConvolutionProblem& problem) {
  const CudaCallCommon& common = problem.common;
  if (common.element_type == KILN_ELEMENT_TYPE_F32 && !common.allow_tf32) return CUDNN_FMA_MATH;
  return CUDNN_TENSOR_OP_MATH;
}

std::vector<LegacyConvolutionChoice> rankLegacyChoices(
    const ConvolutionProblem& problem, const std::vector<LegacyAlgorithmCandidate>& candidates,
    size_t max_workspace) {
  const CudaEpilogue& epilogue = problem.common.epilogue;
  bool relu = epilogue.activation == Activation::kRelu;
  bool adds = epilogue.bias_binding >= 0 || epilogue.addend_binding >= 0;
  cudnnMathType_t math = legacyMathType(problem);
  std::vector<LegacyConvolutionChoice> usable;
  for (const LegacyAlgorithmCandidate& candidate : candidates) {
    if (candidate.status != CUDNN_STATUS_SUCCESS || candidate.workspace > max_workspace) continue;
    // ALLOW_CONVERSION rounds f32 operands to f16; FMA forbids tensor cores (tf32) for f32.
    if (candidate.math == CUDNN_TENSOR_OP_MATH_ALLOW_CONVERSION) continue;
    if (math == CUDNN_FMA_MATH && candidate.math == CUDNN_TENSOR_OP_MATH) continue;
    // The math type the candidate was rated with, unless tf32 is forbidden: then FMA, which
    // keeps the default math's tf32 tensor cores away too.
    usable.push_back({candidate.algo, math == CUDNN_FMA_MATH ? math : candidate.math,
                      LegacyEpilogue::kBiasActivation});
  }
  if (relu) return usable;
  std::vector<LegacyConvolutionChoice> ranked;
  if (adds)
    for (const LegacyConvolutionChoice& choice : usable)
      if (choice.algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM) ranked.push_back(choice);
  for (LegacyConvolutionChoice choice : usable) {
    choice.epilogue = LegacyEpilogue::kSeparate;
    ranked.push_back(choice);
  }
  return ranked;
}

Status readConvolutionProblem(const LibraryCallView& view, ConvolutionProblem* out) {
  Status status;
  ConvolutionProblem problem;
  if (!(status = readCudaCallCommon(view, {"x, w", /*matmul=*/false}, &problem.common)).ok())
    return status;
  if (!(status = view.flag(param::kChannelsLast, false, &problem.channels_last)).ok())
    return status;

  const std::vector<LibraryCallBinding>& bindings = view.bindings();
  // The logical (N, C, spatial...) dims: channels-last bindings store C (x, y) or C/groups (w)
  // last.
  auto logical = [&](const std::vector<int64_t>& stored) {
    std::vector<int64_t> dims = stored;
    if (problem.channels_last && dims.size() >= 3) {
      dims.insert(dims.begin() + 1, dims.back());
      dims.pop_back();
    }
    return dims;
  };
  const std::vector<int64_t> x = logical(bindings[0].dims);
  const std::vector<int64_t> w = logical(bindings[1].dims);
  const std::vector<int64_t> y = logical(bindings.back().dims);
  size_t rank = x.size();
  if (rank < 3 || rank > 5)
    return view.invalid("x has rank " + std::to_string(rank) + "; expected " +
                        (problem.channels_last ? "N x D1..Dn x C" : "N x C x D1..Dn") +
                        " with 1 to 3 spatial dimensions");
  if (w.size() != rank || y.size() != rank)
    return view.invalid("x, w and the result must have the same rank " + std::to_string(rank));
  int spatial = static_cast<int>(rank) - 2;

  std::vector<int64_t> ones(spatial, 1), zeros(spatial, 0);
  std::vector<int64_t> strides, dilations, pads_begin, pads_end;
  if (!(status = view.ints(param::kStrides, spatial, &ones, &strides)).ok() ||
      !(status = view.ints(param::kDilations, spatial, &ones, &dilations)).ok() ||
      !(status = view.ints(param::kPadsBegin, spatial, &zeros, &pads_begin)).ok() ||
      !(status = view.ints(param::kPadsEnd, spatial, &zeros, &pads_end)).ok())
    return status;
  int64_t groups = 1;
  if (!(status = view.integer(param::kGroups, 1, &groups)).ok()) return status;

  int64_t batch = x[0], channels = x[1], features = w[0];
  if (groups < 1 || channels % groups != 0 || features % groups != 0)
    return view.invalid("groups = " + std::to_string(groups) + " must divide the " +
                        std::to_string(channels) + " input and " + std::to_string(features) +
                        " output channels");
  if (w[1] != channels / groups)
    return view.invalid("w has " + std::to_string(w[1]) + " input channels per group; x has " +
                        std::to_string(channels) + " channels in " + std::to_string(groups) +
                        " group(s)");
  if (y[0] != batch || y[1] != features)
    return view.invalid("the result must be " + std::to_string(batch) + " x " +
                        std::to_string(features) + " x ...; got " + formatTypeDims(y));
  for (int i = 0; i < spatial; ++i) {
    if (strides[i] < 1 || dilations[i] < 1 || pads_begin[i] < 0 || pads_end[i] < 0)
      return view.invalid("spatial dimension " + std::to_string(i) +
                          " has a stride or dilation below 1 or a negative pad");
    int64_t window = dilations[i] * (w[2 + i] - 1) + 1;
    int64_t padded = x[2 + i] + pads_begin[i] + pads_end[i];
    int64_t expected = padded >= window ? (padded - window) / strides[i] + 1 : 0;
    if (expected < 1 || y[2 + i] != expected)
      return view.invalid("spatial dimension " + std::to_string(i) + " of the result is " +
                          std::to_string(y[2 + i]) + "; the window gives " +
                          std::to_string(expected));
  }
  int bias = problem.common.epilogue.bias_binding;
  if (bias >= 0 && bindings[bias].dims != std::vector<int64_t>{features})
    return view.invalid("the bias (" + formatTypeDims(bindings[bias].dims) + ") must have dims " +
                        std::to_string(features));

  problem.x_dims = x;
  problem.w_dims = w;
  problem.y_dims = y;
  if (spatial == 1) {
    // cuDNN convolves 2-D and 3-D: a 1-D convolution is a 2-D one over a unit height.
    problem.x_dims.insert(problem.x_dims.begin() + 2, 1);
    problem.w_dims.insert(problem.w_dims.begin() + 2, 1);
    problem.y_dims.insert(problem.y_dims.begin() + 2, 1);
    strides.insert(strides.begin(), 1);
    dilations.insert(dilations.begin(), 1);
    pads_begin.insert(pads_begin.begin(), 0);
    pads_end.insert(pads_end.begin(), 0);
  }
  problem.strides = strides;
  problem.dilations = dilations;
  problem.pads_begin = pads_begin;
  problem.pads_end = pads_end;
  problem.groups = groups;
  *out = std::move(problem);
  return Status();
}

Status checkCudnnConvolutionDescriptors(const ConvolutionProblem& problem) {
  CudnnConvolution call;
  call.setCommon(problem.common);
  return call.buildGraph(problem, /*operations_only=*/true);
}

Status createCudnnConvolution(const ConvolutionProblem& problem, const CudaLibraryContext& context,
                              std::unique_ptr<CudaLibraryCall>* out) {
  // The heuristics and plans ask the current device what it is.
  KILN_CUDA_RETURN_IF_ERROR(cudaSetDevice(context.device));
  auto call = std::make_unique<CudnnConvolution>();
  Status status = call->prepare(problem, context);
  if (!status.ok()) return status;
  *out = std::move(call);
  return Status();
}

}  // namespace kiln::runtime::cuda

#if defined(__GNUC__)
#pragma GCC diagnostic pop
#endif
