"""Every element type through .npy, against NumPy itself: libnnn's typed
writer (nnn_npy_encode_typed) writes what np.save writes, byte for byte, for
each dtype; its typed reader keeps the bytes of what np.save wrote; the
float32 reader (nnnkit run's inputs) takes the new dtypes as their values;
and the Python package writes arrays into fields of another element type
only with their own dtype. Tensors of those types need a grown schema: the
end-to-end checks are in tests/drills/dense-f16/drill.sh."""

import ctypes
import io
import os

import numpy as np
import pytest

from conftest import cli

import nnnkit
from nnnkit import _lib
from nnnkit._lib import lib
from nnnkit.model import _typed_array

# dtype -> (nnn_ekind_t, width)
TYPES = {"<f2": (_lib.EK_FLOAT, 2), "<f4": (_lib.EK_FLOAT, 4), "<f8": (_lib.EK_FLOAT, 8),
         "|i1": (_lib.EK_INT, 1), "|u1": (_lib.EK_UINT, 1), "<i2": (_lib.EK_INT, 2), "<u2": (_lib.EK_UINT, 2),
         "<i4": (_lib.EK_INT, 4), "<u4": (_lib.EK_UINT, 4), "<i8": (_lib.EK_INT, 8), "<u8": (_lib.EK_UINT, 8)}


class Shape(ctypes.Structure):
    _fields_ = [("rank", ctypes.c_int32), ("dims", ctypes.c_int64 * 32)]


class Typed(ctypes.Structure):
    _fields_ = [("shape", Shape), ("bytes", ctypes.c_void_p), ("count", ctypes.c_size_t), ("kind", ctypes.c_int),
                ("width", ctypes.c_int), ("dtype", ctypes.c_char_p), ("data_at", ctypes.c_size_t)]


def encode(a, kind, width):
    """nnn_npy_encode_typed's bytes for array a."""
    s = Shape(a.ndim)
    for i, d in enumerate(a.shape):
        s.dims[i] = d
    buf, n = ctypes.c_void_p(), ctypes.c_size_t()
    raw = np.ascontiguousarray(a).tobytes()
    fn = lib.nnn_npy_encode_typed
    fn.argtypes = [ctypes.POINTER(Shape), ctypes.c_int, ctypes.c_int, ctypes.c_char_p, ctypes.POINTER(ctypes.c_void_p),
                   ctypes.POINTER(ctypes.c_size_t), ctypes.c_void_p]
    assert fn(ctypes.byref(s), kind, width, raw, ctypes.byref(buf), ctypes.byref(n), None) == 0
    out = ctypes.string_at(buf.value, n.value)
    _lib.libc_free(buf)
    return out


def numpy_bytes(a):
    f = io.BytesIO()
    np.save(f, a)
    return f.getvalue()


def sample(dtype, shape=(3, 5)):
    """Values of every bit pattern kind: random bytes (NaN payloads, -0,
    subnormals and extremes for the floats)."""
    r = np.random.default_rng(len(dtype) + ord(dtype[1]) * 16 + int(dtype[2]))
    n = int(np.prod(shape)) * np.dtype(dtype).itemsize
    return np.frombuffer(r.integers(0, 256, n, dtype=np.uint8).tobytes(), dtype).reshape(shape)


@pytest.mark.parametrize("dtype", sorted(TYPES))
def test_writer_is_numpys_and_reader_keeps_bytes(dtype):
    a = sample(dtype)
    kind, width = TYPES[dtype]
    assert encode(a, kind, width) == numpy_bytes(a)
    for shape in ((), (0,), (7,), (2, 1, 3)):
        b = sample(dtype, shape)
        assert encode(b, kind, width) == numpy_bytes(b), shape
    t = Typed()
    data = numpy_bytes(a)
    fn = lib.nnn_npy_read_typed_mem
    fn.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.POINTER(Typed), ctypes.c_void_p]
    assert fn(data, len(data), ctypes.byref(t), None) == 0
    assert (t.kind, t.width, t.count) == (kind, width, a.size)
    assert t.dtype.decode() == np.dtype(dtype).name
    assert ctypes.string_at(t.bytes, t.count * width) == a.tobytes()
    lib.nnn_npy_typed_free.argtypes = [ctypes.POINTER(Typed)]
    lib.nnn_npy_typed_free(ctypes.byref(t))


def test_bfloat16_is_written_as_uint16_bits():
    bits = np.array([0x3f80, 0x7fc1, 0x8000, 0xff80], "<u2")
    assert encode(bits, _lib.EK_BFLOAT, 2) == numpy_bytes(bits)


@pytest.mark.parametrize("dtype", ["<f2", "|i1", "<i2", "<u2", "<u4"])
def test_float32_reader_takes_new_dtypes(tmp_path, dtype):
    """nnnkit run's input, in float16, int8, ...: the values, exactly."""
    m = tmp_path / "id.nnn"
    nnnkit.Model.from_layers([{"id": "dense", "activation": "linear", "weights": np.eye(3, dtype=np.float32),
                               "bias": np.zeros(3, np.float32)}]).save(str(m))
    x = np.array([[1, 2, 3], [-4 if dtype[1] in "fi" else 4, 5, 6]], dtype)
    np.save(tmp_path / "x.npy", x)
    cli("run", str(m), "--input", str(tmp_path / "x.npy"), "--output", str(tmp_path / "y.npy"))
    assert np.array_equal(np.load(tmp_path / "y.npy"), x.astype(np.float32))


F16 = _lib.PRIM_NUMS | _lib.EK_FLOAT << 4 | 2
I8 = _lib.PRIM_NUMS | _lib.EK_INT << 4 | 1
BF16 = _lib.PRIM_NUMS | _lib.EK_BFLOAT << 4 | 2


def test_python_writes_typed_arrays_only_with_their_dtype():
    h = np.array([1.5, -0.0, np.nan], np.float16)
    assert _typed_array(h, F16, "w").tobytes() == h.tobytes()
    q = np.array([-128, 0, 127], np.int8)
    assert _typed_array(q, I8, "w").tobytes() == q.tobytes()
    bits = np.array([0x3f80], np.uint16)
    assert _typed_array(bits, BF16, "w").tobytes() == bits.tobytes()
    with pytest.raises(TypeError, match=r"weights: the field holds float16, the array is float32.*astype\(np.float16\)"):
        _typed_array(h.astype(np.float32), F16, "weights")
    with pytest.raises(TypeError, match=r"holds int8, the array is int16"):
        _typed_array(q.astype(np.int16), I8, "w")
    with pytest.raises(TypeError, match=r"bfloat16 \(as its raw bits, uint16\), the array is float32"):
        _typed_array(np.float32([1.0]), BF16, "w")


def test_float32_tensor_takes_float16_npy_exactly(tmp_path):
    """A float32 tensor takes a '<f2' file (every float16 is a float32):
    build from a spec naming it, and convert --tensors writes '<f4' back."""
    w = np.array([[0.1, -2.5e-8], [65504, -0.0]], np.float16)
    np.save(tmp_path / "w.npy", w)
    np.save(tmp_path / "b.npy", np.array([1, 2], np.int8))
    (tmp_path / "spec.json").write_text('{"layers": [{"id": "dense", "weights": "w.npy", "bias": "b.npy"}]}')
    cli("build", "--input-shape", "1,2", str(tmp_path / "spec.json"), str(tmp_path / "m.nnn"))
    m = nnnkit.load(str(tmp_path / "m.nnn"))
    assert m.layers[0].weights.data.tobytes() == w.astype(np.float32).tobytes()
    assert m.layers[0].bias.data.tobytes() == np.float32([1, 2]).tobytes()
    cli("convert", "--tensors", str(tmp_path / "t"), "--tensors-min", "1", str(tmp_path / "m.nnn"),
        str(tmp_path / "m.json"))
    back = np.load(tmp_path / "t" / "layers.0.weights.npy")
    assert back.dtype == np.float32 and back.tobytes() == w.astype(np.float32).tobytes()
