"""Checks that FILE.npy holds ROWS x COLS probabilities: each row non-negative and summing to 1.

The example's weights are uniform, so every class gets 1/COLS; a wrong shape, a NaN or a row
that does not sum to one fails.
"""
import sys

import numpy as np

probs = np.load(sys.argv[1])
rows, cols = int(sys.argv[2]), int(sys.argv[3])
assert probs.shape == (rows, cols) and probs.dtype == np.float32, (probs.shape, probs.dtype)
assert np.all(probs >= 0), probs
assert np.allclose(probs.sum(axis=1), 1.0, atol=1e-6), probs.sum(axis=1)
assert np.allclose(probs, 1.0 / cols, atol=1e-6), probs
