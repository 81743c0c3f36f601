//===- onednn_convolution.cpp - The onednn.convolution library call ---------===//
//
// A forward-inference oneDNN convolution over row-major NCHW (NCW, NCDHW) caller buffers, or with
// `channels_last` NHWC ones (weights K x spatial x C/groups; kiln-cpu-channels-last), f32 or bf16
// (oneDNN's bf16 kernels accumulate in f32). Weights are reordered into the layout the primitive
// chose (format_tag::any): constant ones once, at load time, others each run.
//
// Activation layout: the primitive chooses the source and destination layouts (nhwc or
// channel-blocked on AVX-512), and each run reorders the source in and the destination out
// through buffers the kernel keeps between runs, unless layout negotiation (library_call.h) let
// the neighbouring convolutions pass the value in the chosen layout. Measured with oneDNN 2.6 on
// AVX-512, 2 threads, batch 1, ResNet-50: plain-layout 1x1 convolutions run the gemm-based
// implementation, which takes 5.5 ms for 256x14x14 -> 1024 with a residual add against under
// 1 ms in the chosen layout.
//
// A residual add of the destination's shape is a sum post-op (the destination starts as the
// addend): the blocked implementations take it, while a binary post-op sends them to the slow one.
//
//===----------------------------------------------------------------------===//

#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/src/cpu/onednn/onednn_call.h"

namespace kiln::runtime::cpu {

namespace param = contract::param;
namespace {

using onednn::BindingInfo;
using onednn::CallView;

class ConvolutionKernel : public LibraryCallKernel {
 public:
  Status run(void* const* buffers) const override {
    std::unique_ptr<Workspace> workspace = acquireWorkspace();
    Status status = onednn::runOnStream(label, [&](dnnl::stream& stream) {
      std::unordered_map<int, dnnl::memory> args;
      dnnl::memory src = onednn::wrap(src_blocked ? pd.src_desc() : src_plain, buffers[0]);
      if (src_reorder && !src_blocked) {
        src_reorder->execute(stream, src, workspace->src);
        src = workspace->src;
      }
      args.emplace(DNNL_ARG_SRC, src);
      if (constant_weights) {
        args.emplace(DNNL_ARG_WEIGHTS, packed_weights);
      } else if (weights_reorder) {
        dnnl::memory given = onednn::wrap(weights_plain, buffers[1]);
        weights_reorder->execute(stream, given, workspace->weights);
        args.emplace(DNNL_ARG_WEIGHTS, workspace->weights);
      } else {
        args.emplace(DNNL_ARG_WEIGHTS, onednn::wrap(weights_plain, buffers[1]));
      }
      if (has_bias) args.emplace(DNNL_ARG_BIAS, onednn::wrap(bias_desc, buffers[2]));
      for (size_t i = 0; i < addends.size(); ++i)
        args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(addends[i].first) | DNNL_ARG_SRC_1,
                     onednn::wrap(addends[i].second, buffers[addend_bindings[i]]));
      dnnl::memory dst_user =
          onednn::wrap(dst_blocked ? pd.dst_desc() : dst_plain, buffers[dst_binding]);
      bool convert_dst = dst_reorder && !dst_blocked;
      dnnl::memory dst = convert_dst ? workspace->dst : dst_user;
      // A sum post-op accumulates into the destination: it starts as the addend, converted to
      // the destination's layout unless it already is in it. The memory plan may place the
      // destination over the addend (in_place); a conversion then goes through the workspace,
      // never from a buffer into itself.
      if (sum_binding >= 0) {
        bool same_layout = sum_blocked == static_cast<bool>(dst_reorder);
        void* target = dst.get_data_handle();
        if (!same_layout) {
          dnnl::memory addend = onednn::wrap(dst_plain, buffers[sum_binding]);
          if (buffers[sum_binding] == target) {
            sum_reorder->execute(stream, addend, workspace->dst);
            stream.wait();
            std::memcpy(target, workspace->dst.get_data_handle(), dst.get_desc().get_size());
          } else {
            sum_reorder->execute(stream, addend, dst);
          }
        } else if (buffers[sum_binding] != target) {
          std::memcpy(target, buffers[sum_binding], dst.get_desc().get_size());
        }
      }
      args.emplace(DNNL_ARG_DST, dst);
      if (workspace->scratchpad) args.emplace(DNNL_ARG_SCRATCHPAD, workspace->scratchpad);
      primitive.execute(stream, args);
      if (convert_dst) dst_reorder->execute(stream, dst, dst_user);
    });
    releaseWorkspace(std::move(workspace));
    return status;
  }

  bool writes(size_t binding) const override { return static_cast<int>(binding) == dst_binding; }

  std::shared_ptr<const ActivationLayout> nativeLayout(size_t binding) const override {
    if (static_cast<int>(binding) != dst_binding || !dst_reorder) return nullptr;
    return std::make_shared<onednn::Layout>(pd.dst_desc());
  }

  bool accepts(size_t binding, const ActivationLayout& layout) const override {
    const dnnl::memory::desc* desc = onednn::Layout::descOf(layout);
    if (!desc) return false;
    if (binding == 0) return src_reorder && *desc == pd.src_desc();
    if (static_cast<int>(binding) == sum_binding) return dst_reorder && *desc == pd.dst_desc();
    if (static_cast<int>(binding) == dst_binding) return dst_reorder && *desc == pd.dst_desc();
    return false;
  }

  void useLayout(size_t binding, const ActivationLayout& layout) override {
    (void)layout;
    if (binding == 0) src_blocked = true;
    if (static_cast<int>(binding) == sum_binding) sum_blocked = true;
    if (static_cast<int>(binding) == dst_binding) dst_blocked = true;
  }

  std::string label;
  dnnl::convolution_forward::primitive_desc pd;
  dnnl::convolution_forward primitive;
  dnnl::memory::desc src_plain, dst_plain, weights_plain, bias_desc;
  /// Weights computed as the program runs (widened from f16, say) are reordered into the
  /// primitive's layout each run.
  std::unique_ptr<dnnl::reorder> src_reorder, dst_reorder, sum_reorder, weights_reorder;
  bool has_bias = false;
  bool constant_weights = false;
  dnnl::memory packed_weights;
  std::vector<std::pair<int, dnnl::memory::desc>> addends;
  /// The binding each of `addends` reads, the sum post-op's addend (-1: none) and dst.
  std::vector<int> addend_bindings;
  int sum_binding = -1;
  int dst_binding = 0;
  /// Negotiated layouts (LibraryCallKernel::useLayout): the source, the sum post-op's addend and
  /// the destination are in the primitive's blocked layouts rather than plain.
  bool src_blocked = false, sum_blocked = false, dst_blocked = false;

 private:
  /// The blocked source and destination and the scratchpad of one run. Runs on several threads
  /// take one each; they are kept for later runs, so a run allocates nothing once warm.
  struct Workspace {
    dnnl::memory src, dst, weights, scratchpad;
  };

  std::unique_ptr<Workspace> acquireWorkspace() const {
    {
      std::lock_guard<std::mutex> lock(workspaces_mutex_);
      if (!free_workspaces_.empty()) {
        std::unique_ptr<Workspace> workspace = std::move(free_workspaces_.back());
        free_workspaces_.pop_back();
        return workspace;
      }
    }
    auto workspace = std::make_unique<Workspace>();
    if (src_reorder) workspace->src = dnnl::memory(pd.src_desc(), onednn::cpuEngine());
    if (dst_reorder) workspace->dst = dnnl::memory(pd.dst_desc(), onednn::cpuEngine());
    if (weights_reorder) workspace->weights = dnnl::memory(pd.weights_desc(), onednn::cpuEngine());
    if (pd.scratchpad_desc().get_size() != 0)
      workspace->scratchpad = dnnl::memory(pd.scratchpad_desc(), onednn::cpuEngine());
    return workspace;
  }

  void releaseWorkspace(std::unique_ptr<Workspace> workspace) const {
    std::lock_guard<std::mutex> lock(workspaces_mutex_);
    free_workspaces_.push_back(std::move(workspace));
  }

  mutable std::mutex workspaces_mutex_;
  mutable std::vector<std::unique_ptr<Workspace>> free_workspaces_;
};

dnnl::memory::desc anyDesc(const std::vector<int64_t>& dims, dnnl::memory::data_type type) {
  return dnnl::memory::desc(dnnl::memory::dims(dims.begin(), dims.end()), type,
                            dnnl::memory::format_tag::any);
}

}  // namespace

Status createOneDnnConvolution(const CallView& call, const uint8_t* constants,
                               std::unique_ptr<LibraryCallKernel>* out) {
  Status status;
  bool channels_last = false;
  if (!(status = onednn::readChannelsLast(call, &channels_last)).ok()) return status;

  const std::vector<BindingInfo>& bindings = call.bindings();
  int adds = onednn::countAddPostOps(call);
  int bias_count = static_cast<int>(bindings.size()) - 3 - adds;
  if (bias_count != 0 && bias_count != 1)
    return call.invalid("has " + std::to_string(bindings.size()) + " bindings; expected src, " +
                        "weights, an optional bias, " + std::to_string(adds) +
                        " 'add' post-op operand(s) and dst");
  const BindingInfo& src = bindings[0];
  const BindingInfo& weights = bindings[1];
  const BindingInfo& dst = bindings.back();
  size_t rank = src.dims.size();
  if (rank < 3 || rank > 5)
    return call.invalid("src has rank " + std::to_string(rank) + "; expected " +
                        (channels_last ? "N x D1..Dn x C" : "N x C x D1..Dn") +
                        " with 1 to 3 spatial dimensions");
  if (weights.dims.size() != rank || dst.dims.size() != rank)
    return call.invalid("src, weights and dst must have the same rank " + std::to_string(rank));
  // The checks below read N x C x D1..Dn (and weights K x C/G x D1..Dn) whatever the storage.
  const std::vector<int64_t> src_dims = onednn::channelsFirstDims(src.dims, channels_last),
                             dst_dims = onednn::channelsFirstDims(dst.dims, channels_last),
                             filter_dims = onednn::channelsFirstDims(weights.dims, channels_last);
  int spatial = static_cast<int>(rank) - 2;

  std::vector<int64_t> ones(spatial, 1), zeros(spatial, 0);
  std::vector<int64_t> strides, dilations, pads_begin, pads_end;
  if (!(status = call.ints(param::kStrides, spatial, &ones, &strides)).ok() ||
      !(status = call.ints(param::kDilations, spatial, &ones, &dilations)).ok() ||
      !(status = call.ints(param::kPadsBegin, spatial, &zeros, &pads_begin)).ok() ||
      !(status = call.ints(param::kPadsEnd, spatial, &zeros, &pads_end)).ok())
    return status;
  int64_t groups = 1;
  if (!(status = call.integer(param::kGroups, 1, &groups)).ok()) return status;

  int64_t batch = src_dims[0], channels = src_dims[1], features = filter_dims[0];
  if (groups < 1 || channels % groups != 0 || features % groups != 0)
    return call.invalid("groups = " + std::to_string(groups) + " must divide the " +
                        std::to_string(channels) + " input and " + std::to_string(features) +
                        " output channels");
  if (filter_dims[1] != channels / groups)
    return call.invalid("weights have " + std::to_string(filter_dims[1]) +
                        " input channels per group; src has " + std::to_string(channels) +
                        " channels in " + std::to_string(groups) + " group(s)");
  if (dst_dims[0] != batch || dst_dims[1] != features)
    return call.invalid("dst must be " + std::to_string(batch) + " x " + std::to_string(features) +
                        " x ...; got batch " + std::to_string(dst_dims[0]) + " and " +
                        std::to_string(dst_dims[1]) + " channels");
  for (int i = 0; i < spatial; ++i) {
    if (strides[i] < 1 || dilations[i] < 1 || pads_begin[i] < 0 || pads_end[i] < 0)
      return call.invalid("spatial dimension " + std::to_string(i) +
                          " has a stride or dilation below 1 or a negative pad");
    int64_t window = dilations[i] * (filter_dims[2 + i] - 1) + 1;
    int64_t padded = src_dims[2 + i] + pads_begin[i] + pads_end[i];
    int64_t expected = padded >= window ? (padded - window) / strides[i] + 1 : 0;
    if (expected < 1 || dst_dims[2 + i] != expected)
      return call.invalid("spatial dimension " + std::to_string(i) + " of dst is " +
                          std::to_string(dst_dims[2 + i]) + "; the window gives " +
                          std::to_string(expected));
  }
  bool has_bias = bias_count == 1;
  if (has_bias && bindings[2].dims != std::vector<int64_t>{features})
    return call.invalid("bias must have dims " + std::to_string(features));

  onednn::Epilogue epilogue;
  std::vector<BindingInfo> extra(bindings.begin() + 2 + bias_count, bindings.end() - 1);
  if (!(status = onednn::buildEpilogue(call, extra, dst.dims, &epilogue, /*allow_sum=*/true,
                                       channels_last))
           .ok())
    return status;

  auto kernel = std::make_unique<ConvolutionKernel>();
  kernel->label = call.label();
  kernel->has_bias = has_bias;
  kernel->addends = epilogue.addends;
  int first_extra = 2 + bias_count;
  for (int extra_index : epilogue.addend_extras)
    kernel->addend_bindings.push_back(first_extra + extra_index);
  if (epilogue.sum_extra >= 0) kernel->sum_binding = first_extra + epilogue.sum_extra;
  kernel->dst_binding = static_cast<int>(bindings.size()) - 1;
  kernel->constant_weights = weights.kind == kiln::artifact::BufferKind::Constant;
  const dnnl::memory::data_type src_type = onednn::dataType(src.element_type),
                                dst_type = onednn::dataType(dst.element_type),
                                weights_type = onednn::dataType(weights.element_type);
  // "plain": the caller's layout, NCHW or (channels_last) NHWC.
  kernel->src_plain = onednn::storedDesc(src.dims, src_type, channels_last);
  kernel->dst_plain = onednn::storedDesc(dst.dims, dst_type, channels_last);
  if (has_bias)
    kernel->bias_desc = onednn::plainDesc({features}, onednn::dataType(bindings[2].element_type));

  // oneDNN's grouped weights are G x M/G x C/G x K..., the same bytes as M x C/G x K...
  // (channels-last: G x M/G x K... x C/G as M x K... x C/G).
  std::vector<int64_t> stored_weights = weights.dims;
  if (groups > 1) {
    stored_weights[0] = features / groups;
    stored_weights.insert(stored_weights.begin(), groups);
  }
  const size_t leading = groups > 1 ? 2 : 1;
  kernel->weights_plain = onednn::storedDesc(stored_weights, weights_type, channels_last, leading);
  std::vector<int64_t> weight_dims =
      onednn::channelsFirstDims(stored_weights, channels_last, leading);
  // The primitive chooses the weights' layout; constant weights are reordered into it once,
  // others each run (oneDNN 2.6 has only its reference implementation for some user layouts,
  // channels-last weights among them: 3 s a call against milliseconds).
  dnnl::memory::desc weights_desc = anyDesc(weight_dims, weights_type);
  dnnl::memory::dims dnnl_strides(strides.begin(), strides.end());
  dnnl::memory::dims dnnl_dilations, dnnl_pads_begin(pads_begin.begin(), pads_begin.end()),
      dnnl_pads_end(pads_end.begin(), pads_end.end());
  for (int64_t d : dilations) dnnl_dilations.push_back(d - 1);  // oneDNN counts from 0

  dnnl::primitive_attr attr;
  attr.set_post_ops(epilogue.ops);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  auto makeDesc = [&](bool choose_activation_layout) {
    dnnl::memory::desc src_desc =
        choose_activation_layout ? anyDesc(src_dims, src_type) : kernel->src_plain;
    dnnl::memory::desc dst_desc =
        choose_activation_layout ? anyDesc(dst_dims, dst_type) : kernel->dst_plain;
    auto desc =
        has_bias ? dnnl::convolution_forward::desc(
                       dnnl::prop_kind::forward_inference, dnnl::algorithm::convolution_direct,
                       src_desc, weights_desc, kernel->bias_desc, dst_desc, dnnl_strides,
                       dnnl_dilations, dnnl_pads_begin, dnnl_pads_end)
                 : dnnl::convolution_forward::desc(dnnl::prop_kind::forward_inference,
                                                   dnnl::algorithm::convolution_direct, src_desc,
                                                   weights_desc, dst_desc, dnnl_strides,
                                                   dnnl_dilations, dnnl_pads_begin, dnnl_pads_end);
    return dnnl::convolution_forward::primitive_desc(desc, attr, onednn::cpuEngine());
  };
  // Larger kernels prefer oneDNN's blocked activations (see the file header); keep the plain
  // layout when that choice has no optimized implementation.
  bool blocked = false;
  {
    try {
      kernel->pd = makeDesc(true);
      blocked = std::string(kernel->pd.impl_info_str()).rfind("ref", 0) != 0;
    } catch (const dnnl::error&) {
      blocked = false;
    }
  }
  if (!blocked) {
    status = onednn::makePrimitiveDesc(
        call, [&] { return makeDesc(false); }, &kernel->pd);
    if (!status.ok()) return status;
  }

  status = onednn::runOnStream(call.label(), [&](dnnl::stream&) {
    kernel->primitive = dnnl::convolution_forward(kernel->pd);
    if (!kernel->constant_weights && kernel->pd.weights_desc() != kernel->weights_plain)
      kernel->weights_reorder = std::make_unique<dnnl::reorder>(
          dnnl::reorder::primitive_desc(onednn::cpuEngine(), kernel->weights_plain,
                                        onednn::cpuEngine(), kernel->pd.weights_desc()));
    if (kernel->pd.src_desc() != kernel->src_plain)
      kernel->src_reorder = std::make_unique<dnnl::reorder>(dnnl::reorder::primitive_desc(
          onednn::cpuEngine(), kernel->src_plain, onednn::cpuEngine(), kernel->pd.src_desc()));
    if (kernel->pd.dst_desc() != kernel->dst_plain) {
      kernel->dst_reorder = std::make_unique<dnnl::reorder>(dnnl::reorder::primitive_desc(
          onednn::cpuEngine(), kernel->pd.dst_desc(), onednn::cpuEngine(), kernel->dst_plain));
      if (kernel->sum_binding >= 0)
        kernel->sum_reorder = std::make_unique<dnnl::reorder>(dnnl::reorder::primitive_desc(
            onednn::cpuEngine(), kernel->dst_plain, onednn::cpuEngine(), kernel->pd.dst_desc()));
    }
  });
  if (!status.ok()) return status;
  if (kernel->constant_weights) {
    status = onednn::packConstant(call, weights, constants, kernel->weights_plain,
                                  kernel->pd.weights_desc(), &kernel->packed_weights);
    if (!status.ok()) return status;
  }
  *out = std::move(kernel);
  return Status();
}

}  // namespace kiln::runtime::cpu
