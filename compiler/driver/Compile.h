//===- Compile.h - Compiling a graph program into a .kiln artifact -*- C++ -*-===//
//
// The compiler's entry point: a graph-dialect module in, the bytes of a .kiln artifact out
// (contract/artifact.fbs). Used by `kiln compile`, `kiln run` (just in time), `kiln bench`
// and the conformance runner.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_DRIVER_COMPILE_H_
#define KILN_COMPILER_DRIVER_COMPILE_H_

#include "compiler/codegen/Executable.h"
#include "compiler/options/CompileOptions.h"
#include "compiler/transforms/Passes.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LLVM.h"

#include "llvm/ADT/StringRef.h"

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace kiln {

/// What one compilation is given besides its options (kiln::CompileOptions): the model's name,
/// the shapes its inputs are bound to, and where progress and the report go.
struct CompileRequest {
  /// The model's file name, recorded in the artifact and used in messages.
  std::string sourceName;
  /// The bindings of the inputs' dynamic dimensions, as the caller resolved CompileOptions::shapes
  /// against the model (the kiln CLI adds the shapes of the inputs a run is given); nothing:
  /// CompileOptions::shapes as they are.
  std::optional<std::vector<ShapeBinding>> shapeBindings;
  /// Called as each stage starts, with the stage's name (for progress output).
  std::function<void(llvm::StringRef stage)> onStage;
  /// When set, receives the fusion report: each kernel group and library call with the ops it
  /// holds, and the memory plan.
  llvm::raw_ostream *report = nullptr;
};

/// The function compileToArtifact compiles: `@main`, or the module's only public function.
/// Emits an error on the module and fails when there is none, or several and no `@main`.
mlir::FailureOr<mlir::func::FuncOp> findEntryFunction(mlir::ModuleOp module);

/// Compiles the module's entry function (`@main`, or its only public function) into the bytes of
/// a .kiln artifact. Errors are emitted as diagnostics on the module's context (naming the op and
/// its location) and the result is failure.
/// `options.target` is resolved here, once (resolveTarget), and carried unchanged through the
/// pipeline.
mlir::FailureOr<std::string> compileToArtifact(mlir::ModuleOp module, const CompileOptions &options,
                                               const CompileRequest &request = {});

/// The same, writing the artifact to `os` as it is produced: the weights go from the module to
/// `os` without another copy in memory (what `kiln compile` uses for a file). Nothing is written
/// when compilation fails.
mlir::LogicalResult compileToArtifact(mlir::ModuleOp module, const CompileOptions &options,
                                      const CompileRequest &request, llvm::raw_ostream &os);

} // namespace kiln

#endif // KILN_COMPILER_DRIVER_COMPILE_H_
