//===- LoadOptions.h - What the ONNX model loader accepts --------------===//

#ifndef FRONTENDS_ONNX_LOADOPTIONS_H
#define FRONTENDS_ONNX_LOADOPTIONS_H

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace kiln::onnx_frontend {

/// Limits and policies of loadOnnxModel. The defaults suit the importer: default-domain opsets
/// 7..17 are fully supported (what Debian's libonnx knows: its checker and shape inference run),
/// 18..28 (the newest of onnx 1.23, whose operator revisions the importer's table knows:
/// frontends/onnx/ops/OnnxOperatorVersions.inc) are accepted with a warning, and the importer
/// decides operator by operator, refusing any operator revised after what it translates.
struct LoadOptions {
  /// The fully supported default-domain (ai.onnx) opset range.
  int64_t minDefaultOpset = 7;
  int64_t maxDefaultOpset = 17;
  /// Default-domain opsets in (maxDefaultOpset, maxKnownDefaultOpset] load with a warning;
  /// newer ones are errors.
  int64_t maxKnownDefaultOpset = 28;
  /// Default-domain opsets in [minKnownDefaultOpset, minDefaultOpset) load with a warning: the
  /// operator table decides per operator version (a translator registered from opset 1 covers
  /// the models written for opsets 1 to 6); older ones are errors.
  int64_t minKnownDefaultOpset = 1;

  /// The supported IR version range; IR versions up to maxKnownIrVersion load with a note.
  int64_t minIrVersion = 3;
  int64_t maxIrVersion = 8;
  int64_t maxKnownIrVersion = 14;

  /// Operator domains accepted besides ai.onnx, ai.onnx.ml, ai.onnx.training,
  /// ai.onnx.preview.training and the domains of the model's own functions.
  std::vector<std::string> extraDomains;

  /// The deepest nesting of subgraphs (If/Loop/Scan bodies) accepted; the main graph is level 1.
  int maxGraphDepth = 64;
  /// The deepest protobuf message nesting the parser accepts. One level of graph nesting costs
  /// three (graph, node, attribute), so this must stay above 3 * maxGraphDepth.
  int maxProtobufDepth = 256;

  /// Runs onnx::checker::check_model once the loader's own checks pass (skipped, with a note,
  /// for opsets or IR versions newer than libonnx knows).
  bool runChecker = true;
  /// Runs onnx::shape_inference::InferShapes, which adds value_info entries to the model.
  bool inferShapes = true;

  /// The directory external data is resolved in. Empty means the model file's directory; a
  /// model loaded from memory with this empty cannot use external data.
  std::string externalDataDirectory;

  /// The most diagnostics kept; further ones are counted in one closing diagnostic.
  std::size_t maxDiagnostics = 1000;
};

} // namespace kiln::onnx_frontend

#endif // FRONTENDS_ONNX_LOADOPTIONS_H
