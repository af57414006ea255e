"""nnnkit.from_torch against PyTorch itself: every supported kind of module
gives the outputs PyTorch gives (within 1e-5, absolute and relative) on the
same inputs moved to channels-last; everything else is refused, naming the
module."""

import os

import pytest

torch = pytest.importorskip("torch", reason="PyTorch (Debian's python3-torch) is not installed")
np = pytest.importorskip("numpy")
nn = torch.nn

import nnnkit  # noqa: E402
from nnnkit.torch import activation_names  # noqa: E402

TOL = 1e-5
# PyTorch warns that 'same' with an even kernel pads a copy: what is tested here.
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same' with even kernel:UserWarning")


def channels_last(t):
    """PyTorch's [N, C, d1..dn] as nnnkit's [N, d1..dn, C] (as is at rank 2)."""
    return (t.movedim(1, -1) if t.dim() > 2 else t).contiguous().numpy()


def check(net, shape, batch=3, seed=0, batched=False):
    """Converts net for inputs of PyTorch shape `shape` (without the batch axis,
    unless batched), runs both on the same random batch, and returns the model,
    the input and PyTorch's output (channels-last) after comparing outputs."""
    torch.manual_seed(seed)
    net = net.eval()
    model = nnnkit.from_torch(net, shape)
    x = torch.randn(tuple(shape) if batched else (batch,) + tuple(shape))
    with torch.no_grad():
        want = channels_last(net(x))
    got = model.run(channels_last(x))
    assert got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL)
    return model, x, want


def acts(model):
    return [L.activation.id if hasattr(L.activation, "id") else L.activation for L in model.layers]


# ---- what converts ----

CONVS = {1: nn.Conv1d, 2: nn.Conv2d, 3: nn.Conv3d}
SPATIAL = {1: (9,), 2: (7, 6), 3: (5, 4, 6)}


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("padding", ["valid", "same", "int", "tuple", "zero"])
def test_conv_paddings(n, padding):
    k = {1: (3,), 2: (3, 5), 3: (3, 1, 3)}[n]
    p = {"valid": "valid", "same": "same", "int": 1 if len(set(k)) == 1 else "same",
         "tuple": tuple((v - 1) // 2 for v in k), "zero": 0}[padding]
    net = nn.Sequential(CONVS[n](2, 4, k, padding=p), nn.ReLU(), CONVS[n](4, 3, 2, padding="same"))
    model, _, _ = check(net, (2,) + SPATIAL[n])
    assert [L.id for L in model.layers] == ["conv", "conv"]
    assert acts(model) == ["relu", "linear"]


@pytest.mark.parametrize("n", [1, 2, 3])
def test_flatten_linear_after_conv(n):
    # PyTorch flattens (c, d1..dn), nnnkit (d1..dn, c): the rows are permuted.
    net = nn.Sequential(CONVS[n](3, 5, 2), nn.Tanh(), nn.Flatten(), nn.Dropout(0.5), nn.Linear(5 * int(np.prod(
        [d - 1 for d in SPATIAL[n]])), 4), nn.Softmax(dim=1))
    model, _, _ = check(net, (3,) + SPATIAL[n])
    assert model.layers[1].flatten is True
    assert acts(model) == ["tanh", "softmax"]


def test_flatten_first():
    net = nn.Sequential(nn.Flatten(), nn.Linear(2 * 3 * 4, 5), nn.Sigmoid())
    check(net, (2, 2, 3, 4), batched=True)  # a leading Flatten: the shape has its batch axis


def test_linear_activations_and_dropout():
    net = nn.Sequential(nn.Linear(6, 8), nn.Dropout(0.2), nn.LeakyReLU(0.3), nn.Linear(8, 8), nn.Sigmoid(),
                        nn.Dropout(), nn.Linear(8, 5), nn.Tanh(), nn.Linear(5, 4), nn.Softmax(dim=-1),
                        nn.Linear(4, 3))
    model, _, _ = check(net, (6,))
    assert acts(model)[:4] == ["leaky_relu", "sigmoid", "tanh", "softmax"] and acts(model)[4] == "linear"
    assert model.layers[0].activation.tau == pytest.approx(0.3)


def test_every_mapped_activation_is_the_librarys():
    """Every activation from_torch writes is one libnnn knows (the schema's),
    and every PyTorch class it maps converts. An activation the schema gains
    later converts once it is mapped; until then its PyTorch module is
    refused by name (the growth drills add one with no test edited)."""
    seen = set()
    for act in (nn.ReLU(), nn.LeakyReLU(0.05), nn.Sigmoid(), nn.Tanh(), nn.Softmax(dim=1), nn.Identity()):
        model, _, _ = check(nn.Sequential(nn.Conv1d(2, 3, 3), act), (2, 8))
        seen.update(acts(model))
    assert seen == set(nnnkit.torch._ACTIVATIONS.values()) | {nnnkit.torch._IDENTITY}
    assert seen <= set(activation_names())


def test_softmax_over_conv_channels():
    check(nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.Softmax(dim=1)), (2, 5, 5))
    check(nn.Sequential(nn.Conv2d(2, 4, 3, padding=1), nn.Softmax(dim=-3)), (2, 5, 5))


def test_nested_sequential_no_bias_and_batched_shape():
    net = nn.Sequential(nn.Sequential(nn.Conv2d(1, 3, 3, bias=False), nn.ReLU()),
                        nn.Sequential(nn.Flatten(), nn.Sequential(nn.Linear(3 * 4 * 4, 2, bias=False))))
    model, _, _ = check(net, (1, 6, 6))
    assert not model.layers[0].bias.data.any()  # the bias PyTorch does not have: zeros
    m2 = nnnkit.from_torch(net.eval(), (7, 1, 6, 6))  # with the batch axis: the same model
    assert m2.encode() == model.encode()


def test_description():
    m = nnnkit.from_torch(nn.Sequential(nn.Linear(2, 2)), (2,), description="two by two")
    assert m.description == "two by two"


def test_saved_model_reloads(tmp_path):
    net = nn.Sequential(nn.Conv2d(2, 3, 3, padding="same"), nn.LeakyReLU(0.1), nn.Flatten(), nn.Linear(3 * 5 * 4, 6),
                        nn.Softmax(dim=1))
    model, x, want = check(net, (2, 5, 4))
    path = tmp_path / "net.nnn"
    model.save(str(path))
    again = nnnkit.load(str(path))
    assert not again.validate()
    got = again.run(channels_last(x))
    np.testing.assert_array_equal(got, model.run(channels_last(x)))
    np.testing.assert_allclose(got, want, rtol=TOL, atol=TOL)


# ---- what is refused ----

class Custom(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 2)

    def forward(self, x):
        return self.fc(x) * 2


REFUSED = [
    # (net, input shape, what the message names, a word of the reason)
    (nn.Sequential(nn.Conv2d(2, 3, 3, stride=2)), (2, 8, 8), "module 0 (Conv2d)", "stride"),
    (nn.Sequential(nn.Linear(2, 2), nn.ReLU(), nn.Conv1d(1, 1, 1)), (2,), "module 2 (Conv1d)", "spatial"),
    (nn.Sequential(nn.Conv1d(2, 3, 3, dilation=2)), (2, 8), "module 0 (Conv1d)", "dilation"),
    (nn.Sequential(nn.Conv2d(2, 4, 3, groups=2)), (2, 8, 8), "module 0 (Conv2d)", "groups"),
    (nn.Sequential(nn.Conv2d(2, 4, 3, padding=1, padding_mode="reflect")), (2, 8, 8), "module 0 (Conv2d)",
     "padding_mode"),
    (nn.Sequential(nn.Conv1d(2, 4, 4, padding=1)), (2, 8), "module 0 (Conv1d)", "padding"),
    (nn.Sequential(nn.Conv2d(2, 4, 3, padding=(1, 0))), (2, 8, 8), "module 0 (Conv2d)", "padding"),
    (nn.Sequential(nn.Conv2d(2, 4, 3, padding=7)), (2, 8, 8), "module 0 (Conv2d)", "padding"),
    (nn.Sequential(nn.Conv2d(1, 2, 3), nn.BatchNorm2d(2)), (1, 8, 8), "module 1 (BatchNorm2d)", "fold"),
    (nn.Sequential(nn.Conv2d(1, 2, 3), nn.ReLU(), nn.MaxPool2d(2)), (1, 8, 8), "module 2 (MaxPool2d)", "pooling"),
    (nn.Sequential(nn.Linear(3, 3), nn.GELU()), (3,), "module 1 (GELU)", "nn.ReLU"),
    (nn.Sequential(nn.ReLU(), nn.Linear(3, 3)), (3,), "module 0 (ReLU)", "before any"),
    (nn.Sequential(nn.Linear(3, 3), nn.ReLU(), nn.Sigmoid()), (3,), "module 2 (Sigmoid)", "second activation"),
    (nn.Sequential(nn.Conv1d(2, 3, 3), nn.Softmax(dim=-1)), (2, 8), "module 1 (Softmax)", "channels"),
    (nn.Sequential(nn.Conv1d(2, 3, 3), nn.Softmax(dim=2)), (2, 8), "module 1 (Softmax)", "channels"),
    (nn.Sequential(nn.Conv1d(2, 3, 3), nn.Flatten(), nn.Softmax(dim=1)), (2, 8), "module 2 (Softmax)", "channels"),
    (nn.Sequential(nn.Linear(3, 3), nn.Softmax()), (3,), "module 1 (Softmax)", "dim=None"),
    (nn.Sequential(nn.Conv1d(2, 3, 3), nn.Linear(6, 2)), (2, 8), "module 1 (Linear)", "nn.Flatten()"),
    (nn.Sequential(nn.Conv1d(2, 3, 3), nn.ReLU(), nn.Flatten()), (2, 8), "module 2 (Flatten)", "no linear"),
    (nn.Sequential(nn.Conv2d(1, 2, 3), nn.Flatten(2)), (1, 8, 8), "module 1 (Flatten)", "start_dim"),
    (nn.Sequential(nn.ConvTranspose1d(2, 3, 3)), (2, 8), "module 0 (ConvTranspose1d)", "transposed"),
    (nn.Sequential(nn.Linear(4, 4), Custom()), (4,), "module 1 (Custom)", "nn.Sequential"),
    (Custom(), (4,), "module Custom", "nn.Sequential"),
    (nn.Sequential(nn.Dropout()), (4,), "module Sequential", "nothing to convert"),
]


@pytest.mark.parametrize("net, shape, names, reason", REFUSED, ids=[r[2] + " " + r[3] for r in REFUSED])
def test_refused(net, shape, names, reason):
    with pytest.raises(nnnkit.UnsupportedModuleError) as e:
        nnnkit.from_torch(net, shape)
    assert isinstance(e.value, nnnkit.Error) and isinstance(e.value, TypeError)
    assert e.value.code == "E_USAGE"
    text = str(e.value)
    assert names in text, text
    assert reason.lower() in text.lower(), text


def test_refusal_pickles():
    import pickle
    with pytest.raises(nnnkit.UnsupportedModuleError) as e:
        nnnkit.from_torch(nn.Sequential(nn.Linear(3, 3), nn.GELU()), (3,))
    again = pickle.loads(pickle.dumps(e.value))
    assert type(again) is nnnkit.UnsupportedModuleError and str(again) == str(e.value)
    assert (again.module, again.module_class, again.code) == ("1", "GELU", "E_USAGE")


def test_nested_names_are_dotted():
    net = nn.Sequential(nn.Linear(3, 3), nn.Sequential(nn.ReLU(), nn.Sequential(nn.ELU())))
    with pytest.raises(nnnkit.UnsupportedModuleError, match=r"module 1\.1\.0 \(ELU\)") as e:
        nnnkit.from_torch(net, (3,))
    assert e.value.module == "1.1.0" and e.value.module_class == "ELU"


def fake_linear(*args):
    """An nn.Linear made under PyTorch's FakeTensorMode (tensors with shapes
    and no data), or a skip where this PyTorch has none."""
    try:
        from torch._subclasses import FakeTensorMode
    except ImportError:
        pytest.skip("this PyTorch has no torch._subclasses.FakeTensorMode")
    with FakeTensorMode():
        return nn.Linear(*args)


NO_DATA = [
    # (net, input shape, what the message names)
    (lambda: nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)).to("meta"), (3,),
     ["module 0 (Linear)", "weight", "meta"]),
    (lambda: nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2, device="meta")), (3,),
     ["module 2 (Linear)", "weight", "meta"]),
    (lambda: nn.Sequential(nn.Conv1d(2, 3, 3), nn.Sequential(nn.Conv1d(3, 3, 1, device="meta"))), (2, 8),
     ["module 1.0 (Conv1d)", "weight", "meta"]),
    (lambda: nn.Sequential(fake_linear(3, 2)), (3,), ["module 0 (Linear)", "weight", "fake"]),
]


@pytest.mark.parametrize("make, shape, names", NO_DATA, ids=["meta", "meta-last", "meta-nested", "fake"])
def test_tensors_without_data_are_refused(make, shape, names):
    # A module on the meta device (or of fake tensors) has shapes but no
    # values: refused up front with nnnkit's own error, saying what to do,
    # not PyTorch's NotImplementedError from reading it.
    net = make()
    with pytest.raises(nnnkit.UnsupportedModuleError) as e:
        nnnkit.from_torch(net, shape)
    assert isinstance(e.value, nnnkit.Error) and e.value.code == "E_USAGE"
    text = str(e.value)
    for name in names:
        assert name in text, text
    assert "to_empty(device='cpu')" in text and "load_state_dict" in text, text


def test_a_meta_module_materialised_converts():
    # What the refusal says to do works: to_empty, then the weights.
    real = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2)).to("meta")
    net = net.to_empty(device="cpu")
    net.load_state_dict(real.state_dict())
    x = torch.randn(5, 3)
    with torch.no_grad():
        want = real(x).numpy()
    np.testing.assert_allclose(nnnkit.from_torch(net, (3,)).run(x.numpy()), want, rtol=TOL, atol=TOL)


@pytest.mark.parametrize("net, shape", [
    (nn.Sequential(nn.Conv2d(3, 2, 3)), (2, 8, 8)),       # in_channels 3, the input has 2
    (nn.Sequential(nn.Conv2d(3, 2, 3)), (8, 8)),          # not a Conv2d input at all
    (nn.Sequential(nn.Linear(3, 2)), (4,)),               # in_features 3, the input has 4
    (nn.Sequential(nn.Conv1d(1, 1, 9)), (1, 4)),          # the kernel is larger than the input
])
def test_shapes_that_do_not_fit(net, shape):
    with pytest.raises(nnnkit.UsageError):
        nnnkit.from_torch(net, shape)


def test_nnnkit_imports_without_torch():
    """torch is imported by from_torch alone: without it nnnkit imports, and
    from_torch says what it needs."""
    import subprocess
    import sys
    code = ("import sys; sys.modules['torch'] = None\n"
            "import nnnkit\n"
            "assert issubclass(nnnkit.UnsupportedModuleError, TypeError)\n"
            "try:\n"
            "    nnnkit.from_torch(object(), (1,))\n"
            "except ImportError as e:\n"
            "    print(e)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                       env=dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path)))
    assert r.returncode == 0, r.stderr
    assert "from_torch needs PyTorch" in r.stdout
