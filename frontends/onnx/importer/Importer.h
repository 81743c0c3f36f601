//===- Importer.h - Translating a loaded ONNX model into graph-dialect IR ---===//
//
// The importer turns the main graph of a LoadedModel into one `func.func` of graph-dialect ops:
// graph inputs become arguments, initializers become `graph.constant`, every node is translated
// by the operator table (OpTable.h), and graph outputs become the results. An import may be
// specialized for concrete input values, which turns the inputs operators read at import time
// into constants.
//
//===----------------------------------------------------------------------===//

#ifndef FRONTENDS_ONNX_IMPORTER_IMPORTER_H
#define FRONTENDS_ONNX_IMPORTER_IMPORTER_H

#include "frontends/onnx/ModelLoader.h"

#include <onnx/onnx_pb.h>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"
#include "mlir/Support/LLVM.h"

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

namespace kiln::onnx_frontend {

/// How importOnnxModel treats a model.
struct ImportOptions {
  /// Replaces the declared shape of graph inputs by name, e.g. {"image", {1, 3, 224, 224}}; the
  /// rank must match and a bound dimension must agree with a static declared one. Entries of -1
  /// leave a dimension dynamic.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  /// Names the model in locations and diagnostics (usually the file path).
  std::string modelName = "model.onnx";
  /// Initializers and Constant tensors with more bytes than this become
  /// DenseResourceElementsAttr blobs instead of inline DenseElementsAttr (0: always inline).
  uint64_t resourceThresholdBytes = 0;
  /// Concrete values of graph inputs by name, specializing the import for one set of inputs
  /// (e.g. a backend test's test_data_set_0). An input whose contents an operator needs at import
  /// time (Reshape's shape, Slice's starts, Resize's scales, TopK's K, Pad's pads, ...) becomes a
  /// constant holding its value and leaves the function's arguments; every other input named
  /// here takes its value's shape, so its dynamic dimensions become static. The element type and
  /// static dimensions must agree with the model's declaration.
  std::map<std::string, onnx::TensorProto> inputValues;
  /// When set, receives the names of the inputs of `inputValues` that became constants, in graph
  /// input order: the function has no argument for them, so a caller must not feed them.
  std::vector<std::string> *foldedInputs = nullptr;
};

/// Translates the main graph of `model` into a module holding one `func.func` named after the
/// graph (arguments carry `kiln.name` = the ONNX input name). Registers the graph and func
/// dialects in `context`. Problems are emitted through `context`'s diagnostic engine at the
/// location of the node they concern; every unsupported operator of the model is reported before
/// the import fails. Returns failure after at least one error was emitted.
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
importOnnxModel(mlir::MLIRContext &context, const LoadedModel &model,
                const ImportOptions &options = {});

/// The same import, sharing the model: the module's resource blobs (tensors above
/// `resourceThresholdBytes`) view the model's tensor bytes in place instead of copying them, and
/// each keeps the model alive, so a model's weights are in memory once however long the module
/// lives. A tensor whose bytes are not aligned for its element type is copied.
mlir::FailureOr<mlir::OwningOpRef<mlir::ModuleOp>>
importOnnxModel(mlir::MLIRContext &context, std::shared_ptr<const LoadedModel> model,
                const ImportOptions &options = {});

} // namespace kiln::onnx_frontend

#endif // FRONTENDS_ONNX_IMPORTER_IMPORTER_H
