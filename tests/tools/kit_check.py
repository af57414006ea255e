#!/usr/bin/python3
"""kit_check.py: checks the .npy files of a conformance kit (nnngen
--conformance DIR) with NumPy, and optionally a runtime against them.

    kit_check.py DIR                    every run case's io/*.npy: NumPy loads it, float32,
                                        C order, batch 2 on the case's input_shape, and
                                        np.save of what it loaded gives the same bytes
    kit_check.py DIR --nnnkit NNNKIT    also `NNNKIT run` on every run case, compared with
                                        the expected output in the manifest's relative form
                                        |got - expected| <= tolerance * (1 + |expected|)

Prints one line per problem and a last line "cases N run N worst E (case)",
E the largest |got - expected| / (1 + |expected|) seen; exits 1 on any
problem. Used by tests/gen/test_kit.c.
"""
import io
import json
import os
import subprocess
import sys
import tempfile

import numpy as np


def check_npy(path, shape, problems):
    """Loads one .npy, checking what the kit promises of it."""
    raw = open(path, "rb").read()
    a = np.load(path, allow_pickle=False)
    if a.dtype != np.dtype("<f4"):
        problems.append(f"{path}: dtype {a.dtype}, expected <f4")
    if shape is not None and list(a.shape) != shape:
        problems.append(f"{path}: shape {list(a.shape)}, expected {shape}")
    buf = io.BytesIO()
    np.save(buf, a)
    if buf.getvalue() != raw:
        problems.append(f"{path}: np.save of its array gives other bytes (header or layout)")
    return a


def run_case(nnnkit, kit, case, tmp):
    """The output of `nnnkit run` on the case, or an error message."""
    out = os.path.join(tmp, "out.npy")
    r = subprocess.run([nnnkit, "run", os.path.join(kit, case["file"]), "--input",
                        os.path.join(kit, case["run"]["input"]), "-o", out],
                       capture_output=True, text=True)
    if r.returncode != 0:
        return None, f"nnnkit run exited {r.returncode}: {r.stderr.strip()}"
    return np.load(out), None


def main(argv):
    kit = argv[1]
    nnnkit = argv[3] if len(argv) > 3 and argv[2] == "--nnnkit" else None
    m = json.load(open(os.path.join(kit, "manifest.json")))
    problems, worst, worst_case, ran = [], 0.0, "-", 0
    with tempfile.TemporaryDirectory() as tmp:
        for c in m["cases"]:
            if c["run"] is None:
                continue
            ran += 1
            shape = [2] + c["input_shape"][1:]
            check_npy(os.path.join(kit, c["run"]["input"]), shape, problems)
            want = check_npy(os.path.join(kit, c["run"]["output"]), None, problems)
            if want.shape[0] != 2:
                problems.append(f"{c['id']}: expected output of batch {want.shape[0]}, not 2")
            if not nnnkit:
                continue
            got, err = run_case(nnnkit, kit, c, tmp)
            if err:
                problems.append(f"{c['id']}: {err}")
                continue
            if got.shape != want.shape:
                problems.append(f"{c['id']}: output shape {got.shape}, expected {want.shape}")
                continue
            w = want.astype(np.float64)
            rel = np.abs(got.astype(np.float64) - w) / (1 + np.abs(w))
            e = float(np.max(rel)) if rel.size else 0.0
            if not np.isfinite(e) or e > c["run"]["tolerance"]:
                problems.append(f"{c['id']}: off by {e:.3g} (relative), tolerance {c['run']['tolerance']}")
            if not np.isfinite(e) or e > worst:
                worst, worst_case = e, c["id"]
    for p in problems:
        print(p)
    print(f"cases {len(m['cases'])} run {ran} worst {worst:.3g} ({worst_case})")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
