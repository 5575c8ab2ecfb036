#!/usr/bin/env python3
"""Benchmark tgc-compiled executables against the JIT path and numpy / torch baselines.

For each example model: generate weights if missing, compile it `--reps` times (median compile time), then
run in `--rounds` interleaved rounds: the compiled executable (`OUT/X/X --bench N`), `tgc run X.uop --bench N`
(LLVM JIT), and numpy / torch re-implementations of the model when those are importable. Every contender
reports the median of N timed runs (after one warm-up run); the table shows the median of those per-round
medians, and ratios baseline/tgc-exe (> 1 means the compiled executable is faster).

With --target opencl (or another GPU target that runs here), tgc-exe is the model compiled for that target and a
cpu-target executable (tgc-cpu-exe) joins the contenders, so the ratios compare the target with tgc's cpu target;
on PoCL (OpenCL on this CPU) that measures the GPU pipeline's code on a CPU, not a GPU.

The core uses the standard library only. numpy and torch run in a subprocess (this script with --worker)
whose environment has OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE removed.
"""

import argparse
import json
import os
import re
import statistics
import struct
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MODELS = ["matmul", "mlp", "mnist_cnn", "transformer_block", "gemm"]
BENCH_RE = re.compile(r"bench: (\d+) runs, min ([0-9.]+) ms, median ([0-9.]+) ms")
SCRUBBED_ENV = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


# ----------------------------------------------------------------------------------------------------------------
# Baseline worker (runs in a subprocess; needs numpy, and torch for --worker torch)


def load_safetensors(path):
    import numpy as np

    with open(path, "rb") as f:
        data = f.read()
    (n,) = struct.unpack("<Q", data[:8])
    header = json.loads(data[8 : 8 + n])
    base = 8 + n
    dtypes = {"F32": np.float32, "F16": np.float16, "F64": np.float64, "I32": np.int32, "I64": np.int64}
    out = {}
    for name, info in header.items():
        if name == "__metadata__":
            continue
        b, e = info["data_offsets"]
        out[name] = np.frombuffer(data[base + b : base + e], dtype=dtypes[info["dtype"]]).reshape(info["shape"]).copy()
    return out


def numpy_models(np):
    def softmax(x, axis):
        e = np.exp(x - x.max(axis=axis, keepdims=True))
        return e / e.sum(axis=axis, keepdims=True)

    def layernorm(x, w, b, eps=1e-5):
        m = x.mean(axis=-1, keepdims=True)
        v = ((x - m) ** 2).mean(axis=-1, keepdims=True)
        return (x - m) / np.sqrt(v + eps) * w + b

    def gelu_tanh(x):
        return 0.5 * x * (1.0 + np.tanh(np.float32(0.7978845608028654) * (x + np.float32(0.044715) * x * x * x)))

    def conv2d(x, w, b):  # stride 1, no padding, im2col + matmul
        n, c, h, wd = x.shape
        o, _, kh, kw = w.shape
        oh, ow = h - kh + 1, wd - kw + 1
        s = x.strides
        cols = np.lib.stride_tricks.as_strided(x, (n, oh, ow, c, kh, kw), (s[0], s[2], s[3], s[1], s[2], s[3]))
        y = cols.reshape(n * oh * ow, c * kh * kw) @ w.reshape(o, -1).T + b
        return np.ascontiguousarray(y.reshape(n, oh, ow, o).transpose(0, 3, 1, 2))

    def batchnorm(x, s, b, m, v, eps=1e-5):
        k = (s / np.sqrt(v + eps))[None, :, None, None]
        return (x - m[None, :, None, None]) * k + b[None, :, None, None]

    def maxpool2(x):
        n, c, h, w = x.shape
        return x[:, :, : h // 2 * 2, : w // 2 * 2].reshape(n, c, h // 2, 2, w // 2, 2).max(axis=(3, 5))

    def matmul(W, x):
        return x @ W["w"]

    def mlp(W, x):
        h = np.maximum(x @ W["fc1.weight"] + W["fc1.bias"], 0)
        h = np.maximum(h @ W["fc2.weight"] + W["fc2.bias"], 0)
        return softmax(h @ W["fc3.weight"] + W["fc3.bias"], 1)

    def mnist_cnn(W, x):
        h = np.maximum(conv2d(x, W["l1.weight"], W["l1.bias"]), 0)
        h = np.maximum(conv2d(h, W["l2.weight"], W["l2.bias"]), 0)
        h = maxpool2(batchnorm(h, W["bn1.weight"], W["bn1.bias"], W["bn1.running_mean"], W["bn1.running_var"]))
        h = np.maximum(conv2d(h, W["l3.weight"], W["l3.bias"]), 0)
        h = np.maximum(conv2d(h, W["l4.weight"], W["l4.bias"]), 0)
        h = maxpool2(batchnorm(h, W["bn2.weight"], W["bn2.bias"], W["bn2.running_mean"], W["bn2.running_var"]))
        return h.reshape(h.shape[0], -1) @ W["fc.weight"].T + W["fc.bias"]

    def transformer_block(W, x):
        t, d = x.shape
        h = layernorm(x, W["ln1.weight"], W["ln1.bias"])
        q = (h @ W["attn.wq"]).reshape(t, 4, d // 4).transpose(1, 0, 2)
        k = (h @ W["attn.wk"]).reshape(t, 4, d // 4).transpose(1, 2, 0)
        v = (h @ W["attn.wv"]).reshape(t, 4, d // 4).transpose(1, 0, 2)
        a = softmax((q @ k) * np.float32(0.25), 2)
        ctx = (a @ v).transpose(1, 0, 2).reshape(t, d)
        x1 = x + ctx @ W["attn.wo"]
        h2 = layernorm(x1, W["ln2.weight"], W["ln2.bias"])
        m = gelu_tanh(h2 @ W["mlp.w1"] + W["mlp.b1"]) @ W["mlp.w2"] + W["mlp.b2"]
        return x1 + m

    return {"matmul": matmul, "mlp": mlp, "mnist_cnn": mnist_cnn, "transformer_block": transformer_block,
            "gemm": matmul}


def torch_models(torch):
    F = torch.nn.functional

    def matmul(W, x):
        return x @ W["w"]

    def mlp(W, x):
        h = torch.relu(x @ W["fc1.weight"] + W["fc1.bias"])
        h = torch.relu(h @ W["fc2.weight"] + W["fc2.bias"])
        return torch.softmax(h @ W["fc3.weight"] + W["fc3.bias"], 1)

    def mnist_cnn(W, x):
        def bn(h, p):
            return F.batch_norm(h, W[p + ".running_mean"], W[p + ".running_var"], W[p + ".weight"], W[p + ".bias"],
                                False, 0.0, 1e-5)

        h = torch.relu(F.conv2d(x, W["l1.weight"], W["l1.bias"]))
        h = F.max_pool2d(bn(torch.relu(F.conv2d(h, W["l2.weight"], W["l2.bias"])), "bn1"), 2)
        h = torch.relu(F.conv2d(h, W["l3.weight"], W["l3.bias"]))
        h = F.max_pool2d(bn(torch.relu(F.conv2d(h, W["l4.weight"], W["l4.bias"])), "bn2"), 2)
        return F.linear(h.flatten(1), W["fc.weight"], W["fc.bias"])

    def transformer_block(W, x):
        t, d = x.shape
        h = F.layer_norm(x, (d,), W["ln1.weight"], W["ln1.bias"], 1e-5)
        q = (h @ W["attn.wq"]).reshape(t, 4, d // 4).permute(1, 0, 2)
        k = (h @ W["attn.wk"]).reshape(t, 4, d // 4).permute(1, 2, 0)
        v = (h @ W["attn.wv"]).reshape(t, 4, d // 4).permute(1, 0, 2)
        a = torch.softmax((q @ k) * 0.25, 2)
        x1 = x + (a @ v).permute(1, 0, 2).reshape(t, d) @ W["attn.wo"]
        h2 = F.layer_norm(x1, (d,), W["ln2.weight"], W["ln2.bias"], 1e-5)
        return x1 + F.gelu(h2 @ W["mlp.w1"] + W["mlp.b1"], approximate="tanh") @ W["mlp.w2"] + W["mlp.b2"]

    return {"matmul": matmul, "mlp": mlp, "mnist_cnn": mnist_cnn, "transformer_block": transformer_block,
            "gemm": matmul}


def model_path(model, ext):
    """examples/MODEL.EXT, or bench/models/MODEL.EXT for models too large for the test suite's interpreter runs."""
    path = os.path.join(ROOT, "examples", model + ext)
    if os.path.exists(os.path.join(ROOT, "examples", model + ".uop")):
        return path
    return os.path.join(ROOT, "bench", "models", model + ext)


def input_shape(uop_path):
    with open(uop_path) as f:
        m = re.search(r'=\s*input\s+"[^"]*"\s*:\s*f32\[([0-9, ]+)\]', f.read())
    return [int(s) for s in m.group(1).split(",")]


def worker(kind, model, bench):
    """Time one model with numpy or torch and print a line in the same format as tgc's --bench."""
    import numpy as np

    W = load_safetensors(model_path(model, ".safetensors"))
    x = np.random.default_rng(0).standard_normal(input_shape(model_path(model, ".uop")),
                                                 dtype=np.float32)
    if kind == "numpy":
        fn = numpy_models(np).get(model)
    else:
        import torch

        torch.set_grad_enabled(False)
        W = {k: torch.from_numpy(v) for k, v in W.items()}
        x = torch.from_numpy(x)
        fn = torch_models(torch).get(model)
    if fn is None:
        print("no %s implementation of %s" % (kind, model))
        return 2
    fn(W, x)  # warm-up, like tgc's first (untimed) run
    times = []
    for _ in range(bench):
        t0 = time.perf_counter()
        fn(W, x)
        times.append((time.perf_counter() - t0) * 1e3)
    print("bench: %d runs, min %.4f ms, median %.4f ms" % (bench, min(times), statistics.median(times)))
    return 0


# ----------------------------------------------------------------------------------------------------------------
# Driver (standard library only)


def baseline_env():
    env = dict(os.environ)
    for k in SCRUBBED_ENV:
        env.pop(k, None)
    return env


def importable(module):
    r = subprocess.run([sys.executable, "-c", "import " + module], env=baseline_env(), capture_output=True)
    return r.returncode == 0


def run_bench(cmd, env=None):
    """Run a command that prints tgc's bench line; return its median in ms (or raise)."""
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    m = BENCH_RE.search(r.stdout)
    if r.returncode != 0 or not m:
        raise RuntimeError("%s failed (rc %d): %s" % (" ".join(cmd), r.returncode, (r.stdout + r.stderr).strip()[-400:]))
    return float(m.group(3))


def fmt_ms(v):
    if v is None:
        return "n/a"
    return "<0.001" if v == 0 else "%.3f" % v


def fmt_ratio(base, tgc):
    if base is None or tgc is None:
        return "n/a"
    if tgc == 0:
        return "n/a (tgc<1us)"
    return "%.2fx" % (base / tgc)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=5, help="compile repetitions per model (default 5)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved timing rounds (default 5)")
    ap.add_argument("--bench", type=int, default=50, help="timed runs per contender per round (default 50)")
    ap.add_argument("--build", default="build", help="tgc build directory (default build)")
    ap.add_argument("--out", default=None, help="output directory for compiled models (default BUILD/bench)")
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated models (default all)")
    ap.add_argument("--no-jit", action="store_true", help="skip the `tgc run` (JIT) baseline")
    ap.add_argument("--tgc-flags", default="",
                    help="extra flags for tgc compile and tgc run, e.g. --tgc-flags=--fp-contract=fast")
    ap.add_argument("--target", default="cpu", help="tgc target of tgc-exe (cpu, c, opencl; default cpu)")
    ap.add_argument("--worker", choices=["numpy", "torch"], help=argparse.SUPPRESS)
    ap.add_argument("--model", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker, args.model, args.bench)

    build = os.path.abspath(os.path.join(ROOT, args.build))
    out = os.path.abspath(args.out) if args.out else os.path.join(build, "bench")
    tgc = os.path.join(build, "bin", "tgc")
    if not os.access(tgc, os.X_OK):
        sys.exit("tgc not found at %s (build it, or pass --build DIR)" % tgc)
    models = [m for m in args.models.split(",") if m]
    os.makedirs(out, exist_ok=True)

    have_numpy = importable("numpy")
    have_torch = have_numpy and importable("torch")
    if not have_numpy:
        print("numpy not installed: skipped (pip install numpy)")
    if not have_torch:
        print("torch not installed: skipped (pip install torch)" if have_numpy else
              "torch: skipped (the torch baseline also needs numpy)")
    print("threads: TGC_NUM_THREADS=%s (default: one per core, %d cores); %d rounds x %d runs, %d compile reps"
          % (os.environ.get("TGC_NUM_THREADS", "unset"), os.cpu_count() or 0, args.rounds, args.bench, args.reps))
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else 0.0
    if load > 0.5:
        print("warning: 1-minute load average %.2f before starting; other processes will add noise" % load)

    # Weights and compiles.
    compile_s = {}
    for m in models:
        uop = model_path(m, ".uop")
        if not os.path.exists(model_path(m, ".safetensors")):
            subprocess.run([tgc, "weights", uop], check=True, cwd=ROOT)
        times = []
        for _ in range(max(1, args.reps)):
            t0 = time.perf_counter()
            r = subprocess.run([tgc, "compile", uop, "-o", os.path.join(out, m), "--target", args.target] +
                               args.tgc_flags.split(), capture_output=True, text=True, cwd=ROOT)
            times.append(time.perf_counter() - t0)
            if r.returncode != 0:
                sys.exit("compile of %s failed:\n%s" % (m, r.stdout + r.stderr))
        compile_s[m] = statistics.median(times)
        if args.target != "cpu":  # the reference: tgc's own cpu target
            r = subprocess.run([tgc, "compile", uop, "-o", os.path.join(out, m + "-cpu"), "--name", m] +
                               args.tgc_flags.split(), capture_output=True, text=True, cwd=ROOT)
            if r.returncode != 0:
                sys.exit("compile of %s for the cpu target failed:\n%s" % (m, r.stdout + r.stderr))

    # Contenders: name -> function(model) -> median ms, or None when not applicable.
    contenders = [("tgc-exe", lambda m: run_bench([os.path.join(out, m, m), "--bench", str(args.bench)]))]
    if args.target != "cpu":
        contenders.append(("tgc-cpu-exe", lambda m: run_bench(
            [os.path.join(out, m + "-cpu", m), "--bench", str(args.bench)])))
    if not args.no_jit:
        jit_target = [] if args.target in ("cpu", "c") else ["--target", args.target]
        contenders.append(("tgc-run(JIT)", lambda m: run_bench(
            [tgc, "run", model_path(m, ".uop"), "--bench", str(args.bench)] + jit_target +
            args.tgc_flags.split())))
    for kind, ok in (("numpy", have_numpy), ("torch", have_torch)):
        if ok:
            contenders.append((kind, lambda m, kind=kind: run_bench(
                [sys.executable, os.path.abspath(__file__), "--worker", kind, "--model", m, "--bench",
                 str(args.bench)], env=baseline_env())))
        else:
            contenders.append((kind, None))

    samples = {(m, name): [] for m in models for name, _ in contenders}
    errors = {}
    for rnd in range(args.rounds):
        for m in models:
            k = rnd % len(contenders)  # rotate the order so no contender always runs first
            for name, fn in contenders[k:] + contenders[:k]:
                if fn is None or (m, name) in errors:
                    continue
                try:
                    samples[(m, name)].append(fn(m))
                except RuntimeError as e:
                    errors[(m, name)] = str(e)
        print("round %d/%d done" % (rnd + 1, args.rounds), file=sys.stderr)

    med = {k: (statistics.median(v) if v else None) for k, v in samples.items()}
    names = [n for n, _ in contenders]
    header = ["model", "compile s"] + ["%s ms" % n for n in names] + ["%s/tgc" % n for n in names[1:]]
    rows = []
    for m in models:
        t = med[(m, "tgc-exe")]
        rows.append([m, "%.2f" % compile_s[m]] + [fmt_ms(med[(m, n)]) for n in names] +
                    [fmt_ratio(med[(m, n)], t) for n in names[1:]])
    widths = [max(len(r[i]) for r in rows + [header]) for i in range(len(header))]
    print()
    print("  ".join(h.ljust(w) for h, w in zip(header, widths)))
    print("  ".join("-" * w for w in widths))
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)))
    print("\nmedian compile time per model (tgc compile, %d reps): %s"
          % (args.reps, ", ".join("%s %.3f s" % (m, compile_s[m]) for m in models)))
    print("times: median over %d interleaved rounds of each round's median of %d runs; ratio > 1: tgc-exe faster"
          % (args.rounds, args.bench))
    for (m, n), e in sorted(errors.items()):
        print("error: %s / %s: %s" % (m, n, e))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
