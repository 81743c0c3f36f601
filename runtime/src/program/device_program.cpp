//===- device_program.cpp - What a session runs, on any device ------------===//

#include "runtime/src/program/device_program.h"

#include <string>
#include <utility>

#include "runtime/src/element_type.h"
#include "runtime/src/tensor.h"

namespace kiln::runtime {

Status checkRunArguments(const LoadedArtifact& artifact, size_t input_count,
                         const kiln_tensor_t* const* inputs, size_t output_count,
                         kiln_tensor_t* const* outputs) {
  const auto& signatures = artifact.inputs();
  const bool dynamic = artifact.root().symbols() && artifact.root().symbols()->size() != 0;
  if (input_count != signatures.size()) {
    return Status(KILN_STATUS_INVALID_ARGUMENT, artifact.name() + ": expected " +
                                                    std::to_string(signatures.size()) +
                                                    " inputs, got " + std::to_string(input_count));
  }
  if (input_count != 0 && inputs == nullptr) {
    return Status(KILN_STATUS_INVALID_ARGUMENT, "the inputs array is NULL");
  }
  for (size_t i = 0; i < input_count; ++i) {
    const kiln_tensor_signature_t& signature = signatures[i];
    const kiln_tensor_t* input = inputs[i];
    if (input == nullptr) {
      return Status(KILN_STATUS_INVALID_ARGUMENT, std::string("input '") + signature.name + "' (" +
                                                      std::to_string(i) + ") is NULL");
    }
    const HostTensor& host = input->host;
    bool matches = host.elementType() == signature.element_type && host.rank() == signature.rank;
    // A program for a range of shapes checks the dimensions against their ranges (RunShapes).
    for (size_t d = 0; matches && !dynamic && d < signature.rank; ++d) {
      matches = host.dims()[d] == signature.dims[d];
    }
    if (!matches) {
      return Status(
          KILN_STATUS_INVALID_ARGUMENT,
          std::string("input '") + signature.name + "': expected " +
              LoadedArtifact::formatType(signature.element_type, signature.dims, signature.rank) +
              ", got " +
              LoadedArtifact::formatType(host.elementType(), host.dims().data(), host.rank()));
    }
  }
  return checkOutputRoom(artifact, artifact.outputs().size(), output_count, outputs);
}

Status checkOutputRoom(const LoadedArtifact& artifact, size_t expected, size_t output_count,
                       kiln_tensor_t* const* outputs) {
  if (output_count != expected) {
    return Status(KILN_STATUS_INVALID_ARGUMENT, artifact.name() + ": expected room for " +
                                                    std::to_string(expected) + " outputs, got " +
                                                    std::to_string(output_count));
  }
  if (output_count != 0 && outputs == nullptr) {
    return Status(KILN_STATUS_INVALID_ARGUMENT, "the outputs array is NULL");
  }
  return Status();
}

Status allocateOutputTensors(const LoadedArtifact& artifact, std::vector<kiln_tensor_t*>& tensors,
                             const RunShapes* shapes, const std::vector<int64_t>* values,
                             kiln_tensor_t* const* provided) {
  const auto& signatures = artifact.outputs();
  tensors.assign(signatures.size(), nullptr);
  for (size_t i = 0; i < signatures.size(); ++i) {
    const kiln_tensor_signature_t& signature = signatures[i];
    std::vector<int64_t> dims =
        shapes != nullptr && shapes->dynamic()
            ? shapes->outputDims(i, *values)
            : std::vector<int64_t>(signature.dims, signature.dims + signature.rank);
    if (provided != nullptr && provided[i] != nullptr) {
      HostTensor& given = provided[i]->host;
      if (given.elementType() != signature.element_type || given.dims() != dims) {
        releaseTensors(tensors);
        return Status(KILN_STATUS_INVALID_ARGUMENT,
                      std::string("output '") + signature.name + "': the tensor given to write " +
                          "it into is " + describeElementType(given.elementType()) +
                          formatDims(given.dims()) + "; this run writes " +
                          describeElementType(signature.element_type) + formatDims(dims));
      }
      auto over = HostTensor::wrap(signature.element_type, std::move(dims), given.data(),
                                   given.byteSize(), nullptr, nullptr);
      if (!over.ok()) {
        releaseTensors(tensors);
        return Status(over.status().code(),
                      std::string("output '") + signature.name + "': " + over.status().message());
      }
      tensors[i] = new kiln_tensor_t{std::move(*over)};
      continue;
    }
    auto host = HostTensor::allocate(signature.element_type, std::move(dims));
    if (!host.ok()) {
      releaseTensors(tensors);
      return Status(host.status().code(),
                    std::string("output '") + signature.name + "': " + host.status().message());
    }
    tensors[i] = new kiln_tensor_t{std::move(*host)};
  }
  return Status();
}

void releaseTensors(std::vector<kiln_tensor_t*>& tensors) {
  for (kiln_tensor_t*& tensor : tensors) {
    delete tensor;
    tensor = nullptr;
  }
}

}  // namespace kiln::runtime
