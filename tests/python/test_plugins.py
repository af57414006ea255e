"""Plugins from Python: the builtin plugins found as the CLI finds them, and
the example plugin (examples/plugin-pool-swish, built here against this
tree's headers and generator, as tests/unit/test_conformance.c builds it) given
with plugins=: its layer and activation IDs decode, their fields appear
(from the plugin's own record descriptors), run as NumPy computes them, and
read back byte for byte."""

import os

import numpy as np
import pytest

import nnnkit
from conftest import cli


def pool_layers(seed=0):
    r = np.random.default_rng(seed)
    return [
        {"id": "conv", "kernels": r.standard_normal((3, 2, 2, 2), dtype=np.float32),
         "bias": r.standard_normal(3, dtype=np.float32), "padding_dims": [0, 0, 0, 0]},
        {"id": "maxpool", "activation": {"id": "swish", "beta": 1.5}, "bias": r.standard_normal(3, dtype=np.float32),
         "pool": [2, 2], "stride": [2, 1]},
    ]


def reference(layers, x):
    """NumPy's forward pass (as examples/plugin-pool-swish/reference.py computes it)."""
    k, b = layers[0]["kernels"].astype(np.float64), layers[0]["bias"]
    win = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), (2, 2), axis=(1, 2))
    h = np.einsum("bhwcij,fijc->bhwf", win, k) + b
    win = np.lib.stride_tricks.sliding_window_view(h, (2, 2), axis=(1, 2))[:, ::2, ::1]
    h = win.max(axis=(4, 5)) + layers[1]["bias"]
    return h / (1 + np.exp(-np.float64(np.float32(1.5)) * h))


def test_builtin_plugins_run_the_core_types():
    m = nnnkit.Model.from_layers([{"id": "dense", "weights": np.eye(2, dtype=np.float32),
                                   "bias": np.zeros(2, np.float32)}])
    assert "builtin.so" in repr(m).split("\n")[-1]


def test_example_plugin_from_python(poolswish, tmp_path):
    layers = pool_layers()
    with pytest.raises(nnnkit.FormatError) as e:
        nnnkit.Model.from_layers(layers)
    assert e.value.code == "E_UNKNOWN_ID" and e.value.path == "layers[1].id"
    m = nnnkit.Model.from_layers(layers, plugins=[poolswish])
    layer = m.layers[1]
    assert (layer.id, layer.activation.id) == ("maxpool", "swish")
    assert layer.pool == (2, 2) and layer.stride == (2, 1) and layer.activation.beta == np.float32(1.5)
    x = np.random.default_rng(1).standard_normal((2, 7, 6, 2), dtype=np.float32)
    np.testing.assert_allclose(m.run(x), reference(layers, x), rtol=1e-5, atol=1e-5)
    assert m.shapes(x.shape)[-1] == (2, 3, 4, 3)
    path = tmp_path / "pool.nnn"
    m.save(path)
    with pytest.raises(nnnkit.FormatError) as e:
        nnnkit.load(path)
    assert e.value.code == "E_UNKNOWN_ID"
    again = nnnkit.load(path, plugins=[poolswish])
    assert again.encode() == path.read_bytes() == m.encode()
    assert nnnkit.Model.from_json(again.to_json(), plugins=[poolswish]).encode() == m.encode()
    assert nnnkit.Model.from_layers([L.to_dict() for L in again.layers], plugins=[poolswish]).encode() == m.encode()
    np.testing.assert_array_equal(again.run(x), m.run(x))
    # The CLI with the same plugin: the same table, the same outputs.
    table = cli("--plugin", poolswish, "info", str(path)).rstrip("\n").split("\n")
    mine = repr(again).split("\n")
    assert mine[-3:] == table[-3:] and "poolswish.so" in mine[-1]
    np.save(tmp_path / "x.npy", x)
    cli("--plugin", poolswish, "run", str(path), "--input", str(tmp_path / "x.npy"), "-o", str(tmp_path / "y.npy"))
    assert np.load(tmp_path / "y.npy").tobytes() == again.run(x).tobytes()


def test_a_plugin_that_does_not_load_is_a_plugin_error(tmp_path):
    bad = tmp_path / "bad.so"
    bad.write_bytes(b"not a shared object")
    os.chmod(bad, 0o755)
    with pytest.raises(nnnkit.PluginError) as e:
        nnnkit.Model.from_layers([{"id": "dense", "weights": np.eye(2, dtype=np.float32),
                                   "bias": np.zeros(2, np.float32)}], plugins=[bad])
    assert e.value.code == "E_PLUGIN" and "bad.so" in str(e.value)
