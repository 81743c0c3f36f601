"""Checks a Chrome trace-event JSON written by `kiln run|bench --trace` against the artifact's
steps as `kiln inspect` lists them.

usage: check_trace.py TRACE INSPECT_OUTPUT RUNS [streams=N]

Fails unless: the file is JSON with traceEvents; the process and every track are named; there is
one complete ("X") slice per step of every run, each named as inspect names the step, with a
non-negative duration, its kind, bytes and run number; and the
slices of a run on one track (one stream of the run's thread) follow each other in step order
without overlapping. With streams=N, each run's steps lie on N tracks, one per stream, each slice
on its step's stream's track.
"""
import json
import re
import sys

trace_path, inspect_path, runs = sys.argv[1], sys.argv[2], int(sys.argv[3])
streams = next((int(a.split("=")[1]) for a in sys.argv[4:] if a.startswith("streams=")), 1)
with open(trace_path) as f:
    trace = json.load(f)
with open(inspect_path) as f:
    inspect = f.read()

# inspect lists steps as "  N dispatch NAME ..." / "  N library  NAME ..." / "  N copy ...".
steps = re.findall(r"^\s+(\d+) (?:\[stream \d+\] )?(dispatch|library|copy)\b", inspect, re.M)
assert steps, "no steps in the inspect output"
events = trace["traceEvents"]
meta = [e for e in events if e["ph"] == "M"]
slices = [e for e in events if e["ph"] == "X"]
assert any(e["name"] == "process_name" and e["args"]["name"] for e in meta), "process unnamed"
tracks = {e["tid"] for e in slices}
named = {e["tid"] for e in meta if e["name"] == "thread_name"}
assert tracks <= named, f"tracks {tracks - named} have no name"

expected = runs * len(steps)
assert len(slices) == expected, f"{len(slices)} slices, expected {expected}"
by_run = {}
for e in slices:
    assert e["dur"] >= 0, e
    by_run.setdefault(e["args"]["run"], []).append(e)
assert sorted(by_run) == list(range(runs)), f"runs {sorted(by_run)}"
kinds = {"dispatch": "kernel", "library": "library call", "copy": "copy"}
for run, events in by_run.items():
    events.sort(key=lambda e: e["args"]["step"])
    assert [e["args"]["step"] for e in events] == list(range(len(steps))), run
    for (index, kind), e in zip(steps, events):
        assert e["cat"] == kinds[kind], (index, kind, e)
        assert e["args"]["bytes"] > 0, e
        if kind == "dispatch":
            assert e["args"]["workgroups"] >= 1, e
    by_track = {}
    for e in events:
        by_track.setdefault(e["tid"], []).append(e)
    assert len(by_track) == streams, f"run {run}: {len(by_track)} tracks, expected {streams}"
    stream_of_track = {}
    for track, on_track in by_track.items():
        assert len({e["args"].get("stream", 0) for e in on_track}) == 1, (run, track)
        stream_of_track[track] = on_track[0]["args"].get("stream", 0)
        for before, after in zip(on_track, on_track[1:]):
            assert after["ts"] >= before["ts"] + before["dur"] - 1e-3, (before, after)
    assert sorted(stream_of_track.values()) == list(range(streams)), stream_of_track
print(f"trace: {len(slices)} slices over {runs} run(s), {len(steps)} steps each"
      + (f", on {streams} streams" if streams > 1 else ""))
