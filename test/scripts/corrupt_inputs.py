#!/usr/bin/env python3
"""Corrupted .uop inputs always end in a located error and exit status 1: never a signal, a hang, or a partial file.

Each .uop file under test/ and examples/ is mutated deterministically (truncated, bytes flipped or replaced by
random bytes, lines deleted, duplicated or swapped) and fed to tgc-opt with an output file, in turn through simplify, the lower-tensors pipeline and the codegen
pipeline (optimize, expand, devectorize, coalesce, ... on whatever kernels the mutation left).
Accepted outcomes: exit 0 (the mutation is still a valid program), or exit 1 with an error line naming the file
('file:line:col: error:', or 'file: error:' for a problem with the whole input) and no output file. Usage: corrupt_inputs.py SOURCE_DIR TGC_OPT [MUTATIONS_PER_FILE]
"""
import os
import random
import re
import subprocess
import sys
import tempfile

LOCATED = re.compile(rb"^[^\n]*:\d+:\d+: error: |^[^\n:]+\.uop: error: ", re.M)


def mutations(data, rng, count):
    lines = data.split(b"\n")
    for k in range(count):
        kind = k % 6
        if kind == 0:
            yield "truncate", data[: rng.randrange(0, max(1, len(data)))]
        elif kind == 1:
            b = bytearray(data)
            for _ in range(rng.randint(1, 4)):
                if b:
                    i = rng.randrange(len(b))
                    b[i] ^= 1 << rng.randrange(8)
            yield "flip bits", bytes(b)
        elif kind == 2:
            b = bytearray(data)
            for _ in range(rng.randint(1, 3)):
                if b:
                    b[rng.randrange(len(b))] = rng.randrange(256)
            yield "random bytes", bytes(b)
        elif kind == 3:
            ls = list(lines)
            if ls:
                del ls[rng.randrange(len(ls))]
            yield "delete line", b"\n".join(ls)
        elif kind == 4:
            ls = list(lines)
            if ls:
                i = rng.randrange(len(ls))
                ls.insert(i, ls[i])
            yield "duplicate line", b"\n".join(ls)
        else:
            ls = list(lines)
            if len(ls) > 1:
                i, j = rng.randrange(len(ls)), rng.randrange(len(ls))
                ls[i], ls[j] = ls[j], ls[i]
            yield "swap lines", b"\n".join(ls)


def main():
    src, tool = sys.argv[1], sys.argv[2]
    per_file = int(sys.argv[3]) if len(sys.argv) > 3 else 36
    files = []
    for top in ("test", "examples"):
        for root, _, names in os.walk(os.path.join(src, top)):
            files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".uop")]
    runs = failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        for path in sorted(files):
            rng = random.Random(os.path.basename(path))
            data = open(path, "rb").read()
            for kind, mutated in mutations(data, rng, per_file):
                inp = os.path.join(tmp, "in.uop")
                out = os.path.join(tmp, "out.uop")
                open(inp, "wb").write(mutated)
                if os.path.exists(out):
                    os.remove(out)
                runs += 1
                passes = ("simplify", "lower-tensors", "codegen")[runs % 3]
                try:
                    r = subprocess.run([tool, inp, f"-passes={passes}", "--split-input-file", "-o", out],
                                       capture_output=True, timeout=20)
                except subprocess.TimeoutExpired:
                    failures += 1
                    print(f"FAIL {path} ({kind}): hang")
                    continue
                problem = None
                if r.returncode < 0:
                    problem = f"killed by signal {-r.returncode}"
                elif r.returncode not in (0, 1):
                    problem = f"exit status {r.returncode}"
                elif r.returncode == 1 and not LOCATED.search(r.stderr):
                    problem = "no located error message"
                elif r.returncode == 1 and os.path.exists(out):
                    problem = "an output file was written despite the error"
                if problem:
                    failures += 1
                    keep = os.path.join(tempfile.gettempdir(), f"tgc-corrupt-{failures}.uop")
                    open(keep, "wb").write(mutated)
                    print(f"FAIL {path} ({kind}): {problem}; input kept as {keep}")
                    print(r.stderr.decode(errors="replace")[-2000:])
    print(f"corrupt inputs: {runs} runs, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
