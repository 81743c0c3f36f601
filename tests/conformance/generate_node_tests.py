"""Writes the ONNX backend node tests of the installed `onnx` release, in the layout of `data/node`.

    .venv/bin/python tests/conformance/generate_node_tests.py OUT_DIR

PyPI's `onnx` wheel ships the generators of its node tests (`onnx.backend.test.case.node`: the
model of each case and its inputs and expected outputs, computed with NumPy or ONNX's reference
evaluator), not the data they produce. This writes that data the way ONNX writes its own
`onnx/backend/test/data/node`: one folder per test with `model.onnx` and
`test_data_set_N/{input,output}_K.pb`. `kiln conformance --data OUT_DIR` then runs them.

Idempotent: when OUT_DIR holds a stamp naming the same onnx version and test count, nothing is
written. Otherwise the tests are written into a fresh folder beside OUT_DIR that then replaces it,
so an interrupted run never leaves half a suite. Prints the onnx version and the number of tests.
"""
import argparse
import os
import shutil
import sys
import tempfile
import warnings
from pathlib import Path

STAMP = ".kiln-onnx-node-tests"


def serialize(value, value_info):
    """The TensorProto (or sequence/optional/map proto) of one input or output, as ONNX writes it."""
    from onnx import TensorProto, numpy_helper

    kind = value_info.type
    if kind.HasField("map_type"):
        return numpy_helper.from_dict(value, value_info.name).SerializeToString()
    if kind.HasField("sequence_type"):
        return numpy_helper.from_list(value, value_info.name).SerializeToString()
    if kind.HasField("optional_type"):
        return numpy_helper.from_optional(value, value_info.name).SerializeToString()
    if isinstance(value, TensorProto):
        return value.SerializeToString()
    return numpy_helper.from_array(value, value_info.name).SerializeToString()


def write_case(case, folder: Path) -> None:
    folder.mkdir(parents=True)
    (folder / "model.onnx").write_bytes(case.model.SerializeToString())
    for i, (inputs, outputs) in enumerate(case.data_sets):
        data_set = folder / f"test_data_set_{i}"
        data_set.mkdir()
        for j, value in enumerate(inputs):
            (data_set / f"input_{j}.pb").write_bytes(serialize(value, case.model.graph.input[j]))
        for j, value in enumerate(outputs):
            (data_set / f"output_{j}.pb").write_bytes(serialize(value, case.model.graph.output[j]))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("out", type=Path, help="the folder to write the node tests into")
    args = parser.parse_args()

    import onnx
    import onnx.backend.test.case.node as node_cases

    with warnings.catch_warnings():
        # Some generators divide by zero or overflow on purpose (the expected inf and nan).
        warnings.simplefilter("ignore")
        cases = [case for case in node_cases.collect_testcases(None) if case.kind == "node"]
    stamp = f"onnx {onnx.__version__}, {len(cases)} node tests\n"
    out = args.out
    if (out / STAMP).is_file() and (out / STAMP).read_text() == stamp:
        print(f"generate_node_tests: {out} already holds {stamp.strip()}")
        return 0

    out.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=out.name + ".", dir=out.parent))
    try:
        names = set()
        for case in cases:
            if case.name in names:
                raise SystemExit(f"generate_node_tests: two node tests are named {case.name}")
            names.add(case.name)
            write_case(case, staging / case.name)
        (staging / STAMP).write_text(stamp)
        if out.exists():
            shutil.rmtree(out)
        os.rename(staging, out)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    print(f"generate_node_tests: wrote {stamp.strip()} to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
