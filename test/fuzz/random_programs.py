#!/usr/bin/env python3
"""Differential testing with random tensor programs: every way of running a program must agree.

For each seed, progen.py writes a valid random program (elementwise ops, casts, movement ops, reductions and
composites over f32/f16/bf16/f64/integer/bool tensors, with zero-size and broadcast shapes, constant conditions and
aliasing views). It runs through the reference interpreter (tgc run --interp), LLVM's JIT (tgc run), a compiled
executable for the cpu target (its --mcpu cycles by seed through the host's, AVX2, AVX-512 where the host runs it,
and baseline x86-64) and one for the c target, and tgc-opt --check-semantics over lower-tensors and
codegen. Outputs are compared with the interpreter's: bit for bit where the program is exact (integers, bools,
and floats that only moved or went through correctly rounded arithmetic), within the error bound progen derives
where results may legitimately differ (reassociated sums, polynomial transcendentals, composites). Programs whose
inputs make them undefined (a float out of an integer's range) are skipped and counted.

A failure is minimized (outputs dropped, nodes replaced by an operand, an input or a constant, while the same
stage fails the same way) and written to WORK/failures/seed-N.uop.

Usage:
  random_programs.py --bin BUILD/bin --work DIR [--seeds N] [--start S] [--time SECONDS] [--jobs J]
                     [--stages interp,jit,cpu,c,semantics[,opencl,semantics-gpu,semantics-cuda,semantics-amd,compile-cuda,compile-amd]] [--no-minimize]
Ends with 'random programs: N passed, N skipped, N failed'; exit status 1 when any failed.
"""
import argparse
import math
import os
import re
import shutil
import subprocess
import sys
import time
from concurrent.futures import FIRST_COMPLETED, ProcessPoolExecutor, wait

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import progen  # noqa: E402
from npyfile import read_npy  # noqa: E402

TIMEOUT = 120
# --check-semantics interprets the program after each of ~16 passes; a fused kernel that recomputes a convolution
# for every step of a cumsum window takes the interpreter minutes (seen: 3 programs in 10^4)
SEMANTICS_TIMEOUT = 600
ALL_STAGES = ["interp", "jit", "cpu", "c", "semantics"]
# Not in the default set (about 1 s per program to build OpenCL C with PoCL): "opencl", the GPU pipeline run by
# `tgc run --target opencl`, and "semantics-gpu", --check-semantics with the codegen passes lowering for opencl.
# "semantics-cuda" and "semantics-amd" lower for those targets (cuda: transcendentals and pow as polynomials);
# "compile-cuda" and "compile-amd" compile for them (ptxas and ld.lld accept the code; nothing runs, and a
# target's documented "cannot compile ... yet" passes).
EXTRA_STAGES = ["opencl", "semantics-gpu", "semantics-cuda", "semantics-amd", "compile-cuda", "compile-amd"]


def host_cpus():
    """The --mcpu values the cpu stage cycles through (by seed): the host's own code, AVX2 and baseline SSE2, and
    AVX-512 where the host runs it, so vector code for each kind of x86-64 CPU meets the interpreter."""
    flags = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    cpus = [None]
    if "avx2" in flags and "fma" in flags:
        cpus.append("x86-64-v3")
    if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags:
        cpus.append("x86-64-v4")
    return cpus + ["x86-64"]


CPUS = host_cpus()


def run(cmd, timeout=TIMEOUT):
    try:
        r = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, errors="replace")
        return r.returncode, r.stdout + r.stderr
    except subprocess.TimeoutExpired:
        return "timeout", f"timed out after {timeout} s"


def float_bits_equal(a, b, abits, bbits):
    if isinstance(a, float) and math.isnan(a):
        return isinstance(b, float) and math.isnan(b)
    return abits == bbits


def compare(prog, ref_dir, got_dir):
    """None when every output agrees, else a one-line description of the first difference."""
    by = prog.by_name()
    for i, name in enumerate(prog.outputs):
        node = by[name]
        f = f"out{i}.npy"
        if not os.path.exists(os.path.join(got_dir, f)):
            return f"out{i} was not written"
        ref, got = read_npy(os.path.join(ref_dir, f)), read_npy(os.path.join(got_dir, f))
        if (ref.dtype, ref.shape) != (got.dtype, got.shape):
            return f"out{i}: {got.dtype}{list(got.shape)} instead of {ref.dtype}{list(ref.shape)}"
        eps = progen.EPS.get(ref.dtype, 0.0)
        for k, (a, b) in enumerate(zip(got.values, ref.values)):
            if node.exact or not progen.is_float(ref.dtype):
                if not float_bits_equal(a, b, got.bits[k], ref.bits[k]):
                    return f"out{i} (%{name}, exact) element {k}: {a!r}, expected {b!r}"
                continue
            if math.isnan(a) or math.isnan(b) or math.isinf(a) or math.isinf(b):
                if not (a == b or (math.isnan(a) and math.isnan(b))):
                    return f"out{i} (%{name}) element {k}: {a!r}, expected {b!r}"
                continue
            tol = 2 * node.err + 4 * eps * abs(b) + 1e-30
            if abs(a - b) > tol:
                return f"out{i} (%{name}, err bound {node.err:.3g}) element {k}: {a!r}, expected {b!r}"
    return None


def ill_conditioned(prog):
    """Some float output's error bound exceeds --check-semantics' f32 tolerance (1e-5 * max(1, |value|)), e.g. the
    square root of a sum that cancels to about 0."""
    by = prog.by_name()
    return any(progen.is_float(by[o].dtype) and by[o].err > 1e-5 * max(1.0, by[o].mag) for o in prog.outputs)


def check(prog, work, stages, seed=1, mcpu=None):
    """(status, stage, detail): status is 'pass', 'skip' or 'fail'. mcpu: the cpu stage's --mcpu (None: the host)."""
    os.makedirs(work, exist_ok=True)
    uop = os.path.join(work, "p.uop")
    with open(uop, "w") as f:
        f.write(prog.text())
    ref = os.path.join(work, "ref")
    shutil.rmtree(ref, ignore_errors=True)
    rc, out = run([TGC, "run", uop, "--interp", "--seed", str(seed), "--output-dir", ref])
    if rc == 1 and "undefined result" in out:
        return "skip", "interp", out.strip().splitlines()[-1]
    if rc != 0:
        return "fail", "interp", kind(rc) + ": " + tail(out)
    for stage in stages:
        if stage == "interp":
            continue
        if stage.startswith("compile-"):
            rc, out = run([TGC, "compile", uop, "-o", os.path.join(work, stage), "--target", stage[8:], "--name",
                           "model"])
            if rc != 0 and not (rc == 1 and re.search(r"target cannot compile .* yet", out)):
                return "fail", stage, "compile " + kind(rc) + ": " + tail(out)
            continue
        if stage.startswith("semantics"):
            gpu = {"semantics-gpu": "opencl", "semantics-cuda": "cuda", "semantics-amd": "amd"}.get(stage)
            target = ["--target", gpu] if gpu else []
            rc, out = run([TGC_OPT, uop, "--passes=lower-tensors,codegen", "--check-semantics", "--check-seed",
                           str(seed), "-o", os.devnull] + target, SEMANTICS_TIMEOUT)
            if rc == 1 and "undefined result" in out:
                continue
            if rc == 1 and "differs" in out and ill_conditioned(prog):
                continue  # --check-semantics compares with fixed tolerances; the error model allows more here
            if rc != 0:
                return "fail", stage, kind(rc) + ": " + tail(out)
            continue
        got = os.path.join(work, stage + ".out")
        shutil.rmtree(got, ignore_errors=True)
        if stage in ("jit", "opencl"):
            target = ["--target", "opencl"] if stage == "opencl" else []
            rc, out = run([TGC, "run", uop, "--seed", str(seed), "--output-dir", got] + target)
        else:
            exe_dir = os.path.join(work, stage)
            cpu = ["--mcpu", mcpu] if stage == "cpu" and mcpu else []
            rc, out = run([TGC, "compile", uop, "-o", exe_dir, "--target", stage, "--name", "model"] + cpu)
            if rc != 0:
                return "fail", stage, "compile " + kind(rc) + ": " + tail(out)
            rc, out = run([os.path.join(exe_dir, "model"), "--seed", str(seed), "--output-dir", got])
        where = f" (--mcpu={mcpu})" if stage == "cpu" and mcpu else ""
        if rc != 0:
            return "fail", stage, kind(rc) + where + ": " + tail(out)
        diff = compare(prog, ref, got)
        if diff:
            return "fail", stage, "mismatch" + where + ": " + diff
    return "pass", None, None


def kind(rc):
    return "timeout" if rc == "timeout" else ("crash (signal %d)" % -rc if rc < 0 else "exit %d" % rc)


def tail(out):
    lines = [l for l in out.strip().splitlines() if l.strip()]
    return " | ".join(lines[-3:])[-600:]


def signature(result):
    status, stage, detail = result
    return status, stage, detail.split(":")[0] if detail else None


# --- minimization -------------------------------------------------------------------------------------------------

def candidates(prog):
    """Smaller programs, most promising first."""
    if len(prog.outputs) > 1:
        for o in prog.outputs:
            p = clone(prog)
            p.outputs = [x for x in p.outputs if x != o]
            yield p
    for n in reversed(prog.nodes):
        if n.op in ("input",):
            continue
        for s in dict.fromkeys(n.srcs):
            src = prog.by_name()[s]
            if src.dtype == n.dtype and src.shape == n.shape:
                p = clone(prog)
                replace_uses(p, n.name, s)
                yield p
        if n.op != "const":
            p = clone(prog)
            m = p.by_name()[n.name]
            m.op, m.srcs, m.arg = "input", [], None
            yield p
            p = clone(prog)
            m = p.by_name()[n.name]
            m.op, m.srcs = "const", []
            m.arg = "false" if n.dtype == "bool" else ("0.5" if progen.is_float(n.dtype) else "3")
            yield p


def clone(prog):
    p = progen.Program([progen.Node(n.name, n.op, list(n.srcs), n.arg, n.dtype, n.shape) for n in prog.nodes],
                       list(prog.outputs))
    return p


def replace_uses(p, old, new):
    for n in p.nodes:
        n.srcs = [new if s == old else s for s in n.srcs]
    p.outputs = list(dict.fromkeys(new if o == old else o for o in p.outputs))


def minimize(prog, result, work, stages, mcpu):
    want = signature(result)
    best, best_result = prog, result
    steps = 0
    improved = True
    while improved and steps < 400:
        improved = False
        for cand in candidates(best):
            cand.live()
            progen.analyze(cand)
            if any(math.isinf(cand.by_name()[o].err) for o in cand.outputs):
                continue
            steps += 1
            r = check(cand, work, [s for s in stages if s in ("interp", want[1])] or stages, mcpu=mcpu)
            if signature(r) == want:
                best, best_result = cand, r
                improved = True
                break
    return best, best_result


# --- driver -------------------------------------------------------------------------------------------------------

def one_seed(args):
    seed, work_root, stages, do_minimize = args
    work = os.path.join(work_root, f"seed-{seed}")
    prog = progen.generate(seed)
    mcpu = CPUS[seed % len(CPUS)]
    result = check(prog, work, stages, mcpu=mcpu)
    if result[0] != "fail":
        shutil.rmtree(work, ignore_errors=True)
        return seed, result, None
    text = None
    if do_minimize:
        small, result2 = minimize(prog, result, work + ".min", stages, mcpu)
        text = small.text()
        result = (result[0], result[1], result[2] + "\n    minimized: " + result2[2])
    else:
        text = prog.text()
    os.makedirs(os.path.join(work_root, "failures"), exist_ok=True)
    with open(os.path.join(work_root, "failures", f"seed-{seed}.uop"), "w") as f:
        f.write(f"// random_programs.py seed {seed}: {result[1]}: {result[2]}\n".replace("\n    ", " / ") + text)
    with open(os.path.join(work_root, "failures", f"seed-{seed}.full.uop"), "w") as f:
        f.write(prog.text())
    return seed, result, text


def main():
    global TGC, TGC_OPT
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True, help="directory with tgc and tgc-opt")
    ap.add_argument("--work", required=True)
    ap.add_argument("--seeds", type=int, default=100)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--time", type=float, default=0, help="run seeds until this many seconds have passed")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--stages", default=",".join(ALL_STAGES))
    ap.add_argument("--no-minimize", action="store_true")
    ap.add_argument("--print", type=int, metavar="SEED", help="print the program of one seed and exit")
    a = ap.parse_args()
    if a.print is not None:
        sys.stdout.write(progen.generate(a.print).text())
        return 0
    TGC, TGC_OPT = os.path.join(a.bin, "tgc"), os.path.join(a.bin, "tgc-opt")
    stages = a.stages.split(",")
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    counts = {"pass": 0, "skip": 0, "fail": 0}
    start = time.time()
    seeds = iter(range(a.start, a.start + a.seeds)) if not a.time else iter(range(a.start, 1 << 62))
    with ProcessPoolExecutor(a.jobs, initializer=init, initargs=(TGC, TGC_OPT)) as pool:
        pending = set()
        while True:
            while len(pending) < 2 * a.jobs:
                if a.time and time.time() - start > a.time:
                    break
                s = next(seeds, None)
                if s is None:
                    break
                pending.add(pool.submit(one_seed, (s, a.work, stages, not a.no_minimize)))
            if not pending:
                break
            finished, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in finished:
                seed, result, text = f.result()
                counts[result[0]] += 1
                if result[0] == "fail":
                    print(f"FAIL seed {seed} ({result[1]}): {result[2]}\n{text}", flush=True)
    print(f"random programs (seeds {a.start}..): {counts['pass']} passed, {counts['skip']} skipped (undefined on "
          f"their inputs), {counts['fail']} failed in {time.time() - start:.0f} s")
    return 1 if counts["fail"] else 0


def init(tgc, tgc_opt):
    global TGC, TGC_OPT
    TGC, TGC_OPT = tgc, tgc_opt


if __name__ == "__main__":
    sys.exit(main())
