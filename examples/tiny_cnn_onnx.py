"""Writes examples' tiny CNN as an ONNX model, the way a PyTorch export spells it.

  /usr/bin/python3 examples/tiny_cnn_onnx.py OUT.onnx

Conv, batch norm, ReLU, max pooling, a second convolution with SAME padding and a residual add,
global average pooling, `x.view(x.size(0), -1)` on a dynamic batch (Shape, Gather, Unsqueeze,
Concat, Reshape), a linear layer and softmax. Weights are seeded, so every run writes the same
model.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto
from onnx import helper as h
from onnx import numpy_helper


def build_tiny_cnn():
    rng = np.random.default_rng(0)

    def weights(*shape):
        return rng.standard_normal(shape).astype(np.float32)

    def const(name, array):
        return numpy_helper.from_array(np.asarray(array), name)

    nodes = [
        h.make_node("Conv", ["image", "w1", "b1"], ["c1"], name="conv1", kernel_shape=[3, 3],
                    pads=[1, 1, 1, 1], strides=[1, 1]),
        h.make_node("BatchNormalization", ["c1", "g1", "be1", "m1", "v1"], ["bn1"], name="bn1",
                    epsilon=1e-5),
        h.make_node("Relu", ["bn1"], ["r1"], name="relu1"),
        h.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        h.make_node("Conv", ["p1", "w2"], ["c2"], name="conv2", kernel_shape=[3, 3],
                    auto_pad="SAME_UPPER"),
        h.make_node("Add", ["c2", "p1"], ["res"], name="residual"),
        h.make_node("Relu", ["res"], ["r2"], name="relu2"),
        h.make_node("GlobalAveragePool", ["r2"], ["gap"], name="gap"),
        h.make_node("Shape", ["gap"], ["shape"], name="shape"),
        h.make_node("Gather", ["shape", "zero"], ["batch"], name="batch", axis=0),
        h.make_node("Unsqueeze", ["batch", "axes0"], ["batch1"], name="batch1"),
        h.make_node("Concat", ["batch1", "minus_one"], ["target"], name="target", axis=0),
        h.make_node("Reshape", ["gap", "target"], ["flat"], name="flatten"),
        h.make_node("Gemm", ["flat", "fc_w", "fc_b"], ["logits"], name="fc", transB=1),
        h.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    # Scaled as a trained network's would be (He initialization for the convolutions, batch-norm
    # statistics near 1 and 0), so that activations keep their size through the layers and the
    # softmax gives a spread of probabilities rather than one class at 1.0.
    inits = [const("w1", weights(8, 3, 3, 3) * float(np.sqrt(2 / 27))), const("b1", 0.1 * weights(8)),
             const("g1", 1 + 0.1 * weights(8)), const("be1", 0.1 * weights(8)),
             const("m1", 0.1 * weights(8)), const("v1", 1 + 0.1 * np.abs(weights(8))),
             const("w2", weights(8, 8, 3, 3) * float(np.sqrt(2 / 72))),
             const("zero", np.array(0, np.int64)), const("axes0", np.array([0], np.int64)),
             const("minus_one", np.array([-1], np.int64)),
             const("fc_w", weights(10, 8)), const("fc_b", 0.1 * weights(10))]
    graph = h.make_graph(
        nodes, "tiny_cnn",
        [h.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, 32, 32])],
        [h.make_tensor_value_info("probs", TensorProto.FLOAT, ["batch", 10])], inits)
    return h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])


if __name__ == "__main__":
    onnx.save(build_tiny_cnn(), sys.argv[1])
