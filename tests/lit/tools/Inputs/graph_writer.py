"""A small writer of ONNX graphs for the tools' lit tests (dynamic_sequence.py,
dynamic_windows.py): integer constants and nodes with one output, named as they are added."""
import numpy as np


class GraphWriter:
    def __init__(self, inits=None):
        self.inits = list(inits or [])
        self.nodes = []

    def const(self, name, values, dtype=np.int64):
        from onnx import numpy_helper
        self.inits.append(numpy_helper.from_array(np.array(values, dtype=dtype), name))
        return name

    def node(self, op, inputs, output, **attrs):
        from onnx import helper
        self.nodes.append(helper.make_node(op, inputs, [output], **attrs))
        return output
