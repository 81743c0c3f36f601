//===- artifact.cpp - Loading .kiln artifacts and their C API -------------===//
//
// Reads a .kiln file (or copies caller memory) into 64-byte aligned memory, verifies it, builds
// the query tables, and implements the kiln_artifact_* queries over LoadedArtifact. The
// kiln_artifact_load_* functions, which pass the devices' rules for library calls, are in
// runtime/src/session/artifact_loading.cpp.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/artifact/artifact.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <string>
#include <utility>

#include "runtime/src/artifact/artifact_verifier.h"
#include "runtime/src/element_type.h"
#include "runtime/src/status.h"

static_assert(FLATBUFFERS_LITTLEENDIAN,
              "the runtime hands out pointers into .kiln files, which are little-endian");

namespace kiln::runtime {
namespace {

namespace fb = kiln::artifact;

/// The alignment of the memory holding an artifact's bytes; the constants are aligned to it.
constexpr size_t kArtifactAlignment = 64;

/// Stands in for the dims of a rank-0 type, so that no pointer handed out is NULL.
const int64_t kNoDims[1] = {0};

const int64_t* dimsOf(const fb::TensorType& type) {
  return type.dims() && type.dims()->size() > 0 ? type.dims()->data() : kNoDims;
}

size_t rankOf(const fb::TensorType& type) { return type.dims() ? type.dims()->size() : 0; }

const char* stringOr(const flatbuffers::String* text, const char* fallback) {
  return text ? text->c_str() : fallback;
}

/// Checks the `struct_size` a caller set on an out-struct.
template <typename Struct>
Status checkStructSize(const Struct* out, const char* api_name, const char* type_name) {
  if (out == nullptr) {
    return Status(KILN_STATUS_INVALID_ARGUMENT, std::string(api_name) + ": the out-struct is NULL");
  }
  if (out->struct_size < sizeof(Struct)) {
    return Status(KILN_STATUS_INVALID_ARGUMENT, std::string(api_name) + ": struct_size " +
                                                    std::to_string(out->struct_size) +
                                                    " is smaller than sizeof(" + type_name + ") " +
                                                    std::to_string(sizeof(Struct)));
  }
  return Status();
}

Status checkIndex(size_t index, size_t count, const char* api_name, const char* what) {
  if (index >= count) {
    return Status(KILN_STATUS_OUT_OF_RANGE, std::string(api_name) + ": " + what + " index " +
                                                std::to_string(index) + " is out of range (" +
                                                std::to_string(count) + " " + what + "s)");
  }
  return Status();
}

}  // namespace

void LoadedArtifact::FreeBytes::operator()(uint8_t* bytes) const {
  if (mapped != 0)
    ::munmap(bytes, mapped);
  else
    std::free(bytes);
}

LoadedArtifact::LoadedArtifact(std::string name, Bytes bytes, size_t size)
    : name_(std::move(name)), bytes_(std::move(bytes)), data_(bytes_.get()), size_(size) {}

LoadedArtifact::LoadedArtifact(std::string name, const uint8_t* data, size_t size,
                               std::shared_ptr<const LoadedArtifact> parent)
    : name_(std::move(name)), data_(data), size_(size), parent_(std::move(parent)) {}

uint32_t LoadedArtifact::deviceCount() const {
  return root_->partition() ? root_->partition()->devices() : 1;
}

uint32_t LoadedArtifact::deviceRank() const {
  return root_->partition() ? root_->partition()->rank() : 0;
}

Result<std::shared_ptr<const LoadedArtifact>> LoadedArtifact::deviceArtifact(uint32_t rank) const {
  if (rank >= deviceCount()) {
    return Status(KILN_STATUS_OUT_OF_RANGE, name_ + ": device " + std::to_string(rank) +
                                                " of a model on " + std::to_string(deviceCount()) +
                                                " device(s)");
  }
  if (rank == deviceRank()) return shared_from_this();
  const auto* ranges = root_->partition()->device_artifacts();
  if (deviceRank() != 0 || ranges == nullptr || rank - 1 >= ranges->size()) {
    return Status(KILN_STATUS_INVALID_ARGUMENT,
                  name_ + " is device " + std::to_string(deviceRank()) +
                      "'s artifact and does not carry device " + std::to_string(rank) +
                      "'s; load device 0's file");
  }
  // The verifier has checked that the range lies in the file and is 64-byte aligned.
  const kiln::artifact::DeviceArtifactRange* range = ranges->Get(rank - 1);
  std::string name = name_ + " (device " + std::to_string(rank) + ")";
  const uint8_t* data = data_ + range->offset();
  if (Status s = verifyArtifact(data, range->size(), name, check_library_call_); !s.ok()) {
    return s;
  }
  std::shared_ptr<LoadedArtifact> device(
      new LoadedArtifact(std::move(name), data, range->size(), shared_from_this()));
  device->check_library_call_ = check_library_call_;
  device->root_ = fb::GetArtifact(data);
  if (device->deviceRank() != rank || device->deviceCount() != deviceCount()) {
    return Status(KILN_STATUS_INVALID_ARGUMENT, device->name() + " names itself device " +
                                                    std::to_string(device->deviceRank()) + " of " +
                                                    std::to_string(device->deviceCount()));
  }
  device->buildTables();
  return std::shared_ptr<const LoadedArtifact>(std::move(device));
}

Result<LoadedArtifact::Bytes> LoadedArtifact::allocateBytes(size_t size, const std::string& name) {
  size_t capacity = (size + kArtifactAlignment - 1) / kArtifactAlignment * kArtifactAlignment;
  if (capacity < size) {
    return Status(KILN_STATUS_OUT_OF_RANGE,
                  name + ": " + std::to_string(size) + " bytes is too large");
  }
  if (capacity == 0) capacity = kArtifactAlignment;
  Bytes bytes(static_cast<uint8_t*>(std::aligned_alloc(kArtifactAlignment, capacity)));
  if (!bytes) {
    return Status(
        KILN_STATUS_RESOURCE_EXHAUSTED,
        name + ": cannot allocate " + std::to_string(capacity) + " bytes for the artifact");
  }
  return bytes;
}

Result<std::shared_ptr<const LoadedArtifact>> LoadedArtifact::loadFile(
    const std::string& path, LibraryCallCheck check_library_call, FileAccess access) {
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return statusFromErrno(errno, "cannot open " + path);
  struct FdCloser {
    int fd;
    ~FdCloser() { ::close(fd); }
  } closer{fd};
  struct stat info;
  if (::fstat(fd, &info) != 0) return statusFromErrno(errno, "cannot stat " + path);
  if (!S_ISREG(info.st_mode)) {
    return Status(KILN_STATUS_INVALID_ARGUMENT, path + ": not a regular file");
  }
  size_t size = static_cast<size_t>(info.st_size);
  if (size > 0 && access == FileAccess::Map) {
    // Page-aligned, so every 64-byte aligned offset stays aligned. The file is not read here:
    // what a session uses is paged in.
    void* mapped = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (mapped != MAP_FAILED) {
      return create(path, Bytes(static_cast<uint8_t*>(mapped), FreeBytes{size}), size,
                    check_library_call);
    }
  }
  Result<Bytes> bytes = allocateBytes(size, path);
  if (!bytes.ok()) return bytes.status();
  size_t done = 0;
  while (done < size) {
    ssize_t n = ::read(fd, bytes->get() + done, size - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return statusFromErrno(errno, "cannot read " + path);
    }
    if (n == 0) break;  // The file shrank while being read; the verifier reports the truncation.
    done += static_cast<size_t>(n);
  }
  return create(path, std::move(*bytes), done, check_library_call);
}

Result<std::shared_ptr<const LoadedArtifact>> LoadedArtifact::loadMemory(
    const void* data, size_t size, std::string name, LibraryCallCheck check_library_call) {
  if (data == nullptr && size != 0) {
    return Status(KILN_STATUS_INVALID_ARGUMENT, name + ": data is NULL");
  }
  Result<Bytes> bytes = allocateBytes(size, name);
  if (!bytes.ok()) return bytes.status();
  if (size != 0) std::memcpy(bytes->get(), data, size);
  return create(std::move(name), std::move(*bytes), size, check_library_call);
}

Result<std::shared_ptr<const LoadedArtifact>> LoadedArtifact::create(
    std::string name, Bytes bytes, size_t size, LibraryCallCheck check_library_call) {
  if (Status s = verifyArtifact(bytes.get(), size, name, check_library_call); !s.ok()) return s;
  std::shared_ptr<LoadedArtifact> artifact(
      new LoadedArtifact(std::move(name), std::move(bytes), size));
  artifact->check_library_call_ = check_library_call;
  artifact->root_ = fb::GetArtifact(artifact->data_);
  artifact->buildTables();
  return std::shared_ptr<const LoadedArtifact>(std::move(artifact));
}

const uint8_t* LoadedArtifact::constantsData() const {
  // The verifier has checked that the section lies inside the file's bytes.
  return root_->constants_size() > 0 ? data_ + root_->constants_offset() : nullptr;
}

uint64_t LoadedArtifact::constantsSize() const { return root_->constants_size(); }

uint64_t LoadedArtifact::arenaAlignment() const {
  uint64_t alignment = program().arena_alignment();
  return alignment < kArtifactAlignment ? kArtifactAlignment : alignment;
}

uint64_t LoadedArtifact::runPeakMemory() const {
  uint64_t total = arenaSize();
  for (const kiln_tensor_signature_t& output : outputs_) total += output.byte_size;
  return total;
}

std::string LoadedArtifact::formatType(kiln_element_type_t type, const int64_t* dims, size_t rank) {
  std::string text = describeElementType(type) + "[";
  for (size_t i = 0; i < rank; ++i) {
    if (i != 0) text += ",";
    text += std::to_string(dims[i]);
  }
  return text + "]";
}

void LoadedArtifact::buildTables() {
  auto buildSignatures = [this](const auto& list, std::vector<kiln_tensor_signature_t>* out) {
    for (flatbuffers::uoffset_t i = 0; i < list.size(); ++i) {
      const fb::TensorSignature& signature = *list.Get(i);
      const fb::TensorType& type = *signature.type();
      kiln_tensor_signature_t c{};
      c.struct_size = sizeof(c);
      c.name = signature.name()->c_str();
      c.element_type = static_cast<kiln_element_type_t>(type.element_type());
      c.rank = rankOf(type);
      c.dims = dimsOf(type);
      std::vector<const char*> symbols(c.rank > 0 ? c.rank : 1, "");
      if (signature.dim_symbols() && signature.dim_symbols()->size() == c.rank) {
        for (size_t d = 0; d < c.rank; ++d) {
          symbols[d] =
              stringOr(signature.dim_symbols()->Get(static_cast<flatbuffers::uoffset_t>(d)), "");
        }
      }
      c.byte_size = kiln_element_type_size(c.element_type);
      for (size_t d = 0; d < c.rank; ++d) c.byte_size *= static_cast<uint64_t>(c.dims[d]);
      // A dimension that varies from run to run reads -1, named by its symbol where it is one.
      if (type.dynamic_dims() && type.dynamic_dims()->size() == c.rank && c.rank > 0) {
        std::vector<int64_t> dims(c.dims, c.dims + c.rank);
        for (size_t d = 0; d < c.rank; ++d) {
          const auto* code =
              type.dynamic_dims()->Get(static_cast<flatbuffers::uoffset_t>(d))->code();
          if (code == nullptr || code->size() == 0) continue;
          dims[d] = -1;
          if (code->size() == 2 && code->Get(0) == 1 && root_->symbols() &&
              static_cast<uint64_t>(code->Get(1)) < root_->symbols()->size())
            symbols[d] = root_->symbols()
                             ->Get(static_cast<flatbuffers::uoffset_t>(code->Get(1)))
                             ->name()
                             ->c_str();
        }
        dim_tables_.push_back(std::move(dims));
        c.dims = dim_tables_.back().data();
      }
      string_tables_.push_back(std::move(symbols));
      c.dim_symbols = string_tables_.back().data();
      out->push_back(c);
    }
  };
  buildSignatures(*root_->inputs(), &inputs_);
  buildSignatures(*root_->outputs(), &outputs_);
  for (const fb::TensorSignature* signature : *root_->outputs())
    if (signature->check() != nullptr) check_messages_.push_back(signature->check()->str());

  const auto& code_objects = *root_->code_objects();
  for (flatbuffers::uoffset_t i = 0; i < code_objects.size(); ++i) {
    const fb::CodeObject& code = *code_objects.Get(i);
    kiln_code_object_info_t c{};
    c.struct_size = sizeof(c);
    c.target = code.target()->c_str();
    c.format = static_cast<kiln_code_format_t>(code.format());
    c.byte_size = code.data()->size();
    std::vector<const char*> names(code.kernels()->size() + 1, nullptr);
    for (flatbuffers::uoffset_t k = 0; k < code.kernels()->size(); ++k) {
      names[k] = code.kernels()->Get(k)->c_str();
    }
    string_tables_.push_back(std::move(names));
    c.kernel_count = code.kernels()->size();
    c.kernel_names = string_tables_.back().data();
    code_objects_.push_back(c);
  }

  auto bindingInfo = [](const fb::Binding& binding) {
    kiln_binding_info_t c{};
    c.buffer_kind = static_cast<kiln_buffer_kind_t>(binding.buffer()->kind());
    fb::BufferKind kind = binding.buffer()->kind();
    c.buffer_index = kind == fb::BufferKind::Input || kind == fb::BufferKind::Output
                         ? binding.buffer()->index()
                         : 0;
    c.offset = binding.buffer()->offset();
    c.size = binding.buffer()->size();
    c.element_type = static_cast<kiln_element_type_t>(binding.type()->element_type());
    c.rank = rankOf(*binding.type());
    c.dims = dimsOf(*binding.type());
    return c;
  };

  // A library call's parameters as "key=v1,v2 ..." in the artifact's order.
  auto parameterText = [](const fb::LibraryCall& call) {
    std::string text;
    auto add = [&](const flatbuffers::String* key, const auto& values, auto format) {
      text += (text.empty() ? "" : " ") + key->str() + "=";
      for (flatbuffers::uoffset_t v = 0; values && v < values->size(); ++v)
        text += (v ? "," : "") + format(values->Get(v));
    };
    if (call.int_params())
      for (const fb::IntParam* param : *call.int_params())
        add(param->key(), param->values(), [](int64_t v) { return std::to_string(v); });
    if (call.float_params())
      for (const fb::FloatParam* param : *call.float_params())
        add(param->key(), param->values(), [](float v) {
          std::ostringstream os;
          os << v;
          return os.str();
        });
    if (call.string_params())
      for (const fb::StringParam* param : *call.string_params())
        add(param->key(), param->values(), [](const flatbuffers::String* v) { return v->str(); });
    return text;
  };

  static const uint32_t kNoWorkgroups[1] = {1};
  const auto& steps = *program().steps();
  for (flatbuffers::uoffset_t i = 0; i < steps.size(); ++i) {
    const fb::Step& step = *steps.Get(i);
    kiln_step_info_t c{};
    c.struct_size = sizeof(c);
    c.workgroup_count = kNoWorkgroups;
    c.workgroup_total = 1;
    c.parameters = "";
    std::vector<kiln_binding_info_t> bindings;
    switch (step.kind_type()) {
      case fb::StepKind::Dispatch: {
        const fb::Dispatch& dispatch = *step.kind_as_Dispatch();
        c.kind = KILN_STEP_KIND_DISPATCH;
        c.code_object = dispatch.code_object();
        c.kernel = dispatch.kernel();
        c.name =
            code_objects.Get(dispatch.code_object())->kernels()->Get(dispatch.kernel())->c_str();
        c.description = stringOr(dispatch.description(), "");
        c.workgroup_rank = dispatch.workgroup_count()->size();
        c.workgroup_count = dispatch.workgroup_count()->data();
        for (uint32_t count : *dispatch.workgroup_count()) c.workgroup_total *= count;
        if (const fb::CudaLaunch* launch = dispatch.cuda()) {
          c.cuda_block_size = launch->block_size();
          c.cuda_work_items = launch->work_items();
        }
        for (const fb::Binding* binding : *dispatch.bindings())
          bindings.push_back(bindingInfo(*binding));
        break;
      }
      case fb::StepKind::LibraryCall: {
        const fb::LibraryCall& call = *step.kind_as_LibraryCall();
        c.kind = KILN_STEP_KIND_LIBRARY_CALL;
        c.name = call.name()->c_str();
        c.description = stringOr(call.description(), "");
        parameter_texts_.push_back(std::make_unique<std::string>(parameterText(call)));
        c.parameters = parameter_texts_.back()->c_str();
        for (const fb::Binding* binding : *call.bindings())
          bindings.push_back(bindingInfo(*binding));
        break;
      }
      case fb::StepKind::Copy: {
        const fb::Copy& copy = *step.kind_as_Copy();
        c.kind = KILN_STEP_KIND_COPY;
        c.name = "copy";
        c.description = "";
        bindings.push_back(bindingInfo(*copy.source()));
        bindings.push_back(bindingInfo(*copy.destination()));
        break;
      }
      default:
        break;  // Refused by the verifier.
    }
    c.binding_count = bindings.size();
    binding_tables_.push_back(std::move(bindings));
    c.bindings = binding_tables_.back().data();
    steps_.push_back(c);
  }
}

}  // namespace kiln::runtime

using kiln::runtime::checkIndex;
using kiln::runtime::checkStructSize;
using kiln::runtime::guardCApi;

extern "C" {

void kiln_artifact_release(kiln_artifact_t* artifact) { delete artifact; }

const char* kiln_artifact_name(const kiln_artifact_t* artifact) {
  return artifact ? artifact->artifact->name().c_str() : "";
}

const char* kiln_artifact_device(const kiln_artifact_t* artifact) {
  return artifact ? artifact->artifact->root().device()->c_str() : "";
}

const char* kiln_artifact_producer(const kiln_artifact_t* artifact) {
  return artifact ? kiln::runtime::stringOr(artifact->artifact->root().producer(), "") : "";
}

const char* kiln_artifact_source(const kiln_artifact_t* artifact) {
  return artifact ? kiln::runtime::stringOr(artifact->artifact->root().source(), "") : "";
}

uint32_t kiln_artifact_format_version(const kiln_artifact_t* artifact) {
  return artifact ? artifact->artifact->root().format_version() : 0;
}

uint32_t kiln_artifact_device_count(const kiln_artifact_t* artifact) {
  return artifact ? artifact->artifact->deviceCount() : 0;
}

uint32_t kiln_artifact_device_rank(const kiln_artifact_t* artifact) {
  return artifact ? artifact->artifact->deviceRank() : 0;
}

const char* kiln_artifact_partition(const kiln_artifact_t* artifact) {
  if (artifact == nullptr) return "";
  const auto* partition = artifact->artifact->root().partition();
  return partition ? partition->mode()->c_str() : "";
}

kiln_status_t* kiln_artifact_open_device(const kiln_artifact_t* artifact, uint32_t rank,
                                         kiln_artifact_t** out_artifact) {
  return guardCApi("kiln_artifact_open_device", [&]() -> kiln::Status {
    if (artifact == nullptr || out_artifact == nullptr) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          "kiln_artifact_open_device: artifact and out_artifact must not be NULL");
    }
    auto device = artifact->artifact->deviceArtifact(rank);
    if (!device.ok()) return device.status();
    *out_artifact = new kiln_artifact_t{std::move(*device)};
    return kiln::Status();
  });
}

size_t kiln_artifact_input_count(const kiln_artifact_t* artifact) {
  return artifact ? artifact->artifact->inputs().size() : 0;
}

size_t kiln_artifact_output_count(const kiln_artifact_t* artifact) {
  return artifact ? artifact->artifact->callerOutputCount() : 0;
}

size_t kiln_artifact_symbol_count(const kiln_artifact_t* artifact) {
  if (artifact == nullptr) return 0;
  const auto* symbols = artifact->artifact->root().symbols();
  return symbols ? symbols->size() : 0;
}

kiln_status_t* kiln_artifact_symbol(const kiln_artifact_t* artifact, size_t index,
                                    kiln_dim_symbol_t* out_symbol) {
  return guardCApi("kiln_artifact_symbol", [&]() -> kiln::Status {
    if (artifact == nullptr || out_symbol == nullptr)
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          "kiln_artifact_symbol: the artifact or the result is NULL");
    size_t count = kiln_artifact_symbol_count(artifact);
    if (index >= count)
      return kiln::Status(
          KILN_STATUS_OUT_OF_RANGE,
          "kiln_artifact_symbol: symbol " + std::to_string(index) + " of " + std::to_string(count));
    const kiln::artifact::Symbol& symbol =
        *artifact->artifact->root().symbols()->Get(static_cast<flatbuffers::uoffset_t>(index));
    *out_symbol = {symbol.name()->c_str(), symbol.input(), symbol.dim(), symbol.min(),
                   symbol.max()};
    return kiln::Status();
  });
}

size_t kiln_artifact_check_count(const kiln_artifact_t* artifact) {
  return artifact ? artifact->artifact->checkMessages().size() : 0;
}

const char* kiln_artifact_check_message(const kiln_artifact_t* artifact, size_t index) {
  if (artifact == nullptr || index >= artifact->artifact->checkMessages().size()) return nullptr;
  return artifact->artifact->checkMessages()[index].c_str();
}

static kiln_status_t* copySignature(const char* api_name, const kiln_artifact_t* artifact,
                                    size_t index, bool input,
                                    kiln_tensor_signature_t* out_signature) {
  return guardCApi(api_name, [&]() -> kiln::Status {
    if (artifact == nullptr) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          std::string(api_name) + ": artifact is NULL");
    }
    if (kiln::Status s = checkStructSize(out_signature, api_name, "kiln_tensor_signature_t");
        !s.ok()) {
      return s;
    }
    const auto& list = input ? artifact->artifact->inputs() : artifact->artifact->outputs();
    size_t count = input ? list.size() : artifact->artifact->callerOutputCount();
    if (kiln::Status s = checkIndex(index, count, api_name, input ? "input" : "output"); !s.ok()) {
      return s;
    }
    *out_signature = list[index];
    return kiln::Status();
  });
}

kiln_status_t* kiln_artifact_input_signature(const kiln_artifact_t* artifact, size_t index,
                                             kiln_tensor_signature_t* out_signature) {
  return copySignature("kiln_artifact_input_signature", artifact, index, true, out_signature);
}

kiln_status_t* kiln_artifact_output_signature(const kiln_artifact_t* artifact, size_t index,
                                              kiln_tensor_signature_t* out_signature) {
  return copySignature("kiln_artifact_output_signature", artifact, index, false, out_signature);
}

uint64_t kiln_artifact_arena_size(const kiln_artifact_t* artifact) {
  return artifact ? artifact->artifact->arenaSize() : 0;
}

uint64_t kiln_artifact_naive_intermediate_size(const kiln_artifact_t* artifact) {
  return artifact ? artifact->artifact->program().naive_intermediate_size() : 0;
}

uint64_t kiln_artifact_peak_live_size(const kiln_artifact_t* artifact) {
  return artifact ? artifact->artifact->program().peak_live_size() : 0;
}

uint64_t kiln_artifact_modeled_kernel_bytes(const kiln_artifact_t* artifact) {
  return artifact ? artifact->artifact->program().modeled_kernel_bytes() : 0;
}

uint64_t kiln_artifact_memory_limit(const kiln_artifact_t* artifact) {
  return artifact ? artifact->artifact->program().memory_limit() : 0;
}

uint64_t kiln_artifact_unlimited_arena_size(const kiln_artifact_t* artifact) {
  return artifact ? artifact->artifact->program().unlimited_arena_size() : 0;
}

uint32_t kiln_artifact_stream_count(const kiln_artifact_t* artifact) {
  return artifact ? std::max<uint32_t>(artifact->artifact->program().stream_count(), 1) : 0;
}

uint64_t kiln_artifact_serial_arena_size(const kiln_artifact_t* artifact) {
  if (!artifact || artifact->artifact->program().stream_count() <= 1) return 0;
  return artifact->artifact->program().serial_arena_size();
}

uint32_t kiln_artifact_step_stream(const kiln_artifact_t* artifact, size_t index) {
  if (!artifact) return 0;
  const auto& steps = *artifact->artifact->program().steps();
  return index < steps.size() ? steps.Get(static_cast<flatbuffers::uoffset_t>(index))->stream() : 0;
}

uint64_t kiln_artifact_constants_size(const kiln_artifact_t* artifact) {
  return artifact ? artifact->artifact->constantsSize() : 0;
}

uint64_t kiln_artifact_run_peak_memory(const kiln_artifact_t* artifact) {
  return artifact ? artifact->artifact->runPeakMemory() : 0;
}

size_t kiln_artifact_code_object_count(const kiln_artifact_t* artifact) {
  return artifact ? artifact->artifact->codeObjects().size() : 0;
}

kiln_status_t* kiln_artifact_code_object_info(const kiln_artifact_t* artifact, size_t index,
                                              kiln_code_object_info_t* out_info) {
  const char* api_name = "kiln_artifact_code_object_info";
  return guardCApi(api_name, [&]() -> kiln::Status {
    if (artifact == nullptr) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          std::string(api_name) + ": artifact is NULL");
    }
    if (kiln::Status s = checkStructSize(out_info, api_name, "kiln_code_object_info_t"); !s.ok()) {
      return s;
    }
    const auto& list = artifact->artifact->codeObjects();
    if (kiln::Status s = checkIndex(index, list.size(), api_name, "code object"); !s.ok()) return s;
    *out_info = list[index];
    return kiln::Status();
  });
}

size_t kiln_artifact_step_count(const kiln_artifact_t* artifact) {
  return artifact ? artifact->artifact->steps().size() : 0;
}

kiln_status_t* kiln_artifact_step_info(const kiln_artifact_t* artifact, size_t index,
                                       kiln_step_info_t* out_info) {
  const char* api_name = "kiln_artifact_step_info";
  return guardCApi(api_name, [&]() -> kiln::Status {
    if (artifact == nullptr) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          std::string(api_name) + ": artifact is NULL");
    }
    if (kiln::Status s = checkStructSize(out_info, api_name, "kiln_step_info_t"); !s.ok()) return s;
    const auto& list = artifact->artifact->steps();
    if (kiln::Status s = checkIndex(index, list.size(), api_name, "step"); !s.ok()) return s;
    *out_info = list[index];
    return kiln::Status();
  });
}

}  // extern "C"
