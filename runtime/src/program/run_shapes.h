//===- run_shapes.h - The shapes of one run of a program for a range of shapes -*- C++ -*-===//
//
// A program compiled for a range of shapes (kiln compile --shape-range) names its dynamic
// dimensions as symbols, each a dimension of an input with a range, and every other dynamic
// dimension as code over them (artifact.fbs, DimExpr). RunShapes reads the symbols' values off a
// run's inputs, checks every input against them and their ranges, and evaluates the dimensions
// of every binding (which kernels read, kernel_abi.h) and of every output.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_RUNTIME_SRC_PROGRAM_RUN_SHAPES_H_
#define KILN_RUNTIME_SRC_PROGRAM_RUN_SHAPES_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "kiln/runtime.h"
#include "kiln/runtime.hpp"
#include "contract/artifact_generated.h"
#include "contract/memory_planner.h"
#include "runtime/src/artifact/dim_code.h"

namespace kiln::runtime {

class LoadedArtifact;
class ProgramTable;

/// Where a run's plan puts the arena values of a program planned per run: the offset of each
/// value (BufferRef.index) and the arena's size.
struct ArenaLayout {
  std::vector<uint64_t> value_offsets;
  uint64_t size = 0;
};

class RunShapes {
 public:
  /// The dimensions of `artifact` (verified), its bindings those of `table`.
  static RunShapes build(const LoadedArtifact& artifact, const ProgramTable& table);

  /// Whether the program was compiled for a range of shapes.
  bool dynamic() const { return !symbols_.empty(); }
  /// Whether its memory is planned per run (a dimension without an upper bound): planArena.
  bool plannedPerRun() const { return !arena_values_.empty(); }

  /// "MIN..MAX", or "MIN.." without an upper bound.
  static std::string formatRange(const kiln::artifact::Symbol& symbol);

  /// The arena of a program planned per run for the symbols' `values` (and every binding's run
  /// `dims`, bindingDims): its slots packed over the run's sizes as the compiler packs them,
  /// each at a multiple of the program's alignment and at least `min_alignment` (what the
  /// device's library calls assume of a value whose bindings start at its first byte).
  /// INVALID_ARGUMENT where a value's size overflows.
  Status planArena(const std::vector<int64_t>& values, const std::vector<int64_t>& dims,
                   ArenaLayout& layout, uint64_t min_alignment = 1) const;

  /// Reads each symbol's value off the inputs and checks every input dimension against the
  /// artifact's: INVALID_ARGUMENT naming the input, the dimension and its range, e.g.
  /// "input 'x': dimension 0 (batch) is 9, outside its range 1..8".
  Status bindInputs(const kiln_tensor_t* const* inputs, std::vector<int64_t>& values) const;

  /// The dimensions of every binding for the symbols' `values`, flat in binding order; binding
  /// b's start at firstDim(b). INTERNAL where one has no size within its bound.
  Status bindingDims(const std::vector<int64_t>& values, std::vector<int64_t>& dims) const;
  size_t firstDim(size_t binding) const { return first_dim_[binding]; }
  size_t rank(size_t binding) const { return first_dim_[binding + 1] - first_dim_[binding]; }
  /// The dimensions of all bindings together (bindingDims' size).
  size_t dimCount() const { return first_dim_.back(); }
  /// The run's dimensions of each of the `count` bindings from `first` (a library call's, which
  /// it is set up for), out of every binding's run `dims`.
  std::vector<std::vector<int64_t>> bindingsDims(size_t first, size_t count,
                                                 const std::vector<int64_t>& dims) const {
    std::vector<std::vector<int64_t>> result;
    for (size_t b = first; b < first + count; ++b)
      result.emplace_back(dims.begin() + static_cast<std::ptrdiff_t>(first_dim_[b]),
                          dims.begin() + static_cast<std::ptrdiff_t>(first_dim_[b + 1]));
    return result;
  }
  /// The bytes of binding `binding`'s run elements (`element_size` bytes each), row-major at
  /// the front of its buffer, for the run's binding `dims`.
  uint64_t runBytes(size_t binding, size_t element_size, const std::vector<int64_t>& dims) const {
    // Saturates: a product past 64 bits is larger than any arena value, never a small wrap.
    uint64_t bytes = element_size;
    for (size_t d = first_dim_[binding]; d < first_dim_[binding + 1]; ++d)
      if (dims[d] < 0 || __builtin_mul_overflow(bytes, static_cast<uint64_t>(dims[d]), &bytes))
        return UINT64_MAX;
    return bytes;
  }
  /// Whether any of the `count` bindings from `first` has a dimension that varies.
  bool varies(size_t first, size_t count) const;

  /// The workgroups of a dispatch whose count is known only at run time (workgroup_dims), its
  /// bindings starting at binding `first_binding`, with the run's binding `dims`.
  uint64_t workgroups(const kiln::artifact::Dispatch& dispatch, size_t first_binding,
                      const std::vector<int64_t>& dims) const;

  /// Output `index`'s dimensions for the symbols' `values`.
  std::vector<int64_t> outputDims(size_t index, const std::vector<int64_t>& values) const;

 private:
  /// One dimension: its static size, or the code giving it.
  struct Dim {
    int64_t size = 0;
    const flatbuffers::Vector<int64_t>* code = nullptr;
  };
  static void addType(const kiln::artifact::TensorType& type, std::vector<Dim>& dims);
  int64_t evaluate(const Dim& dim, const std::vector<int64_t>& values) const;
  /// Whether every dimension of `dims` evaluates for `values` to a size within its static bound;
  /// the sizes go to `sizes` (one per dimension) unless it is null.
  bool evaluates(const std::vector<Dim>& dims, const std::vector<int64_t>& values,
                 int64_t* sizes) const;
  Status outOfBounds() const;

  std::vector<const kiln::artifact::Symbol*> symbols_;
  std::vector<Dim> binding_dims_;
  /// binding_dims_ index of each binding's first dimension, and one past the last binding.
  std::vector<size_t> first_dim_{0};
  std::vector<std::vector<Dim>> inputs_, outputs_;
  std::vector<std::string> input_names_;

  // A program planned per run: its arena values, slots and the bindings into them.
  struct ArenaValue {
    uint32_t slot = 0;
    const flatbuffers::Vector<int64_t>* size = nullptr;
  };
  struct ArenaBinding {
    size_t binding = 0;
    uint32_t value = 0;
    uint64_t offset = 0;
    size_t element_size = 0;
  };
  uint64_t alignment_ = 64;
  std::vector<ArenaValue> arena_values_;
  std::vector<::kiln::BufferLifetime> arena_slots_;
  std::vector<ArenaBinding> arena_bindings_;
};

}  // namespace kiln::runtime

#endif  // KILN_RUNTIME_SRC_PROGRAM_RUN_SHAPES_H_
