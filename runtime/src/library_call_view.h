//===- library_call_view.h - Reading a LibraryCall's bindings and parameters -*- C++ -*-===//
//
// What every device's library calls share: typed access to a LibraryCall table's bindings and
// parameters, with errors that name the call. The CPU's oneDNN calls (src/cpu/onednn) and the
// CUDA device's cuBLASLt / cuDNN calls (src/cuda) both read their calls through it, so that the
// two accept the same encoding and word their errors alike.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_LIBRARY_CALL_VIEW_H_
#define KILN_RUNTIME_SRC_LIBRARY_CALL_VIEW_H_

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

#include "kiln/runtime.hpp"
#include "runtime/schema/artifact_generated.h"

namespace kiln::runtime {

/// A binding as the libraries see it: where it lives, its element type and its static dims.
struct LibraryCallBinding {
  kiln::artifact::BufferKind kind = kiln::artifact::BufferKind::Arena;
  uint64_t offset = 0;
  kiln_element_type_t element_type = KILN_ELEMENT_TYPE_F32;
  std::vector<int64_t> dims;
};

/// Dims as a type spells them, "2x3x4" for {2, 3, 4} (as in 2x3x4xf32), or "scalar" for none;
/// for messages. (tensor.h's formatDims writes "[2, 3, 4]" for the C API's shapes.)
std::string formatTypeDims(const std::vector<int64_t>& dims);

/// One LibraryCall with its parameters indexed by key. Every accessor returns INVALID_ARGUMENT
/// naming the call (its name and description) and the offending binding or parameter.
class LibraryCallView {
 public:
  /// Indexes `call`; fails on a missing binding table, duplicate keys, a dimension that is not a
  /// static size, a buffer too small for its type, or a binding whose element type is not one of
  /// `element_types` (the message then ends in "; " + `element_types_text`, which says what the
  /// library takes, e.g. "oneDNN calls take f32 tensors only").
  static Status create(const kiln::artifact::LibraryCall& call,
                       const std::vector<kiln_element_type_t>& element_types,
                       const std::string& element_types_text, LibraryCallView* out);

  /// "library call 'onednn.convolution' (description)", for messages.
  const std::string& label() const { return label_; }
  const std::string& name() const { return name_; }
  const std::vector<LibraryCallBinding>& bindings() const { return bindings_; }

  /// An INVALID_ARGUMENT status "<label>: <message>".
  Status invalid(const std::string& message) const;
  /// An UNIMPLEMENTED status "<label>: <message>", for a well-formed call the library cannot run.
  Status unimplemented(const std::string& message) const;

  /// The int parameter `key` with exactly `count` values (any count when count < 0); `fallback`
  /// when absent (an error when absent and fallback is null).
  Status ints(const std::string& key, int count, const std::vector<int64_t>* fallback,
              std::vector<int64_t>* out) const;
  /// A single int parameter with a default.
  Status intScalar(const std::string& key, int64_t fallback, int64_t* out) const;
  /// String and float parameters; empty when absent.
  std::vector<std::string> strings(const std::string& key) const;
  std::vector<float> floats(const std::string& key) const;

  /// Fails for a parameter key not in `known`, so that a misspelled key is not silently ignored.
  Status checkKeys(const std::vector<std::string>& known) const;

 private:
  std::string name_;
  std::string label_;
  std::vector<LibraryCallBinding> bindings_;
  std::unordered_map<std::string, std::vector<int64_t>> ints_;
  std::unordered_map<std::string, std::vector<float>> floats_;
  std::unordered_map<std::string, std::vector<std::string>> strings_;
};

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_SRC_LIBRARY_CALL_VIEW_H_
