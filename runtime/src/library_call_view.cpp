//===- library_call_view.cpp - Reading a LibraryCall's bindings and parameters ---===//

#include "runtime/src/library_call_view.h"

#include <algorithm>
#include <cmath>
#include <sstream>
#include <utility>

#include "contract/strided_view.h"
#include "runtime/src/element_type.h"

namespace kiln::runtime {

std::vector<int64_t> rowMajorStrides(const std::vector<int64_t>& dims) {
  std::vector<int64_t> strides(dims.size(), 1);
  for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i];
  return strides;
}

std::string formatTypeDims(const std::vector<int64_t>& dims) {
  std::ostringstream text;
  for (size_t i = 0; i < dims.size(); ++i) text << (i ? "x" : "") << dims[i];
  return dims.empty() ? "scalar" : text.str();
}

Status LibraryCallView::create(const kiln::artifact::LibraryCall& call,
                               const std::vector<kiln_element_type_t>& element_types,
                               const std::string& element_types_text, LibraryCallView* out,
                               const std::vector<std::vector<int64_t>>* run_dims) {
  LibraryCallView view;
  view.name_ = call.name() ? call.name()->str() : std::string();
  view.label_ = "library call '" + view.name_ + "'";
  if (call.description() && call.description()->size() > 0)
    view.label_ += " (" + call.description()->str() + ")";
  if (!call.bindings()) return view.invalid("has no bindings");
  for (flatbuffers::uoffset_t i = 0; i < call.bindings()->size(); ++i) {
    const kiln::artifact::Binding* binding = call.bindings()->Get(i);
    if (!binding || !binding->buffer() || !binding->type())
      return view.invalid("binding " + std::to_string(i) + " lacks its buffer or type");
    auto element_type = static_cast<kiln_element_type_t>(binding->type()->element_type());
    if (std::find(element_types.begin(), element_types.end(), element_type) == element_types.end())
      return view.invalid("binding " + std::to_string(i) + " has element type " +
                          std::to_string(binding->type()->element_type()) + "; " +
                          element_types_text);
    LibraryCallBinding info;
    info.kind = binding->buffer()->kind();
    info.offset = binding->buffer()->offset();
    info.element_type = element_type;
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
    if (run_dims != nullptr) {
      // One shape of a program for a range of shapes: the run's dimensions, within the bounds.
      if (run_dims->size() != call.bindings()->size())
        return view.invalid("has " + std::to_string(call.bindings()->size()) +
                            " bindings; the run gives dimensions for " +
                            std::to_string(run_dims->size()));
      // That they fit the binding's buffer is RunShapes' to check: within the static bounds
      // (bindingDims), or within the run's arena value where the program is planned per run
      // and its static sizes are nominal (planArena).
      const std::vector<int64_t>& dims = (*run_dims)[i];
      bool fits = dims.size() == info.dims.size();
      for (size_t d = 0; fits && d < dims.size(); ++d) fits = dims[d] >= 1;
      if (!fits)
        return view.invalid("binding " + std::to_string(i) + ": the run's dimensions " +
                            formatTypeDims(dims) + " do not match its rank " +
                            std::to_string(info.dims.size()) + " with sizes of at least 1");
      info.dims = dims;
    }
    uint64_t bytes = elements * kiln_element_type_size(element_type);
    if (binding->buffer()->size() < bytes)
      return view.invalid("binding " + std::to_string(i) + " of type " + formatTypeDims(info.dims) +
                          "x" + describeElementType(element_type) + " needs " +
                          std::to_string(bytes) + " bytes, its buffer has " +
                          std::to_string(binding->buffer()->size()));
    view.bindings_.push_back(std::move(info));
  }

  auto duplicate = [&](const std::string& key) {
    return view.invalid("repeats parameter '" + key + "'");
  };
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
  if (Status status = view.checkContract(); !status.ok()) return status;
  *out = std::move(view);
  return Status();
}

Status LibraryCallView::checkContract() const {
  // A call the contract does not know is left to the device, which refuses it by name.
  const contract::LibraryCallSpec* entry = contract::findLibraryCall(name_);
  if (entry == nullptr) return Status();
  using contract::ParamKind;
  auto check = [&](const std::string& key, const char* stored, size_t count,
                   std::initializer_list<ParamKind> kinds) -> Status {
    const contract::ParamSpec* spec = entry->findParam(key);
    if (spec == nullptr)
      return invalid("has unknown " + std::string(stored) + " parameter '" + key + "'");
    if (std::find(kinds.begin(), kinds.end(), spec->kind) == kinds.end())
      return invalid("parameter '" + key + "' is stored as " + stored +
                     " values; the contract makes it another kind");
    if ((spec->kind == ParamKind::Int || spec->kind == ParamKind::Bool) && count != 1)
      return invalid("parameter '" + key + "' has " + std::to_string(count) +
                     " values, expected 1");
    return Status();
  };
  for (const auto& [key, values] : ints_)
    if (Status s = check(key, "int", values.size(),
                         {ParamKind::Ints, ParamKind::Int, ParamKind::Bool});
        !s.ok())
      return s;
  for (const auto& [key, values] : floats_)
    if (Status s = check(key, "float", values.size(), {ParamKind::Floats}); !s.ok()) return s;
  for (const auto& [key, values] : strings_)
    if (Status s = check(key, "string", values.size(), {ParamKind::Strings}); !s.ok()) return s;
  auto post_ops = strings_.find(std::string(contract::param::kPostOps.name));
  if (post_ops != strings_.end()) {
    for (size_t i = 0; i < post_ops->second.size(); ++i) {
      const std::string& kind = post_ops->second[i];
      std::optional<contract::PostOp> op = contract::parsePostOp(kind);
      if (op && entry->fuses(*op)) continue;
      std::string fused;
      for (contract::PostOp known : entry->post_ops)
        fused += (fused.empty() ? "" : ", ") + std::string(contract::postOpName(known));
      if (fused.empty()) fused = "none";
      // A post-op some library fuses, but not this one, is a well-formed call it cannot run.
      if (op)
        return unimplemented("post-op " + std::to_string(i) + " ('" + kind +
                             "') is not fused by '" + name_ + "' (it fuses " + fused + ")");
      return invalid("post-op " + std::to_string(i) + " is '" + kind + "'; '" + name_ +
                     "' fuses " + fused);
    }
  }
  return Status();
}

Status LibraryCallView::invalid(const std::string& message) const {
  return Status(KILN_STATUS_INVALID_ARGUMENT, label_ + ": " + message);
}

Status LibraryCallView::unimplemented(const std::string& message) const {
  return Status(KILN_STATUS_UNIMPLEMENTED, label_ + ": " + message);
}

Status LibraryCallView::ints(const contract::IntsKey& key, int count,
                             const std::vector<int64_t>* fallback,
                             std::vector<int64_t>* out) const {
  return readInts(std::string(key.name), count, fallback, out);
}

Status LibraryCallView::readInts(const std::string& key, int count,
                                 const std::vector<int64_t>* fallback,
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

bool LibraryCallView::has(const contract::IntsKey& key) const {
  return ints_.count(std::string(key.name)) != 0;
}

Status LibraryCallView::integer(const contract::IntKey& key, int64_t fallback,
                                int64_t* out) const {
  std::vector<int64_t> values;
  std::vector<int64_t> defaults{fallback};
  Status status = readInts(std::string(key.name), 1, &defaults, &values);
  if (!status.ok()) return status;
  *out = values[0];
  return Status();
}

Status LibraryCallView::flag(const contract::BoolKey& key, bool fallback, bool* out) const {
  std::vector<int64_t> values;
  std::vector<int64_t> defaults{fallback ? 1 : 0};
  Status status = readInts(std::string(key.name), 1, &defaults, &values);
  if (!status.ok()) return status;
  if (values[0] != 0 && values[0] != 1)
    return invalid(std::string(key.name) + " must be 0 or 1");
  *out = values[0] == 1;
  return Status();
}

std::vector<std::string> LibraryCallView::strings(const contract::StringsKey& key) const {
  auto it = strings_.find(std::string(key.name));
  return it == strings_.end() ? std::vector<std::string>() : it->second;
}

std::vector<float> LibraryCallView::floats(const contract::FloatsKey& key) const {
  auto it = floats_.find(std::string(key.name));
  return it == floats_.end() ? std::vector<float>() : it->second;
}

std::vector<contract::PostOp> LibraryCallView::postOps() const {
  std::vector<contract::PostOp> ops;
  for (const std::string& kind : strings(contract::param::kPostOps))
    if (std::optional<contract::PostOp> op = contract::parsePostOp(kind)) ops.push_back(*op);
  return ops;
}

Status LibraryCallView::view(const contract::IntsKey& view_key, size_t binding, bool written,
                             StridedView* out) const {
  const std::string key(view_key.name);
  const std::vector<int64_t>& dims = bindings_.at(binding).dims;
  int64_t elements = 1;
  for (int64_t size : dims) elements *= size;
  auto it = ints_.find(key);
  if (it == ints_.end()) {
    StridedView view;
    view.dims = dims;
    view.strides = rowMajorStrides(dims);
    *out = std::move(view);
    return Status();
  }
  const std::vector<int64_t>& values = it->second;
  contract::StridedViewParts parts;
  contract::ViewCheck check =
      contract::checkStridedView(values.data(), values.size(), elements, written, &parts);
  switch (check.problem) {
    case contract::ViewProblem::None:
      break;
    case contract::ViewProblem::Malformed:
      return invalid("parameter '" + key + "' has " + std::to_string(values.size()) +
                     " values; a view is [offset, dims..., strides...] of rank 2 or more");
    case contract::ViewProblem::OutOfBounds:
      return invalid("parameter '" + key + "' (offset " + std::to_string(parts.offset) +
                     ", dims " + formatTypeDims(parts.dims) + ") reaches outside binding " +
                     std::to_string(binding) + " (" + formatTypeDims(dims) +
                     "), or has a size below 1 or a negative stride");
    case contract::ViewProblem::WrittenTwice:
      return invalid("parameter '" + key + "' writes some elements twice (a stride of " +
                     std::to_string(check.stride) + " inside an extent of " +
                     std::to_string(check.extent) + ")");
  }
  StridedView view;
  view.given = true;
  view.offset = parts.offset;
  view.dims = std::move(parts.dims);
  view.strides = std::move(parts.strides);
  *out = std::move(view);
  return Status();
}

Status readAttentionCall(const LibraryCallView& view, AttentionCall* out) {
  namespace param = contract::param;
  Status status;
  const size_t count = view.bindings().size();
  if (count != 4 && count != 5)
    return view.invalid("has " + std::to_string(count) +
                        " bindings; expected q, k, v, an optional mask and dst");
  const bool has_mask = count == 5;
  std::vector<float> scale = view.floats(param::kScale);
  if (scale.size() != 1 || !std::isfinite(scale[0]))
    return view.invalid("needs one finite 'scale'");
  std::vector<int64_t> zero_masked(1, 0);
  const std::vector<int64_t> not_zeroed{0};
  if (!(status = view.ints(param::kZeroMaskedRows, 1, &not_zeroed, &zero_masked)).ok())
    return status;
  const int64_t zero_masked_rows = zero_masked[0];
  if (zero_masked_rows != 0 && zero_masked_rows != 1)
    return view.invalid("'zero_masked_rows' must be 0 or 1");
  int64_t kv_group = 1;
  if (!(status = view.integer(param::kKvGroup, 1, &kv_group)).ok()) return status;
  if (kv_group < 1) return view.invalid("'kv_group' must be at least 1");

  // Every view is given (the call reads its operands where the data lies), or none: each
  // binding is then read as it lies, its leading dims aligned with dst's and dims of 1
  // broadcast (a call over dynamic shapes, set up per shape, whose strides are the run's).
  const contract::IntsKey keys[] = {param::kQView, param::kKView, param::kVView,
                                    param::kMaskView, param::kDstView};
  const bool dense = std::none_of(std::begin(keys), std::end(keys),
                                  [&](const contract::IntsKey& key) { return view.has(key); });
  auto required = [&](const contract::IntsKey& key, size_t binding, bool written,
                      StridedView* out) {
    Status s = view.view(key, binding, written, out);
    if (s.ok() && !out->given && !dense)
      return view.invalid("needs the parameter '" + std::string(key.name) + "'");
    return s;
  };
  StridedView q, k, v, mask, dst;
  if (!(status = required(param::kQView, 0, false, &q)).ok() ||
      !(status = required(param::kKView, 1, false, &k)).ok() ||
      !(status = required(param::kVView, 2, false, &v)).ok() ||
      (has_mask && !(status = required(param::kMaskView, 3, false, &mask)).ok()) ||
      !(status = required(param::kDstView, count - 1, true, &dst)).ok())
    return status;
  if (!has_mask && view.has(param::kMaskView))
    return view.invalid("has a 'mask_view' but no mask binding");
  if (dense) {
    // Leading dims of 1 in front, then dims of 1 (of the batch, and of the mask's matrix)
    // broadcast with stride 0 to dst's.
    const std::vector<int64_t>& want = dst.dims;
    if (want.size() < 2)
      return view.invalid("dst of dims " + formatTypeDims(want) +
                          " is no matrix (it needs 2 dims or more)");
    auto align = [&](StridedView* operand, const char* name, bool broadcastMatrix) -> Status {
      if (operand->dims.size() > want.size())
        return view.invalid(std::string(name) + " of dims " + formatTypeDims(operand->dims) +
                            " has more dims than dst " + formatTypeDims(want));
      size_t missing = want.size() - operand->dims.size();
      operand->dims.insert(operand->dims.begin(), missing, 1);
      operand->strides.insert(operand->strides.begin(), missing, 0);
      for (size_t d = 0; d < want.size(); ++d) {
        bool matrix = d + 2 >= want.size();
        if (operand->dims[d] == 1 && (!matrix || broadcastMatrix)) {
          operand->strides[d] = 0;
          if (!matrix) operand->dims[d] = want[d];
        }
      }
      return Status();
    };
    if (!(status = align(&q, "q", false)).ok() || !(status = align(&k, "k", false)).ok() ||
        !(status = align(&v, "v", false)).ok() ||
        (has_mask && !(status = align(&mask, "mask", true)).ok()))
      return status;
    // The mask's broadcast matrix dims take the scores' sizes (Sq x Skv).
    if (has_mask) {
      const size_t r = want.size();
      if (mask.dims[r - 2] == 1) mask.dims[r - 2] = want[r - 2];
      if (mask.dims[r - 1] == 1) mask.dims[r - 1] = k.dims[r - 1];
    }
  }

  const size_t rank = dst.dims.size();
  std::vector<int64_t> batch_dims(dst.dims.begin(), dst.dims.end() - 2);
  // Grouped queries: the key and value heads are the last batch dim divided by the group.
  std::vector<int64_t> kv_batch_dims = batch_dims;
  if (kv_group != 1) {
    if (batch_dims.empty() || batch_dims.back() % kv_group != 0)
      return view.invalid("'kv_group' " + std::to_string(kv_group) +
                          " does not divide the last of dst's batch dims " +
                          formatTypeDims(batch_dims));
    kv_batch_dims.back() /= kv_group;
  }
  auto sameBatch = [&](const StridedView& operand, const char* name,
                       const std::vector<int64_t>& want) -> Status {
    if (operand.dims.size() != rank || !std::equal(want.begin(), want.end(), operand.dims.begin()))
      return view.invalid(std::string(name) + "'s view has dims " + formatTypeDims(operand.dims) +
                          "; it must have the batch dims " + formatTypeDims(want) +
                          " and two more");
    return Status();
  };
  if (!(status = sameBatch(q, "q", batch_dims)).ok() ||
      !(status = sameBatch(k, "k", kv_batch_dims)).ok() ||
      !(status = sameBatch(v, "v", kv_batch_dims)).ok() ||
      (has_mask && !(status = sameBatch(mask, "mask", batch_dims)).ok()))
    return status;
  const int64_t sq = q.dims[rank - 2], d = q.dims[rank - 1];
  const int64_t skv = k.dims[rank - 1], dv = v.dims[rank - 1];
  if (k.dims[rank - 2] != d || v.dims[rank - 2] != skv || dst.dims[rank - 2] != sq ||
      dst.dims[rank - 1] != dv ||
      (has_mask && (mask.dims[rank - 2] != sq || mask.dims[rank - 1] != skv)))
    return view.invalid("the views' dims do not agree: Q " + formatTypeDims(q.dims) + ", Kᵀ " +
                        formatTypeDims(k.dims) + ", V " + formatTypeDims(v.dims) +
                        (has_mask ? ", mask " + formatTypeDims(mask.dims) : std::string()) +
                        ", dst " + formatTypeDims(dst.dims) +
                        " (Q is Sq x D, Kᵀ D x Skv, V Skv x Dv, mask Sq x Skv, dst Sq x Dv)");

  AttentionCall call;
  call.q = std::move(q);
  call.k = std::move(k);
  call.v = std::move(v);
  call.mask = std::move(mask);
  call.dst = std::move(dst);
  call.has_mask = has_mask;
  call.scale = scale[0];
  call.zero_masked_rows = zero_masked_rows == 1;
  call.batch_dims = std::move(batch_dims);
  call.kv_group = kv_group;
  call.sq = sq;
  call.skv = skv;
  call.d = d;
  call.dv = dv;
  *out = std::move(call);
  return Status();
}

}  // namespace kiln::runtime
