//===- Program.h - Models as the kiln CLI reads them ------------*- C++ -*-===//
//
// What `kiln compile`, `run` and `bench` share: reading a model (.onnx, a graph program in .mlir,
// or a compiled .kiln artifact), compiling it for a device, and making or reading input tensors.
//
//===----------------------------------------------------------------------===//

#ifndef KILN_TOOLS_KILN_PROGRAM_H
#define KILN_TOOLS_KILN_PROGRAM_H

#include "compiler/api/CompileModel.h"
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

namespace kiln::cli {

using kiln::CompileSettings;
using kiln::compileModel;
using kiln::importerShapes;
using kiln::ModelKind;
using kiln::ResidentMemory;
using kiln::residentMemory;

/// Exit codes: 0 success, 1 the model is invalid or a step failed, 2 bad command line (including
/// a file that does not exist or an input that does not fit the model), 3 an internal error (a
/// crash, reported naming the pass and op it happened in: crash::kExitInternalError).
constexpr int kExitFailure = 1;
constexpr int kExitUsage = 2;

/// The kind of `path`, or nullopt (with a message on stderr) for a file kiln cannot read.
std::optional<ModelKind> modelKind(const std::string &path);

/// Loads `path` as an artifact: read from disk for a .kiln file, else compiled just in time.
/// `compileSeconds` receives the compile time (0 for a .kiln file).
/// `mapped` maps a .kiln file instead of reading it (one process per device of a split model
/// pages in its own device's weights only; see kiln_artifact_load_file_mapped).
std::optional<Artifact> loadModel(const std::string &path, const CompileSettings &settings,
                                  double *compileSeconds = nullptr, bool mapped = false);

/// One `--input NAME=@FILE` argument.
struct InputFile {
  std::string name;
  std::string path;
};

/// Parses `NAME=@FILE.npy` / `NAME=@FILE.pb` arguments; reports the first malformed one.
std::optional<std::vector<InputFile>> parseInputArguments(const std::vector<std::string> &args);

/// Reads each input file (.npy or an ONNX TensorProto .pb) into a tensor.
std::optional<std::map<std::string, Tensor>> readInputFiles(const std::vector<InputFile> &inputs);

/// Orders `given` by the artifact's inputs, checking that every input has a value and every value
/// names an input; a missing, unknown, mis-shaped or mis-typed input is reported by name with what
/// the artifact expects. Inputs not in `given` are made from `seed` when `randomizeMissing`: in
/// an artifact for a range of shapes, of the shape `shapes` binds for them (--shape), else the
/// largest.
std::optional<std::vector<Tensor>> arrangeInputs(const Artifact &artifact,
                                                 std::map<std::string, Tensor> given,
                                                 bool randomizeMissing, uint64_t seed,
                                                 const std::vector<ShapeBinding> &shapes = {});

/// A seeded pseudo-random tensor for `signature`: floats uniform in [-1, 1), integers in [0, 4),
/// booleans 0 or 1.
Tensor randomTensor(const TensorSignature &signature, uint64_t seed);

/// "f32[1x3x224x224]", with a symbolic dimension's name in place of its size when it has one.
std::string describeSignature(const TensorSignature &signature);
std::string describeTensor(const Tensor &tensor);

/// `text` safe to print on a terminal: control characters (C0, DEL, C1) and bytes that are not
/// UTF-8 written as \xNN (or \u0085), so that a name read from an artifact or a model cannot
/// carry terminal escape sequences to the screen.
std::string printable(std::string_view text);

/// Prints `message` as "kiln: error: MESSAGE".
void printError(const std::string &message);
/// Whether `path` exists and may not be overwritten (no `force`), saying so.
bool refuseOverwrite(const std::string &path, bool force);

/// Parses `--shape` flags "NAME=1x3x224x224" ('?' leaves a dimension dynamic); reports the first
/// malformed one on stderr and returns nothing.
std::optional<std::vector<ShapeBinding>> parseShapeFlags(const std::vector<std::string> &flags);

} // namespace kiln::cli

#endif // KILN_TOOLS_KILN_PROGRAM_H
