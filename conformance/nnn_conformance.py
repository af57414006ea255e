#!/usr/bin/env python3
"""nnn_conformance.py: the standalone runner of the .nnn conformance kit.

Scores an implementation of the .nnn format (the *testee*) against the kit
this file ships in, with nothing but python3 (3.9+) and NumPy:

    python3 nnn_conformance.py run --testee 'mytool --testee' [--kit DIR]
        [--known-failures FILE] [--fix] [--level required|recommended]
        [--timeout S] [--json FILE] [--only ID-GLOB] [-v]
    python3 nnn_conformance.py matrix A.json B.json ... -o matrix.html

`run` starts the testee once (`/bin/sh -c CMD`, in a session and process
group of its own), says hello, and sends it every case of the kit's
manifest.json as JSON-line requests (decode, validate, encode, run). Each
request has a deadline; a testee that misses it, dies, or answers out of
protocol has its whole process group killed and is started again for the
next request. Each case gives up to five checks (decode, verdict, roundtrip,
run: required; error: recommended), scored per level and per family, judged
against an optional list of known failures. Exit status: 0 when every case
passed or failed as listed, 1 otherwise, 2 for a usage error (it says which
option or file, and what to do).

`matrix` turns the --json results of several testees into one self-contained
HTML page: a column per testee, a row per case grouped by family.

The protocol, the checks, the levels and the results are specified in the
kit's README.md and in nnnkit's docs/conformance.md.
"""

import argparse
import fnmatch
import html
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time

try:  # `run` needs NumPy (the .npy outputs); `matrix` does not
    import numpy as np
except ImportError:
    np = None

RUNNER = "nnn_conformance.py"
KIT_FORMAT = 1
PROTOCOL = 1
LEVELS = ("required", "recommended")
CHECK_LEVEL = {"decode": "required", "verdict": "required", "roundtrip": "required",
               "run": "required", "error": "recommended"}
BROKEN = ("timeout", "crashed", "protocol")  # results where the testee, not the file, failed
MAX_LINE = 16 << 20  # an answer longer than this is out of protocol
STDERR_TAIL = 8      # lines of a dead testee's stderr shown


class UsageError(Exception):
    """The kit, the list, the options or the testee cannot be used: exit 2."""


class Interrupted(Exception):
    """SIGINT or SIGTERM: the run stops, its testee is killed, its temp files go."""

    def __init__(self, signum):
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


# ---------------------------------------------------------------- the kit

def load_kit(folder):
    """The kit's manifest, checked for what the runner relies on."""
    path = os.path.join(folder, "manifest.json")
    try:
        with open(path, encoding="utf-8") as f:
            manifest = json.load(f)
    except OSError as e:
        raise UsageError(f"--kit {folder}: cannot read manifest.json ({e.strerror}): "
                         "give the folder of an unpacked conformance kit")
    except ValueError as e:
        raise UsageError(f"{path}: not JSON ({e}): unpack the kit again")
    kit = manifest.get("kit") if isinstance(manifest, dict) else None
    if not isinstance(kit, dict) or "cases" not in manifest:
        raise UsageError(f"{path}: no \"kit\" entry or no \"cases\": not a conformance kit; "
                         "build one with `make conformance-kit`")
    if kit.get("format") != KIT_FORMAT:
        raise UsageError(f"{path}: kit format {kit.get('format')!r}, this runner reads "
                         f"format {KIT_FORMAT}: use the runner shipped in that kit")
    for i, case in enumerate(manifest["cases"]):
        missing = [k for k in ("id", "file", "family", "expect", "kind", "code") if k not in case]
        if missing:
            raise UsageError(f"{path}: cases[{i}] has no {', '.join(missing)}: unpack the kit again")
    return manifest


def load_known(path, must_exist):
    """Known failures: {id: reason} in file order, and the file's leading comment lines."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except FileNotFoundError:
        if must_exist:
            raise UsageError(f"--known-failures {path}: no such file: give an existing list, "
                             "or add --fix to write one")
        return {}, []
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"--known-failures {path}: cannot read it ({e})")
    known, header = {}, []
    for n, line in enumerate(lines, 1):
        entry, _, reason = line.partition("#")
        entry = entry.strip()
        if not entry:
            if not known:
                header.append(line)
            continue
        if len(entry.split()) != 1:
            raise UsageError(f"{path}:{n}: expected one case id then an optional '# reason', "
                             f"found {line.strip()!r}")
        known[entry] = reason.strip()
    return known, header


# ---------------------------------------------------------------- the testee

class Testee:
    """One testee process at a time: started on demand, killed whole on failure.

    ask() returns (status, answer, why): status "ok" with the answer object,
    "unsupported" for an op the testee does not offer, or timeout / crashed /
    protocol with why (the testee's group is then killed and started again at
    the next ask)."""

    def __init__(self, command, timeout, tmp, log):
        self.command, self.timeout, self.tmp, self.log = command, timeout, tmp, log
        self.proc, self.buf, self.next_id, self.starts = None, b"", 0, 0
        self.hello, self.err_path = None, ""

    def start(self):
        """Starts the testee and says hello: None, or (status, why) when that failed."""
        self.starts += 1
        self.err_path = os.path.join(self.tmp, f"stderr-{self.starts}.txt")
        with open(self.err_path, "wb") as err:
            try:
                self.proc = subprocess.Popen(["/bin/sh", "-c", self.command], stdin=subprocess.PIPE,
                                             stdout=subprocess.PIPE, stderr=err,
                                             start_new_session=True)
            except OSError as e:
                raise UsageError(f"--testee: cannot start /bin/sh ({e})")
        self.buf = b""
        os.set_blocking(self.proc.stdin.fileno(), False)
        status, answer, why = self._exchange({"op": "hello", "protocol": PROTOCOL})
        if status != "ok":
            return status, f"at hello: {why}"
        why = self._check_hello(answer)
        if why:
            self.kill()
            return "protocol", why
        self.hello = answer
        return None

    def _check_hello(self, answer):
        if answer.get("ok") is not True:
            return f"hello answered {_short(answer)}, expected ok true"
        if answer.get("protocol") != PROTOCOL:
            return f"the testee speaks protocol {answer.get('protocol')!r}, this runner {PROTOCOL}"
        ops = answer.get("ops")
        if not isinstance(ops, list) or not all(isinstance(o, str) for o in ops):
            return f"hello's ops is {ops!r}, expected a list of op names"
        return None

    def ask(self, op, **fields):
        if self.proc is None:
            failed = self.start()
            if failed:
                return failed[0], None, f"restarting the testee: {failed[1]}"
        if op not in self.hello["ops"]:
            return "unsupported", None, f"the testee does not offer `{op}` (not in its hello's ops)"
        status, answer, why = self._exchange(dict(op=op, **fields))
        if status == "ok" and answer.get("unsupported") is True:
            return "unsupported", answer, f"the testee answered `{op}` as unsupported: " \
                f"{answer.get('message') or '(no message)'}"
        return status, answer, why

    def _exchange(self, request):
        self.next_id += 1
        rid = self.next_id
        line = json.dumps(dict(id=rid, **request)).encode() + b"\n"
        deadline = time.monotonic() + self.timeout
        try:
            try:
                self._write(line, deadline)
            except _Failed as f:
                if f.status != "crashed":
                    raise
                # It answered and ended before the request was written (a
                # broken pipe): its answer is still on stdout.
                try:
                    raw = self._read_line(deadline)
                except _Failed as g:
                    raise _Failed(g.status, f"{g.why} (it had {f.why})")
            else:
                raw = self._read_line(deadline)
        except _Failed as f:
            return self._fail(f.status, f.why)
        try:
            answer = json.loads(raw)
        except ValueError:
            return self._fail("protocol", f"answered {_short(raw)}: not one JSON object")
        if not isinstance(answer, dict) or answer.get("id") != rid:
            got = answer.get("id") if isinstance(answer, dict) else None
            return self._fail("protocol", f"answered {_short(raw)}: expected a JSON object with "
                              f"\"id\": {rid}, found id {got!r}")
        if not isinstance(answer.get("ok"), bool):
            return self._fail("protocol", f"answered {_short(raw)}: no boolean \"ok\"")
        return "ok", answer, None

    def _write(self, data, deadline):
        fd = self.proc.stdin.fileno()
        while data:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([], [fd], [], left)[1]:
                raise _Failed("timeout", f"did not read its request within {self.timeout:g} s")
            try:
                data = data[os.write(fd, data):]
            except BrokenPipeError:
                raise _Failed("crashed", "closed its stdin")

    def _read_line(self, deadline):
        fd = self.proc.stdout.fileno()
        while b"\n" not in self.buf:
            if len(self.buf) > MAX_LINE:
                raise _Failed("protocol", f"answered more than {MAX_LINE} bytes without a newline")
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                raise _Failed("timeout", f"did not answer within {self.timeout:g} s")
            chunk = os.read(fd, 1 << 16)
            if not chunk:
                raise _Failed("crashed", "closed its stdout")
            self.buf += chunk
        line, _, self.buf = self.buf.partition(b"\n")
        return line

    def _fail(self, status, why):
        """Kills the testee's group; the why gets how it ended and its stderr's last lines."""
        ended = self.kill(grace=0.5 if status == "crashed" else 0)
        tail = self.stderr_tail()
        self.log(f"testee {status}: {why}{ended}; restarting it for the next request")
        for line in tail:
            self.log(f"  stderr| {line}")
        why = f"the testee {why}{ended}"
        if tail:
            why += "; its stderr ended: " + " | ".join(tail[-3:])
        return status, None, why

    def kill(self, grace=0.0):
        """Kills the whole process group (the leader is reaped only after, so its
        pgid cannot be reused meanwhile); says how the leader ended."""
        if self.proc is None:
            return ""
        proc, self.proc = self.proc, None
        ended = _leader_ended(proc, grace)
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass
        proc.wait()
        _wait_group_gone(proc.pid)
        for pipe in (proc.stdin, proc.stdout):
            try:
                pipe.close()
            except OSError:
                pass
        return ended

    def stop(self):
        """At the end: closes stdin, lets the testee exit, then kills what is left of its group."""
        if self.proc is not None:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
            self.kill(grace=min(self.timeout, 5.0))

    def stderr_tail(self):
        try:
            with open(self.err_path, "rb") as f:
                f.seek(max(0, os.path.getsize(self.err_path) - 4096))
                text = f.read().decode("utf-8", "replace")
        except OSError:
            return []
        return [l.rstrip() for l in text.splitlines() if l.strip()][-STDERR_TAIL:]


class _Failed(Exception):
    def __init__(self, status, why):
        super().__init__(why)
        self.status, self.why = status, why


def _leader_ended(proc, grace):
    """Waits up to grace seconds for the leader to end, without reaping it;
    returns ' (exited with status N)' or the like, or '' if it still runs."""
    end = time.monotonic() + grace
    while True:
        if hasattr(os, "waitid"):
            info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            if info is not None:
                if info.si_code == os.CLD_EXITED:
                    return f" (exited with status {info.si_status})"
                return f" (killed by signal {_signame(info.si_status)})"
        elif proc.poll() is not None:  # no waitid (macOS): reaped early, pgid kept by the group
            rc = proc.returncode
            return f" (exited with status {rc})" if rc >= 0 else f" (killed by signal {_signame(-rc)})"
        if time.monotonic() >= end:
            return ""
        time.sleep(0.01)


def _wait_group_gone(pgid, limit=2.0):
    """SIGKILL takes effect when each process next runs: wait (briefly) until
    no process of the group is left, so that none outlives its kill."""
    end = time.monotonic() + limit
    while _group_alive(pgid) and time.monotonic() < end:
        time.sleep(0.005)


def _group_alive(pgid):
    """Whether a live process is in the group. Zombies do not count (an init
    may reap them late); Linux tells them apart in /proc, elsewhere kill(0)."""
    if not os.path.isdir("/proc/self"):
        try:
            os.killpg(pgid, 0)
            return True
        except (ProcessLookupError, PermissionError):
            return False
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                with open(f"/proc/{d}/stat", "rb") as f:
                    fields = f.read().rsplit(b")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if fields[0] not in (b"Z", b"X") and int(fields[2]) == pgid:
                return True
    return False


def _signame(n):
    try:
        return signal.Signals(n).name
    except ValueError:
        return str(n)


def _short(x, n=120):
    s = x.decode("utf-8", "replace") if isinstance(x, bytes) else json.dumps(x)
    return repr(s if len(s) <= n else s[:n] + "…")


# ---------------------------------------------------------------- the checks

def where(code, path, offset):
    return f"{code} at {path or ''!r}, offset {offset if offset is not None else 'unknown'}"


def expected_where(case):
    return where(case["code"], case.get("path"), case.get("offset"))


def answered_where(a):
    return where(a.get("code"), a.get("path"), a.get("offset"))


def not_answered(status, why):
    """A check's record when the request got no usable answer."""
    return {"result": "fail" if status == "unsupported" else status, "why": why}


def check_verdict(op, reply, accept, case):
    """decode and verdict: accepted or refused as the case expects."""
    status, a, why = reply
    if status != "ok":
        return not_answered(status, why)
    if a["ok"] == accept:
        return {"result": "pass"}
    if accept:
        return {"result": "fail", "why": f"{op} refused the file: {answered_where(a)}: "
                f"{a.get('message', '')}; expected it accepted"}
    return {"result": "fail", "why": f"{op} accepted the file; expected it refused with "
            f"{expected_where(case)}"}


def matches(case, problem):
    if not isinstance(problem, dict) or problem.get("code") != case["code"]:
        return False
    if case.get("path") is not None and (problem.get("path") or "") != case["path"]:
        return False
    return case.get("offset") is None or problem.get("offset") == case["offset"]


def check_error(case, dec, val):
    """error: the case's code, path and offset, first (structural, in decode
    and validate) or among validate's problems (semantic)."""
    for op, (status, a, why) in (("validate", val), ("decode", dec)):
        if status != "ok":
            return not_answered(status, why)
        if a["ok"]:
            return {"result": "fail", "why": f"{op} accepted the file; expected "
                    f"{expected_where(case)}"}
        if case["kind"] != "structural":
            problems = a.get("problems") or [a]
            if any(matches(case, p) for p in problems):
                return {"result": "pass"}
            found = "; ".join(answered_where(p) for p in problems[:5] if isinstance(p, dict))
            return {"result": "fail", "why": f"validate reported {found}; expected "
                    f"{expected_where(case)} among them"}
        if not matches(case, a):
            return {"result": "fail", "why": f"{op} reported {answered_where(a)} first; "
                    f"expected {expected_where(case)}"}
    return {"result": "pass"}


def check_roundtrip(testee, case, file, out):
    status, a, why = testee.ask("encode", file=file, output=out)
    if status != "ok":
        return not_answered(status, why)
    if not a["ok"]:
        return {"result": "fail", "why": f"encode refused the file: {answered_where(a)}: "
                f"{a.get('message', '')}"}
    try:
        with open(out, "rb") as f:
            got = f.read()
    except OSError as e:
        return {"result": "fail", "why": f"encode answered ok but {out} cannot be read ({e.strerror})"}
    with open(file, "rb") as f:
        exp = f.read()
    if got == exp:
        return {"result": "pass"}
    at = first_difference(got, exp)
    g = f"0x{got[at]:02x}" if at < len(got) else "end of file"
    e = f"0x{exp[at]:02x}" if at < len(exp) else "end of file"
    return {"result": "fail", "why": f"encode wrote {len(got)} bytes, the case has {len(exp)}: "
            f"first difference at offset {at} (wrote {g}, expected {e})"}


def first_difference(a, b):
    return next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))


def check_run(testee, kit_dir, case, file, out):
    run = case["run"]
    inp = os.path.join(kit_dir, run["input"])
    status, a, why = testee.ask("run", file=file, input=inp, output=out)
    if status != "ok":
        return not_answered(status, why)
    if not a["ok"]:
        return {"result": "fail", "why": f"run failed: {answered_where(a)}: {a.get('message', '')}"}
    try:
        got = np.load(out, allow_pickle=False)
    except (OSError, ValueError) as e:
        return {"result": "fail", "why": f"run answered ok but its output {out} is not a .npy ({e})"}
    exp = np.load(os.path.join(kit_dir, run["output"]), allow_pickle=False)
    why = compare(got, exp, float(run["tolerance"]))
    return {"result": "fail", "why": why} if why else {"result": "pass"}


def compare(got, exp, tol):
    """None when got is within tol of exp (|got - exp| <= tol * (1 + |exp|),
    NaN exactly where NaN is expected), else why not."""
    if got.dtype != np.float32:
        return f"output dtype {got.dtype}, expected float32"
    if got.shape != exp.shape:
        return f"output shape {list(got.shape)}, expected {list(exp.shape)}"
    g, e = got.astype(np.float64), exp.astype(np.float64)
    gnan, enan = np.isnan(g), np.isnan(e)
    with np.errstate(invalid="ignore", over="ignore"):
        err = np.where(g == e, 0.0, np.abs(g - e))  # g == e: equal infinities pass
        close = ~gnan & ~enan & (err <= tol * (1 + np.abs(e)))
    ok = np.where(enan, gnan, close)
    if ok.all():
        return None
    bad = int((~ok).sum())
    finite = np.where(gnan | enan, 0.0, err)
    first = tuple(int(i) for i in np.unravel_index(int(np.argmin(ok)), ok.shape))
    # A NaN on one side only is no distance: count those apart from the max.
    nan = int((gnan != enan).sum())
    return (f"{bad} of {ok.size} values out of tolerance {tol:g}; "
            + (f"{nan} NaN where the other is a number, max abs error of the rest " if nan else "max abs error ")
            + f"{float(np.max(finite)):.6g}; first at index {list(first)}: "
            f"got {float(g[first])!r}, expected {float(e[first])!r}")


def run_case(testee, kit_dir, case, tmp, n):
    """The checks of one case: {check: {"result": ..., "why": ...}}."""
    file = os.path.abspath(os.path.join(kit_dir, case["file"]))
    accept = case["expect"] == "accept"
    dec = testee.ask("decode", file=file)
    fields = {"file": file}
    if accept and case.get("input_shape"):
        fields["input_shape"] = case["input_shape"]
    val = testee.ask("validate", **fields)
    checks = {"decode": check_verdict("decode", dec, case["kind"] != "structural", case),
              "verdict": check_verdict("validate", val, accept, case)}
    if accept:
        out = os.path.join(tmp, f"encode-{n}.nnn")
        checks["roundtrip"] = check_roundtrip(testee, case, file, out)
        _remove(out)
        if case.get("run"):
            out = os.path.join(tmp, f"run-{n}.npy")
            checks["run"] = check_run(testee, kit_dir, case, file, out)
            _remove(out)
    else:
        checks["error"] = check_error(case, dec, val)
    return checks


def _remove(path):
    try:
        os.remove(path)
    except OSError:
        pass


# ---------------------------------------------------------------- scores and verdict

def counts():
    return {"passed": 0, "failed": 0, "total": 0}


def score(cases):
    """Checks passed of those made, per level and per family and level."""
    levels = {lv: counts() for lv in LEVELS}
    families = {}
    for c in cases:
        fam = families.setdefault(c["family"], {lv: counts() for lv in LEVELS})
        for check, rec in c["checks"].items():
            for table in (levels, fam):
                t = table[CHECK_LEVEL[check]]
                t["total"] += 1
                t["passed" if rec["result"] == "pass" else "failed"] += 1
    return levels, families


def first_failure(case, level):
    """The first failing check that counts at this level, or None."""
    for check, rec in case["checks"].items():
        if rec["result"] != "pass" and (level == "recommended" or CHECK_LEVEL[check] == "required"):
            return check, rec
    return None


def judge(cases, level):
    """Unexpected failures (one per failing check that counts, of a case not
    listed) and passes (a listed case whose counted checks all pass)."""
    failures, passes = [], []
    for c in cases:
        if c["known"] is None:
            for check, rec in c["checks"].items():
                if rec["result"] != "pass" and (level == "recommended" or CHECK_LEVEL[check] == "required"):
                    failures.append({"id": c["id"], "check": check, "result": rec["result"],
                                     "why": rec.get("why", "")})
        elif not first_failure(c, level):
            passes.append({"id": c["id"], "known": c["known"]})
    return failures, passes


def fix_known(path, header, known, cases, all_ids, level):
    """Rewrites the list to exactly the failing cases (those not run stay as
    listed); returns (added, removed)."""
    run = {c["id"]: c for c in cases}
    entries, added = [], 0
    for cid in all_ids:
        c = run.get(cid)
        if c is None:
            if cid in known:
                entries.append((cid, known[cid]))
            continue
        fail = first_failure(c, level)
        if not fail:
            continue
        if cid in known:
            entries.append((cid, known[cid]))
        else:
            check, rec = fail
            why = " ".join(f"{check}: {rec['result']}: {rec.get('why', '')}".split())
            entries.append((cid, why[:200]))
            added += 1
    removed = len(known) - (len(entries) - added)
    if not header:
        header = ["# Known failures: one case id a line, then '# reason'.",
                  f"# Written by {RUNNER} run --fix."]
    lines = header + [f"{cid}  # {reason}" if reason else cid for cid, reason in entries]
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return added, removed


# ---------------------------------------------------------------- the text report

def pct(t):
    if not t["total"]:
        return "-"
    p = 100.0 * t["passed"] / t["total"]
    return f"{int(p * 10) / 10:.1f}%"  # floored: 99.96 % is not 100.0 %


def report(res, level, out):
    p = lambda s="": print(s, file=out)
    t, k, s = res["testee"], res["kit"], res["schema"]
    p(f"testee {t['name']} {t['version']}: {t['command']}")
    p("kit " + " ".join(str(x) for x in (k.get("version"), "schema", s.get("name"), s.get("version"),
                                          s.get("hash")) if x is not None))
    cell = lambda c: f"{c['passed']}/{c['total']} {pct(c)}".rjust(20)
    p()
    p(f"{'level':<14}{'passed':>20}")
    for lv in LEVELS:
        note = "" if lv == "required" or level == "recommended" else "  (not counted: --level required)"
        p(f"{lv:<14}{cell(res['levels'][lv])}{note}")
    p()
    p(f"{'family':<14}{'required':>20}{'recommended':>20}")
    for fam, lv in res["families"].items():
        p(f"{fam:<14}{cell(lv['required'])}{cell(lv['recommended'])}")
    uf, up = res["unexpected_failures"], res["unexpected_passes"]
    if uf:
        p()
        p(f"unexpected failures ({len(uf)}{', the first 20' if len(uf) > 20 else ''}):")
        for f in uf[:20]:
            p(f"  {f['id']}  {f['check']}: {f['result']}: {f['why']}")
    if up:
        p()
        p(f"unexpected passes ({len(up)}):")
        for f in up:
            p(f"  {f['id']}  listed as a known failure, and passes: remove it from the list (or --fix)"
              + (f" (listed: {f['known']})" if f["known"] else ""))
    known = sum(1 for c in res["cases"] if c["known"] is not None and first_failure(c, level))
    p()
    p(f"known failures: {known} failing as listed")
    verdict = "PASS" if res["ok"] else "FAIL"
    r = res["levels"]["required"]
    p(f"{verdict}: {r['passed']}/{r['total']} required checks passed, {len(uf)} unexpected "
      f"failure{'s' * (len(uf) != 1)}, {len(up)} unexpected pass{'es' * (len(up) != 1)}, "
      f"{known} known")


# ---------------------------------------------------------------- run

def run_all(args, kit_dir, cases, known):
    """Every case through one testee (restarted as needed): its hello and the
    case records. Nothing of the testee nor of the temp folder outlives it."""
    log = lambda s: print(s, flush=True)
    tmp = tempfile.mkdtemp(prefix="nnn-conformance-")
    testee = Testee(args.testee, args.timeout, tmp, log)
    try:
        failed = testee.start()
        if failed:
            raise UsageError(f"--testee {args.testee!r}: {failed[1]}")
        hello, results = testee.hello, []
        for n, case in enumerate(cases):
            rec = {"id": case["id"], "family": case["family"],
                   "checks": run_case(testee, kit_dir, case, tmp, n), "known": known.get(case["id"])}
            results.append(rec)
            if args.verbose:
                fail = first_failure(rec, "recommended")
                log(f"{'pass' if not fail else fail[1]['result']:<8} {case['id']}"
                    + (f"  {fail[0]}: {fail[1].get('why', '')}" if fail else ""))
        return hello, results
    except Interrupted:
        for s in (signal.SIGINT, signal.SIGTERM):  # a second signal must not stop the cleanup
            signal.signal(s, signal.SIG_IGN)
        testee.kill()
        raise
    finally:
        testee.stop()
        shutil.rmtree(tmp, ignore_errors=True)


def cmd_run(args):
    if np is None:
        raise UsageError(f"run compares .npy outputs with NumPy, which {sys.executable} cannot import: "
                         "install it (apt-get install python3-numpy, or pip install numpy)")
    kit_dir = os.path.abspath(args.kit or os.path.dirname(os.path.abspath(__file__)))
    manifest = load_kit(kit_dir)
    if args.fix and not args.known_failures:
        raise UsageError("--fix: rewrites the --known-failures FILE: give one")
    if args.timeout <= 0:
        raise UsageError(f"--timeout {args.timeout:g}: give a positive number of seconds")
    known, header = ({}, []) if not args.known_failures else \
        load_known(args.known_failures, must_exist=not args.fix)
    all_ids = [c["id"] for c in manifest["cases"]]
    stray = [cid for cid in known if cid not in set(all_ids)]
    if stray and not args.fix:
        raise UsageError(f"--known-failures {args.known_failures}: {stray[0]!r}"
                         + (f" and {len(stray) - 1} more" if len(stray) > 1 else "")
                         + " is no case of this kit (a list for another kit?): remove it, or add --fix")
    cases = [c for c in manifest["cases"]
             if not args.only or any(fnmatch.fnmatchcase(c["id"], g) for g in args.only)]
    if not cases:
        raise UsageError(f"--only {' '.join(args.only)}: matches no case id of the kit "
                         "(ids look like valid/dense-linear)")
    hello, results = run_all(args, kit_dir, cases, known)
    levels, families = score(results)
    fixed = None
    if args.fix:  # the run is judged against the list as it was: its status says what changed
        fixed = fix_known(args.known_failures, header, known, results, all_ids, args.level)
    ufail, upass = judge(results, args.level)
    schema = manifest.get("schema")
    schema = schema if isinstance(schema, dict) else {"name": str(schema)}
    res = {"runner": RUNNER, "kit": manifest["kit"], "schema": schema,
           "testee": {"command": args.testee, "name": str(hello.get("name", "")),
                      "version": str(hello.get("version", "")), "ops": hello["ops"]},
           "level": args.level, "levels": levels, "families": families, "cases": results,
           "unexpected_failures": ufail, "unexpected_passes": upass,
           "ok": not ufail and not upass}
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(res, f, indent=1)
            f.write("\n")
    report(res, args.level, sys.stdout)
    if fixed:
        print(f"wrote {args.known_failures}: {fixed[0]} added, {fixed[1]} removed")
    return 0 if res["ok"] else 1


# ---------------------------------------------------------------- matrix

CSS = """
body{font:14px/1.4 system-ui,sans-serif;margin:1.5em;color:#111}
table{border-collapse:collapse;margin-bottom:1.5em}
th,td{border:1px solid #ccc;padding:2px 8px;text-align:left;vertical-align:top}
thead th{background:#eee;position:sticky;top:0}
code{font-size:12px;color:#444}
tr.fam th,tr.fam td{background:#dde4ee;font-weight:bold}
.pass{background:#cdeccd}.fail{background:#f4b6b6}.rec{background:#fbe1c2}
.known{background:#e4dbf4}.broken{background:#f7a24f}.none{color:#888}
.legend span{padding:1px 8px;margin-right:6px;border:1px solid #ccc}
"""

JS = """
document.getElementById('filters').hidden = false;
function f() {
  var q = document.getElementById('q').value, d = document.getElementById('diff').checked;
  document.querySelectorAll('tr.case').forEach(function (r) {
    r.hidden = (q && r.dataset.id.indexOf(q) < 0) || (d && r.dataset.same === '1');
  });
}
document.getElementById('q').oninput = f; document.getElementById('diff').onchange = f;
"""


def load_results(path):
    try:
        with open(path, encoding="utf-8") as f:
            res = json.load(f)
    except (OSError, ValueError) as e:
        raise UsageError(f"{path}: cannot read results ({e}): give files written by run --json")
    if not isinstance(res, dict) or not all(k in res for k in ("testee", "cases", "levels")):
        raise UsageError(f"{path}: not a results file (no testee, cases or levels): "
                         "give files written by run --json")
    return res


def cell(case, level):
    """(css class, word, title) of one testee's case."""
    if case is None:
        return "none", "-", "not run"
    bad = [(k, r) for k, r in case["checks"].items() if r["result"] != "pass"]
    title = "; ".join(f"{k}: {r['result']}: {r.get('why', '')}" for k, r in bad)
    if case.get("known") is not None and first_failure(case, level):
        return "known", "known", f"known: {case['known']}; {title}"
    broken = [r["result"] for _, r in bad if r["result"] in BROKEN]
    if broken:
        return "broken", broken[0], title
    if any(CHECK_LEVEL[k] == "required" for k, _ in bad):
        return "fail", "FAIL", title
    if bad:
        return "rec", "fail (rec.)", title
    return "pass", "pass", ", ".join(case["checks"])


def score_text(t):
    return f"{t['passed']}/{t['total']} ({pct(t)})"


def esc(s):
    return html.escape(str(s), quote=True)


def matrix_html(results):
    """The page: every string from the results files goes through esc()."""
    heads = "".join(f"<th>{esc(r['testee'].get('name', ''))} {esc(r['testee'].get('version', ''))}"
                    f"<br><code>{esc(r['testee'].get('command', ''))}</code></th>" for r in results)
    h = ['<!doctype html><html lang="en"><head><meta charset="utf-8">',
         "<title>nnn conformance matrix</title>", f"<style>{CSS}</style></head><body>",
         "<h1>nnn conformance matrix</h1>"]
    h += kits_html(results) + scores_html(results, heads) + cases_html(results, heads)
    h.append(f"<script>{JS}</script></body></html>")
    return "\n".join(h) + "\n"


def kits_html(results):
    """A line per kit and schema the results were made on (one, normally)."""
    kits = {(json.dumps(r.get("kit", {}), sort_keys=True), json.dumps(r.get("schema", {}),
             sort_keys=True)) for r in results}
    lines = []
    for kit, schema in sorted(kits):
        k, s = json.loads(kit), json.loads(schema)
        named = " ".join(str(s[x]) for x in ("name", "version") if s.get(x) is not None)
        lines.append(f"<p>kit {esc(k.get('version', '?'))} (format {esc(k.get('format', '?'))}), "
                     f"schema {esc(named)} <code>{esc(s.get('hash', ''))}</code></p>")
    return lines


def scores_html(results, heads):
    h = [f'<h2>Scores</h2><table class="summary"><thead><tr><th>level</th>{heads}</tr></thead>']
    for lv in LEVELS:
        h.append(f"<tr><th>{lv}</th>" + "".join(f"<td>{esc(score_text(r['levels'][lv]))}</td>"
                                                  for r in results) + "</tr>")
    h.append("<tr><th>verdict</th>" + "".join(
        f"<td class=\"{'pass' if r.get('ok') else 'fail'}\">{'PASS' if r.get('ok') else 'FAIL'} (--level {esc(r.get('level', 'recommended'))}, "
        f"{len(r.get('unexpected_failures', []))} unexpected failures, "
        f"{len(r.get('unexpected_passes', []))} unexpected passes)</td>" for r in results) + "</tr>")
    return h + ["</table>"]


def cases_html(results, heads):
    """A tbody per family (in the order first met): its scores, then a row per case."""
    by_id = [{c["id"]: c for c in r["cases"]} for r in results]
    families = {}
    for r in results:
        for c in r["cases"]:
            fam = families.setdefault(c["family"], [])
            if c["id"] not in fam:
                fam.append(c["id"])
    h = ["<h2>Cases</h2>",
         '<p class="legend"><span class="pass">pass</span>'
         '<span class="fail">FAIL: a required check failed</span>'
         '<span class="rec">fail (rec.): only a recommended check failed</span>'
         '<span class="known">known: fails as listed</span>'
         '<span class="broken">timeout / crashed / protocol</span> Hover a cell for why.</p>',
         '<p id="filters" hidden><label>ids containing <input id="q"></label> '
         '<label><input type="checkbox" id="diff"> only rows where the testees differ</label></p>',
         f'<table class="matrix"><thead><tr><th>case</th>{heads}</tr></thead>']
    for fam, ids in families.items():
        h.append(f'<tbody><tr class="fam"><th>{esc(fam)} ({len(ids)})</th>')
        for r in results:
            f = r.get("families", {}).get(fam)
            h.append("<td>" + (" &middot; ".join(f"{lv[:3]}. {esc(score_text(f[lv]))}" for lv in LEVELS
                                                   if f[lv]["total"]) if f else "-") + "</td>")
        h.append("</tr>")
        for cid in ids:
            cells = [cell(b.get(cid), r.get("level", "recommended")) for b, r in zip(by_id, results)]
            same = int(len({c[0] for c in cells}) == 1)
            h.append(f'<tr class="case" data-id="{esc(cid)}" data-same="{same}"><td>{esc(cid)}</td>')
            h.extend(f'<td class="{cls}" title="{esc(title)}">{esc(word)}</td>' for cls, word, title in cells)
            h.append("</tr>")
        h.append("</tbody>")
    return h + ["</table>"]


def cmd_matrix(args):
    results = [load_results(p) for p in args.results]
    page = matrix_html(results)
    with open(args.output, "w", encoding="utf-8") as f:
        f.write(page)
    print(f"wrote {args.output}: {len(results)} testees, "
          f"{len({c['id'] for r in results for c in r['cases']})} cases")
    return 0


# ---------------------------------------------------------------- main

def parse(argv):
    ap = argparse.ArgumentParser(prog=RUNNER, description="Scores a .nnn implementation "
                                 "against the conformance kit (see README.md).")
    sub = ap.add_subparsers(dest="command", required=True)
    r = sub.add_parser("run", help="score one testee")
    r.add_argument("--testee", required=True, metavar="CMD", help="the testee, run by /bin/sh -c")
    r.add_argument("--kit", metavar="DIR", help="the kit (default: the folder of this script)")
    r.add_argument("--known-failures", metavar="FILE", help="cases known to fail, one id a line")
    r.add_argument("--fix", action="store_true", help="rewrite --known-failures to the failing cases")
    r.add_argument("--level", choices=LEVELS, default="recommended",
                   help="the checks that count (default: recommended, i.e. all)")
    r.add_argument("--timeout", type=float, default=10.0, metavar="S", help="per request (10 s)")
    r.add_argument("--json", metavar="FILE", help="write the results as JSON")
    r.add_argument("--only", action="append", metavar="ID-GLOB", help="only the cases matching")
    r.add_argument("-v", "--verbose", action="store_true", help="a line per case")
    m = sub.add_parser("matrix", help="one HTML page from several results files")
    m.add_argument("results", nargs="+", metavar="RESULTS.json")
    m.add_argument("-o", "--output", required=True, metavar="matrix.html")
    return ap.parse_args(argv)


def main(argv=None):
    args = parse(argv)  # argparse exits 2 on a bad option, as a usage error should

    def interrupted(signum, _frame):
        raise Interrupted(signum)

    signal.signal(signal.SIGINT, interrupted)
    signal.signal(signal.SIGTERM, interrupted)
    try:
        return cmd_run(args) if args.command == "run" else cmd_matrix(args)
    except UsageError as e:
        print(f"{RUNNER}: {e}", file=sys.stderr)
        return 2
    except Interrupted as e:
        print(f"{RUNNER}: interrupted by {e}: the testee was killed", file=sys.stderr)
        return 128 + e.signum


if __name__ == "__main__":
    sys.exit(main())
