"""kiln.compile, kiln.load, kiln.Artifact and kiln.Session over the native module."""

from __future__ import annotations

import os
import threading
from dataclasses import dataclass
from typing import Any, Dict, Iterable, List, Mapping, Optional, Sequence, Tuple, Union

from . import _kiln

PathLike = Union[str, "os.PathLike[str]"]

# The compile options as `kiln compile` takes them: {python keyword: (option, arity, help)}.
_OPTIONS: Dict[str, Tuple[str, str, str]] = {
    name.replace("-", "_"): (name, arity, help_text)
    for name, help_text, arity, _default in _kiln.option_table()
}
# Keywords kiln.compile takes in a Python shape, not as the command line spells them.
_SHAPED = {"shape", "shape_range", "report"}


def compile_options() -> Dict[str, str]:
    """Every keyword `kiln.compile` takes, with its help: the options of `kiln compile`, read
    from the table its flags are bound from (`--gpu-arch` is `gpu_arch=`)."""
    options = {keyword: help_text for keyword, (_, _, help_text) in _OPTIONS.items()
               if keyword not in _SHAPED}
    options["shapes"] = "{input: dims}: binds dynamic dimensions (None or -1 leaves one open)"
    options["shape_ranges"] = ("{input: [(min, max) | size, ...]}: one artifact for every shape "
                               "in the ranges")
    return options


def _dims_text(dims: Iterable[Any]) -> str:
    parts = []
    for dim in dims:
        if dim is None or (isinstance(dim, int) and dim < 0):
            parts.append("?")
        elif isinstance(dim, (tuple, list)):
            low, high = dim
            parts.append(f"{low}..{'' if high is None else high}")
        else:
            parts.append(str(int(dim)))
    return "x".join(parts)


def _option_values(keyword: str, value: Any) -> Tuple[str, List[str]]:
    if keyword not in _OPTIONS or keyword in _SHAPED:
        known = ", ".join(sorted(compile_options()))
        raise TypeError(f"kiln.compile() got an unexpected keyword argument '{keyword}'; "
                        f"it takes: {known}")
    option, arity, _ = _OPTIONS[keyword]
    if arity == "flag":
        if not isinstance(value, bool):
            raise TypeError(f"kiln.compile(): {keyword} takes True or False, not {value!r}")
        return option, ["true" if value else "false"]
    if arity == "list":
        values = [value] if isinstance(value, (str, os.PathLike)) else list(value)
        return option, [os.fspath(v) if isinstance(v, os.PathLike) else str(v) for v in values]
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    return option, [str(value)]


def _model_source(model: Any) -> Tuple[str, bytes]:
    """(name, bytes): the model's bytes, or its path and no bytes."""
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model), b""
    if isinstance(model, (bytes, bytearray, memoryview)):
        data = bytes(model)
        if not data:
            raise _kiln.InvalidArgument("the model's bytes are empty")
        return "<memory>.onnx", data
    serialize = getattr(model, "SerializeToString", None)
    if callable(serialize):  # onnx.ModelProto
        name = getattr(getattr(model, "graph", None), "name", "") or "model"
        return f"<{name}>.onnx", serialize()
    raise TypeError("kiln.compile(): model is a path, the bytes of an ONNX model or an "
                    f"onnx.ModelProto, not {type(model).__name__}")


@dataclass(frozen=True)
class TensorInfo:
    """An input or output of an artifact."""

    name: str
    #: NumPy's name of the element type ("float32"), "bfloat16" where NumPy has none.
    dtype: str
    #: The dimensions; None for one that varies from run to run.
    shape: Tuple[Optional[int], ...]
    #: The model's name of each dimension ("batch"), "" for a fixed one.
    symbols: Tuple[str, ...]
    #: Inputs: the (min, max) each dimension takes (max None: no upper bound).
    ranges: Tuple[Tuple[Optional[int], Optional[int]], ...]
    #: The bytes of the tensor (at the largest shape of a range).
    bytes: int


class Artifact:
    """A compiled model: what `kiln.compile` returns and `kiln.load` reads, verified. Sessions
    are made from it (`kiln.Session(artifact)`), as many as wanted, from any thread."""

    def __init__(self, data: bytes, name: str, report: str = "", warnings: str = ""):
        self._bytes = bytes(data)
        self._native = _kiln.NativeArtifact.from_bytes(self._bytes, name)
        self.name = name
        #: The compile report (fused kernels, library calls, memory plan), "" for a loaded file.
        self.report = report
        #: The compiler's warnings, "" when there were none.
        self.warnings = warnings
        self.inputs: List[TensorInfo] = [TensorInfo(**s) for s in self._native.inputs()]
        self.outputs: List[TensorInfo] = [TensorInfo(**s) for s in self._native.outputs()]

    @property
    def device(self) -> str:
        """"cpu" or "cuda": the device kind the artifact was compiled for."""
        return self._native.device

    @property
    def producer(self) -> str:
        return self._native.producer

    @property
    def source(self) -> str:
        """The model it was compiled from."""
        return self._native.source

    @property
    def arena_bytes(self) -> int:
        """The memory one run's intermediates take (the planned arena)."""
        return self._native.arena_bytes

    def to_bytes(self) -> bytes:
        return self._bytes

    def save(self, path: PathLike, *, overwrite: bool = False) -> None:
        """Writes the artifact to `path`; an existing file is kept unless `overwrite`."""
        path = os.fspath(path)
        mode = "wb" if overwrite else "xb"
        try:
            with open(path, mode) as file:
                file.write(self._bytes)
        except FileExistsError:
            raise _kiln.AlreadyExists(
                f"{path} already exists; pass overwrite=True to replace it") from None

    def __repr__(self) -> str:
        inputs = ", ".join(f"{i.name}: {i.dtype}{list(i.shape)}" for i in self.inputs)
        outputs = ", ".join(f"{o.name}: {o.dtype}{list(o.shape)}" for o in self.outputs)
        return f"kiln.Artifact({self.name!r}, {self.device}, ({inputs}) -> ({outputs}))"


def compile(model: Any, *, target: str = "cpu",
            shapes: Optional[Mapping[str, Sequence[Any]]] = None,
            shape_ranges: Optional[Mapping[str, Sequence[Any]]] = None,
            precision: str = "fp32", progress: bool = False, **options: Any) -> Artifact:
    """Compiles `model` (a path to an .onnx or .mlir file, the bytes of an ONNX model, or an
    `onnx.ModelProto`) into an Artifact.

    Every option of `kiln compile` is a keyword, named as its flag with '_' for '-'
    (`gpu_arch=["sm_90", "cuda-sim"]`, `memory_limit="256MiB"`, `conv_layout="nchw"`);
    `kiln.compile_options()` lists them. `shapes={"image": (1, 3, 224, 224)}` binds dynamic
    dimensions (None leaves one open); `shape_ranges={"ids": [(1, 8), (1, 512)]}` compiles one
    artifact for every shape in the ranges. The GIL is released while the model compiles.

    Raises kiln.CompileError with the compiler's diagnostics (each naming the file and node)
    when the model does not compile, kiln.NotFound for a missing file, TypeError for an
    unknown keyword and kiln.InvalidArgument for a value an option does not take.
    """
    if precision == "auto":
        raise _kiln.Unimplemented(
            "precision='auto' (the search within an accuracy budget) runs in `kiln compile "
            "--precision auto`; kiln.compile takes fp32, tf32, bf16 or fp16")
    pairs: List[Tuple[str, List[str]]] = [("target", [target]), ("precision", [precision])]
    for name, dims in (shapes or {}).items():
        pairs.append(("shape", [f"{name}={_dims_text(dims)}"]))
    for name, dims in (shape_ranges or {}).items():
        ranged = [d if isinstance(d, (tuple, list)) else (d, d) for d in dims]
        pairs.append(("shape-range", [f"{name}={_dims_text(ranged)}"]))
    for keyword, value in options.items():
        pairs.append(_option_values(keyword, value))
    name, data = _model_source(model)
    artifact, report, warnings = _kiln.compile_model(name, data, pairs, progress)
    return Artifact(artifact, name, report, warnings)


def load(path: PathLike) -> Artifact:
    """Reads and verifies a .kiln artifact. Raises kiln.NotFound for a missing file and
    kiln.DataLoss for one that is not a valid artifact."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as file:
            data = file.read()
    except FileNotFoundError:
        raise _kiln.NotFound(f"{path}: no such file") from None
    return Artifact(data, path)


class Session:
    """An artifact made ready to run on a device: "cpu", "cuda", "cuda:N" or "cuda-sim" (the
    simulated CUDA device, for a CUDA artifact compiled with "cuda-sim" among its gpu_arch).

    `run` may be called from many threads at once; on the CPU concurrent runs share the
    session's thread pool (`threads`: its size, counting the caller; None: every core).
    """

    def __init__(self, artifact: Union[Artifact, PathLike], device: str = "cpu",
                 threads: Optional[int] = None):
        if not isinstance(artifact, Artifact):
            artifact = load(artifact)
        if threads is not None and threads < 1:
            raise _kiln.InvalidArgument(f"threads is {threads}; a session needs at least one")
        self.artifact = artifact
        self.device = device
        self._native = _kiln.NativeSession(artifact._native, device, threads or 0)
        self._input_names = list(self._native.input_names)
        self._output_names = list(self._native.output_names)
        self._positions = {name: i for i, name in enumerate(self._output_names)}

    @property
    def inputs(self) -> List[TensorInfo]:
        return self.artifact.inputs

    @property
    def outputs(self) -> List[TensorInfo]:
        return self.artifact.outputs

    def run(self, feeds: Any, outputs: Any = None, *, out: Optional[Mapping[str, Any]] = None
            ) -> Any:
        """Runs the model once.

        `session.run({"x": x})` returns {output name: array}; `outputs=["y"]` keeps those.
        ONNX Runtime's order, `session.run(["y"] or None, {"x": x})`, returns a list in the
        order asked. Arrays are taken from NumPy, PyTorch, JAX or anything with `__dlpack__`
        or the buffer protocol, without a copy when they are C-contiguous host memory.

        `out={"y": array, ...}` (every output) writes the outputs into arrays the caller keeps
        and reuses, in place (writable, C-contiguous host arrays of each output's dtype and this
        run's shape), and returns them.
        """
        ort_order = not isinstance(feeds, Mapping) and isinstance(outputs, Mapping)
        if ort_order:
            feeds, outputs = outputs, feeds
        if not isinstance(feeds, Mapping):
            raise TypeError("Session.run(): the inputs are a dict {name: array}")
        unknown = [name for name in feeds if name not in self._input_names]
        if unknown:
            raise _kiln.InvalidArgument(
                f"the model has no input named '{unknown[0]}'; its inputs are: "
                f"{', '.join(self._input_names)}")
        missing = [name for name in self._input_names if name not in feeds]
        if missing:
            raise _kiln.InvalidArgument(
                f"input '{missing[0]}' is not given; the model's inputs are: "
                f"{', '.join(self._input_names)}")
        arrays = [_as_array(feeds[name], name, info.dtype)
                  for name, info in zip(self._input_names, self.artifact.inputs)]
        if out is not None:
            missing = [name for name in self._output_names if name not in out]
            unknown = [name for name in out if name not in self._positions]
            if missing or unknown:
                raise _kiln.InvalidArgument(
                    f"out= gives {'no array for output ' + repr(missing[0]) if missing else 'an array for ' + repr(unknown[0]) + ', which is not an output'}; "
                    f"the model's outputs are: {', '.join(self._output_names)}")
            targets = [out[name] for name in self._output_names]
            for name, target in zip(self._output_names, targets):
                if getattr(target, "requires_grad", False):
                    raise _kiln.InvalidArgument(f"output '{name}': the tensor to write it into "
                                                "requires grad")
            self._native.run_into(arrays, targets)
            results = targets
        else:
            results = self._native.run(arrays)
        if outputs is None:
            chosen = self._output_names
        else:
            chosen = [outputs] if isinstance(outputs, str) else list(outputs)
            for name in chosen:
                if name not in self._positions:
                    raise _kiln.InvalidArgument(
                        f"the model has no output named '{name}'; its outputs are: "
                        f"{', '.join(self._output_names)}")
        if ort_order:
            return [results[self._positions[name]] for name in chosen]
        return {name: results[self._positions[name]] for name in chosen}

    def statistics(self) -> Dict[str, int]:
        """Runs, threads, arenas and their bytes, and how many inputs had to be copied (not
        C-contiguous or misaligned host memory) over every run."""
        return dict(self._native.statistics())

    def __repr__(self) -> str:
        return f"kiln.Session({self.artifact.name!r}, device={self.device!r})"


def _as_array(value: Any, name: str, dtype: str) -> Any:
    """What the native run takes for an input: the object itself when nanobind reads it
    (buffer protocol, DLPack), else a NumPy array of it (lists, scalars) of the input's type."""
    if hasattr(value, "__dlpack__") or hasattr(value, "__array_interface__"):
        # A PyTorch tensor that needs grad cannot be exported; its data can.
        if getattr(value, "requires_grad", False):
            value = value.detach()
        return value
    import numpy

    try:
        return numpy.asarray(value, dtype=None if dtype == "bfloat16" else dtype)
    except Exception as error:  # noqa: BLE001 - named in the message
        raise _kiln.InvalidArgument(f"input '{name}' is not an array ({error})") from None


_torch_lock = threading.Lock()


def from_torch(module: Any, example_inputs: Sequence[Any], *,
               input_names: Optional[Sequence[str]] = None,
               output_names: Optional[Sequence[str]] = None,
               dynamic_shapes: Optional[Mapping[str, Mapping[int, str]]] = None,
               opset_version: int = 17, **compile_options: Any) -> Artifact:
    """Exports a PyTorch module to ONNX (TorchScript exporter) and compiles it.

    `dynamic_shapes={"x": {0: "batch"}}` keeps the named dimensions dynamic (give their
    ranges with `shape_ranges=`); other keywords go to `kiln.compile`."""
    import io

    import torch

    inputs = tuple(example_inputs)
    names = list(input_names or [f"input_{i}" for i in range(len(inputs))])
    buffer = io.BytesIO()
    with _torch_lock, torch.no_grad():
        torch.onnx.export(module, inputs, buffer, input_names=names,
                          output_names=list(output_names) if output_names else None,
                          dynamic_axes=dict(dynamic_shapes) if dynamic_shapes else None,
                          opset_version=opset_version, dynamo=False)
    return compile(buffer.getvalue(), **compile_options)
