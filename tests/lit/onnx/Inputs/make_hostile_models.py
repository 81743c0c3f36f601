"""Writes malformed and hostile ONNX models into a directory, for the CLI's error tests.

Each file exercises one refusal of `kiln import`: the test checks the message names the file,
tensor or node and that the exit code says so, and lit's `not` fails the test on a crash.
"""
import os
import random
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model_with(initializer=None, nodes=None, inputs=None, opset=13, ir_version=8):
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])
    nodes = nodes or [helper.make_node("Add", ["x", "w"], ["y"], name="add")]
    graph = helper.make_graph(nodes, "hostile", inputs or [x], [y],
                              initializer=[initializer] if initializer is not None else [])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = ir_version
    return model


def weights():
    rng = np.random.default_rng(7)
    return numpy_helper.from_array(rng.standard_normal((2, 3)).astype(np.float32), "w")


def external(location, out_dir, data_name="w.bin", offset=0, length=24):
    tensor = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2, 3])
    tensor.data_location = TensorProto.EXTERNAL
    for key, value in (("location", location), ("offset", str(offset)), ("length", str(length))):
        entry = tensor.external_data.add()
        entry.key, entry.value = key, value
    return tensor


def save(model, out_dir, name):
    with open(os.path.join(out_dir, name), "wb") as f:
        f.write(model.SerializeToString())


def main(out_dir):
    os.makedirs(out_dir, exist_ok=True)
    valid = model_with(weights())
    save(valid, out_dir, "valid.onnx")
    data = valid.SerializeToString()

    open(os.path.join(out_dir, "empty.onnx"), "wb").close()
    with open(os.path.join(out_dir, "truncated.onnx"), "wb") as f:
        f.write(data[: len(data) // 2])
    with open(os.path.join(out_dir, "random.onnx"), "wb") as f:
        f.write(random.Random(11).randbytes(4096))

    short = weights()
    short.raw_data = short.raw_data[:10]
    save(model_with(short), out_dir, "short_raw_data.onnx")

    negative = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2, -3])
    save(model_with(negative), out_dir, "negative_dims.onnx")

    overflow = TensorProto(name="w", data_type=TensorProto.FLOAT, dims=[2**40, 2**40])
    save(model_with(overflow), out_dir, "overflow_dims.onnx")

    # Graph inputs whose declared sizes go into the IR's types: negative, absurd, too many. At
    # opset 18 the ONNX checker and its shape inference are skipped (libonnx 1.12 knows opsets up
    # to 17), so the importer's own check is what refuses them.
    for name, dims in (("negative_input", [2, -3]), ("huge_input", [2**40, 2**40]),
                       ("deep_input", [1] * 40)):
        x = helper.make_tensor_value_info("x", TensorProto.FLOAT, dims)
        y = helper.make_tensor_value_info("y", TensorProto.FLOAT, dims)
        graph = helper.make_graph([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                                  "hostile", [x], [y])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
        model.ir_version = 8
        save(model, out_dir, name + ".onnx")

    secret_dir = os.path.join(out_dir, "outside")
    os.makedirs(secret_dir, exist_ok=True)
    payload = np.arange(1, 7, dtype=np.float32).tobytes()
    with open(os.path.join(secret_dir, "secret.bin"), "wb") as f:
        f.write(payload)
    inside = os.path.join(out_dir, "models")
    os.makedirs(inside, exist_ok=True)
    save(model_with(external("../outside/secret.bin", inside)), inside, "dotdot.onnx")
    save(model_with(external(os.path.join(secret_dir, "secret.bin"), inside)), inside,
         "absolute.onnx")
    link = os.path.join(inside, "link.bin")
    if os.path.lexists(link):
        os.remove(link)
    os.symlink(os.path.join(secret_dir, "secret.bin"), link)
    save(model_with(external("link.bin", inside)), inside, "symlink.onnx")
    with open(os.path.join(inside, "own.bin"), "wb") as f:
        f.write(payload)
    hard = os.path.join(inside, "hard.bin")
    if os.path.lexists(hard):
        os.remove(hard)
    os.link(os.path.join(inside, "own.bin"), hard)
    save(model_with(external("hard.bin", inside)), inside, "hardlink.onnx")
    with open(os.path.join(inside, "short.bin"), "wb") as f:
        f.write(payload[:8])
    save(model_with(external("short.bin", inside)), inside, "beyond_file.onnx")

    save(model_with(weights(), opset=99), out_dir, "future_opset.onnx")
    save(model_with(weights(), ir_version=99), out_dir, "future_ir.onnx")
    dangling = [helper.make_node("Add", ["x", "nowhere"], ["y"], name="dangling_add")]
    save(model_with(weights(), nodes=dangling), out_dir, "dangling_input.onnx")
    unknown = [helper.make_node("FrobnicateTensor", ["x", "w"], ["y"], name="frob")]
    save(model_with(weights(), nodes=unknown), out_dir, "unknown_op.onnx")


if __name__ == "__main__":
    main(sys.argv[1])
