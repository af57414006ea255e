"""PyTorch models to .nnn: from_torch.

An ``nn.Sequential`` of Conv1d/2d/3d, Linear, Flatten, Dropout and the
activations nnnkit has becomes a channels-last nnnkit model whose outputs
equal PyTorch's on transposed inputs: where PyTorch takes ``[N, C, d1..dn]``
the model takes ``[N, d1..dn, C]`` (and gives its outputs in that layout).

PyTorch is imported only when from_torch is called: nnnkit imports without it.
"""

import ctypes

import numpy as np

from . import _lib
from .errors import Error, usage

__all__ = ["from_torch", "UnsupportedModuleError"]


class UnsupportedModuleError(Error, TypeError):
    """A module from_torch cannot convert.

    The message names the module (its index in the Sequential, dotted for
    nested ones, and its class), why, and what to do instead. ``.module`` is
    that index (a str), ``.module_class`` the class name.
    """

    def __init__(self, index, module, why):
        """index: the module's name in the Sequential (None for the top
        module); module: the module itself, or its class name; why: the
        reason and the remedy."""
        cls = module if isinstance(module, str) else type(module).__name__
        where = "module %s (%s)" % (index, cls) if index is not None else "module %s" % cls
        # E_USAGE, as for any bad argument: the status pycore's usage() gives.
        super().__init__(usage("").status, (), message="%s: %s" % (where, why))
        self.module = index
        self.module_class = cls
        self.why = why

    def __reduce__(self):
        # Picklable like every nnnkit.Error, with this class's own arguments.
        return (type(self), (self.module, self.module_class, self.why))


# PyTorch's activation classes by the name of nnnkit's activation (the
# schema's activation_id names). Names the library does not know are dropped
# at conversion time, and a name the library knows but no class maps to is
# flagged by the tests, so the table follows the schema.
_ACTIVATIONS = {
    "ReLU": "relu",
    "LeakyReLU": "leaky_relu",
    "Sigmoid": "sigmoid",
    "Tanh": "tanh",
    "Softmax": "softmax",
}
# What a layer without an activation gets: the schema's identity.
_IDENTITY = "linear"
_DROPOUTS = ("Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout")


def _enum_names(type_symbol):
    """Every value name of one of libnnn's enums (nnn_type_t.names), in order."""
    t = _lib.Type.in_dll(_lib.lib, type_symbol)
    return [n.strip().strip('"') for n in t.names.decode().split(",") if n.strip()]


def activation_names():
    """The names of the activations libnnn knows (the schema's), in ID order."""
    return _enum_names("nnn_type_activation_id")


def _padding_type(kernel, pads):
    """The name of the first padding type whose formulas (libnnn's) give
    `pads` [(before, after), ...] for these kernel sizes, or None."""
    t = _lib.Type.in_dll(_lib.lib, "nnn_type_padding_type")
    pads_fn = _lib.lib.nnn_padding_type_pads
    for name in _enum_names("nnn_type_padding_type"):
        v, b, a = ctypes.c_int64(), ctypes.c_int64(), ctypes.c_int64()
        if not t.value_of(name.encode(), ctypes.byref(v)):
            continue
        if all(pads_fn(v, k, ctypes.byref(b), ctypes.byref(a)) and (b.value, a.value) == p
               for k, p in zip(kernel, pads)):
            return name
    return None


def _leaves(module, prefix=""):
    """(index, module) of every module of a Sequential, nested ones flattened;
    the index is the child's name, dotted for nested ones ("2.1")."""
    from torch import nn
    if not isinstance(module, nn.Sequential):
        return [(prefix or None, module)]
    out = []
    for name, child in module.named_children():
        out += _leaves(child, prefix + "." + name if prefix else name)
    return out


_MATERIALISE = ("materialise the module first: module.to_empty(device='cpu'), then load its weights "
                "(module.load_state_dict(...))")


def _no_data(t):
    """Why tensor t has no values to read (a str), or None when it has."""
    import torch
    from torch import nn
    fake = getattr(getattr(torch, "_subclasses", None), "FakeTensor", None)
    lazy = getattr(nn.parameter, "UninitializedTensorMixin", None)
    if lazy is not None and isinstance(t, lazy):
        return ("is uninitialised (a lazy module's): run the module once on an input so it has its shapes, "
                "or use its non-lazy class")
    if fake is not None and isinstance(t, fake):
        return "is a fake tensor (torch._subclasses.FakeTensor): it has a shape but no values; " + _MATERIALISE
    if t.device.type == "meta":
        return "is on the meta device: it has a shape but no values; " + _MATERIALISE
    return None


def _check_data(mods):
    """Refuses, before anything is converted, the first module with a
    parameter or buffer that holds no values (the meta device, a fake
    tensor, a lazy module's): reading one would fail inside PyTorch."""
    for index, m in mods:
        for name, t in list(m.named_parameters()) + list(m.named_buffers()):
            why = _no_data(t)
            if why is not None:
                raise UnsupportedModuleError(index, m, "its %s %s" % (name, why))


def _array(index, m, name):
    """Module m's tensor `name` as a float32 array (on the CPU)."""
    t = getattr(m, name)
    try:
        return np.ascontiguousarray(t.detach().cpu().numpy(), dtype=np.float32)
    except (RuntimeError, NotImplementedError, TypeError) as e:
        # A device or tensor kind _check_data does not know of.
        raise UnsupportedModuleError(index, m, "its %s (on device %s, %s) cannot be read as values: %s; "
                                               "move the module to the CPU first: module.to('cpu'), or %s"
                                     % (name, t.device, type(t).__name__, e, _MATERIALISE)) from e


def _norm_dim(d, rank):
    return d + rank if d < 0 else d


def _batched_shape(mods, input_shape):
    """input_shape with a batch axis: PyTorch's shape of one input, with or
    without the batch; the first Conv or Linear says which (a leading Flatten
    needs the batch, since nn.Flatten keeps axis 0)."""
    from torch import nn
    shape = tuple(int(d) for d in input_shape)
    convs = {nn.Conv1d: 1, nn.Conv2d: 2, nn.Conv3d: 3}
    for index, m in mods:
        n = convs.get(type(m))
        if n is not None:
            if len(shape) == n + 1:
                return (1,) + shape
            if len(shape) == n + 2:
                return shape
            axes = ", ".join("d%d" % (i + 1) for i in range(n))
            raise usage("input_shape %s: module %s (%s) takes [C, %s] or [N, C, %s]"
                        % (list(shape), index, type(m).__name__, axes, axes))
        if type(m) is nn.Linear:
            if len(shape) == 1:
                return (1,) + shape
            if len(shape) == 2:
                return shape
            raise usage("input_shape %s: module %s (Linear) first mixes the last axis of a rank-%d input, "
                        "which has no channels-last equivalent; give [features] or [N, features]"
                        % (list(shape), index, len(shape)))
        if type(m) is nn.Flatten:
            if len(shape) < 2:
                raise usage("input_shape %s: module %s (Flatten) comes first, so input_shape must include "
                            "the batch axis: [N, C, d1..dn]" % (list(shape), index))
            return shape
    return shape


def _convert(module, input_shape):
    """The layers (Model.from_layers' form) and the nnnkit input shape."""
    try:
        from torch import nn
    except ImportError as e:
        raise ImportError("nnnkit.from_torch needs PyTorch (Debian: python3-torch): %s" % e) from e

    if not isinstance(module, nn.Module):
        raise usage("from_torch: expected a torch.nn.Module, found %s" % type(module).__name__)
    mods = _leaves(module)
    _check_data(mods)
    known = set(activation_names())
    dropouts = {getattr(nn, name) for name in _DROPOUTS if hasattr(nn, name)}
    shape = _batched_shape(mods, input_shape)  # PyTorch's, channels first
    in_shape = shape[:1] + shape[2:] + shape[1:2] if len(shape) > 2 else shape  # nnnkit's
    layers = []
    act_open = False     # the last layer has no activation yet
    flat_from = None     # the channels-first shape an nn.Flatten flattened, until a Linear takes it

    def refuse(index, m, why):
        return UnsupportedModuleError(index, m, why)

    for index, m in mods:
        kind = type(m).__name__
        if type(m) is nn.Identity or type(m) in dropouts:
            continue  # identities at inference
        if type(m) is nn.Flatten:
            rank = len(shape)
            if _norm_dim(m.start_dim, rank) != 1 or _norm_dim(m.end_dim, rank) != rank - 1:
                raise refuse(index, m, "start_dim=%d, end_dim=%d: only the default Flatten (all but the batch axis) "
                                       "is supported" % (m.start_dim, m.end_dim))
            if rank > 2:
                flat_from = shape
                shape = (shape[0], int(np.prod(shape[1:])))
            continue
        if type(m) in (nn.Conv1d, nn.Conv2d, nn.Conv3d):
            n = len(m.kernel_size)
            if len(shape) != n + 2 or flat_from is not None:
                raise refuse(index, m, "takes [N, C, %d spatial axes], but gets %s" % (n, list(shape)))
            if shape[1] != m.in_channels:
                raise usage("module %s (%s): in_channels %d, but the input has %d channels"
                            % (index, kind, m.in_channels, shape[1]))
            for attr, want in (("stride", 1), ("dilation", 1)):
                if any(v != want for v in getattr(m, attr)):
                    raise refuse(index, m, "%s %s: nnnkit's Conv has %s %d only; use %s=%d"
                                 % (attr, tuple(getattr(m, attr)), attr, want, attr, want))
            if m.groups != 1:
                raise refuse(index, m, "groups=%d: nnnkit's Conv is dense (groups=1); use groups=1" % m.groups)
            if m.padding_mode != "zeros":
                raise refuse(index, m, "padding_mode=%r: nnnkit pads with zeros only; use padding_mode='zeros'"
                             % m.padding_mode)
            k = tuple(int(v) for v in m.kernel_size)
            if m.padding == "valid":
                pads = [(0, 0)] * n
            elif m.padding == "same":
                # PyTorch's 'same': total k - 1, the smaller half before.
                pads = [((v - 1) // 2, (v - 1) - (v - 1) // 2) for v in k]
            else:
                pads = [(int(p), int(p)) for p in m.padding]
            ptype = _padding_type(k, pads)
            if ptype is None:
                raise refuse(index, m, "padding %s for kernel %s: none of nnnkit's padding types (%s) gives it; "
                                       "use padding='valid', padding='same' or the padding 'same' implies"
                             % (tuple(p[0] for p in pads), k, ", ".join(_enum_names("nnn_type_padding_type"))))
            out = tuple(shape[2 + i] + pads[i][0] + pads[i][1] - k[i] + 1 for i in range(n))
            if min(out) < 1:
                raise usage("module %s (%s): kernel %s does not fit the input %s" % (index, kind, k, list(shape)))
            w = _array(index, m, "weight")  # [out, in, k1..kn] -> [out, k1..kn, in]
            b = _array(index, m, "bias") if m.bias is not None else np.zeros(m.out_channels, np.float32)
            layers.append({"id": "conv", "activation": _IDENTITY, "kernels": np.ascontiguousarray(
                w.transpose((0,) + tuple(range(2, n + 2)) + (1,))), "bias": b, "padding_type": ptype,
                "padding_dims": [v for p in pads for v in p]})
            shape = (shape[0], m.out_channels) + out
            act_open = True
            continue
        if type(m) is nn.Linear:
            if len(shape) != 2:
                raise refuse(index, m, "gets %s: a Linear on a rank-%d input mixes its last axis, a spatial axis "
                                       "in PyTorch's layout but the channels in nnnkit's; put nn.Flatten() before it"
                             % (list(shape), len(shape)))
            if shape[1] != m.in_features:
                raise usage("module %s (Linear): in_features %d, but gets %d features"
                            % (index, m.in_features, shape[1]))
            w = _array(index, m, "weight").T  # [out, in] -> [in, out]
            if flat_from is not None:
                # PyTorch flattened (c, d1..dn); nnnkit flattens (d1..dn, c).
                c, spatial = flat_from[1], flat_from[2:]
                r = len(spatial)
                w = w.reshape((c,) + spatial + (-1,)).transpose(tuple(range(1, r + 1)) + (0, r + 1))
            b = _array(index, m, "bias") if m.bias is not None else np.zeros(m.out_features, np.float32)
            layers.append({"id": "dense", "activation": _IDENTITY,
                           "weights": np.ascontiguousarray(w.reshape(-1, m.out_features)), "bias": b,
                           "flatten": flat_from is not None})
            shape = (shape[0], m.out_features)
            flat_from, act_open = None, True
            continue
        name = _ACTIVATIONS.get(kind)
        if name is not None and name in known and type(m) is getattr(nn, kind):
            if not layers:
                raise refuse(index, m, "an activation before any Conv or Linear: nnnkit's activations belong to a "
                                       "layer; move it after one, or apply it to the inputs yourself")
            if not act_open:
                raise refuse(index, m, "a second activation after one layer: a layer has one activation")
            act = name
            if name == "leaky_relu":
                act = {"id": name, "tau": float(np.float32(m.negative_slope))}
            elif name == "softmax":
                rank = len(shape)
                if m.dim is None:
                    raise refuse(index, m, "dim=None: give the softmax axis, dim=1 (the channels)")
                if flat_from is not None or _norm_dim(m.dim, rank) != 1:
                    raise refuse(index, m, "dim=%d of %s: nnnkit's softmax is over the channels (the last axis "
                                           "channels-last), dim=1 here" % (m.dim, list(flat_from or shape)))
            layers[-1]["activation"] = act
            act_open = False
            continue
        if isinstance(m, nn.Sequential):
            continue  # an empty one
        raise refuse(index, m, _why_not(m, known))
    if flat_from is not None:
        i = max(i for i, (_, m) in enumerate(mods) if type(m) is nn.Flatten)
        raise refuse(mods[i][0], mods[i][1], "a Flatten of %s that no Linear follows: the model's output stays "
                                             "channels-last; leave the Flatten out and flatten the output yourself"
                     % list(flat_from))
    if not layers:
        raise refuse(None, module, "no Conv or Linear layer: nothing to convert")
    return layers, in_shape


def _why_not(m, known):
    """Why a module has no nnnkit equivalent, and what to do."""
    kind = type(m).__name__
    if "BatchNorm" in kind or "Norm" in kind:
        return "normalization has no nnnkit layer type; fold it into the previous Conv or Linear's weights and bias"
    if "Pool" in kind:
        return "pooling has no nnnkit layer type (the example plugin's maxpool is a plugin's, not the format's)"
    if "Transpose" in kind:
        return "transposed convolutions have no nnnkit layer type"
    if kind.startswith("Lazy"):
        return "lazy module: run it once so it has its shapes, or use its non-lazy class"
    if _ACTIVATIONS.get(kind) in known:
        return "a subclass of nn.%s: its forward may differ; use nn.%s itself" % (kind, kind)
    if hasattr(m, "forward") and list(m.children()):
        return ("a container other than nn.Sequential: its forward cannot be read; pass an nn.Sequential "
                "of the supported modules")
    return ("no nnnkit equivalent; supported: nn.Conv1d/2d/3d, nn.Linear, nn.Flatten, nn.Dropout, nn.Identity, "
            "and the activations %s" % ", ".join("nn." + c for c, n in _ACTIVATIONS.items() if n in known))


def from_torch(module, input_shape, description=None):
    """Convert a PyTorch ``nn.Sequential`` to a channels-last nnnkit Model.

    module: an ``nn.Sequential`` (nested ones are flattened) of
    ``nn.Conv1d/2d/3d`` (stride 1, dilation 1, groups 1, zero padding that is
    'valid', 'same' or the symmetric ints one of nnnkit's padding types gives),
    ``nn.Linear``, ``nn.Flatten`` (the default one), ``nn.Dropout`` and
    ``nn.Identity`` (ignored: inference), and ``nn.ReLU``, ``nn.LeakyReLU``,
    ``nn.Sigmoid``, ``nn.Tanh``, ``nn.Softmax(dim=1)`` (over the channels).
    An activation becomes the activation of the layer before it; a layer
    without one gets the identity. A missing bias becomes zeros.

    input_shape: PyTorch's shape of the input, channels first, with or
    without the batch axis (``(1, 28, 28)`` or ``(64, 1, 28, 28)``).

    The model takes inputs channels-last (``x.movedim(1, -1)``) and gives
    outputs channels-last; they equal PyTorch's within float rounding.
    Anything else raises UnsupportedModuleError naming the module; so does
    a module whose parameters hold no values (the meta device, fake
    tensors, a lazy module's): materialise it first,
    ``module.to_empty(device='cpu')``, then load its weights.
    """
    layers, _ = _convert(module, input_shape)
    from .model import Model
    return Model.from_layers(layers, description=description or "")
