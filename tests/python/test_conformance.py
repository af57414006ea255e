"""The conformance corpus (build/conformance) through Python: every valid
case loads, validates (with and without its input shape) and reads back
byte for byte; every structural case is refused at load with exactly the
manifest's code, path and offset; every semantic case loads and its
validation reports the manifest's problem. As tests/unit/test_conformance.c
checks libnnn, and `nnnkit validate --json` agrees on one case of each kind."""

import json
import os

import pytest

import nnnkit
from conftest import cli


def where(p):
    return (p.code, p.path or "", p.offset)


def expected(c):
    return (c["code"], c["path"] or "", c["offset"])


def test_every_case_as_the_manifest_says(manifest):
    folder, cases = manifest
    failures = []
    for c in cases:
        path = os.path.join(folder, c["file"])
        data = open(path, "rb").read()
        try:
            if c["valid"]:
                m = nnnkit.load(path)
                assert m.encode() == data, "encode differs from the file"
                assert nnnkit.Model.from_json(m.to_json()).encode() == data, "JSON round trip differs"
                assert m.validate() == [] and m.validate(c["input_shape"]) == []
                assert nnnkit.validate(path, c["input_shape"]) == []
                assert len(m.shapes(c["input_shape"])) == len(m.layers)
            elif c["kind"] == "structural":
                with pytest.raises(nnnkit.FormatError) as e:
                    nnnkit.load(path)
                assert where(e.value) == expected(c), f"load: {where(e.value)}"
                found = nnnkit.validate(path)
                assert found and where(found[0]) == expected(c), f"validate: {found[:1]}"
            else:
                found = nnnkit.load(path).validate()
                assert expected(c) in [where(p) for p in found], f"validate: {found}"
                assert found == nnnkit.validate(path)
        except (AssertionError, nnnkit.Error) as e:
            failures.append(f"{c['file']}: {e}")
    assert not failures, f"{len(failures)} of {len(cases)} cases failed:\n" + "\n".join(failures[:20])
    assert len(cases) > 100


def test_verdicts_are_the_clis(manifest):
    """One case of each class, kind and code: every problem, as `nnnkit validate --json` gives it."""
    folder, cases = manifest
    seen = set()
    for c in cases:
        key = (c["class"], c["kind"], c["code"])
        if key in seen:
            continue
        seen.add(key)
        path = os.path.join(folder, c["file"])
        theirs = json.loads(cli("validate", "--json", path, check=False))
        mine = nnnkit.validate(path)
        assert theirs["valid"] == (not mine), c["file"]
        assert [(p.code, p.path or "", p.offset, p.message) for p in mine] == \
            [(q["code"], q["path"] or "", q["offset"], q["message"]) for q in theirs["problems"]], c["file"]
    assert len(seen) > 10
