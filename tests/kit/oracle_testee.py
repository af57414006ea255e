#!/usr/bin/python3
"""A fake testee for the conformance runners' tests: it answers every request
from the kit's own manifest (docs/conformance.md, "The testee protocol"), so
it scores 100 %, unless told to go wrong.

    python3 tests/kit/oracle_testee.py --kit DIR [--no-op OP]... [--fault FAULT=ID_GLOB]...

decode refuses a structural case with its code, path and offset and accepts
the others; validate accepts a valid case and refuses an invalid one with its
problem; encode copies the file; run copies the case's expected output.
--no-op OP leaves OP out of hello's ops (and answers it unsupported).
--fault FAULT=ID_GLOB goes wrong on every request about a case whose id
matches the glob: wrong-code, accept, reject, bad-output (run writes the
expected output + 1), bad-roundtrip (one byte flipped), crash (exit 3),
hang (two `sleep 300` children, then sleeps), garbage (a line that is not
JSON), wrong-id (answers another request's id).
"""
import argparse
import fnmatch
import json
import os
import shutil
import subprocess
import sys
import time

OPS = ["decode", "validate", "encode", "run"]


def load(kit):
    with open(os.path.join(kit, "manifest.json")) as f:
        m = json.load(f)
    cases = {}
    for c in m["cases"]:
        c.setdefault("id", c["file"][:-4] if c["file"].endswith(".nnn") else c["file"])
        cases[os.path.realpath(os.path.join(kit, c["file"]))] = c
    return cases


def refused(req, code, path, offset, message):
    p = {"code": code, "path": path, "offset": offset, "message": message}
    return dict(id=req["id"], ok=False, problems=[p], **p)


def problem(req, c, faults):
    code = "E_ORACLE_WRONG" if "wrong-code" in faults else c["code"]
    return refused(req, code, c["path"] if c["path"] is not None else "", c["offset"], "as the manifest says")


def answer(kit, req, c, faults):
    op = req["op"]
    accept = c["expect"] == "accept" if "expect" in c else c["valid"]
    if "accept" in faults:
        return {"id": req["id"], "ok": True}
    if "reject" in faults:
        return refused(req, "E_ORACLE", "", None, "told to refuse it")
    if op == "decode" and c["kind"] == "structural":
        return problem(req, c, faults)
    if op == "validate" and not accept:
        return problem(req, c, faults)
    if op == "encode":
        shutil.copyfile(req["file"], req["output"])
        if "bad-roundtrip" in faults:
            with open(req["output"], "r+b") as f:
                f.seek(os.path.getsize(req["output"]) // 2)
                b = f.read(1)
                f.seek(-1, 1)
                f.write(bytes([b[0] ^ 0xFF]))
    if op == "run":
        want = os.path.join(kit, c["run"]["output"])
        if "bad-output" in faults:
            import numpy as np
            np.save(req["output"], np.load(want) + np.float32(1))
            if not req["output"].endswith(".npy"):
                os.replace(req["output"] + ".npy", req["output"])
        else:
            shutil.copyfile(want, req["output"])
    return {"id": req["id"], "ok": True}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kit", required=True)
    ap.add_argument("--no-op", action="append", default=[])
    ap.add_argument("--fault", action="append", default=[])
    a = ap.parse_args()
    cases = load(a.kit)
    rules = [f.split("=", 1) for f in a.fault]
    ops = [op for op in OPS if op not in a.no_op]
    for line in sys.stdin:
        req = json.loads(line)
        if req["op"] == "hello":
            out = {"id": req["id"], "ok": True, "name": "oracle", "version": "1", "protocol": 1, "ops": ops}
        elif req["op"] not in ops:
            out = {"id": req["id"], "ok": False, "unsupported": True, "message": "no " + req["op"] + " here"}
        else:
            c = cases[os.path.realpath(req["file"])]
            faults = {f for f, glob in rules if fnmatch.fnmatchcase(c["id"], glob)}
            print("oracle: %s %s" % (req["op"], c["id"]), file=sys.stderr, flush=True)
            if "crash" in faults:
                print("oracle: crashing on request %d as told" % req["id"], file=sys.stderr, flush=True)
                sys.exit(3)
            if "hang" in faults:
                for _ in range(2):
                    subprocess.Popen(["sleep", "300"])
                time.sleep(300)
            if "garbage" in faults:
                print("this is not JSON", flush=True)
                continue
            out = answer(a.kit, req, c, faults)
            if "wrong-id" in faults:
                out["id"] = req["id"] + 1
        print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
