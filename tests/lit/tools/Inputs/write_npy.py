"""Writes the inputs of kiln_compile_run.test into DIR: seeded images and malformed variants."""
import sys

import numpy as np

out = sys.argv[1]
rng = np.random.default_rng(3)
np.save(f"{out}/image.npy", rng.standard_normal((2, 3, 32, 32)).astype(np.float32))
np.save(f"{out}/batch3.npy", rng.standard_normal((3, 3, 32, 32)).astype(np.float32))
np.save(f"{out}/small.npy", rng.standard_normal((2, 3, 16, 16)).astype(np.float32))
np.save(f"{out}/int64.npy", rng.integers(0, 9, (2, 3, 32, 32)).astype(np.int64))
np.save(f"{out}/rank2.npy", rng.standard_normal((3, 32)).astype(np.float32))
