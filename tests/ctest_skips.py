#!/usr/bin/env python3
"""The skipped tests of a ctest run, each with its reason; under GPUPLAN_CI=1 a failure when one
is not on the allow-list (docs/testing.md, "A skip is a failure in CI").

usage: ctest_skips.py JUNIT_XML ALLOW_LIST

JUNIT_XML is what `ctest --output-junit FILE` wrote (a skip is a <testcase> with <skipped>: exit
code 77 of a test with SKIP_RETURN_CODE, or GTEST_SKIP through gtest_discover_tests'
SKIP_REGULAR_EXPRESSION). The reason is read from the test's output: its "SKIP: ..." lines (the
shell, Python and node tests), the line after gtest's "...: Skipped", or a scenario's "PENDING"
line; else ctest's own message. ALLOW_LIST (tests/skip-allowlist.txt) has one "TEST  WHY" a line
(TEST a name or an fnmatch pattern, WHY why it may skip on CI); '#' starts a comment.

Exit status: 0; 1 when GPUPLAN_CI=1 and a skip is not on the allow-list; 2 on a missing or
malformed file (the message names file and line).
"""
import fnmatch
import os
import re
import sys
import xml.etree.ElementTree as ET


def fail_input(msg):
    print("ctest_skips: " + msg, file=sys.stderr)
    sys.exit(2)


def load_allow(path):
    entries = []
    try:
        lines = open(path, encoding="utf-8").read().splitlines()
    except OSError as e:
        fail_input("%s: %s" % (path, e.strerror))
    for number, line in enumerate(lines, 1):
        line = line.split("#", 1)[0].strip()
        if not line:
            continue
        parts = line.split(None, 1)
        if len(parts) < 2:
            fail_input("%s:%d: '%s' has no reason (TEST  WHY)" % (path, number, parts[0]))
        entries.append((parts[0], parts[1].strip()))
    return entries


def reason_of(case):
    out = case.findtext("system-out") or ""
    lines = out.splitlines()
    said = [l[len("SKIP:"):].strip() for l in lines if l.startswith("SKIP:")]
    if said:
        return "; ".join(said)
    for i, l in enumerate(lines):
        if re.search(r": Skipped$", l):
            msg = []
            for m in lines[i + 1:]:
                if m.startswith("[  SKIPPED ]") or m.startswith("["):
                    break
                if m.strip():
                    msg.append(m.strip())
            return " ".join(msg) or "GTEST_SKIP without a message"
    pending = [l.strip() for l in lines if l.startswith("PENDING ")]
    if pending:
        return pending[0]
    skipped = case.find("skipped")
    return "no reason printed (%s)" % (skipped.get("message") if skipped is not None else "?")


def main(argv):
    if len(argv) != 3:
        fail_input("usage: ctest_skips.py JUNIT_XML ALLOW_LIST")
    junit, allow_path = argv[1], argv[2]
    allow = load_allow(allow_path)
    try:
        root = ET.parse(junit).getroot()
    except (OSError, ET.ParseError) as e:
        fail_input("%s: not a ctest JUnit file: %s" % (junit, e))
    ci = os.environ.get("GPUPLAN_CI") == "1"
    skips = [(c.get("name"), reason_of(c)) for c in root.iter("testcase") if c.find("skipped") is not None]
    refused = []
    print("== skipped tests: %d%s" % (len(skips), " (GPUPLAN_CI=1: only the allow-list's may skip)" if ci else ""))
    for name, reason in skips:
        why = next((w for pattern, w in allow if fnmatch.fnmatchcase(name, pattern)), None)
        if why is None:
            refused.append(name)
            tag = "NOT on the allow-list" + (": a failure under GPUPLAN_CI=1" if ci else "")
        else:
            tag = "allowed: " + why
        print("  SKIP %s: %s [%s]" % (name, reason, tag))
    if ci and refused:
        print("FAIL: %d skip(s) not on %s under GPUPLAN_CI=1: %s" % (len(refused), allow_path, ", ".join(refused)))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
