"""Fails unless the .npy files A and B are close (|a - b| <= atol + rtol |b|) and not all zero."""
import sys

import numpy as np

a, b = np.load(sys.argv[1]), np.load(sys.argv[2])
rtol = float(sys.argv[3]) if len(sys.argv) > 3 else 1e-5
atol = float(sys.argv[4]) if len(sys.argv) > 4 else 1e-5
if a.shape != b.shape:
    sys.exit(f"shapes differ: {a.shape} and {b.shape}")
if not np.any(b):
    sys.exit(f"{sys.argv[2]} is all zeros")
error = np.abs(a.astype(np.float64) - b)
if not np.all(error <= atol + rtol * np.abs(b)):
    sys.exit(f"max abs error {error.max():.3g} (values up to {np.abs(b).max():.3g})")
print(f"max abs error {error.max():.3g}")
