"""What the lit tests' ONNX model scripts share: a registry of model builders and the writer.

    from model_registry import Registry
    models = Registry()

    @models.model("name")
    def build(): ...            # returns a ModelProto, written as OUT_DIR/name.onnx

    if __name__ == "__main__":
        models.write(sys.argv[1])
"""

import os

import onnx
from onnx import helper as h


class Registry:
    """Model builders by name, written to a folder at test time (no binary model is kept in the
    repository)."""

    def __init__(self):
        self.builders = {}

    def model(self, name):
        """Registers a function returning a ModelProto as OUT_DIR/name.onnx."""
        def register(build):
            self.builders[name] = build
            return build
        return register

    def write(self, out_dir):
        os.makedirs(out_dir, exist_ok=True)
        for name, build in self.builders.items():
            onnx.save(build(), os.path.join(out_dir, name + ".onnx"))


def tensor(name, elem_type, shape):
    return h.make_tensor_value_info(name, elem_type, shape)
