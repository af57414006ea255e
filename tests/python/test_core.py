"""nnnkit's core: loading (zero-copy), fields, repr, validate, run, plans,
building and writing, errors. Expectations come from the real files and
their expected outputs, the C CLI, NumPy and byte-exact round trips."""

import ctypes
import gc
import json
import os
import shutil
import subprocess
import sys
import threading
import time

import numpy as np
import pytest

import nnnkit
from nnnkit import _lib
from conftest import BUILD, REAL_FILES, ROOT, cli



def rng(seed=0):
    return np.random.default_rng(seed)


def dense_net(seed=0):
    """Weights of a 6-16-5-3 net and its NumPy forward pass (float64)."""
    r = rng(seed)
    w1, b1 = r.standard_normal((6, 16), dtype=np.float32), r.standard_normal(16, dtype=np.float32)
    w2, b2 = r.standard_normal((16, 5), dtype=np.float32), r.standard_normal(5, dtype=np.float32)
    w3, b3 = r.standard_normal((5, 3), dtype=np.float32), r.standard_normal(3, dtype=np.float32)
    layers = [
        {"id": "dense", "activation": "relu", "weights": w1, "bias": b1},
        {"id": "dense", "activation": {"id": "leaky_relu", "tau": 0.1}, "weights": w2, "bias": b2},
        {"id": "dense", "activation": "softmax", "weights": w3, "bias": b3},
    ]

    def forward(x):
        x = x.astype(np.float64)
        h = np.maximum(x @ w1 + b1, 0)
        z = h @ w2 + b2
        h = np.where(z > 0, z, np.float64(np.float32(0.1)) * z)
        z = h @ w3 + b3
        e = np.exp(z - z.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)
    return layers, forward


@pytest.fixture
def saved(tmp_path):
    """A small dense model written to a file."""
    layers, _ = dense_net()
    path = tmp_path / "m.nnn"
    nnnkit.Model.from_layers(layers, description="three dense layers").save(path)
    return str(path)


def conv_layers(seed=3):
    """A Conv (3x2 kernels, 4 filters, valid) with tanh, then a Dense on its
    flattened output, for inputs [batch, 5, 5, 3]."""
    r = rng(seed)
    return [
        {"id": "conv", "kernels": r.standard_normal((4, 3, 2, 3), dtype=np.float32),
         "bias": r.standard_normal(4, dtype=np.float32), "activation": "tanh", "padding_dims": [0, 0, 0, 0]},
        {"id": "dense", "weights": r.standard_normal((3 * 4 * 4, 2), dtype=np.float32),
         "bias": r.standard_normal(2, dtype=np.float32), "flatten": True},
    ]


@pytest.fixture(scope="module")
def conv(tmp_path_factory):
    """conv_layers() written to a file: its path."""
    path = tmp_path_factory.mktemp("conv") / "conv.nnn"
    nnnkit.Model.from_layers(conv_layers(), description="conv").save(path)
    return str(path)


def mapped(path):
    """Whether the file is mapped in this process (/proc/self/maps)."""
    real = os.path.realpath(path)
    with open("/proc/self/maps") as f:
        return any(line.rstrip("\n").endswith(" " + real) for line in f)


# ---- the real corpus ----

@pytest.mark.parametrize("name", REAL_FILES)
def test_real_files_run_as_expected(real, name, tmp_path):
    folder, expected = real
    e = expected[name]
    path = os.path.join(folder, name)
    m = nnnkit.load(path)
    x = np.array(e["input"], dtype=np.float32).reshape(e["input_shape"])
    y = m.run(x)
    assert y.dtype == np.float32 and y.shape == tuple(e["output_shape"])
    np.testing.assert_allclose(y, np.array(e["output"], dtype=np.float64), rtol=1e-5, atol=1e-6)
    # The CLI's outputs, bit for bit.
    np.save(tmp_path / "x.npy", x)
    cli("run", path, "--input", str(tmp_path / "x.npy"), "-o", str(tmp_path / "y.npy"))
    assert np.load(tmp_path / "y.npy").tobytes() == y.tobytes()
    # Read back byte for byte: encode, the JSON form, and the spec form from the fields.
    data = open(path, "rb").read()
    assert m.encode() == data
    assert nnnkit.Model.from_json(m.to_json()).encode() == data
    again = nnnkit.Model.from_layers([layer.to_dict() for layer in m.layers], description=m.description)
    assert again.encode() == data


@pytest.mark.parametrize("name", REAL_FILES)
def test_repr_reads_like_nnnkit_info(real, name):
    path = os.path.join(real[0], name)
    assert repr(nnnkit.load(path)) + "\n" == cli("info", path)


def test_repr_table_of_every_valid_conformance_file_is_the_clis(manifest):
    folder, cases = manifest
    for c in cases:
        if c["valid"]:
            path = os.path.join(folder, c["file"])
            mine = repr(nnnkit.load(path)).split("\n")
            theirs = cli("info", path).rstrip("\n").split("\n")
            start = theirs.index(next(line for line in theirs if line.startswith("#  type")))
            assert mine[mine.index(theirs[start]):] == theirs[start:], c["file"]
            assert [line for line in mine if line.startswith("parameters:")] == \
                [line for line in theirs if line.startswith("parameters:")]


# ---- fields ----

def test_fields_are_the_schemas(real):
    path = os.path.join(real[0], "tictactoedemo.nnn")
    m = nnnkit.load(path)
    # The JSON form names every field; the records hold the same values.
    form = json.loads(cli("convert", path, "-"))

    def same(rec, obj, where):
        assert list(rec.keys()) == list(obj.keys()), where
        for k, v in obj.items():
            mine = rec[k]
            if isinstance(v, dict):
                same(mine, v, f"{where}.{k}")
            elif isinstance(v, list) and v and isinstance(v[0], dict):
                assert len(mine) == len(v)
                for i, (a, b) in enumerate(zip(mine, v)):
                    same(a, b, f"{where}.{k}[{i}]")
            elif isinstance(mine, np.ndarray):
                assert mine.ravel().tobytes() == np.array(v, dtype=np.float32).tobytes(), f"{where}.{k}"
            elif isinstance(mine, float):
                assert np.float32(mine) == np.float32(v), f"{where}.{k}"
            elif isinstance(mine, tuple):
                assert list(mine) == v, f"{where}.{k}"
            else:
                assert mine == v, f"{where}.{k}"
    same(m.record, form, "model")
    layer = m.layers[0]
    assert layer.id == "dense" and layer.activation.id == "leaky_relu"
    assert layer.weights.data.shape == layer.weights.dims == (10, 256)
    assert layer.neurons == 256 and m.param_count == sum(t.data.size for L in m.layers for t in (L.bias, L.weights))
    with pytest.raises(AttributeError):
        layer.no_such_field
    with pytest.raises(AttributeError):
        layer.neurons = 3


def test_enum_values_are_their_names(manifest):
    # Every valid file: its IDs read as the schema names them.
    folder, cases = manifest
    for c in cases:
        if c["valid"]:
            for layer in nnnkit.load(os.path.join(folder, c["file"])).layers:
                assert isinstance(layer.id, str) and isinstance(layer.activation.id, str)


# ---- zero copy ----

def test_tensors_view_the_files_mapping(saved):
    m = nnnkit.load(saved)
    addr, size = m._handle.bytes_range()
    w = m.layers[1].weights.data
    at = w.__array_interface__["data"][0]
    assert addr <= at and at + w.nbytes <= addr + size, "the array lies outside the file's bytes"
    assert not w.flags.owndata and not w.flags.writeable
    with pytest.raises(ValueError):
        w[0, 0] = 1
    whole = np.frombuffer((ctypes.c_char * size).from_address(addr), dtype=np.uint8)
    assert np.shares_memory(whole, w)
    assert not np.shares_memory(w, m.layers[1].bias.data)
    # The bytes at that place are the file's.
    data = open(saved, "rb").read()
    assert data[at - addr:at - addr + w.nbytes] == w.tobytes()
    del whole
    # The mapping lives as long as an array does, and no longer.
    want = w.copy()
    assert mapped(saved)
    m.close()
    del m
    gc.collect()
    assert mapped(saved)
    assert (w == want).all()
    del w
    gc.collect()
    assert not mapped(saved)


def test_copy_owns_its_memory(saved, tmp_path):
    path = str(tmp_path / "c.nnn")
    shutil.copy(saved, path)
    zero = nnnkit.load(saved)
    m = nnnkit.load(path, copy=True)
    assert not mapped(path)
    os.remove(path)
    w = m.layers[0].weights.data
    addr, size = m._handle.bytes_range()
    at = w.__array_interface__["data"][0]
    assert addr <= at < addr + size and not w.flags.writeable
    assert w.tobytes() == zero.layers[0].weights.data.tobytes()
    assert not np.shares_memory(w, zero.layers[0].weights.data)
    assert m.encode() == zero.encode()


# ---- round trips and building ----

def test_from_layers_equals_numpy(tmp_path):
    layers, forward = dense_net(1)
    m = nnnkit.Model.from_layers(layers, description="numpy")
    x = rng(2).standard_normal((7, 6), dtype=np.float32)
    np.testing.assert_allclose(m.run(x), forward(x), rtol=1e-5, atol=1e-6)
    assert m.validate((7, 6)) == [] and m.shapes((7, 6)) == [(7, 16), (7, 5), (7, 3)]
    assert m.description == "numpy" and m.layers[1].activation.tau == np.float32(0.1)
    # The arrays went in bit for bit.
    assert m.layers[0].weights.data.tobytes() == layers[0]["weights"].tobytes()
    m.save(tmp_path / "m.nnn")
    data = open(tmp_path / "m.nnn", "rb").read()
    assert data == m.encode() and nnnkit.load(tmp_path / "m.nnn").encode() == data
    assert nnnkit.Model.from_json(m.to_json()).encode() == data


def test_from_layers_conv_equals_numpy():
    layers = conv_layers()
    k, b = layers[0]["kernels"], layers[0]["bias"]
    w, c = layers[1]["weights"], layers[1]["bias"]
    m = nnnkit.Model.from_layers(layers)
    x = rng(8).standard_normal((2, 5, 5, 3), dtype=np.float32)
    win = np.lib.stride_tricks.sliding_window_view(x.astype(np.float64), (3, 2), axis=(1, 2))  # b,3,4,c,3,2
    h = np.tanh(np.einsum("bhwcij,fijc->bhwf", win, k.astype(np.float64)) + b)
    want = h.reshape(2, -1) @ w + c
    np.testing.assert_allclose(m.run(x), want, rtol=1e-5, atol=1e-5)
    assert m.layers[0].filters == 4 and m.layers[0].padding_type == "valid"
    assert m.layers[1].neurons == 2 and m.layers[1].flatten is True


def test_from_layers_fills_padding_from_its_type():
    # same pads k - 1 in all, (k - 1) // 2 before (format.md): kernels 3x2 give [1, 1, 0, 1]
    layers = conv_layers()
    del layers[0]["padding_dims"]
    layers[0]["padding_type"] = "same"
    layers[1]["weights"] = rng(9).standard_normal((5 * 5 * 4, 2), dtype=np.float32)
    m = nnnkit.Model.from_layers(layers)
    assert list(m.layers[0].padding_dims) == [1, 1, 0, 1]
    assert m.shapes((2, 5, 5, 3)) == [(2, 5, 5, 4), (2, 2)]


def test_special_floats_round_trip():
    w = np.array([[np.nan, np.inf], [-np.inf, -0.0]], dtype=np.float32)
    w.view(np.uint32)[0, 0] = 0xFFC01234  # a NaN with sign and payload
    m = nnnkit.Model.from_layers([{"id": "dense", "weights": w, "bias": np.zeros(2, np.float32),
                                   "activation": {"id": "leaky_relu", "tau": np.float32(-0.0)}}])
    assert str(m.layers[0].activation.tau) == "-0.0"
    assert m.layers[0].weights.data.tobytes() == w.tobytes()
    assert nnnkit.Model.from_json(m.to_json()).encode() == m.encode()
    found = m.validate(check_finite=True)
    assert {p.code for p in found} == {"E_RANGE"}
    assert {p.path for p in found} >= {"layers[0].weights.data[0]", "layers[0].weights.data[1]",
                                       "layers[0].weights.data[2]"}


# ---- validate, shapes, errors ----

def test_truncated_file_is_a_format_error_where_the_cli_says(saved, tmp_path):
    data = open(saved, "rb").read()
    cut = tmp_path / "cut.nnn"
    cut.write_bytes(data[:len(data) // 2])
    with pytest.raises(nnnkit.FormatError) as e:
        nnnkit.load(cut)
    theirs = json.loads(cli("validate", "--json", str(cut), check=False))["error"]
    assert e.value.code == theirs["code"] == "E_TRUNCATED"
    assert (e.value.path, e.value.offset) == (theirs["path"], theirs["offset"])
    assert e.value.status == 10 and str(cut) in str(e.value) and e.value.problems
    # The whole file's problems, as `nnnkit validate --json` lists them.
    found = nnnkit.validate(cut)
    listed = json.loads(cli("validate", "--json", str(cut), check=False))["problems"]
    assert [(p.code, p.path or "", p.offset, p.message) for p in found] == \
        [(q["code"], q["path"] or "", q["offset"], q["message"]) for q in listed]


def test_errors_carry_codes_and_paths(saved, tmp_path):
    m = nnnkit.load(saved)
    with pytest.raises(nnnkit.ValidationError) as e:
        m.run(np.zeros((2, 5)))
    assert e.value.code == "E_INPUT_SHAPE" and e.value.path.startswith("layers[0]")
    with pytest.raises(nnnkit.ValidationError) as e:
        m.shapes((1, 5))
    assert e.value.code == "E_INPUT_SHAPE"
    p = m.plan((1, 6))
    with pytest.raises(nnnkit.UsageError) as e:
        p.run(np.zeros((2, 6), np.float32))
    assert isinstance(e.value, ValueError) and e.value.code == "E_USAGE"
    with pytest.raises(nnnkit.FileError) as e:
        nnnkit.load(tmp_path / "missing.nnn")
    assert isinstance(e.value, OSError) and e.value.code == "E_IO"
    with pytest.raises(nnnkit.FormatError) as e:
        nnnkit.Model.from_layers([{"id": "dense", "activation": "relux", "weights": np.ones((2, 2), np.float32)}])
    assert (e.value.code, e.value.path) == ("E_UNKNOWN_ID", "layers[0].activation.id")
    with pytest.raises(nnnkit.FormatError) as e:
        nnnkit.Model.from_layers([{"id": "dense", "weights": np.ones((2, 2), np.float32),
                                   "bias": np.ones(2, np.float32), "colour": 1}])
    assert (e.value.code, e.value.path) == ("E_JSON_UNKNOWN", "layers[0].colour")
    with pytest.raises(nnnkit.ValidationError) as e:
        nnnkit.Model.from_layers([{"id": "dense", "weights": np.ones((2, 3), np.float32),
                                   "bias": np.ones(2, np.float32)}])
    assert (e.value.code, e.value.path) == ("E_SHAPE", "layers[0].bias.dims[0]")
    with pytest.raises(nnnkit.FormatError) as e:
        nnnkit.Model.from_json('{"description": 3}')
    assert e.value.code == "E_JSON_TYPE" and e.value.problems[0].line == 1
    m.close()
    with pytest.raises(nnnkit.UsageError):
        m.run(np.zeros((1, 6)))
    p.close()
    with pytest.raises(nnnkit.UsageError):
        p.run(np.zeros((1, 6), np.float32))


def test_validate_reports_every_problem_as_the_cli(manifest):
    folder, cases = manifest
    c = next(c for c in cases if c["kind"] == "semantic")
    path = os.path.join(folder, c["file"])
    found = nnnkit.load(path).validate()
    listed = json.loads(cli("validate", "--json", path, check=False))["problems"]
    assert [(p.code, p.path or "", p.offset, p.message) for p in found] == \
        [(q["code"], q["path"] or "", q["offset"], q["message"]) for q in listed]
    assert str(found[0]).startswith(found[0].path)


def test_an_errors_text_counts_the_problems_it_does_not_show(manifest):
    folder, cases = manifest
    c = next(c for c in cases if c["kind"] == "semantic")
    p = nnnkit.load(os.path.join(folder, c["file"])).validate()[0]
    one, two = nnnkit.Error(p.status, [p, p]), nnnkit.Error(p.status, [p, p, p])
    assert str(one) == f"{p.text} (and 1 more problem)" and str(two) == f"{p.text} (and 2 more problems)"


def test_shapes_are_the_engines(conv):
    m = nnnkit.load(conv)
    shown = cli("validate", "--input-shape", "2,5,5,3", conv)
    shapes = m.shapes((2, 5, 5, 3))
    assert shapes == [(2, 3, 4, 4), (2, 2)]
    assert f"output shape [{', '.join(map(str, shapes[-1]))}]" in shown
    partial = m.shapes()
    assert partial[0][-1] is not None and None in partial[0]
    assert m.fixed_input() is None  # a Conv's spatial sizes stay open


def test_fixed_input_is_infos():
    layers, _ = dense_net(1)
    m = nnnkit.Model.from_layers(layers)
    assert m.fixed_input() == (1, 6)
    assert "input [1, 6] -> output [1, 3] (the input the layers fix, with a batch of 1)" in repr(m)
    md = m._repr_markdown_()  # what Jupyter shows: nnnkit info --markdown
    assert md.startswith("- **file**: (in memory, ") and "\n| 0 | Dense | neurons=16 flatten=false | " in md


# ---- running ----

def test_run_takes_anything_float32_convertible_and_batches(conv, tmp_path):
    m = nnnkit.load(conv)
    x = rng(4).standard_normal((7, 5, 5, 3))
    whole = m.run(x)
    assert whole.dtype == np.float32
    assert m.run(x.tolist()).tobytes() == whole.tobytes()
    assert m.run(np.asfortranarray(x)).tobytes() == whole.tobytes()
    np.save(tmp_path / "x.npy", x.astype(np.float32))
    cli("run", conv, "--input", str(tmp_path / "x.npy"), "--batch", "3", "-o", str(tmp_path / "y.npy"))
    assert m.run(x, batch=3).tobytes() == np.load(tmp_path / "y.npy").tobytes()
    cli("run", conv, "--input", str(tmp_path / "x.npy"), "-o", str(tmp_path / "y.npy"))
    assert whole.tobytes() == np.load(tmp_path / "y.npy").tobytes()


def test_channels_first_data_are_told_to_transpose(conv):
    """Data as PyTorch takes them, [N, C, H, W], for a model of channels-last
    [N, H, W, C]: the error says to transpose them (issue 33), and they then run."""
    m = nnnkit.load(conv)
    x = rng(5).standard_normal((2, 3, 5, 5)).astype(np.float32)
    with pytest.raises(nnnkit.ValidationError) as e:
        m.run(x)
    assert ("found 3 channels, but the incoming last axis has 5 (from the input shape [2, 3, 5, 5] given); it looks "
            "channels-first (axis 1 has the 3 channels) and nnn takes channels-last [N, d.., C]: transpose the data "
            "with x.transpose(0, 2, 3, 1)") in str(e.value)
    assert m.run(x.transpose(0, 2, 3, 1)).shape == (2, 2)


def test_threads_give_the_same_bits(real, conv):
    m = nnnkit.load(os.path.join(real[0], "tictactoedemo.nnn"))
    x = rng(5).standard_normal((64, 10)).astype(np.float32)
    assert m.run(x, threads=2).tobytes() == m.run(x, threads=1).tobytes()
    c = nnnkit.load(conv)
    xc = rng(6).standard_normal((16, 5, 5, 3)).astype(np.float32)
    assert c.run(xc, threads=2).tobytes() == c.run(xc).tobytes()


def test_plans_run_from_several_threads(conv):
    m = nnnkit.load(conv)
    xs = [rng(i).standard_normal((4, 5, 5, 3)).astype(np.float32) for i in range(4)]
    want = [m.run(x) for x in xs]
    got = [None] * len(xs)

    def work(i):
        with m.plan(xs[i].shape) as p:
            for _ in range(20):
                got[i] = p.run(xs[i])
    threads = [threading.Thread(target=work, args=(i,)) for i in range(len(xs))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert [g.tobytes() for g in got] == [w.tobytes() for w in want]


def test_plan_reuses_out_and_converts_inputs(conv):
    m = nnnkit.load(conv)
    p = m.plan((2, 5, 5, 3))
    assert p.input_shape == (2, 5, 5, 3) and p.output_shape == m.shapes((2, 5, 5, 3))[-1]
    x = rng(7).standard_normal((2, 5, 5, 3))
    out = np.empty(p.output_shape, np.float32)
    assert p.run(x, out) is out
    assert out.tobytes() == m.run(x).tobytes()
    frozen = x.astype(np.float32)
    frozen.flags.writeable = False
    assert p.run(frozen).tobytes() == out.tobytes()
    with pytest.raises(nnnkit.UsageError):
        p.run(x, np.empty((3, 3), np.float32))


def test_version_is_the_librarys():
    assert nnnkit.__version__ == _lib.lib.nnn_version().decode() and nnnkit.__version__[0].isdigit()
    assert nnnkit.__version__ in cli("--version")


def test_errors_pickle_with_their_problems(saved):
    import pickle
    m = nnnkit.load(saved)
    with pytest.raises(nnnkit.ValidationError) as e:
        m.run(np.zeros((1, 4)))
    again = pickle.loads(pickle.dumps(e.value))
    assert type(again) is nnnkit.ValidationError and str(again) == str(e.value)
    assert (again.code, again.path, again.offset, again.problems) == \
        (e.value.code, e.value.path, e.value.offset, e.value.problems)


def test_an_empty_batch_gives_an_empty_output(saved):
    m = nnnkit.load(saved)
    y = m.run(np.zeros((0, 6)))
    assert y.shape == (0, 3) and y.dtype == np.float32


def test_every_public_name_has_a_docstring():
    missing = []
    for name in nnnkit.__all__:
        obj = getattr(nnnkit, name)
        if name == "__version__":
            continue
        if not (obj.__doc__ or "").strip():
            missing.append(name)
        if isinstance(obj, type):
            for attr, member in vars(obj).items():
                if attr.startswith("_") and attr not in ("__init__",):
                    continue
                if callable(member) or isinstance(member, (property, classmethod, staticmethod)):
                    if not (getattr(member, "__doc__", None) or "").strip():
                        missing.append(f"{name}.{attr}")
    assert not missing, f"no docstring: {missing}"
    assert nnnkit.__doc__


def test_from_bytes_and_pickle_keep_the_bytes(saved, real):
    import pickle
    for path in (saved, os.path.join(real[0], "2dmovedemo.nnn")):
        data = open(path, "rb").read()
        m = nnnkit.load(path)
        made = nnnkit.Model.from_bytes(data)
        assert made.encode() == data
        # In memory: pickled as its bytes.
        again = pickle.loads(pickle.dumps(made))
        assert again.encode() == data and again.path is None
        x = np.ones((3, len(m.layers[0].weights.data)), np.float32)
        assert again.run(x).tobytes() == m.run(x).tobytes()
    with pytest.raises(nnnkit.FormatError) as e:
        nnnkit.Model.from_bytes(data[:-1])
    theirs = json.loads(cli("validate", "--json", "-", check=False, input=data[:-1]))["error"]
    assert (e.value.code, e.value.path, e.value.offset) == (theirs["code"], theirs["path"], theirs["offset"])


# What Ray's map_batches and Spark's predict_batch_udf do with a model a
# task closes over: cloudpickle it, send it to another process, unpickle it
# there (Ray and Spark are not in Debian: their recipes in docs/python.md
# rest on this).
RECEIVER = """
import pickle, sys
import numpy as np
f = pickle.loads(sys.stdin.buffer.read())
sys.stdout.buffer.write(f(np.ones((2, 28, 28, 1), np.float32)).tobytes())
"""


def test_a_loaded_model_pickles_as_its_path_and_maps_it_again(tmp_path):
    import pickle
    cloudpickle = pytest.importorskip("cloudpickle", reason="needs python3-cloudpickle")
    path = tmp_path / "m.nnn"
    subprocess.run([os.path.join(BUILD, "mkexample"), str(path)], check=True)
    m = nnnkit.load(path)
    blob = cloudpickle.dumps(lambda x: m.run(x))
    size = os.path.getsize(path)
    assert len(blob) < 2000 < size, f"the task pickles to {len(blob)} bytes for a {size}-byte model"
    env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
    r = subprocess.run([sys.executable, "-c", RECEIVER], input=blob, capture_output=True, env=env, cwd=tmp_path)
    assert r.returncode == 0, r.stderr.decode()
    assert r.stdout == m.run(np.ones((2, 28, 28, 1), np.float32)).tobytes()

    again = pickle.loads(pickle.dumps(m))
    assert again.path == str(path) and again.encode() == m.encode()
    # A different file at the path on the other side: refused, not run.
    blob = pickle.dumps(m)
    data = bytearray(path.read_bytes())
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    with pytest.raises(nnnkit.FileError, match="not the file this model was pickled from"):
        pickle.loads(blob)


def test_conv_compat_original_is_the_clis(conv, tmp_path):
    m = nnnkit.load(conv)  # 3x2 kernels: the original framework sums some taps twice
    x = rng(9).standard_normal((3, 5, 5, 3)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    cli("run", conv, "--input", str(tmp_path / "x.npy"), "--conv-compat", "original", "-o", str(tmp_path / "y.npy"))
    original = m.run(x, conv_compat="original")
    assert original.tobytes() == np.load(tmp_path / "y.npy").tobytes()
    assert original.tobytes() != m.run(x).tobytes()
    with m.plan(x.shape, conv_compat="original") as p:
        assert p.run(x).tobytes() == original.tobytes()
    with pytest.raises(nnnkit.UsageError):
        m.run(x, conv_compat="yes")


def schema_names():
    """Every field name and enum value name of the schema, from libnnn's descriptors."""
    names, seen = set(), set()

    def walk(rd):
        if rd.name in seen:
            return
        seen.add(rd.name)
        for f in _lib.fields(rd):
            names.add(f.name.decode())
            if f.kind in (_lib.FK_ENUM, _lib.FK_VARIANT):
                t = f.type.contents
                names.update(n.decode() for n in map(t.value_name, range(256)) if n)
            if f.kind in (_lib.FK_RECORD, _lib.FK_ARRAY):
                walk(f.rec.contents)
            for k in range(f.nvariants if f.kind == _lib.FK_VARIANT else 0):
                walk(f.variants[k].rec.contents)
    walk(_lib.model_desc)
    return names


def test_the_package_restates_no_field_or_id():
    """No string in the core modules is a field name or an enum value's name
    (docstrings aside): the format comes from libnnn's descriptors."""
    import ast
    names = schema_names()
    assert {"layers", "weights", "dense", "relu", "padding_type"} <= names
    folder = os.path.dirname(nnnkit.__file__)
    found = []
    for module in ("__init__.py", "errors.py", "model.py"):  # _lib.py: C declarations
        text = open(os.path.join(folder, module)).read()
        lines = text.split("\n")
        tree = ast.parse(text)
        docs = {id(n.body[0].value) for n in ast.walk(tree)
                if isinstance(n, (ast.Module, ast.ClassDef, ast.FunctionDef)) and n.body
                and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)}
        for n in ast.walk(tree):
            if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs and n.value in names \
                    and "__array_interface__" not in lines[n.lineno - 1]:  # NumPy's keys ("data")
                found.append(f"{module}:{n.lineno}: {n.value!r}")
    assert not found, found


def test_save_is_atomic(saved, tmp_path):
    m = nnnkit.load(saved)
    with pytest.raises(nnnkit.FileError) as e:
        m.save(tmp_path / "no" / "such" / "folder.nnn")
    assert e.value.code == "E_IO" and "folder.nnn" in str(e.value)
    out = tmp_path / "out"
    out.mkdir()
    (out / "m.nnn").write_bytes(b"old")
    m.save(out / "m.nnn")
    assert os.listdir(out) == ["m.nnn"] and (out / "m.nnn").read_bytes() == m.encode()


def test_run_releases_the_gil():
    # Another Python thread keeps running during the C call: its clock
    # readings fall in the middle of the call. Were the GIL held, it could
    # run only at the call's edges (within a switch interval).
    r = rng(11)
    m = nnnkit.Model.from_layers([{"id": "dense", "weights": r.standard_normal((512, 512), dtype=np.float32),
                                   "bias": np.zeros(512, np.float32)}] * 4)
    x = r.standard_normal((2048, 512)).astype(np.float32)
    old = sys.getswitchinterval()
    sys.setswitchinterval(0.001)
    try:
        with m.plan(x.shape) as p:
            for _ in range(10):
                stamps, stop = [], threading.Event()

                def spin():
                    while not stop.is_set():
                        stamps.append(time.perf_counter())
                t = threading.Thread(target=spin)
                t.start()
                while not stamps:  # the spinner is running
                    time.sleep(0.001)
                t0 = time.perf_counter()
                p.run(x)
                t1 = time.perf_counter()
                stop.set()
                t.join()
                span = t1 - t0
                inside = [s for s in stamps if t0 + 0.3 * span < s < t0 + 0.7 * span]
                if span > 0.02 and len(inside) > 10:
                    return
    finally:
        sys.setswitchinterval(old)
    pytest.fail("no other thread ran during Plan.run: the GIL was held")


def test_a_model_made_in_memory_has_no_offsets():
    """Problems of a model built from arrays (or JSON) name the field, never
    a byte offset its records do not have (they once said @0x0, @0x4)."""
    with pytest.raises(nnnkit.ValidationError) as e:
        nnnkit.Model.from_layers([{"id": "dense", "weights": np.ones((2, 3), np.float32),
                                   "bias": np.ones(2, np.float32)}])
    assert e.value.path == "layers[0].bias.dims[0]" and e.value.offset is None and "@" not in str(e.value)
    m = nnnkit.Model.from_layers([{"id": "dense", "weights": np.ones((2, 3), np.float32),
                                   "bias": np.ones(3, np.float32)}])
    (p,) = m.validate(input_shape=(1, 5))
    assert p.offset is None and "@" not in str(p) and "(from the input shape [1, 5] given)" in str(p)
    # The same model from its bytes has them.
    (q,) = nnnkit.Model.from_bytes(m.encode()).validate(input_shape=(1, 5))
    assert q.offset is not None and q.message == p.message
