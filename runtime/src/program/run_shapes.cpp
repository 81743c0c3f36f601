//===- run_shapes.cpp - The shapes of one run of a program for a range of shapes ----------===//

#include "runtime/src/program/run_shapes.h"

#include <algorithm>

#include "kiln/artifact_format.h"
#include "runtime/src/artifact/artifact.h"
#include "contract/memory_planner.h"
#include "runtime/src/program/program_table.h"
#include "runtime/src/tensor.h"

namespace kiln::runtime {

namespace fb = kiln::artifact;

void RunShapes::addType(const fb::TensorType& type, std::vector<Dim>& dims) {
  size_t rank = type.dims() ? type.dims()->size() : 0;
  for (size_t d = 0; d < rank; ++d) {
    Dim dim;
    dim.size = type.dims()->Get(static_cast<flatbuffers::uoffset_t>(d));
    if (type.dynamic_dims() && type.dynamic_dims()->size() == rank) {
      const fb::DimExpr* expr = type.dynamic_dims()->Get(static_cast<flatbuffers::uoffset_t>(d));
      if (expr->code() && expr->code()->size() != 0) dim.code = expr->code();
    }
    dims.push_back(dim);
  }
}

RunShapes RunShapes::build(const LoadedArtifact& artifact, const ProgramTable& table) {
  RunShapes shapes;
  if (artifact.root().symbols())
    for (const fb::Symbol* symbol : *artifact.root().symbols()) shapes.symbols_.push_back(symbol);
  for (const ResolvedBinding& binding : table.bindings()) {
    addType(*binding.type, shapes.binding_dims_);
    shapes.first_dim_.push_back(shapes.binding_dims_.size());
  }
  const fb::Program& program = artifact.program();
  if (program.arena_values() && program.arena_values()->size() != 0) {
    shapes.alignment_ = std::max<uint64_t>(program.arena_alignment(), 1);
    for (const fb::ArenaValue* value : *program.arena_values())
      shapes.arena_values_.push_back({value->slot(), value->size()->code()});
    for (const fb::ArenaSlot* slot : *program.arena_slots())
      shapes.arena_slots_.push_back({0, slot->first_step(), slot->last_step()});
    for (size_t b = 0; b < table.bindings().size(); ++b) {
      const ResolvedBinding& binding = table.bindings()[b];
      if (binding.kind != fb::BufferKind::Arena) continue;
      shapes.arena_bindings_.push_back(
          {b, binding.index, binding.offset,
           kiln_element_type_size(static_cast<kiln_element_type_t>(binding.type->element_type()))});
    }
  }
  for (const fb::TensorSignature* signature : *artifact.root().inputs()) {
    shapes.input_names_.push_back(signature->name()->str());
    shapes.inputs_.emplace_back();
    addType(*signature->type(), shapes.inputs_.back());
  }
  for (const fb::TensorSignature* signature : *artifact.root().outputs()) {
    shapes.outputs_.emplace_back();
    addType(*signature->type(), shapes.outputs_.back());
  }
  return shapes;
}

int64_t RunShapes::evaluate(const Dim& dim, const std::vector<int64_t>& values) const {
  if (dim.code == nullptr) return dim.size;
  int64_t result = 0;
  // The verifier checked every code; bindInputs checked that the run's values evaluate.
  if (!evaluateDimCode(*dim.code, values.data(), values.size(), &result)) return 0;
  return result;
}

bool RunShapes::evaluates(const std::vector<Dim>& dims, const std::vector<int64_t>& values,
                          int64_t* sizes) const {
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t result = dims[i].size;
    // Without upper bounds the static sizes are nominal (the run's plan holds any size).
    if (dims[i].code != nullptr &&
        (!evaluateDimCode(*dims[i].code, values.data(), values.size(), &result) || result < 0 ||
         (!plannedPerRun() && result > dims[i].size)))
      return false;
    if (sizes != nullptr) sizes[i] = result;
  }
  return true;
}

Status RunShapes::outOfBounds() const {
  // Without upper bounds, a size past 64 bits is the inputs' doing.
  if (plannedPerRun())
    return Status(KILN_STATUS_INVALID_ARGUMENT,
                  "the inputs' shape gives a dimension of the program a size past 64 bits");
  return Status(KILN_STATUS_INTERNAL,
                "the inputs' shape gives a dimension of the program no size within its bound");
}

Status RunShapes::bindInputs(const kiln_tensor_t* const* inputs,
                             std::vector<int64_t>& values) const {
  values.assign(symbols_.size(), 0);
  for (size_t s = 0; s < symbols_.size(); ++s) {
    const fb::Symbol& symbol = *symbols_[s];
    int64_t value = inputs[symbol.input()]->host.dims()[symbol.dim()];
    if (value < symbol.min() || value > symbol.max()) {
      return Status(KILN_STATUS_INVALID_ARGUMENT,
                    "input '" + input_names_[symbol.input()] + "': dimension " +
                        std::to_string(symbol.dim()) + " (" + symbol.name()->str() + ") is " +
                        std::to_string(value) + ", outside its range " + formatRange(symbol) +
                        " (kiln compile --shape-range)");
    }
    values[s] = value;
  }
  // Every output dimension must have a size within its bound for these values (a division by
  // zero or a size past the bound would be the compiler's error, never a run's; bindingDims
  // checks the bindings' the same way).
  for (const std::vector<Dim>& output : outputs_)
    if (!evaluates(output, values, nullptr)) return outOfBounds();
  // Every other dimension follows: a static one, or a symbol another input gave first.
  for (size_t i = 0; i < inputs_.size(); ++i) {
    const HostTensor& host = inputs[i]->host;
    for (size_t d = 0; d < inputs_[i].size(); ++d) {
      int64_t expected = evaluate(inputs_[i][d], values);
      if (host.dims()[d] == expected) continue;
      std::vector<int64_t> dims;
      for (const Dim& dim : inputs_[i]) dims.push_back(evaluate(dim, values));
      return Status(KILN_STATUS_INVALID_ARGUMENT,
                    "input '" + input_names_[i] + "': dimension " + std::to_string(d) + " is " +
                        std::to_string(host.dims()[d]) + " where the other inputs make it " +
                        std::to_string(expected) + " (expected " +
                        LoadedArtifact::formatType(host.elementType(), dims.data(), dims.size()) +
                        ")");
    }
  }
  return Status();
}

std::string RunShapes::formatRange(const fb::Symbol& symbol) {
  return std::to_string(symbol.min()) + ".." +
         (symbol.max() == kUnboundedDim ? std::string() : std::to_string(symbol.max()));
}

Status RunShapes::planArena(const std::vector<int64_t>& values, const std::vector<int64_t>& dims,
                            ArenaLayout& layout, uint64_t min_alignment) const {
  // Each slot as large as its largest value for the run.
  std::vector<BufferLifetime> slots(arena_slots_);
  std::vector<uint64_t> sizes(arena_values_.size(), 0);
  for (size_t v = 0; v < arena_values_.size(); ++v) {
    int64_t bytes = 0;
    if (!evaluateDimCode(*arena_values_[v].size, values.data(), values.size(), &bytes) ||
        bytes < 0) {
      return Status(KILN_STATUS_INVALID_ARGUMENT,
                    "the inputs' shape gives arena value " + std::to_string(v) +
                        " no size (a dimension too large for 64-bit sizes?)");
    }
    sizes[v] = static_cast<uint64_t>(bytes);
    BufferLifetime& slot = slots[arena_values_[v].slot];
    slot.size = std::max(slot.size, sizes[v]);
  }
  // No binding may reach past its value's bytes for the run (the compiler's error, never the
  // run's: a view is seen from its value's start where the value's size varies).
  for (const ArenaBinding& binding : arena_bindings_) {
    uint64_t bytes = runBytes(binding.binding, binding.element_size, dims);
    // Compared without adding: an offset near 2^64 would wrap the sum past the check.
    if (binding.value >= sizes.size() || binding.offset > sizes[binding.value] ||
        bytes > sizes[binding.value] - binding.offset) {
      return Status(KILN_STATUS_INTERNAL, "binding " + std::to_string(binding.binding) +
                                              " reaches past its arena value for this shape");
    }
  }
  // The same packing as the compiler's, over this run's sizes: the best of its orders, without
  // the compiler's improvement rounds (a new shape's plan costs one packing per order).
  const uint64_t alignment = std::max(alignment_, min_alignment);
  ArenaPlan plan = ::kiln::planArena(slots, alignment, /*improvementRounds=*/0);
  layout.value_offsets.resize(arena_values_.size());
  for (size_t v = 0; v < arena_values_.size(); ++v)
    layout.value_offsets[v] = plan.offsets[arena_values_[v].slot];
  layout.size = std::max<uint64_t>(plan.arenaSize, alignment);
  return Status();
}

Status RunShapes::bindingDims(const std::vector<int64_t>& values,
                              std::vector<int64_t>& dims) const {
  dims.resize(binding_dims_.size());
  return evaluates(binding_dims_, values, dims.data()) ? Status() : outOfBounds();
}

bool RunShapes::varies(size_t first, size_t count) const {
  for (size_t d = first_dim_[first]; d < first_dim_[first + count]; ++d)
    if (binding_dims_[d].code != nullptr) return true;
  return false;
}

uint64_t RunShapes::workgroups(const fb::Dispatch& dispatch, size_t first_binding,
                               const std::vector<int64_t>& dims) const {
  const auto& grid = *dispatch.workgroup_dims();
  uint64_t count = 1;
  for (flatbuffers::uoffset_t i = 0; i + 2 < grid.size(); i += 3) {
    int64_t binding = grid.Get(i), dim = grid.Get(i + 1), tile = grid.Get(i + 2);
    int64_t size = binding < 0 ? dim : dims[firstDim(first_binding + binding) + dim];
    count *= static_cast<uint64_t>((std::max<int64_t>(size, 0) + tile - 1) / tile);
  }
  return count;
}

std::vector<int64_t> RunShapes::outputDims(size_t index, const std::vector<int64_t>& values) const {
  std::vector<int64_t> dims;
  for (const Dim& dim : outputs_[index]) dims.push_back(evaluate(dim, values));
  return dims;
}

}  // namespace kiln::runtime
