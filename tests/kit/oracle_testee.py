#!/usr/bin/env python3
"""A fake testee for the runner's tests: answers every request from the kit's
manifest (refusals with the case's code, path and offset; encode copies the
file; run writes the expected output), so it scores 100 %, unless told to
misbehave:

  --kit DIR               the kit whose manifest it answers from (required)
  --wrong-code ID         refuses case ID with another code
  --accept-trailing       accepts the cases of family `trailing`
  --wrong-offset ID       refuses case ID at the next byte
  --wrong-encode ID       encode: flips byte 5 of ID's file
  --wrong-output ID       run: adds 1 to the last value of ID's output
  --crash-on ID[:OP]      exits with status 3 on a request for ID (of op OP)
  --hang-on ID[:OP]       sleeps forever instead of answering it
  --garbage-on ID[:OP]    answers a line that is not JSON
  --wrong-id-on ID[:OP]   answers with another id
  --accept ID             accepts case ID in decode and validate
  --reject ID             refuses case ID in every op
  --no-run                does not offer `run` (--no-op OP: any op)
  --fault KIND=ID         the same, by name: wrong-code, accept, reject,
                          bad-output, bad-roundtrip, crash, hang, garbage,
                          wrong-id (nnnkit's tests: tests/cli/test_conformance_testee.c)
A hanging testee first starts two `sleep 300` children (found on PATH), so
that killing it whole is tested.
  --name N                the name it gives at hello (default: oracle)
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import time


def parse():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kit", required=True)
    ap.add_argument("--name", default="oracle")
    for opt in ("--wrong-code", "--wrong-offset", "--wrong-encode", "--wrong-output", "--crash-on",
                "--hang-on", "--garbage-on", "--wrong-id-on"):
        ap.add_argument(opt, action="append", default=[])
    ap.add_argument("--accept", action="append", default=[])
    ap.add_argument("--reject", action="append", default=[])
    ap.add_argument("--accept-trailing", action="store_true")
    ap.add_argument("--no-run", action="store_true")
    ap.add_argument("--no-op", action="append", default=[])
    ap.add_argument("--fault", action="append", default=[], metavar="KIND=ID")
    a = ap.parse_args()
    for f in a.fault:
        kind, _, cid = f.partition("=")
        if kind not in FAULTS or not cid:
            ap.error(f"--fault {f}: expected KIND=ID, KIND one of {', '.join(FAULTS)}")
        getattr(a, FAULTS[kind]).append(cid)
    a.no_run = a.no_run or "run" in a.no_op
    return a


# --fault KIND=ID: the option each kind stands for.
FAULTS = {"wrong-code": "wrong_code", "accept": "accept", "reject": "reject", "bad-output": "wrong_output",
          "bad-roundtrip": "wrong_encode", "crash": "crash_on", "hang": "hang_on", "garbage": "garbage_on",
          "wrong-id": "wrong_id_on"}


def hit(specs, case, op):
    """Whether one of the ID[:OP] specs names this case (and op)."""
    for s in specs:
        cid, _, sop = s.partition(":")
        if case and cid == case["id"] and (not sop or sop == op):
            return True
    return False


def refusal(rid, case, code=None, shift=0):
    p = {"code": code or case["code"], "path": case["path"], "offset": case["offset"] + shift,
         "message": f"oracle: {case['id']}"}
    return dict(id=rid, ok=False, problems=[p], **p)


def answer(a, req, case):
    rid, op = req["id"], req["op"]
    structural = case["kind"] == "structural"
    accept = case["expect"] == "accept" or (a.accept_trailing and case["family"] == "trailing")
    accept = (accept or case["id"] in a.accept) and case["id"] not in a.reject
    code = "E_WRONG" if case["id"] in a.wrong_code else None
    shift = int(case["id"] in a.wrong_offset)
    if case["id"] in a.reject:  # every op refuses it, as a reader that cannot read it would
        return refusal(rid, dict(case, path="", offset=0), "E_TRUNCATED")
    if op == "decode":
        if structural and not accept:
            return refusal(rid, case, code, shift)
        return {"id": rid, "ok": True}
    if op == "validate":
        return {"id": rid, "ok": True} if accept else refusal(rid, case, code, shift)
    if op == "encode":
        with open(req["file"], "rb") as f:
            data = bytearray(f.read())
        if case["id"] in a.wrong_encode:
            data[5] ^= 0xFF
        with open(req["output"], "wb") as f:
            f.write(data)
        return {"id": rid, "ok": True}
    if op == "run":
        if a.no_run:
            return {"id": rid, "ok": False, "unsupported": True, "message": "no run"}
        expected = os.path.join(a.kit, case["run"]["output"])
        if case["id"] not in a.wrong_output:
            shutil.copyfile(expected, req["output"])
        else:
            import numpy as np  # only here: NumPy's import is most of a testee's start-up
            out = np.load(expected)
            out.flat[-1] += 1
            with open(req["output"], "wb") as f:  # np.save on a name would add .npy
                np.save(f, out)
        return {"id": rid, "ok": True}
    return {"id": rid, "ok": False, "unsupported": True, "message": f"no op {op}"}


def main():
    a = parse()
    with open(os.path.join(a.kit, "manifest.json")) as f:
        manifest = json.load(f)
    by_file = {os.path.abspath(os.path.join(a.kit, c["file"])): c for c in manifest["cases"]}
    for line in sys.stdin:
        req = json.loads(line)
        op, case = req["op"], by_file.get(req.get("file"))
        if op == "hello":
            ops = [o for o in ("decode", "validate", "encode", "run") if o not in a.no_op and not (o == "run" and a.no_run)]
            ans = {"id": req["id"], "ok": True, "name": a.name, "version": "1.0",
                   "protocol": 1, "ops": ops}
        elif hit(a.crash_on, case, op):
            print(f"oracle: crashing on {case['id']} {op}", file=sys.stderr, flush=True)
            sys.exit(3)
        elif hit(a.hang_on, case, op):
            print(f"oracle: hanging on {case['id']} {op}", file=sys.stderr, flush=True)
            for _ in range(2):
                subprocess.Popen(["sleep", "300"])
            time.sleep(3600)
        elif hit(a.garbage_on, case, op):
            sys.stdout.write("this is not JSON\n")
            sys.stdout.flush()
            continue
        else:
            ans = answer(a, req, case)
            if hit(a.wrong_id_on, case, op):
                ans["id"] += 100
        sys.stdout.write(json.dumps(ans) + "\n")
        sys.stdout.flush()


if __name__ == "__main__":
    main()
