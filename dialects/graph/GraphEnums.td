//===- GraphEnums.td - Enumerations of the graph dialect --------------------===//

#ifndef KILN_DIALECTS_GRAPH_GRAPHENUMS_TD
#define KILN_DIALECTS_GRAPH_GRAPHENUMS_TD

include "mlir/IR/EnumAttr.td"

def Graph_ComparisonDirection : I32EnumAttr<"ComparisonDirection",
    "elementwise comparison direction", [
      I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>, I32EnumAttrCase<"lt", 2>,
      I32EnumAttrCase<"le", 3>, I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>
    ]> {
  let cppNamespace = "::kiln::graph";
}

def Graph_PadMode : I32EnumAttr<"PadMode", "how padding values are chosen", [
      I32EnumAttrCase<"constant", 0>, I32EnumAttrCase<"reflect", 1>, I32EnumAttrCase<"edge", 2>
    ]> {
  let cppNamespace = "::kiln::graph";
}

//===----------------------------------------------------------------------===//
// Enumerations held by dialect attributes (printed as #graph<name value>)
//===----------------------------------------------------------------------===//

def Graph_ScatterReduction : I32Enum<"ScatterReduction",
    "how scattered updates combine with the existing element", [
      I32EnumCase<"none", 0>, I32EnumCase<"add", 1>, I32EnumCase<"mul", 2>,
      I32EnumCase<"max", 3>, I32EnumCase<"min", 4>
    ]> {
  let cppNamespace = "::kiln::graph";
}

def Graph_ResizeMode : I32Enum<"ResizeMode", "interpolation of a resize", [
      I32EnumCase<"nearest", 0>, I32EnumCase<"linear", 1>, I32EnumCase<"cubic", 2>
    ]> {
  let cppNamespace = "::kiln::graph";
}

def Graph_CoordinateTransform : I32Enum<"CoordinateTransform",
    "how a resized coordinate maps back to the input", [
      I32EnumCase<"half_pixel", 0>, I32EnumCase<"pytorch_half_pixel", 1>,
      I32EnumCase<"align_corners", 2>, I32EnumCase<"asymmetric", 3>,
      I32EnumCase<"half_pixel_symmetric", 4>, I32EnumCase<"tf_crop_and_resize", 5>,
      I32EnumCase<"tf_half_pixel_for_nn", 6>
    ]> {
  let cppNamespace = "::kiln::graph";
}

def Graph_NearestRounding : I32Enum<"NearestRounding",
    "how nearest-neighbour resize rounds a coordinate", [
      I32EnumCase<"round_prefer_floor", 0>, I32EnumCase<"round_prefer_ceil", 1>,
      I32EnumCase<"floor", 2>, I32EnumCase<"ceil", 3>
    ]> {
  let cppNamespace = "::kiln::graph";
}

def Graph_GridSamplePadding : I32Enum<"GridSamplePadding",
    "what a grid sample reads outside its input", [
      I32EnumCase<"zeros", 0>, I32EnumCase<"border", 1>, I32EnumCase<"reflection", 2>
    ]> {
  let cppNamespace = "::kiln::graph";
}

#endif // KILN_DIALECTS_GRAPH_GRAPHENUMS_TD
