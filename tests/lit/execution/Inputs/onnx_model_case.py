"""Inputs and the NumPy forward pass for running an ONNX model through `kiln compile` and
`kiln run`.

  onnx_model_case.py inputs OUT_DIR MODEL.onnx
      writes OUT_DIR/image.npy (a seeded input) and OUT_DIR/expected.json (the NumPy forward
      pass of MODEL.onnx on it, as the output `probs`)

The output `kiln run` writes is compared by graph_cases.py check. Only the examples' tiny CNN has
a forward pass here: its weights are read from the model, so the reference computes what the file
says.
"""
import json
import os
import sys

import numpy as np
import onnx
from onnx import numpy_helper

from numpy_reference import reference_conv, reference_pool


def tiny_cnn_forward(model, image):
    w = {t.name: numpy_helper.to_array(t).astype(np.float64) for t in model.graph.initializer}
    c1 = reference_conv(image, w["w1"], w["b1"], (1, 1), (1, 1), (1, 1), (1, 1), 1)
    channel = lambda v: v.reshape(1, -1, 1, 1)
    bn = (channel(w["g1"]) * (c1 - channel(w["m1"])) / np.sqrt(channel(w["v1"]) + 1e-5)
          + channel(w["be1"]))
    p1 = reference_pool(np.maximum(bn, 0), (2, 2), (2, 2), (0, 0), (0, 0), False, "max")
    c2 = reference_conv(p1, w["w2"], None, (1, 1), (1, 1), (1, 1), (1, 1), 1)
    r2 = np.maximum(c2 + p1, 0)
    logits = r2.mean(axis=(2, 3)) @ w["fc_w"].T + w["fc_b"]
    z = np.exp(logits - logits.max(axis=1, keepdims=True))
    return z / z.sum(axis=1, keepdims=True)


def inputs(out_dir, model_path):
    model = onnx.load(model_path)
    image = np.random.default_rng(5).standard_normal((2, 3, 32, 32)).astype(np.float32)
    os.makedirs(out_dir, exist_ok=True)
    np.save(os.path.join(out_dir, "image.npy"), image)
    expected = tiny_cnn_forward(model, image.astype(np.float64))
    with open(os.path.join(out_dir, "expected.json"), "w") as f:
        json.dump([{"name": "probs", "shape": list(expected.shape), "dtype": "float32",
                    "values": expected.reshape(-1).tolist()}], f)


if __name__ == "__main__":
    inputs(sys.argv[2], sys.argv[3])
