"""Every element type through the session both ways, from NumPy and from PyTorch, and the
copies that are not made: inputs read in place, outputs handed to NumPy and PyTorch over the
runtime's own memory."""
import numpy as np
import pytest
import torch
from onnx import TensorProto

import kiln
from conftest import elementwise_model

# (ONNX type, NumPy dtype or None, PyTorch dtype or None)
TYPES = [
    (TensorProto.FLOAT, np.float32, torch.float32),
    (TensorProto.FLOAT16, np.float16, torch.float16),
    (TensorProto.DOUBLE, np.float64, torch.float64),
    (TensorProto.BFLOAT16, None, torch.bfloat16),
    (TensorProto.INT8, np.int8, torch.int8),
    (TensorProto.INT16, np.int16, torch.int16),
    (TensorProto.INT32, np.int32, torch.int32),
    (TensorProto.INT64, np.int64, torch.int64),
    (TensorProto.UINT8, np.uint8, torch.uint8),
    (TensorProto.UINT16, np.uint16, None),
    (TensorProto.UINT32, np.uint32, None),
    (TensorProto.UINT64, np.uint64, None),
]

_sessions = {}


def session_for(elem_type, op="Add"):
    key = (elem_type, op)
    if key not in _sessions:
        _sessions[key] = kiln.Session(kiln.compile(elementwise_model(op, elem_type)), threads=1)
    return _sessions[key]


def seeded(dtype, seed, shape=(2, 3, 4)):
    rng = np.random.default_rng(seed)
    if np.issubdtype(dtype, np.floating):
        return rng.uniform(-4, 4, shape).astype(dtype)
    info = np.iinfo(dtype)
    return rng.integers(max(info.min, -60), min(info.max, 60), shape, endpoint=True).astype(dtype)


@pytest.mark.parametrize("elem_type,np_dtype,torch_dtype",
                         [t for t in TYPES if t[1] is not None],
                         ids=lambda v: getattr(v, "__name__", str(v)))
def test_numpy_in_and_out_without_copies(elem_type, np_dtype, torch_dtype):
    session = session_for(elem_type)
    x, z = seeded(np_dtype, 1), seeded(np_dtype, 2)
    copied = session.statistics()["copied_inputs"]
    y = session.run({"x": x, "z": z})["y"]
    assert isinstance(y, np.ndarray) and y.dtype == np_dtype and y.shape == x.shape
    np.testing.assert_array_equal(y, x + z)
    assert session.statistics()["copied_inputs"] == copied, "a contiguous input was copied"
    # PyTorch and NumPy's own DLPack consumer wrap the output's memory, not a copy of it.
    assert torch.from_dlpack(y).data_ptr() == y.ctypes.data
    assert np.from_dlpack(y).ctypes.data == y.ctypes.data


@pytest.mark.parametrize("elem_type,np_dtype,torch_dtype",
                         [t for t in TYPES if t[2] is not None],
                         ids=lambda v: str(v))
def test_torch_tensors_in_and_out(elem_type, np_dtype, torch_dtype):
    session = session_for(elem_type)
    generator = torch.Generator().manual_seed(elem_type)
    if torch_dtype.is_floating_point:
        x = (torch.rand((2, 3, 4), generator=generator) * 8 - 4).to(torch_dtype)
        z = (torch.rand((2, 3, 4), generator=generator) * 8 - 4).to(torch_dtype)
    else:
        low = 0 if torch_dtype == torch.uint8 else -60
        x = torch.randint(low, 60, (2, 3, 4), generator=generator).to(torch_dtype)
        z = torch.randint(low, 60, (2, 3, 4), generator=generator).to(torch_dtype)
    copied = session.statistics()["copied_inputs"]
    y = session.run({"x": x, "z": z})["y"]
    assert session.statistics()["copied_inputs"] == copied, "a contiguous tensor was copied"
    out = torch.from_dlpack(y)
    assert out.dtype == torch_dtype
    torch.testing.assert_close(out, x + z, rtol=0, atol=0)


def test_bool_tensors():
    session = session_for(TensorProto.BOOL, op="Xor")
    rng = np.random.default_rng(4)
    x, z = rng.integers(0, 2, (2, 3, 4)).astype(bool), rng.integers(0, 2, (2, 3, 4)).astype(bool)
    y = session.run({"x": x, "z": z})["y"]
    assert y.dtype == np.bool_
    np.testing.assert_array_equal(y, x ^ z)
    t = session.run({"x": torch.from_numpy(x), "z": torch.from_numpy(z)})["y"]
    np.testing.assert_array_equal(t, x ^ z)


def test_strided_and_transposed_inputs_are_copied_and_still_right():
    session = session_for(TensorProto.FLOAT)
    base = seeded(np.float32, 9, shape=(2, 3, 8))
    x = base[:, :, ::2]  # every other element: not contiguous
    z = seeded(np.float32, 10, shape=(4, 3, 2)).transpose(2, 1, 0)
    assert not x.flags.c_contiguous and not z.flags.c_contiguous
    copied = session.statistics()["copied_inputs"]
    y = session.run({"x": x, "z": z})["y"]
    np.testing.assert_array_equal(y, x + z)
    assert session.statistics()["copied_inputs"] == copied + 2
    tx = torch.from_numpy(base)[:, :, 1::2]
    y = session.run({"x": tx, "z": np.ascontiguousarray(z)})["y"]
    np.testing.assert_array_equal(y, tx.numpy() + z)


def test_lists_and_a_read_only_array_are_inputs_too():
    session = session_for(TensorProto.FLOAT)
    x = seeded(np.float32, 12)
    x.setflags(write=False)
    y = session.run({"x": x, "z": x.tolist()})["y"]
    np.testing.assert_array_equal(y, x + x)


def test_outputs_are_written_into_arrays_the_caller_keeps():
    session = session_for(TensorProto.FLOAT)
    y = np.full((2, 3, 4), -7.0, np.float32)
    address = y.ctypes.data
    for seed in (20, 21):
        x, z = seeded(np.float32, seed), seeded(np.float32, seed + 100)
        result = session.run({"x": x, "z": z}, out={"y": y})
        assert result["y"] is y and y.ctypes.data == address
        np.testing.assert_array_equal(y, x + z)
    # A PyTorch tensor takes the output in place as well.
    t = torch.empty((2, 3, 4))
    session.run({"x": x, "z": z}, out={"y": t})
    np.testing.assert_array_equal(t.numpy(), x + z)
    with pytest.raises(kiln.InvalidArgument, match="output 'y'.*f32\\[2, 3, 5\\]"):
        session.run({"x": x, "z": z}, out={"y": np.empty((2, 3, 5), np.float32)})
    with pytest.raises(kiln.InvalidArgument, match="no array for output 'y'"):
        session.run({"x": x, "z": z}, out={})
    with pytest.raises(kiln.InvalidArgument, match="C-contiguous"):
        session.run({"x": x, "z": z}, out={"y": np.empty((2, 3, 8), np.float32)[:, :, ::2]})
