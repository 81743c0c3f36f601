//===- ModelLoader.h - Loading and validating an ONNX model file --------===//
//
// The entry point of the ONNX frontend: reads a .onnx file, checks everything the importer
// relies on before any tensor data is allocated, then resolves every tensor's bytes (raw_data,
// typed fields or external data). No exception escapes; every problem becomes a Diagnostic.
//
//===----------------------------------------------------------------------===//

#ifndef FRONTENDS_ONNX_MODELLOADER_H
#define FRONTENDS_ONNX_MODELLOADER_H

#include "frontends/onnx/Diagnostic.h"
#include "frontends/onnx/LoadOptions.h"
#include "frontends/onnx/TensorData.h"

#include <onnx/onnx_pb.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

namespace kiln::onnx_frontend {

/// The resolved data of one tensor of a loaded model: an initializer or a node's tensor
/// attribute (Constant's `value`, ConstantOfShape's `value`, ...), anywhere in the model.
struct TensorView {
  std::string name;
  /// The TensorProto.DataType value and what the loader knows about it.
  int32_t dataType = 0;
  const ElementTypeInfo *elementType = nullptr;
  std::vector<int64_t> dims;
  uint64_t elementCount = 0;
  /// The tensor's bytes in raw_data layout: little-endian, booleans one byte each, 4-bit types
  /// packed two per byte and 2-bit types four. Points into the model's raw_data or typed field, or
  /// into memory the LoadedModel owns (narrowed typed fields and external data, 64-byte aligned).
  /// No alignment is promised when it views raw_data in place: copy or memcpy from it. nullptr with
  /// `byteSize` 0 for empty tensors and for STRING tensors, whose values are
  /// `proto->string_data()`.
  const std::byte *data = nullptr;
  std::size_t byteSize = 0;
  TensorDataSource source = TensorDataSource::None;
  TensorOrigin origin = TensorOrigin::Initializer;
  /// The graph, node and tensor the view belongs to.
  SourceLocation location;
  /// 1 for the main graph, deeper for subgraphs, 0 for model-local functions.
  int graphDepth = 1;
  /// The attribute for TensorOrigin::Attribute; empty for initializers.
  std::string attribute;
  /// The tensor in the model.
  const onnx::TensorProto *proto = nullptr;
};

/// A model that passed every check, with its tensors resolved. Movable, not copyable; views stay
/// valid when it moves. The proto is read-only: changing it could invalidate the views.
class LoadedModel {
public:
  LoadedModel(LoadedModel &&) = default;
  LoadedModel &operator=(LoadedModel &&) = default;
  LoadedModel(const LoadedModel &) = delete;
  LoadedModel &operator=(const LoadedModel &) = delete;

  const onnx::ModelProto &proto() const { return *proto_; }
  /// Imported opset versions by domain ("ai.onnx" spelled as "").
  const std::unordered_map<std::string, int64_t> &opsets() const { return opsets_; }
  /// The default-domain opset, or 0 when the model does not import it.
  int64_t defaultOpset() const;
  /// Every initializer and attribute tensor of every graph and function, in walk order.
  const std::vector<TensorView> &tensors() const { return tensors_; }
  /// The main graph's initializer called `name`, or nullptr.
  const TensorView *findInitializer(const std::string &name) const;
  /// The view of `tensor` (an initializer or attribute tensor of this model), or nullptr.
  const TensorView *findTensor(const onnx::TensorProto &tensor) const;

private:
  friend class LoadedModelBuilder;
  LoadedModel() = default;

  std::unique_ptr<onnx::ModelProto> proto_;
  std::unordered_map<std::string, int64_t> opsets_;
  std::vector<TensorView> tensors_;
  std::vector<TensorBuffer> buffers_;
  std::unordered_map<std::string, std::size_t> mainInitializers_;
  std::unordered_map<const onnx::TensorProto *, std::size_t> byProto_;
};

/// The outcome of a load: the model when no error was found, and every diagnostic (errors,
/// warnings and notes) either way.
struct LoadResult {
  std::optional<LoadedModel> model;
  std::vector<Diagnostic> diagnostics;

  bool succeeded() const { return model.has_value(); }
  /// The number of diagnostics of `severity`.
  std::size_t count(Severity severity) const;
  /// Every diagnostic formatted by formatDiagnostic, one per line.
  std::string formatDiagnostics() const;
};

/// Loads the model at `path`: parses it (bounded recursion, at most 2 GiB - 1: larger weights
/// belong in external data), checks IR version, opsets, graph structure and every tensor
/// (including external data files, which must lie inside the model's directory), optionally
/// runs libonnx's checker and shape inference, and then resolves tensor data. Never throws.
/// Loads share no state, so several threads may load models at once.
LoadResult loadOnnxModel(const std::string &path, const LoadOptions &options = {});

/// Loads a serialized model held in memory; `name` is what diagnostics call it. External data
/// resolves in options.externalDataDirectory and is refused when that is empty.
LoadResult loadOnnxModelFromBuffer(const void *data, std::size_t size, const std::string &name,
                                   const LoadOptions &options = {});

} // namespace kiln::onnx_frontend

#endif // FRONTENDS_ONNX_MODELLOADER_H
