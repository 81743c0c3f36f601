//===- program_table.cpp - A program's steps and their bindings -----------===//

#include "runtime/src/program/program_table.h"

#include <string>
#include <utility>

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

}  // namespace kiln::runtime
