//===- onednn_matmul.cpp - The onednn.matmul library call -------------------===//
//
// A oneDNN matmul over row-major caller buffers: a transposed operand is a strided view of the
// caller's bytes, batch dimensions broadcast NumPy-style (operands of lower rank get leading 1s).
// A Constant `b` is reordered once, at load time, into the layout the primitive chose.
//
//===----------------------------------------------------------------------===//

#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/src/cpu/onednn/onednn_call.h"

namespace kiln::runtime::cpu {
namespace {

using onednn::BindingInfo;
using onednn::CallView;

class MatmulKernel : public LibraryCallKernel {
 public:
  Status run(void* const* buffers) const override {
    return onednn::runOnStream(label, [&](dnnl::stream& stream) {
      std::unordered_map<int, dnnl::memory> args;
      args.emplace(DNNL_ARG_SRC, onednn::wrap(a_desc, buffers[0]));
      args.emplace(DNNL_ARG_WEIGHTS, constant_b ? packed_b : onednn::wrap(b_desc, buffers[1]));
      if (has_bias) args.emplace(DNNL_ARG_BIAS, onednn::wrap(bias_desc, buffers[2]));
      int next = has_bias ? 3 : 2;
      for (const auto& addend : addends)
        args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(addend.first) | DNNL_ARG_SRC_1,
                     onednn::wrap(addend.second, buffers[next++]));
      args.emplace(DNNL_ARG_DST, onednn::wrap(dst_desc, buffers[next]));
      onednn::addScratchpad(pd.scratchpad_desc(), &args);
      primitive.execute(stream, args);
    });
  }

  bool writes(size_t binding) const override { return binding == dst_binding; }

  std::string label;
  size_t dst_binding = 0;
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul primitive;
  dnnl::memory::desc a_desc, b_desc, bias_desc, dst_desc;
  bool has_bias = false;
  bool constant_b = false;
  dnnl::memory packed_b;
  std::vector<std::pair<int, dnnl::memory::desc>> addends;
};

/// The logical (rows x cols after the transpose) descriptor of a row-major operand stored as
/// `stored`, padded with leading 1s to `rank`.
dnnl::memory::desc operandDesc(std::vector<int64_t> stored, size_t rank, bool transposed) {
  stored.insert(stored.begin(), rank - stored.size(), 1);
  dnnl::memory::dims strides(rank, 1);
  for (int i = static_cast<int>(rank) - 2; i >= 0; --i) strides[i] = strides[i + 1] * stored[i + 1];
  dnnl::memory::dims dims(stored.begin(), stored.end());
  if (transposed) {
    std::swap(dims[rank - 1], dims[rank - 2]);
    std::swap(strides[rank - 1], strides[rank - 2]);
  }
  return dnnl::memory::desc(dims, dnnl::memory::data_type::f32, strides);
}

}  // namespace

Status createOneDnnMatmul(const CallView& call, const uint8_t* constants,
                          std::unique_ptr<LibraryCallKernel>* out) {
  Status status = call.checkKeys({"trans_a", "trans_b", "post_ops", "post_op_args"});
  if (!status.ok()) return status;
  const std::vector<BindingInfo>& bindings = call.bindings();
  int adds = onednn::countAddPostOps(call);
  int bias_count = static_cast<int>(bindings.size()) - 3 - adds;
  if (bias_count != 0 && bias_count != 1)
    return call.invalid("has " + std::to_string(bindings.size()) + " bindings; expected a, b, " +
                        "an optional bias, " + std::to_string(adds) +
                        " 'add' post-op operand(s) and dst");
  int64_t trans_a = 0, trans_b = 0;
  if (!(status = call.intScalar("trans_a", 0, &trans_a)).ok() ||
      !(status = call.intScalar("trans_b", 0, &trans_b)).ok())
    return status;
  if ((trans_a != 0 && trans_a != 1) || (trans_b != 0 && trans_b != 1))
    return call.invalid("trans_a and trans_b must be 0 or 1");

  const BindingInfo& a = bindings[0];
  const BindingInfo& b = bindings[1];
  const BindingInfo& dst = bindings.back();
  size_t rank = dst.dims.size();
  if (a.dims.size() < 2 || b.dims.size() < 2 || rank != std::max(a.dims.size(), b.dims.size()))
    return call.invalid("a and b must have rank >= 2 and dst the larger of their ranks");
  if (rank > 12) return call.invalid("rank " + std::to_string(rank) + " is above oneDNN's 12");
  dnnl::memory::desc a_desc = operandDesc(a.dims, rank, trans_a);
  dnnl::memory::desc b_desc_plain = operandDesc(b.dims, rank, trans_b);
  dnnl::memory::dims a_dims = a_desc.dims(), b_dims = b_desc_plain.dims();
  int64_t m = a_dims[rank - 2], k = a_dims[rank - 1], n = b_dims[rank - 1];
  if (b_dims[rank - 2] != k)
    return call.invalid("a's contraction size " + std::to_string(k) + " differs from b's " +
                        std::to_string(b_dims[rank - 2]));
  if (dst.dims[rank - 2] != m || dst.dims[rank - 1] != n)
    return call.invalid("dst must end in " + std::to_string(m) + " x " + std::to_string(n));
  for (size_t d = 0; d + 2 < rank; ++d) {
    int64_t want = std::max(a_dims[d], b_dims[d]);
    if ((a_dims[d] != 1 && a_dims[d] != want) || (b_dims[d] != 1 && b_dims[d] != want) ||
        dst.dims[d] != want)
      return call.invalid("batch dimension " + std::to_string(d) + " of a (" +
                          std::to_string(a_dims[d]) + ") and b (" + std::to_string(b_dims[d]) +
                          ") does not broadcast to dst's " + std::to_string(dst.dims[d]));
  }
  bool has_bias = bias_count == 1;
  if (has_bias && bindings[2].dims != std::vector<int64_t>{n})
    return call.invalid("bias must have dims " + std::to_string(n));

  onednn::Epilogue epilogue;
  std::vector<BindingInfo> extra(bindings.begin() + 2 + bias_count, bindings.end() - 1);
  if (!(status = onednn::buildEpilogue(call, extra, dst.dims, &epilogue)).ok()) return status;

  auto kernel = std::make_unique<MatmulKernel>();
  kernel->label = call.label();
  kernel->dst_binding = call.bindings().size() - 1;
  kernel->has_bias = has_bias;
  kernel->addends = epilogue.addends;
  kernel->constant_b = b.kind == kiln::artifact::BufferKind::Constant;
  kernel->a_desc = a_desc;
  kernel->b_desc = b_desc_plain;
  kernel->dst_desc = onednn::plainDesc(dst.dims);
  std::vector<int64_t> bias_dims(rank, 1);
  bias_dims[rank - 1] = n;
  kernel->bias_desc = onednn::plainDesc(bias_dims);

  dnnl::memory::desc b_desc =
      kernel->constant_b
          ? dnnl::memory::desc(b_dims, dnnl::memory::data_type::f32, dnnl::memory::format_tag::any)
          : b_desc_plain;
  dnnl::primitive_attr attr;
  attr.set_post_ops(epilogue.ops);
  attr.set_scratchpad_mode(dnnl::scratchpad_mode::user);
  status = onednn::makePrimitiveDesc(
      call,
      [&] {
        auto desc = has_bias
                        ? dnnl::matmul::desc(a_desc, b_desc, kernel->bias_desc, kernel->dst_desc)
                        : dnnl::matmul::desc(a_desc, b_desc, kernel->dst_desc);
        return dnnl::matmul::primitive_desc(desc, attr, onednn::cpuEngine());
      },
      &kernel->pd);
  if (!status.ok()) return status;
  status = onednn::runOnStream(
      call.label(), [&](dnnl::stream&) { kernel->primitive = dnnl::matmul(kernel->pd); });
  if (!status.ok()) return status;
  if (kernel->constant_b) {
    status = onednn::packConstant(call, b, constants, b_desc_plain, kernel->pd.weights_desc(),
                                  &kernel->packed_b);
    if (!status.ok()) return status;
  }
  *out = std::move(kernel);
  return Status();
}

}  // namespace kiln::runtime::cpu
