//===- device_program.cpp - What a session runs, on any device ------------===//

#include "runtime/src/device_program.h"

#include <string>
#include <utility>

#include "runtime/src/tensor.h"

namespace kiln::runtime {

namespace fb = kiln::artifact;

namespace {

/// "WHAT 'NAME': DESCRIPTION" or "WHAT 'NAME'" for a named step.
std::string describe(const char* what, const flatbuffers::String* name,
                     const flatbuffers::String* description) {
  std::string text = std::string(what) + " '" + name->str() + "'";
  if (description != nullptr && description->size() != 0) text += ": " + description->str();
  return text;
}

}  // namespace

void ProgramTable::addBinding(const fb::Binding& binding) {
  const fb::BufferRef& buffer = *binding.buffer();
  bindings_.push_back(
      {buffer.kind(), buffer.index(), buffer.offset(), buffer.size(), binding.type()});
}

Result<ProgramTable> ProgramTable::build(const LoadedArtifact& artifact) {
  ProgramTable table;
  const auto& steps = *artifact.program().steps();
  const auto& code_objects = *artifact.root().code_objects();
  table.steps_.reserve(steps.size());
  for (flatbuffers::uoffset_t i = 0; i < steps.size(); ++i) {
    const fb::Step& step = *steps.Get(i);
    ProgramStep resolved;
    resolved.first_binding = table.bindings_.size();
    switch (step.kind_type()) {
      case fb::StepKind::Dispatch: {
        const fb::Dispatch& dispatch = *step.kind_as_Dispatch();
        resolved.kind = StepKind::kDispatch;
        resolved.dispatch = &dispatch;
        for (uint32_t count : *dispatch.workgroup_count()) resolved.workgroups *= count;
        resolved.name = describe(
            "kernel", code_objects.Get(dispatch.code_object())->kernels()->Get(dispatch.kernel()),
            dispatch.description());
        for (const fb::Binding* binding : *dispatch.bindings()) table.addBinding(*binding);
        break;
      }
      case fb::StepKind::LibraryCall: {
        const fb::LibraryCall& call = *step.kind_as_LibraryCall();
        resolved.kind = StepKind::kLibraryCall;
        resolved.library_call = &call;
        resolved.name = describe("library call", call.name(), call.description());
        for (const fb::Binding* binding : *call.bindings()) table.addBinding(*binding);
        break;
      }
      case fb::StepKind::Copy: {
        const fb::Copy& copy = *step.kind_as_Copy();
        resolved.kind = StepKind::kCopy;
        resolved.name = "copy";
        table.addBinding(*copy.source());
        table.addBinding(*copy.destination());
        const kiln_binding_info_t& source = artifact.steps()[i].bindings[0];
        resolved.copy_size = kiln_element_type_size(source.element_type);
        for (size_t d = 0; d < source.rank; ++d)
          resolved.copy_size *= static_cast<uint64_t>(source.dims[d]);
        break;
      }
      default:
        return Status(KILN_STATUS_INTERNAL, artifact.name() + ": step " + std::to_string(i) +
                                                " has an unknown kind after verification");
    }
    resolved.label = "step " + std::to_string(i) + " (" + resolved.name + ")";
    resolved.stream = step.stream();
    if (step.waits()) resolved.waits.assign(step.waits()->begin(), step.waits()->end());
    resolved.binding_count = table.bindings_.size() - resolved.first_binding;
    table.steps_.push_back(std::move(resolved));
  }
  return table;
}

void ProgramTable::resolveAddresses(const BindingBases& bases,
                                    std::vector<void*>& addresses) const {
  addresses.resize(bindings_.size());
  for (size_t b = 0; b < bindings_.size(); ++b) {
    const ResolvedBinding& binding = bindings_[b];
    void* address = nullptr;
    switch (binding.kind) {
      case fb::BufferKind::Arena:
        address = bases.arena + binding.offset +
                  (bases.arena_offsets != nullptr ? bases.arena_offsets[binding.index] : 0);
        break;
      case fb::BufferKind::Constant:
        // The verifier has checked every constant range, so a NULL base is only offset by 0.
        address = bases.constants != nullptr ? bases.constants + binding.offset : nullptr;
        break;
      case fb::BufferKind::Input:
        address = static_cast<uint8_t*>(bases.inputs[binding.index]) + binding.offset;
        break;
      case fb::BufferKind::Output:
        address = static_cast<uint8_t*>(bases.outputs[binding.index]) + binding.offset;
        break;
    }
    addresses[b] = address;
  }
}

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
                             const RunShapes* shapes, const std::vector<int64_t>* values) {
  const auto& signatures = artifact.outputs();
  tensors.assign(signatures.size(), nullptr);
  for (size_t i = 0; i < signatures.size(); ++i) {
    const kiln_tensor_signature_t& signature = signatures[i];
    auto host = HostTensor::allocate(
        signature.element_type,
        shapes != nullptr && shapes->dynamic()
            ? shapes->outputDims(i, *values)
            : std::vector<int64_t>(signature.dims, signature.dims + signature.rank));
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
