//===- node_import_test.cpp - Imports the ONNX backend node tests -------------===//
//
// Loads and imports every model of the official ONNX node tests (libonnx-testdata) in one
// process, specialized for the inputs of its test_data_set_0 (the inputs operators read at import
// time become constants, the others bind their shapes), verifies each imported module, and prints
// how many import. A refusal must come with a
// diagnostic; an import that yields invalid IR fails the test. The count depends on operator
// coverage and must not fall below the floor recorded here.
//
//===----------------------------------------------------------------------===//

#include "frontends/onnx/importer/Importer.h"
#include "frontends/onnx/ModelLoader.h"
#include "frontends/onnx/TestDataSet.h"
#include "frontends/onnx/ops/OpTable.h"

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace {

/// Models of the node tests that import today; a change that loses one fails the test, and the
/// floor is raised as operator coverage grows.
constexpr int kImportFloor = 804;
/// Default-domain operator types in the table.
constexpr int kOperatorFloor = 157;

std::vector<std::filesystem::path> nodeTestModels() {
  std::vector<std::filesystem::path> models;
  std::error_code error;
  for (const auto &entry :
       std::filesystem::directory_iterator(KILN_ONNX_NODE_TESTDATA, error)) {
    std::filesystem::path model = entry.path() / "model.onnx";
    if (std::filesystem::is_regular_file(model))
      models.push_back(model);
  }
  std::sort(models.begin(), models.end());
  return models;
}

// If this fails, an ONNX node test that imported before no longer does, or an import produced IR
// that does not verify, or a refusal came without a diagnostic.
TEST(NodeImport, ImportsTheOfficialNodeTests) {
  std::vector<std::filesystem::path> models = nodeTestModels();
  if (models.empty())
    GTEST_SKIP() << "no ONNX node tests under " << KILN_ONNX_NODE_TESTDATA;
  mlir::MLIRContext context;
  // KILN_NODE_IMPORT_VERBOSE=1 prints every refusal with its test.
  const bool verbose = std::getenv("KILN_NODE_IMPORT_VERBOSE") != nullptr;
  int imported = 0;
  std::map<std::string, int> refusals;
  for (const std::filesystem::path &path : models) {
    std::string test = path.parent_path().filename().string();
    // Old opsets are accepted: the operator table decides per operator version.
    kiln::onnx_frontend::LoadOptions loadOptions;
    loadOptions.minDefaultOpset = 1;
    kiln::onnx_frontend::LoadResult loaded =
        kiln::onnx_frontend::loadOnnxModel(path.string(), loadOptions);
    if (!loaded.succeeded()) {
      EXPECT_FALSE(loaded.diagnostics.empty()) << test << ": refused without a diagnostic";
      ++refusals["load: " + loaded.diagnostics.front().message.substr(0, 60)];
      if (verbose)
        std::printf("%s: load: %s\n", test.c_str(), loaded.diagnostics.front().message.c_str());
      continue;
    }
    std::string firstError;
    mlir::ScopedDiagnosticHandler handler(&context, [&](mlir::Diagnostic &diagnostic) {
      if (diagnostic.getSeverity() == mlir::DiagnosticSeverity::Error && firstError.empty())
        firstError = diagnostic.str();
      return mlir::success();
    });
    kiln::onnx_frontend::ImportOptions options;
    options.modelName = path.string();
    kiln::onnx_frontend::DiagnosticSink sink(path.string());
    std::optional<kiln::onnx_frontend::TestDataSet> data = kiln::onnx_frontend::readTestDataSet(
        (path.parent_path() / "test_data_set_0").string(), loaded.model->proto().graph(), sink);
    if (!data) {
      std::vector<kiln::onnx_frontend::Diagnostic> problems = std::move(sink).finish();
      ADD_FAILURE() << test << ": cannot read test_data_set_0: "
                    << (problems.empty() ? "" : problems.front().message);
      continue;
    }
    for (const kiln::onnx_frontend::NamedTensor &input : data->inputs)
      if (!input.tensor.isString())
        options.inputValues[input.name] = input.tensor.proto();
    auto module = kiln::onnx_frontend::importOnnxModel(context, *loaded.model, options);
    if (mlir::failed(module)) {
      EXPECT_FALSE(firstError.empty()) << test << ": import failed without a diagnostic";
      ++refusals["import: " + firstError.substr(0, 60)];
      if (verbose)
        std::printf("%s: import: %s\n", test.c_str(), firstError.c_str());
      continue;
    }
    if (mlir::failed(mlir::verify(**module))) {
      ADD_FAILURE() << test << ": the imported module does not verify: " << firstError;
      continue;
    }
    ++imported;
  }
  std::vector<std::pair<int, std::string>> common;
  for (const auto &[reason, count] : refusals)
    common.emplace_back(count, reason);
  std::sort(common.rbegin(), common.rend());
  for (size_t i = 0; i < std::min<size_t>(common.size(), 15); ++i)
    std::printf("  %4d x %s\n", common[i].first, common[i].second.c_str());
  std::printf("imported %d of %zu ONNX node test models\n", imported, models.size());
  EXPECT_GE(imported, kImportFloor);
}

// Prints the operator types the importer translates; if this fails, an operator dropped out of
// the table.
TEST(NodeImport, OperatorTableCoverage) {
  const auto &entries = kiln::onnx_frontend::defaultOpTable().entries();
  int defaultDomain = 0;
  for (const auto &[key, versions] : entries)
    if (key.first.empty())
      ++defaultDomain;
  std::printf("%d ONNX operator types (%zu with other domains)\n", defaultDomain, entries.size());
  EXPECT_GE(defaultDomain, kOperatorFloor);
}

// Tests that an operator revised by ONNX after the newest revision Kiln translates is refused at
// that opset, instead of being translated by the older revision's rules, while revisions that only
// add element types reuse the previous translator. If this fails, a model at a new opset could be
// imported with the wrong meaning (QuantizeLinear-23 by a table that knows the -21 rules only), or
// a type-only revision (Acos-22) would be refused needlessly.
TEST(NodeImport, RefusesOperatorRevisionsNewerThanTranslated) {
  using kiln::onnx_frontend::onnxRevision;
  const auto &table = kiln::onnx_frontend::defaultOpTable();
  EXPECT_EQ(onnxRevision("", "Cast", 28), 28);
  EXPECT_EQ(onnxRevision("ai.onnx", "Relu", 28), 14);
  EXPECT_EQ(onnxRevision("", "Relu", 5), 1);
  EXPECT_EQ(onnxRevision("", "NoSuchOperator", 28), std::nullopt);

  // A table that translates QuantizeLinear up to revision 21 only: 22 still maps to it, 23 and
  // later revisions are refused. The default table translates every revision.
  kiln::onnx_frontend::OpTable older;
  older.add("", "QuantizeLinear", 21,
            [](kiln::onnx_frontend::NodeContext &) { return mlir::success(); });
  EXPECT_NE(older.lookup("", "QuantizeLinear", 21), nullptr);
  EXPECT_NE(older.lookup("", "QuantizeLinear", 22), nullptr);
  EXPECT_EQ(older.lookup("", "QuantizeLinear", 23), nullptr);
  EXPECT_EQ(older.lookup("", "QuantizeLinear", 28), nullptr);
  EXPECT_NE(table.lookup("", "QuantizeLinear", 28), nullptr);
  EXPECT_NE(table.lookup("", "DequantizeLinear", 28), nullptr);

  EXPECT_EQ(table.lookup("", "Acos", 22), table.lookup("", "Acos", 7));
  EXPECT_EQ(table.lookup("", "Reshape", 25), table.lookup("", "Reshape", 21));
  EXPECT_NE(table.lookup("", "Cast", 28), nullptr);
  EXPECT_GE(kiln::onnx_frontend::newestKnownDefaultOpset(), 28);
}

// Tests that the transformer operators are translated from the opset that introduced them through
// the newest: Attention's revisions 23, 24 (nonpad_kv_seqlen) and 25 (the sliding window) each,
// RMSNormalization and RotaryEmbedding from 23. If this fails, a model of the current release
// with one of them would be refused as unsupported, or Attention-25's window attributes would be
// read by a translator registered only for an older revision.
TEST(NodeImport, TranslatesTheTransformerOperators) {
  const auto &table = kiln::onnx_frontend::defaultOpTable();
  EXPECT_EQ(table.lookup("", "Attention", 22), nullptr);
  for (int64_t opset : {23, 24, 25, 28})
    EXPECT_NE(table.lookup("", "Attention", opset), nullptr) << "opset " << opset;
  EXPECT_EQ(table.entries().at({"", "Attention"}).count(25), 1u);
  for (const char *op : {"RMSNormalization", "RotaryEmbedding"}) {
    EXPECT_EQ(table.lookup("", op, 22), nullptr) << op;
    EXPECT_NE(table.lookup("", op, 28), nullptr) << op;
  }
}

} // namespace
