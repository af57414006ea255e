"""libnnn through ctypes: finding the library and declaring the C API used.

Only C declarations live here (nnn/*.h as ctypes); what a model contains is
read from libnnn's record descriptors at run time, never restated.
"""

import ctypes
import glob
import os
from ctypes import (POINTER, Structure, c_bool, c_char, c_char_p, c_int, c_int32, c_int64, c_size_t,
                    c_uint, c_uint8, c_uint32, c_uint64, c_void_p)

SONAME = "libnnn.so.1"
NO_OFFSET = 2**64 - 1
PATH_MAX = 192
MSG_MAX = 384
MAX_RANK = 32
DIM_UNKNOWN = -1

# nnn/types.h enums (values pinned by the ABI).
PRIM_U8, PRIM_I32, PRIM_U64, PRIM_F32, PRIM_BOOL, PRIM_STRING, PRIM_I32_ARRAY, PRIM_F32_ARRAY = range(8)
# Other element types (nnn/types.h): NNN_PRIM_NUM_OF(kind, width) = 0x100 | kind << 4 | width, arrays 0x200 | ...
PRIM_NUM, PRIM_NUMS = 0x100, 0x200
EK_NONE, EK_INT, EK_UINT, EK_FLOAT, EK_BFLOAT, EK_BOOL = range(6)
FK_PRIM, FK_ENUM, FK_RECORD, FK_ARRAY, FK_VARIANT = range(5)
FX_NONE, FX_LAYER, FX_ACTIVATION = range(3)
FD_CONST, FD_COUNT, FD_PARAM, FD_TOTAL = 1, 2, 4, 8
DECODE_COPY = 1
JSON_SPEC = 1
COMPAT_CONV_ORIGINAL = 1  # nnn/compat.h
INFO_SAY_PYTHON = 1  # nnn/info.h: the text names input_shape=(...), not --input-shape
INFO_TEXT, INFO_MARKDOWN = 0, 1  # nnn/info.h: nnn_info_form_t
RUN_BATCH = 256  # nnn/run.h NNN_RUN_BATCH: Model.run's rows per call, as nnnkit run's


def _candidates():
    """Where the library may be, in the order api.md gives."""
    env = os.environ.get("NNN_LIBRARY")
    if env:
        yield env
    here = os.path.dirname(os.path.abspath(__file__))
    yield from sorted(glob.glob(os.path.join(here, "libnnn.so*")))
    # Installed: PREFIX/lib/python3*/site-packages/nnnkit -> PREFIX/lib.
    parent = here
    while os.path.dirname(parent) != parent:
        parent = os.path.dirname(parent)
        if os.path.basename(parent).startswith("python3"):
            yield os.path.join(os.path.dirname(parent), SONAME)
            break
    build = os.environ.get("NNN_BUILD") or os.path.join(here, "..", "..", "build")
    yield os.path.join(build, SONAME)


def _find():
    env = os.environ.get("NNN_LIBRARY")
    if env and not os.path.isfile(env):
        # An explicit choice: never silently replaced by another libnnn.
        raise ImportError(f"nnnkit: NNN_LIBRARY names {env}, which is not a file")
    tried = []
    for path in _candidates():
        if os.path.isfile(path):
            return os.path.abspath(path)
        tried.append(path)
    raise ImportError("nnnkit: libnnn not found (set NNN_LIBRARY to its path); tried: " + ", ".join(tried))


# ---- nnn/status.h ----

class Diag(Structure):
    _fields_ = [("code", c_int), ("offset", c_uint64), ("path", c_char * PATH_MAX), ("msg", c_char * MSG_MAX),
                ("line", c_uint32), ("column", c_uint32)]


class Diags(Structure):
    _fields_ = [("v", POINTER(Diag)), ("n", c_size_t), ("cap", c_size_t), ("limit", c_size_t),
                ("dropped", c_size_t)]


# ---- nnn/types.h ----

class Str(Structure):
    _fields_ = [("ptr", c_void_p), ("len", c_int32)]


class I32s(Structure):
    _fields_ = [("v", POINTER(c_int32)), ("n", c_int32)]


class F32s(Structure):
    _fields_ = [("bytes", c_void_p), ("n", c_int32)]


class Ext(Structure):
    _fields_ = [("type", c_void_p), ("body", c_void_p)]


class Shape(Structure):
    _fields_ = [("rank", c_int32), ("dims", c_int64 * MAX_RANK)]


VALUE_NAME = ctypes.CFUNCTYPE(c_char_p, c_int64)
VALUE_OF = ctypes.CFUNCTYPE(c_bool, c_char_p, POINTER(c_int64))


class Type(Structure):
    _fields_ = [("name", c_char_p), ("value_name", VALUE_NAME), ("value_of", VALUE_OF), ("names", c_char_p)]


class RDesc(Structure):
    pass


class VDesc(Structure):
    _fields_ = [("value", c_int64), ("rec", POINTER(RDesc))]


class FDesc(Structure):
    _fields_ = [("name", c_char_p), ("doc", c_char_p), ("kind", c_int), ("prim", c_int), ("flags", c_uint),
                ("offset", c_size_t), ("value", c_int64), ("type", POINTER(Type)), ("rec", POINTER(RDesc)),
                ("ref", c_int32), ("variants", POINTER(VDesc)), ("nvariants", c_int32), ("ext", c_int),
                ("ext_offset", c_size_t)]


class Derive(Structure):
    _fields_ = [("field", c_int32), ("tensor", c_int32), ("array", c_int32), ("dim", c_int32)]


RDesc._fields_ = [("size", c_uint32), ("field_size", c_uint32), ("name", c_char_p), ("record_size", c_size_t),
                  ("fields", c_void_p), ("nfields", c_int32), ("dims", c_int32), ("data", c_int32),
                  ("derive", POINTER(Derive)), ("nderive", c_int32)]

# ---- nnn/shape.h ----


class PShape(Structure):
    _fields_ = [("rank", c_int32), ("dims", c_int64 * MAX_RANK), ("last", c_int64)]


class LayerShapes(Structure):
    _fields_ = [("in_", PShape), ("out", PShape)]


# ---- nnn/plugin.h: the leading members of a plugin's type, up to `record` ----

_FN = c_void_p


class LayerType(Structure):
    _fields_ = [("size", c_uint32), ("id", c_uint8), ("name", c_char_p), ("body_size", c_size_t)] + \
        [(n, _FN) for n in ("decode", "encode", "encoded_size", "validate", "tensors", "format", "infer",
                            "prepare", "release", "forward")] + [("record", POINTER(RDesc))]


class ActivationType(Structure):
    _fields_ = [("size", c_uint32), ("id", c_uint8), ("name", c_char_p), ("params_size", c_size_t)] + \
        [(n, _FN) for n in ("decode", "encode", "encoded_size", "validate", "format", "forward")] + \
        [("record", POINTER(RDesc))]


class NamedTensor(Structure):
    _fields_ = [("name", c_char_p), ("tensor", c_void_p)]


# ---- options ----

class DecodeOpts(Structure):
    _fields_ = [("flags", c_uint), ("visit", c_void_p), ("ctx", c_void_p)]


class RunOpts(Structure):
    _fields_ = [("size", c_uint32), ("threads", c_int), ("max_tensor_bytes", c_uint64), ("compat", c_uint32)]


class DiscoverOpts(Structure):
    _fields_ = [("size", c_size_t), ("files", POINTER(c_char_p)), ("nfiles", c_int), ("search", c_bool),
                ("installed_dir", c_char_p), ("scanner", c_char_p), ("timeout_ms", c_int), ("cache", c_char_p)]


class InfoOpts(Structure):
    _fields_ = [("size", c_uint32), ("say", c_uint32), ("file", c_char_p), ("file_size", c_uint64),
                ("input", POINTER(Shape)), ("form", c_uint32)]


class JsonReadOpts(Structure):
    _fields_ = [("flags", c_uint), ("ctx", c_void_p), ("base_dir", c_char_p)]


class PluginReport(Structure):
    _fields_ = [("path", c_char_p), ("name", c_char_p), ("version", c_char_p), ("stage", c_char_p),
                ("status", c_int), ("message", c_char_p), ("nlayers", c_int), ("nactivations", c_int),
                ("layer_ids", c_uint8 * 256), ("activation_ids", c_uint8 * 256)]


P = c_void_p
PD = POINTER(Diags)

# name: (restype, argtypes)
_API = {
    "nnn_version": (c_char_p, []),
    "nnn_status_str": (c_char_p, [c_int]),
    "nnn_status_name": (c_char_p, [c_int]),
    "nnn_status_remedy": (c_char_p, [c_int]),
    "nnn_diags_init": (None, [PD]),
    "nnn_diags_free": (None, [PD]),
    "nnn_diags_clear": (None, [PD]),
    "nnn_diag_format": (c_char_p, [POINTER(Diag), c_char_p, c_size_t]),
    "nnn_ctx_new": (c_int, [POINTER(P), PD]),
    "nnn_ctx_free": (None, [P]),
    "nnn_plugin_load": (c_int, [P, c_char_p, PD]),
    "nnn_plugin_discover": (c_int, [P, POINTER(DiscoverOpts), PD]),
    "nnn_ctx_report": (c_size_t, [P, c_size_t, POINTER(PluginReport)]),
    "nnn_ctx_layer": (P, [P, c_int, POINTER(c_char_p)]),
    "nnn_ctx_activation": (P, [P, c_int, POINTER(c_char_p)]),
    "nnn_ctx_plugins_text": (c_char_p, [P, c_char_p, c_size_t]),
    "nnn_file_open": (c_int, [c_char_p, POINTER(DecodeOpts), POINTER(P), PD]),
    "nnn_file_model": (P, [P]),
    "nnn_file_map": (c_int, [c_char_p, POINTER(P), PD]),
    "nnn_file_decode": (c_int, [P, POINTER(DecodeOpts), POINTER(P), PD]),
    "nnn_file_validate": (c_int, [P, P, POINTER(Shape), PD]),
    "nnn_file_bytes": (P, [P, POINTER(c_size_t)]),
    "nnn_file_close": (None, [P]),
    "nnn_model_decode": (c_int, [P, c_size_t, POINTER(DecodeOpts), POINTER(P), PD]),
    "nnn_model_free": (None, [P]),
    "nnn_model_encode": (c_int, [P, POINTER(P), POINTER(c_size_t), PD]),
    "nnn_model_write_file": (c_int, [P, c_char_p, PD]),
    "nnn_model_param_total": (c_uint64, [P]),
    "nnn_model_encoded_size": (c_uint64, [P]),
    "nnn_model_validate": (c_int, [P, POINTER(Shape), POINTER(Shape), PD]),
    "nnn_model_check_finite": (c_int, [P, POINTER(c_uint64), PD]),
    "nnn_model_shapes": (c_int, [P, POINTER(Shape), POINTER(LayerShapes), PD]),
    "nnn_model_fixed_input": (c_bool, [P, POINTER(Shape)]),
    "nnn_pshape_format": (c_char_p, [POINTER(PShape), c_char_p, c_size_t]),
    "nnn_model_info": (c_size_t, [P, P, POINTER(InfoOpts), c_char_p, c_size_t]),
    "nnn_shape_format": (c_char_p, [POINTER(Shape), c_char_p, c_size_t]),
    "nnn_plan_new": (c_int, [P, P, POINTER(Shape), POINTER(RunOpts), POINTER(P), PD]),
    "nnn_plan_shape": (POINTER(Shape), [P, c_int32]),
    "nnn_plan_run": (c_int, [P, P, P, P]),
    "nnn_plan_free": (None, [P]),
    "nnn_json_encode": (c_int, [P, P, POINTER(P), POINTER(c_size_t), PD]),
    "nnn_json_decode": (c_int, [c_char_p, c_size_t, POINTER(JsonReadOpts), POINTER(P), PD]),
    "nnn_safetensors_write_file": (c_int, [P, P, c_char_p, PD]),
    "nnn_safetensors_decode": (c_int, [c_char_p, c_size_t, POINTER(DecodeOpts), POINTER(P), PD]),
    "nnn_layer_title": (c_char_p, [P]),
    "nnn_layer_format": (c_size_t, [P, c_char_p, c_size_t]),
    "nnn_activation_title": (c_char_p, [P]),
    "nnn_activation_format": (c_size_t, [P, c_char_p, c_size_t]),
    "nnn_layer_tensors": (c_int, [P, POINTER(NamedTensor), c_int]),
    "nnn_padding_type_pads": (c_bool, [c_int64, c_int64, POINTER(c_int64), POINTER(c_int64)]),
}


def _load():
    path = _find()
    lib = ctypes.CDLL(path)  # CDLL: every call releases the GIL
    for name, (res, args) in _API.items():
        fn = getattr(lib, name)
        fn.restype = res
        fn.argtypes = args
    return lib, path


lib, path = _load()
# free() for the buffers libnnn returns (nnn_model_encode, nnn_json_encode).
libc_free = ctypes.CDLL(None).free
libc_free.argtypes = [c_void_p]
libc_free.restype = None

model_desc = RDesc.in_dll(lib, "nnn_model_desc")
tensor_desc = RDesc.in_dll(lib, "nnn_tensor_desc")
activation_desc = RDesc.in_dll(lib, "nnn_activation_desc")


def plugin_dir():
    """The installed plugin folder, found beside the library as the CLI finds
    it beside itself: PREFIX/lib/nnnkit/plugins for PREFIX/lib/libnnn.so.1
    when that exists, else plugins/ in the library's folder (the build tree,
    or a package carrying libnnn.so.1, nnn-plugin-scan and plugins/)."""
    here = os.path.dirname(path)
    installed = os.path.join(here, "nnnkit", "plugins")
    return installed if os.path.isdir(installed) else os.path.join(here, "plugins")


def fields(rd):
    """The field descriptors of a record descriptor (its own stride: plugins may be newer)."""
    base = rd.fields
    return [FDesc.from_address(base + i * rd.field_size) for i in range(rd.nfields)]
