//===- tensor.h - Host tensors inside the runtime ---------------*- C++ -*-===//
//
// HostTensor, the C++ tensor that owns aligned host storage and backs the C
// API's kiln_tensor_t, and the checked size arithmetic shared by everything
// that builds one.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_TENSOR_H_
#define KILN_RUNTIME_SRC_TENSOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "kiln/runtime.h"
#include "kiln/runtime.hpp"

namespace kiln::runtime {

/// Returns the number of elements of a tensor with `dims` (1 for rank 0).
/// Fails with OUT_OF_RANGE when the rank exceeds KILN_TENSOR_MAX_RANK or the
/// count overflows size_t, and with INVALID_ARGUMENT for a negative dim.
Result<size_t> computeElementCount(const std::vector<int64_t>& dims);

/// Returns the byte size of a tensor of `type` with `dims`, with the checks of
/// `computeElementCount`, INVALID_ARGUMENT for an invalid type and
/// OUT_OF_RANGE when the size (rounded up to the storage alignment) overflows.
Result<size_t> computeByteSize(kiln_element_type_t type, const std::vector<int64_t>& dims);

/// Formats dims as "[2, 3]" for messages.
std::string formatDims(const std::vector<int64_t>& dims);

/// A dense, row-major tensor in host memory. Its storage is zero-filled when
/// allocated and aligned to KILN_TENSOR_ALIGNMENT; the data pointer is valid
/// even when the tensor has no elements. Move-only.
class HostTensor {
 public:
  /// Allocates a zero-filled tensor; fails like `computeByteSize`, or with
  /// RESOURCE_EXHAUSTED when the memory cannot be allocated.
  static Result<HostTensor> allocate(kiln_element_type_t type, std::vector<int64_t> dims);

  /// A tensor over `data`, which the caller owns (kiln_tensor_wrap): `release(data, context)`
  /// runs when the tensor goes, if given. Fails like `computeByteSize`, and with
  /// INVALID_ARGUMENT for data not aligned to the element size or a `data_size` that is not the
  /// tensor's byte size.
  static Result<HostTensor> wrap(kiln_element_type_t type, std::vector<int64_t> dims, void* data,
                                 size_t data_size, kiln_tensor_release_fn release,
                                 void* context);

  HostTensor(HostTensor&&) noexcept = default;
  HostTensor& operator=(HostTensor&&) noexcept = default;

  kiln_element_type_t elementType() const { return element_type_; }
  size_t rank() const { return dims_.size(); }
  const std::vector<int64_t>& dims() const { return dims_; }
  size_t elementCount() const { return element_count_; }
  size_t byteSize() const { return byte_size_; }
  void* data() { return storage_.get(); }
  const void* data() const { return storage_.get(); }

 private:
  /// Frees storage the tensor allocated, or hands wrapped storage back to its owner.
  struct FreeStorage {
    FreeStorage() noexcept : release(nullptr), context(nullptr), wrapped(false) {}
    FreeStorage(kiln_tensor_release_fn release, void* context) noexcept
        : release(release), context(context), wrapped(true) {}
    void operator()(void* storage) const;

    kiln_tensor_release_fn release;
    void* context;
    bool wrapped;
  };

  HostTensor(kiln_element_type_t element_type, std::vector<int64_t> dims, size_t element_count,
             size_t byte_size, std::unique_ptr<void, FreeStorage> storage);

  kiln_element_type_t element_type_;
  std::vector<int64_t> dims_;
  size_t element_count_;
  size_t byte_size_;
  std::unique_ptr<void, FreeStorage> storage_;
};

}  // namespace kiln::runtime

/// The C tensor object: a HostTensor behind an opaque handle.
struct kiln_tensor_t {
  kiln::runtime::HostTensor host;
};

#endif  // KILN_RUNTIME_SRC_TENSOR_H_
