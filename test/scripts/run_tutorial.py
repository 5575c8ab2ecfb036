#!/usr/bin/env python3
"""Runs docs/tutorial.md top to bottom in a scratch directory, as a reader would.

Usage: run_tutorial.py SOURCE_DIR BIN_DIR WORK_DIR [DOC]   (DOC: another page with the same conventions)

The tutorial's conventions, which this script reads:
- a fenced block right after `<!-- file: NAME -->` is written to NAME;
- a fenced block whose first line starts with `$ ` is a shell session: each `$ ` line is a command, the lines up to
  the next one are its output. A command whose output shows `error:` must fail (exit status 1); every other
  command must succeed;
- a fenced block right after `<!-- not run: WHY -->` is skipped; any other block (IR, C declarations) is text.
WORK_DIR gets a copy of examples/ and test/scripts/, and BIN_DIR comes first on PATH. Prints one line per command
and `tutorial: N commands, M failed`; exits 1 if any failed."""
import os
import re
import shutil
import subprocess
import sys


def blocks(text):
    """(marker, lines) per fenced block; marker is the HTML comment right before it, or ''."""
    lines = text.splitlines()
    i, marker = 0, ""
    while i < len(lines):
        line = lines[i]
        if line.startswith("<!--"):
            marker = line
        elif line.startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            yield marker, lines[i + 1:j]
            marker, i = "", j
        elif line.strip():
            marker = ""
        i += 1


def commands(session):
    """(command, expected output lines) of a shell session block."""
    out = []
    for line in session:
        if line.startswith("$ "):
            out.append((line[2:], []))
        elif out:
            out[-1][1].append(line)
    return out


def main():
    src, bin_dir, work = sys.argv[1], sys.argv[2], sys.argv[3]
    doc = sys.argv[4] if len(sys.argv) > 4 else os.path.join(src, "docs", "tutorial.md")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    shutil.copytree(os.path.join(src, "examples"), os.path.join(work, "examples"))
    shutil.copytree(os.path.join(src, "test", "scripts"), os.path.join(work, "test", "scripts"))
    env = dict(os.environ, PATH=os.path.abspath(bin_dir) + os.pathsep + os.environ.get("PATH", ""))
    ran = failed = 0
    for marker, body in blocks(open(doc).read()):
        if marker.startswith("<!-- not run"):
            continue
        file = re.match(r"<!-- file: (\S+) -->", marker)
        if file:
            with open(os.path.join(work, file.group(1)), "w") as f:
                f.write("\n".join(body) + "\n")
            continue
        if not body or not body[0].startswith("$ "):
            continue
        for command, expected in commands(body):
            must_fail = any("error:" in line for line in expected)
            r = subprocess.run(["bash", "-o", "pipefail", "-c", command], cwd=work, env=env, capture_output=True,
                               text=True)
            ok = (r.returncode == 1) if must_fail else (r.returncode == 0)
            ran += 1
            failed += not ok
            print(f"{'ok' if ok else 'FAILED'}: $ {command}" + ("" if ok else f" (exit status {r.returncode})"))
            if not ok:
                print((r.stdout + r.stderr)[-2000:])
    print(f"tutorial: {ran} commands, {failed} failed")
    return 1 if failed or not ran else 0


if __name__ == "__main__":
    sys.exit(main())
