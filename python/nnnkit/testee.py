"""The conformance kit's testee for the nnnkit Python package (docs/conformance.md).

    python3 -m nnnkit.testee [--plugin FILE]...

Reads requests, one JSON object per line, on stdin and answers each with one
JSON line on stdout, in order, flushed; exits 0 at the end of stdin. The ops:

    hello     {"name": "nnnkit-python", "version": nnnkit.__version__, "protocol": 1, "ops": [...]}
    decode    nnnkit.load(file): refused with the FormatError's first problem
    validate  nnnkit.validate(file, input_shape): refused with every problem
    encode    nnnkit.load(file), then Model.save(output) (atomic: output is
              replaced whole or untouched)
    run       Model.run on np.load(input) as float32, written to output with
              np.save (atomically: a temporary file beside it, renamed)

A refusal is {"id", "ok": false, "code", "path", "offset", "message",
"problems"}: the status name, the field path ("" for the file as a whole),
the byte offset (null when none applies), as libnnn reports them. A request
line that cannot be served (not JSON, not an object, no integer id, an
unknown op, a field missing or of the wrong type) is answered ok=false with
code E_USAGE and a message saying what was expected; its id is null when it
had none. Blank lines are skipped. No request stops the testee: an error
the package does not name is answered too, and logged on stderr.
--plugin FILE (repeatable): plugin .so files loaded before the builtin ones,
for files that use a plugin's layers or activations.
"""

import argparse
import json
import os
import sys
import tempfile

import numpy as np

import nnnkit

PROTOCOL = 1
OPS = ("decode", "validate", "encode", "run")  # what hello names: every op of the protocol but hello
# The string fields each request needs (paths: absolute, as runners send them).
_NEEDS = {"hello": (), "decode": ("file",), "validate": ("file",), "encode": ("file", "output"),
          "run": ("file", "input", "output")}


class BadRequest(Exception):
    """A request line this testee cannot serve: answered with E_USAGE (and
    "unsupported": true for an op it does not offer, as the protocol asks)."""

    def __init__(self, message, rid=None, unsupported=False):
        super().__init__(message)
        self.rid = rid  # the request's id, when parse found a usable one
        self.unsupported = unsupported


def problem(p):
    """A Problem (or an Error) as the protocol's problem object."""
    return {"code": p.code, "path": p.path or "", "offset": p.offset, "message": p.message}


def refusal(rid, e):
    """The answer for an nnnkit.Error: its first problem, and every problem."""
    return {"id": rid, "ok": False, **problem(e), "problems": [problem(p) for p in e.problems]}


def usage(rid, message):
    return {"id": rid, "ok": False, "code": "E_USAGE", "path": None, "offset": None, "message": message,
            "problems": []}


def write_atomic(path, save):
    """Calls save(f) on a temporary file beside path, then renames it over
    path: a failed write leaves path as it was."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".testee-", dir=folder)
    try:
        with os.fdopen(fd, "wb") as f:
            save(f)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


class Testee:
    """The ops over the nnnkit package; a subclass may change any of them
    (tests/tools/broken_testee.py does). Each op takes the request and
    returns the answer's fields beyond id; an nnnkit.Error it raises is
    answered as a refusal."""

    name = "nnnkit-python"
    version = nnnkit.__version__

    def __init__(self, plugins=()):
        self.plugins = list(plugins) or None

    def hello(self, req):
        want = req.get("protocol", PROTOCOL)
        if type(want) is not int or want != PROTOCOL:
            raise BadRequest(f"protocol {json.dumps(want)} asked: this testee speaks protocol {PROTOCOL}")
        return {"ok": True, "name": self.name, "version": self.version, "protocol": PROTOCOL, "ops": list(OPS)}

    def decode(self, req):
        nnnkit.load(req["file"], plugins=self.plugins).close()
        return {"ok": True}

    def validate(self, req):
        found = nnnkit.validate(req["file"], input_shape(req), plugins=self.plugins)
        if found:
            return {"ok": False, **problem(found[0]), "problems": [problem(p) for p in found]}
        return {"ok": True}

    def encode(self, req):
        with nnnkit.load(req["file"], plugins=self.plugins) as m:
            m.save(req["output"])
        return {"ok": True}

    def run(self, req):
        x = read_input(req["input"])
        with nnnkit.load(req["file"], plugins=self.plugins) as m:
            y = m.run(x)
        write_atomic(req["output"], lambda f: np.save(f, y))
        return {"ok": True}

    def answer(self, line):
        """The answer (a dict) to one request line (str)."""
        rid = None
        try:
            req = parse(line)
            rid = req["id"]
            return {"id": rid, **getattr(self, req["op"])(req)}
        except BadRequest as e:
            a = usage(rid if e.rid is None else e.rid, str(e))
            return {**a, "unsupported": True} if e.unsupported else a
        except nnnkit.Error as e:
            return refusal(rid, e)
        except OSError as e:  # the input .npy or the output's folder
            return {"id": rid, "ok": False, "code": "E_IO", "path": "", "offset": None,
                    "message": f"{e.filename or ''}: {e.strerror or e}".lstrip(": "), "problems": []}
        except Exception as e:  # never stop serving: say what happened
            print(f"nnnkit.testee: request {rid}: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
            return usage(rid, f"{type(e).__name__}: {e}")

    def serve(self, lines, out):
        """Answers every line of `lines` (bytes) on `out` (a text stream)."""
        for raw in lines:
            try:
                line = raw.decode("utf-8")
            except UnicodeDecodeError as e:
                a = usage(None, f"the request line is not UTF-8 ({e.reason} at byte {e.start}): "
                                "send one JSON object per line, in UTF-8")
            else:
                if not line.strip():
                    continue
                a = self.answer(line)
            out.write(json.dumps(a) + "\n")
            out.flush()


def parse(line):
    """A request line as a dict with an integer id, a known op and that
    op's string fields; BadRequest saying what is wrong otherwise."""
    try:
        req = json.loads(line)
    except ValueError as e:
        raise BadRequest(f"the request line is not JSON ({e}): send one JSON object per line") from None
    if not isinstance(req, dict):
        raise BadRequest(f"the request is a JSON {type(req).__name__}, not an object: send "
                         '{"id": N, "op": ...}')
    rid = req.get("id")
    if type(rid) is not int:
        raise BadRequest(f'"id" is {json.dumps(rid)}: every request needs an integer id')
    op = req.get("op")
    if op not in _NEEDS:
        raise BadRequest(f'unknown op {json.dumps(op)}: this testee offers hello, {", ".join(OPS)}', rid,
                         unsupported=True)
    for name in _NEEDS[op]:
        if not isinstance(req.get(name), str) or not req[name]:
            raise BadRequest(f'{op} needs "{name}", a path (found {json.dumps(req.get(name))})', rid)
    return req


def input_shape(req):
    """validate's optional input_shape: a list of integers, or None."""
    s = req.get("input_shape")
    if s is not None and not (isinstance(s, list) and all(type(d) is int for d in s)):
        raise BadRequest(f'"input_shape" is {json.dumps(s)}: a list of integers (batch first), or null')
    return s


def read_input(path):
    """run's input: a float32 .npy file (no pickles)."""
    try:
        x = np.load(path, allow_pickle=False)
    except ValueError as e:
        raise BadRequest(f"{path}: not a .npy array ({e}): the input must be a float32 .npy file") from None
    if not isinstance(x, np.ndarray) or x.dtype != np.float32:
        raise BadRequest(f"{path}: the input is {getattr(x, 'dtype', type(x).__name__)}, not float32: "
                         "inputs are float32 .npy files")
    return x


def serve_stdio(testee):
    """Serves stdin to stdout with `testee`; returns the exit status (0)."""
    try:
        testee.serve(sys.stdin.buffer, sys.stdout)
    except BrokenPipeError:
        # The runner went away: nobody is left to answer (and Python's own
        # flush at exit would fail the same way).
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
    return 0


def main(argv=None):
    """Parses the arguments, serves stdin, returns the exit status."""
    ap = argparse.ArgumentParser(prog="python3 -m nnnkit.testee", description="The conformance kit's testee "
                                 "over the nnnkit package: JSON lines on stdin and stdout (docs/conformance.md).")
    ap.add_argument("--plugin", action="append", default=[], metavar="FILE",
                    help="a plugin .so to load before the builtin ones (repeatable)")
    args = ap.parse_args(argv)
    return serve_stdio(Testee(args.plugin))


if __name__ == "__main__":
    sys.exit(main())
