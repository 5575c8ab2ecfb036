#!/usr/bin/env python3
"""Runs ONNX's own backend test suite through tgc and reports passed / failed / unsupported per operator.

The suite: `node` (one operator per model) and `simple` cases, written from the `onnx` PyPI package's case
generators by test/onnx/generate_data.py, and the `pytorch-converted` and `pytorch-operator` cases that the package
ships (onnx/backend/test/data), and the `light` real networks (ResNet-50, DenseNet-121, Inception v1 and v2,
ShuffleNet, SqueezeNet, VGG-19, AlexNet, ZFNet-512: their weights are ConstantOfShape nodes) with the inputs and
expected outputs of ONNX's runner. Each case is a model.onnx with test_data_set_*/input_*.pb and
output_*.pb. Every case runs `tgc run model.onnx --input NAME=input_i.pb --output-dir DIR` (the LLVM JIT; with
--exe, also `tgc compile` and the compiled executable) and its outputs are compared with the expected ones at the
suite's tolerances (rtol 1e-3, atol 1e-7, relaxed to 1e-5 for float32 transcendentals as onnxruntime's CI does).

A case is `unsupported` when tgc reports a located import error saying that an operator, attribute, type or
dynamic shape is not supported; `failed` for any other error, a crash, or wrong values. Needs numpy and onnx
(test/onnx/setup_venv.sh installs them); prints why and exits 0 with everything skipped when they are missing.

  backend_suite.py --tgc build/bin/tgc [--sets node,simple] [--filter SUBSTR] [--jobs N] [--report FILE.md]
"""

import argparse
import collections
import concurrent.futures
import glob
import os
import re
import subprocess
import sys
import tempfile

try:
    import numpy as np
    import onnx
    from onnx import numpy_helper
except ImportError as e:  # the core suite runs without PyPI packages
    print(f"onnx backend suite: skipped ({e.name} is not installed; run test/onnx/setup_venv.sh)")
    sys.exit(0)

UNSUPPORTED = re.compile(r"not supported|must be known when the model is compiled|tgc compiles static shapes|"
                         r"has an element type tgc does not support|element type \d+ is not supported|"
                         r"needs a float tensor|is not a tensor|cannot cast to ONNX type|dynamic dimension")


def sanitize(name):
    return re.sub(r"[^A-Za-z0-9_.-]", "_", name) or "_"


def compare(name, got, want):
    """None when equal within the suite's tolerance, else a one-line reason."""
    low = want.dtype == np.float16 or "bfloat16" in str(want.dtype)
    if got.dtype.kind == "V" and got.dtype.itemsize == 2:  # tgc writes bf16 as '<V2': the high half of an f32
        got = (got.view(np.uint16).astype(np.uint32) << 16).view(np.float32)
    if "bfloat16" in str(want.dtype):
        want = want.astype(np.float32)
    got, want = np.atleast_1d(got), np.atleast_1d(want)
    if got.shape != want.shape:
        return f"{name}: shape {list(got.shape)}, expected {list(want.shape)}"
    if want.dtype.kind in "biu" or want.dtype == np.bool_:
        bad = np.nonzero(got.astype(want.dtype) != want)
        if len(bad[0]):
            i = tuple(int(b[0]) for b in bad)
            return f"{name}: {len(bad[0])} elements differ, first at {list(i)}: {got[i]} vs {want[i]}"
        return None
    g, w = got.astype(np.float64), want.astype(np.float64)
    rtol, atol = 1e-3, 1e-5 if want.dtype in (np.float32, np.float16) else 1e-7
    if low:
        rtol, atol = 1e-2, 1e-3
    ok = np.isclose(g, w, rtol=rtol, atol=atol, equal_nan=True)
    if not ok.all():
        i = tuple(int(b[0]) for b in np.nonzero(~ok))
        err = np.nanmax(np.abs(g - w)[~ok])
        return f"{name}: {int((~ok).sum())} of {ok.size} elements differ, max abs error {err:.3g}, first at {list(i)}"
    return None


def run_case(tgc, case_dir, use_exe):
    """(status, operators, reason) for one case directory."""
    model_path = os.path.join(case_dir, "model.onnx")
    try:
        model = onnx.load(model_path, load_external_data=False)
    except Exception as e:  # noqa: BLE001 - a case the onnx package cannot read is not tgc's
        return "skipped", ["?"], f"onnx cannot load it: {e}"
    ops = sorted({n.op_type for n in model.graph.node}) or ["(none)"]
    inits = {i.name for i in model.graph.initializer}
    inputs = [i.name for i in model.graph.input if i.name not in inits]
    outputs = [o.name for o in model.graph.output]
    sets = sorted(glob.glob(os.path.join(case_dir, "test_data_set_*")))
    if not sets:
        return "skipped", ops, "no test data"
    ds = sets[0]
    in_files = sorted(glob.glob(os.path.join(ds, "input_*.pb")), key=lambda p: int(re.findall(r"\d+", p)[-1]))
    if len(in_files) != len(inputs):
        return "skipped", ops, f"{len(in_files)} input files for {len(inputs)} inputs (optional inputs)"
    flags = [f"--input={sanitize(n)}={f}" for n, f in zip(inputs, in_files)]
    status, why = run_flags(tgc, model_path, flags, outputs, ds, use_exe)
    if status == "unsupported" and "must be known when the model is compiled" in why and len(flags) > 1:
        # the node tests pass axes, pads, shapes, ... as graph inputs; a real model has them as constants
        bound = [flags[0]] + ["--bind=" + f[len("--input="):] for f in flags[1:]]
        status2, why2 = run_flags(tgc, model_path, bound, outputs, ds, use_exe)
        if status2 == "passed":
            return "passed (bound)", ops, "inputs 1.. bound with --bind"
        if status2 == "failed":
            return status2, ops, why2 + " (inputs 1.. bound with --bind)"
    return status, ops, why


def run_flags(tgc, model_path, flags, outputs, ds, use_exe):
    """(status, reason) of one run with these input flags; inputs tgc does not use (folded away) are dropped."""
    with tempfile.TemporaryDirectory(prefix="tgc-onnx-") as tmp:
        out_dir = os.path.join(tmp, "out")
        binds = [f for f in flags if f.startswith("--bind=")]
        if use_exe:
            exe_dir = os.path.join(tmp, "exe")
            r = subprocess.run([tgc, "compile", model_path, "-o", exe_dir, "--name", "model", *binds],
                               capture_output=True, text=True, timeout=600)
            if r.returncode != 0:
                return classify(r)
            exe_flags = []  # compiled executables read .npy only
            for k, f in enumerate(f for f in flags if f not in binds):
                name, _, pb = f[len("--input="):].partition("=")
                npy = os.path.join(tmp, f"input_{k}.npy")
                np.save(npy, numpy_helper.to_array(onnx.load_tensor(pb)))
                exe_flags.append(f"--input={name}={npy}")
        while True:
            if use_exe:
                cmd = [os.path.join(exe_dir, "model"), *exe_flags, "--output-dir", out_dir]
            else:
                cmd = [tgc, "run", model_path, *flags, "--output-dir", out_dir]
            r = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
            unused = re.search(r"no input named '([^']*)'", r.stderr)
            if r.returncode == 0 or not unused:
                break
            flags = [f for f in flags if not f.startswith(f"--input={unused.group(1)}=")]
            if use_exe:
                exe_flags = [f for f in exe_flags if not f.startswith(f"--input={unused.group(1)}=")]
        if r.returncode != 0:
            return classify(r)
        for k, name in enumerate(outputs):
            want = numpy_helper.to_array(onnx.load_tensor(os.path.join(ds, f"output_{k}.pb")))
            if want.dtype.kind in "OUSc":
                return "skipped", f"output '{name}' is a {want.dtype} tensor"
            path = os.path.join(out_dir, sanitize(name) + ".npy")
            if not os.path.exists(path):
                return "failed", f"output '{name}' was not written"
            why = compare(name, np.load(path), want)
            if why:
                return "failed", why
    return "passed", ""


def rel(case_dir):
    return os.path.join(os.path.basename(os.path.dirname(case_dir)), os.path.basename(case_dir))


def classify(r):
    lines = [ln for ln in (r.stderr + r.stdout).splitlines() if ln.strip()]
    msg = next((ln for ln in lines if "error:" in ln), lines[-1] if lines else f"exit status {r.returncode}")
    if r.returncode < 0:
        return "failed", f"crashed with signal {-r.returncode}: {msg}"
    return ("unsupported" if UNSUPPORTED.search(msg) else "failed"), msg.strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tgc", required=True)
    ap.add_argument("--data", required=True, help="what generate_data.py wrote (node, simple and light cases)")
    ap.add_argument("--sets", default="node,simple,pytorch-converted,pytorch-operator,light")
    ap.add_argument("--filter", default="")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--exe", action="store_true", help="compile each case and run the executable instead of the JIT")
    ap.add_argument("--report", help="write a markdown report here")
    ap.add_argument("--min-passed", type=int, default=0, help="exit 1 when fewer cases pass")
    args = ap.parse_args()
    shipped = os.path.join(os.path.dirname(onnx.__file__), "backend", "test", "data")
    cases = []
    for s in args.sets.split(","):
        data = args.data if os.path.isdir(os.path.join(args.data, s)) else shipped
        cases += [d for d in sorted(glob.glob(os.path.join(data, s, "test_*"))) if args.filter in d]
    results = {}
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        futs = {pool.submit(run_case, os.path.abspath(args.tgc), c, args.exe): c for c in cases}
        for f in concurrent.futures.as_completed(futs):
            c = futs[f]
            try:
                results[c] = f.result()
            except subprocess.TimeoutExpired:
                results[c] = ("failed", ["?"], "timed out")
            except Exception as e:  # noqa: BLE001 - reported as the case's failure
                results[c] = ("failed", ["?"], f"the comparison raised {type(e).__name__}: {e}")
    totals = collections.Counter(st for st, _, _ in results.values())
    per_op = collections.defaultdict(collections.Counter)
    for st, ops, _ in results.values():
        for op in ops:
            per_op[op][st] += 1
    lines = [f"# ONNX backend test suite through tgc (onnx {onnx.__version__})", "",
             f"Sets: {args.sets}. Mode: {'compiled executable' if args.exe else 'tgc run (LLVM JIT)'}. "
             f"Cases: {len(results)}: {totals['passed']} passed, {totals['passed (bound)']} passed with the "
             f"parameter inputs bound (--bind), {totals['failed']} failed, "
             f"{totals['unsupported']} unsupported, {totals['skipped']} skipped.", "",
             "## Per operator (a case counts for every operator in its model)", "",
             "| operator | passed | passed (bound) | failed | unsupported | skipped |", "|---|---|---|---|---|---|"]
    for op in sorted(per_op):
        c = per_op[op]
        lines.append(f"| {op} | {c['passed']} | {c['passed (bound)']} | {c['failed']} | {c['unsupported']} | "
                     f"{c['skipped']} |")
    for st in ("failed", "unsupported", "skipped"):
        lines += ["", f"## {st.capitalize()} cases", ""]
        for c in sorted(results):
            s, ops, why = results[c]
            if s == st:
                lines.append(f"- `{rel(c)}` ({', '.join(ops)}): {why}")
    text = "\n".join(lines) + "\n"
    if args.report:
        with open(args.report, "w") as f:
            f.write(text)
    for c in sorted(results):
        s, ops, why = results[c]
        if s == "failed":
            print(f"FAILED {rel(c)}: {why}")
    print(f"onnx backend suite: {totals['passed']} passed, {totals['passed (bound)']} passed with bound inputs, "
          f"{totals['failed']} failed, "
          f"{totals['unsupported']} unsupported, {totals['skipped']} skipped")
    return 1 if totals["passed"] + totals["passed (bound)"] < args.min_passed else 0


if __name__ == "__main__":
    sys.exit(main())
