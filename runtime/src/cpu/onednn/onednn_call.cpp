//===- onednn_call.cpp - Reading oneDNN library calls and their epilogues ---===//

#include "runtime/src/cpu/onednn/onednn_call.h"

#include <algorithm>
#include <limits>
#include <sstream>
#include <utility>

namespace kiln::runtime::cpu::onednn {
namespace {

std::string dimsToString(const std::vector<int64_t>& dims) {
  std::ostringstream text;
  for (size_t i = 0; i < dims.size(); ++i) text << (i ? "x" : "") << dims[i];
  return dims.empty() ? "scalar" : text.str();
}

/// The argument count of each post-op kind; -1 for an unknown kind.
int postOpArgCount(const std::string& kind) {
  if (kind == "relu" || kind == "add") return 0;
  if (kind == "clip" || kind == "linear") return 2;
  return -1;
}

}  // namespace

const dnnl::engine& cpuEngine() {
  static const dnnl::engine engine(dnnl::engine::kind::cpu, 0);
  return engine;
}

Status CallView::create(const kiln::artifact::LibraryCall& call, CallView* out) {
  CallView view;
  view.name_ = call.name() ? call.name()->str() : std::string();
  view.label_ = "library call '" + view.name_ + "'";
  if (call.description() && call.description()->size() > 0)
    view.label_ += " (" + call.description()->str() + ")";
  if (!call.bindings()) return view.invalid("has no bindings");
  for (flatbuffers::uoffset_t i = 0; i < call.bindings()->size(); ++i) {
    const kiln::artifact::Binding* binding = call.bindings()->Get(i);
    if (!binding || !binding->buffer() || !binding->type())
      return view.invalid("binding " + std::to_string(i) + " lacks its buffer or type");
    if (binding->type()->element_type() != KILN_ELEMENT_TYPE_F32)
      return view.invalid("binding " + std::to_string(i) + " has element type " +
                          std::to_string(binding->type()->element_type()) +
                          "; oneDNN calls take f32 tensors only");
    BindingInfo info;
    info.kind = binding->buffer()->kind();
    info.offset = binding->buffer()->offset();
    uint64_t elements = 1;
    if (binding->type()->dims()) {
      for (int64_t dim : *binding->type()->dims()) {
        if (dim <= 0 || dim > (int64_t{1} << 40))
          return view.invalid("binding " + std::to_string(i) + " has dimension " +
                              std::to_string(dim) + "; expected a static size >= 1");
        info.dims.push_back(dim);
        elements *= static_cast<uint64_t>(dim);
        if (elements > (uint64_t{1} << 48))
          return view.invalid("binding " + std::to_string(i) + " is too large");
      }
    }
    if (binding->buffer()->size() < elements * sizeof(float))
      return view.invalid("binding " + std::to_string(i) + " of type " +
                          dimsToString(info.dims) + "xf32 needs " +
                          std::to_string(elements * sizeof(float)) + " bytes, its buffer has " +
                          std::to_string(binding->buffer()->size()));
    view.bindings_.push_back(std::move(info));
  }

  auto duplicate = [&](const std::string& key) { return view.invalid("repeats parameter '" + key + "'"); };
  if (call.int_params()) {
    for (const kiln::artifact::IntParam* param : *call.int_params()) {
      std::vector<int64_t> values;
      if (param->values()) values.assign(param->values()->begin(), param->values()->end());
      if (!view.ints_.emplace(param->key()->str(), std::move(values)).second)
        return duplicate(param->key()->str());
    }
  }
  if (call.float_params()) {
    for (const kiln::artifact::FloatParam* param : *call.float_params()) {
      std::vector<float> values;
      if (param->values()) values.assign(param->values()->begin(), param->values()->end());
      if (!view.floats_.emplace(param->key()->str(), std::move(values)).second)
        return duplicate(param->key()->str());
    }
  }
  if (call.string_params()) {
    for (const kiln::artifact::StringParam* param : *call.string_params()) {
      std::vector<std::string> values;
      if (param->values())
        for (const flatbuffers::String* value : *param->values())
          values.push_back(value ? value->str() : std::string());
      if (!view.strings_.emplace(param->key()->str(), std::move(values)).second)
        return duplicate(param->key()->str());
    }
  }
  *out = std::move(view);
  return Status();
}

Status CallView::invalid(const std::string& message) const {
  return Status(KILN_STATUS_INVALID_ARGUMENT, label_ + ": " + message);
}

Status CallView::ints(const std::string& key, int count, const std::vector<int64_t>* fallback,
                      std::vector<int64_t>* out) const {
  auto it = ints_.find(key);
  if (it == ints_.end()) {
    if (!fallback) return invalid("lacks the int parameter '" + key + "'");
    *out = *fallback;
    return Status();
  }
  if (count >= 0 && it->second.size() != static_cast<size_t>(count))
    return invalid("parameter '" + key + "' has " + std::to_string(it->second.size()) +
                   " values, expected " + std::to_string(count));
  *out = it->second;
  return Status();
}

Status CallView::intScalar(const std::string& key, int64_t fallback, int64_t* out) const {
  std::vector<int64_t> values;
  std::vector<int64_t> defaults{fallback};
  Status status = ints(key, 1, &defaults, &values);
  if (!status.ok()) return status;
  *out = values[0];
  return Status();
}

std::vector<std::string> CallView::strings(const std::string& key) const {
  auto it = strings_.find(key);
  return it == strings_.end() ? std::vector<std::string>() : it->second;
}

std::vector<float> CallView::floats(const std::string& key) const {
  auto it = floats_.find(key);
  return it == floats_.end() ? std::vector<float>() : it->second;
}

Status CallView::checkKeys(const std::vector<std::string>& known) const {
  auto isKnown = [&](const std::string& key) {
    return std::find(known.begin(), known.end(), key) != known.end();
  };
  for (const auto& entry : ints_)
    if (!isKnown(entry.first)) return invalid("has unknown int parameter '" + entry.first + "'");
  for (const auto& entry : floats_)
    if (!isKnown(entry.first)) return invalid("has unknown float parameter '" + entry.first + "'");
  for (const auto& entry : strings_)
    if (!isKnown(entry.first))
      return invalid("has unknown string parameter '" + entry.first + "'");
  return Status();
}

int countAddPostOps(const CallView& call) {
  std::vector<std::string> kinds = call.strings("post_ops");
  return static_cast<int>(std::count(kinds.begin(), kinds.end(), "add"));
}

dnnl::memory::desc plainDesc(const std::vector<int64_t>& dims) {
  dnnl::memory::dims shape(dims.begin(), dims.end());
  dnnl::memory::dims strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i)
    strides[i] = strides[i + 1] * dims[i + 1];
  return dnnl::memory::desc(shape, dnnl::memory::data_type::f32, strides);
}

Status buildEpilogue(const CallView& call, const std::vector<BindingInfo>& extra,
                     const std::vector<int64_t>& dst, Epilogue* out, bool allow_sum) {
  std::vector<std::string> kinds = call.strings("post_ops");
  std::vector<float> args = call.floats("post_op_args");
  size_t next_arg = 0;
  size_t next_extra = 0;
  Epilogue epilogue;
  for (size_t i = 0; i < kinds.size(); ++i) {
    const std::string& kind = kinds[i];
    int arg_count = postOpArgCount(kind);
    if (arg_count < 0)
      return call.invalid("post-op " + std::to_string(i) + " is '" + kind +
                          "'; expected relu, clip, linear or add");
    if (next_arg + arg_count > args.size())
      return call.invalid("post-op " + std::to_string(i) + " ('" + kind + "') needs " +
                          std::to_string(arg_count) + " values of 'post_op_args', which has " +
                          std::to_string(args.size()) + " in all");
    const float* a = args.data() + next_arg;
    next_arg += arg_count;
    if (kind == "relu") {
      epilogue.ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_relu, 0.0f, 0.0f);
    } else if (kind == "clip") {
      if (!(a[0] <= a[1]))
        return call.invalid("clip post-op " + std::to_string(i) + " has low bound " +
                            std::to_string(a[0]) + " above high bound " + std::to_string(a[1]));
      epilogue.ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_clip_v2, a[0], a[1]);
    } else if (kind == "linear") {
      epilogue.ops.append_eltwise(1.0f, dnnl::algorithm::eltwise_linear, a[0], a[1]);
    } else {  // add
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
                              dimsToString(dims) + ") does not broadcast to the result (" +
                              dimsToString(dst) + ")");
      if (allow_sum && epilogue.sum_extra < 0 && dims == dst) {
        epilogue.sum_extra = static_cast<int>(next_extra);
        epilogue.ops.append_sum(1.0f);
      } else {
        dnnl::memory::desc desc = plainDesc(broadcast);
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
