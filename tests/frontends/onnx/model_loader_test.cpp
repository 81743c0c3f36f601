//===- model_loader_test.cpp - Parsing, versions and graph structure -----===//

#include "frontends/onnx/ModelLoader.h"
#include "tests/frontends/onnx/TestModels.h"

#include <gtest/gtest.h>

#include <cstring>

namespace kiln::onnx_frontend {
namespace {

using namespace kiln::onnx_frontend::testing;

class ModelLoaderTest : public ::testing::Test {
protected:
  /// Writes `model` as model.onnx in the test's directory and loads it.
  LoadResult load(const onnx::ModelProto &model, const LoadOptions &options = {}) {
    writeModel(model, modelPath());
    return loadOnnxModel(modelPath(), options);
  }
  std::string modelPath() const { return directory.file("model.onnx"); }

  TemporaryDirectory directory;
};

/// Builds an If node reading the outer-scope `cond` whose then-branch is `thenBranch` and whose
/// else-branch passes `cond` through.
onnx::NodeProto &addIf(onnx::GraphProto &graph, const std::string &name, const std::string &output,
                       onnx::GraphProto thenBranch) {
  onnx::NodeProto &node = addNode(graph, "If", name, {"cond"}, {output});
  onnx::AttributeProto *thenAttribute = node.add_attribute();
  thenAttribute->set_name("then_branch");
  thenAttribute->set_type(onnx::AttributeProto::GRAPH);
  *thenAttribute->mutable_g() = std::move(thenBranch);
  onnx::AttributeProto *elseAttribute = node.add_attribute();
  elseAttribute->set_name("else_branch");
  elseAttribute->set_type(onnx::AttributeProto::GRAPH);
  onnx::GraphProto &elseBranch = *elseAttribute->mutable_g();
  elseBranch.set_name(name + "_else");
  addNode(elseBranch, "Identity", "", {"cond"}, {name + "_else_out"});
  elseBranch.add_output()->set_name(name + "_else_out");
  return node;
}

/// Returns a model whose main graph holds `levels` If nodes, each nested in the previous one's
/// then-branch; the node at nesting level k is called "if_k".
onnx::ModelProto makeNestedIfModel(int levels) {
  onnx::GraphProto inner;
  inner.set_name("leaf");
  addNode(inner, "Identity", "leaf", {"cond"}, {"leaf_out"});
  inner.add_output()->set_name("leaf_out");
  for (int level = levels; level >= 1; --level) {
    onnx::GraphProto outer;
    outer.set_name("level_" + std::to_string(level));
    const std::string output = "if_" + std::to_string(level) + "_out";
    addIf(outer, "if_" + std::to_string(level), output, std::move(inner));
    outer.add_output()->set_name(output);
    inner = std::move(outer);
  }
  onnx::ModelProto model = makeAddModel();
  onnx::GraphProto &main = *model.mutable_graph();
  onnx::ValueInfoProto *cond = main.add_input();
  cond->set_name("cond");
  cond->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
  // The outermost If lives in the main graph itself.
  for (onnx::NodeProto &node : *inner.mutable_node())
    *main.add_node() = std::move(node);
  return model;
}

// Tests that a well-formed model loads without errors and that its initializer view holds the
// values written; if this failed, the loader would reject or corrupt ordinary models.
TEST_F(ModelLoaderTest, ValidModelLoadsWithItsInitializer) {
  LoadResult result = load(makeAddModel());
  ASSERT_TRUE(result.succeeded()) << result.formatDiagnostics();
  EXPECT_EQ(result.count(Severity::Error), 0u);
  const TensorView *w = result.model->findInitializer("w");
  ASSERT_NE(w, nullptr);
  const std::vector<float> expected = seededFloats(6, 1);
  ASSERT_EQ(w->byteSize, expected.size() * sizeof(float));
  EXPECT_EQ(std::memcmp(w->data, expected.data(), w->byteSize), 0);
  EXPECT_EQ(w->source, TensorDataSource::TypedField);
  EXPECT_EQ(result.model->defaultOpset(), 13);
}

// Tests that a missing file is reported by name instead of crashing or throwing.
TEST_F(ModelLoaderTest, MissingFileIsNamed) {
  const std::string path = directory.file("absent.onnx");
  EXPECT_TRUE(failsWith(loadOnnxModel(path), {path, "does not exist"}));
}

// Tests that a directory passed as the model is refused as such.
TEST_F(ModelLoaderTest, DirectoryIsNotAModel) {
  EXPECT_TRUE(failsWith(loadOnnxModel(directory.path()), {directory.path(), "directory"}));
}

// Tests that an empty file is refused with a message saying so: protobuf alone would accept it as
// an empty ModelProto.
TEST_F(ModelLoaderTest, EmptyFileIsRefused) {
  const std::string path = directory.file("empty.onnx");
  writeFile(path, "");
  EXPECT_TRUE(failsWith(loadOnnxModel(path), {path, "the file is empty"}));
}

// Tests that seeded random bytes are refused as not being an ONNX protobuf.
TEST_F(ModelLoaderTest, RandomBytesAreNotAModel) {
  const std::string path = directory.file("noise.onnx");
  writeFile(path, seededBytes(4096, 7));
  EXPECT_TRUE(failsWith(loadOnnxModel(path), {path, "not a valid ONNX model"}));
}

// Tests that a tag with field number 0 (which protobuf forbids) is reported as such. Here it is a
// start-group tag inside the graph: the failure explanation must not take that group for the
// length-delimited graph around it, which would corrupt its stream limits and never finish.
TEST_F(ModelLoaderTest, FieldNumberZeroIsNotAProtobuf) {
  std::string bytes;
  ASSERT_TRUE(makeAddModel().SerializeToString(&bytes));
  // Field 7 (graph), 3 bytes: a start-group tag for field 0, then an empty field 1.
  bytes += std::string("\x3a\x03\x03\x0a\x00", 5);
  const std::string path = directory.file("field0.onnx");
  writeFile(path, bytes);
  EXPECT_TRUE(failsWith(loadOnnxModel(path), {path, "invalid field number 0", "in graph"}));
}

// Tests that a model cut in half is reported as truncated, naming the field the cut falls in.
TEST_F(ModelLoaderTest, TruncatedModelIsReportedAsTruncated) {
  onnx::ModelProto model = makeAddModel();
  *model.mutable_graph()->add_initializer() = rawFloatTensor("big", {1024}, seededFloats(1024, 2));
  std::string bytes;
  ASSERT_TRUE(model.SerializeToString(&bytes));
  const std::string path = directory.file("truncated.onnx");
  writeFile(path, bytes.substr(0, bytes.size() / 2));
  EXPECT_TRUE(failsWith(loadOnnxModel(path), {path, "truncated", "graph"}));
}

// Tests that protobuf nesting beyond the recursion limit is refused before it can exhaust the
// stack, and that the message names the limit.
TEST_F(ModelLoaderTest, ExcessiveProtobufNestingIsBounded) {
  LoadResult result = load(makeNestedIfModel(100));
  EXPECT_TRUE(failsWith(result, {modelPath(), "nest deeper than the limit of 256"}));
}

// Tests that subgraphs nested deeper than the graph-depth limit are refused at the node whose
// subgraph crosses it, while parsing (which allows deeper protobuf nesting) succeeds.
TEST_F(ModelLoaderTest, DeepSubgraphNestingIsRefusedAtTheNode) {
  LoadResult result = load(makeNestedIfModel(70));
  EXPECT_TRUE(failsWith(result, {"node 'if_64'", "65 levels deep", "limit of 64"}));
  EXPECT_EQ(findDiagnostic(result, Severity::Error, {"not a valid ONNX model"}), nullptr)
      << "70 levels must still parse under the protobuf limit";
}

// Tests that a subgraph reading a value of its enclosing graph passes the structural checks and
// libonnx's checker.
TEST_F(ModelLoaderTest, SubgraphMayReadOuterScopeValues) {
  onnx::ModelProto model = makeAddModel();
  onnx::GraphProto &main = *model.mutable_graph();
  onnx::ValueInfoProto *cond = main.add_input();
  cond->set_name("cond");
  cond->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::BOOL);
  cond->mutable_type()->mutable_tensor_type()->mutable_shape();
  onnx::GraphProto thenBranch;
  thenBranch.set_name("then");
  addNode(thenBranch, "Neg", "neg", {"y"}, {"negated"});
  addOutput(thenBranch, "negated", {2, 3});
  onnx::NodeProto &node = addIf(main, "choose", "chosen", std::move(thenBranch));
  // Both branches must produce floats: the else-branch passes y through.
  onnx::GraphProto &elseBranch = *node.mutable_attribute(1)->mutable_g();
  elseBranch.mutable_node(0)->set_input(0, "y");
  *elseBranch.mutable_output(0)->mutable_type() = floatTensorType({2, 3});
  addOutput(main, "chosen", {2, 3});
  LoadResult result = load(model);
  EXPECT_TRUE(result.succeeded()) << result.formatDiagnostics();
}

// Tests that a subgraph reading an undefined value is reported with the subgraph's path.
TEST_F(ModelLoaderTest, SubgraphDanglingInputNamesTheSubgraph) {
  onnx::ModelProto model = makeNestedIfModel(1);
  onnx::GraphProto &thenBranch =
      *model.mutable_graph()->mutable_node(1)->mutable_attribute(0)->mutable_g();
  thenBranch.mutable_node(0)->set_input(0, "phantom");
  LoadResult result = load(model);
  EXPECT_TRUE(failsWith(
      result, {"[graph main/if_1.then_branch]", "node 'leaf' (#0, Identity)", "'phantom'"}));
}

// Tests that an IR version newer than the loader knows is refused, naming the supported range.
TEST_F(ModelLoaderTest, FutureIrVersionIsRefused) {
  onnx::ModelProto model = makeAddModel();
  model.set_ir_version(99);
  EXPECT_TRUE(failsWith(load(model), {modelPath(), "IR version 99", "supported 3..8"}));
}

// Tests that a model without an IR version is refused.
TEST_F(ModelLoaderTest, MissingIrVersionIsRefused) {
  onnx::ModelProto model = makeAddModel();
  model.clear_ir_version();
  EXPECT_TRUE(failsWith(load(model), {"declares no IR version"}));
}

// Tests that a default-domain opset beyond the known-newer maximum is refused, naming the range.
TEST_F(ModelLoaderTest, FutureOpsetIsRefusedNamingTheRange) {
  EXPECT_TRUE(failsWith(load(makeAddModel(30)), {modelPath(), "opset 30", "7..17", "up to 28"}));
}

// Tests that a default-domain opset older than the fully supported range loads with a warning
// (the operator table decides per operator version), and one older than the known range is
// refused, naming both.
TEST_F(ModelLoaderTest, OldOpsetLoadsWithWarningAndOlderIsRefused) {
  LoadResult result = load(makeAddModel(5));
  ASSERT_TRUE(result.succeeded()) << result.formatDiagnostics();
  EXPECT_NE(findDiagnostic(result, Severity::Warning,
                           {"opset 5", "older than the fully supported range 7..17"}),
            nullptr)
      << result.formatDiagnostics();
  LoadOptions options;
  options.minKnownDefaultOpset = 6;
  EXPECT_TRUE(failsWith(load(makeAddModel(5), options),
                        {"opset 5", "older than the supported range 7..17", "from 6"}));
}

// Tests that an opset between the supported and the known-newer maximum loads with a warning,
// and that libonnx's checker (which knows only up to 17) is skipped with a note rather than
// rejecting the model.
TEST_F(ModelLoaderTest, KnownNewerOpsetLoadsWithWarningAndSkipsChecker) {
  onnx::ModelProto model = makeAddModel(19);
  model.set_ir_version(9);
  LoadResult result = load(model);
  ASSERT_TRUE(result.succeeded()) << result.formatDiagnostics();
  EXPECT_NE(findDiagnostic(result, Severity::Warning, {"opset 19", "7..17"}), nullptr)
      << result.formatDiagnostics();
  EXPECT_NE(findDiagnostic(result, Severity::Note, {"skipped onnx::checker"}), nullptr)
      << result.formatDiagnostics();
}

// Tests that the opset range comes from LoadOptions, not from constants.
TEST_F(ModelLoaderTest, OpsetRangeFollowsOptions) {
  LoadOptions options;
  options.minDefaultOpset = 14;
  options.minKnownDefaultOpset = 14;
  EXPECT_TRUE(failsWith(load(makeAddModel(13), options), {"opset 13", "14..17"}));
}

// Tests that an operator domain no node uses is accepted with a note, as the ONNX checker
// accepts the imports ONNX Runtime's tools leave behind (com.microsoft, com.microsoft.nchwc,
// org.pytorch.aten).
TEST_F(ModelLoaderTest, AnUnknownDomainNoNodeUsesIsIgnored) {
  onnx::ModelProto model = makeAddModel();
  for (const char *domain : {"com.microsoft", "com.microsoft.nchwc", "org.pytorch.aten"}) {
    onnx::OperatorSetIdProto *import = model.add_opset_import();
    import->set_domain(domain);
    import->set_version(1);
  }
  LoadResult result = load(model);
  ASSERT_TRUE(result.succeeded()) << result.formatDiagnostics();
  EXPECT_NE(findDiagnostic(result, Severity::Note, {"'com.microsoft.nchwc'", "no node uses it"}),
            nullptr)
      << result.formatDiagnostics();
}

// Tests that a node of an unknown operator domain is refused naming the node, and accepted once
// the domain is listed in the options.
TEST_F(ModelLoaderTest, UnknownDomainIsRefusedUnlessListed) {
  onnx::ModelProto model = makeAddModel();
  onnx::OperatorSetIdProto *import = model.add_opset_import();
  import->set_domain("com.example");
  import->set_version(1);
  model.mutable_graph()->mutable_node(0)->set_domain("com.example");
  model.mutable_graph()->mutable_node(0)->set_name("custom_add");
  EXPECT_TRUE(failsWith(load(model), {"unknown operator domain 'com.example' of node 'custom_add'"}));

  LoadOptions options;
  options.extraDomains.push_back("com.example");
  LoadResult listed = load(model, options);
  EXPECT_TRUE(listed.succeeded()) << listed.formatDiagnostics();
}

// Tests that the preview domain current exporters declare (ai.onnx.preview, version 1) loads,
// and that a newer version of it is refused with the supported range.
TEST_F(ModelLoaderTest, PreviewDomainIsKnown) {
  onnx::ModelProto model = makeAddModel();
  onnx::OperatorSetIdProto *import = model.add_opset_import();
  import->set_domain("ai.onnx.preview");
  import->set_version(1);
  LoadResult loaded = load(model);
  EXPECT_TRUE(loaded.succeeded()) << loaded.formatDiagnostics();
  import->set_version(2);
  EXPECT_TRUE(failsWith(load(model), {"operator domain 'ai.onnx.preview' opset 2", "1..1"}));
}

// Tests that a node in a domain the model does not import is refused at the node.
TEST_F(ModelLoaderTest, NodeDomainMustBeImported) {
  onnx::ModelProto model = makeAddModel();
  model.mutable_graph()->mutable_node(0)->set_domain("ai.onnx.ml");
  EXPECT_TRUE(
      failsWith(load(model), {"node 'add' (#0, Add)", "domain 'ai.onnx.ml'", "does not import"}));
}

// Tests that importing the same domain twice is refused ("ai.onnx" and "" are the same domain).
TEST_F(ModelLoaderTest, DuplicateDomainImportIsRefused) {
  onnx::ModelProto model = makeAddModel();
  onnx::OperatorSetIdProto *import = model.add_opset_import();
  import->set_domain("ai.onnx");
  import->set_version(13);
  EXPECT_TRUE(failsWith(load(model), {"'ai.onnx' is imported twice"}));
}

// Tests that a node input naming no value is reported with the node and the value.
TEST_F(ModelLoaderTest, DanglingNodeInputNamesNodeAndValue) {
  onnx::ModelProto model = makeAddModel();
  model.mutable_graph()->mutable_node(0)->set_input(1, "ghost");
  LoadResult result = load(model);
  EXPECT_TRUE(failsWith(result, {modelPath(), "node 'add' (#0, Add)", "'ghost'"}));
  const Diagnostic *error = findDiagnostic(result, Severity::Error, {"ghost"});
  ASSERT_NE(error, nullptr);
  EXPECT_EQ(error->location.node, "add");
  EXPECT_EQ(error->location.nodeIndex, 0);
  EXPECT_EQ(error->location.tensor, "ghost");
}

// Tests that reading a value before the node producing it is reported as an ordering problem,
// naming the producer.
TEST_F(ModelLoaderTest, InputFromLaterNodeBreaksTopologicalOrder) {
  onnx::ModelProto model = makeAddModel();
  onnx::GraphProto &graph = *model.mutable_graph();
  graph.mutable_node(0)->set_input(1, "later");
  addNode(graph, "Neg", "producer", {"x"}, {"later"});
  EXPECT_TRUE(failsWith(load(model), {"node 'add' (#0, Add)", "'later'", "node 'producer' (#1)",
                                      "topological order"}));
}

// Tests that two nodes writing the same value are refused, naming both.
TEST_F(ModelLoaderTest, DuplicateOutputNamesBothNodes) {
  onnx::ModelProto model = makeAddModel();
  addNode(*model.mutable_graph(), "Neg", "second", {"x"}, {"y"});
  EXPECT_TRUE(failsWith(load(model),
                        {"node 'second' (#1, Neg)", "'y'", "already defined by node 'add' (#0)"}));
}

// Tests that a node without op_type is refused, named by its index when it has no name.
TEST_F(ModelLoaderTest, EmptyOpTypeIsRefused) {
  onnx::ModelProto model = makeAddModel();
  addNode(*model.mutable_graph(), "", "", {"y"}, {"z"});
  EXPECT_TRUE(failsWith(load(model), {"node #1 ", "empty op_type"}));
}

// Tests that a graph output produced by nothing is refused, naming the output.
TEST_F(ModelLoaderTest, UnproducedGraphOutputIsRefused) {
  onnx::ModelProto model = makeAddModel();
  addOutput(*model.mutable_graph(), "z", {1});
  LoadResult result = load(model);
  EXPECT_TRUE(failsWith(result, {"graph output 'z'", "not produced"}));
}

// Tests that a model without a graph is refused.
TEST_F(ModelLoaderTest, ModelWithoutGraphIsRefused) {
  onnx::ModelProto model = makeAddModel();
  model.clear_graph();
  EXPECT_TRUE(failsWith(load(model), {"has no graph"}));
}

// Tests that the loader reports every independent problem of a model, not only the first.
TEST_F(ModelLoaderTest, AllProblemsAreCollected) {
  onnx::ModelProto model = makeAddModel(30);
  onnx::GraphProto &graph = *model.mutable_graph();
  graph.mutable_node(0)->set_input(0, "ghost");
  graph.mutable_initializer(0)->add_float_data(1.0f);
  addNode(graph, "Neg", "twin", {"w"}, {"y"});
  LoadResult result = load(model);
  EXPECT_TRUE(failsWith(result, {"opset 30"}));
  EXPECT_TRUE(failsWith(result, {"'ghost'"}));
  EXPECT_TRUE(failsWith(result, {"initializer 'w'", "float_data holds 7 values"}));
  EXPECT_TRUE(failsWith(result, {"node 'twin' (#1, Neg)", "'y'"}));
}

// Tests that a hostile model with thousands of problems keeps a bounded number of diagnostics
// and still says that it failed.
TEST_F(ModelLoaderTest, DiagnosticsAreBounded) {
  onnx::ModelProto model = makeAddModel();
  for (int i = 0; i < 2000; ++i)
    addNode(*model.mutable_graph(), "Neg", "n" + std::to_string(i), {"nowhere"},
            {"o" + std::to_string(i)});
  LoadOptions options;
  options.maxDiagnostics = 10;
  LoadResult result = load(model, options);
  EXPECT_FALSE(result.succeeded());
  EXPECT_EQ(result.diagnostics.size(), 11u);
  EXPECT_TRUE(failsWith(result, {"1990 further diagnostics were dropped"}));
}

// Tests that libonnx's checker runs and that its exception becomes an error diagnostic.
TEST_F(ModelLoaderTest, CheckerFailureBecomesDiagnostic) {
  onnx::ModelProto model = makeAddModel();
  model.mutable_graph()->mutable_node(0)->set_op_type("NoSuchOperator");
  EXPECT_TRUE(failsWith(load(model), {modelPath(), "onnx checker", "NoSuchOperator"}));

  LoadOptions options;
  options.runChecker = false;
  options.inferShapes = false;
  LoadResult unchecked = load(model, options);
  EXPECT_TRUE(unchecked.succeeded()) << unchecked.formatDiagnostics();
}

// Tests that shape inference runs when asked (it records the intermediate value's type) and not
// otherwise.
TEST_F(ModelLoaderTest, ShapeInferenceAddsValueInfoWhenEnabled) {
  onnx::ModelProto model = makeAddModel();
  onnx::GraphProto &graph = *model.mutable_graph();
  graph.mutable_node(0)->set_output(0, "sum");
  addNode(graph, "Neg", "neg", {"sum"}, {"y"});
  LoadResult inferred = load(model);
  ASSERT_TRUE(inferred.succeeded()) << inferred.formatDiagnostics();
  const auto &valueInfo = inferred.model->proto().graph().value_info();
  ASSERT_EQ(valueInfo.size(), 1);
  EXPECT_EQ(valueInfo.Get(0).name(), "sum");
  EXPECT_EQ(valueInfo.Get(0).type().tensor_type().shape().dim_size(), 2);

  LoadOptions options;
  options.inferShapes = false;
  LoadResult plain = load(model, options);
  ASSERT_TRUE(plain.succeeded()) << plain.formatDiagnostics();
  EXPECT_EQ(plain.model->proto().graph().value_info_size(), 0);
}

// Tests that shape inference's exception for a declared type contradicting the inferred one
// becomes an error diagnostic.
TEST_F(ModelLoaderTest, ShapeInferenceConflictBecomesDiagnostic) {
  onnx::ModelProto model = makeAddModel();
  model.mutable_graph()->mutable_output(0)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::INT64);
  EXPECT_TRUE(failsWith(load(model), {"onnx shape inference"}));
}

// Tests that a convolution with a zero stride is refused by the loader, naming the node and the
// attribute, before libonnx's shape inference divides by it (found by the loader fuzzer).
TEST_F(ModelLoaderTest, ZeroStrideIsRefusedBeforeShapeInference) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto &graph = *model.mutable_graph();
  graph.set_name("conv");
  addInput(graph, "x", {1, 1, 7, 5});
  addInput(graph, "w", {1, 1, 3, 3});
  addOutput(graph, "y", {1, 1, 4, 3});
  onnx::NodeProto &conv = addNode(graph, "Conv", "strided", {"x", "w"}, {"y"});
  onnx::AttributeProto *strides = conv.add_attribute();
  strides->set_name("strides");
  strides->set_type(onnx::AttributeProto::INTS);
  strides->add_ints(0);
  strides->add_ints(2);
  EXPECT_TRUE(failsWith(load(model), {"attribute 'strides' of", "strided",
                                      "must be positive, not 0"}));
}

// Tests that a model in memory loads the same as from a file and is named as the caller says.
TEST_F(ModelLoaderTest, BufferLoadsLikeAFile) {
  std::string bytes;
  ASSERT_TRUE(makeAddModel().SerializeToString(&bytes));
  LoadResult result = loadOnnxModelFromBuffer(bytes.data(), bytes.size(), "in-memory");
  ASSERT_TRUE(result.succeeded()) << result.formatDiagnostics();
  ASSERT_NE(result.model->findInitializer("w"), nullptr);

  EXPECT_TRUE(failsWith(loadOnnxModelFromBuffer(bytes.data(), bytes.size() / 2, "half"),
                        {"half:", "truncated"}));
}

} // namespace
} // namespace kiln::onnx_frontend
