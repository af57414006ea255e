"""Model.to_safetensors and nnnkit.load of a .safetensors file: the bytes
round-trip, the file is the CLI's, and a checkpoint nnnkit did not write is
a FormatError naming its tensors (docs/safetensors.md)."""

import json
import os
import pickle
import struct

import numpy as np
import pytest

import nnnkit
from conftest import REAL, REAL_FILES, cli
from test_core import conv_layers


def _header(path):
    data = open(path, "rb").read()
    n = struct.unpack("<Q", data[:8])[0]
    return json.loads(data[8:8 + n]), data[8 + n:]


def test_round_trip_is_byte_exact(tmp_path):
    src = tmp_path / "m.nnn"
    nnnkit.Model.from_layers(conv_layers(), description="conv then dense").save(src)
    m = nnnkit.load(src)
    st = tmp_path / "m.safetensors"
    m.to_safetensors(st)
    back = nnnkit.load(st)
    assert back.encode() == open(src, "rb").read()
    assert np.array_equal(back.layers[0].kernels.data, m.layers[0].kernels.data)
    # The CLI writes the same file, and reads this one back to the same bytes.
    cli("convert", str(src), str(tmp_path / "cli.safetensors"))
    assert open(tmp_path / "cli.safetensors", "rb").read() == open(st, "rb").read()
    cli("convert", str(st), str(tmp_path / "back.nnn"))
    assert open(tmp_path / "back.nnn", "rb").read() == open(src, "rb").read()
    # Standard safetensors: each tensor by name, dtype and shape, its bytes the model's.
    header, buf = _header(st)
    t = header["layers.0.kernels"]
    assert t["dtype"] == "F32" and t["shape"] == [4, 3, 2, 3]
    b, e = t["data_offsets"]
    assert np.array_equal(np.frombuffer(buf[b:e], "<f4").reshape(4, 3, 2, 3), m.layers[0].kernels.data)
    assert header["__metadata__"]["format"] == "nnn"
    # In-memory models pickle as their bytes.
    assert pickle.loads(pickle.dumps(back)).encode() == back.encode()


def test_real_files_round_trip(tmp_path):
    for name in REAL_FILES:
        path = os.path.join(REAL, name)
        if not os.path.isfile(path):
            pytest.skip(f"real corpus not found at {REAL}: skipped (set NNN_REAL_CORPUS to run it)")
        st = tmp_path / (name + ".safetensors")
        nnnkit.load(path).to_safetensors(st)
        assert nnnkit.Model.from_safetensors(open(st, "rb").read()).encode() == open(path, "rb").read()


def test_a_checkpoint_is_a_format_error(tmp_path):
    header = json.dumps({"w": {"dtype": "F16", "shape": [2, 2], "data_offsets": [0, 8]}}).encode()
    path = tmp_path / "hf.safetensors"
    path.write_bytes(struct.pack("<Q", len(header)) + header + bytes(8))
    with pytest.raises(nnnkit.FormatError) as e:
        nnnkit.load(path)
    assert e.value.code == "E_SAFETENSORS" and "w (F16, [2, 2])" in str(e.value)
