//===- ModelValidation.cpp - Version, opset and graph-structure checks --===//

#include "frontends/onnx/ModelValidation.h"

#include <algorithm>
#include <set>
#include <unordered_map>
#include <utility>

namespace kiln::onnx_frontend {
namespace {

/// A domain the loader knows besides ai.onnx, with the opset versions it accepts.
struct KnownDomain {
  const char *name;
  int64_t maxVersion;
};

constexpr KnownDomain kKnownDomains[] = {
    {"ai.onnx.ml", 5},
    {"ai.onnx.training", 1},
    {"ai.onnx.preview.training", 1},
    // Operators on their way into ai.onnx (FlexAttention); importing none of them, the loader
    // takes models that declare the domain and the importer names the operators it lacks.
    {"ai.onnx.preview", 1},
};

std::string displayDomain(const std::string &domain) {
  return domain.empty() ? std::string("ai.onnx") : domain;
}

std::string range(int64_t low, int64_t high) {
  return std::to_string(low) + ".." + std::to_string(high);
}

std::set<std::string> functionDomains(const onnx::ModelProto &model) {
  std::set<std::string> domains;
  for (const onnx::FunctionProto &function : model.functions())
    domains.insert(normalizeDomain(function.domain()));
  return domains;
}

/// How a value got its name in a graph.
struct ValueDefinition {
  enum class Kind { GraphInput, Initializer, NodeOutput, FunctionInput } kind;
  int64_t nodeIndex = -1;
  std::string nodeName;
};

std::string describeNode(const std::string &name, int64_t index, const std::string &opType) {
  const std::string suffix = opType.empty() ? std::string() : ", " + opType;
  return name.empty()
             ? "node #" + std::to_string(index) + (opType.empty() ? "" : " (" + opType + ")")
             : "node '" + name + "' (#" + std::to_string(index) + suffix + ")";
}

std::string describeDefinition(const ValueDefinition &definition) {
  switch (definition.kind) {
  case ValueDefinition::Kind::GraphInput:
    return "a graph input";
  case ValueDefinition::Kind::Initializer:
    return "an initializer";
  case ValueDefinition::Kind::FunctionInput:
    return "a function input";
  case ValueDefinition::Kind::NodeOutput:
    return describeNode(definition.nodeName, definition.nodeIndex, "");
  }
  return "?";
}

/// The values visible in one graph, chained to the enclosing graph's scope.
class Scope {
public:
  explicit Scope(const Scope *outer) : outer_(outer) {}

  const ValueDefinition *findLocal(const std::string &name) const {
    auto found = values_.find(name);
    return found == values_.end() ? nullptr : &found->second;
  }
  const ValueDefinition *find(const std::string &name) const {
    for (const Scope *scope = this; scope; scope = scope->outer_)
      if (const ValueDefinition *definition = scope->findLocal(name))
        return definition;
    return nullptr;
  }
  void define(const std::string &name, ValueDefinition definition) {
    values_.emplace(name, std::move(definition));
  }

private:
  const Scope *outer_;
  std::unordered_map<std::string, ValueDefinition> values_;
};

/// Walks the main graph, its subgraphs and the model's functions once, checking structure and
/// collecting tensors.
class GraphStructureChecker {
public:
  GraphStructureChecker(const LoadOptions &options, DiagnosticSink &sink, ModelFacts &facts,
                        std::set<std::string> functionDomains)
      : options_(options), sink_(sink), facts_(facts),
        functionDomains_(std::move(functionDomains)) {}

  void checkGraph(onnx::GraphProto &graph, const std::string &path, const Scope *outer, int depth);
  void checkFunction(onnx::FunctionProto &function);

private:
  SourceLocation graphLocation(const std::string &path, const std::string &tensor = "") const {
    SourceLocation location;
    location.graph = path;
    location.tensor = tensor;
    return location;
  }

  void checkNodes(google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes,
                  const std::string &path, Scope &scope, int depth,
                  const std::map<std::string, int64_t> *functionOpsets);
  void checkAttributes(onnx::NodeProto &node, const SourceLocation &nodeLocation,
                       const std::string &nodeText, const std::string &path, const Scope &scope,
                       int depth);
  void addTensor(onnx::TensorProto &tensor, TensorOrigin origin, SourceLocation location, int depth,
                 const std::string &attribute, const std::string &subject);

  const LoadOptions &options_;
  DiagnosticSink &sink_;
  ModelFacts &facts_;
  std::set<std::string> functionDomains_;
};

void GraphStructureChecker::addTensor(onnx::TensorProto &tensor, TensorOrigin origin,
                                      SourceLocation location, int depth,
                                      const std::string &attribute, const std::string &subject) {
  TensorSite site;
  site.graphDepth = depth;
  site.tensor = &tensor;
  site.origin = origin;
  site.location = std::move(location);
  site.attribute = attribute;
  site.subject = subject;
  facts_.tensors.push_back(std::move(site));
}

void GraphStructureChecker::checkGraph(onnx::GraphProto &graph, const std::string &path,
                                       const Scope *outer, int depth) {
  Scope scope(outer);
  for (const onnx::ValueInfoProto &input : graph.input()) {
    if (input.name().empty()) {
      sink_.error(graphLocation(path), "a graph input has an empty name");
      continue;
    }
    if (scope.findLocal(input.name()))
      sink_.error(graphLocation(path, input.name()),
                  "graph input '" + input.name() + "' is declared twice");
    scope.define(input.name(), {ValueDefinition::Kind::GraphInput});
  }

  for (int i = 0; i < graph.initializer_size(); ++i) {
    onnx::TensorProto &initializer = *graph.mutable_initializer(i);
    const std::string &name = initializer.name();
    if (name.empty()) {
      sink_.error(graphLocation(path), "initializer #" + std::to_string(i) + " has an empty name");
    } else if (const ValueDefinition *previous = scope.findLocal(name)) {
      if (previous->kind == ValueDefinition::Kind::Initializer)
        sink_.error(graphLocation(path, name), "initializer '" + name + "' is defined twice");
    } else {
      scope.define(name, {ValueDefinition::Kind::Initializer});
    }
    addTensor(initializer, TensorOrigin::Initializer, graphLocation(path, name), depth, "",
              "initializer '" + name + "'");
  }

  for (const onnx::SparseTensorProto &sparse : graph.sparse_initializer())
    sink_.error(graphLocation(path, sparse.values().name()),
                "sparse initializer '" + sparse.values().name() +
                    "' is not supported; store it as a dense initializer");

  checkNodes(*graph.mutable_node(), path, scope, depth, nullptr);

  for (const onnx::ValueInfoProto &output : graph.output()) {
    if (output.name().empty())
      sink_.error(graphLocation(path), "a graph output has an empty name");
    else if (!scope.find(output.name()))
      sink_.error(graphLocation(path, output.name()),
                  "graph output '" + output.name() +
                      "' is not produced by any node, graph input or initializer");
  }
}

void GraphStructureChecker::checkFunction(onnx::FunctionProto &function) {
  const std::string path = "function " + displayDomain(function.domain()) + ":" + function.name();
  Scope scope(nullptr);
  for (const std::string &input : function.input())
    scope.define(input, {ValueDefinition::Kind::FunctionInput});
  std::map<std::string, int64_t> opsets;
  for (const onnx::OperatorSetIdProto &import : function.opset_import())
    opsets[normalizeDomain(import.domain())] = import.version();
  checkNodes(*function.mutable_node(), path, scope, 0, &opsets);
  for (const std::string &output : function.output())
    if (!scope.findLocal(output))
      sink_.error(graphLocation(path, output),
                  "function output '" + output + "' is not produced by any node or input");
}

void GraphStructureChecker::checkNodes(google::protobuf::RepeatedPtrField<onnx::NodeProto> &nodes,
                                       const std::string &path, Scope &scope, int depth,
                                       const std::map<std::string, int64_t> *functionOpsets) {
  // Where each value is produced, to tell a dangling input from one that breaks topological order.
  std::unordered_map<std::string, int> producers;
  for (int i = 0; i < nodes.size(); ++i)
    for (const std::string &output : nodes.Get(i).output())
      if (!output.empty())
        producers.emplace(output, i);

  for (int i = 0; i < nodes.size(); ++i) {
    onnx::NodeProto &node = *nodes.Mutable(i);
    SourceLocation location = graphLocation(path);
    location.node = node.name();
    location.nodeIndex = i;
    const std::string nodeText = describeNode(node.name(), i, node.op_type());

    if (node.op_type().empty())
      sink_.error(location, nodeText + " has an empty op_type");

    const std::string domain = normalizeDomain(node.domain());
    const bool imported = facts_.opsets.count(domain) > 0 ||
                          (functionOpsets && functionOpsets->count(domain) > 0) ||
                          functionDomains_.count(domain) > 0;
    if (!imported)
      sink_.error(location, nodeText + " uses operator domain '" + displayDomain(domain) +
                                "', which the model does not import");

    for (const std::string &input : node.input()) {
      if (input.empty() || scope.find(input))
        continue;
      SourceLocation inputLocation = location;
      inputLocation.tensor = input;
      auto producer = producers.find(input);
      if (producer != producers.end())
        sink_.error(inputLocation,
                    nodeText + " reads '" + input + "' before " +
                        describeNode(nodes.Get(producer->second).name(), producer->second, "") +
                        " produces it; nodes must be in topological order");
      else
        sink_.error(inputLocation, nodeText + " reads '" + input +
                                       "', which is not a graph input, initializer, earlier node "
                                       "output or outer-scope value");
    }

    checkAttributes(node, location, nodeText, path, scope, depth);

    for (const std::string &output : node.output()) {
      if (output.empty())
        continue;
      if (const ValueDefinition *previous = scope.findLocal(output)) {
        SourceLocation outputLocation = location;
        outputLocation.tensor = output;
        sink_.error(outputLocation, nodeText + " outputs '" + output +
                                        "', which is already defined by " +
                                        describeDefinition(*previous));
        continue;
      }
      scope.define(output, {ValueDefinition::Kind::NodeOutput, i, node.name()});
    }
  }
}

void GraphStructureChecker::checkAttributes(onnx::NodeProto &node,
                                            const SourceLocation &nodeLocation,
                                            const std::string &nodeText, const std::string &path,
                                            const Scope &scope, int depth) {
  // Tensors and graphs are found by presence, not by the attribute's declared type, so that a
  // mislabelled attribute cannot hide a tensor from the checks.
  for (int a = 0; a < node.attribute_size(); ++a) {
    onnx::AttributeProto &attribute = *node.mutable_attribute(a);
    const std::string &name = attribute.name();
    const std::string attributeText = "attribute '" + name + "' of " + nodeText;

    auto tensorName = [&](const onnx::TensorProto &tensor) {
      if (!tensor.name().empty())
        return tensor.name();
      return node.op_type() == "Constant" && node.output_size() > 0 ? node.output(0)
                                                                    : std::string();
    };
    auto addAttributeTensor = [&](onnx::TensorProto &tensor, const std::string &label) {
      SourceLocation location = nodeLocation;
      location.tensor = tensorName(tensor);
      const std::string subject = location.tensor.empty()
                                      ? label + " of " + attributeText
                                      : label + " '" + location.tensor + "' of " + attributeText;
      addTensor(tensor, TensorOrigin::Attribute, std::move(location), depth, name, subject);
    };
    if (attribute.has_t())
      addAttributeTensor(*attribute.mutable_t(), "tensor");
    for (int t = 0; t < attribute.tensors_size(); ++t)
      addAttributeTensor(*attribute.mutable_tensors(t), "tensor #" + std::to_string(t));

    if (attribute.has_sparse_tensor() || attribute.sparse_tensors_size() > 0)
      sink_.error(nodeLocation, "sparse tensors are not supported (" + attributeText + ")");

    // The window ops' strides and dilations divide in libonnx's shape inference (a zero stride
    // is a division by zero there): every standard op that has them needs them positive.
    if ((name == "strides" || name == "dilations") &&
        (node.domain().empty() || node.domain() == "ai.onnx"))
      for (int64_t value : attribute.ints())
        if (value < 1) {
          sink_.error(nodeLocation, attributeText + " must be positive, not " +
                                        std::to_string(value));
          break;
        }

    std::vector<onnx::GraphProto *> subgraphs;
    if (attribute.has_g())
      subgraphs.push_back(attribute.mutable_g());
    for (int g = 0; g < attribute.graphs_size(); ++g)
      subgraphs.push_back(attribute.mutable_graphs(g));
    for (std::size_t g = 0; g < subgraphs.size(); ++g) {
      std::string subpath =
          path + "/" +
          (node.name().empty() ? "#" + std::to_string(nodeLocation.nodeIndex) : node.name()) + "." +
          name;
      if (subgraphs.size() > 1 || attribute.graphs_size() > 0)
        subpath += "[" + std::to_string(g) + "]";
      if (depth + 1 > options_.maxGraphDepth) {
        sink_.error(nodeLocation, "subgraph " + attributeText + " nests graphs " +
                                      std::to_string(depth + 1) +
                                      " levels deep, more than the limit of " +
                                      std::to_string(options_.maxGraphDepth));
        continue;
      }
      checkGraph(*subgraphs[g], subpath, &scope, depth + 1);
    }
  }
}

} // namespace

std::string normalizeDomain(const std::string &domain) {
  return domain == "ai.onnx" ? std::string() : domain;
}

/// The first node of `domain` in the model (its graph, the graphs nested in its nodes'
/// attributes, its functions), or null when no node uses the domain. Iterative: a hostile model's
/// nesting depth is checked elsewhere, not by the stack.
const onnx::NodeProto *firstNodeOfDomain(const onnx::ModelProto &model, const std::string &domain) {
  std::vector<const onnx::GraphProto *> graphs;
  if (model.has_graph())
    graphs.push_back(&model.graph());
  auto visit = [&](const onnx::NodeProto &node) -> bool {
    if (normalizeDomain(node.domain()) == domain)
      return true;
    for (const onnx::AttributeProto &attribute : node.attribute()) {
      if (attribute.has_g())
        graphs.push_back(&attribute.g());
      for (const onnx::GraphProto &graph : attribute.graphs())
        graphs.push_back(&graph);
    }
    return false;
  };
  for (const onnx::FunctionProto &function : model.functions())
    for (const onnx::NodeProto &node : function.node())
      if (visit(node))
        return &node;
  while (!graphs.empty()) {
    const onnx::GraphProto *graph = graphs.back();
    graphs.pop_back();
    for (const onnx::NodeProto &node : graph->node())
      if (visit(node))
        return &node;
  }
  return nullptr;
}

void validateVersions(const onnx::ModelProto &model, const LoadOptions &options,
                      DiagnosticSink &sink, ModelFacts &facts) {
  const SourceLocation file = sink.fileLocation();
  const int64_t ir = model.ir_version();
  const std::string irRange = range(options.minIrVersion, options.maxIrVersion);
  if (ir == 0)
    sink.error(file, "the model declares no IR version (ir_version is missing or 0)");
  else if (ir < options.minIrVersion)
    sink.error(file, "IR version " + std::to_string(ir) + " is older than the supported range " +
                         irRange);
  else if (ir > options.maxKnownIrVersion)
    sink.error(file, "IR version " + std::to_string(ir) +
                         " is newer than this loader knows (supported " + irRange +
                         ", accepted up to " + std::to_string(options.maxKnownIrVersion) + ")");
  else if (ir > options.maxIrVersion)
    sink.note(file, "IR version " + std::to_string(ir) + " is newer than the supported range " +
                        irRange + "; it is accepted up to " +
                        std::to_string(options.maxKnownIrVersion));

  if (!model.has_graph())
    sink.error(file, "the model has no graph");
  if (model.opset_import_size() == 0)
    sink.error(file, "the model imports no operator set (opset_import is empty)");

  const std::set<std::string> localDomains = functionDomains(model);
  for (const onnx::OperatorSetIdProto &import : model.opset_import()) {
    const std::string domain = normalizeDomain(import.domain());
    const int64_t version = import.version();
    if (facts.opsets.count(domain)) {
      sink.error(file, "operator domain '" + displayDomain(domain) + "' is imported twice");
      continue;
    }
    facts.opsets[domain] = version;
    if (version < 1) {
      sink.error(file, "operator domain '" + displayDomain(domain) + "' is imported with version " +
                           std::to_string(version));
      continue;
    }

    if (domain.empty()) {
      const std::string supported = range(options.minDefaultOpset, options.maxDefaultOpset);
      if (version < options.minKnownDefaultOpset)
        sink.error(file, "default-domain (ai.onnx) opset " + std::to_string(version) +
                             " is older than the supported range " + supported + " (opsets from " +
                             std::to_string(options.minKnownDefaultOpset) +
                             " are accepted for per-operator import)");
      else if (version < options.minDefaultOpset)
        sink.warning(file, "default-domain (ai.onnx) opset " + std::to_string(version) +
                               " is older than the fully supported range " + supported +
                               "; the importer decides operator by operator");
      else if (version > options.maxKnownDefaultOpset)
        sink.error(file, "default-domain (ai.onnx) opset " + std::to_string(version) +
                             " is newer than the supported range " + supported + " (opsets up to " +
                             std::to_string(options.maxKnownDefaultOpset) +
                             " are accepted for per-operator import)");
      else if (version > options.maxDefaultOpset)
        sink.warning(file, "default-domain (ai.onnx) opset " + std::to_string(version) +
                               " is newer than the fully supported range " + supported +
                               "; the importer decides operator by operator");
      continue;
    }

    const auto known = std::find_if(std::begin(kKnownDomains), std::end(kKnownDomains),
                                    [&](const KnownDomain &d) { return domain == d.name; });
    if (known != std::end(kKnownDomains)) {
      if (version > known->maxVersion)
        sink.error(file, "operator domain '" + domain + "' opset " + std::to_string(version) +
                             " is newer than the supported range " + range(1, known->maxVersion));
      continue;
    }
    const bool extra = std::find(options.extraDomains.begin(), options.extraDomains.end(),
                                 domain) != options.extraDomains.end();
    if (extra || localDomains.count(domain))
      continue;
    // ONNX Runtime's tools (its quantizer, quant_pre_process, the transformer optimizer) leave
    // imports of domains no node uses; the ONNX checker accepts them, and so does Kiln. Only a
    // node of an unknown domain is refused.
    const onnx::NodeProto *user = firstNodeOfDomain(model, domain);
    if (!user) {
      sink.note(file, "operator domain '" + domain + "' is imported but no node uses it; ignored");
      continue;
    }
    sink.error(file, "unknown operator domain '" + domain + "' of node '" + user->name() + "' (" +
                         user->op_type() +
                         ") (known: ai.onnx, ai.onnx.ml, ai.onnx.training, "
                         "ai.onnx.preview.training, ai.onnx.preview, the model's function "
                         "domains and LoadOptions::extraDomains)");
  }
}

void validateGraphs(onnx::ModelProto &model, const LoadOptions &options, DiagnosticSink &sink,
                    ModelFacts &facts) {
  GraphStructureChecker checker(options, sink, facts, functionDomains(model));
  if (model.has_graph()) {
    onnx::GraphProto &graph = *model.mutable_graph();
    checker.checkGraph(graph, graph.name().empty() ? std::string("main") : graph.name(), nullptr,
                       1);
  }
  for (int f = 0; f < model.functions_size(); ++f)
    checker.checkFunction(*model.mutable_functions(f));
}

} // namespace kiln::onnx_frontend
