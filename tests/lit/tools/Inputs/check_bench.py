"""Checks the fields of a `kiln bench --json` file."""
import json
import sys

result = json.load(open(sys.argv[1]))
for key in ("model", "device", "compile_s", "latency_ms", "throughput_per_s", "peak_memory_bytes"):
    assert key in result, key
assert result["device"] == "cpu"
latency = result["latency_ms"]
assert 0 < latency["p50"] <= latency["p90"] <= latency["p99"], latency
assert result["throughput_per_s"] > 0 and result["peak_memory_bytes"] > 0
assert result["iterations"] == len(result["samples_ms"]) == 5
