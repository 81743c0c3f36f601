//===- artifact_verifier.cpp - Verifying .kiln artifacts ------------------===//
//
// Structure first (identifier, version, FlatBuffers verifier), then the semantic rules of the
// format, one function per part of the file. Each check names where in the file it failed.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/artifact/artifact_verifier.h"

#include <algorithm>
#include <cstring>
#include <limits>
#include <set>
#include <string_view>
#include <vector>

#include "kiln/artifact_format.h"
#include "contract/artifact_generated.h"
#include "runtime/src/artifact/dim_code.h"
#include "runtime/src/element_type.h"
#include "runtime/src/tensor.h"

namespace kiln::runtime {
namespace {

/// The largest offset or size a binding of an arena planned per run may declare: a run's arena
/// is far below 2^62 bytes, and sums of two such numbers cannot wrap.
constexpr uint64_t kMaxPerRunOffset = uint64_t{1} << 62;

namespace fb = kiln::artifact;

/// The largest arena alignment an artifact may ask for.
constexpr uint32_t kMaxArenaAlignment = 4096;
/// The most streams a program may run on (kiln compile --streams).
constexpr uint32_t kMaxStreams = 64;

/// Views into part of a buffer (a contiguous slice) start at multiples of this many bytes past
/// its start (the compiler's kViewByteAlignment).
constexpr uint64_t kViewAlignment = 256;

/// The most threads a CUDA block may have on any GPU.
constexpr uint32_t kMaxCudaBlockSize = 1024;

/// The smallest number of bytes that can hold a FlatBuffers root offset and a file identifier.
constexpr size_t kHeaderSize = sizeof(flatbuffers::uoffset_t) + flatbuffers::kFileIdentifierLength;

Status dataLoss(const std::string& name, const std::string& what) {
  return Status(KILN_STATUS_DATA_LOSS, name + ": not a valid .kiln artifact (" + what + ")");
}

const char* bufferKindName(fb::BufferKind kind) {
  switch (kind) {
    case fb::BufferKind::Arena:
      return "arena";
    case fb::BufferKind::Constant:
      return "constant";
    case fb::BufferKind::Input:
      return "input";
    case fb::BufferKind::Output:
      return "output";
  }
  return "unknown";
}

/// Escapes the four identifier bytes for a message.
std::string describeIdentifier(const uint8_t* bytes) {
  std::string text;
  for (size_t i = 0; i < flatbuffers::kFileIdentifierLength; ++i) {
    unsigned char c = bytes[i];
    if (c >= 0x20 && c < 0x7f && c != '\\' && c != '\'') {
      text += static_cast<char>(c);
    } else {
      static const char kHex[] = "0123456789abcdef";
      text += "\\x";
      text += kHex[c >> 4];
      text += kHex[c & 15];
    }
  }
  return text;
}

/// Checks the semantic rules over a structurally verified artifact.
class SemanticVerifier {
 public:
  SemanticVerifier(const fb::Artifact& artifact, size_t file_size, const std::string& name,
                   LibraryCallCheck check_library_call)
      : artifact_(artifact),
        file_size_(file_size),
        program_(*artifact.program()),
        name_(name),
        cuda_(artifact.device()->string_view() == "cuda"),
        check_library_call_(check_library_call) {}

  Status verify() {
    if (Status s = verifyDevice(); !s.ok()) return s;
    if (Status s = verifySymbols(); !s.ok()) return s;
    if (Status s = verifySignatures(); !s.ok()) return s;
    if (Status s = verifyConstants(); !s.ok()) return s;
    if (Status s = verifyCodeObjects(); !s.ok()) return s;
    if (Status s = verifyProgram(); !s.ok()) return s;
    if (Status s = verifyPartition(); !s.ok()) return s;
    return verifyOutputsWritten();
  }

 private:
  Status invalid(const std::string& where, const std::string& what) const {
    return Status(KILN_STATUS_INVALID_ARGUMENT, name_ + ": " + where + ": " + what);
  }

  Status verifyDevice() {
    std::string_view device = artifact_.device()->string_view();
    if (device == "cpu" || device == "cuda") return Status();
    return Status(KILN_STATUS_UNIMPLEMENTED,
                  name_ + ": device '" + std::string(device) +
                      "' is not supported by this runtime (it knows 'cpu' and 'cuda')");
  }

  /// Checks a tensor type and returns its byte size in `*byte_size`.
  Status verifyType(const fb::TensorType& type, const std::string& where, uint64_t* byte_size) {
    auto element_type = static_cast<kiln_element_type_t>(type.element_type());
    if (!isValidElementType(element_type)) {
      return invalid(where, "invalid element type " + std::to_string(type.element_type()));
    }
    std::vector<int64_t> dims;
    if (type.dims()) dims.assign(type.dims()->begin(), type.dims()->end());
    Result<size_t> size = computeByteSize(element_type, dims);
    if (!size.ok()) return invalid(where, size.status().message());
    *byte_size = *size;
    // The run's dimensions of a program for a range of shapes: one code per dimension, over
    // the symbols (their values never exceed the static dims, which size the buffers).
    if (type.dynamic_dims() && type.dynamic_dims()->size() != 0) {
      if (type.dynamic_dims()->size() != dims.size())
        return invalid(where, "has " + std::to_string(type.dynamic_dims()->size()) +
                                  " dynamic dimensions for rank " + std::to_string(dims.size()));
      for (flatbuffers::uoffset_t d = 0; d < type.dynamic_dims()->size(); ++d) {
        const auto* code = type.dynamic_dims()->Get(d)->code();
        if (code == nullptr || code->size() == 0) continue;
        if (std::string problem = checkDimCode(*code, symbolCount()); !problem.empty())
          return invalid(where, "dimension " + std::to_string(d) + "'s code " + problem);
      }
    }
    return Status();
  }

  size_t symbolCount() const { return artifact_.symbols() ? artifact_.symbols()->size() : 0; }

  /// The dynamic input dimensions of a program for a range of shapes.
  Status verifySymbols() {
    if (symbolCount() == 0) return Status();
    const auto& inputs = *artifact_.inputs();
    for (flatbuffers::uoffset_t s = 0; s < artifact_.symbols()->size(); ++s) {
      const fb::Symbol& symbol = *artifact_.symbols()->Get(s);
      std::string where = "symbol " + std::to_string(s) + " '" + symbol.name()->str() + "'";
      if (symbol.input() >= inputs.size())
        return invalid(where, "names input " + std::to_string(symbol.input()) + " of " +
                                  std::to_string(inputs.size()));
      const auto* dims = inputs.Get(symbol.input())->type()->dims();
      if (dims == nullptr || symbol.dim() >= dims->size())
        return invalid(where, "names dimension " + std::to_string(symbol.dim()) +
                                  " of an input of lower rank");
      // Without an upper bound (INT64_MAX) the program must plan its memory per run.
      bool unbounded = symbol.max() == kUnboundedDim;
      if (unbounded && !plannedPerRun())
        return invalid(where,
                       "has no upper bound, but the program's memory is not planned per "
                       "run (Program.arena_values)");
      // Planned per run, the inputs' static sizes are nominal and bound nothing.
      if (symbol.min() < 0 || symbol.min() > symbol.max() ||
          (!plannedPerRun() && symbol.max() > dims->Get(symbol.dim())))
        return invalid(where, "has the range " + std::to_string(symbol.min()) + ".." +
                                  std::to_string(symbol.max()) + " beyond the input's bound " +
                                  std::to_string(dims->Get(symbol.dim())));
    }
    return Status();
  }

  Status verifySignatureList(
      const flatbuffers::Vector<flatbuffers::Offset<fb::TensorSignature>>& list, const char* kind,
      std::vector<uint64_t>* sizes) {
    std::set<std::string_view> names;
    for (flatbuffers::uoffset_t i = 0; i < list.size(); ++i) {
      const fb::TensorSignature& signature = *list.Get(i);
      std::string where = std::string(kind) + " " + std::to_string(i);
      std::string_view signature_name = signature.name()->string_view();
      if (signature_name.empty()) return invalid(where, "has an empty name");
      where += " '" + std::string(signature_name) + "'";
      if (!names.insert(signature_name).second) {
        return invalid(where, "the name is used by another " + std::string(kind));
      }
      uint64_t byte_size = 0;
      if (Status s = verifyType(*signature.type(), where, &byte_size); !s.ok()) return s;
      size_t rank = signature.type()->dims() ? signature.type()->dims()->size() : 0;
      // No symbols at all means every dim was static.
      if (signature.dim_symbols() && signature.dim_symbols()->size() != 0 &&
          signature.dim_symbols()->size() != rank) {
        return invalid(where, "has " + std::to_string(signature.dim_symbols()->size()) +
                                  " dim symbols for rank " + std::to_string(rank));
      }
      // A check (outputs only) holds booleans and follows every output of the caller's.
      if (signature.check() != nullptr) {
        if (std::string_view(kind) != "output")
          return invalid(where, "is a check; only outputs are");
        if (signature.type()->element_type() != KILN_ELEMENT_TYPE_BOOL) {
          return invalid(where, "is a check, whose element type must be bool");
        }
      } else if (i > 0 && list.Get(i - 1)->check() != nullptr) {
        return invalid(where, "follows a check; checks come after every other output");
      }
      sizes->push_back(byte_size);
    }
    return Status();
  }

  Status verifySignatures() {
    if (Status s = verifySignatureList(*artifact_.inputs(), "input", &input_sizes_); !s.ok()) {
      return s;
    }
    return verifySignatureList(*artifact_.outputs(), "output", &output_sizes_);
  }

  /// A partitioned model: its mode, device count and rank agree, and device 0's artifact locates
  /// every other device's inside the file, after its own constants.
  Status verifyPartition() {
    const fb::Partition* partition = artifact_.partition();
    if (partition == nullptr) return Status();
    std::string_view mode = partition->mode()->string_view();
    if (mode != "tensor" && mode != "pipeline" && mode != "batch") {
      return Status(KILN_STATUS_UNIMPLEMENTED,
                    name_ + ": partition mode '" + partition->mode()->str() +
                        "' is not supported (this runtime runs 'tensor', 'pipeline' and 'batch')");
    }
    uint32_t devices = partition->devices(), rank = partition->rank();
    if (devices < 2 || rank >= devices) {
      return invalid("partition",
                     "device " + std::to_string(rank) + " of " + std::to_string(devices));
    }
    const auto* ranges = partition->device_artifacts();
    size_t count = ranges ? ranges->size() : 0;
    if (rank != 0 && count != 0) {
      return invalid("partition", "device " + std::to_string(rank) +
                                      "'s artifact carries other devices' artifacts");
    }
    if (rank == 0 && count != 0 && count != devices - 1) {
      return invalid("partition", "device 0's artifact carries " + std::to_string(count) +
                                      " other artifacts for " + std::to_string(devices) +
                                      " devices");
    }
    uint64_t end = constants_size_ != 0 ? artifact_.constants_offset() + constants_size_ : 0;
    for (size_t i = 0; i < count; ++i) {
      const fb::DeviceArtifactRange* range = ranges->Get(static_cast<flatbuffers::uoffset_t>(i));
      std::string where = "device " + std::to_string(i + 1) + "'s artifact [" +
                          std::to_string(range->offset()) + ", +" + std::to_string(range->size()) +
                          ")";
      if (range->offset() % 64 != 0) return invalid(where, "not 64-byte aligned in the file");
      if (range->offset() < end) return invalid(where, "overlaps what precedes it");
      if (range->offset() > file_size_ || range->size() > file_size_ - range->offset()) {
        return dataLoss(name_, where + " ends past the file's " + std::to_string(file_size_) +
                                   " bytes: truncated");
      }
      end = range->offset() + range->size();
    }
    return Status();
  }

  Status verifyConstants() {
    uint64_t offset = artifact_.constants_offset();
    constants_size_ = artifact_.constants_size();
    if (constants_size_ == 0) {
      if (offset != 0) return invalid("constants", "an empty section at offset " + std::to_string(offset));
      return Status();
    }
    std::string where = "constants section [" + std::to_string(offset) + ", +" +
                        std::to_string(constants_size_) + ")";
    if (offset % 64 != 0) return invalid(where, "not 64-byte aligned in the file");
    if (offset < kHeaderSize || offset > file_size_ || constants_size_ > file_size_ - offset) {
      return dataLoss(name_, where + " ends past the file's " + std::to_string(file_size_) +
                                 " bytes: truncated");
    }
    return Status();
  }

  Status verifyCodeObjects() {
    const auto& code_objects = *artifact_.code_objects();
    for (flatbuffers::uoffset_t i = 0; i < code_objects.size(); ++i) {
      const fb::CodeObject& code = *code_objects.Get(i);
      std::string where =
          "code object " + std::to_string(i) + " (target '" + code.target()->str() + "')";
      auto format = static_cast<int>(code.format());
      if (format < static_cast<int>(fb::CodeFormat::MIN) ||
          format > static_cast<int>(fb::CodeFormat::MAX)) {
        return invalid(where, "unknown code format " + std::to_string(format));
      }
      // A cuda artifact may carry the simulated CUDA device's code: an ELF shared object of the
      // kernels retargeted to the host, with target "cuda-sim".
      bool loadable = cuda_ ? code.format() == fb::CodeFormat::Cubin ||
                                  code.format() == fb::CodeFormat::Ptx ||
                                  (code.format() == fb::CodeFormat::ElfSharedObject &&
                                   code.target()->string_view() == "cuda-sim")
                            : code.format() == fb::CodeFormat::ElfSharedObject;
      if (!loadable) {
        return invalid(where, std::string("has format ") + fb::EnumNameCodeFormat(code.format()) +
                                  ", which the " + (cuda_ ? "cuda" : "cpu") +
                                  " device cannot load");
      }
      if (code.data()->size() == 0) return invalid(where, "has no bytes");
      for (flatbuffers::uoffset_t k = 0; k < code.kernels()->size(); ++k) {
        if (code.kernels()->Get(k)->size() == 0) {
          return invalid(where, "kernel " + std::to_string(k) + " has an empty symbol name");
        }
      }
      // The CUDA runtime loads one code object for the GPU and dispatches name kernels by index
      // alone, so every object must hold the same kernels in the same order.
      if (cuda_ && i != 0 && !sameKernels(*code.kernels(), *code_objects.Get(0)->kernels())) {
        return invalid(where,
                       "lists other kernels than code object 0; every code object of a "
                       "cuda artifact holds the same kernels in the same order");
      }
    }
    return Status();
  }

  static bool sameKernels(const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>& a,
                          const flatbuffers::Vector<flatbuffers::Offset<flatbuffers::String>>& b) {
    if (a.size() != b.size()) return false;
    for (flatbuffers::uoffset_t k = 0; k < a.size(); ++k) {
      if (a.Get(k)->string_view() != b.Get(k)->string_view()) return false;
    }
    return true;
  }

  /// Checks a binding of a step: its buffer reference and that its type fits in the buffer.
  Status verifyBinding(const fb::Binding& binding, const std::string& where,
                       uint64_t* type_byte_size) {
    const fb::BufferRef& buffer = *binding.buffer();
    auto kind = static_cast<int>(buffer.kind());
    if (kind < static_cast<int>(fb::BufferKind::MIN) ||
        kind > static_cast<int>(fb::BufferKind::MAX)) {
      return invalid(where, "unknown buffer kind " + std::to_string(kind));
    }
    const uint64_t offset = buffer.offset();
    const uint64_t size = buffer.size();
    std::string range = "[" + std::to_string(offset) + ", " +
                        (size <= std::numeric_limits<uint64_t>::max() - offset
                             ? std::to_string(offset + size)
                             : std::to_string(offset) + " + " + std::to_string(size)) +
                        ")";
    switch (buffer.kind()) {
      case fb::BufferKind::Arena:
        if (uint64_t alignment = std::min<uint64_t>(program_.arena_alignment(), kViewAlignment);
            offset % alignment != 0) {
          return invalid(where, "arena offset " + std::to_string(offset) + " is not aligned to " +
                                    std::to_string(alignment));
        }
        // Planned per run, the offset is within value `index`, which the run places (and
        // RunShapes::planArena checks the run's bytes against).
        if (plannedPerRun()) {
          if (buffer.index() >= program_.arena_values()->size())
            return invalid(where, "names arena value " + std::to_string(buffer.index()) + " of " +
                                      std::to_string(program_.arena_values()->size()));
          // The run checks the offset against the value's bytes for its shape (planArena); an
          // offset no value of 2^62 bytes could hold is refused here already.
          if (offset > kMaxPerRunOffset || size > kMaxPerRunOffset)
            return invalid(where, "arena buffer " + range + " lies past any arena a run can plan");
          break;
        }
        if (offset > program_.arena_size() || size > program_.arena_size() - offset) {
          return invalid(where, "arena buffer " + range + " exceeds the arena size " +
                                    std::to_string(program_.arena_size()));
        }
        break;
      case fb::BufferKind::Constant:
        if (offset > constants_size_ || size > constants_size_ - offset) {
          return invalid(where, "constant buffer " + range + " exceeds the constants size " +
                                    std::to_string(constants_size_));
        }
        break;
      case fb::BufferKind::Input:
      case fb::BufferKind::Output: {
        bool input = buffer.kind() == fb::BufferKind::Input;
        const std::vector<uint64_t>& sizes = input ? input_sizes_ : output_sizes_;
        const char* what = input ? "input" : "output";
        if (buffer.index() >= sizes.size()) {
          return invalid(where, std::string(what) + " index " + std::to_string(buffer.index()) +
                                    " is out of range (the artifact has " +
                                    std::to_string(sizes.size()) + " " + what + "s)");
        }
        // The whole tensor, or a view of part of it (a contiguous slice) at an aligned offset.
        uint64_t whole = sizes[buffer.index()];
        if (offset > whole || size > whole - offset || offset % kViewAlignment != 0) {
          return invalid(where, std::string(what) + " " + std::to_string(buffer.index()) +
                                    " is referenced as " + range + ", which is not a " +
                                    std::to_string(kViewAlignment) +
                                    "-byte aligned range within [0, " + std::to_string(whole) +
                                    ")");
        }
        break;
      }
    }
    if (Status s = verifyType(*binding.type(), where, type_byte_size); !s.ok()) return s;
    if (*type_byte_size > size) {
      return invalid(where, "its type needs " + std::to_string(*type_byte_size) +
                                " bytes but the " + bufferKindName(buffer.kind()) +
                                " buffer holds " + std::to_string(size));
    }
    return Status();
  }

  /// Notes which outputs a binding written by a step names.
  void noteWrite(const fb::Binding& binding) {
    if (binding.buffer()->kind() == fb::BufferKind::Output) {
      written_outputs_.insert(binding.buffer()->index());
    }
  }

  Status verifyBindings(const flatbuffers::Vector<flatbuffers::Offset<fb::Binding>>& bindings,
                        const std::string& where) {
    for (flatbuffers::uoffset_t b = 0; b < bindings.size(); ++b) {
      uint64_t byte_size = 0;
      if (Status s =
              verifyBinding(*bindings.Get(b), where + ": binding " + std::to_string(b), &byte_size);
          !s.ok()) {
        return s;
      }
      // A dispatch or library call lists its results after its operands; any output it names
      // is one it writes, since outputs are never read back by the program.
      noteWrite(*bindings.Get(b));
    }
    return Status();
  }

  Status verifyDispatch(const fb::Dispatch& dispatch, const std::string& step) {
    const auto& code_objects = *artifact_.code_objects();
    std::string where = step + " (dispatch)";
    if (dispatch.code_object() >= code_objects.size()) {
      return invalid(where, "code object index " + std::to_string(dispatch.code_object()) +
                                " is out of range (the artifact has " +
                                std::to_string(code_objects.size()) + ")");
    }
    const fb::CodeObject& code = *code_objects.Get(dispatch.code_object());
    if (dispatch.kernel() >= code.kernels()->size()) {
      return invalid(where, "kernel index " + std::to_string(dispatch.kernel()) +
                                " is out of range (code object " +
                                std::to_string(dispatch.code_object()) + " has " +
                                std::to_string(code.kernels()->size()) + " kernels)");
    }
    where = step + " (dispatch '" + code.kernels()->Get(dispatch.kernel())->str() + "')";
    if (Status s = verifyCudaLaunch(dispatch, where); !s.ok()) return s;
    const auto& counts = *dispatch.workgroup_count();
    if (counts.size() == 0) return invalid(where, "workgroup_count is empty");
    uint64_t total = 1;
    for (flatbuffers::uoffset_t d = 0; d < counts.size(); ++d) {
      uint32_t count = counts.Get(d);
      if (count == 0) {
        return invalid(where, "workgroup count " + std::to_string(d) + " is 0");
      }
      if (total > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / count) {
        return invalid(where, "the number of workgroups overflows");
      }
      total *= count;
    }
    // A count known at run time: (binding, dimension, tile) triples naming the bindings'
    // dimensions, in a program for a range of shapes.
    if (const auto* grid = dispatch.workgroup_dims(); grid != nullptr && grid->size() != 0) {
      if (symbolCount() == 0 || grid->size() % 3 != 0)
        return invalid(where,
                       "workgroup_dims must be (binding, dimension, tile) triples of a "
                       "program for a range of shapes");
      const auto& bindings = *dispatch.bindings();
      for (flatbuffers::uoffset_t i = 0; i < grid->size(); i += 3) {
        int64_t binding = grid->Get(i), dim = grid->Get(i + 1), tile = grid->Get(i + 2);
        bool valid =
            tile > 0 && (binding < 0 ? dim >= 0 : binding < static_cast<int64_t>(bindings.size()));
        if (valid && binding >= 0) {
          const auto* dims =
              bindings.Get(static_cast<flatbuffers::uoffset_t>(binding))->type()->dims();
          valid = dim >= 0 && dims != nullptr && dim < static_cast<int64_t>(dims->size());
        }
        if (!valid)
          return invalid(where, "workgroup_dims entry " + std::to_string(i / 3) +
                                    " names no dimension of a binding");
      }
    }
    return verifyBindings(*dispatch.bindings(), where);
  }

  /// A dispatch of a cuda artifact says how to launch it; one of a cpu artifact does not.
  Status verifyCudaLaunch(const fb::Dispatch& dispatch, const std::string& where) {
    const fb::CudaLaunch* launch = dispatch.cuda();
    if (!cuda_) {
      if (launch != nullptr) {
        return invalid(where,
                       "has CUDA launch parameters (Dispatch.cuda), which only the "
                       "dispatches of a cuda artifact take");
      }
      return Status();
    }
    if (dispatch.code_object() != 0) {
      return invalid(where, "names code object " + std::to_string(dispatch.code_object()) +
                                "; a cuda dispatch names code object 0 (the runtime loads the "
                                "one that fits the GPU)");
    }
    if (launch == nullptr) {
      return invalid(where,
                     "has no CUDA launch parameters (Dispatch.cuda), which every "
                     "dispatch of a cuda artifact needs");
    }
    if (launch->block_size() == 0 || launch->block_size() > kMaxCudaBlockSize) {
      return invalid(where, "CUDA block size " + std::to_string(launch->block_size()) +
                                " is not between 1 and " + std::to_string(kMaxCudaBlockSize));
    }
    if (launch->work_items_code() != nullptr && launch->work_items_code()->size() != 0) {
      if (launch->work_items() != 0)
        return invalid(where, "has both CUDA work items and code for them");
      // The symbols are the dispatch's bindings' dimensions.
      size_t dims = 0;
      for (const fb::Binding* binding : *dispatch.bindings())
        if (binding->type() && binding->type()->dims()) dims += binding->type()->dims()->size();
      if (std::string problem = checkDimCode(*launch->work_items_code(), dims); !problem.empty())
        return invalid(where, "CUDA work items: " + problem);
      return Status();
    }
    if (launch->work_items() == 0) return invalid(where, "has 0 CUDA work items");
    return Status();
  }

  Status verifyCopy(const fb::Copy& copy, const std::string& step) {
    std::string where = step + " (copy)";
    uint64_t source_size = 0;
    uint64_t destination_size = 0;
    if (Status s = verifyBinding(*copy.source(), where + ": source", &source_size); !s.ok()) {
      return s;
    }
    if (Status s = verifyBinding(*copy.destination(), where + ": destination", &destination_size);
        !s.ok()) {
      return s;
    }
    if (source_size != destination_size) {
      return invalid(where, "copies " + std::to_string(source_size) + " bytes into " +
                                std::to_string(destination_size));
    }
    fb::BufferKind destination = copy.destination()->buffer()->kind();
    if (destination == fb::BufferKind::Input || destination == fb::BufferKind::Constant) {
      return invalid(where, std::string("the destination is a read-only ") +
                                bufferKindName(destination) + " buffer");
    }
    noteWrite(*copy.destination());
    return Status();
  }

  bool plannedPerRun() const {
    return program_.arena_values() && program_.arena_values()->size() != 0;
  }

  /// A program planned per run: each value's slot and byte-size code, each slot's live steps.
  Status verifyArenaPlan() {
    if (!plannedPerRun()) return Status();
    if (symbolCount() == 0)
      return invalid("program", "plans its memory per run but has no dimensions that vary");
    const auto* slots = program_.arena_slots();
    const uint32_t slot_count = slots ? slots->size() : 0;
    const auto& values = *program_.arena_values();
    for (flatbuffers::uoffset_t v = 0; v < values.size(); ++v) {
      const fb::ArenaValue& value = *values.Get(v);
      std::string where = "arena value " + std::to_string(v);
      if (value.slot() >= slot_count)
        return invalid(where, "is in slot " + std::to_string(value.slot()) + " of " +
                                  std::to_string(slot_count));
      if (!value.size()->code()) return invalid(where, "has no size code");
      if (std::string problem = checkDimCode(*value.size()->code(), symbolCount());
          !problem.empty())
        return invalid(where, "has a size code that " + problem);
    }
    const uint32_t step_count = program_.steps()->size();
    for (uint32_t i = 0; i < slot_count; ++i) {
      const fb::ArenaSlot& slot = *slots->Get(i);
      if (slot.first_step() > slot.last_step() || slot.last_step() >= std::max(step_count, 1u))
        return invalid("arena slot " + std::to_string(i),
                       "is live at steps " + std::to_string(slot.first_step()) + ".." +
                           std::to_string(slot.last_step()) + " of " + std::to_string(step_count));
    }
    return Status();
  }

  Status verifyProgram() {
    if (Status s = verifyArenaPlan(); !s.ok()) return s;
    uint32_t alignment = program_.arena_alignment();
    if (alignment == 0 || (alignment & (alignment - 1)) != 0 || alignment > kMaxArenaAlignment) {
      return invalid("program", "arena alignment " + std::to_string(alignment) +
                                    " is not a power of two up to " +
                                    std::to_string(kMaxArenaAlignment));
    }
    const auto& steps = *program_.steps();
    uint32_t streams = std::max<uint32_t>(program_.stream_count(), 1);
    if (streams > kMaxStreams) {
      return invalid("program", "has " + std::to_string(streams) + " streams; at most " +
                                    std::to_string(kMaxStreams) + " are run");
    }
    for (flatbuffers::uoffset_t i = 0; i < steps.size(); ++i) {
      const fb::Step& step = *steps.Get(i);
      std::string where = "step " + std::to_string(i);
      if (step.stream() >= streams) {
        return invalid(where, "runs on stream " + std::to_string(step.stream()) + " of " +
                                  std::to_string(streams));
      }
      if (step.waits()) {
        for (uint32_t wait : *step.waits()) {
          if (wait >= i || steps.Get(wait)->stream() == step.stream()) {
            return invalid(where, "waits for step " + std::to_string(wait) +
                                      ", which is not an earlier step of another stream");
          }
        }
      }
      switch (step.kind_type()) {
        case fb::StepKind::Dispatch:
          if (Status s = verifyDispatch(*step.kind_as_Dispatch(), where); !s.ok()) return s;
          break;
        case fb::StepKind::LibraryCall: {
          const fb::LibraryCall& call = *step.kind_as_LibraryCall();
          if (call.name()->size() == 0) {
            return invalid(where + " (library call)", "has an empty name");
          }
          if (Status s = verifyBindings(*call.bindings(),
                                        where + " (library call '" + call.name()->str() + "')");
              !s.ok()) {
            return s;
          }
          // The device's rules for its calls are checked here, where no device is needed, so
          // that a bad artifact is refused when it loads rather than when a session is created.
          if (check_library_call_ != nullptr) {
            if (Status s = check_library_call_(artifact_.device()->string_view(), call); !s.ok()) {
              return Status(s.code(), name_ + ": " + where + ": " + s.message());
            }
          }
          break;
        }
        case fb::StepKind::Copy:
          if (Status s = verifyCopy(*step.kind_as_Copy(), where); !s.ok()) return s;
          break;
        default:
          return invalid(where,
                         "unknown step kind " + std::to_string(static_cast<int>(step.kind_type())));
      }
    }
    return Status();
  }

  Status verifyOutputsWritten() {
    const auto& outputs = *artifact_.outputs();
    for (flatbuffers::uoffset_t i = 0; i < outputs.size(); ++i) {
      // An output without elements has nothing to write (a CUDA program launches no kernel for
      // it).
      const auto* dims = outputs.Get(i)->type()->dims();
      bool empty = dims != nullptr && std::find(dims->begin(), dims->end(), 0) != dims->end();
      if (written_outputs_.count(i) == 0 && !empty) {
        return invalid("output " + std::to_string(i) + " '" + outputs.Get(i)->name()->str() + "'",
                       "is never written by any step");
      }
    }
    return Status();
  }

  const fb::Artifact& artifact_;
  const size_t file_size_;
  const fb::Program& program_;
  const std::string& name_;
  /// Whether the artifact's device is "cuda" (otherwise "cpu").
  const bool cuda_;
  /// The device's rules for library calls, or NULL.
  const LibraryCallCheck check_library_call_;
  std::vector<uint64_t> input_sizes_;
  std::vector<uint64_t> output_sizes_;
  uint64_t constants_size_ = 0;
  std::set<uint32_t> written_outputs_;
};

}  // namespace

Status verifyArtifact(const uint8_t* data, size_t size, const std::string& name,
                      LibraryCallCheck check_library_call) {
  if (size < kHeaderSize) {
    return dataLoss(name, std::to_string(size) + " bytes, too short for a header");
  }
  if (!flatbuffers::BufferHasIdentifier(data, fb::ArtifactIdentifier())) {
    return dataLoss(name, "file identifier '" +
                              describeIdentifier(data + sizeof(flatbuffers::uoffset_t)) +
                              "', expected '" KILN_ARTIFACT_FILE_IDENTIFIER "'");
  }
  // The table lies in the first 2 GiB; the constants section after it may go beyond.
  size_t table_limit = std::min<size_t>(size, FLATBUFFERS_MAX_BUFFER_SIZE - 1);

  // Read the format version on its own first: a file of another version may not verify against
  // this schema, and its version is the better explanation.
  flatbuffers::uoffset_t root_offset = flatbuffers::ReadScalar<flatbuffers::uoffset_t>(data);
  if (root_offset < kHeaderSize || root_offset > table_limit - sizeof(flatbuffers::soffset_t) ||
      root_offset % sizeof(flatbuffers::uoffset_t) != 0) {
    return dataLoss(name, "root offset " + std::to_string(root_offset) + " is out of range");
  }
  const fb::Artifact* root = fb::GetArtifact(data);
  {
    // Generated tables derive privately from flatbuffers::Table and share its address.
    const auto* table = reinterpret_cast<const flatbuffers::Table*>(root);
    flatbuffers::Verifier header_verifier(data, table_limit);
    if (!table->VerifyTableStart(header_verifier) ||
        !table->VerifyField<uint32_t>(header_verifier, fb::Artifact::VT_FORMAT_VERSION, 4)) {
      return dataLoss(name, "the root table is truncated or corrupt");
    }
  }
  if (root->format_version() != KILN_ARTIFACT_FORMAT_VERSION) {
    return Status(KILN_STATUS_FAILED_PRECONDITION,
                  name + ": .kiln format version " + std::to_string(root->format_version()) +
                      " is not supported (this runtime reads version " +
                      std::to_string(KILN_ARTIFACT_FORMAT_VERSION) + ")");
  }

  flatbuffers::Verifier verifier(data, table_limit, /*max_depth=*/64, /*max_tables=*/10000000);
  if (!fb::VerifyArtifactBuffer(verifier)) {
    return dataLoss(name, "the FlatBuffers structure does not verify: truncated or corrupt");
  }
  return SemanticVerifier(*root, size, name, check_library_call).verify();
}

}  // namespace kiln::runtime
