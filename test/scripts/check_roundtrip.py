#!/usr/bin/env python3
"""Every .uop file under test/ and examples/ that parses must round-trip through tgc-opt byte for byte.

For each file (split at '// -----'): print it once (A), print A again (B), and print it a second time (A'):
A == B is print(parse(print(x))) == print(x), A == A' is determinism. --verify-roundtrip also checks that A
parses back to the very same node. Files that do not parse (error tests) are skipped; they have their own RUN lines.
Usage: check_roundtrip.py SOURCE_DIR TGC_OPT
"""
import os
import subprocess
import sys


def run(tool, args, data=None):
    return subprocess.run([tool] + args, input=data, capture_output=True, timeout=60)


def main():
    src, tool = sys.argv[1], sys.argv[2]
    files = []
    for top in ("test", "examples"):
        for root, _, names in os.walk(os.path.join(src, top)):
            files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".uop")]
    checked = failed = 0
    for path in sorted(files):
        first = run(tool, [path, "--split-input-file"])
        if first.returncode != 0:
            continue
        checked += 1
        again = run(tool, ["-", "--split-input-file", "--verify-roundtrip"], first.stdout)
        repeat = run(tool, [path, "--split-input-file"])
        problems = []
        if again.returncode != 0:
            problems.append("the printed output does not round-trip: " + again.stderr.decode(errors="replace"))
        elif again.stdout != first.stdout:
            problems.append("print(parse(print(x))) differs from print(x)")
        if repeat.stdout != first.stdout:
            problems.append("two runs print different bytes")
        for p in problems:
            failed += 1
            print(f"FAIL {os.path.relpath(path, src)}: {p}")
    print(f"round trip: {checked} files checked, {failed} problems")
    return 1 if failed or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
