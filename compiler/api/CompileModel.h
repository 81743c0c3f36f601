//===- CompileModel.h - The compiler as one call: a model in, an artifact out -*- C++ -*-===//
//
// What every front end of the compiler shares: reading a model (an ONNX file or its bytes, or a
// graph program in .mlir), importing it, binding its dynamic dimensions and compiling it into
// the bytes of a .kiln artifact with one kiln::CompileOptions. `kiln compile`, `run` and `bench`
// and the Python package (`kiln.compile`) call it; diagnostics go to the stream the caller gives.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_COMPILER_API_COMPILEMODEL_H
#define KILN_COMPILER_API_COMPILEMODEL_H

#include "compiler/options/CompileOptions.h"
#include "compiler/transforms/Passes.h"

#include "kiln/runtime.hpp"

#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kiln {

/// The process's resident memory now (VmRSS) and at its peak so far (VmHWM), in bytes; 0 where
/// /proc does not say.
struct ResidentMemory {
  uint64_t current = 0;
  uint64_t peak = 0;
};
ResidentMemory residentMemory();

/// How a model is read: by its contents for artifacts (the "KILN" identifier), else by its
/// extension.
enum class ModelKind { Onnx, Mlir, Artifact };

/// The kind of the model at `path`, or nullopt after a message to `diagnostics` for a file kiln
/// cannot read.
std::optional<ModelKind> modelKind(const std::string &path, llvm::raw_ostream &diagnostics);

/// The kind of a model held in memory and called `name`: an artifact by its identifier, ONNX or
/// a graph program by the name's extension, else an ONNX protobuf unless the bytes read as MLIR
/// text.
ModelKind modelKindOfBytes(std::string_view bytes, const std::string &name);

/// What compileModel is given: the compile options, and what the caller adds to them.
struct CompileSettings {
  /// The compile options (`--cost-model host` already resolved to its file).
  CompileOptions options;
  /// The model's bytes; empty: the file at the path compileModel is given. The path then names
  /// the model in messages (and its extension says its kind).
  std::string_view modelBytes;
  /// Shapes taken from the inputs a run is given, for the dimensions still dynamic.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// The values a run is given (ONNX models): the import is specialized for them as the
  /// conformance suite's is (ImportOptions::inputValues), so that an input an operator needs at
  /// import time (Reshape's shape, Slice's starts, TopK's K, ...) becomes a constant.
  const std::map<std::string, Tensor> *inputValues = nullptr;
  /// Receives the inputs of `inputValues` that became constants: the artifact does not take them.
  std::vector<std::string> *foldedInputs = nullptr;
  /// Binds the leading dimension of every input whose leading dimension is dynamic (0: none).
  int64_t batch = 0;
  /// Prints each stage as it starts (to `diagnostics`), with the time and memory so far.
  bool progress = false;
  /// Where errors, warnings and progress go ("kiln: error: ..." lines, and the model's
  /// diagnostics prefixed with its name); null: stderr.
  llvm::raw_ostream *diagnostics = nullptr;
  /// Where the report goes when options.report is set; null: stdout.
  llvm::raw_ostream *report = nullptr;
};

/// Compiles the model at `path` (.onnx or .mlir; or settings.modelBytes, which `path` names) into
/// the bytes of an artifact, written to `os` as they are produced (no copy of the weights in
/// memory); nothing is written after an error. Returns false after any error.
bool compileModel(const std::string &path, const CompileSettings &settings, llvm::raw_ostream &os);

/// The same, returning the artifact's bytes; nullopt after any error.
std::optional<std::string> compileModel(const std::string &path, const CompileSettings &settings);

/// Parses `--shape` flags "NAME=1x3x224x224" ('?' leaves a dimension dynamic); reports the first
/// malformed one to `diagnostics` and returns nothing.
std::optional<std::vector<ShapeBinding>> parseShapeFlags(const std::vector<std::string> &flags,
                                                         llvm::raw_ostream &diagnostics);

/// The bindings as the ONNX importer takes them (a dynamic dimension is -1).
void importerShapes(const std::vector<ShapeBinding> &bindings,
                    std::map<std::string, std::vector<int64_t>> &shapes);

} // namespace kiln

#endif // KILN_COMPILER_API_COMPILEMODEL_H
