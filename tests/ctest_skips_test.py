#!/usr/bin/env python3
"""tests/ctest_skips.py on a hand-made ctest JUnit file: a script's skip (exit 77 with a "SKIP:"
line), a gtest skip and a pass. Expected by hand: both skips listed with their reasons; outside
CI exit 0; under GPUPLAN_CI=1 exit 1 naming the one not on the allow-list; 0 when both are on
it; 2 for an allow-list entry without a reason.

usage: ctest_skips_test.py PATH_TO_ctest_skips.py
"""
import os
import subprocess
import sys
import tempfile

script = sys.argv[1]
junit = """<?xml version="1.0" encoding="UTF-8"?>
<testsuite name="t" tests="3" failures="0" disabled="0" skipped="2">
  <testcase name="meter_prometheus" classname="meter_prometheus" status="notrun">
    <skipped message="SKIP_RETURN_CODE=77"/>
    <system-out>SKIP: prometheus and promtool are not installed
meter_prometheus: 5 passed, 0 failed, 1 skipped
</system-out>
  </testcase>
  <testcase name="Suite.Case" classname="Suite.Case" status="notrun">
    <skipped message="SKIP_REGULAR_EXPRESSION_MATCHED"/>
    <system-out>[ RUN      ] Suite.Case
/src/x_test.cc:97: Skipped
the file is not there yet

[  SKIPPED ] Suite.Case (0 ms)
</system-out>
  </testcase>
  <testcase name="check_cli" classname="check_cli" status="run"><system-out>ok</system-out></testcase>
</testsuite>
"""
failures = 0


def check(what, cond, detail=""):
    global failures
    if not cond:
        failures += 1
        print("FAIL: %s %s" % (what, detail))


with tempfile.TemporaryDirectory() as d:
    j = os.path.join(d, "junit.xml")
    open(j, "w").write(junit)
    allow = os.path.join(d, "allow.txt")
    open(allow, "w").write("# comment\nSuite.*  the file comes from a device run\n")

    def run(ci, allow_path):
        env = dict(os.environ, GPUPLAN_CI=ci)
        p = subprocess.run([sys.executable, script, j, allow_path], env=env, capture_output=True, text=True)
        return p.returncode, p.stdout + p.stderr

    code, out = run("0", allow)
    check("outside CI exit 0", code == 0, out)
    check("count", "== skipped tests: 2" in out, out)
    check("script reason", "SKIP meter_prometheus: prometheus and promtool are not installed [NOT on the allow-list]" in out, out)
    check("gtest reason", "SKIP Suite.Case: the file is not there yet [allowed: the file comes from a device run]" in out, out)
    check("a pass is no skip", "check_cli" not in out, out)

    code, out = run("1", allow)
    check("under CI exit 1", code == 1, out)
    check("names the refused", "FAIL: 1 skip(s) not on" in out and out.rstrip().endswith(": meter_prometheus"), out)

    open(allow, "a").write("meter_prometheus  allowed here for the test\n")
    code, out = run("1", allow)
    check("all allowed under CI exit 0", code == 0, out)

    open(allow, "a").write("lonely_name\n")
    code, out = run("0", allow)
    check("entry without reason exit 2", code == 2 and "allow.txt:4:" in out, out)

print("ctest_skips_test: %d failed" % failures)
sys.exit(1 if failures else 0)
