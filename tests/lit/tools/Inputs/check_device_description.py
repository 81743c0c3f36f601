"""Checks a device description `kiln calibrate` wrote: every figure measured and plausible.

    check_device_description.py FILE THREADS   (THREADS 0: one per core)
"""
import json
import os
import sys

path, threads = sys.argv[1], int(sys.argv[2])
d = json.load(open(path))
assert d["kiln_device_description"] == 1, d
assert d["name"] == "host" and d["source"].startswith("measured on "), d
# Any host computes above 1 GFLOP/s and streams above 0.5 GB/s; below that the measurement broke.
assert 1e9 < d["fp32_flops_per_second"] < 1e14, d
assert d["fp16_flops_per_second"] == d["fp32_flops_per_second"], d
assert 5e8 < d["bytes_per_second"] < 1e13, d
assert 0 < d["launch_seconds"] < 1e-3, d
assert d["parallel_units"] == (threads or os.cpu_count()), d
assert d["workgroups_per_block"] == 1 and d["cache_bytes"] > 0, d
print(f"{path}: {d['fp32_flops_per_second'] / 1e9:.1f} GFLOP/s, "
      f"{d['bytes_per_second'] / 1e9:.1f} GB/s, {d['launch_seconds'] * 1e6:.2f} us")
