//===- LibraryCalls.cpp - What each library entry point takes ----------------===//
//
// One table of the library calls the runtime implements (runtime/src/cpu/onednn and
// runtime/src/cuda): their tensors, element types and parameters. The program verifier checks
// every program.library_call against it, so a call the runtime would refuse is refused when it
// is made, with the op's location.
//
//===----------------------------------------------------------------------===//

#include "dialects/program/ProgramOps.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace kiln::program {
namespace {

enum class Kind { Ints, Int, Bool, Floats, Strings };

/// How many values an integer parameter has: any number, or one per spatial dimension of the
/// first tensor (its rank minus batch and channels).
enum class Count { Any, Spatial };

struct Param {
  StringLiteral name;
  Kind kind;
  Count count = Count::Any;
  bool required = false;
};

struct PostOp {
  StringLiteral name;
  /// The values of post_op_args it takes.
  unsigned args;
};

/// A strided view parameter and the input it indexes (-1: the output).
struct ViewParam {
  StringLiteral name;
  int input;
};

struct Entry {
  StringLiteral callee;
  /// The leading tensors, always present ("src, weights"), and how many they are.
  StringLiteral operands;
  size_t leading;
  /// Whether a bias (for attention: an additive mask) may follow them.
  bool bias;
  /// The first tensor's ranks.
  int64_t minRank, maxRank;
  /// A CUDA library (cuDNN, cuBLASLt): it also takes f16 tensors and the `allow_tf32` switch.
  /// oneDNN takes neither (f32 and bf16 tensors; bf16 where the CPU computes it).
  bool cuda;
  /// The operation's parameters (shared by the libraries that implement it), then the
  /// library's own switches.
  ArrayRef<Param> params, libraryParams;
  ArrayRef<PostOp> postOps;
  ArrayRef<ViewParam> views;
  /// Whether it takes f32 tensors only.
  bool f32Only = false;
  /// Whether it moves tensors of any element type (the collectives that copy bytes).
  bool anyType = false;
  /// Whether it takes f16 and bf16 tensors only (cuDNN's fused attention).
  bool halfOnly = false;
};

constexpr Param kConvolutionParams[] = {
    {"strides", Kind::Ints, Count::Spatial, true},   {"dilations", Kind::Ints, Count::Spatial, true},
    {"pads_begin", Kind::Ints, Count::Spatial, true}, {"pads_end", Kind::Ints, Count::Spatial, true},
    {"groups", Kind::Int, Count::Any, true},          {"post_ops", Kind::Strings},
    {"post_op_args", Kind::Floats}};
constexpr Param kMatmulParams[] = {{"trans_a", Kind::Bool},       {"trans_b", Kind::Bool},
                                   {"a_view", Kind::Ints},        {"b_view", Kind::Ints},
                                   {"dst_view", Kind::Ints},      {"post_ops", Kind::Strings},
                                   {"post_op_args", Kind::Floats}};
/// The CUDA libraries' switch for TF32 tensor cores, and cuDNN's channels-last tensors (x, the
/// addend and y as N spatial... C, w as K spatial... C/groups).
/// Attention's views are all given or none (a call over dynamic shapes, set up per shape, reads
/// its bindings as they lie: runtime/src/cpu/attention.h).
constexpr Param kAttentionParams[] = {
    {"q_view", Kind::Ints},           {"k_view", Kind::Ints},
    {"v_view", Kind::Ints},           {"mask_view", Kind::Ints},
    {"dst_view", Kind::Ints},         {"scale", Kind::Floats, Count::Any, true},
    {"zero_masked_rows", Kind::Ints}, {"kv_group", Kind::Int}};
constexpr Param kPoolingParams[] = {{"kind", Kind::Strings, Count::Any, true},
                                    {"kernel", Kind::Ints, Count::Spatial, true},
                                    {"strides", Kind::Ints, Count::Spatial, true},
                                    {"dilations", Kind::Ints, Count::Spatial, true},
                                    {"pads_begin", Kind::Ints, Count::Spatial, true},
                                    {"pads_end", Kind::Ints, Count::Spatial, true}};
constexpr ViewParam kMatmulViews[] = {{"a_view", 0}, {"b_view", 1}, {"dst_view", -1}};
constexpr ViewParam kAttentionViews[] = {
    {"q_view", 0}, {"k_view", 1}, {"v_view", 2}, {"mask_view", 3}, {"dst_view", -1}};
/// The all-reduce of tensor parallelism (compiler/partition): the devices that sum.
constexpr Param kCollectiveParams[] = {{"devices", Kind::Int, Count::Any, true}};
/// The broadcasts of pipeline parallelism: the devices, and the one that sends.
constexpr Param kBroadcastParams[] = {{"devices", Kind::Int, Count::Any, true},
                                      {"root", Kind::Int, Count::Any, true}};
/// Point-to-point transfers of a pipeline with micro-batches: the devices, the other end, and the
/// slot both ends name.
constexpr Param kPointToPointParams[] = {{"devices", Kind::Int, Count::Any, true},
                                         {"peer", Kind::Int, Count::Any, true},
                                         {"tag", Kind::Int, Count::Any, true}};
constexpr Param kCublasLtParams[] = {{"allow_tf32", Kind::Bool}};
constexpr Param kCudnnParams[] = {{"allow_tf32", Kind::Bool}, {"channels_last", Kind::Bool}};
/// oneDNN's channels-last tensors (kiln-cpu-channels-last), as cuDNN's.
constexpr Param kOneDnnLayoutParams[] = {{"channels_last", Kind::Bool}};

constexpr PostOp kOneDnnPostOps[] = {{"relu", 0},     {"clip", 2},      {"linear", 2}, {"add", 0},
                                     {"gelu_erf", 0}, {"gelu_tanh", 0}, {"swish", 0}};
constexpr PostOp kCudnnPostOps[] = {{"add", 0}, {"relu", 0}};
constexpr PostOp kCublasLtPostOps[] = {{"linear", 2}, {"add", 0}, {"relu", 0}, {"gelu", 0}};

const Entry kEntries[] = {
    {"onednn.convolution", "src, weights", 2, true, 3, 5, false, kConvolutionParams,
     kOneDnnLayoutParams, kOneDnnPostOps},
    {"onednn.matmul",
     "a, b",
     2,
     true,
     2,
     8,
     false,
     kMatmulParams,
     {},
     kOneDnnPostOps,
     kMatmulViews},
    {"cudnn.convolution", "x, w", 2, true, 3, 5, true, kConvolutionParams, kCudnnParams,
     kCudnnPostOps},
    {"cublaslt.matmul", "a, b", 2, true, 2, 8, true, kMatmulParams, kCublasLtParams,
     kCublasLtPostOps, kMatmulViews},
    {"onednn.pooling", "src", 1, false, 3, 5, false, kPoolingParams, kOneDnnLayoutParams, {}, {}},
    // Kiln's own fused attention on the CPU (runtime/src/cpu/attention.h): the optional fourth
    // tensor is the additive mask.
    {"kiln.attention",
     "q, k, v",
     3,
     true,
     2,
     8,
     false,
     kAttentionParams,
     {},
     {},
     kAttentionViews,
     /*f32Only=*/true},
    // The sum over every device of a tensor parallel program, written to the result (Gloo between
    // CPU devices, NCCL between GPUs).
    {"gloo.all_reduce",
     "input",
     1,
     false,
     0,
     8,
     false,
     kCollectiveParams,
     {},
     {},
     {},
     /*f32Only=*/true},
    // The same on CUDA in half precision, through cuDNN's fused attention
    // (runtime/src/cuda/cudnn_attention.cpp).
    {"cudnn.attention",
     "q, k, v",
     3,
     true,
     2,
     8,
     true,
     kAttentionParams,
     {},
     {},
     kAttentionViews,
     /*f32Only=*/false,
     /*anyType=*/false,
     /*halfOnly=*/true},
    {"nccl.all_reduce", "input", 1, false, 0, 8, true, kCollectiveParams, {}, {}, {}},
    // Batch parallelism's outputs between GPUs (the result holds `devices` times the input).
    {"nccl.all_gather", "input", 1, false, 0, 8, true, kCollectiveParams, {}, {}, {}},
    // A value one device of a pipeline computes and the others need: the root sends its input
    // (and writes it to its result too); every other device receives it into its result.
    {"gloo.broadcast",
     "input",
     1,
     false,
     0,
     8,
     false,
     kBroadcastParams,
     {},
     {},
     {},
     /*f32Only=*/false,
     /*anyType=*/true},
    // Batch parallelism's outputs: every device's part of a value, device after device, on every
    // device (the result holds `devices` times the input).
    {"gloo.all_gather",
     "input",
     1,
     false,
     0,
     8,
     false,
     kCollectiveParams,
     {},
     {},
     {},
     /*f32Only=*/false,
     /*anyType=*/true},
    // A value one stage of a pipeline with micro-batches sends to another stage (its result is a
    // placeholder nothing reads), and the receiving end.
    {"gloo.send",
     "input",
     1,
     false,
     0,
     8,
     false,
     kPointToPointParams,
     {},
     {},
     {},
     /*f32Only=*/false,
     /*anyType=*/true},
    {"gloo.recv",
     "",
     0,
     false,
     0,
     8,
     false,
     kPointToPointParams,
     {},
     {},
     {},
     /*f32Only=*/false,
     /*anyType=*/true},
    {"gloo.receive",
     "",
     0,
     false,
     0,
     8,
     false,
     kBroadcastParams,
     {},
     {},
     {},
     /*f32Only=*/false,
     /*anyType=*/true},
};

StringRef kindName(Kind kind) {
  switch (kind) {
  case Kind::Ints:
    return "an array<i64>";
  case Kind::Int:
    return "an i64 integer";
  case Kind::Bool:
    return "a boolean";
  case Kind::Floats:
    return "an array<f32>";
  case Kind::Strings:
    return "an array of strings";
  }
  llvm_unreachable("unknown parameter kind");
}

bool hasKind(Attribute value, Kind kind) {
  switch (kind) {
  case Kind::Ints:
    return isa<DenseI64ArrayAttr>(value);
  case Kind::Int:
    return isa<IntegerAttr>(value) && !isa<BoolAttr>(value);
  case Kind::Bool:
    return isa<BoolAttr>(value);
  case Kind::Floats:
    return isa<DenseF32ArrayAttr>(value);
  case Kind::Strings: {
    auto array = dyn_cast<ArrayAttr>(value);
    return array && llvm::all_of(array, [](Attribute e) { return isa<StringAttr>(e); });
  }
  }
  return false;
}

/// Checks a strided view parameter ([offset, dims..., strides...], runtime/src/library_call_view.h)
/// against the buffer it indexes: every element it reaches lies inside, and a written view
/// reaches no element twice.
LogicalResult verifyView(LibraryCallOp op, StringRef name, Value buffer, bool written) {
  auto values = op.getParams().getAs<DenseI64ArrayAttr>(name);
  if (!values)
    return success();
  ArrayRef<int64_t> v = values.asArrayRef();
  if (v.size() < 5 || v.size() % 2 == 0)
    return op.emitOpError() << "parameter '" << name << "' has " << v.size()
                            << " values; a view is [offset, dims..., strides...] of rank 2 or more";
  size_t rank = (v.size() - 1) / 2;
  ArrayRef<int64_t> dims = v.slice(1, rank), strides = v.slice(1 + rank, rank);
  auto type = cast<MemRefType>(buffer.getType());
  int64_t last = v[0];
  bool valid = v[0] >= 0;
  for (auto [size, stride] : llvm::zip_equal(dims, strides)) {
    valid &= size >= 1 && stride >= 0;
    last += (size - 1) * stride;
  }
  if (!valid || last >= type.getNumElements())
    return op.emitOpError() << "parameter '" << name << "' (offset " << v[0] << ", dims [" << dims
                            << "]) reaches outside its " << type.getNumElements()
                            << "-element buffer, or has a size below 1 or a negative stride";
  if (written) {
    SmallVector<std::pair<int64_t, int64_t>> order;
    for (auto [size, stride] : llvm::zip_equal(dims, strides))
      if (size > 1)
        order.push_back({stride, size});
    llvm::sort(order);
    int64_t extent = 1;
    for (auto [stride, size] : order) {
      if (stride < extent)
        return op.emitOpError() << "parameter '" << name
                                << "' writes some elements twice (a stride of " << stride
                                << " inside an extent of " << extent << ")";
      extent = stride * size;
    }
  }
  return success();
}

} // namespace

LogicalResult verifyLibraryCall(LibraryCallOp op) {
  const Entry *entry = llvm::find_if(kEntries, [&](const Entry &e) {
    return e.callee == op.getCallee();
  });
  if (entry == std::end(kEntries))
    return op.emitOpError() << "calls '" << op.getCallee() << "', which is not a library entry "
                            << "point Kiln knows ("
                            << llvm::join(llvm::map_range(kEntries, [](const Entry &e) {
                                            return StringRef(e.callee);
                                          }),
                                          ", ")
                            << ")";

  // Element types: f32 and bf16, and on CUDA f16 too.
  for (Value value : op->getOperands()) {
    Type type = cast<MemRefType>(value.getType()).getElementType();
    if (entry->anyType)
      break;
    if (entry->halfOnly && !type.isF16() && !type.isBF16())
      return op.emitOpError() << "'" << entry->callee << "' takes f16 or bf16 tensors, not "
                              << type;
    if (!type.isF32() && (entry->f32Only || (!type.isBF16() && !(entry->cuda && type.isF16()))))
      return op.emitOpError() << "'" << entry->callee << "' takes "
                              << (entry->f32Only ? "f32"
                                  : entry->cuda  ? "f32, f16 or bf16"
                                                 : "f32 or bf16")
                              << " tensors, not " << type;
  }

  // Parameters: known names, their kinds and counts.
  DictionaryAttr params = op.getParams();
  for (NamedAttribute param : params) {
    auto named = [&](const Param &p) { return p.name == param.getName().getValue(); };
    const Param *spec = llvm::find_if(entry->params, named);
    bool known = spec != entry->params.end();
    if (!known) {
      spec = llvm::find_if(entry->libraryParams, named);
      known = spec != entry->libraryParams.end();
    }
    if (!known)
      return op.emitOpError() << "'" << entry->callee << "' takes no parameter '"
                              << param.getName().getValue() << "'";
    if (!hasKind(param.getValue(), spec->kind))
      return op.emitOpError() << "parameter '" << spec->name << "' must be "
                              << kindName(spec->kind) << ", not " << param.getValue();
  }
  for (const Param &spec : entry->params)
    if (spec.required && !params.get(spec.name))
      return op.emitOpError() << "'" << entry->callee << "' needs the parameter '" << spec.name
                              << "'";

  // Post-ops: known kinds, their arguments, and one addend tensor per 'add'.
  unsigned args = 0, adds = 0;
  if (auto postOps = params.getAs<ArrayAttr>("post_ops")) {
    for (auto [i, attr] : llvm::enumerate(postOps)) {
      StringRef kind = cast<StringAttr>(attr).getValue();
      const PostOp *postOp = llvm::find_if(entry->postOps, [&](const PostOp &p) {
        return p.name == kind;
      });
      if (postOp == entry->postOps.end())
        return op.emitOpError() << "post-op " << i << " is '" << kind << "'; '" << entry->callee
                                << "' fuses "
                                << llvm::join(llvm::map_range(entry->postOps,
                                                              [](const PostOp &p) {
                                                                return StringRef(p.name);
                                                              }),
                                              ", ");
      args += postOp->args;
      adds += kind == "add";
    }
  }
  size_t given = 0;
  if (auto postOpArgs = params.getAs<DenseF32ArrayAttr>("post_op_args"))
    given = postOpArgs.size();
  if (given != args)
    return op.emitOpError() << "'post_op_args' has " << given << " values; the post-ops take "
                            << args;

  // Tensors: the leading operands, an optional bias, the addends; one result.
  size_t leading = entry->leading;
  size_t inputs = op.getInputs().size();
  if (op.getOutputs().size() != 1)
    return op.emitOpError() << "'" << entry->callee << "' writes one tensor, not "
                            << op.getOutputs().size();
  if (inputs < leading + adds || inputs > leading + adds + (entry->bias ? 1 : 0))
    return op.emitOpError() << "'" << entry->callee << "' takes " << entry->operands
                            << (entry->bias ? ", an optional bias" : "") << " and " << adds
                            << " 'add' operand(s); it has " << inputs << " inputs";
  Value first = inputs > 0 ? op.getInputs()[0] : op.getOutputs()[0];
  int64_t rank = cast<MemRefType>(first.getType()).getRank();
  if (rank < entry->minRank || rank > entry->maxRank)
    return op.emitOpError() << "'" << entry->callee << "' takes a first tensor of rank "
                            << entry->minRank << " to " << entry->maxRank << ", not " << rank;
  for (const ViewParam &view : entry->views) {
    if (view.input >= static_cast<int>(inputs)) {
      if (params.get(view.name))
        return op.emitOpError() << "parameter '" << view.name << "' views input " << view.input
                                << ", which the call does not have";
      continue;
    }
    Value buffer = view.input < 0 ? op.getOutputs()[0] : op.getInputs()[view.input];
    if (failed(verifyView(op, view.name, buffer, view.input < 0)))
      return failure();
  }
  for (const Param &spec : entry->params) {
    auto ints = params.getAs<DenseI64ArrayAttr>(spec.name);
    if (spec.count == Count::Spatial && ints && ints.size() != rank - 2)
      return op.emitOpError() << "parameter '" << spec.name << "' has " << ints.size()
                              << " values; the " << rank - 2 << " spatial dimensions need "
                              << rank - 2;
  }
  return success();
}

} // namespace kiln::program
