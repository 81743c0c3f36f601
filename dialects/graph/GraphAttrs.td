//===- GraphAttrs.td - Attributes of the graph dialect ----------------------===//

#ifndef KILN_DIALECTS_GRAPH_GRAPHATTRS_TD
#define KILN_DIALECTS_GRAPH_GRAPHATTRS_TD

include "dialects/graph/GraphBase.td"
include "dialects/graph/GraphEnums.td"

class Graph_EnumAttr<EnumInfo info, string mnemonic>
    : EnumAttr<Graph_Dialect, info, mnemonic> {
  let assemblyFormat = "$value";
}

def Graph_ScatterReductionAttr : Graph_EnumAttr<Graph_ScatterReduction, "scatter_reduction">;
def Graph_ResizeModeAttr : Graph_EnumAttr<Graph_ResizeMode, "resize_mode">;
def Graph_CoordinateTransformAttr : Graph_EnumAttr<Graph_CoordinateTransform,
                                                   "coordinate_transform">;
def Graph_NearestRoundingAttr : Graph_EnumAttr<Graph_NearestRounding, "nearest_rounding">;
def Graph_GridSamplePaddingAttr : Graph_EnumAttr<Graph_GridSamplePadding, "grid_sample_padding">;

#endif // KILN_DIALECTS_GRAPH_GRAPHATTRS_TD
