"""Inputs and NumPy's results for Inputs/dynamic_pool.mlir (kiln_shape_range_cuda.test).

  dynamic_pool.py write DIR N...   seeded inputs x_N.npy of N images
  dynamic_pool.py check DIR N      compares DIR/out_N/y.npy with NumPy; exits 1 on a mismatch
"""
import sys

import numpy as np


def write(out, counts):
    rng = np.random.default_rng(20261128)
    for n in counts:
        np.save(f"{out}/x_{n}.npy", rng.standard_normal((n, 4, 9, 9)).astype(np.float32))


def check(out, n):
    x = np.load(f"{out}/x_{n}.npy")
    padded = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    expected = np.stack([np.stack([padded[:, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3].max(axis=(2, 3))
                                   for j in range(5)], -1) for i in range(5)], -2)
    got = np.load(f"{out}/out_{n}/y.npy")
    if got.shape != expected.shape or not np.array_equal(got, expected):
        print(f"pool of {n}: got {got.shape}, expected {expected.shape}")
        sys.exit(1)
    print(f"pool of {n}: ok {got.shape}")


if __name__ == "__main__":
    if sys.argv[1] == "write":
        write(sys.argv[2], [int(n) for n in sys.argv[3:]])
    else:
        check(sys.argv[2], int(sys.argv[3]))
