"""times.py: the slowest tests of the last runs (make test-times), and the
weights the repeated runs deal their shares by (make share-weights).

   times.py [-n N] REPORT.xml...
   times.py --weights FILE REPORT.xml...

Reads the JUnit XML reports the tiers write (Criterion's --xml, pytest's
--junitxml: each test case with its wall time in seconds), and NUnit 2's
(the csharp tier's: test-case elements, named in full), and prints the N
slowest (default 30), then each report's total and count.

--weights rewrites FILE (tests/share-weights.tsv: KIND, tier, SUITE/TEST,
seconds; tests/share.sh reads it) from the Criterion tiers' reports: TIER.xml
is a plain run of the whole tier and replaces that tier's plain weights;
valgrind-TIER.xml is one share under memcheck and updates the weights of the
tests it ran, each case's process start included. A parameterized test's
cases add up."""
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def cases(path):
    try:
        root = ET.parse(path).getroot()
    except ET.ParseError:
        # Criterion writes a failure's text unescaped ("<" from a diff):
        # the test cases' own tags are still whole lines.
        yield from cases_by_line(path)
        return
    for suite in root.iter("testsuite"):
        for case in suite.iter("testcase"):
            name = case.get("name", "?")
            group = case.get("classname") or suite.get("name", "?")
            yield float(case.get("time") or 0), f"{group}::{name}"
    for case in root.iter("test-case"):  # NUnit 2: the name is Namespace.Fixture.Test
        group, _, name = case.get("name", "?").rpartition(".")
        yield float(case.get("time") or 0), f"{group}::{name}"


def cases_by_line(path):
    suite = "?"
    for line in Path(path).read_text(errors="replace").splitlines():
        m = re.match(r'\s*<testsuite name="([^"]*)"', line)
        if m:
            suite = m.group(1)
        m = re.match(r'\s*<testcase name="([^"]*)".*? time="([0-9.]+)"', line)
        if m:
            yield float(m.group(2)), f"{suite}::{m.group(1)}"


CRITERION_TIERS = ("unit", "gen", "cli", "integration")
VALGRIND_START = 1.0


def weights(out, paths):
    rows = {}
    try:
        with open(out) as f:
            for line in f:
                if line.startswith("#") or not line.strip():
                    continue
                kind, tier, name, secs = line.rstrip("\n").split("\t")
                rows[kind, tier, name] = float(secs)
    except FileNotFoundError:
        pass
    for p in paths:
        stem = Path(p).stem
        kind, tier = ("valgrind", stem[len("valgrind-"):]) if stem.startswith("valgrind-") else ("plain", stem)
        if tier not in CRITERION_TIERS:
            continue
        if kind == "plain":
            rows = {k: v for k, v in rows.items() if k[:2] != (kind, tier)}
        got = {}
        for t, name in cases(p):
            key = (kind, tier, name.replace("::", "/"))
            # Under memcheck each case is a process of its own, whose
            # start the report's time leaves out: about a second (4 cases
            # reported 0.1 s and took 5.0 s). A parameterized test pays it
            # per case.
            got[key] = got.get(key, 0.0) + t + (VALGRIND_START if kind == "valgrind" else 0.0)
        rows.update(got)
    with open(out + ".tmp", "w") as f:
        f.write("# tests/share.sh deals shares by these: KIND, tier, SUITE/TEST, seconds in a measured run\n"
                "# (make share-weights rewrites it from the last runs' reports: tests/times.py)\n")
        for (kind, tier, name), t in sorted(rows.items()):
            f.write(f"{kind}\t{tier}\t{name}\t{max(t, 0.001):.3f}\n")
    Path(out + ".tmp").replace(out)


def main(argv):
    if argv[:1] == ["--weights"] and len(argv) >= 2:
        return weights(argv[1], [p for p in argv[2:] if Path(p).is_file()])
    n = 30
    if argv[:1] == ["-n"]:
        n, argv = int(argv[1]), argv[2:]
    paths = [p for p in argv if Path(p).is_file()]
    if not paths:
        sys.exit("test-times: no reports yet: run make test (the reports go to build/test-reports/)")
    rows, totals = [], []
    for p in paths:
        tier = Path(p).stem
        got = [(t, tier, name) for t, name in cases(p)]
        rows += got
        totals.append((tier, sum(t for t, _, _ in got), len(got)))
    rows.sort(key=lambda r: -r[0])
    print(f"{'seconds':>8}  {'tier':<14} test")
    for t, tier, name in rows[:n]:
        print(f"{t:8.2f}  {tier:<14} {name}")
    print()
    for tier, total, count in totals:
        print(f"{total:8.2f}  {tier:<14} {count} tests (sum of their wall times)")


if __name__ == "__main__":
    main(sys.argv[1:])
