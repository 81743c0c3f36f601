//===- OpTable.h - The ONNX operator table and the node translation context ===//
//
// Operators are translated by functions registered under (domain, op_type, since_version). A
// model's node uses the entry with the greatest since_version not above the model's opset for
// the node's domain, which is how ONNX itself versions operators. Each translator receives a
// NodeContext: the node's inputs as graph-dialect values, its attributes with their spec
// defaults, constant inputs read at import time, and builders that infer result types and
// report failures as diagnostics that name the node.
//
//===----------------------------------------------------------------------===//

#ifndef FRONTENDS_ONNX_OPS_OPTABLE_H
#define FRONTENDS_ONNX_OPS_OPTABLE_H

#include "dialects/graph/GraphOps.h"
#include "dialects/kiln/KilnAttributes.h"

#include "mlir/IR/AffineExpr.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"

#include <onnx/onnx_pb.h>

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>

namespace kiln::onnx_frontend {

class LoadedModel;
struct TensorView;

/// Maps an ONNX TensorProto.DataType to the graph dialect's element type, or a null type when the
/// dialect has none (strings, complex numbers, unsigned types wider than 8 bits, 4-bit types).
mlir::Type convertElementType(mlir::MLIRContext &context, int32_t dataType);

/// True for ops with default-valued attributes, whose generated class can fill them in.
template <typename OpTy, typename = void>
struct HasDefaultProperties : std::false_type {};
template <typename OpTy>
struct HasDefaultProperties<
    OpTy, std::void_t<decltype(OpTy::populateDefaultProperties(
              std::declval<mlir::OperationName>(), std::declval<typename OpTy::Properties &>()))>>
    : std::true_type {};

/// Everything a translator needs about one node. Created by the importer per node.
class NodeContext {
public:
  using ValueLookup = std::function<mlir::Value(const std::string &)>;
  using ValueDefine = std::function<void(const std::string &, mlir::Value)>;
  using ConstantBuilder = std::function<mlir::FailureOr<mlir::Value>(const TensorView &)>;
  /// Returns the value that stands for `value` once its contents are needed at import time: a
  /// graph input the import is specialized for becomes a constant; anything else is returned
  /// as it is.
  using ValueSpecializer = std::function<mlir::Value(mlir::Value)>;
  /// Receives a check of every run (see addCheck) with its message.
  using CheckSink = std::function<void(mlir::Value, std::string)>;

  NodeContext(const onnx::NodeProto &node, int64_t opset, std::string label, mlir::Location loc,
              mlir::OpBuilder &builder, const LoadedModel &model, ValueLookup lookup,
              ValueDefine define, ConstantBuilder constant, ValueSpecializer specialize = {},
              CheckSink check = {})
      : node_(node), opset_(opset), label_(std::move(label)), loc_(loc), builder_(builder),
        model_(model), lookup_(std::move(lookup)), define_(std::move(define)),
        constant_(std::move(constant)), specialize_(std::move(specialize)),
        check_(std::move(check)) {}

  const onnx::NodeProto &node() const { return node_; }
  /// The opset of the node's domain that the model imports.
  int64_t opset() const { return opset_; }
  mlir::Location loc() const { return loc_; }
  mlir::OpBuilder &builder() { return builder_; }
  mlir::MLIRContext *context() { return builder_.getContext(); }
  const LoadedModel &model() const { return model_; }

  //===--------------------------------------------------------------------===//
  // Inputs and outputs
  //===--------------------------------------------------------------------===//

  /// The number of inputs listed, including omitted optional ones (empty names).
  int numInputs() const { return node_.input_size(); }
  /// True when input `index` is listed and not omitted.
  bool hasInput(int index) const {
    return index < node_.input_size() && !node_.input(index).empty();
  }
  /// The value of input `index`, or a null value when it is omitted.
  mlir::Value input(int index) const {
    return hasInput(index) ? lookup_(node_.input(index)) : mlir::Value();
  }
  /// The type of input `index` (which must be present).
  mlir::RankedTensorType inputType(int index) const {
    return llvm::cast<mlir::RankedTensorType>(input(index).getType());
  }
  /// The ONNX element type (TensorProto.DataType) the main graph declares for input `index`: as
  /// a graph input, an initializer, a value_info or a graph output; 0 when it declares none.
  /// What tells a 4-bit integer from the 8-bit one Kiln holds it in (subByteInteger).
  int32_t declaredElementType(int index) const;
  /// Reports an error unless at least `count` inputs are present; returns whether they are.
  mlir::LogicalResult requireInputs(int count);

  int numOutputs() const { return node_.output_size(); }
  /// True when output `index` is listed and named (a consumer may read it).
  bool outputUsed(int index) const {
    return index < node_.output_size() && !node_.output(index).empty();
  }
  /// Binds output `index` to `value`.
  void setOutput(int index, mlir::Value value) {
    if (outputUsed(index))
      define_(node_.output(index), value);
  }
  /// Binds output 0 to `result` when building it succeeded; the failure was already reported.
  mlir::LogicalResult setResult(mlir::FailureOr<mlir::Value> result) {
    if (mlir::failed(result))
      return mlir::failure();
    setOutput(0, *result);
    return mlir::success();
  }
  /// Reports an error when any output from `count` on is used: the translator only produces the
  /// first `count` outputs.
  mlir::LogicalResult requireUnusedOutputsFrom(int count);
  /// The type the model declares for output `index` (a graph output or a value_info, after ONNX
  /// shape inference) when every dimension is known; null otherwise. What types a result whose
  /// shape an operand known only at run time decides (see addCheck).
  mlir::RankedTensorType declaredOutputType(int index) const;
  /// The shape of output `index` as the model declares it, directly (declaredOutputType) or for
  /// a value computed from it by elementwise operators (Cast, Cos, Mul, Add, ...) whose other
  /// operands are single elements of rank at most 1 or computed from it the same way, which
  /// therefore has its shape: e.g. the declared window that a Range's ramp becomes. Nothing when
  /// no such declaration is found.
  std::optional<llvm::SmallVector<int64_t>> shapeDeclaredDownstream(int index) const;

  //===--------------------------------------------------------------------===//
  // Checks of every run
  //===--------------------------------------------------------------------===//

  /// Makes `holds` (an i1 tensor) a check of every run: the importer adds it to the function's
  /// results as a check (`kiln.check`), and a run whose `holds` has a false element fails with a
  /// message naming the node and `what`. Used where an operand known only at run time decides
  /// a shape the model declares: the run verifies that they agree.
  mlir::LogicalResult addCheck(mlir::Value holds, llvm::StringRef what);

  //===--------------------------------------------------------------------===//
  // Attributes, with the spec's defaults
  //===--------------------------------------------------------------------===//

  const onnx::AttributeProto *attribute(llvm::StringRef name) const;
  int64_t intAttr(llvm::StringRef name, int64_t defaultValue) const;
  float floatAttr(llvm::StringRef name, float defaultValue) const;
  std::string stringAttr(llvm::StringRef name, llvm::StringRef defaultValue) const;
  /// The INTS attribute `name`, or nullopt when the node does not carry it.
  std::optional<llvm::SmallVector<int64_t>> intsAttr(llvm::StringRef name) const;
  std::optional<llvm::SmallVector<float>> floatsAttr(llvm::StringRef name) const;

  //===--------------------------------------------------------------------===//
  // Constants known at import time
  //===--------------------------------------------------------------------===//

  /// The integer elements of input `index` when it is a constant (an initializer, a Constant
  /// node or a folded value); reports an error naming `what` and returns failure otherwise.
  mlir::FailureOr<llvm::SmallVector<int64_t>> constantInts(int index, llvm::StringRef what);

  /// True when input `index` is present and its integer elements are known at import time
  /// (constants, shape arithmetic on them, dynamic dimensions); false for values of the run.
  bool knownAtImport(int index) const;

  /// The integer elements of `value` when constants and shape arithmetic on them compute it (as
  /// constantInts evaluates inputs), or nullopt; reports nothing.
  std::optional<llvm::SmallVector<int64_t>> knownInts(mlir::Value value) const;

  /// One element of a shape operand known at import time: a number, or dynamic dimension `dim`
  /// of `source` (what Shape of a value with dynamic dimensions yields), or arithmetic on one
  /// with numbers (`expr` over the symbol s0 for that dimension: Swin's `batch * windows /
  /// windows`).
  struct ShapeEntry {
    int64_t value = 0;
    mlir::Value source;
    int64_t dim = -1;
    /// Null for the dimension itself.
    mlir::AffineExpr expr;
    /// A size known only at run time: a dynamic dimension or arithmetic on one.
    bool isDynamicDim() const { return static_cast<bool>(source); }
    /// Dynamic dimension `dim` of `source` itself, no arithmetic on it.
    bool isPlainDim() const { return source && !expr; }
    /// Whether the entry is never negative (a dimension, and arithmetic on one that keeps it
    /// so: the ONNX operators read a negative entry as counted from the end, or inferred).
    bool neverNegative() const;
  };
  /// Like constantInts, but also accepts elements that are dynamic dimensions of other values.
  mlir::FailureOr<llvm::SmallVector<ShapeEntry>> shapeEntries(int index, llvm::StringRef what);
  /// The size of the run of `entry`: graph.dim of its source for a dynamic dimension (read at
  /// the graph input it comes from, where dimRoot finds one), else a constant index.
  mlir::Value sizeOf(const ShapeEntry &entry);
  /// The graph input dimension that dynamic dimension `dim` of `value` provably equals, followed
  /// through the ops that keep a dimension (broadcasting elementwise ops, normalizations,
  /// transposes, products' batch and row dimensions, gathers, full slices, concatenations off
  /// their axis, and sizes of the run); nullopt where an op is not known to keep it, or with
  /// `farthest` the value the walk stopped at (two dimensions that reach the same one are
  /// equal: the windows' count of Swin's attention, read before and after its projection).
  static std::optional<std::pair<mlir::Value, int64_t>> dimRoot(mlir::Value value, int64_t dim,
                                                                bool farthest = false);
  /// A placeholder for Shape of `input`'s dimensions [start, end), some of them dynamic: shape
  /// arithmetic on it is evaluated at import time, and the importer reports it if it is still
  /// used once the graph is translated.
  mlir::Value dynamicShapeOf(mlir::Value input, int64_t start, int64_t end);
  /// The attribute that marks dynamicShapeOf's placeholders with their first dimension.
  static constexpr llvm::StringLiteral kShapeStartAttr = ::kiln::attrs::kOnnxShapeStart;
  /// The elements of `value` when it is a graph.constant with inline data.
  static std::optional<mlir::DenseElementsAttr> constantElements(mlir::Value value);
  /// The elements of input `index` when it is a graph.constant with inline data or a graph input
  /// whose value the import is specialized for (which then becomes that constant); nullopt when
  /// the input is omitted or only known at run time.
  std::optional<mlir::DenseElementsAttr> constantInput(int index);
  /// `value`, or the constant that replaces it when it is a graph input whose value the import is
  /// specialized for (ImportOptions::inputValues).
  mlir::Value specialized(mlir::Value value) const {
    return specialize_ && value ? specialize_(value) : value;
  }

  /// A graph.constant holding `view`'s data (Constant nodes' tensors).
  mlir::FailureOr<mlir::Value> tensorConstant(const TensorView &view) { return constant_(view); }
  /// A graph.constant of `attr`.
  mlir::Value constant(mlir::DenseElementsAttr attr);
  /// A rank-0 constant of `elementType` holding `value`.
  mlir::Value scalar(mlir::Type elementType, double value);
  /// A rank-1 i64 constant.
  mlir::Value i64Vector(llvm::ArrayRef<int64_t> values);

  //===--------------------------------------------------------------------===//
  // Diagnostics and op creation
  //===--------------------------------------------------------------------===//

  /// Starts an error at the node, prefixed with the node's name, op type and opset.
  mlir::InFlightDiagnostic emitError();

  /// Creates an `OpTy` after inferring its result types and checking its operand constraints.
  /// Anything the op rejects is reported as one error that names the node; nothing is created.
  template <typename OpTy>
  mlir::FailureOr<OpTy> create(mlir::ValueRange operands,
                               llvm::ArrayRef<mlir::NamedAttribute> attributes = {}) {
    mlir::MLIRContext *ctx = context();
    mlir::DictionaryAttr dictionary = mlir::DictionaryAttr::get(ctx, attributes);
    typename OpTy::Properties properties{};
    std::string problem;
    mlir::LogicalResult built = mlir::failure();
    mlir::Operation *op = nullptr;
    {
      mlir::ScopedDiagnosticHandler capture(ctx, [&](mlir::Diagnostic &diagnostic) {
        if (problem.empty())
          problem = diagnostic.str();
        return mlir::success();
      });
      if constexpr (!std::is_same_v<typename OpTy::Properties, mlir::EmptyProperties>) {
        // Attributes the translator leaves out take the op's defaults, as the generated
        // builders would give them; printing and patterns read them.
        if constexpr (HasDefaultProperties<OpTy>::value)
          OpTy::populateDefaultProperties(mlir::OperationName(OpTy::getOperationName(), ctx),
                                          properties);
        if (mlir::failed(OpTy::setPropertiesFromAttr(
                properties, dictionary, [&] { return mlir::emitError(loc_); })))
          problem = problem.empty() ? "invalid attributes" : problem;
      }
      llvm::SmallVector<mlir::Type> types;
      if (problem.empty() &&
          mlir::succeeded(OpTy::inferReturnTypes(ctx, loc_, operands, dictionary,
                                                 mlir::OpaqueProperties(&properties), {},
                                                 types))) {
        mlir::OperationState state(loc_, OpTy::getOperationName());
        state.addOperands(operands);
        state.addTypes(types);
        state.useProperties(properties);
        op = builder_.create(state);
        built = mlir::verify(op, /*verifyRecursively=*/false);
      }
    }
    if (mlir::failed(built)) {
      if (op)
        op->erase();
      emitError() << (problem.empty() ? std::string("cannot build ") +
                                            OpTy::getOperationName().str()
                                      : problem);
      return mlir::failure();
    }
    return llvm::cast<OpTy>(op);
  }

  /// Like create, for ops with one result; returns the result.
  template <typename OpTy>
  mlir::FailureOr<mlir::Value> build(mlir::ValueRange operands,
                                     llvm::ArrayRef<mlir::NamedAttribute> attributes = {}) {
    mlir::FailureOr<OpTy> op = create<OpTy>(operands, attributes);
    if (mlir::failed(op))
      return mlir::failure();
    return op->getOperation()->getResult(0);
  }

  mlir::NamedAttribute named(llvm::StringRef name, mlir::Attribute value) {
    return builder_.getNamedAttr(name, value);
  }
  mlir::NamedAttribute namedI64(llvm::StringRef name, int64_t value) {
    return named(name, builder_.getI64IntegerAttr(value));
  }
  mlir::NamedAttribute namedArray(llvm::StringRef name, llvm::ArrayRef<int64_t> values) {
    return named(name, builder_.getDenseI64ArrayAttr(values));
  }

private:
  const onnx::NodeProto &node_;
  int64_t opset_;
  std::string label_;
  mlir::Location loc_;
  mlir::OpBuilder &builder_;
  const LoadedModel &model_;
  ValueLookup lookup_;
  ValueDefine define_;
  ConstantBuilder constant_;
  ValueSpecializer specialize_;
  CheckSink check_;
};

/// Translates one node; reports its own errors through the NodeContext.
using TranslateFn = mlir::LogicalResult (*)(NodeContext &);

/// The operator table: (domain, op_type, since_version) -> translator.
class OpTable {
public:
  /// Registers `fn` for `opType` of `domain` ("" is ai.onnx) from `sinceVersion` on.
  void add(llvm::StringRef domain, llvm::StringRef opType, int64_t sinceVersion, TranslateFn fn);
  /// Registers `fn` once for each of `versions`.
  void add(llvm::StringRef domain, llvm::StringRef opType,
           std::initializer_list<int64_t> versions, TranslateFn fn);
  /// The translator for `opType` at `opset`: the entry with the greatest since_version not above
  /// it, or nullptr. Also nullptr when ONNX revised the operator after that entry and at or
  /// before `opset` (onnxRevision), so that a node is never translated by an older revision's
  /// rules.
  TranslateFn lookup(llvm::StringRef domain, llvm::StringRef opType, int64_t opset) const;
  /// Registers, for each of `revisions`, the translator of the revision before it: for ONNX
  /// revisions that only add element types (whose support the translators check themselves).
  void addTypeOnlyRevisions(llvm::StringRef domain, llvm::StringRef opType,
                            std::initializer_list<int64_t> revisions);
  /// Every registered (domain, op_type) with its since_versions, ascending.
  const std::map<std::pair<std::string, std::string>, std::map<int64_t, TranslateFn>> &
  entries() const {
    return entries_;
  }

private:
  std::map<std::pair<std::string, std::string>, std::map<int64_t, TranslateFn>> entries_;
};

/// The table with every operator the importer supports.
const OpTable &defaultOpTable();

/// The revision of an ONNX operator in effect at `opset` of its domain (the greatest of its
/// since_versions not above `opset`, from OnnxOperatorVersions.inc), or nullopt for an operator
/// ONNX does not define.
std::optional<int64_t> onnxRevision(llvm::StringRef domain, llvm::StringRef opType, int64_t opset);

/// The newest IR version and default-domain opset of the ONNX release OnnxOperatorVersions.inc
/// was generated from: the newest the importer can check operators against.
int64_t newestKnownIrVersion();
int64_t newestKnownDefaultOpset();

void registerElementwiseOps(OpTable &table);
void registerShapeOps(OpTable &table);
void registerNNOps(OpTable &table);
void registerMathOps(OpTable &table);
void registerConvTransposeOps(OpTable &table);
void registerResamplingOps(OpTable &table);
void registerPoolingOps(OpTable &table);
void registerNormalizationOps(OpTable &table);
void registerIndexingOps(OpTable &table);
void registerLossOps(OpTable &table);
void registerQuantizationOps(OpTable &table);
void registerSignalOps(OpTable &table);
void registerTrainingOps(OpTable &table);
void registerFeatureExtractionOps(OpTable &table);
void registerRecurrentOps(OpTable &table);
void registerTransformerOps(OpTable &table);

//===----------------------------------------------------------------------===//
// Helpers shared by the translators
//===----------------------------------------------------------------------===//

/// Normalizes `axis` against `rank` (negative counts from the end); reports an error through
/// `ctx` and returns failure when it is out of range.
mlir::FailureOr<int64_t> normalizeAxis(NodeContext &ctx, int64_t axis, int64_t rank,
                                       llvm::StringRef what = "axis");
/// Normalizes, sorts and de-duplicates `axes` against `rank`.
mlir::FailureOr<llvm::SmallVector<int64_t>> normalizeAxes(NodeContext &ctx,
                                                          llvm::ArrayRef<int64_t> axes,
                                                          int64_t rank,
                                                          llvm::StringRef what = "axes");

/// Gather and GatherElements: `OpTy` of the data and indices inputs along the normalized `axis`
/// attribute (default 0).
template <typename OpTy>
mlir::LogicalResult translateGatherAlongAxis(NodeContext &ctx) {
  if (mlir::failed(ctx.requireInputs(2)))
    return mlir::failure();
  mlir::FailureOr<int64_t> axis =
      normalizeAxis(ctx, ctx.intAttr("axis", 0), ctx.inputType(0).getRank());
  if (mlir::failed(axis))
    return mlir::failure();
  return ctx.setResult(
      ctx.build<OpTy>({ctx.input(0), ctx.input(1)}, {ctx.namedI64("axis", *axis)}));
}

} // namespace kiln::onnx_frontend

#endif // FRONTENDS_ONNX_OPS_OPTABLE_H
