//===- Importer.cpp - Translating a loaded ONNX model into graph-dialect IR -===//

#include "frontends/onnx/importer/Importer.h"
#include "dialects/kiln/KilnAttributes.h"

#include "frontends/onnx/TensorFile.h"
#include "frontends/onnx/ops/OpTable.h"

#include "dialects/graph/GraphDialect.h"
#include "dialects/graph/GraphOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"

#include <string>

using namespace mlir;

namespace kiln::onnx_frontend {
namespace {

/// The alignment of resource blobs, enough for any element type and vector loads.
constexpr size_t kResourceAlignment = 64;

/// Translates the main graph of one model into one function.
class GraphImporter {
public:
  GraphImporter(MLIRContext &context, const LoadedModel &model, const ImportOptions &options,
                std::shared_ptr<const LoadedModel> owner = nullptr)
      : context_(context), model_(model), options_(options), owner_(std::move(owner)),
        builder_(&context) {}

  FailureOr<OwningOpRef<ModuleOp>> run();

private:
  Location fileLoc() { return FileLineColLoc::get(&context_, options_.modelName, 0, 0); }
  std::string nodeLabel(const onnx::NodeProto &node, int index) const {
    return node.name().empty() ? "#" + std::to_string(index) : node.name();
  }
  Location nodeLoc(const onnx::NodeProto &node, int index) {
    return NameLoc::get(StringAttr::get(&context_, nodeLabel(node, index)),
                        NameLoc::get(StringAttr::get(&context_, node.op_type())));
  }
  int64_t opsetFor(const std::string &domain) const {
    auto found = model_.opsets().find(domain == "ai.onnx" ? std::string() : domain);
    return found == model_.opsets().end() ? 0 : found->second;
  }

  LogicalResult reportUnsupportedOperators(const onnx::GraphProto &graph);
  LogicalResult resolveInputValues(const llvm::StringSet<> &arguments);
  FailureOr<RankedTensorType> argumentType(const onnx::ValueInfoProto &input);
  FailureOr<Value> importTensor(const TensorView &view, Location loc);
  Value specialize(Value value);
  LogicalResult importNode(const onnx::NodeProto &node, int index);

  /// A resource blob of `view`'s bytes: a view of the model's own bytes that keeps the model
  /// alive when the import shares its ownership and the bytes are aligned for their element
  /// type, else a copy.
  AsmResourceBlob resourceBlob(const TensorView &view, Type element);

  MLIRContext &context_;
  const LoadedModel &model_;
  const ImportOptions &options_;
  /// Set when the module's blobs may view the model's tensor data in place.
  std::shared_ptr<const LoadedModel> owner_;
  OpBuilder builder_;
  llvm::StringMap<Value> values_;
  /// The resolved data of ImportOptions::inputValues.
  std::map<std::string, ResolvedTensor> inputValues_;
  /// The function's entry block, its argument names, and the arguments that became constants.
  Block *body_ = nullptr;
  SmallVector<std::string> argumentNames_;
  llvm::BitVector folded_;
  /// The checks of every run the translators asked for (NodeContext::addCheck), in order.
  struct Check {
    Value holds;
    std::string message;
  };
  SmallVector<Check> checks_;
};

LogicalResult GraphImporter::resolveInputValues(const llvm::StringSet<> &arguments) {
  bool valid = true;
  for (const auto &[name, proto] : options_.inputValues) {
    Location loc = NameLoc::get(StringAttr::get(&context_, name), fileLoc());
    if (!arguments.contains(name)) {
      mlir::emitError(loc) << "a value is given for '" << name
                           << "', which is not an input of the graph";
      valid = false;
      continue;
    }
    DiagnosticSink sink(options_.modelName);
    std::optional<ResolvedTensor> resolved =
        resolveTensor(std::make_unique<onnx::TensorProto>(proto),
                      "the value given for input '" + name + "'", sink);
    if (!resolved) {
      for (const Diagnostic &diagnostic : std::move(sink).finish())
        if (diagnostic.severity == Severity::Error)
          mlir::emitError(loc) << diagnostic.message;
      valid = false;
      continue;
    }
    inputValues_.emplace(name, std::move(*resolved));
  }
  return success(valid);
}

LogicalResult GraphImporter::reportUnsupportedOperators(const onnx::GraphProto &graph) {
  const OpTable &table = defaultOpTable();
  std::vector<std::string> missing;
  for (int i = 0; i < graph.node_size(); ++i) {
    const onnx::NodeProto &node = graph.node(i);
    int64_t opset = opsetFor(node.domain());
    if (table.lookup(node.domain(), node.op_type(), opset))
      continue;
    std::string qualified =
        node.domain().empty() ? node.op_type() : node.domain() + "." + node.op_type();
    InFlightDiagnostic error = mlir::emitError(nodeLoc(node, i));
    error << "node '" << nodeLabel(node, i) << "': operator " << qualified << " (opset " << opset
          << ") is not supported";
    auto registered = table.entries().find(
        {node.domain() == "ai.onnx" ? std::string() : node.domain(), node.op_type()});
    std::optional<int64_t> revision = onnxRevision(node.domain(), node.op_type(), opset);
    if (registered != table.entries().end() && revision) {
      error << ": its revision " << *revision << " is newer than those translated (";
      llvm::interleaveComma(llvm::make_first_range(registered->second), error);
      error << ")";
    }
    std::string entry = qualified + "-" + std::to_string(opset);
    if (!llvm::is_contained(missing, entry))
      missing.push_back(entry);
  }
  if (missing.empty())
    return success();
  InFlightDiagnostic summary = mlir::emitError(fileLoc());
  summary << missing.size() << " unsupported operator" << (missing.size() == 1 ? "" : "s")
          << ": ";
  llvm::interleaveComma(missing, summary);
  return failure();
}

FailureOr<RankedTensorType> GraphImporter::argumentType(const onnx::ValueInfoProto &input) {
  Location loc = NameLoc::get(StringAttr::get(&context_, input.name()), fileLoc());
  if (!input.type().has_tensor_type())
    return mlir::emitError(loc) << "graph input '" << input.name() << "' is not a tensor";
  const onnx::TypeProto::Tensor &tensor = input.type().tensor_type();
  Type element = convertElementType(context_, tensor.elem_type());
  if (!element)
    return mlir::emitError(loc) << "graph input '" << input.name() << "' has element type "
                                << tensor.elem_type()
                                << ", which the graph dialect does not support";
  std::optional<SmallVector<int64_t>> shape;
  if (tensor.has_shape()) {
    // The model's declared sizes go into MLIR types: a negative or absurd one (from a crafted
    // or corrupt file) is refused here, naming the input, before anything computes with it.
    constexpr int kMaxRank = 32;
    constexpr uint64_t kMaxBytes = uint64_t{1} << 62;
    if (tensor.shape().dim_size() > kMaxRank)
      return mlir::emitError(loc) << "graph input '" << input.name() << "' has rank "
                                  << tensor.shape().dim_size() << ", above the largest Kiln takes ("
                                  << kMaxRank << ")";
    shape.emplace();
    uint64_t bytes = std::max<uint64_t>(1, (element.getIntOrFloatBitWidth() + 7) / 8);
    for (auto [d, dim] : llvm::enumerate(tensor.shape().dim())) {
      if (dim.has_dim_value() && dim.dim_value() < 0)
        return mlir::emitError(loc) << "graph input '" << input.name() << "' has size "
                                    << dim.dim_value() << " in dimension " << d
                                    << "; sizes are 0 or more";
      if (dim.has_dim_value() &&
          (__builtin_mul_overflow(bytes, static_cast<uint64_t>(dim.dim_value()), &bytes) ||
           bytes > kMaxBytes))
        return mlir::emitError(loc) << "graph input '" << input.name() << "' has size "
                                    << dim.dim_value() << " in dimension " << d
                                    << ", which makes it larger than 2^62 bytes";
      shape->push_back(dim.has_dim_value() ? dim.dim_value() : ShapedType::kDynamic);
    }
  }
  auto value = inputValues_.find(input.name());
  if (value != inputValues_.end()) {
    const TensorView &view = value->second.view();
    if (view.dataType != tensor.elem_type())
      return mlir::emitError(loc)
             << "the value given for input '" << input.name() << "' has element type "
             << (view.elementType ? view.elementType->name : "UNDEFINED")
             << " but the model declares data type " << tensor.elem_type();
    if (shape && shape->size() != view.dims.size())
      return mlir::emitError(loc) << "the value given for input '" << input.name()
                                  << "' has rank " << view.dims.size()
                                  << " but the input has rank " << shape->size();
    for (size_t d = 0; shape && d < view.dims.size(); ++d)
      if ((*shape)[d] != ShapedType::kDynamic && (*shape)[d] != view.dims[d])
        return mlir::emitError(loc) << "the value given for input '" << input.name()
                                    << "' has size " << view.dims[d] << " in dimension " << d
                                    << " but the model declares " << (*shape)[d];
    shape = SmallVector<int64_t>(view.dims.begin(), view.dims.end());
  }
  auto binding = options_.inputShapes.find(input.name());
  if (binding != options_.inputShapes.end()) {
    const std::vector<int64_t> &bound = binding->second;
    if (shape && shape->size() != bound.size())
      return mlir::emitError(loc) << "shape binding for input '" << input.name() << "' has rank "
                                  << bound.size() << " but the input has rank " << shape->size();
    SmallVector<int64_t> merged;
    for (size_t d = 0; d < bound.size(); ++d) {
      int64_t declared = shape ? (*shape)[d] : ShapedType::kDynamic;
      int64_t size = bound[d] < 0 ? declared : bound[d];
      if (declared != ShapedType::kDynamic && size != declared)
        return mlir::emitError(loc) << "shape binding for input '" << input.name()
                                    << "' sets dimension " << d << " to " << size
                                    << " but the model declares " << declared;
      merged.push_back(size);
    }
    shape = merged;
  }
  if (!shape)
    return mlir::emitError(loc) << "graph input '" << input.name()
                                << "' has no shape; bind one with --shape "
                                << input.name() << "=DIMS";
  return RankedTensorType::get(*shape, element);
}

FailureOr<Value> GraphImporter::importTensor(const TensorView &view, Location loc) {
  Type element = convertElementType(context_, view.dataType);
  if (!element)
    return mlir::emitError(loc) << "tensor '" << view.name << "' has element type "
                                << (view.elementType ? view.elementType->name : "UNDEFINED")
                                << ", which the graph dialect does not support";
  auto type = RankedTensorType::get(view.dims, element);
  ArrayRef<char> bytes(reinterpret_cast<const char *>(view.data), view.byteSize);
  std::vector<uint8_t> unpacked; // Packed 4- and 2-bit integers, one per byte.
  if (view.elementType && isPackedSubByte(*view.elementType) && view.elementCount != 0) {
    unpacked = unpackSubByte(*view.elementType, view.data, view.elementCount);
    bytes = ArrayRef<char>(reinterpret_cast<const char *>(unpacked.data()), unpacked.size());
  }
  ElementsAttr value;
  if (view.elementCount == 0) {
    value = DenseElementsAttr::get(type, ArrayRef<Attribute>());
  } else if (element.isInteger(1)) {
    SmallVector<bool> bits;
    for (char byte : bytes)
      bits.push_back(byte != 0);
    value = DenseElementsAttr::get(type, bits);
  } else if (options_.resourceThresholdBytes != 0 &&
             bytes.size() > options_.resourceThresholdBytes) {
    std::string blobName = view.name.empty() ? "tensor" : view.name;
    value = DenseResourceElementsAttr::get(
        type, blobName,
        unpacked.empty()
            ? resourceBlob(view, element)
            : HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, kResourceAlignment));
  } else {
    bool splat = false;
    if (!DenseElementsAttr::isValidRawBuffer(type, bytes, splat))
      return mlir::emitError(loc) << "tensor '" << view.name << "' holds " << bytes.size()
                                  << " bytes, which do not fit its type " << type;
    value = DenseElementsAttr::getFromRawBuffer(type, bytes);
  }
  return graph::ConstantOp::create(builder_, loc, value).getResult();
}

AsmResourceBlob GraphImporter::resourceBlob(const TensorView &view, Type element) {
  ArrayRef<char> bytes(reinterpret_cast<const char *>(view.data), view.byteSize);
  const std::vector<TensorView> &tensors = model_.tensors();
  bool ownView = !tensors.empty() && &view >= tensors.data() && &view < tensors.data() + tensors.size();
  if (owner_ && ownView) {
    // The largest power of two the address is a multiple of, up to the usual alignment.
    auto address = reinterpret_cast<uintptr_t>(view.data);
    size_t alignment = std::min<size_t>(kResourceAlignment, address & (~address + 1));
    size_t elementBytes = std::max<size_t>(1, element.getIntOrFloatBitWidth() / 8);
    if (alignment >= elementBytes)
      return AsmResourceBlob(bytes, alignment,
                             [owner = owner_](void *, size_t, size_t) { (void)owner; },
                             /*dataIsMutable=*/false);
  }
  return HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, kResourceAlignment);
}

Value GraphImporter::specialize(Value value) {
  auto argument = llvm::dyn_cast<BlockArgument>(value);
  if (!argument || argument.getOwner() != body_)
    return value;
  const std::string &name = argumentNames_[argument.getArgNumber()];
  auto found = inputValues_.find(name);
  if (found == inputValues_.end())
    return value;
  OpBuilder::InsertionGuard guard(builder_);
  builder_.setInsertionPointToStart(body_);
  Location loc = NameLoc::get(builder_.getStringAttr(name), fileLoc());
  FailureOr<Value> constant = importTensor(found->second.view(), loc);
  if (failed(constant))
    return value;
  argument.replaceAllUsesWith(*constant);
  values_[name] = *constant;
  folded_.set(argument.getArgNumber());
  return *constant;
}

LogicalResult GraphImporter::importNode(const onnx::NodeProto &node, int index) {
  Location loc = nodeLoc(node, index);
  std::string label = nodeLabel(node, index);
  for (const std::string &name : node.input())
    if (!name.empty() && !values_.count(name))
      return mlir::emitError(loc) << "node '" << label << "' (" << node.op_type()
                                  << ") reads '" << name << "', which no earlier node produces";
  int64_t opset = opsetFor(node.domain());
  TranslateFn translate = defaultOpTable().lookup(node.domain(), node.op_type(), opset);
  NodeContext ctx(
      node, opset, label, loc, builder_, model_,
      [this](const std::string &name) { return values_.lookup(name); },
      [this](const std::string &name, Value value) { values_[name] = value; },
      [this, loc](const TensorView &view) { return importTensor(view, loc); },
      [this](Value value) { return specialize(value); },
      [this](Value holds, std::string message) {
        checks_.push_back({holds, std::move(message)});
      });
  if (failed(translate(ctx)))
    return failure();
  for (int i = 0; i < node.output_size(); ++i)
    if (!node.output(i).empty() && !values_.count(node.output(i)))
      return ctx.emitError() << "output " << i << " ('" << node.output(i)
                             << "') was not produced";
  return success();
}

FailureOr<OwningOpRef<ModuleOp>> GraphImporter::run() {
  context_.loadDialect<graph::GraphDialect, func::FuncDialect>();
  const onnx::GraphProto &graph = model_.proto().graph();
  if (failed(reportUnsupportedOperators(graph)))
    return failure();

  llvm::StringSet<> initializers;
  for (const onnx::TensorProto &initializer : graph.initializer())
    initializers.insert(initializer.name());
  llvm::StringSet<> inputNames;
  SmallVector<Type> argumentTypes;
  SmallVector<std::string> &argumentNames = argumentNames_;
  llvm::StringSet<> graphArguments;
  for (const onnx::ValueInfoProto &input : graph.input())
    if (!initializers.contains(input.name()))
      graphArguments.insert(input.name());
  bool inputsValid = succeeded(resolveInputValues(graphArguments));
  for (const onnx::ValueInfoProto &input : graph.input()) {
    inputNames.insert(input.name());
    if (initializers.contains(input.name()))
      continue;
    FailureOr<RankedTensorType> type = argumentType(input);
    if (failed(type)) {
      inputsValid = false;
      continue;
    }
    argumentTypes.push_back(*type);
    argumentNames.push_back(input.name());
  }
  for (const auto &[name, dims] : options_.inputShapes) {
    if (!inputNames.contains(name) || initializers.contains(name)) {
      mlir::emitError(fileLoc()) << "shape binding names '" << name
                                 << "', which is not an input of the graph";
      inputsValid = false;
    }
  }
  if (!inputsValid)
    return failure();

  OwningOpRef<ModuleOp> module = ModuleOp::create(fileLoc());
  builder_.setInsertionPointToEnd(module->getBody());
  std::string functionName = graph.name().empty() ? "main" : graph.name();
  auto function = func::FuncOp::create(builder_, fileLoc(), functionName,
                                       builder_.getFunctionType(argumentTypes, {}));
  Block *body = function.addEntryBlock();
  body_ = body;
  folded_.resize(argumentTypes.size());
  for (auto [i, name] : llvm::enumerate(argumentNames)) {
    function.setArgAttr(i, ::kiln::attrs::kName, builder_.getStringAttr(name));
    values_[name] = body->getArgument(i);
  }
  builder_.setInsertionPointToEnd(body);

  for (const onnx::TensorProto &initializer : graph.initializer()) {
    const TensorView *view = model_.findInitializer(initializer.name());
    Location loc = NameLoc::get(builder_.getStringAttr(initializer.name()), fileLoc());
    if (!view)
      return mlir::emitError(loc) << "initializer '" << initializer.name() << "' has no data";
    FailureOr<Value> value = importTensor(*view, loc);
    if (failed(value))
      return failure();
    values_[initializer.name()] = *value;
  }

  for (int i = 0; i < graph.node_size(); ++i)
    if (failed(importNode(graph.node(i), i)))
      return failure();

  SmallVector<Value> results;
  for (const onnx::ValueInfoProto &output : graph.output()) {
    Value value = values_.lookup(output.name());
    if (!value)
      return mlir::emitError(fileLoc()) << "graph output '" << output.name()
                                        << "' is not produced by any node";
    results.push_back(value);
  }
  // The checks of every run follow the outputs (program.output's `check`).
  for (const Check &check : checks_)
    results.push_back(check.holds);
  func::ReturnOp::create(builder_, fileLoc(), results);
  Dialect *graphDialect = context_.getLoadedDialect<graph::GraphDialect>();
  // Shape operands (Reshape's shape, Slice's bounds, ...) were read at import time; the constants
  // and shape arithmetic that computed them are dropped once nothing reads them. Graph ops have
  // no side effects, so every unused one can go.
  for (Operation &op : llvm::make_early_inc_range(llvm::reverse(*body)))
    if ((op.getDialect() == graphDialect || llvm::isa<UnrealizedConversionCastOp>(op)) &&
        op.use_empty())
      op.erase();
  // What is left of Shape on dynamic dimensions is needed at run time (index arithmetic over
  // the batch and sequence): graph.shape_of computes it then.
  for (auto placeholder : llvm::make_early_inc_range(body->getOps<UnrealizedConversionCastOp>())) {
    OpBuilder at(placeholder);
    Location loc = placeholder.getLoc();
    Value input = placeholder.getOperand(0);
    auto type = llvm::cast<RankedTensorType>(placeholder.getResult(0).getType());
    int64_t start = placeholder->getAttrOfType<IntegerAttr>(NodeContext::kShapeStartAttr).getInt();
    int64_t rank = llvm::cast<RankedTensorType>(input.getType()).getRank();
    Value shape = graph::ShapeOfOp::create(at, loc, input);
    if (type.getDimSize(0) != rank)
      shape = graph::SliceOp::create(at, loc, type, shape, ArrayRef<int64_t>{start},
                                     ArrayRef<int64_t>{start + type.getDimSize(0)},
                                     ArrayRef<int64_t>{1});
    placeholder.getResult(0).replaceAllUsesWith(shape);
    placeholder.erase();
  }
  // Inputs that became constants leave the signature.
  if (options_.foldedInputs)
    for (int index : folded_.set_bits())
      options_.foldedInputs->push_back(argumentNames[index]);
  if (folded_.any() && failed(function.eraseArguments(folded_)))
    return mlir::emitError(fileLoc()) << "cannot remove the graph inputs imported as constants";
  function.setFunctionType(
      builder_.getFunctionType(body->getArgumentTypes(), body->getTerminator()->getOperandTypes()));
  // Outputs keep their ONNX names, as inputs do, for the artifact's signature.
  for (auto [i, output] : llvm::enumerate(graph.output()))
    function.setResultAttr(i, ::kiln::attrs::kName, builder_.getStringAttr(output.name()));
  for (auto [i, check] : llvm::enumerate(checks_)) {
    unsigned result = graph.output_size() + i;
    function.setResultAttr(result, ::kiln::attrs::kName,
                           builder_.getStringAttr("kiln.check." + std::to_string(i)));
    function.setResultAttr(result, ::kiln::attrs::kCheck, builder_.getStringAttr(check.message));
  }
  if (failed(mlir::verify(*module)))
    return failure();
  return module;
}

} // namespace

FailureOr<OwningOpRef<ModuleOp>> importOnnxModel(MLIRContext &context, const LoadedModel &model,
                                                 const ImportOptions &options) {
  return GraphImporter(context, model, options).run();
}

FailureOr<OwningOpRef<ModuleOp>>
importOnnxModel(MLIRContext &context, std::shared_ptr<const LoadedModel> model,
                const ImportOptions &options) {
  const LoadedModel &loaded = *model;
  return GraphImporter(context, loaded, options, std::move(model)).run();
}

} // namespace kiln::onnx_frontend
