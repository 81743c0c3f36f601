//===- LibraryCalls.cpp - Checking library calls against the contract -------===//
//
// The program verifier checks every program.library_call against the contract's table of
// library calls (contract/library_calls.h), the same table the runtime's readers check a loaded
// call against, so that a call the runtime would refuse is refused when it is made, with the
// op's location. What is MLIR's own here is only how a parameter's kind shows as an attribute.
//
//===----------------------------------------------------------------------===//

#include "dialects/program/ProgramOps.h"

#include "contract/library_calls.h"
#include "contract/strided_view.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

namespace kiln::program {
namespace {

using contract::LibraryCallSpec;
using contract::ParamKind;
using contract::ParamSpec;
using contract::ViewSpec;
using Kind = ParamKind;

StringRef str(std::string_view text) { return StringRef(text.data(), text.size()); }

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

/// Checks a strided view parameter ([offset, dims..., strides...], contract/strided_view.h)
/// against the buffer it indexes: every element it reaches lies inside, and a written view
/// reaches no element twice.
LogicalResult verifyView(LibraryCallOp op, StringRef name, Value buffer, bool written) {
  auto values = op.getParams().getAs<DenseI64ArrayAttr>(name);
  if (!values)
    return success();
  ArrayRef<int64_t> v = values.asArrayRef();
  auto type = cast<MemRefType>(buffer.getType());
  contract::StridedViewParts parts;
  contract::ViewCheck check =
      contract::checkStridedView(v.data(), v.size(), type.getNumElements(), written, &parts);
  switch (check.problem) {
  case contract::ViewProblem::None:
    return success();
  case contract::ViewProblem::Malformed:
    return op.emitOpError() << "parameter '" << name << "' has " << v.size()
                            << " values; a view is [offset, dims..., strides...] of rank 2 or more";
  case contract::ViewProblem::OutOfBounds:
    return op.emitOpError() << "parameter '" << name << "' (offset " << v[0] << ", dims ["
                            << ArrayRef<int64_t>(parts.dims) << "]) reaches outside its "
                            << type.getNumElements()
                            << "-element buffer, or has a size below 1 or a negative stride";
  case contract::ViewProblem::WrittenTwice:
    return op.emitOpError() << "parameter '" << name << "' writes some elements twice (a stride of "
                            << check.stride << " inside an extent of " << check.extent << ")";
  }
  llvm_unreachable("unknown view problem");
}

/// Whether the element type `type` is one of `types`.
bool takesElementType(contract::ElementTypes types, Type type) {
  switch (types) {
  case contract::ElementTypes::F32OrBf16:
    return type.isF32() || type.isBF16();
  case contract::ElementTypes::F32F16OrBf16:
    return type.isF32() || type.isF16() || type.isBF16();
  case contract::ElementTypes::F32Only:
    return type.isF32();
  case contract::ElementTypes::F16OrBf16Only:
    return type.isF16() || type.isBF16();
  case contract::ElementTypes::Any:
    return true;
  }
  return false;
}

} // namespace

LogicalResult verifyLibraryCall(LibraryCallOp op) {
  StringRef callee = op.getCallee();
  const LibraryCallSpec *entry = contract::findLibraryCall({callee.data(), callee.size()});
  if (!entry)
    return op.emitOpError() << "calls '" << callee << "', which is not a library entry "
                            << "point Kiln knows ("
                            << llvm::join(llvm::map_range(contract::libraryCalls(),
                                                          [](const LibraryCallSpec &e) {
                                                            return str(e.callee);
                                                          }),
                                          ", ")
                            << ")";

  // Element types.
  for (Value value : op->getOperands()) {
    Type type = cast<MemRefType>(value.getType()).getElementType();
    if (!takesElementType(entry->element_types, type))
      return op.emitOpError() << "'" << str(entry->callee) << "' takes "
                              << str(contract::elementTypesText(entry->element_types))
                              << " tensors, not " << type;
  }

  // Parameters: known names, their kinds and counts.
  DictionaryAttr params = op.getParams();
  for (NamedAttribute param : params) {
    StringRef name = param.getName().getValue();
    const ParamSpec *spec = entry->findParam({name.data(), name.size()});
    if (!spec)
      return op.emitOpError() << "'" << str(entry->callee) << "' takes no parameter '" << name
                              << "'";
    if (!hasKind(param.getValue(), spec->kind))
      return op.emitOpError() << "parameter '" << str(spec->name) << "' must be "
                              << kindName(spec->kind) << ", not " << param.getValue();
  }
  for (const ParamSpec &spec : entry->params)
    if (spec.required && !params.get(str(spec.name)))
      return op.emitOpError() << "'" << str(entry->callee) << "' needs the parameter '"
                              << str(spec.name) << "'";

  // Post-ops: known kinds, their arguments, and one addend tensor per 'add'.
  unsigned args = 0, adds = 0;
  if (auto postOps = params.getAs<ArrayAttr>(str(contract::param::kPostOps.name))) {
    for (auto [i, attr] : llvm::enumerate(postOps)) {
      StringRef kind = cast<StringAttr>(attr).getValue();
      std::optional<contract::PostOp> postOp = contract::parsePostOp({kind.data(), kind.size()});
      if (!postOp || !entry->fuses(*postOp))
        return op.emitOpError() << "post-op " << i << " is '" << kind << "'; '"
                                << str(entry->callee) << "' fuses "
                                << llvm::join(llvm::map_range(entry->post_ops,
                                                              [](contract::PostOp p) {
                                                                return str(contract::postOpName(p));
                                                              }),
                                              ", ");
      args += contract::postOpArgCount(*postOp);
      adds += *postOp == contract::PostOp::Add;
    }
  }
  size_t given = 0;
  if (auto postOpArgs = params.getAs<DenseF32ArrayAttr>(str(contract::param::kPostOpArgs.name)))
    given = postOpArgs.size();
  if (given != args)
    return op.emitOpError() << "'" << str(contract::param::kPostOpArgs.name) << "' has " << given
                            << " values; the post-ops take " << args;

  // Tensors: the leading operands, an optional bias, the addends; one result.
  size_t leading = entry->leading;
  size_t inputs = op.getInputs().size();
  if (op.getOutputs().size() != 1)
    return op.emitOpError() << "'" << str(entry->callee) << "' writes one tensor, not "
                            << op.getOutputs().size();
  if (inputs < leading + adds || inputs > leading + adds + (entry->bias ? 1 : 0))
    return op.emitOpError() << "'" << str(entry->callee) << "' takes " << str(entry->operands)
                            << (entry->bias ? ", an optional bias" : "") << " and " << adds
                            << " 'add' operand(s); it has " << inputs << " inputs";
  Value first = inputs > 0 ? op.getInputs()[0] : op.getOutputs()[0];
  int64_t rank = cast<MemRefType>(first.getType()).getRank();
  if (rank < entry->min_rank || rank > entry->max_rank)
    return op.emitOpError() << "'" << str(entry->callee) << "' takes a first tensor of rank "
                            << entry->min_rank << " to " << entry->max_rank << ", not " << rank;
  for (const ViewSpec &view : entry->views) {
    StringRef name = str(view.key.name);
    if (view.input >= static_cast<int>(inputs)) {
      if (params.get(name))
        return op.emitOpError() << "parameter '" << name << "' views input " << view.input
                                << ", which the call does not have";
      continue;
    }
    Value buffer = view.input < 0 ? op.getOutputs()[0] : op.getInputs()[view.input];
    if (failed(verifyView(op, name, buffer, view.input < 0)))
      return failure();
  }
  for (const ParamSpec &spec : entry->params) {
    auto ints = params.getAs<DenseI64ArrayAttr>(str(spec.name));
    if (spec.count == contract::ParamCount::Spatial && ints && ints.size() != rank - 2)
      return op.emitOpError() << "parameter '" << str(spec.name) << "' has " << ints.size()
                              << " values; the " << rank - 2 << " spatial dimensions need "
                              << rank - 2;
  }
  return success();
}

} // namespace kiln::program
