"""Inputs and NumPy's results for Inputs/dynamic_rows.mlir (kiln_shape_range.test).

  dynamic_rows.py write DIR      seeded weights and inputs x_B_S.npy for several (batch, sequence)
  dynamic_rows.py check DIR B S  compares DIR/out_B_S/{y,s}.npy with NumPy; exits 1 on a mismatch
"""
import sys

import numpy as np

SHAPES = [(1, 1), (2, 5), (4, 64), (3, 17)]


def write(out):
    rng = np.random.default_rng(20261127)
    for name, shape in (("w", (8, 8)), ("g", (8,)), ("bb", (8,))):
        np.save(f"{out}/{name}.npy", rng.standard_normal(shape).astype(np.float32))
    for b, s in SHAPES + [(5, 3), (6, 150)]:
        np.save(f"{out}/x_{b}_{s}.npy", rng.standard_normal((b, s, 8)).astype(np.float32))


def check(out, b, s):
    w, g, bb = (np.load(f"{out}/{n}.npy").astype(np.float64) for n in ("w", "g", "bb"))
    x = np.load(f"{out}/x_{b}_{s}.npy").astype(np.float64)
    m = x @ w
    e = np.exp(m - m.max(1, keepdims=True))
    sm = e / e.sum(1, keepdims=True)
    mean = sm.mean(-1, keepdims=True)
    var = ((sm - mean) ** 2).mean(-1, keepdims=True)
    y = (sm - mean) / np.sqrt(var + 1e-5) * g + bb
    ok = True
    for name, expected in (("y", y), ("s", y.sum(1))):
        got = np.load(f"{out}/out_{b}_{s}/{name}.npy")
        if got.shape != expected.shape or not np.allclose(got, expected, rtol=1e-4, atol=1e-4):
            err = np.abs(got - expected).max() if got.shape == expected.shape else "shape"
            print(f"{name} at {b}x{s}: got {got.shape}, expected {expected.shape}, error {err}")
            ok = False
        else:
            print(f"{name} at {b}x{s}: ok {got.shape}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2])
    else:
        check(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
