//===- KilnAttributes.h - Kiln's discardable attributes, declared once -*- C++ -*-===//
//
// The name of every `kiln.*` attribute a pass writes for a later one, spelled once; the `kiln`
// dialect (KilnDialect.h) verifies each against the kind of value KilnAttributes.cpp declares
// for it. A new attribute is a constant here and a row there.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_DIALECTS_KILN_KILNATTRIBUTES_H_
#define KILN_DIALECTS_KILN_KILNATTRIBUTES_H_

#include "llvm/ADT/StringRef.h"

namespace kiln::attrs {

// A model's inputs and outputs (frontends, kiln-refine-shapes, kiln-form-program).
/// The name of an input or output (a function argument's or result's), as the user gave it.
inline constexpr llvm::StringLiteral kName = "kiln.name";
/// The type an input or output is declared with where the program computes in another.
inline constexpr llvm::StringLiteral kDeclaredType = "kiln.declared_type";
/// The names of an input's or output's dynamic dimensions.
inline constexpr llvm::StringLiteral kDimSymbols = "kiln.dim_symbols";
/// The check an output carries for every run (a message naming the node).
inline constexpr llvm::StringLiteral kCheck = "kiln.check";
/// An input's dimension bounds ([lo, hi] per dimension; -1 for none).
inline constexpr llvm::StringLiteral kDimBounds = "kiln.dim_bounds";
/// The first operand of a shape placeholder the ONNX importer resolves from a run's inputs.
inline constexpr llvm::StringLiteral kOnnxShapeStart = "kiln.onnx_shape_start";

// Fusion and precision decisions.
/// The kernel group an op belongs to.
inline constexpr llvm::StringLiteral kFusionGroup = "kiln.fusion_group";
/// The tile a group's kernel is distributed in.
inline constexpr llvm::StringLiteral kTileDims = "kiln.tile_dims";
/// The fusion plan's report lines (module).
inline constexpr llvm::StringLiteral kFusionReport = "kiln.fusion_report";
/// The bytes the cost model charges a fused kernel.
inline constexpr llvm::StringLiteral kModeledKernelBytes = "kiln.modeled_kernel_bytes";
/// The library calls' epilogue decisions (module).
inline constexpr llvm::StringLiteral kEpilogueReport = "kiln.epilogue_report";
/// The math an op may use ("tf32").
inline constexpr llvm::StringLiteral kMath = "kiln.math";
/// The precision assignment's report lines, and how many ops it could lower.
inline constexpr llvm::StringLiteral kPrecisionReport = "kiln.precision_report";
inline constexpr llvm::StringLiteral kPrecisionCandidates = "kiln.precision_candidates";
/// The partition's report lines and its predicted milliseconds per mode.
inline constexpr llvm::StringLiteral kPartitionReport = "kiln.partition_report";
inline constexpr llvm::StringLiteral kPartitionPredictedMs = "kiln.partition_predicted_ms";
/// The pipeline stage an op runs in.
inline constexpr llvm::StringLiteral kStage = "kiln.stage";

// Dispatches and library calls (dispatch formation and code generation for kiln-form-program).
/// A dispatch function.
inline constexpr llvm::StringLiteral kDispatch = "kiln.dispatch";
/// The model nodes a dispatch or call holds, for reports and traces.
inline constexpr llvm::StringLiteral kDescription = "kiln.description";
/// A dispatch's workgroup count, and its per-dimension workgroups.
inline constexpr llvm::StringLiteral kWorkgroupCount = "kiln.workgroup_count";
inline constexpr llvm::StringLiteral kWorkgroupDims = "kiln.workgroup_dims";
/// A dispatch argument's static bounds; a dispatch whose sizes are nominal (planned per run).
inline constexpr llvm::StringLiteral kBounds = "kiln.bounds";
inline constexpr llvm::StringLiteral kNominalBounds = "kiln.nominal_bounds";
/// How many run sizes a dispatch reads.
inline constexpr llvm::StringLiteral kRunSizes = "kiln.run_sizes";
/// The library entry point a declaration stands for.
inline constexpr llvm::StringLiteral kLibraryCall = "kiln.library_call";
/// A CUDA dispatch's launches, and the scratch buffers they share with their dims.
inline constexpr llvm::StringLiteral kCudaLaunches = "kiln.cuda_launches";
inline constexpr llvm::StringLiteral kCudaScratch = "kiln.cuda_scratch";
inline constexpr llvm::StringLiteral kCudaScratchDims = "kiln.cuda_scratch_dims";

// Symbolic shapes and memory of a program over a range of shapes.
/// The program's dimension symbols.
inline constexpr llvm::StringLiteral kSymbols = "kiln.symbols";
/// A buffer's dims as an affine map of the symbols.
inline constexpr llvm::StringLiteral kDims = "kiln.dims";
/// A buffer's slot in a per-run arena, the steps each slot lives, and the smallest arena.
inline constexpr llvm::StringLiteral kArenaSlot = "kiln.arena_slot";
inline constexpr llvm::StringLiteral kSlotSteps = "kiln.slot_steps";
inline constexpr llvm::StringLiteral kSmallestArena = "kiln.smallest_arena";

} // namespace kiln::attrs

#endif // KILN_DIALECTS_KILN_KILNATTRIBUTES_H_
