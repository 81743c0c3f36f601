//===- KilnDialect.cpp - Kiln's discardable attributes, verified --------------===//
//
// The table of every `kiln.*` attribute: the kind of value it holds and where it may stand. The
// dialect refuses a `kiln.*` attribute the table does not know (a misspelling) and a value of
// another kind, naming both.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/KilnDialect.h"

#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Operation.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

using namespace mlir;

#include "dialects/kiln/KilnDialect.cpp.inc"

namespace kiln {
namespace {

/// The kind of value an attribute holds.
enum class ValueKind { String, Integer, Float, I64Array, Array, AffineMap, Type, Unit };

/// Where an attribute may stand.
enum Place : unsigned { OnOp = 1, OnArgument = 2, OnResult = 4, Anywhere = 7 };

struct AttributeSpec {
  StringLiteral name;
  ValueKind kind;
  unsigned places;
};

const AttributeSpec kAttributes[] = {
    {attrs::kName, ValueKind::String, Anywhere},
    {attrs::kDeclaredType, ValueKind::Type, OnArgument | OnResult},
    {attrs::kDimSymbols, ValueKind::Array, OnArgument | OnResult},
    {attrs::kCheck, ValueKind::String, OnResult},
    {attrs::kDimBounds, ValueKind::I64Array, OnArgument},
    {attrs::kOnnxShapeStart, ValueKind::Integer, OnOp},
    {attrs::kFusionGroup, ValueKind::Integer, OnOp},
    {attrs::kTileDims, ValueKind::I64Array, OnOp},
    {attrs::kFusionReport, ValueKind::Array, OnOp},
    {attrs::kModeledKernelBytes, ValueKind::Integer, OnOp},
    {attrs::kEpilogueReport, ValueKind::Array, OnOp},
    {attrs::kMath, ValueKind::String, OnOp},
    {attrs::kPrecisionReport, ValueKind::Array, OnOp},
    {attrs::kPrecisionCandidates, ValueKind::Integer, OnOp},
    {attrs::kPartitionReport, ValueKind::Array, OnOp},
    {attrs::kPartitionPredictedMs, ValueKind::Float, OnOp},
    {attrs::kStage, ValueKind::Integer, OnOp},
    {attrs::kDispatch, ValueKind::Unit, OnOp},
    {attrs::kDescription, ValueKind::String, OnOp},
    {attrs::kWorkgroupCount, ValueKind::Integer, OnOp},
    {attrs::kWorkgroupDims, ValueKind::I64Array, OnOp},
    {attrs::kBounds, ValueKind::I64Array, OnArgument | OnResult},
    {attrs::kNominalBounds, ValueKind::Unit, OnOp},
    {attrs::kRunSizes, ValueKind::Integer, OnOp},
    {attrs::kLibraryCall, ValueKind::String, OnOp},
    {attrs::kCudaLaunches, ValueKind::Array, OnOp},
    {attrs::kCudaScratch, ValueKind::Array, OnOp},
    {attrs::kCudaScratchDims, ValueKind::Array, OnOp},
    {attrs::kSymbols, ValueKind::Array, OnOp},
    {attrs::kDims, ValueKind::AffineMap, OnOp},
    {attrs::kArenaSlot, ValueKind::Integer, OnOp},
    {attrs::kSlotSteps, ValueKind::I64Array, OnOp},
    {attrs::kSmallestArena, ValueKind::Integer, OnOp},
};

StringRef kindName(ValueKind kind) {
  switch (kind) {
  case ValueKind::String:
    return "a string";
  case ValueKind::Integer:
    return "an integer";
  case ValueKind::Float:
    return "a float";
  case ValueKind::I64Array:
    return "an array<i64>";
  case ValueKind::Array:
    return "an array";
  case ValueKind::AffineMap:
    return "an affine map";
  case ValueKind::Type:
    return "a type";
  case ValueKind::Unit:
    return "a unit attribute";
  }
  llvm_unreachable("unknown value kind");
}

bool holds(Attribute value, ValueKind kind) {
  switch (kind) {
  case ValueKind::String:
    return isa<StringAttr>(value);
  case ValueKind::Integer:
    return isa<IntegerAttr>(value);
  case ValueKind::Float:
    return isa<FloatAttr>(value);
  case ValueKind::I64Array:
    return isa<DenseI64ArrayAttr>(value);
  case ValueKind::Array:
    return isa<ArrayAttr>(value);
  case ValueKind::AffineMap:
    return isa<AffineMapAttr>(value);
  case ValueKind::Type:
    return isa<TypeAttr>(value);
  case ValueKind::Unit:
    return isa<UnitAttr>(value);
  }
  return false;
}

StringRef placeName(Place place) {
  return place == OnOp ? "an operation" : place == OnArgument ? "an argument" : "a result";
}

LogicalResult verifyAttribute(Operation *op, NamedAttribute attribute, Place place) {
  StringRef name = attribute.getName().getValue();
  const AttributeSpec *spec =
      llvm::find_if(kAttributes, [&](const AttributeSpec &s) { return s.name == name; });
  if (spec == std::end(kAttributes))
    return op->emitError() << "unknown attribute '" << name
                           << "': Kiln declares its attributes in dialects/kiln/KilnAttributes.h";
  if (!(spec->places & place))
    return op->emitError() << "attribute '" << name << "' does not stand on " << placeName(place);
  if (!holds(attribute.getValue(), spec->kind))
    return op->emitError() << "attribute '" << name << "' must be " << kindName(spec->kind)
                           << ", not " << attribute.getValue();
  return success();
}

} // namespace

void KilnDialect::initialize() {}

LogicalResult KilnDialect::verifyOperationAttribute(Operation *op, NamedAttribute attribute) {
  return verifyAttribute(op, attribute, OnOp);
}

LogicalResult KilnDialect::verifyRegionArgAttribute(Operation *op, unsigned, unsigned,
                                                    NamedAttribute attribute) {
  return verifyAttribute(op, attribute, OnArgument);
}

LogicalResult KilnDialect::verifyRegionResultAttribute(Operation *op, unsigned, unsigned,
                                                       NamedAttribute attribute) {
  return verifyAttribute(op, attribute, OnResult);
}

} // namespace kiln
