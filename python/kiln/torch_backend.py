"""`torch.compile(module, backend="kiln")`: each graph dynamo captures is exported to ONNX,
compiled by Kiln for the CPU and run through a session, its tensors crossing without copies
(DLPack). A graph Kiln cannot take runs eagerly instead, and the reason is said once.

The backend is registered under the name "kiln" through the package's `torch_dynamo_backends`
entry point (an installed wheel), and again when this module is imported.
"""

from __future__ import annotations

import io
import threading
import warnings
from typing import Any, Callable, List, Sequence

import torch

from . import _api, _kiln

_said = set()
_said_lock = threading.Lock()
_counts = {"compiled": 0, "eager": 0}


def statistics() -> dict:
    """How many captured graphs the backend compiled with Kiln, and how many it left to run
    eagerly."""
    with _said_lock:
        return dict(_counts)


def _say_once(reason: str) -> None:
    with _said_lock:
        _counts["eager"] += 1
        if reason in _said:
            return
        _said.add(reason)
    warnings.warn(f"kiln: a graph runs eagerly: {reason}", RuntimeWarning, stacklevel=3)


def _export(gm: torch.fx.GraphModule, example_inputs: Sequence[torch.Tensor],
            names: List[str]) -> bytes:
    buffer = io.BytesIO()
    with _api._torch_lock, torch.no_grad():
        torch.onnx.export(gm, tuple(example_inputs), buffer, input_names=names,
                          opset_version=17, dynamo=False)
    return buffer.getvalue()


def _compile_graph(gm: torch.fx.GraphModule, example_inputs: Sequence[Any],
                   **compile_options: Any) -> Callable[..., Any]:
    inputs = list(example_inputs)
    if not all(isinstance(x, torch.Tensor) for x in inputs):
        _say_once("an input is not a tensor (symbolic sizes are not exported)")
        return gm.forward
    if any(x.device.type != "cpu" for x in inputs):
        _say_once("the backend compiles for the CPU and an input is on " +
                  next(str(x.device) for x in inputs if x.device.type != "cpu"))
        return gm.forward
    names = [f"input_{i}" for i in range(len(inputs))]
    try:
        model = _export(gm, inputs, names)
        artifact = _api.compile(model, **compile_options)
        session = _api.Session(artifact)
    except (_kiln.Error, RuntimeError, TypeError, ValueError) as error:
        first = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        _say_once(f"{type(error).__name__}: {first}")
        return gm.forward
    output_names = [o.name for o in artifact.outputs]
    input_names = [i.name for i in artifact.inputs]
    # An input the exporter dropped (unused by the graph) is not fed.
    positions = [names.index(name) for name in input_names]
    structure = _output_structure(gm)
    with _said_lock:
        _counts["compiled"] += 1

    def run(*args: torch.Tensor) -> Any:
        feeds = {name: args[position].detach() for name, position in zip(input_names, positions)}
        results = session.run(feeds)
        tensors = [torch.from_dlpack(results[name]) for name in output_names]
        if structure is tuple:
            return tuple(tensors)
        if structure is list:
            return tensors
        return tensors[0]

    return run


def _output_structure(gm: torch.fx.GraphModule) -> Any:
    """tuple, list or None (a single tensor): what the graph's forward returns."""
    for node in gm.graph.nodes:
        if node.op == "output":
            value = node.args[0]
            return type(value) if isinstance(value, (tuple, list)) else None
    return None


def kiln_backend(gm: torch.fx.GraphModule, example_inputs: Sequence[Any],
                 **compile_options: Any) -> Callable[..., Any]:
    """A dynamo backend: compiles the captured graph with Kiln, or returns it to run eagerly
    (saying why once) when it cannot: inputs that are not CPU tensors, an export or a compile
    that fails. Dynamo hands backends fake tensors; the export needs real ones of their shapes
    and types (fake_tensor_unsupported makes them)."""
    from torch._dynamo.backends.common import fake_tensor_unsupported

    return fake_tensor_unsupported(_compile_graph)(gm, example_inputs, **compile_options)


def _register() -> None:
    try:
        from torch._dynamo import list_backends, register_backend
    except ImportError:  # a torch without dynamo
        return
    if "kiln" not in list_backends(exclude_tags=()):
        register_backend(name="kiln")(kiln_backend)


_register()
