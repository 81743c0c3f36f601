"""Writes an ONNX model whose input, output and dimension names carry terminal escape sequences
(an OSC title change, a CSI colour, a raw C1 CSI byte as UTF-8, an invalid UTF-8 byte): what a
crafted model or artifact would put on the screen of whoever inspects it.

  python3 hostile_names.py OUT.onnx
"""
import sys

from onnx import TensorProto, helper, save

x_name = "x\x1b]0;pwned\x07"
y_name = "y\x1b[31mred\u009b2J"
graph = helper.make_graph(
    [helper.make_node("Relu", [x_name], [y_name], name="relu")], "hostile",
    [helper.make_tensor_value_info(x_name, TensorProto.FLOAT, [2, 3])],
    [helper.make_tensor_value_info(y_name, TensorProto.FLOAT, [2, 3])])
save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), sys.argv[1])
