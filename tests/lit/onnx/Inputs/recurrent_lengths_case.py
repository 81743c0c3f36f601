"""A bidirectional LSTM over a batch of sequences of different lengths (sequence_lens, a value of
the run), and the check of what `kiln run` wrote against the LSTM written out step by step as
ONNX defines it: each batch entry runs over its own length (the reverse direction from its last
element), its Y is 0 past that length, and Y_h / Y_c hold its last states.

usage: recurrent_lengths_case.py make DIR | check DIR LENGTHS OUT_DIR

LENGTHS names lengths_<name>.npy: full (5 5 5 5), mixed (5 2 0 3). lstm_constant.onnx holds the
mixed lengths as a constant.
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h
from onnx import numpy_helper

SEQ, BATCH, INPUT, HIDDEN, DIRS = 5, 4, 3, 6, 2
rng = np.random.default_rng(17)
X = rng.standard_normal((SEQ, BATCH, INPUT)).astype(np.float32)
W = (0.5 * rng.standard_normal((DIRS, 4 * HIDDEN, INPUT))).astype(np.float32)
R = (0.5 * rng.standard_normal((DIRS, 4 * HIDDEN, HIDDEN))).astype(np.float32)
B = (0.1 * rng.standard_normal((DIRS, 8 * HIDDEN))).astype(np.float32)
H0 = rng.standard_normal((DIRS, BATCH, HIDDEN)).astype(np.float32)
C0 = rng.standard_normal((DIRS, BATCH, HIDDEN)).astype(np.float32)
LENGTHS = {"full": [5, 5, 5, 5], "mixed": [5, 2, 0, 3], "bad": [6, 1, 1, 1]}


def make(directory):
    node = h.make_node("LSTM", ["x", "w", "r", "b", "lengths", "h0", "c0"], ["y", "yh", "yc"],
                       hidden_size=HIDDEN, direction="bidirectional", name="lstm")
    graph = h.make_graph(
        [node], "lstm",
        [h.make_tensor_value_info("x", T.FLOAT, X.shape),
         h.make_tensor_value_info("lengths", T.INT32, [BATCH])],
        [h.make_tensor_value_info("y", T.FLOAT, [SEQ, DIRS, BATCH, HIDDEN]),
         h.make_tensor_value_info("yh", T.FLOAT, [DIRS, BATCH, HIDDEN]),
         h.make_tensor_value_info("yc", T.FLOAT, [DIRS, BATCH, HIDDEN])],
        initializer=[numpy_helper.from_array(a, n)
                     for n, a in [("w", W), ("r", R), ("b", B), ("h0", H0), ("c0", C0)]])
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 14)]), f"{directory}/lstm.onnx")
    # The same with the mixed lengths as a constant.
    graph.input.pop()
    graph.initializer.append(
        numpy_helper.from_array(np.array(LENGTHS["mixed"], dtype=np.int32), "lengths"))
    onnx.save(h.make_model(graph, opset_imports=[h.make_opsetid("", 14)]),
              f"{directory}/lstm_constant.onnx")
    np.save(f"{directory}/x.npy", X)
    for name, value in LENGTHS.items():
        np.save(f"{directory}/lengths_{name}.npy", np.array(value, dtype=np.int32))


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def reference(lengths):
    x = X.astype(np.float64)
    y = np.zeros((SEQ, DIRS, BATCH, HIDDEN))
    yh = np.zeros((DIRS, BATCH, HIDDEN))
    yc = np.zeros((DIRS, BATCH, HIDDEN))
    for d in range(DIRS):
        wi, wo, wf, wc = np.split(W[d].astype(np.float64), 4)
        ri, ro, rf, rc = np.split(R[d].astype(np.float64), 4)
        bias = B[d, :4 * HIDDEN].astype(np.float64) + B[d, 4 * HIDDEN:]
        bi, bo, bf, bc = np.split(bias, 4)
        for b in range(BATCH):
            hs, cs = H0[d, b].astype(np.float64), C0[d, b].astype(np.float64)
            steps = range(lengths[b]) if d == 0 else reversed(range(lengths[b]))
            for t in steps:
                i = sigmoid(wi @ x[t, b] + ri @ hs + bi)
                f = sigmoid(wf @ x[t, b] + rf @ hs + bf)
                g = np.tanh(wc @ x[t, b] + rc @ hs + bc)
                o = sigmoid(wo @ x[t, b] + ro @ hs + bo)
                cs = f * cs + i * g
                hs = o * np.tanh(cs)
                y[t, d, b] = hs
            yh[d, b], yc[d, b] = hs, cs
    return {"y": y, "yh": yh, "yc": yc}


def check(directory, lengths, out_dir):
    want = reference(LENGTHS[lengths])
    for name, value in want.items():
        got = np.load(f"{out_dir}/{name}.npy")
        assert got.shape == value.shape, (name, got.shape, value.shape)
        np.testing.assert_allclose(got, value, rtol=1e-5, atol=1e-5, err_msg=name)
    print(f"lstm {lengths} {LENGTHS[lengths]}: y, yh and yc match the step-by-step LSTM")


if sys.argv[1] == "make":
    make(sys.argv[2])
else:
    check(sys.argv[2], sys.argv[3], sys.argv[4])
