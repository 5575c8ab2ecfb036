#!/usr/bin/env python3
"""The examples with a symbolic batch, compiled once, give the interpreter's outputs at every batch size.

examples/mlp_batch.uop and examples/mnist_cnn_batch.uop take `N` images, 1 <= N <= 256. Each is compiled once as an
executable per target (default cpu and c) and, with cpu, a static library called from a C program through its
header; then, for several N, one input of N rows goes through the reference interpreter, the JIT (tgc run, for cpu
and opencl), the executables and the library, and every output must have N rows and agree with the interpreter's
(tolerance as check_backends.py). Batch sizes outside the bounds must fail with a one-line error (executables: exit
status 1; library: -1).
Usage: check_dynamic_batch.py SOURCE_DIR TGC WORKDIR [--only NAME] [--targets cpu,c,opencl]
"""
import os
import random
import shutil
import struct
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from check_backends import compare, read_npy  # noqa: E402

MODELS = {  # example -> (input's per-row shape, batch sizes to run)
    "mlp_batch": ([784], [1, 3, 64, 256]),
    "mnist_cnn_batch": ([1, 28, 28], [1, 2, 5]),
}

DRIVER = r"""/* Runs a model with a symbolic batch through its library: N, the input's raw floats, the output file. */
#include "@NAME@.h"
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv) {
  long long n = atoll(argv[1]);
  long long in_row = 1, out_row = 1;
  for (int d = 1; d < @NAME@_input_rank(0); ++d) in_row *= @NAME@_input_shape(0)[d];
  for (int d = 1; d < @NAME@_output_rank(0); ++d) out_row *= @NAME@_output_shape(0)[d];
  float *x = calloc((size_t)(n > 0 ? n : 1) * in_row, sizeof(float));
  float *y = calloc((size_t)(n > 0 ? n : 1) * out_row, sizeof(float));
  FILE *f = fopen(argv[2], "rb");
  if (n > 0 && fread(x, sizeof(float), (size_t)(n * in_row), f) != (size_t)(n * in_row)) return 2;
  fclose(f);
  if (@NAME@_run(n, x, y) != 0) {
    printf("error: %s\n", @NAME@_error());
    return 1;
  }
  f = fopen(argv[3], "wb");
  fwrite(y, sizeof(float), (size_t)(n * out_row), f);
  fclose(f);
  return 0;
}
"""


def run(cmd):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=600)


def write_npy(path, shape, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % ", ".join(map(str, shape))
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%df" % len(values), *values))


def npy_from_raw(raw, npy, shape):
    data = open(raw, "rb").read()
    write_npy(npy, shape, list(struct.unpack("<%df" % (len(data) // 4), data)))


def build(tgc, uop, work, name, targets):
    """Compile once: an executable per target, and with cpu a library with a C program that calls it. The
    failures."""
    problems = []
    for target in targets:
        r = run([tgc, "compile", uop, "-o", f"{work}/{target}", f"--target={target}", "--name", name])
        if r.returncode:
            problems.append(f"compile --target={target}: {r.stderr.strip()}")
    if "cpu" not in targets:
        return problems
    r = run([tgc, "compile", uop, "-o", f"{work}/lib", "--emit=lib", "--name", name])
    if r.returncode:
        return problems + [f"compile --emit=lib: {r.stderr.strip()}"]
    open(f"{work}/driver.c", "w").write(DRIVER.replace("@NAME@", name))
    r = run(["cc", f"-I{work}/lib", f"{work}/driver.c", f"{work}/lib/lib{name}.a", "-lstdc++", "-lpthread", "-lm",
             "-o", f"{work}/driver"])
    if r.returncode:
        problems.append(f"driver: {r.stderr.strip()}")
    return problems


def check_batch(tgc, uop, work, name, row, n, targets):
    """Every way of running the model on one batch of n rows; the failures."""
    base = f"{work}/n{n}"
    count = n
    for d in row:
        count *= d
    rng = random.Random(n)
    write_npy(f"{base}.x.npy", [n] + row, [rng.uniform(-1, 1) for _ in range(count)])
    r = run([tgc, "run", uop, "--interp", "--input", f"x={base}.x.npy", "--output-dir", f"{base}.ref"])
    if r.returncode:
        return [f"interpreter: {r.stderr.strip()}"]
    (out_name,) = os.listdir(f"{base}.ref")
    problems = []
    ways = {}
    for t in targets:
        if t in ("cpu", "opencl"):
            ways[f"jit-{t}"] = [tgc, "run", uop, "--target", t, "--input", f"x={base}.x.npy", "--output-dir",
                                f"{base}.jit-{t}"]
        ways[t] = [f"{work}/{t}/{name}", "--input", f"x={base}.x.npy", "--output-dir", f"{base}.{t}"]
    for way, cmd in ways.items():
        r = run(cmd)
        problems.append(f"{way}: {r.stderr.strip()}" if r.returncode else compare(f"{base}.ref", f"{base}.{way}"))
    if "cpu" not in targets:
        return [p for p in problems if p]
    data = open(f"{base}.x.npy", "rb").read()
    open(f"{base}.x.raw", "wb").write(data[10 + struct.unpack("<H", data[8:10])[0]:])
    r = run([f"{work}/driver", str(n), f"{base}.x.raw", f"{base}.lib.raw"])
    if r.returncode:
        problems.append(f"library: {r.stdout.strip()} {r.stderr.strip()}")
    else:
        os.makedirs(f"{base}.lib")
        npy_from_raw(f"{base}.lib.raw", f"{base}.lib/{out_name}", [n, 10])
        problems.append(compare(f"{base}.ref", f"{base}.lib"))
    rows = len(read_npy(f"{base}.ref/{out_name}")[1]) // 10
    if rows != n:
        problems.append(f"the interpreter's output has {rows} rows")
    return [p for p in problems if p]


def check_bounds(tgc, work, name, row, targets):
    """A batch outside [1, 256] is refused with one line, by the executable and by the library."""
    problems = []
    exe = f"{work}/{targets[0]}/{name}"
    count = 257
    for d in row:
        count *= d
    write_npy(f"{work}/big.npy", [257] + row, [0.0] * count)
    r = run([exe, "--input", f"x={work}/big.npy"])
    if r.returncode != 1 or "outside its bounds [1, 256]" not in r.stderr or r.stderr.count("\n") != 1:
        problems.append(f"exe with N = 257: status {r.returncode}, {r.stderr!r}")
    if "cpu" not in targets:
        return problems
    open(f"{work}/empty.raw", "wb").close()
    r = run([f"{work}/driver", "0", f"{work}/empty.raw", f"{work}/none.raw"])
    if r.returncode != 1 or "N = 0 is outside its bounds [1, 256]" not in r.stdout:
        problems.append(f"library with N = 0: status {r.returncode}, {r.stdout!r}")
    return problems


def main():
    src, tgc, work = sys.argv[1], sys.argv[2], sys.argv[3]
    only = sys.argv[sys.argv.index("--only") + 1] if "--only" in sys.argv else ""
    targets = sys.argv[sys.argv.index("--targets") + 1].split(",") if "--targets" in sys.argv else ["cpu", "c"]
    shutil.rmtree(work, ignore_errors=True)
    passed = failed = 0
    for name, (row, batches) in MODELS.items():
        if only not in name:
            continue
        mwork = os.path.join(work, name)
        os.makedirs(mwork)
        uop = f"{mwork}/{name}.uop"
        shutil.copy(os.path.join(src, "examples", name + ".uop"), uop)
        run([tgc, "weights", uop])
        problems = build(tgc, uop, mwork, name, targets)
        if problems:
            failed += 1
            print(f"FAIL {name}: " + "; ".join(problems))
            continue
        for n in batches:
            problems = check_batch(tgc, uop, mwork, name, row, n, targets)
            print(f"{'FAIL' if problems else 'ok'} {name} N={n}" + (": " + "; ".join(problems) if problems else ""))
            failed += bool(problems)
            passed += not problems
        problems = check_bounds(tgc, mwork, name, row, targets)
        print(f"{'FAIL' if problems else 'ok'} {name} bounds" + (": " + "; ".join(problems) if problems else ""))
        failed += bool(problems)
        passed += not problems
    ways = ["interpreter", "jit"] + targets + (["library"] if "cpu" in targets else [])
    print(f"dynamic batch: {passed} checks agree ({' = '.join(ways)}), {failed} failed")
    return 1 if failed or passed == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
