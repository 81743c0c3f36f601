"""ONNX models whose shape operands are graph inputs (values of the run) and whose outputs
declare their static shapes, with seeded inputs; and the check of what `kiln run` wrote against
NumPy.

usage: run_time_operand_case.py make DIR | check DIR CASE OUT_DIR [AXES...]

Cases:
  reshape    Reshape([2,3,4] by a run-time [4,-1,3] (or any equivalent target) -> [4,2,3]), Tanh
  unsqueeze  Unsqueeze([1,4] at run-time axes -> [1,1,4]: axes 0 and 1 both give it)
  unsqueeze_many  Unsqueeze of rank 8 by 8 run-time axes (C(16, 8) choices: refused)
  reduce     ReduceSum([3,2,2] over one run-time axis, keepdims=0 -> [3,2]: axis 1 and axis 2
             give the shape and different values)
  tile       Tile([2,3] by run-time repeats -> [4,3])
  range      Range(run-time start, limit, delta -> the declared 5 elements)
  compress   Compress([5,2] along axis 0 by a run-time condition -> [2,2])
  nonzero    NonZero([2,3] of the run -> [2,3]: three non-zero elements)
  dropout    Dropout([2,3] with run-time ratio and training_mode: the identity unless they ask for
             random dropout)
  pad        Pad(reflect, [3,4] by run-time pads -> [3,7]: 2 before and 1 after, or 1 and 2)
  slice      Slice([4,5] by run-time starts, ends, axes, steps -> [2,5]: rows 3 and 1 by a step
             of -2, or rows 0 and 2 by a step of 2)
  ramp       Range(0, a run-time n, 1), cast to float, times 0.5, Cos: only the Cos's output
             declares its length (6), which the ramp takes
  stft       STFT([1,16,1] with a run-time frame_step and a window of 4 -> the declared 4 frames
             of 3 bins: a step of 4)
  dft        DFT (opset 20) of a real [1,6,6,1] along a run-time axis -> the declared [1,6,6,2]:
             axes 1 and 2 (and their negatives) both give it, with different values
  resize     Resize(linear, [1,1,3,4] by run-time scales -> [1,1,6,6]: [1,1,2,1.5] and
             [1,1,2.2,1.6] both give it, at different sample positions); compared with
             linear interpolation as ONNX defines it (half_pixel coordinates, edge values
             repeated), one dimension after another
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto as T
from onnx import helper as h

rng = np.random.default_rng(11)
DATA = {
    "reshape": rng.standard_normal((2, 3, 4)).astype(np.float32),
    "unsqueeze": rng.standard_normal((1, 4)).astype(np.float32),
    "reduce": rng.standard_normal((3, 2, 2)).astype(np.float32),
    "tile": rng.standard_normal((2, 3)).astype(np.float32),
    "slice": rng.standard_normal((4, 5)).astype(np.float32),
    "pad": rng.standard_normal((3, 4)).astype(np.float32),
    "dropout": rng.standard_normal((2, 3)).astype(np.float32),
    "compress": rng.standard_normal((5, 2)).astype(np.float32),
    "nonzero": np.array([[0, 1.5, 0], [-2, 0, 3]], dtype=np.float32),
    "resize": rng.standard_normal((1, 1, 3, 4)).astype(np.float32),
    "stft": rng.standard_normal((1, 16, 1)).astype(np.float32),
    "dft": rng.standard_normal((1, 6, 6, 1)).astype(np.float32),
}
WINDOW = np.array([0.5, 1.0, 1.0, 0.5], dtype=np.float32)
SCALES = {"even": [1, 1, 2, 1.5], "uneven": [1, 1, 2.2, 1.6], "bad": [1, 1, 2, 2],
          "batch": [1.5, 1, 2, 1.5]}
CONDITIONS = {"first": [1, 0, 0, 1, 0], "second": [0, 1, 1, 0, 0], "bad": [1, 1, 1, 0, 0]}
SLICES = {"back": ([3], [0], [0], [-2]), "forward": ([0], [4], [-2], [2]),
          "bad": ([0], [4], [0], [1])}


def model(name, op, inputs, output, attributes=None):
    node = h.make_node(op, [i[0] for i in inputs], ["y"], name=name, **(attributes or {}))
    graph = h.make_graph([node], name,
                         [h.make_tensor_value_info(n, t, s) for n, t, s in inputs],
                         [h.make_tensor_value_info("y", output[0], output[1])])
    onnx.save(h.make_model(graph, ir_version=8, opset_imports=[h.make_opsetid("", 13)]),
              f"{DIR}/{name}.onnx")


def make():
    model("reshape", "Reshape", [("x", T.FLOAT, [2, 3, 4]), ("shape", T.INT64, [3])],
          (T.FLOAT, [4, 2, 3]))
    model("unsqueeze", "Unsqueeze", [("x", T.FLOAT, [1, 4]), ("axes", T.INT64, [1])],
          (T.FLOAT, [1, 1, 4]))
    model("reduce", "ReduceSum", [("x", T.FLOAT, [3, 2, 2]), ("axes", T.INT64, [1])],
          (T.FLOAT, [3, 2]), {"keepdims": 0})
    model("unsqueeze_many", "Unsqueeze", [("x", T.FLOAT, [2] * 8), ("axes", T.INT64, [8])],
          (T.FLOAT, [2, 1] * 8))
    model("tile", "Tile", [("x", T.FLOAT, [2, 3]), ("repeats", T.INT64, [2])],
          (T.FLOAT, [4, 3]))
    model("range", "Range", [("start", T.FLOAT, []), ("limit", T.FLOAT, []),
                             ("delta", T.FLOAT, [])], (T.FLOAT, [5]))
    model("slice", "Slice", [("x", T.FLOAT, [4, 5]), ("starts", T.INT64, [1]),
                             ("ends", T.INT64, [1]), ("axes", T.INT64, [1]),
                             ("steps", T.INT64, [1])], (T.FLOAT, [2, 5]))
    model("pad", "Pad", [("x", T.FLOAT, [3, 4]), ("pads", T.INT64, [4])], (T.FLOAT, [3, 7]),
          {"mode": "reflect"})
    for name, value in {"pads_21": [0, 2, 0, 1], "pads_12": [0, 1, 0, 2],
                        "pads_bad": [0, 4, 0, -1]}.items():
        np.save(f"{DIR}/{name}.npy", np.array(value, dtype=np.int64))
    model("compress", "Compress", [("x", T.FLOAT, [5, 2]), ("condition", T.BOOL, [5])],
          (T.FLOAT, [2, 2]), {"axis": 0})
    model("dropout", "Dropout", [("x", T.FLOAT, [2, 3]), ("ratio", T.FLOAT, []),
                                 ("training", T.BOOL, [])], (T.FLOAT, [2, 3]))
    for name, value in {"ratio_half": 0.5, "ratio_zero": 0.0}.items():
        np.save(f"{DIR}/{name}.npy", np.array(value, dtype=np.float32))
    for name, value in {"training_on": True, "training_off": False}.items():
        np.save(f"{DIR}/{name}.npy", np.array(value, dtype=bool))
    model("nonzero", "NonZero", [("x", T.FLOAT, [2, 3])], (T.INT64, [2, 3]))
    model("resize", "Resize", [("x", T.FLOAT, [1, 1, 3, 4]), ("roi", T.FLOAT, [0]),
                               ("scales", T.FLOAT, [4])], (T.FLOAT, [1, 1, 6, 6]),
          {"mode": "linear"})
    np.save(f"{DIR}/roi_none.npy", np.zeros((0,), dtype=np.float32))
    node = h.make_node("STFT", ["x", "step", "window"], ["y"], name="stft")
    graph = h.make_graph([node], "stft", [h.make_tensor_value_info("x", T.FLOAT, [1, 16, 1]),
                                          h.make_tensor_value_info("step", T.INT64, [])],
                         [h.make_tensor_value_info("y", T.FLOAT, [1, 4, 3, 2])],
                         initializer=[h.make_tensor("window", T.FLOAT, [4], WINDOW)])
    onnx.save(h.make_model(graph, ir_version=8, opset_imports=[h.make_opsetid("", 17)]),
              f"{DIR}/stft.onnx")
    node = h.make_node("DFT", ["x", "", "axis"], ["y"], name="dft")
    graph = h.make_graph([node], "dft", [h.make_tensor_value_info("x", T.FLOAT, [1, 6, 6, 1]),
                                         h.make_tensor_value_info("axis", T.INT64, [])],
                         [h.make_tensor_value_info("y", T.FLOAT, [1, 6, 6, 2])])
    onnx.save(h.make_model(graph, ir_version=8, opset_imports=[h.make_opsetid("", 20)]),
              f"{DIR}/dft.onnx")
    for name, value in {"dft_axis_1": 1, "dft_axis_2": 2, "dft_axis_neg": -2, "dft_axis_bad": 3}.items():
        np.save(f"{DIR}/{name}.npy", np.array(value, dtype=np.int64))
    nodes = [h.make_node("Constant", [], ["zero"], value=h.make_tensor("z", T.INT64, [], [0])),
             h.make_node("Constant", [], ["one"], value=h.make_tensor("o", T.INT64, [], [1])),
             h.make_node("Constant", [], ["half"], value=h.make_tensor("h", T.FLOAT, [], [0.5])),
             h.make_node("Range", ["zero", "n", "one"], ["ramp"], name="ramp"),
             h.make_node("Cast", ["ramp"], ["ramp_fp"], to=T.FLOAT),
             h.make_node("Mul", ["ramp_fp", "half"], ["angle"]),
             h.make_node("Cos", ["angle"], ["y"])]
    graph = h.make_graph(nodes, "ramp", [h.make_tensor_value_info("n", T.INT64, [])],
                         [h.make_tensor_value_info("y", T.FLOAT, [6])])
    onnx.save(h.make_model(graph, ir_version=8, opset_imports=[h.make_opsetid("", 13)]),
              f"{DIR}/ramp.onnx")
    for name, value in {"n_good": 6, "n_bad": 5}.items():
        np.save(f"{DIR}/{name}.npy", np.array(value, dtype=np.int64))
    for name, value in {"step_good": 4, "step_bad": 3}.items():
        np.save(f"{DIR}/{name}.npy", np.array(value, dtype=np.int64))
    for name, value in SCALES.items():
        np.save(f"{DIR}/scales_{name}.npy", np.array(value, dtype=np.float32))
    for name, value in CONDITIONS.items():
        np.save(f"{DIR}/condition_{name}.npy", np.array(value, dtype=bool))
    np.save(f"{DIR}/nonzero_bad.npy", np.ones((2, 3), dtype=np.float32))
    for case, bounds in SLICES.items():
        for name, value in zip(["starts", "ends", "axes", "steps"], bounds):
            np.save(f"{DIR}/slice_{case}_{name}.npy", np.array(value, dtype=np.int64))
    for name, value in DATA.items():
        np.save(f"{DIR}/{name}_x.npy", value)
    values = {
        "shape_good": [4, -1, 3], "shape_zero": [4, 2, 3], "shape_bad": [3, 2, 4],
        "shape_two_unknown": [-1, -1, 3],
        "axes_0": [0], "axes_1": [1], "axes_neg": [-2], "axes_2": [2], "axes_bad": [3],
        "repeats_good": [2, 1], "repeats_bad": [1, 2],
    }
    for name, value in values.items():
        np.save(f"{DIR}/{name}.npy", np.array(value, dtype=np.int64))
    for name, value in {"start": 1.5, "limit": 4.0, "delta": 0.5, "limit_bad": 9.0}.items():
        np.save(f"{DIR}/{name}.npy", np.array(value, dtype=np.float32))


def check(case, out, args):
    got = np.load(f"{out}/y.npy")
    x = DATA.get(case)
    if case == "reshape":
        want = x.reshape(4, 2, 3)
    elif case == "unsqueeze":
        want = x.reshape(1, 1, 4)
    elif case == "reduce":
        want = x.sum(axis=int(args[0]))
    elif case == "compress":
        want = x[np.array(CONDITIONS[args[0]], dtype=bool)]
    elif case == "dropout":
        want = x
    elif case == "nonzero":
        want = np.array(np.nonzero(x), dtype=np.int64)
    elif case == "pad":
        before, after = int(args[0][0]), int(args[0][1])
        want = np.pad(x, ((0, 0), (before, after)), mode="reflect")
    elif case == "slice":
        starts, ends, _, steps = SLICES[args[0]]
        want = x[starts[0]:ends[0] if ends[0] > 0 or steps[0] > 0 else None:steps[0]]
    elif case == "resize":
        want = x.astype(np.float64)
        for axis, (scale, size) in enumerate(zip(SCALES[args[0]], [1, 1, 6, 6])):
            if want.shape[axis] == size:
                continue
            # half_pixel: output i samples input (i + 0.5) / scale - 0.5, edges repeated.
            position = (np.arange(size) + 0.5) / np.float32(scale) - 0.5
            base = np.floor(position)
            fraction = position - base
            last = want.shape[axis] - 1
            low = np.clip(base, 0, last).astype(int)
            high = np.clip(base + 1, 0, last).astype(int)
            shape = [1] * want.ndim
            shape[axis] = size
            want = (np.take(want, low, axis) * (1 - fraction).reshape(shape) +
                    np.take(want, high, axis) * fraction.reshape(shape))
    elif case == "ramp":
        want = np.cos(np.arange(6, dtype=np.float32) * np.float32(0.5))
    elif case == "stft":
        frames = np.stack([x[0, 4 * f:4 * f + 4, 0] * WINDOW for f in range(4)])
        spectrum = np.fft.rfft(frames.astype(np.float64), axis=-1)
        want = np.stack([spectrum.real, spectrum.imag], axis=-1)[np.newaxis]
    elif case == "dft":
        spectrum = np.fft.fft(x[..., 0].astype(np.float64), axis=int(args[0]))
        want = np.stack([spectrum.real, spectrum.imag], axis=-1)
    elif case == "tile":
        want = np.tile(x, (2, 1))
    else:
        want = np.arange(1.5, 4.0, 0.5, dtype=np.float32)
    assert got.shape == want.shape, (got.shape, want.shape)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    print(f"{case} {' '.join(args)} {list(got.shape)} matches NumPy")


DIR = sys.argv[2]
if sys.argv[1] == "make":
    make()
else:
    check(sys.argv[3], sys.argv[4], sys.argv[5:])
