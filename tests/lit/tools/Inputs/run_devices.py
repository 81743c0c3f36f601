"""Runs each device of a split artifact as a process of its own (kiln run --device-rank R
--rendezvous DIR), all at once, and fails when any of them does: what a user starting one process
per device does. Usage: run_devices.py KILN ARTIFACT DEVICES RENDEZVOUS OUTDIR [ARGS...]"""
import os
import subprocess
import sys

kiln, artifact, devices, rendezvous, out = sys.argv[1:6]
# The devices meet in a private directory (the runtime refuses one others may read or write).
os.chmod(rendezvous, 0o700)
processes = [
    subprocess.Popen([kiln, "run", artifact, "--device-rank", str(rank), "--rendezvous", rendezvous,
                      "--output-dir", f"{out}/device{rank}", "--threads", "1", *sys.argv[6:]])
    for rank in range(int(devices))
]
codes = [process.wait(timeout=300) for process in processes]
if any(codes):
    sys.exit(f"device exit codes: {codes}")
