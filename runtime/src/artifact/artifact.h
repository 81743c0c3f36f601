//===- artifact.h - A loaded and verified .kiln artifact --------*- C++ -*-===//
//
// LoadedArtifact owns the bytes of a .kiln file in 64-byte aligned memory, verifies them once
// (artifact_verifier.h), and keeps the tables the C API hands out (signatures, code objects, steps)
// as C structs whose pointers lead into those bytes. It backs kiln_artifact_t and is shared, never
// copied, by the sessions created from it.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_ARTIFACT_ARTIFACT_H_
#define KILN_RUNTIME_SRC_ARTIFACT_ARTIFACT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/inspect.h"
#include "kiln/runtime.h"
#include "kiln/runtime.hpp"
#include "contract/artifact_generated.h"
#include "runtime/src/artifact/artifact_verifier.h"

namespace kiln::runtime {

/// A verified .kiln artifact. Immutable; shared between threads and sessions through
/// std::shared_ptr<const LoadedArtifact>.
class LoadedArtifact : public std::enable_shared_from_this<LoadedArtifact> {
 public:
  /// How loadFile holds the file's bytes.
  enum class FileAccess {
    /// Read into memory of the artifact's own: what was verified is what runs, whatever later
    /// happens to the file (the default).
    Read,
    /// Mapped read-only, its pages read as they are used (a device of a split model touches its
    /// own weights only). The file must not be rewritten in place while the artifact lives
    /// (`cp` over it, `rsync --inplace`): the mapping would show the new bytes unverified, or
    /// raise SIGBUS where the file shrank. `kiln compile` replaces files by renaming, which is
    /// safe.
    Map,
  };

  /// Loads the file at `path` and verifies it, its library calls with `check_library_call`
  /// where given (verifyArtifact). Errors start with `path`.
  static Result<std::shared_ptr<const LoadedArtifact>> loadFile(
      const std::string& path, LibraryCallCheck check_library_call = nullptr,
      FileAccess access = FileAccess::Read);

  /// Copies `size` bytes at `data` into aligned memory and verifies them as loadFile does;
  /// `name` stands for the file in messages.
  static Result<std::shared_ptr<const LoadedArtifact>> loadMemory(
      const void* data, size_t size, std::string name,
      LibraryCallCheck check_library_call = nullptr);

  LoadedArtifact(const LoadedArtifact&) = delete;
  LoadedArtifact& operator=(const LoadedArtifact&) = delete;

  /// The path or name the artifact was loaded under.
  const std::string& name() const { return name_; }
  /// The root table; every field the runtime uses has been verified.
  const kiln::artifact::Artifact& root() const { return *root_; }
  const kiln::artifact::Program& program() const { return *root_->program(); }

  /// The constants (64-byte aligned) and their size in bytes.
  const uint8_t* constantsData() const;
  uint64_t constantsSize() const;

  uint64_t arenaSize() const { return program().arena_size(); }
  /// The alignment of the arena's base and of every arena offset (a power of two, at least 64).
  uint64_t arenaAlignment() const;
  /// The arena plus every output: what one run allocates.
  uint64_t runPeakMemory() const;

  const std::vector<kiln_tensor_signature_t>& inputs() const { return inputs_; }
  /// Every output the program writes: the caller's, then the checks (see checkMessages).
  const std::vector<kiln_tensor_signature_t>& outputs() const { return outputs_; }
  /// The outputs handed to the caller: the first ones of outputs().
  size_t callerOutputCount() const { return outputs_.size() - check_messages_.size(); }
  /// The message of check `index` (output callerOutputCount() + index): booleans that must all
  /// be true after a run, or the run fails with this message.
  const std::vector<std::string>& checkMessages() const { return check_messages_; }
  const std::vector<kiln_code_object_info_t>& codeObjects() const { return code_objects_; }
  const std::vector<kiln_step_info_t>& steps() const { return steps_; }

  /// A partitioned model (kiln compile --devices N): how many devices run it and which one this
  /// artifact's program is; 1 and 0 otherwise.
  uint32_t deviceCount() const;
  uint32_t deviceRank() const;
  /// The artifact of device `rank`: this one for its own rank; from device 0's file, another
  /// device's, verified and sharing these bytes. OUT_OF_RANGE past the devices; INVALID_ARGUMENT
  /// when this artifact does not carry it (another device's artifact carries none).
  Result<std::shared_ptr<const LoadedArtifact>> deviceArtifact(uint32_t rank) const;

  /// Formats a type as "f32[1,3,224,224]" for messages.
  static std::string formatType(kiln_element_type_t type, const int64_t* dims, size_t rank);

 private:
  /// Frees malloc'ed bytes, or unmaps `mapped` bytes of a mapped file.
  struct FreeBytes {
    FreeBytes() noexcept : mapped(0) {}
    explicit FreeBytes(size_t mapped_bytes) noexcept : mapped(mapped_bytes) {}
    void operator()(uint8_t* bytes) const;
    size_t mapped;
  };
  using Bytes = std::unique_ptr<uint8_t, FreeBytes>;

  LoadedArtifact(std::string name, Bytes bytes, size_t size);
  /// A view of `size` bytes at `data` inside `parent`'s bytes (another device's artifact).
  LoadedArtifact(std::string name, const uint8_t* data, size_t size,
                 std::shared_ptr<const LoadedArtifact> parent);

  /// Verifies the bytes and builds the query tables.
  static Result<std::shared_ptr<const LoadedArtifact>> create(
      std::string name, Bytes bytes, size_t size, LibraryCallCheck check_library_call);
  /// Allocates `size` bytes (at least one) aligned to 64.
  static Result<Bytes> allocateBytes(size_t size, const std::string& name);
  void buildTables();

  std::string name_;
  Bytes bytes_;
  /// The artifact's first byte: bytes_, or inside parent_'s bytes.
  const uint8_t* data_ = nullptr;
  size_t size_;
  std::shared_ptr<const LoadedArtifact> parent_;
  /// The check the artifact's library calls passed, which its other devices' artifacts pass too.
  LibraryCallCheck check_library_call_ = nullptr;
  const kiln::artifact::Artifact* root_ = nullptr;

  std::vector<kiln_tensor_signature_t> inputs_;
  std::vector<kiln_tensor_signature_t> outputs_;
  std::vector<std::string> check_messages_;
  std::vector<kiln_code_object_info_t> code_objects_;
  std::vector<kiln_step_info_t> steps_;
  // Storage the C structs above point into (heap buffers, stable once built).
  std::vector<std::vector<const char*>> string_tables_;
  std::vector<std::vector<int64_t>> dim_tables_;
  std::vector<std::vector<kiln_binding_info_t>> binding_tables_;
  std::vector<std::unique_ptr<std::string>> parameter_texts_;
};

}  // namespace kiln::runtime

/// The C artifact object: a shared LoadedArtifact behind an opaque handle.
struct kiln_artifact_t {
  std::shared_ptr<const kiln::runtime::LoadedArtifact> artifact;
};

#endif  // KILN_RUNTIME_SRC_ARTIFACT_ARTIFACT_H_
