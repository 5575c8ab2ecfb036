#!/usr/bin/env python3
"""tgc-opt --check-semantics passes over every lit input and example that can run.

Each `// -----` chunk of every .uop file under test/ and examples/ that parses and has something to run (a tensor
graph, a program, or a kernel whose root is a sink) is run through the pipeline of its stage with
--check-semantics: tensor graphs through lower-tensors and codegen (every kernel pass, vector lanes included;
the examples through lower-tensors only),
kernels through simplify, programs through schedule and
plan-memory. With --target T, the codegen passes lower for T (opencl, amd: the GPU passes, whose kernels the
interpreter runs as launches of work-groups and work-items).
Inputs with a tensor of more than 1M elements are skipped and listed, and so are chunks with a line
`// no-check-semantics: REASON` (a convolution sized like a network's layer, which the interpreter would take
minutes to run through every pass; the test that uses it compares its compiled output with the interpreter's).
Usage: check_semantics_all.py SOURCE_DIR TGC TGC_OPT WORKDIR [--target T]
"""
import json
import os
import re
import subprocess
import sys

PIPELINES = {"tensor": "lower-tensors,codegen", "kernel": "simplify", "program": "schedule,plan-memory"}
MAX_ELEMENTS = 1 << 20  # larger tensors (the streaming-store inputs, 4M and 8M floats) take the interpreter minutes per pass


def numel(shape):
    n = 1
    for d in shape:
        n *= d if isinstance(d, int) else 1
    return n


def main():
    src, tgc, opt, work = sys.argv[1:5]
    target = ["--target", sys.argv[sys.argv.index("--target") + 1]] if "--target" in sys.argv else []
    os.makedirs(work, exist_ok=True)
    files = []
    for top in ("test", "examples"):
        for root, _, names in os.walk(os.path.join(src, top)):
            files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".uop")]
    checked = failures = skipped = 0
    for path in sorted(files):
        chunks = re.split(r"^// -----[ \t]*\n", open(path).read(), flags=re.M)
        for i, chunk in enumerate(chunks):
            tmp = os.path.join(work, f"chunk{checked + failures}_{i}.uop")
            # keep the weights file resolvable relative to the original
            open(tmp, "w").write(chunk)
            marker = re.search(r"^// no-check-semantics: (.*)$", chunk, flags=re.M)
            if marker:
                skipped += 1
                print(f"skip {os.path.relpath(path, src)} chunk {i}: {marker.group(1)}")
                continue
            info = subprocess.run([tgc, "info", tmp, "--json"], capture_output=True, text=True)
            if info.returncode != 0:
                continue  # does not parse, or has nothing to run
            meta = json.loads(info.stdout)
            stage = meta["stage"]
            largest = max([numel(t["shape"]) for key in ("inputs", "outputs") for t in meta.get(key, [])], default=0)
            if largest > MAX_ELEMENTS:
                skipped += 1
                print(f"skip {os.path.relpath(path, src)} chunk {i}: {largest} elements (the interpreter would take "
                      f"minutes per pass; the test that uses it compares its compiled output with the interpreter's)")
                continue
            passes = PIPELINES[stage]
            if stage == "tensor" and path.startswith(os.path.join(src, "examples")):
                passes = "lower-tensors"  # interpreting their vector kernels after every pass takes minutes;
                # check_backends.py compares their compiled outputs with the interpreter's instead
            if stage == "program" and "linear" in json.loads(info.stdout)["ops"]:
                passes = "plan-memory"
            r = subprocess.run([opt, tmp, f"-passes={passes}", "--check-semantics", "-o", os.devnull] + target,
                               capture_output=True, text=True, timeout=600)
            if r.returncode != 0:
                failures += 1
                print(f"FAIL {os.path.relpath(path, src)} chunk {i} ({stage}, {passes}):\n{r.stderr.strip()}")
            else:
                checked += 1
    print(f"check-semantics: {checked} inputs passed, {failures} failed, {skipped} skipped (too large or marked)")
    return 1 if failures or checked == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
