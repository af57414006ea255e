"""Errors and problems: libnnn's diagnostics as Python values.

Every libnnn failure becomes an nnnkit.Error (a subclass chosen by the status
code's family) carrying the code, path, offset and message of the first
problem, and every problem in .problems.
"""

from . import _lib
from ._lib import lib


def status_name(status):
    """libnnn's symbolic name of a status code ("E_TRUNCATED")."""
    return lib.nnn_status_name(status).decode()


class Problem:
    """One problem libnnn found: .code (status name, "E_SHAPE"), .status (its
    number), .path (field path, None for the whole file), .offset (byte offset
    in the file, None when none applies), .line and .column (in a JSON text,
    None otherwise), .message (what was found and expected). str() is
    libnnn's formatted line, with the remedy."""

    __slots__ = ("code", "status", "path", "offset", "line", "column", "message", "text")

    def __init__(self, diag):
        """Copies one nnn_diag_t (a ctypes _lib.Diag)."""
        self.status = int(diag.code)
        self.code = status_name(self.status)
        path = diag.path.decode("utf-8", "replace")
        self.path = path or None
        self.offset = None if diag.offset == _lib.NO_OFFSET else int(diag.offset)
        self.line = int(diag.line) or None
        self.column = int(diag.column) or None
        self.message = diag.msg.decode("utf-8", "replace")
        buf = _lib.ctypes.create_string_buffer(_lib.PATH_MAX + _lib.MSG_MAX + 512)
        self.text = lib.nnn_diag_format(_lib.ctypes.byref(diag), buf, len(buf)).decode("utf-8", "replace")

    def __str__(self):
        return self.text

    def __repr__(self):
        return f"Problem(code={self.code!r}, path={self.path!r}, offset={self.offset!r}, message={self.message!r})"

    def __eq__(self, other):
        if not isinstance(other, Problem):
            return NotImplemented
        return (self.status, self.path, self.offset, self.message) == \
            (other.status, other.path, other.offset, other.message)

    def __hash__(self):
        return hash((self.status, self.path, self.offset, self.message))


class Error(Exception):
    """A libnnn failure. .code is the status name ("E_TRUNCATED"), .status its
    number; .path, .offset and .message are the first problem's (None when
    libnnn gave none); .problems every problem; .file the file concerned, if any."""

    def __init__(self, status, problems=(), file=None, message=None):
        """status: libnnn's code (int); problems: Problem objects, the first
        one the error's; file: the file concerned; message: a message of the
        caller's (the Python side's own checks) instead of the first problem's."""
        self.status = int(status)
        self.code = status_name(self.status)
        self.problems = list(problems)
        self.file = file
        first = self.problems[0] if self.problems else None
        self.path = first.path if first else None
        self.offset = first.offset if first else None
        self.message = message if message is not None else (first.message if first else
                                                            lib.nnn_status_str(self.status).decode())
        if message is not None or not first:
            text = f"{self.code}: {self.message}"
            if self.path:
                text = f"{self.path}: {text}"
        else:
            text = first.text
        if file:
            text = f"{file}: {text}"
        if len(self.problems) > 1:
            more = len(self.problems) - 1
            text += f" (and {more} more problem{'s' if more > 1 else ''})"
        self._message = message
        super().__init__(text)

    def __reduce__(self):
        # Picklable (Dask sends a worker's exceptions to the client).
        return (_rebuild, (type(self), self.status, self.problems, self.file, self._message))


def _rebuild(cls, status, problems, file, message):
    return cls(status, problems, file=file, message=message)


class FormatError(Error):
    """The bytes (or text) are not a model: decoding failed (a file cut short,
    a bad count, an unknown ID, JSON that does not read as a model...)."""


class ValidationError(Error):
    """The model decodes but breaks a rule: a tensor shape, a parameter count,
    an input shape that does not fit, a chain of layers that does not."""


class UsageError(Error, ValueError):
    """An invalid argument (E_USAGE): a bad shape, a wrong dtype, a closed model."""


class PluginError(Error):
    """A plugin did not load (E_PLUGIN)."""


class KernelError(Error):
    """A kernel failed while planning or running (E_KERNEL)."""


class LimitError(Error):
    """A resource limit was reached (E_LIMIT), or memory ran out (E_NOMEM)."""


class FileError(Error, OSError):
    """Input or output failed (E_IO): a missing file, a folder, no permission."""


# Which class a status family gets; every other code is a plain Error.
_CLASSES = {
    "E_IO": FileError,
    "E_NOMEM": LimitError,
    "E_USAGE": UsageError,
    "E_LIMIT": LimitError,
    "E_PLUGIN": PluginError,
    "E_KERNEL": KernelError,
}
_FORMAT = ("E_TRUNCATED", "E_MAGIC", "E_COUNT_NEGATIVE", "E_BOOL", "E_UTF8", "E_TRAILING", "E_UNKNOWN_ID",
           "E_ENUM", "E_DIM_NEGATIVE", "E_DIM_OVERFLOW", "E_DIM_MISMATCH", "E_NPY", "E_SAFETENSORS", "E_JSON",
           "E_JSON_MISSING", "E_JSON_UNKNOWN", "E_JSON_TYPE", "E_ONNX", "E_ONNX_OP")
_VALIDATION = ("E_PARAM_COUNT", "E_SHAPE", "E_RANGE", "E_PADDING", "E_CHAIN", "E_INPUT_SHAPE")
_CLASSES.update({c: FormatError for c in _FORMAT})
_CLASSES.update({c: ValidationError for c in _VALIDATION})


def problems(diags):
    """Every problem of an nnn_diags_t, as Problem objects."""
    return [Problem(diags.v[i]) for i in range(diags.n)]


def error(status, diags=None, file=None, cls=None):
    """The exception for a failed call: its class by status family."""
    ps = problems(diags) if diags is not None else []
    if cls is None:
        cls = _CLASSES.get(status_name(status), Error)
    return cls(status, ps, file=file)


def usage(message, cls=UsageError):
    """An E_USAGE error of the Python side's own (a bad argument), of class cls."""
    return cls(_E_USAGE, (), message=message)


# libnnn's number for E_USAGE, by its name (codes are pinned: nnn/status.h).
_E_USAGE = next(n for n in range(256) if status_name(n) == "E_USAGE")
