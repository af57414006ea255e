"""Models: load, inspect, validate, run, build and save .nnn models.

A model's fields are read by walking libnnn's record descriptors
(nnn_model_desc and the records it reaches, a plugin's included): a field
added to the schema appears here with nothing to change.
"""

import ctypes
import hashlib
import json
import math
import os
import tempfile
from collections.abc import Mapping
from ctypes import byref, c_char_p, c_size_t, c_void_p

import numpy as np

from . import _lib
from ._lib import Diags, Shape, lib
from .errors import FileError, ValidationError, error, problems, usage

_F32 = np.dtype(np.float32)
_export = ctypes.c_char.from_buffer  # a writable buffer's first byte, for its address
_addressof = ctypes.addressof


# ---- small helpers over the C API ----

def _call(fn, *args, file=None):
    """Calls a libnnn function whose last argument is an nnn_diags_t; raises
    the matching nnnkit.Error when it fails."""
    d = Diags()
    try:
        st = fn(*args, byref(d))
        if st != 0:
            raise error(st, d, file=file)
    finally:
        lib.nnn_diags_free(byref(d))


def _shape(dims, what="input_shape"):
    """A tuple of ints as an nnn_shape_t."""
    try:
        dims = tuple(int(x) for x in dims)
    except (TypeError, ValueError):
        raise usage(f"{what} must be a sequence of integers, found {dims!r}") from None
    if not 1 <= len(dims) <= _lib.MAX_RANK:
        raise usage(f"{what} has {len(dims)} dimensions: 1 to {_lib.MAX_RANK} are possible")
    s = Shape()
    s.rank = len(dims)
    s.dims[:len(dims)] = dims
    return s


def _pshape(p):
    """A partial shape as a tuple (None where unknown), or None when its rank is unknown."""
    if p.rank < 0:
        return None
    return tuple(None if d < 0 else int(d) for d in p.dims[:p.rank])


class _Context:
    """A plugin registry (nnn_ctx_t): the builtin plugins as the CLI finds
    them (NNN_PLUGIN_PATH, then the installed plugin folder), after any extra
    plugin files given."""

    def __init__(self, plugins=None):
        self.ptr = None
        ptr = c_void_p()
        _call(lib.nnn_ctx_new, byref(ptr))
        self.ptr = ptr.value
        self.plugins = [os.path.abspath(os.fspath(p)) for p in (plugins or ())]
        files = [os.fsencode(p) for p in self.plugins]
        arr = (c_char_p * max(1, len(files)))(*files)
        opts = _lib.DiscoverOpts(size=ctypes.sizeof(_lib.DiscoverOpts), files=arr, nfiles=len(files),
                                 search=True, installed_dir=os.fsencode(_lib.plugin_dir()))
        _call(lib.nnn_plugin_discover, self.ptr, byref(opts))

    def __del__(self):
        if self.ptr:
            lib.nnn_ctx_free(self.ptr)
            self.ptr = None


class _Handle:
    """What a model's memory hangs on: the mapping (or the model's own
    copy) and the plugin context. Every array and plan of a model holds it,
    and so does every call in progress (a local reference taken when the
    call starts), so the memory lives as long as any of them does: close()
    only drops the Model's own reference, in any thread, at any time.
    _PlanHandle does the same for a plan."""

    def __init__(self, ctx, file=None, model=None):
        self.ctx = ctx
        self.file = file      # nnn_file_t *, or None
        self.owned = model    # nnn_model_t * to free, or None
        self.model = lib.nnn_file_model(file) if file else model

    def __del__(self):
        if self.owned:
            lib.nnn_model_free(self.owned)
        if self.file:
            lib.nnn_file_close(self.file)
        self.owned = self.file = self.model = None

    def bytes_range(self):
        """(address, size) of the file's bytes, or None for a model not from a file."""
        if not self.file:
            return None
        n = c_size_t()
        p = lib.nnn_file_bytes(self.file, byref(n))
        return p, n.value


class _View:
    """Exposes n float32 values at an address to NumPy, read-only, keeping
    the model's memory alive (the array's .base)."""

    __slots__ = ("__array_interface__", "handle")

    def __init__(self, addr, n, handle, typestr="<f4"):
        self.handle = handle
        self.__array_interface__ = {"data": (addr or 0, True), "shape": (n,), "typestr": typestr, "version": 3}


def _floats(addr, n, handle, typestr="<f4"):
    """A read-only array of the n values at addr (the model's memory):
    float32, or the NumPy type `typestr` of another element type."""
    if n == 0:
        a = np.empty(0, np.dtype(typestr))
        a.flags.writeable = False
        return a
    return np.asarray(_View(addr, n, handle, typestr))


# NumPy's type of an element type by kind and width (nnn/types.h's
# nnn_ekind_t); a bfloat16 is its raw bits (NumPy has no bfloat16).
_EK_TYPE = {(_lib.EK_INT, w): "<i%d" % w for w in (1, 2, 4, 8)}
_EK_TYPE.update({(_lib.EK_UINT, w): "<u%d" % w for w in (1, 2, 4, 8)})
_EK_TYPE.update({(_lib.EK_FLOAT, 2): "<f2", (_lib.EK_FLOAT, 4): "<f4", (_lib.EK_FLOAT, 8): "<f8",
                 (_lib.EK_BFLOAT, 2): "<u2"})


def _num(p, addr, handle):
    """A number of an element type without a named primitive (f16, i8, ...):
    a scalar as a Python number, an array as a read-only ndarray of its
    NumPy type, zero-copy."""
    typestr = _EK_TYPE[(p >> 4 & 0xF, p & 0xF)]
    if p & _lib.PRIM_NUMS:
        a = _lib.F32s.from_address(addr)  # the layout of nnn_elems_t
        return _floats(a.bytes, a.n, handle, typestr)
    return np.frombuffer(ctypes.string_at(addr, p & 0xF), typestr)[0].item()


def _typed_array(a, prim, what):
    """Array `a` as written into a field of element type `prim` (an
    NNN_PRIM_NUMS_OF value): it must have the field's own dtype (bfloat16:
    '<u2', its raw bits, or a 2-byte dtype named bfloat16 such as
    ml_dtypes', viewed as its bits); no conversion, which could change
    values, is made."""
    want = np.dtype(_EK_TYPE[(prim >> 4 & 0xF, prim & 0xF)])
    bf16 = (prim >> 4 & 0xF) == _lib.EK_BFLOAT
    a = np.asarray(a)
    have = a.dtype
    if have == want:
        return a
    if bf16 and have.name == "bfloat16" and have.itemsize == 2:
        return np.ascontiguousarray(a).view("<u2")
    kind = "bfloat16 (as its raw bits, uint16)" if bf16 else want.name
    raise TypeError(f"{what}: the field holds {kind}, the array is {have.name}: pass an array of dtype "
                    f"{want.name} (a.astype(np.{want.name}){' after taking the bits' if bf16 else ''}); "
                    f"nnnkit does not convert it, which could change its values")


# ---- records: the model's fields, from the descriptors ----

class Record:
    """A record of the model (the model, a layer, an activation, a tensor):
    its fields by the schema's names, in file order, as attributes or items.
    A variant's fields (a Dense layer's neurons) appear on the record itself,
    as in the JSON form. A tensor has .dims (a tuple) and .data (a read-only
    float32 ndarray shaped by dims). Enum values are their names ('dense');
    an unnamed value stays an int."""

    __slots__ = ("_kind", "_fields")

    def __init__(self, kind, fields):
        """kind: the schema's record name ("layer"); fields: a dict in file order."""
        object.__setattr__(self, "_kind", kind)
        object.__setattr__(self, "_fields", fields)

    def __getattr__(self, name):
        try:
            return self._fields[name]
        except KeyError:
            raise AttributeError(f"{self._kind} record has no field {name!r} "
                                 f"(its fields: {', '.join(self._fields)})") from None

    def __setattr__(self, name, value):
        raise AttributeError("a Record is read-only: build a new model with Model.from_layers")

    def __getitem__(self, name):
        return self._fields[name]

    def __contains__(self, name):
        return name in self._fields

    def __iter__(self):
        return iter(self._fields)

    def __len__(self):
        return len(self._fields)

    def __dir__(self):
        return list(self._fields) + ["keys", "to_dict"]

    def __eq__(self, other):
        if not isinstance(other, Record) or other._kind != self._kind or list(other._fields) != list(self._fields):
            return NotImplemented if not isinstance(other, Record) else False
        for k, v in self._fields.items():
            w = other._fields[k]
            if isinstance(v, np.ndarray) or isinstance(w, np.ndarray):
                if not (isinstance(v, np.ndarray) and isinstance(w, np.ndarray) and v.shape == w.shape
                        and v.tobytes() == w.tobytes()):
                    return False
            elif v != w:
                return False
        return True

    __hash__ = None

    def keys(self):
        """The field names, in file order."""
        return self._fields.keys()

    def to_dict(self):
        """The fields as a plain dict (nested records as dicts, lists as lists,
        tensors' data as arrays): the spec form Model.from_layers reads."""
        def plain(v):
            if isinstance(v, Record):
                return v.to_dict()
            if isinstance(v, list):
                return [plain(x) for x in v]
            return v
        return {k: plain(v) for k, v in self._fields.items()}

    def __repr__(self):
        def short(v):
            if isinstance(v, np.ndarray):
                return f"<float32 {'x'.join(map(str, v.shape))}>"
            if isinstance(v, list):
                return f"[{len(v)} {v[0]._kind if v and isinstance(v[0], Record) else 'item'}s]"
            if isinstance(v, float):
                return str(np.float32(v))  # the shortest text of the float32 it holds
            return repr(v)
        return f"{self._kind}({', '.join(f'{k}={short(v)}' for k, v in self._fields.items())})"


def _int(prim, addr):
    if prim == _lib.PRIM_U8:
        return ctypes.c_uint8.from_address(addr).value
    if prim == _lib.PRIM_I32:
        return ctypes.c_int32.from_address(addr).value
    if prim == _lib.PRIM_U64:
        return ctypes.c_uint64.from_address(addr).value
    raise AssertionError(f"not an integer primitive: {prim}")


def _ext_type(kind, addr):
    """A plugin's type (nnn_layer_type_t or nnn_activation_type_t) at addr."""
    return (_lib.LayerType if kind == _lib.FX_LAYER else _lib.ActivationType).from_address(addr)


def _selected(fl, f, base):
    """The record a variant's tag selects and the address of its fields:
    a core record, a plugin's, or (None, None): a value without fields, or a
    plugin type that brings no descriptors (ABI 1.0)."""
    tag = _int(fl[f.ref].prim, base + fl[f.ref].offset)
    for k in range(f.nvariants):
        if f.variants[k].value == tag:
            return f.variants[k].rec.contents, base + f.offset
    if f.ext == _lib.FX_NONE or f.type.contents.value_name(tag) is not None:
        return None, None
    ext = _lib.Ext.from_address(base + f.ext_offset)
    if not ext.type or not ext.body:
        return None, None
    t = _ext_type(f.ext, ext.type)
    return (t.record.contents, ext.body) if t.record else (None, None)


def _enum_name(fl, i, base, value):
    """An enum value's name: the schema's, a plugin's for a tag the schema
    lacks, else the number itself."""
    t = fl[i].type.contents
    name = t.value_name(value)
    if name is not None:
        return name.decode()
    for f in fl:
        if f.kind != _lib.FK_VARIANT or f.ref != i or f.ext == _lib.FX_NONE:
            continue
        ext = _lib.Ext.from_address(base + f.ext_offset)
        if ext.type:
            name = _ext_type(f.ext, ext.type).name
            clash = ctypes.c_int64()
            # A plugin's name that is also a schema name would read back as that.
            if name and not t.value_of(name, byref(clash)):
                return name.decode()
    return value


def _prim(f, addr, handle):
    p = f.prim
    if p in (_lib.PRIM_U8, _lib.PRIM_I32, _lib.PRIM_U64):
        return _int(p, addr)
    if p == _lib.PRIM_F32:
        return ctypes.c_float.from_address(addr).value
    if p == _lib.PRIM_BOOL:
        return ctypes.c_bool.from_address(addr).value
    if p == _lib.PRIM_STRING:
        s = _lib.Str.from_address(addr)
        return ctypes.string_at(s.ptr, s.len).decode("utf-8", "surrogateescape") if s.len > 0 else ""
    if p == _lib.PRIM_I32_ARRAY:
        a = _lib.I32s.from_address(addr)
        return tuple(a.v[:a.n]) if a.n > 0 else ()
    if p == _lib.PRIM_F32_ARRAY:
        a = _lib.F32s.from_address(addr)
        return _floats(a.bytes, a.n, handle)
    if p & (_lib.PRIM_NUM | _lib.PRIM_NUMS):
        return _num(p, addr, handle)
    raise AssertionError(f"unknown primitive {p}")


def _fields_of(rd, base, handle, out):
    fl = _lib.fields(rd)
    for i, f in enumerate(fl):
        if f.flags & (_lib.FD_CONST | _lib.FD_COUNT):
            continue  # implied: the format's constant, an array's length
        if f.kind == _lib.FK_VARIANT:
            rec, body = _selected(fl, f, base)
            if rec is not None:
                _fields_of(rec, body, handle, out)
            continue
        name = f.name.decode()
        addr = base + f.offset
        if f.kind == _lib.FK_ENUM:
            out[name] = _enum_name(fl, i, base, _int(f.prim, addr))
        elif f.kind == _lib.FK_PRIM:
            out[name] = _prim(f, addr, handle)
        elif f.kind == _lib.FK_RECORD:
            out[name] = _record(f.rec.contents, addr, handle)
        elif f.kind == _lib.FK_ARRAY:
            n = _int(fl[f.ref].prim, base + fl[f.ref].offset)
            rec = f.rec.contents
            elems = c_void_p.from_address(addr).value
            out[name] = [_record(rec, elems + k * rec.record_size, handle) for k in range(n)]
    if rd.dims >= 0 and rd.data >= 0:
        # A tensor: its data shaped by its dims.
        dims, data = fl[rd.dims], fl[rd.data]
        dn, an = dims.name.decode(), data.name.decode()
        if dn in out and an in out:
            out[an] = out[an].reshape(out[dn]) if int(np.prod(out[dn], dtype=np.int64)) == out[an].size \
                else out[an]
    return out


def _record(rd, base, handle):
    return Record(rd.name.decode(), _fields_of(rd, base, handle, {}))


# ---- the spec form for from_layers: values placed by the descriptors ----

class _SpecWriter:
    """Turns Python values into the JSON spec form (NNN_JSON_SPEC), writing
    arrays as .npy files in `folder`: exact bits, and no text for large
    tensors. Where an array goes (a tensor record, a float array) comes
    from the descriptors."""

    def __init__(self, folder, ctx):
        self.folder, self.ctx, self.count = folder, ctx, 0

    def npy(self, a, dtype="<f4"):
        self.count += 1
        name = f"t{self.count}.npy"
        np.save(os.path.join(self.folder, name), np.ascontiguousarray(a, dtype=dtype))
        return name

    def typed(self, a, prim, path):
        """An array for a field of another element type (f16_array, ...):
        its own dtype, passed bit for bit; anything else is refused."""
        a = _typed_array(a, prim, path)
        return self.npy(a, a.dtype)

    def plain(self, v):
        if isinstance(v, Record):
            v = v.to_dict()
        if isinstance(v, np.ndarray):
            return self.npy(v) if v.ndim else self.plain(v.item())
        if isinstance(v, np.generic):
            return self.plain(v.item())
        if isinstance(v, float) and not math.isfinite(v):
            return "nan" if math.isnan(v) else ("inf" if v > 0 else "-inf")
        if isinstance(v, Mapping):
            return {str(k): self.plain(x) for k, x in v.items()}
        if isinstance(v, (list, tuple)):
            return [self.plain(x) for x in v]
        return v

    def ext_record(self, kind, tag):
        """A plugin type's record for a tag value (int or name), or None."""
        find = lib.nnn_ctx_layer if kind == _lib.FX_LAYER else lib.nnn_ctx_activation
        ids = [tag] if isinstance(tag, int) else range(256)
        for i in ids:
            t = find(self.ctx.ptr, i, None) if 0 <= i < 256 else None
            if t:
                t = _ext_type(kind, t)
                if (isinstance(tag, int) or (t.name and t.name.decode() == tag)) and t.record:
                    return t.record.contents
        return None

    def fields(self, rd, value):
        """Field descriptors by name for a record's value, the variant's included."""
        fl = _lib.fields(rd)
        known = {}
        for f in fl:
            if f.kind != _lib.FK_VARIANT:
                known[f.name.decode()] = f
                continue
            tag_f = fl[f.ref]
            tag = value.get(tag_f.name.decode(), 0)
            if isinstance(tag, np.integer):
                tag = int(tag)
            if isinstance(tag, str):
                v = ctypes.c_int64()
                if tag_f.type.contents.value_of(tag.encode(), byref(v)):
                    tag = v.value
            rec = None
            if isinstance(tag, int):
                rec = next((f.variants[k].rec.contents for k in range(f.nvariants) if f.variants[k].value == tag),
                           None)
            if rec is None and f.ext != _lib.FX_NONE:
                rec = self.ext_record(f.ext, tag)
            if rec is not None:
                known.update(self.fields(rec, {}))
        return known

    def record(self, rd, value, what=None):
        """what: the field's name, for messages (else the record's)."""
        if isinstance(value, Record):
            value = value.to_dict()
        if rd.dims >= 0 and not isinstance(value, Mapping):
            # A tensor as its .npy file's name: an array (or anything
            # float32-convertible) written here, or a file of the caller's.
            if isinstance(value, (str, os.PathLike)):
                return os.path.abspath(os.fspath(value))
            prim = _lib.fields(rd)[rd.data].prim
            if prim & _lib.PRIM_NUMS:  # another element type: an array of it, or numbers in JSON
                if isinstance(value, np.ndarray):
                    return self.typed(value, prim, what or rd.name.decode())
                return {_lib.fields(rd)[rd.data].name.decode(): self.plain(value)}
            return self.npy(np.asarray(value, dtype=np.float32))
        if not isinstance(value, Mapping):
            return self.plain(value)
        known = self.fields(rd, value)
        return {str(k): self.field(known.get(k), v) for k, v in value.items()}

    def field(self, f, v):
        if f is None:
            return self.plain(v)  # not a field: the reader names it
        if f.kind == _lib.FK_RECORD:
            return self.record(f.rec.contents, v, f.name.decode())
        if f.kind == _lib.FK_ARRAY:
            return [self.record(f.rec.contents, x) for x in v]
        if isinstance(v, np.ndarray) and f.prim == _lib.PRIM_F32_ARRAY:
            return {"npy": self.npy(v)}
        if isinstance(v, np.ndarray) and f.prim & _lib.PRIM_NUMS:
            return {"npy": self.typed(v, f.prim, f.name.decode())}
        if isinstance(v, np.ndarray) and f.prim == _lib.PRIM_I32_ARRAY:
            return [int(x) for x in v.reshape(-1)]
        return self.plain(v)


# ---- the model ----

def _digest(chunks):
    """(size, BLAKE2 digest) of a stream of byte chunks: what identifies a
    model file across machines (a copy at the same path has the same; inode
    and times differ)."""
    h, n = hashlib.blake2b(digest_size=16), 0
    for c in chunks:
        h.update(c)
        n += len(c)
    return (n, h.hexdigest())


def _file_identity(path):
    """The file's (size, digest), read from the file."""
    with open(path, "rb") as f:
        return _digest(iter(lambda: f.read(1 << 20), b""))


def _mapped_identity(handle):
    """The (size, digest) of the bytes a model loaded from a file holds: its
    own, even if the file was replaced since."""
    addr, n = handle.bytes_range()
    return _digest([(ctypes.c_char * n).from_address(addr)] if n else [])


def _is_safetensors(path):
    """A safetensors file, by its bytes as the CLI tells it: a header length
    within the format's cap, then '{'."""
    try:
        with open(path, "rb") as f:
            head = f.read(9)
    except OSError:
        return False  # nnn_file_open says why
    return len(head) == 9 and head[8:] == b"{" and 2 <= int.from_bytes(head[:8], "little") <= 100_000_000


def load(path, plugins=None, copy=False):
    """Opens a .nnn file. Zero-copy by default: every tensor is a read-only
    float32 ndarray viewing the file's mapping, which stays mapped as long
    as the Model or any array from it lives. copy=True reads the file into
    memory the model owns instead (no dependence on the file afterwards).
    A safetensors file nnnkit wrote (docs/safetensors.md), told by its
    bytes, is read through libnnn into memory the model owns.
    plugins: extra plugin files (.so paths) loaded before the builtin
    plugins, which are found as the CLI finds them. Raises FormatError (a
    file that does not decode: code, path and offset of the problem),
    FileError, PluginError."""
    path = os.fspath(path)
    if _is_safetensors(path):
        with open(path, "rb") as f:
            m = Model.from_safetensors(f.read(), plugins)
        m._path = path
        return m
    ctx = _Context(plugins)
    f = c_void_p()
    opts = _lib.DecodeOpts(flags=_lib.DECODE_COPY if copy else 0, ctx=ctx.ptr)
    _call(lib.nnn_file_open, os.fsencode(path), byref(opts), byref(f), file=path)
    m = Model(_Handle(ctx, file=f.value), path)
    m._opened = (os.path.abspath(path), copy)
    return m


def validate(path, input_shape=None, check_finite=False, plugins=None):
    """Every problem of a file, as `nnnkit validate FILE` finds them, also
    when it does not decode: a list of Problem (empty: valid). With
    input_shape every layer's output shape is checked too; check_finite
    also reads every tensor value (for a file that decodes)."""
    path = os.fspath(path)
    ctx = _Context(plugins)
    f = c_void_p()
    _call(lib.nnn_file_map, os.fsencode(path), byref(f), file=path)
    d = Diags()
    try:
        shape = byref(_shape(input_shape)) if input_shape is not None else None
        st = lib.nnn_file_validate(f, ctx.ptr, shape, byref(d))
        if check_finite and st == 0:
            m = c_void_p()
            opts = _lib.DecodeOpts(ctx=ctx.ptr)
            if lib.nnn_file_decode(f, byref(opts), byref(m), None) == 0:
                lib.nnn_model_check_finite(m, None, byref(d))
                lib.nnn_model_free(m)
        return problems(d)
    finally:
        lib.nnn_diags_free(byref(d))
        lib.nnn_file_close(f)


class Model:
    """A .nnn model: its fields as attributes (named as the schema names
    them: description, param_count, layers...), validation, shapes, runs,
    and writing. Make one with nnnkit.load, Model.from_layers or
    Model.from_json. A context manager: close() on exit."""

    def __init__(self, handle, path=None):
        """Internal: use nnnkit.load, Model.from_layers or Model.from_json."""
        self._handle = handle
        self._path = path
        self._opened = None  # (absolute path, copy) when load() opened a file
        self._identity = None  # its mapped bytes' (size, digest), once pickled
        self._record = _record(_lib.model_desc, handle.model, handle)
        # Kept past close(): a plan being made in another thread reads it.
        name = self._array_name()
        self._nlayers = len(self._record[name]) if name else 0

    # -- fields --

    def __getattr__(self, name):
        if name.startswith("_"):
            raise AttributeError(name)
        rec = self.__dict__.get("_record")
        if rec is None:
            raise usage("the model is closed")
        return getattr(rec, name)

    def __dir__(self):
        rec = self._record
        return sorted(set(super().__dir__()) | set(rec.keys() if rec is not None else ()))

    @property
    def path(self):
        """The file the model was loaded from, as given to load, or None."""
        return self._path

    @property
    def record(self):
        """The model's fields as one Record (keys(), to_dict())."""
        rec = self._record
        if rec is None:
            raise usage("the model is closed")
        return rec

    def _live(self):
        if self._handle is None:
            raise usage("the model is closed")
        return self._handle

    def close(self):
        """Releases the model. Arrays and plans taken from it stay valid: the
        memory is released when the last of them goes. Safe from any thread
        at any time: a call in progress in another thread (run, validate,
        a plan's run...) completes with its result; calls made after close
        raise UsageError."""
        self._handle = None
        self._record = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    # -- checking --

    def validate(self, input_shape=None, check_finite=False):
        """Every problem of the model as a list of Problem (empty: valid).
        With input_shape (batch first, channels last: (1, 28, 28, 1)) every
        layer's output shape is inferred and checked; check_finite also reads
        every tensor value and reports NaN and infinities."""
        h = self._live()
        d = Diags()
        try:
            shape = byref(_shape(input_shape)) if input_shape is not None else None
            lib.nnn_model_validate(h.model, shape, None, byref(d))
            if check_finite:
                lib.nnn_model_check_finite(h.model, None, byref(d))
            return problems(d)
        finally:
            lib.nnn_diags_free(byref(d))

    def shapes(self, input_shape=None):
        """Every layer's output shape as a tuple, from libnnn's shape engine.
        Without input_shape, what the layers' own fields fix: None marks an
        unknown dim (or, for the whole shape, an unknown rank). Raises
        ValidationError when input_shape does not fit."""
        h = self._live()
        n = self._nlayers
        out = (_lib.LayerShapes * max(1, n))()
        shape = byref(_shape(input_shape)) if input_shape is not None else None
        _call(lib.nnn_model_shapes, h.model, shape, out)
        return [_pshape(out[i].out) for i in range(n)]

    def fixed_input(self):
        """The input the layers fix, with a batch of 1, as a tuple: what
        `nnnkit info`, map and graph take without --input-shape (a Dense
        first layer gives (1, its inputs)). None when they leave some of it
        open (a Conv's spatial sizes): give the shape to run or shapes()."""
        s = _lib.Shape()
        if not lib.nnn_model_fixed_input(self._live().model, byref(s)):
            return None
        return tuple(int(d) for d in s.dims[:s.rank])

    def _array_name(self):
        """The model record's repeated field (its layers), from the descriptor."""
        for f in _lib.fields(_lib.model_desc):
            if f.kind == _lib.FK_ARRAY:
                return f.name.decode()
        return None

    # -- running --

    def plan(self, input_shape, threads=1, conv_compat="spec"):
        """A Plan for repeated runs on inputs of one shape (batch first,
        channels last): shapes inferred and kernels prepared once.
        conv_compat: "spec", or "original" for the original framework's
        convolution arithmetic (nnnkit run --conv-compat; docs/original-framework.md)."""
        return Plan(self, input_shape, threads, conv_compat)

    def run(self, x, threads=1, batch=_lib.RUN_BATCH, conv_compat="spec"):
        """Runs the model on x (anything np.asarray(x, np.float32) takes,
        batch first, channels last) and returns the float32 outputs. batch:
        rows per call, as nnnkit run's --batch (None: all at once, several
        times slower on a large x); conv_compat as for plan(). The
        GIL is released while libnnn computes. Raises ValidationError when
        x's shape does not fit. A close() of the model in another thread
        meanwhile does not stop the run: it completes."""
        h = self._live()  # held to the end, as its plans hold it
        x = np.ascontiguousarray(x, dtype=_F32)
        if x.ndim < 1:
            raise usage("x must have a batch axis first")
        n = x.shape[0]
        if batch is not None and int(batch) < 1:
            raise usage(f"batch must be at least 1, found {batch}")
        # An empty batch still gets its output's shape (planned for one row).
        rows = max(1, min(n, n if batch is None else int(batch)))
        with Plan._of(h, self._nlayers, (rows,) + x.shape[1:], threads, conv_compat) as p:
            if p.output_shape[0] != rows:
                raise usage(f"the output's first axis is {p.output_shape[0]}, not the batch ({rows})")
            out = np.empty((n,) + p.output_shape[1:], _F32)
            full = n - n % rows
            for i in range(0, full, rows):
                p.run(x[i:i + rows], out[i:i + rows])
        if full < n:
            with Plan._of(h, self._nlayers, (n - full,) + x.shape[1:], threads, conv_compat) as p:
                p.run(x[full:], out[full:])
        return out

    # -- building and writing --

    @classmethod
    def from_layers(cls, layers, description="", plugins=None):
        """A model from a list of layers in nnnkit build's spec form (the JSON
        form with defaults, field names as the schema's), with NumPy arrays
        where tensors go: {"id": "dense", "activation": "relu", "weights":
        W[in, out], "bias": b}. The library fills the defaults (parameter
        count, dims from the arrays, a Dense layer's neurons, a Conv's
        padding_dims from its padding_type) and checks
        every field; arrays are passed bit for bit. A float32 tensor takes
        any array numpy converts to float32; a tensor of another element
        type (a schema's float16 or int8 weights) takes an array of exactly
        its dtype (bfloat16: uint16, its raw bits), else TypeError. A model
        that breaks a rule is refused, as nnnkit build refuses it. Raises
        FormatError (a field the schema lacks, a value of the wrong kind, an
        unknown ID) or ValidationError (a tensor shape that does not
        fit...), naming the field path."""
        ctx = _Context(plugins)
        with tempfile.TemporaryDirectory(prefix="nnnkit-") as folder:
            w = _SpecWriter(folder, ctx)
            spec = {}
            for f in _lib.fields(_lib.model_desc):
                if f.kind == _lib.FK_ARRAY:
                    spec[f.name.decode()] = list(layers)
                elif f.kind == _lib.FK_PRIM and f.prim == _lib.PRIM_STRING:
                    spec[f.name.decode()] = description
            text = json.dumps(w.record(_lib.model_desc, spec), allow_nan=False).encode()
            opts = _lib.JsonReadOpts(flags=_lib.JSON_SPEC, ctx=ctx.ptr, base_dir=os.fsencode(folder))
            m = c_void_p()
            d = Diags()
            try:
                st = lib.nnn_json_decode(text, len(text), byref(opts), byref(m), byref(d))
                if st != 0:
                    # Lines and columns would point into text the caller never saw.
                    for i in range(d.n):
                        d.v[i].line = d.v[i].column = 0
                    raise error(st, d)
            finally:
                lib.nnn_diags_free(byref(d))
        model = cls(_Handle(ctx, model=m.value))
        # As nnnkit build does: a model that breaks a rule is refused.
        found = model.validate()
        if found:
            raise ValidationError(found[0].status, found)
        return model

    @classmethod
    def from_bytes(cls, data, plugins=None):
        """A model from .nnn bytes (any bytes-like object), copied into
        memory the model owns. Raises FormatError as load does."""
        ctx = _Context(plugins)
        data = bytes(data)
        m = c_void_p()
        opts = _lib.DecodeOpts(flags=_lib.DECODE_COPY, ctx=ctx.ptr)
        _call(lib.nnn_model_decode, data, len(data), byref(opts), byref(m))
        return cls(_Handle(ctx, model=m.value))

    @classmethod
    def from_safetensors(cls, data, plugins=None):
        """A model from the bytes of a safetensors file nnnkit wrote
        (docs/safetensors.md), into memory the model owns. A checkpoint
        nnnkit did not write raises FormatError (E_SAFETENSORS) naming its
        first tensors."""
        ctx = _Context(plugins)
        data = bytes(data)
        m = c_void_p()
        opts = _lib.DecodeOpts(ctx=ctx.ptr)
        _call(lib.nnn_safetensors_decode, data, len(data), byref(opts), byref(m))
        return cls(_Handle(ctx, model=m.value))

    def __reduce__(self):
        """Pickled small: a model load() opened is pickled as its file's
        absolute path with the size and digest of the bytes it holds, and
        the other side maps that file again (no weights travel, so Ray's and
        Spark's tasks stay small); a different file found at the path there
        is refused (FileError), never run. A model made in memory
        (from_bytes, from_layers, from_json) is pickled as its bytes. The
        plugin files travel as paths either way."""
        h = self._live()
        plugins = h.ctx.plugins or None
        if self._opened is not None:
            if self._identity is None:
                self._identity = _mapped_identity(h)
            path, copy = self._opened
            return (_reopen, (path, plugins, copy, self._identity))
        return (_unpickle, (self.encode(), plugins))

    @classmethod
    def from_json(cls, text, plugins=None):
        """A model from its JSON form (docs/json.md; as to_json writes it).
        .npy references are relative to the current folder."""
        if isinstance(text, str):
            text = text.encode()
        ctx = _Context(plugins)
        opts = _lib.JsonReadOpts(flags=0, ctx=ctx.ptr, base_dir=None)
        m = c_void_p()
        _call(lib.nnn_json_decode, text, len(text), byref(opts), byref(m))
        return cls(_Handle(ctx, model=m.value))

    def to_json(self):
        """The model's JSON form (docs/json.md), every tensor inline: reads
        back (from_json) to the same bytes."""
        h = self._live()
        text, n = c_void_p(), c_size_t()
        _call(lib.nnn_json_encode, h.model, None, byref(text), byref(n))
        try:
            return ctypes.string_at(text, n.value).decode()
        finally:
            _lib.libc_free(text)

    def encode(self):
        """The model's .nnn bytes."""
        h = self._live()
        buf, n = c_void_p(), c_size_t()
        _call(lib.nnn_model_encode, h.model, byref(buf), byref(n))
        try:
            return ctypes.string_at(buf, n.value)
        finally:
            _lib.libc_free(buf)

    def save(self, path):
        """Writes the model to path atomically (a temporary file in the same
        folder, flushed, renamed): on failure path is untouched."""
        h = self._live()
        path = os.fspath(path)
        _call(lib.nnn_model_write_file, h.model, os.fsencode(path), file=path)

    def to_safetensors(self, path):
        """Writes the model as safetensors (docs/safetensors.md) to path
        atomically: every float array a float32 tensor named as nnnkit
        export names it, the rest in the metadata, so that load gives back
        the same model, byte for byte."""
        h = self._live()
        path = os.fspath(path)
        _call(lib.nnn_safetensors_write_file, h.model, h.ctx.ptr, os.fsencode(path), file=path)

    # -- showing --

    def __repr__(self):
        """The model as `nnnkit info` shows it, from the same libnnn function
        (nnn_model_info): file, description, parameters, shapes, and a table
        of layers."""
        return self._info(_lib.INFO_TEXT)

    def _repr_markdown_(self):
        """The same as Markdown (`nnnkit info --markdown`): what Jupyter
        shows for a model."""
        return self._info(_lib.INFO_MARKDOWN)

    def _info(self, form):
        h = self._handle
        if h is None:
            return "<closed nnnkit.Model>"
        rng = h.bytes_range()
        opts = _lib.InfoOpts(size=ctypes.sizeof(_lib.InfoOpts), say=_lib.INFO_SAY_PYTHON,
                             file=os.fsencode(self._path) if rng else None, file_size=rng[1] if rng else 0,
                             form=form)
        n = lib.nnn_model_info(h.ctx.ptr, h.model, byref(opts), None, 0)
        buf = ctypes.create_string_buffer(n + 1)
        lib.nnn_model_info(h.ctx.ptr, h.model, byref(opts), buf, n + 1)
        return buf.raw[:n].removesuffix(b"\n").decode("utf-8", "surrogateescape")


def _unpickle(data, plugins):
    return Model.from_bytes(data, plugins)


def _reopen(path, plugins, copy, identity):
    m = load(path, plugins, copy)
    found = _mapped_identity(m._handle)
    if found != identity:
        m.close()
        raise usage(f"{path}: not the file this model was pickled from ({identity[0]} bytes, BLAKE2 "
                    f"{identity[1]}; found {found[0]} bytes, {found[1]}): give every process the same "
                    "file at that path, or pickle Model.from_bytes(model.encode()) to send the bytes",
                    cls=FileError)
    m._identity = identity
    return m


# ---- plans ----

class _PlanHandle:
    """What a plan's native side hangs on, as _Handle is a model's: the
    nnn_plan_t, the diagnostics its runs fill, and the model's _Handle (the
    plan borrows the model and its context). Freed when the last reference
    goes: the Plan's, or that of a run in progress, which holds it for its
    call. So Plan.close() in another thread frees nothing under a run."""

    __slots__ = ("ptr", "model", "diags", "pdiags")

    def __init__(self, ptr, model):
        self.ptr = ptr
        self.model = model
        self.diags = Diags()
        self.pdiags = ctypes.addressof(self.diags)

    def __del__(self):
        if self.ptr:
            lib.nnn_plan_free(self.ptr)
            self.ptr = None
            lib.nnn_diags_free(byref(self.diags))


class Plan:
    """A model planned for one input shape: shapes inferred, kernels found
    and prepared, buffers sized once. run() then only computes, with the
    GIL released. One call at a time per plan (make one plan per thread for
    parallel calls). A context manager: close() on exit. close() is safe
    from any thread at any time: a run in progress completes (the plan's
    memory goes when it returns), and runs started after raise UsageError."""

    __slots__ = ("_h", "_run", "_in", "_out")

    def __init__(self, model, input_shape, threads=1, conv_compat="spec"):
        """Plans `model` for inputs of input_shape with `threads` threads
        (the caller's included); conv_compat as for Model.plan. Raises
        ValidationError when the shape does not fit, naming the layer."""
        self._h = None
        self._setup(model._live(), model._nlayers, input_shape, threads, conv_compat)

    @classmethod
    def _of(cls, handle, nlayers, input_shape, threads, conv_compat):
        """A Plan of a model's _Handle (a call holding it: Model.run)."""
        p = cls.__new__(cls)
        p._h = None
        p._setup(handle, nlayers, input_shape, threads, conv_compat)
        return p

    def _setup(self, h, n, input_shape, threads, conv_compat):
        shape = _shape(input_shape)
        if conv_compat not in ("spec", "original"):
            raise usage(f'conv_compat must be "spec" or "original", found {conv_compat!r}')
        if int(threads) < 1:
            raise usage(f"threads must be at least 1, found {threads}")
        opts = _lib.RunOpts(size=ctypes.sizeof(_lib.RunOpts), threads=int(threads),
                            compat=_lib.COMPAT_CONV_ORIGINAL if conv_compat == "original" else 0)
        p = c_void_p()
        _call(lib.nnn_plan_new, h.ctx.ptr, h.model, byref(shape), byref(opts), byref(p))
        ph = _PlanHandle(p.value, h)
        out = lib.nnn_plan_shape(ph.ptr, n - 1).contents
        self._in = tuple(shape.dims[:shape.rank])
        self._out = tuple(out.dims[:out.rank])
        self._run = lib.nnn_plan_run
        self._h = ph

    @property
    def input_shape(self):
        """The shape of the inputs run() takes (batch first, channels last)."""
        return self._in

    @property
    def output_shape(self):
        """The shape of the outputs run() gives."""
        return self._out

    def run(self, x, out=None):
        """Runs the plan on x (of input_shape; converted to C-contiguous
        float32 when it is not) into out (a C-contiguous float32 array of
        output_shape, allocated when None) and returns out. Raises
        UsageError for a shape that is not input_shape, or when the plan
        is closed. A close() in another thread meanwhile does not stop the
        run: it completes, and the plan is freed when it returns."""
        # Held to the end of the call: a close() meanwhile drops only the
        # Plan's reference, and the native plan outlives this call.
        h = self._h
        if h is None:
            raise usage("the plan is closed")
        # Lean on purpose: a few identity tests, and addresses taken through
        # ctypes' buffer export (x.ctypes.data costs over a microsecond).
        if type(x) is not np.ndarray or x.dtype is not _F32 or x.shape != self._in or not x.flags.c_contiguous:
            x = self._input(x)
        if out is None:
            out = np.empty(self._out, _F32)
        elif type(out) is not np.ndarray or out.dtype is not _F32 or out.shape != self._out or \
                not out.flags.c_contiguous:
            raise usage(f"out must be a writable C-contiguous float32 array of shape {self._out}")
        try:
            xa = _addressof(_export(x))
        except TypeError:  # read-only (a model's tensor, a frozen array)
            xa = x.__array_interface__["data"][0]
        try:
            ya = _addressof(_export(out))
        except TypeError:
            raise usage("out is read-only") from None
        st = self._run(h.ptr, xa, ya, h.pdiags)
        if st != 0:
            self._fail(h, st)
        return out

    @staticmethod
    def _fail(h, st):
        e = error(st, h.diags)
        lib.nnn_diags_clear(byref(h.diags))
        raise e

    def _input(self, x):
        x = np.ascontiguousarray(x, dtype=_F32)
        if x.shape != self._in:
            raise usage(f"x has shape {x.shape}, the plan takes {self._in}")
        return x

    def close(self):
        """Frees the plan (its buffers and threads); run() then raises
        UsageError. Never raises and never waits: from any thread, while a
        run is in progress in another, that run completes with its result
        and the plan is freed when it returns."""
        self._h = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __repr__(self):
        return f"<nnnkit.Plan {self._in} -> {self._out}>"
