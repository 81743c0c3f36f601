//===- program_table.h - A program's steps and their bindings ---*- C++ -*-===//
//
// The program of a verified artifact flattened into a table of steps and their bindings, which
// every device runs from and the trace names steps by, and the addresses of a run's bindings
// resolved from the bases of its memory.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_PROGRAM_PROGRAM_TABLE_H_
#define KILN_RUNTIME_SRC_PROGRAM_PROGRAM_TABLE_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/runtime.hpp"
#include "runtime/src/artifact/artifact.h"

namespace kiln::runtime {

/// How a step of the program runs.
enum class StepKind { kDispatch, kLibraryCall, kCopy };

/// Where a binding's address comes from: a buffer of the artifact (the arena or the constants at
/// `offset`, or input / output `index`) and the bytes a step may touch through it.
struct ResolvedBinding {
  kiln::artifact::BufferKind kind;
  uint32_t index = 0;
  uint64_t offset = 0;
  uint64_t bytes = 0;
  /// The type the step sees the buffer as (in the artifact).
  const kiln::artifact::TensorType* type = nullptr;
};

/// One step of a ProgramTable: what every device needs to know before it adds its own part (a
/// loaded kernel, a prepared library call).
struct ProgramStep {
  StepKind kind = StepKind::kDispatch;
  /// The step's bindings in ProgramTable::bindings(): [first_binding, first_binding +
  /// binding_count).
  size_t first_binding = 0;
  size_t binding_count = 0;
  /// The artifact's step (kDispatch) or call (kLibraryCall); NULL otherwise.
  const kiln::artifact::Dispatch* dispatch = nullptr;
  const kiln::artifact::LibraryCall* library_call = nullptr;
  /// A dispatch's workgroups: the product of its workgroup counts.
  uint64_t workgroups = 1;
  /// The bytes a copy moves.
  uint64_t copy_size = 0;
  /// The stream the step runs on, and the earlier steps of other streams it waits for.
  uint32_t stream = 0;
  std::vector<uint32_t> waits;
  /// What the step runs: "kernel 'kiln_k1': add, relu", "library call 'onednn.matmul': ...",
  /// "copy" (the trace's slice names).
  std::string name;
  /// The step as messages name it: "step 3 (kernel 'kiln_k1': add, relu)", "step 4 (library
  /// call 'onednn.matmul': ...)", "step 5 (copy)".
  std::string label;
};

/// The bases a run's bindings are resolved against: the arena and the constants (NULL only
/// when nothing is bound there), and the address of every input and output.
struct BindingBases {
  uint8_t* arena = nullptr;
  /// In a program planned per run, the arena offset of each arena value (ArenaLayout); an arena
  /// binding's offset is then from its value's start.
  const uint64_t* arena_offsets = nullptr;
  uint8_t* constants = nullptr;
  void* const* inputs = nullptr;
  void* const* outputs = nullptr;
};

/// The program of a verified artifact flattened into a table of steps and their bindings, in
/// step order, with the bindings of each step contiguous so that a run's addresses are one
/// array and a step's are a slice of it. Built once per device program; immutable afterwards.
class ProgramTable {
 public:
  /// An empty table (no steps).
  ProgramTable() = default;
  /// Builds the table of `artifact`, whose program the verifier has checked (every binding in
  /// range, every kernel and code object index valid). INTERNAL naming the step for a step kind
  /// the verifier should have refused.
  static Result<ProgramTable> build(const LoadedArtifact& artifact);

  const std::vector<ProgramStep>& steps() const { return steps_; }
  const std::vector<ResolvedBinding>& bindings() const { return bindings_; }

  /// Writes the address of every binding, in bindings() order, into `addresses` (resized to the
  /// binding count): `bases.arena` or `bases.constants` plus the binding's offset, or the
  /// input's or output's address.
  void resolveAddresses(const BindingBases& bases, std::vector<void*>& addresses) const;

 private:
  void addBinding(const kiln::artifact::Binding& binding);

  std::vector<ProgramStep> steps_;
  std::vector<ResolvedBinding> bindings_;
};

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_SRC_PROGRAM_PROGRAM_TABLE_H_
