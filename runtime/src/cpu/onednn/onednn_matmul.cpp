//===- onednn_matmul.cpp - The onednn.matmul library call -------------------===//
//
// A oneDNN matmul over row-major caller buffers: a transposed operand is a strided view of the
// caller's bytes, batch dimensions broadcast NumPy-style (operands of lower rank get leading 1s).
// `a_view`, `b_view` and `dst_view` (library_call_view.h) read and write through any strides, so
// the transposes, slices and splits around attention's products are memory descriptors, not
// copies. A Constant `b` is reordered once, at load time, into the layout the primitive chose.
// Tensors are f32 or bf16 (oneDNN's bf16 kernels accumulate in f32).
//
//===----------------------------------------------------------------------===//

#include <cstring>
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
using runtime::StridedView;

class MatmulKernel : public LibraryCallKernel {
 public:
  Status run(void* const* buffers) const override {
    return onednn::runOnStream(label, [&](dnnl::stream& stream) {
      std::unordered_map<int, dnnl::memory> args;
      args.emplace(DNNL_ARG_SRC, onednn::wrap(a_desc, at(buffers[0], a_offset, a_desc)));
      args.emplace(DNNL_ARG_WEIGHTS,
                   constant_b ? packed_b : onednn::wrap(b_desc, at(buffers[1], b_offset, b_desc)));
      if (has_bias) args.emplace(DNNL_ARG_BIAS, onednn::wrap(bias_desc, buffers[2]));
      const int first_extra = has_bias ? 3 : 2;
      for (size_t i = 0; i < addends.size(); ++i)
        args.emplace(DNNL_ARG_ATTR_MULTIPLE_POST_OP(addends[i].first) | DNNL_ARG_SRC_1,
                     onednn::wrap(addends[i].second, buffers[first_extra + addend_extras[i]]));
      void* dst = at(buffers[dst_binding], dst_offset, dst_desc);
      // A sum post-op accumulates into the destination: it starts as the addend, unless the
      // memory plan placed it over the addend (in_place).
      if (sum_binding >= 0 && buffers[sum_binding] != dst)
        std::memcpy(dst, buffers[sum_binding], dst_desc.get_size());
      args.emplace(DNNL_ARG_DST, onednn::wrap(dst_desc, dst));
      onednn::addScratchpad(pd.scratchpad_desc(), &args);
      primitive.execute(stream, args);
    });
  }

  bool writes(size_t binding) const override { return binding == dst_binding; }

  /// `elements` past `buffer`, of `desc`'s element type.
  static void* at(void* buffer, int64_t elements, const dnnl::memory::desc& desc) {
    return static_cast<char*>(buffer) +
           elements * static_cast<int64_t>(dnnl::memory::data_type_size(desc.data_type()));
  }

  std::string label;
  size_t dst_binding = 0;
  dnnl::matmul::primitive_desc pd;
  dnnl::matmul primitive;
  dnnl::memory::desc a_desc, b_desc, bias_desc, dst_desc;
  /// Where the views start, in elements.
  int64_t a_offset = 0, b_offset = 0, dst_offset = 0;
  bool has_bias = false;
  /// The binding a sum post-op accumulates (a residual of the result's shape), or -1.
  int sum_binding = -1;
  bool constant_b = false;
  dnnl::memory packed_b;
  std::vector<std::pair<int, dnnl::memory::desc>> addends;
  /// Which extra binding (after a, b and the bias) each of `addends` reads.
  std::vector<int> addend_extras;
};

/// The descriptor of `view` as the product reads or writes it: padded with leading 1s to
/// `rank`, its last two dimensions swapped when `transposed`.
dnnl::memory::desc viewDesc(const StridedView& view, size_t rank, bool transposed,
                            dnnl::memory::data_type type) {
  dnnl::memory::dims dims(view.dims.begin(), view.dims.end());
  dnnl::memory::dims strides(view.strides.begin(), view.strides.end());
  int64_t extent = 1;
  for (size_t i = 0; i < dims.size(); ++i) extent = std::max(extent, dims[i] * strides[i]);
  dims.insert(dims.begin(), rank - dims.size(), 1);
  strides.insert(strides.begin(), rank - strides.size(), extent);
  if (transposed) {
    std::swap(dims[rank - 1], dims[rank - 2]);
    std::swap(strides[rank - 1], strides[rank - 2]);
  }
  return dnnl::memory::desc(dims, type, strides);
}

/// A product whose `b` has no batch (a layer's weights applied to a batch of rows) as one 2-D
/// product over every row of `a`: oneDNN 2.6 packs the constant weights of a 2-D product into its
/// blocked layout but keeps those of a batched one plain and re-reads them for each block of
/// rows (BERT's 768 x 3072 projection with GELU: 4.3 ms batched, 1.9 ms 2-D on the same
/// machine). Folds when a's and dst's batch dimensions lie over their rows as one run of
/// strides and every "add" operand either spans all of them or none (its dims in `extra` are
/// folded too); otherwise leaves everything as it was and returns false.
bool foldBatchIntoRows(dnnl::memory::desc* a, dnnl::memory::desc* b, dnnl::memory::desc* dst,
                       std::vector<BindingInfo>* extra) {
  const dnnl::memory::dims a_dims = a->dims(), b_dims = b->dims(), dst_dims = dst->dims();
  const size_t rank = dst_dims.size();
  if (rank <= 2) return false;
  int64_t rows = 1;
  for (size_t d = 0; d + 1 < rank; ++d) rows *= dst_dims[d];
  for (size_t d = 0; d + 2 < rank; ++d)
    if (b_dims[d] != 1 || a_dims[d] != dst_dims[d]) return false;
  std::vector<std::vector<int64_t>> folded_extra;
  for (const BindingInfo& binding : *extra) {
    if (binding.dims.size() > rank) return false;
    std::vector<int64_t> dims(rank - binding.dims.size(), 1);
    dims.insert(dims.end(), binding.dims.begin(), binding.dims.end());
    bool spans = true, none = true;
    for (size_t d = 0; d + 1 < rank; ++d) {
      spans = spans && dims[d] == dst_dims[d];
      none = none && dims[d] == 1;
    }
    if (!spans && !none) return false;
    folded_extra.push_back({spans ? rows : 1, dims[rank - 1]});
  }
  const int64_t k = a_dims[rank - 1], n = dst_dims[rank - 1];
  dnnl::memory::desc a2 = a->reshape({rows, k}, /*allow_empty=*/true);
  dnnl::memory::desc b2 = b->reshape({k, n}, /*allow_empty=*/true);
  dnnl::memory::desc dst2 = dst->reshape({rows, n}, /*allow_empty=*/true);
  if (a2.is_zero() || b2.is_zero() || dst2.is_zero()) return false;
  *a = a2;
  *b = b2;
  *dst = dst2;
  for (size_t i = 0; i < extra->size(); ++i) (*extra)[i].dims = folded_extra[i];
  return true;
}

}  // namespace

Status createOneDnnMatmul(const CallView& call, const uint8_t* constants,
                          std::unique_ptr<LibraryCallKernel>* out) {
  Status status;
  const std::vector<BindingInfo>& bindings = call.bindings();
  int adds = onednn::countAddPostOps(call);
  int bias_count = static_cast<int>(bindings.size()) - 3 - adds;
  if (bias_count != 0 && bias_count != 1)
    return call.invalid("has " + std::to_string(bindings.size()) + " bindings; expected a, b, " +
                        "an optional bias, " + std::to_string(adds) +
                        " 'add' post-op operand(s) and dst");
  bool trans_a = false, trans_b = false;
  if (!(status = call.flag(param::kTransA, false, &trans_a)).ok() ||
      !(status = call.flag(param::kTransB, false, &trans_b)).ok())
    return status;

  const BindingInfo& b = bindings[1];
  StridedView a_view, b_view, dst_view;
  if (!(status = call.view(param::kAView, 0, false, &a_view)).ok() ||
      !(status = call.view(param::kBView, 1, false, &b_view)).ok() ||
      !(status = call.view(param::kDstView, bindings.size() - 1, true, &dst_view)).ok())
    return status;
  size_t rank = dst_view.dims.size();
  if (a_view.dims.size() < 2 || b_view.dims.size() < 2 ||
      rank != std::max(a_view.dims.size(), b_view.dims.size()))
    return call.invalid("a and b must have rank >= 2 and dst the larger of their ranks");
  if (rank > 12) return call.invalid("rank " + std::to_string(rank) + " is above oneDNN's 12");
  const dnnl::memory::data_type b_type = onednn::dataType(b.element_type);
  dnnl::memory::desc a_desc =
      viewDesc(a_view, rank, trans_a, onednn::dataType(bindings[0].element_type));
  dnnl::memory::desc b_desc_plain = viewDesc(b_view, rank, trans_b, b_type);
  const std::vector<int64_t>& dst_dims = dst_view.dims;
  dnnl::memory::dims a_dims = a_desc.dims(), b_dims = b_desc_plain.dims();
  int64_t m = a_dims[rank - 2], k = a_dims[rank - 1], n = b_dims[rank - 1];
  if (b_dims[rank - 2] != k)
    return call.invalid("a's contraction size " + std::to_string(k) + " differs from b's " +
                        std::to_string(b_dims[rank - 2]));
  if (dst_dims[rank - 2] != m || dst_dims[rank - 1] != n)
    return call.invalid("dst must end in " + std::to_string(m) + " x " + std::to_string(n));
  for (size_t d = 0; d + 2 < rank; ++d) {
    int64_t want = std::max(a_dims[d], b_dims[d]);
    if ((a_dims[d] != 1 && a_dims[d] != want) || (b_dims[d] != 1 && b_dims[d] != want) ||
        dst_dims[d] != want)
      return call.invalid("batch dimension " + std::to_string(d) + " of a (" +
                          std::to_string(a_dims[d]) + ") and b (" + std::to_string(b_dims[d]) +
                          ") does not broadcast to dst's " + std::to_string(dst_dims[d]));
  }
  bool has_bias = bias_count == 1;
  if (has_bias && bindings[2].dims != std::vector<int64_t>{n})
    return call.invalid("bias must have dims " + std::to_string(n));

  std::vector<BindingInfo> extra(bindings.begin() + 2 + bias_count, bindings.end() - 1);
  dnnl::memory::desc dst_desc =
      viewDesc(dst_view, rank, false, onednn::dataType(bindings.back().element_type));
  std::vector<int64_t> out_dims = dst_dims;
  if (foldBatchIntoRows(&a_desc, &b_desc_plain, &dst_desc, &extra)) {
    rank = 2;
    out_dims = {dst_desc.dims()[0], n};
  }

  onednn::Epilogue epilogue;
  // A residual added first (after the bias), of the result's dims and type, is a sum post-op:
  // the destination starts as the addend, so the memory plan may put the two in one place
  // (kiln-form-program's in_place pair, compiler/program/FormProgram.cpp, mirrors this rule).
  std::vector<contract::PostOp> ops = call.postOps();
  bool sum_first = !ops.empty() && ops[0] == contract::PostOp::Add && !extra.empty() &&
                   !dst_view.given && extra[0].dims == out_dims &&
                   extra[0].element_type == bindings.back().element_type;
  if (!(status = onednn::buildEpilogue(call, extra, out_dims, &epilogue, sum_first)).ok())
    return status;
  if (dst_view.given && !epilogue.addends.empty())
    return call.invalid("takes no 'add' post-op with a dst_view (the addend is row-major)");

  auto kernel = std::make_unique<MatmulKernel>();
  kernel->label = call.label();
  kernel->dst_binding = call.bindings().size() - 1;
  kernel->has_bias = has_bias;
  kernel->addends = epilogue.addends;
  kernel->addend_extras = epilogue.addend_extras;
  if (epilogue.sum_extra >= 0) kernel->sum_binding = 2 + bias_count + epilogue.sum_extra;
  kernel->constant_b = b.kind == kiln::artifact::BufferKind::Constant;
  kernel->a_desc = a_desc;
  kernel->b_desc = b_desc_plain;
  kernel->dst_desc = dst_desc;
  kernel->a_offset = a_view.offset;
  kernel->b_offset = b_view.offset;
  kernel->dst_offset = dst_view.offset;
  std::vector<int64_t> bias_dims(rank, 1);
  bias_dims[rank - 1] = n;
  if (has_bias)
    kernel->bias_desc = onednn::plainDesc(bias_dims, onednn::dataType(bindings[2].element_type));

  dnnl::memory::desc b_desc = kernel->constant_b ? dnnl::memory::desc(b_desc_plain.dims(), b_type,
                                                                      dnnl::memory::format_tag::any)
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
    BindingInfo viewed = b;
    viewed.offset += static_cast<uint64_t>(b_view.offset) * dnnl::memory::data_type_size(b_type);
    status = onednn::packConstant(call, viewed, constants, b_desc_plain, kernel->pd.weights_desc(),
                                  &kernel->packed_b);
    if (!status.ok()) return status;
  }
  *out = std::move(kernel);
  return Status();
}

}  // namespace kiln::runtime::cpu
