#!/usr/bin/env python3
"""The commands of the README and the user guide, run (issue 32: "every command run by a test so
the guide cannot go stale").

usage: docs_commands_test.py GPUPLAN REPO DOC.md...

In each document, a ```console block holds commands, each on a line starting "$ " (run with bash
in one scratch folder per document, in order, where data/ and tests/ are the repository's and
`gpuplan` is the binary with --data-dir), followed by lines of its output: each of those lines
must appear in what the command printed (stdout and stderr; runs of spaces compared as one).
Also: every figure README.md quotes from docs/performance.md is there, and README.zh-CN.md's
validation figures are README.md's generated ones."""
import os
import re
import subprocess
import sys
import tempfile


def norm(s):
    return re.sub(r"[ \t]+", " ", s.strip())


def blocks(text):
    """(command, [expected lines]) in order, from ```console blocks."""
    out, inside, current = [], False, None
    for line in text.splitlines():
        if line.startswith("```"):
            inside = line.strip() == "```console" and not inside
            current = None
            continue
        if not inside:
            continue
        if line.startswith("$ "):
            current = (line[2:], [])
            out.append(current)
        elif current is not None and line.strip():
            current[1].append(line)
    return out


def run_doc(gpuplan, repo, doc):
    failures = 0
    text = open(doc, encoding="utf-8").read()
    with tempfile.TemporaryDirectory(prefix="gpuplan-docs-") as scratch:
        for name in ("data", "tests"):
            os.symlink(os.path.join(repo, name), os.path.join(scratch, name))
        bindir = os.path.join(scratch, ".bin")
        os.mkdir(bindir)
        wrapper = os.path.join(bindir, "gpuplan")
        with open(wrapper, "w") as f:
            f.write(f'#!/bin/sh\nexec "{gpuplan}" --data-dir "{os.path.join(repo, "data")}" "$@"\n')
        os.chmod(wrapper, 0o755)
        env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""))
        env.pop("GPUPLAN_DATA", None)
        n = 0
        for command, expected in blocks(text):
            n += 1
            p = subprocess.run(["bash", "-c", command], cwd=scratch, env=env, capture_output=True, text=True,
                               timeout=300)
            printed = norm(p.stdout + "\n" + p.stderr)
            lines = [norm(l) for l in (p.stdout + "\n" + p.stderr).splitlines()]
            for want in expected:
                w = norm(want)
                if w not in lines and w not in printed:
                    failures += 1
                    print(f"FAIL {os.path.basename(doc)}: `{command}` no longer prints:\n  {want.strip()}")
        print(f"{os.path.basename(doc)}: {n} commands run")
        if n == 0:
            failures += 1
            print(f"FAIL {doc}: no commands found")
    return failures


def check_figures(repo):
    failures = 0
    readme = re.sub(r"\s+", " ", open(os.path.join(repo, "README.md"), encoding="utf-8").read())
    perf = re.sub(r"\s+", " ", open(os.path.join(repo, "docs/performance.md"), encoding="utf-8").read())
    # The headline numbers of the README's trust section, each in docs/performance.md.
    for fig in ["922k", "0.33 s", "0.83 s", "0.50 microseconds", "1.27 microseconds", "1.2 microseconds",
                "967k", "0.78 / 0.79 s", "1.24 / 1.23 M layouts/s", "1.33 / 1.28 us", "0.63 / 0.61"]:
        if fig not in perf:
            failures += 1
            print(f"FAIL docs/performance.md lacks {fig}, which README.md's figures rest on")
    for fig in ["967k layouts in 0.78 s", "922k in 0.83 s", "optimised in 0.33 s", "step-time estimate in 1.3",
                "memory estimate in 0.6 microseconds"]:
        if fig not in readme:
            failures += 1
            print(f"FAIL README.md no longer quotes {fig}")
    # Every command of docs/performance.md names something that exists: a built target of
    # CMakeLists.txt (build/NAME) or a file of the repository (bench/..., scripts/...).
    cmake = open(os.path.join(repo, "CMakeLists.txt"), encoding="utf-8").read()
    for target in set(re.findall(r"build/(gpuplan_[a-z_]+)", perf)):
        if f"add_executable({target} " not in cmake:
            failures += 1
            print(f"FAIL docs/performance.md names build/{target}, which CMakeLists.txt does not build")
    for path in set(re.findall(r"((?:bench|scripts|tests)/[A-Za-z0-9_./-]+\.(?:cc|py|sh))", perf)):
        if not os.path.exists(os.path.join(repo, path)):
            failures += 1
            print(f"FAIL docs/performance.md names {path}, which does not exist")
    zh = open(os.path.join(repo, "README.zh-CN.md"), encoding="utf-8").read()
    for pat in [r"median absolute error ([\d.]+)%"]:
        for value in re.findall(pat, readme)[:2]:
            if f"{value}%" not in zh:
                failures += 1
                print(f"FAIL README.zh-CN.md does not give README.md's generated figure {value}%")
    return failures


def main():
    gpuplan, repo = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    docs = [os.path.join(repo, d) if not os.path.isabs(d) else d for d in sys.argv[3:]]
    if not docs:  # nothing to run would read as "ok"
        print("usage: docs_commands_test.py GPUPLAN REPO DOC.md... (no document named)", file=sys.stderr)
        return 2
    failures = sum(run_doc(gpuplan, repo, d) for d in docs) + check_figures(repo)
    print("docs_commands: " + ("ok" if failures == 0 else f"{failures} failures"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
