//===- onednn_call.cpp - Reading oneDNN library calls and their epilogues ---===//

#include "runtime/src/cpu/onednn/onednn_call.h"

#include <algorithm>
#include <limits>
#include <utility>

namespace kiln::runtime::cpu::onednn {

using contract::PostOp;
namespace param = contract::param;

const dnnl::engine& cpuEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

int countAddPostOps(const CallView& call) {
  std::vector<PostOp> ops = call.postOps();
  return static_cast<int>(std::count(ops.begin(), ops.end(), PostOp::Add));
}

dnnl::memory::data_type dataType(kiln_element_type_t type) {
  return type == KILN_ELEMENT_TYPE_BF16 ? dnnl::memory::data_type::bf16
                                        : dnnl::memory::data_type::f32;
}

dnnl::memory::desc plainDesc(const std::vector<int64_t>& dims, dnnl::memory::data_type type) {
  return dnnl::memory::desc(dnnl::memory::dims(dims.begin(), dims.end()), type,
                            rowMajorStrides(dims));
}

Status readChannelsLast(const CallView& call, bool* out) {
  return call.flag(param::kChannelsLast, false, out);
}

std::vector<int64_t> channelsFirstDims(const std::vector<int64_t>& stored, bool channels_last,
                                       size_t leading) {
  if (!channels_last || stored.size() < leading + 2) return stored;
  std::vector<int64_t> dims(stored.begin(), stored.begin() + leading);
  dims.push_back(stored.back());
  dims.insert(dims.end(), stored.begin() + leading, stored.end() - 1);
  return dims;
}

dnnl::memory::desc storedDesc(const std::vector<int64_t>& stored, dnnl::memory::data_type type,
                              bool channels_last, size_t leading) {
  dnnl::memory::desc plain = plainDesc(stored, type);
  if (!channels_last || stored.size() < leading + 2) return plain;
  // permute_axes sends axis i of the stored order to position permutation[i].
  std::vector<int> permutation;
  for (size_t i = 0; i < stored.size(); ++i)
    permutation.push_back(
        static_cast<int>(i < leading ? i : (i + 1 == stored.size() ? leading : i + 1)));
  return plain.permute_axes(permutation);
}

Status buildEpilogue(const CallView& call, const std::vector<BindingInfo>& extra,
                     const std::vector<int64_t>& dst, Epilogue* out, bool allow_sum,
                     bool channels_last) {
  // The call's entry in the contract has checked that oneDNN fuses each of them.
  std::vector<PostOp> ops = call.postOps();
  std::vector<float> args = call.floats(param::kPostOpArgs);
  size_t next_arg = 0;
  size_t next_extra = 0;
  Epilogue epilogue;
  for (size_t i = 0; i < ops.size(); ++i) {
    const PostOp op = ops[i];
    const std::string kind(contract::postOpName(op));
    const unsigned arg_count = contract::postOpArgCount(op);
    if (next_arg + arg_count > args.size())
      return call.invalid("post-op " + std::to_string(i) + " ('" + kind + "') needs " +
                          std::to_string(arg_count) + " values of 'post_op_args', which has " +
                          std::to_string(args.size()) + " in all");
    const float* a = args.data() + next_arg;
    next_arg += arg_count;
    if (op == PostOp::Relu) {
      epilogue.ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    } else if (op == PostOp::GeluErf) {
      epilogue.ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_erf, 0.0f, 0.0f);
    } else if (op == PostOp::GeluTanh) {
      epilogue.ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_gelu_tanh, 0.0f, 0.0f);
    } else if (op == PostOp::Swish) {
      // oneDNN's swish is x * sigmoid(alpha x); SiLU is alpha = 1.
      epilogue.ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_swish, 1.0f, 0.0f);
    } else if (op == PostOp::Clip) {
      if (!(a[0] <= a[1]))
        return call.invalid("clip post-op " + std::to_string(i) + " has low bound " +
                            std::to_string(a[0]) + " above high bound " + std::to_string(a[1]));
      epilogue.ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip_v2, a[0], a[1]);
    } else if (op == PostOp::Linear) {
      epilogue.ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, a[0], a[1]);
    } else if (op != PostOp::Add) {
      return call.invalid("post-op " + std::to_string(i) + " is '" + kind +
                          "'; oneDNN calls fuse relu, gelu_erf, gelu_tanh, swish, clip, linear "
                          "or add");
    } else {
      if (next_extra >= extra.size())
        return call.invalid("has more 'add' post-ops than operands for them");
      const std::vector<int64_t>& dims = extra[next_extra].dims;
      if (dims.size() > dst.size())
        return call.invalid("the operand of 'add' post-op " + std::to_string(i) + " has rank " +
                            std::to_string(dims.size()) + ", above the result's " +
                            std::to_string(dst.size()));
      std::vector<int64_t> broadcast(dst.size() - dims.size(), 1);
      broadcast.insert(broadcast.end(), dims.begin(), dims.end());
      for (size_t d = 0; d < dst.size(); ++d)
        if (broadcast[d] != 1 && broadcast[d] != dst[d])
          return call.invalid("the operand of 'add' post-op " + std::to_string(i) + " (" +
                              formatTypeDims(dims) + ") does not broadcast to the result (" +
                              formatTypeDims(dst) + ")");
      if (allow_sum && epilogue.sum_extra < 0 && dims == dst) {
        epilogue.sum_extra = static_cast<int>(next_extra);
        epilogue.ops.append_sum(1.0f);
      } else {
        dnnl::memory::desc desc =
            storedDesc(broadcast, dataType(extra[next_extra].element_type), channels_last);
        epilogue.addends.emplace_back(epilogue.ops.len(), desc);
        epilogue.addend_extras.push_back(static_cast<int>(next_extra));
        epilogue.ops.append_binary(dnnl::algorithm::binary_add, desc);
      }
      ++next_extra;
    }
  }
  if (next_arg != args.size())
    return call.invalid("'post_op_args' has " + std::to_string(args.size()) +
                        " values, the post-ops use " + std::to_string(next_arg));
  if (next_extra != extra.size())
    return call.invalid("has " + std::to_string(extra.size()) + " post-op operands but " +
                        std::to_string(next_extra) + " 'add' post-ops");
  *out = std::move(epilogue);
  return Status();
}

void addScratchpad(const dnnl::memory::desc& desc, std::unordered_map<int, dnnl::memory>* args) {
  if (desc.get_size() == 0) return;
  args->emplace(DNNL_ARG_SCRATCHPAD, dnnl::memory(desc, cpuEngine()));
}

dnnl::memory wrap(const dnnl::memory::desc& desc, void* data) {
  return dnnl::memory(desc, cpuEngine(), data);
}

Status packConstant(const CallView& call, const BindingInfo& binding, const uint8_t* constants,
                    const dnnl::memory::desc& source, const dnnl::memory::desc& packed,
                    dnnl::memory* out) {
  if (constants == nullptr)
    return call.invalid("a binding is a Constant buffer but the artifact has no constants");
  // oneDNN reads the source only; the memory object just needs a mutable pointer type.
  void* data = const_cast<uint8_t*>(constants + binding.offset);
  return runOnStream(call.label(), [&](dnnl::stream& stream) {
    dnnl::memory from = wrap(source, data);
    dnnl::memory to(packed, cpuEngine());
    dnnl::reorder(from, to).execute(stream, from, to);
    *out = to;
  });
}

}  // namespace kiln::runtime::cpu::onednn
