"""Checks Kiln's output for the example CNN against a NumPy evaluation of the same ONNX graph.

  /usr/bin/python3 examples/reference.py MODEL.onnx INPUT.npy KILN_OUTPUT.npy [--rtol R] [--atol A]

Evaluates the graph node by node with NumPy (float64 accumulation), for the operators the example
uses, and compares with Kiln's output element by element. Exit code 0 when every element is
within atol + rtol * |reference|, 1 otherwise.
"""
import argparse
import sys

import numpy as np
import onnx
from onnx import helper, numpy_helper


def conv(x, w, b, attrs):
    kh, kw = w.shape[2:]
    sh, sw = attrs.get("strides", [1, 1])
    if attrs.get("auto_pad", b"NOTSET") in (b"SAME_UPPER", "SAME_UPPER"):
        ph, pw = (kh - 1) // 2, (kw - 1) // 2
        pads = [ph, pw, kh - 1 - ph, kw - 1 - pw]
    else:
        pads = attrs.get("pads", [0, 0, 0, 0])
    x = np.pad(x, ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    n, _, h, wd = x.shape
    oh, ow = (h - kh) // sh + 1, (wd - kw) // sw + 1
    y = np.zeros((n, w.shape[0], oh, ow))
    for i in range(kh):
        for j in range(kw):
            patch = x[:, :, i:i + sh * oh:sh, j:j + sw * ow:sw]
            y += np.einsum("nchw,oc->nohw", patch, w[:, :, i, j])
    return y + (b.reshape(1, -1, 1, 1) if b is not None else 0)


def max_pool(x, attrs):
    kh, kw = attrs["kernel_shape"]
    sh, sw = attrs.get("strides", [1, 1])
    n, c, h, w = x.shape
    oh, ow = (h - kh) // sh + 1, (w - kw) // sw + 1
    windows = [x[:, :, i:i + sh * oh:sh, j:j + sw * ow:sw] for i in range(kh) for j in range(kw)]
    return np.max(np.stack(windows), axis=0)


def evaluate(model, feeds):
    values = {t.name: numpy_helper.to_array(t) for t in model.graph.initializer}
    values.update(feeds)
    for node in model.graph.node:
        a = {attr.name: helper.get_attribute_value(attr) for attr in node.attribute}
        x = [values[name] if name else None for name in node.input]
        op = node.op_type
        if op == "Conv":
            y = conv(x[0], x[1], x[2] if len(x) > 2 else None, a)
        elif op == "BatchNormalization":
            scale, bias, mean, var = (v.reshape(1, -1, 1, 1) for v in x[1:5])
            y = (x[0] - mean) / np.sqrt(var + a.get("epsilon", 1e-5)) * scale + bias
        elif op == "Relu":
            y = np.maximum(x[0], 0)
        elif op == "MaxPool":
            y = max_pool(x[0], a)
        elif op == "Add":
            y = x[0] + x[1]
        elif op == "GlobalAveragePool":
            y = x[0].mean(axis=(2, 3), keepdims=True)
        elif op == "Shape":
            y = np.array(x[0].shape, dtype=np.int64)
        elif op == "Gather":
            y = np.take(x[0], x[1], axis=a.get("axis", 0))
        elif op == "Unsqueeze":
            y = np.expand_dims(x[0], tuple(int(i) for i in x[1]))
        elif op == "Concat":
            y = np.concatenate(x, axis=a["axis"])
        elif op == "Reshape":
            y = x[0].reshape(tuple(int(d) for d in x[1]))
        elif op == "Gemm":
            b = x[1].T if a.get("transB", 0) else x[1]
            y = a.get("alpha", 1.0) * (x[0] @ b) + a.get("beta", 1.0) * x[2]
        elif op == "Softmax":
            shifted = np.exp(x[0] - x[0].max(axis=a.get("axis", -1), keepdims=True))
            y = shifted / shifted.sum(axis=a.get("axis", -1), keepdims=True)
        else:
            sys.exit(f"reference.py: operator {op} is not evaluated here")
        values[node.output[0]] = y
    return [values[output.name] for output in model.graph.output]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model")
    parser.add_argument("input")
    parser.add_argument("output")
    parser.add_argument("--rtol", type=float, default=1e-4)
    parser.add_argument("--atol", type=float, default=1e-6)
    args = parser.parse_args()
    model = onnx.load(args.model)
    image = np.load(args.input)
    reference = evaluate(model, {model.graph.input[0].name: image.astype(np.float64)})[0]
    got = np.load(args.output).astype(np.float64)
    if got.shape != reference.shape:
        sys.exit(f"reference.py: Kiln's output has shape {got.shape}, the reference {reference.shape}")
    error = np.abs(got - reference)
    bad = error > args.atol + args.rtol * np.abs(reference)
    print(f"reference: {args.output} against NumPy: max abs err {error.max():.3e}, "
          f"{int(bad.sum())} of {bad.size} elements out of bounds (rtol {args.rtol}, atol {args.atol})")
    if reference.ndim == 2:
        # Each image's most likely class and its probability, as Kiln and the reference see them.
        for name, probs in (("Kiln", got), ("NumPy", reference)):
            top = probs.argmax(axis=1)
            classes = ", ".join(f"{c} ({p:.2f})" for c, p in zip(top, probs.max(axis=1)))
            print(f"reference: top class per image ({name}): {classes}")
    return 1 if bad.any() else 0


if __name__ == "__main__":
    sys.exit(main())
