//===- tensor.cpp - Host tensors and their C API --------------------------===//
//
// HostTensor allocation with overflow-checked sizes, and the kiln_tensor_*
// functions over it.
//
//===----------------------------------------------------------------------===//

#include "runtime/src/tensor.h"

#include <cstdlib>
#include <cstring>
#include <limits>
#include <new>
#include <utility>

#include "runtime/src/element_type.h"
#include "runtime/src/status.h"

namespace kiln::runtime {

Result<size_t> computeElementCount(const std::vector<int64_t>& dims) {
  if (dims.size() > KILN_TENSOR_MAX_RANK) {
    return Status(KILN_STATUS_OUT_OF_RANGE, "rank " + std::to_string(dims.size()) +
                                                " exceeds the maximum rank " +
                                                std::to_string(KILN_TENSOR_MAX_RANK));
  }
  // Check every dim before multiplying, so that a negative dim is reported
  // as such even when another dim is 0.
  for (size_t axis = 0; axis < dims.size(); ++axis) {
    if (dims[axis] < 0) {
      return Status(KILN_STATUS_INVALID_ARGUMENT,
                    "dim " + std::to_string(axis) + " of " + formatDims(dims) + " is negative");
    }
  }
  size_t count = 1;
  bool overflow = false;
  for (int64_t dim : dims) {
    if (dim == 0) return size_t{0};
    if (static_cast<uint64_t>(dim) > std::numeric_limits<size_t>::max() ||
        count > std::numeric_limits<size_t>::max() / static_cast<size_t>(dim)) {
      overflow = true;  // Keep scanning: a later 0 makes the tensor empty.
    } else {
      count *= static_cast<size_t>(dim);
    }
  }
  if (overflow) {
    return Status(KILN_STATUS_OUT_OF_RANGE,
                  "the element count of shape " + formatDims(dims) + " overflows");
  }
  return count;
}

Result<size_t> computeByteSize(kiln_element_type_t type, const std::vector<int64_t>& dims) {
  size_t element_size = kiln_element_type_size(type);
  if (element_size == 0) {
    return Status(KILN_STATUS_INVALID_ARGUMENT, "invalid " + describeElementType(type));
  }
  Result<size_t> count = computeElementCount(dims);
  if (!count.ok()) return count.status();
  // Leave room to round the allocation up to the alignment.
  const size_t limit = std::numeric_limits<size_t>::max() - KILN_TENSOR_ALIGNMENT;
  if (*count > limit / element_size) {
    return Status(KILN_STATUS_OUT_OF_RANGE, "the byte size of " + describeElementType(type) +
                                                " shape " + formatDims(dims) + " overflows");
  }
  return *count * element_size;
}

std::string formatDims(const std::vector<int64_t>& dims) {
  std::string text = "[";
  for (size_t axis = 0; axis < dims.size(); ++axis) {
    if (axis != 0) text += ", ";
    text += std::to_string(dims[axis]);
  }
  text += "]";
  return text;
}

void HostTensor::FreeStorage::operator()(void* storage) const {
  if (!wrapped) {
    std::free(storage);
  } else if (release != nullptr) {
    release(storage, context);
  }
}

HostTensor::HostTensor(kiln_element_type_t element_type, std::vector<int64_t> dims,
                       size_t element_count, size_t byte_size,
                       std::unique_ptr<void, FreeStorage> storage)
    : element_type_(element_type),
      dims_(std::move(dims)),
      element_count_(element_count),
      byte_size_(byte_size),
      storage_(std::move(storage)) {}

Result<HostTensor> HostTensor::allocate(kiln_element_type_t type, std::vector<int64_t> dims) {
  Result<size_t> byte_size = computeByteSize(type, dims);
  if (!byte_size.ok()) return byte_size.status();
  size_t element_count = *byte_size / kiln_element_type_size(type);
  // aligned_alloc needs a size that is a non-zero multiple of the alignment.
  size_t capacity =
      (*byte_size + KILN_TENSOR_ALIGNMENT - 1) / KILN_TENSOR_ALIGNMENT * KILN_TENSOR_ALIGNMENT;
  if (capacity == 0) capacity = KILN_TENSOR_ALIGNMENT;
  std::unique_ptr<void, FreeStorage> storage(std::aligned_alloc(KILN_TENSOR_ALIGNMENT, capacity));
  if (!storage) {
    return Status(KILN_STATUS_RESOURCE_EXHAUSTED, "cannot allocate " + std::to_string(capacity) +
                                                      " bytes for a " + describeElementType(type) +
                                                      " tensor of shape " + formatDims(dims));
  }
  std::memset(storage.get(), 0, capacity);
  return HostTensor(type, std::move(dims), element_count, *byte_size, std::move(storage));
}

Result<HostTensor> HostTensor::wrap(kiln_element_type_t type, std::vector<int64_t> dims,
                                    void* data, size_t data_size, kiln_tensor_release_fn release,
                                    void* context) {
  Result<size_t> byte_size = computeByteSize(type, dims);
  if (!byte_size.ok()) return byte_size.status();
  const size_t element_size = kiln_element_type_size(type);
  if (data_size != *byte_size) {
    return Status(KILN_STATUS_INVALID_ARGUMENT,
                  "data_size is " + std::to_string(data_size) + " bytes but a " +
                      describeElementType(type) + " tensor of shape " + formatDims(dims) +
                      " holds " + std::to_string(*byte_size));
  }
  if (data == nullptr && data_size != 0) {
    return Status(KILN_STATUS_INVALID_ARGUMENT, "data is NULL");
  }
  // Kernels read elements with their natural alignment; a tensor without elements still gets
  // a valid pointer.
  alignas(KILN_TENSOR_ALIGNMENT) static char no_data[KILN_TENSOR_ALIGNMENT];
  if (data == nullptr) data = no_data;
  if (reinterpret_cast<uintptr_t>(data) % element_size != 0) {
    return Status(KILN_STATUS_INVALID_ARGUMENT,
                  "data is not aligned to the " + std::to_string(element_size) +
                      "-byte elements of a " + describeElementType(type) + " tensor");
  }
  std::unique_ptr<void, FreeStorage> storage(data, FreeStorage(release, context));
  return HostTensor(type, std::move(dims), *byte_size / element_size, *byte_size,
                    std::move(storage));
}

namespace {

/// Builds a HostTensor from C arguments and hands it out as a C handle,
/// copying `data` into it when given.
Status createCTensor(const char* api_name, kiln_element_type_t type, size_t rank,
                     const int64_t* dims, const void* data, const size_t* data_size,
                     kiln_tensor_t** out_tensor) {
  if (out_tensor == nullptr) {
    return Status(KILN_STATUS_INVALID_ARGUMENT, std::string(api_name) + ": out_tensor is NULL");
  }
  if (rank > KILN_TENSOR_MAX_RANK) {
    return Status(KILN_STATUS_OUT_OF_RANGE,
                  std::string(api_name) + ": rank " + std::to_string(rank) +
                      " exceeds the maximum rank " + std::to_string(KILN_TENSOR_MAX_RANK));
  }
  if (rank != 0 && dims == nullptr) {
    return Status(KILN_STATUS_INVALID_ARGUMENT,
                  std::string(api_name) + ": dims is NULL but rank is " + std::to_string(rank));
  }
  Result<HostTensor> host = HostTensor::allocate(
      type, rank == 0 ? std::vector<int64_t>() : std::vector<int64_t>(dims, dims + rank));
  if (!host.ok()) return prefixStatus(api_name, host.status());
  if (data_size != nullptr) {
    if (*data_size != host->byteSize()) {
      return Status(KILN_STATUS_INVALID_ARGUMENT,
                    std::string(api_name) + ": data_size is " + std::to_string(*data_size) +
                        " bytes but a " + describeElementType(type) + " tensor of shape " +
                        formatDims(host->dims()) + " holds " + std::to_string(host->byteSize()));
    }
    if (data == nullptr && *data_size != 0) {
      return Status(KILN_STATUS_INVALID_ARGUMENT, std::string(api_name) + ": data is NULL");
    }
    if (*data_size != 0) std::memcpy(host->data(), data, *data_size);
  }
  kiln_tensor_t* tensor = new kiln_tensor_t{std::move(*host)};
  *out_tensor = tensor;
  return Status();
}

}  // namespace
}  // namespace kiln::runtime

extern "C" {

kiln_status_t* kiln_tensor_create(kiln_element_type_t type, size_t rank, const int64_t* dims,
                                  kiln_tensor_t** out_tensor) {
  return kiln::runtime::guardCApi("kiln_tensor_create", [&] {
    return kiln::runtime::createCTensor("kiln_tensor_create", type, rank, dims, nullptr, nullptr,
                                        out_tensor);
  });
}

kiln_status_t* kiln_tensor_create_copy(kiln_element_type_t type, size_t rank, const int64_t* dims,
                                       const void* data, size_t data_size,
                                       kiln_tensor_t** out_tensor) {
  return kiln::runtime::guardCApi("kiln_tensor_create_copy", [&] {
    return kiln::runtime::createCTensor("kiln_tensor_create_copy", type, rank, dims, data,
                                        &data_size, out_tensor);
  });
}

kiln_status_t* kiln_tensor_wrap(kiln_element_type_t type, size_t rank, const int64_t* dims,
                                void* data, size_t data_size, kiln_tensor_release_fn release,
                                void* release_context, kiln_tensor_t** out_tensor) {
  return kiln::runtime::guardCApi("kiln_tensor_wrap", [&]() -> kiln::Status {
    if (out_tensor == nullptr) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT, "kiln_tensor_wrap: out_tensor is NULL");
    }
    if (rank > KILN_TENSOR_MAX_RANK) {
      return kiln::Status(KILN_STATUS_OUT_OF_RANGE,
                          "kiln_tensor_wrap: rank " + std::to_string(rank) +
                              " exceeds the maximum rank " + std::to_string(KILN_TENSOR_MAX_RANK));
    }
    if (rank != 0 && dims == nullptr) {
      return kiln::Status(KILN_STATUS_INVALID_ARGUMENT,
                          "kiln_tensor_wrap: dims is NULL but rank is " + std::to_string(rank));
    }
    kiln::Result<kiln::runtime::HostTensor> host = kiln::runtime::HostTensor::wrap(
        type, rank == 0 ? std::vector<int64_t>() : std::vector<int64_t>(dims, dims + rank), data,
        data_size, release, release_context);
    if (!host.ok()) return kiln::runtime::prefixStatus("kiln_tensor_wrap", host.status());
    *out_tensor = new kiln_tensor_t{std::move(host.value())};
    return kiln::Status();
  });
}

void kiln_tensor_release(kiln_tensor_t* tensor) { delete tensor; }

kiln_element_type_t kiln_tensor_element_type(const kiln_tensor_t* tensor) {
  return tensor ? tensor->host.elementType() : static_cast<kiln_element_type_t>(0);
}

size_t kiln_tensor_rank(const kiln_tensor_t* tensor) { return tensor ? tensor->host.rank() : 0; }

const int64_t* kiln_tensor_dims(const kiln_tensor_t* tensor) {
  if (tensor == nullptr) return nullptr;
  // A rank-0 tensor's vector may have no buffer; hand out a valid pointer.
  static const int64_t kNoDims[1] = {0};
  return tensor->host.rank() == 0 ? kNoDims : tensor->host.dims().data();
}

size_t kiln_tensor_element_count(const kiln_tensor_t* tensor) {
  return tensor ? tensor->host.elementCount() : 0;
}

size_t kiln_tensor_byte_size(const kiln_tensor_t* tensor) {
  return tensor ? tensor->host.byteSize() : 0;
}

void* kiln_tensor_data(kiln_tensor_t* tensor) { return tensor ? tensor->host.data() : nullptr; }

const void* kiln_tensor_const_data(const kiln_tensor_t* tensor) {
  return tensor ? tensor->host.data() : nullptr;
}

}  // extern "C"
