"""Kiln from Python: compile a model ahead of time, run it in a session.

    import kiln
    artifact = kiln.compile("model.onnx", shapes={"image": (1, 3, 224, 224)})
    session = kiln.Session(artifact)
    outputs = session.run({"image": image})          # {"logits": numpy.ndarray}

`kiln.compile` takes every option `kiln compile` takes (`kiln.compile_options()` lists them),
from the same table the command line's flags are bound from. Inputs are taken without a copy
from any array that speaks the buffer protocol or DLPack (NumPy, PyTorch, JAX) when it is
C-contiguous host memory; outputs are NumPy arrays over the runtime's own memory, which
`torch.from_dlpack` wraps without a copy. Errors are `kiln.Error` subclasses named after their
status code (`kiln.InvalidArgument`, `kiln.NotFound`, `kiln.DataLoss`, ...); a model that does
not compile raises `kiln.CompileError` with the compiler's diagnostics.
"""



def _share_the_nvidia_wheels_libraries() -> None:
    """PyTorch's wheels bring their own CUDA libraries (the nvidia-* packages: cudart, cuDNN,
    NCCL). Where they are installed, Kiln's native module uses those copies too: the dynamic
    loader keeps one library per name, so a module loaded first with the system's (older) copy
    would leave PyTorch, imported after it, with symbols missing."""
    import ctypes
    import importlib.util
    import os

    try:
        spec = importlib.util.find_spec("nvidia")
    except (ImportError, ValueError):
        return
    for root in (spec.submodule_search_locations or []) if spec else []:
        for library in ("cu13/lib/libcudart.so.13", "cudnn/lib/libcudnn.so.9",
                        "nccl/lib/libnccl.so.2"):
            path = os.path.join(root, library)
            if os.path.exists(path):
                ctypes.CDLL(path)


_share_the_nvidia_wheels_libraries()

from ._kiln import (  # noqa: E402,F401  (re-exported)
    Aborted,
    AlreadyExists,
    Cancelled,
    CompileError,
    DataLoss,
    DeadlineExceeded,
    Error,
    FailedPrecondition,
    Internal,
    InvalidArgument,
    NotFound,
    OutOfRange,
    PermissionDenied,
    ResourceExhausted,
    Unavailable,
    Unimplemented,
    Unknown,
)
from ._api import (  # noqa: E402,F401
    Artifact,
    Session,
    TensorInfo,
    compile,
    compile_options,
    from_torch,
    load,
)
from ._kiln import version as _version  # noqa: E402

__version__ = _version()

__all__ = [
    "Artifact",
    "CompileError",
    "Error",
    "Session",
    "TensorInfo",
    "compile",
    "compile_options",
    "from_torch",
    "load",
    "InvalidArgument",
    "NotFound",
    "DataLoss",
    "Unimplemented",
    "Unavailable",
    "FailedPrecondition",
    "ResourceExhausted",
    "OutOfRange",
    "Internal",
]
