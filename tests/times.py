"""times.py: the slowest tests of the last runs (make test-times).

   times.py [-n N] REPORT.xml...

Reads the JUnit XML reports the tiers write (Criterion's --xml, pytest's
--junitxml: each test case with its wall time in seconds), and NUnit 2's
(the csharp tier's: test-case elements, named in full), and prints the N
slowest (default 30), then each report's total and count."""
import sys
import xml.etree.ElementTree as ET
from pathlib import Path


def cases(path):
    root = ET.parse(path).getroot()
    for suite in root.iter("testsuite"):
        for case in suite.iter("testcase"):
            name = case.get("name", "?")
            group = case.get("classname") or suite.get("name", "?")
            yield float(case.get("time") or 0), f"{group}::{name}"
    for case in root.iter("test-case"):  # NUnit 2: the name is Namespace.Fixture.Test
        group, _, name = case.get("name", "?").rpartition(".")
        yield float(case.get("time") or 0), f"{group}::{name}"


def main(argv):
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
