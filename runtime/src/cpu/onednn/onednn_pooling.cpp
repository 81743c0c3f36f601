//===- onednn_pooling.cpp - The onednn.pooling library call -----------------===//
//
// A forward-inference oneDNN max or average pooling over row-major NCHW (NCW, NCDHW) caller
// buffers, or NHWC ones with `channels_last`, f32 or bf16. oneDNN reads the padding as absent (a max pool never sees it; an average
// pool counts it or not by its algorithm), so no padded copy of the input is ever made: a max
// pool after a convolution keeps only the convolution's output and its own alive.
//
//===----------------------------------------------------------------------===//

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

class PoolingKernel : public LibraryCallKernel {
 public:
  Status run(void* const* buffers) const override {
    return onednn::runOnStream(label, [&](dnnl::stream& stream) {
      std::unordered_map<int, dnnl::memory> args;
      args.emplace(DNNL_ARG_SRC, onednn::wrap(src_desc, buffers[0]));
      args.emplace(DNNL_ARG_DST, onednn::wrap(dst_desc, buffers[1]));
      onednn::addScratchpad(pd.scratchpad_desc(), &args);
      primitive.execute(stream, args);
    });
  }

  bool writes(size_t binding) const override { return binding == 1; }

  std::string label;
  dnnl::memory::desc src_desc, dst_desc;
  dnnl::pooling_v2_forward::primitive_desc pd;
  dnnl::pooling_v2_forward primitive;
};

}  // namespace

Status createOneDnnPooling(const CallView& call, std::unique_ptr<LibraryCallKernel>* out) {
  Status status;
  bool channels_last = false;
  if (!(status = onednn::readChannelsLast(call, &channels_last)).ok()) return status;
  const std::vector<BindingInfo>& bindings = call.bindings();
  if (bindings.size() != 2) return call.invalid("expected 2 bindings (src, dst)");
  const BindingInfo& src = bindings[0];
  const BindingInfo& dst = bindings[1];
  const size_t rank = src.dims.size();
  if (rank < 3 || rank > 5 || dst.dims.size() != rank)
    return call.invalid(std::string("src and dst must both be ") +
                        (channels_last ? "N x D1..Dn x C" : "N x C x D1..Dn") +
                        " with n = 1, 2 or 3");
  if (src.element_type != dst.element_type)
    return call.invalid("src and dst must have one element type");
  // The checks below read N x C x D1..Dn whatever the storage.
  const std::vector<int64_t> src_dims = onednn::channelsFirstDims(src.dims, channels_last),
                             dst_dims = onednn::channelsFirstDims(dst.dims, channels_last);
  const int spatial = static_cast<int>(rank) - 2;
  std::vector<int64_t> kernel, strides, dilations, pads_begin, pads_end;
  const std::vector<int64_t> ones(spatial, 1), zeros(spatial, 0);
  if (!(status = call.ints(param::kKernel, spatial, nullptr, &kernel)).ok() ||
      !(status = call.ints(param::kStrides, spatial, &ones, &strides)).ok() ||
      !(status = call.ints(param::kDilations, spatial, &ones, &dilations)).ok() ||
      !(status = call.ints(param::kPadsBegin, spatial, &zeros, &pads_begin)).ok() ||
      !(status = call.ints(param::kPadsEnd, spatial, &zeros, &pads_end)).ok())
    return status;
  std::vector<std::string> kind = call.strings(param::kPoolingKind);
  std::optional<contract::PoolingKind> pooling =
      kind.size() == 1 ? contract::parsePoolingKind(kind[0]) : std::nullopt;
  if (!pooling)
    return call.invalid("'kind' must be one of max, avg_include_pad, avg_exclude_pad");
  dnnl::algorithm algorithm = dnnl::algorithm::pooling_max;
  switch (*pooling) {
    case contract::PoolingKind::Max:
      algorithm = dnnl::algorithm::pooling_max;
      break;
    case contract::PoolingKind::AvgIncludePad:
      algorithm = dnnl::algorithm::pooling_avg_include_padding;
      break;
    case contract::PoolingKind::AvgExcludePad:
      algorithm = dnnl::algorithm::pooling_avg_exclude_padding;
      break;
  }
  if (src_dims[0] != dst_dims[0] || src_dims[1] != dst_dims[1])
    return call.invalid("dst must keep src's N and C (" + formatTypeDims(src_dims) + " -> " +
                        formatTypeDims(dst_dims) + ")");
  for (int i = 0; i < spatial; ++i) {
    if (kernel[i] < 1 || strides[i] < 1 || dilations[i] < 1 || pads_begin[i] < 0 || pads_end[i] < 0)
      return call.invalid("kernel, strides and dilations must be >= 1 and pads >= 0");
    // oneDNN's rule: out = (in + pads - dilation * (k - 1) - 1) / stride + 1, rounded down.
    int64_t reach = dilations[i] * (kernel[i] - 1) + 1;
    int64_t expected = (src_dims[i + 2] + pads_begin[i] + pads_end[i] - reach) / strides[i] + 1;
    if (src_dims[i + 2] + pads_begin[i] + pads_end[i] < reach || dst_dims[i + 2] != expected)
      return call.invalid("spatial dimension " + std::to_string(i) + " of dst is " +
                          std::to_string(dst_dims[i + 2]) + "; kernel, strides, dilations and " +
                          "pads give " + std::to_string(expected));
  }

  auto kernel_ptr = std::make_unique<PoolingKernel>();
  PoolingKernel& k = *kernel_ptr;
  k.label = call.label();
  const dnnl::memory::data_type type = onednn::dataType(src.element_type);
  k.src_desc = onednn::storedDesc(src.dims, type, channels_last);
  k.dst_desc = onednn::storedDesc(dst.dims, type, channels_last);
  // oneDNN counts dilations from 0 (dense); ONNX from 1.
  dnnl::memory::dims dnnl_dilations;
  for (int64_t d : dilations) dnnl_dilations.push_back(d - 1);
  dnnl::primitive_attr attr;
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  status = onednn::makePrimitiveDesc(
      call,
      [&] {
        dnnl::pooling_v2_forward::desc desc(dnnl::prop_kind::forward_inference, algorithm,
                                            k.src_desc, k.dst_desc, strides, kernel, dnnl_dilations,
                                            pads_begin, pads_end);
        return dnnl::pooling_v2_forward::primitive_desc(desc, attr, onednn::cpuEngine());
      },
      &k.pd);
  if (!status.ok()) return status;
  status = onednn::runOnStream(
      call.label(), [&](dnnl::stream&) { k.primitive = dnnl::pooling_v2_forward(k.pd); });
  if (!status.ok()) return status;
  *out = std::move(kernel_ptr);
  return Status();
}

}  // namespace kiln::runtime::cpu
