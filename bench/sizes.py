#!/usr/bin/env python3
"""tgc at the sizes users run, side by side with OpenBLAS (numpy), PyTorch and tinygrad, with the machine's limits.

Workloads (fp32): GEMM 512/1024/2048 (operands as inputs), the 784-512-512-10 MLP at batch 64, the beautiful_mnist
CNN at batch 128, elementwise add of 2 x 16M floats, the sum of 64M floats, and an embedding lookup of 128 tokens in
a 32000 x 512 table. For each, tgc compiles an executable
(`tgc compile`, timed: median of --reps), then every contender runs in --rounds interleaved rounds (the order
rotates per round); each run reports the median of --bench calls after a warm-up call, and the table shows the
median of the per-round medians. Ratios are baseline / tgc: > 1 means tgc is faster.

The same run reads the CPU (model, vector ISA) and measures its limits: the fp32 FMA peak of one core (a C probe
compiled with -march=native, 12 independent vector accumulators) and copy bandwidth (numpy copy of 256 MiB, counted
as read + write bytes), so GFLOPS and GB/s can be read as fractions of what the machine does.

--isa avx2 measures code for AVX2 CPUs on any newer host: tgc compiles with --mcpu=x86-64-v3, OpenBLAS runs its
Haswell kernels (OPENBLAS_CORETYPE=Haswell), PyTorch its AVX2 ones (ATEN_CPU_CAPABILITY=avx2), and the peak probe is
built for x86-64-v3.

Baselines run in a subprocess of --python (default: this interpreter) with OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE
removed (unless --isa sets them) and OPENBLAS_NUM_THREADS / OMP_NUM_THREADS / TGC_NUM_THREADS set to --threads. A missing package is
reported and its columns show n/a. `bench/sizes.py --setup` makes build/benchenv with numpy, torch (CPU) and
tinygrad from PyPI; then pass --python build/benchenv/bin/python.
"""

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import run as models  # bench/run.py: its bench-line parser, baseline environment and numpy/torch example models
from run import ROOT, run_bench
SETUP_PACKAGES = ["numpy", "torch", "tinygrad"]


def gemm_uop(n):
    return ('%%x = input "x" : f32[%d, %d]\n%%w = input "w" : f32[%d, %d]\n%%y = matmul(%%x, %%w)\n'
            '%%o = output(%%y) "y"\n%%root = sink(%%o)\n' % (n, n, n, n))


ADD_N = 16 * 1024 * 1024
SUM_N = 64 * 1024 * 1024


def add_uop():
    return ('%%a = input "a" : f32[%d]\n%%b = input "b" : f32[%d]\n%%y = add(%%a, %%b)\n%%o = output(%%y) "y"\n'
            '%%root = sink(%%o)\n' % (ADD_N, ADD_N))


def sum_uop():
    return ('%%a = input "a" : f32[%d]\n%%y = reduce_axis(%%a) [add, [0]] : f32[1]\n%%o = output(%%y) "y"\n'
            '%%root = sink(%%o)\n' % SUM_N)


def mlp_uop():
    text = open(os.path.join(ROOT, "examples", "mlp.uop")).read()
    text = text.replace("f32[4, ", "f32[64, ").replace('weights "mlp.safetensors"', 'weights "mlp_b64.safetensors"')
    return text


EMBED_V, EMBED_D, EMBED_T = 32000, 512, 128


def embed_uop():
    return ('weights "embed32k.safetensors"\n%%w = weight "w" : f32[%d, %d]\n%%i = input "ids" : i32[%d]\n'
            '%%y = embedding(%%w, %%i)\n%%o = output(%%y) "y"\n%%root = sink(%%o)\n' % (EMBED_V, EMBED_D, EMBED_T))


def cnn_uop():
    return open(os.path.join(ROOT, "bench", "models", "mnist_cnn_b128.uop")).read()


# name -> (uop text, flops per call or None, bytes per call or None)
WORKLOADS = {
    "gemm512": (lambda: gemm_uop(512), 2 * 512**3, None),
    "gemm1024": (lambda: gemm_uop(1024), 2 * 1024**3, None),
    "gemm2048": (lambda: gemm_uop(2048), 2 * 2048**3, None),
    "mlp_b64": (mlp_uop, 2 * 64 * (784 * 512 + 512 * 512 + 512 * 10), None),
    "cnn_b128": (cnn_uop, None, None),
    "add16M": (add_uop, None, 3 * 4 * ADD_N),
    "sum64M": (sum_uop, None, 4 * SUM_N),
    "embed32k": (embed_uop, None, None),
}


# ----------------------------------------------------------------------------------------------------------------
# Baseline worker (runs in a subprocess of --python)


FIRST_RESULT = r"""
import os, sys, time
t0 = time.perf_counter()
os.environ.setdefault("DEV", "CPU")
import numpy as np
from tinygrad import Device, Tensor
name = sys.argv[1]
rng = np.random.default_rng(0)
if name.startswith("gemm"):
    n = int(name[4:])
    out = Tensor(rng.standard_normal((n, n), dtype=np.float32)) @ Tensor(rng.standard_normal((n, n), dtype=np.float32))
elif name == "add16M":
    out = Tensor(rng.standard_normal(16 << 20, dtype=np.float32)) + Tensor(rng.standard_normal(16 << 20, dtype=np.float32))
elif name in ("mlp_b64", "cnn_b128", "embed32k"):
    sys.path.insert(0, sys.argv[2])
    import sizes
    W = {k: Tensor(v) for k, v in sizes.rng_weights(name).items()}
    out = sizes.tinygrad_model(name, W, Tensor(sizes.model_input(name, rng)))
else:
    out = Tensor(rng.standard_normal(64 << 20, dtype=np.float32)).sum()
out.numpy()
print("first: %.1f ms" % ((time.perf_counter() - t0) * 1e3))
"""

# tinygrad's scheduling and code generation alone: the NULL device renders every kernel (C-style source) and
# runs nothing, so the time of realize() is tinygrad's Python from the lazy graph to kernel sources
SCHEDULE_ONLY = r"""
import os, sys, time
os.environ["DEV"] = "NULL"
import numpy as np
from tinygrad import Tensor
name = sys.argv[1]
sys.path.insert(0, sys.argv[2])
import sizes
rng = np.random.default_rng(0)
if name.startswith("gemm"):
    n = int(name[4:])
    a, b = Tensor.empty(n, n).realize(), Tensor.empty(n, n).realize()
    make = lambda: a @ b
elif name == "add16M":
    a, b = Tensor.empty(16 << 20).realize(), Tensor.empty(16 << 20).realize()
    make = lambda: a + b
elif name in ("mlp_b64", "cnn_b128", "embed32k"):
    W = {k: Tensor.empty(*v.shape).realize() for k, v in sizes.rng_weights(name).items()}
    x = Tensor(sizes.model_input(name, rng)).realize()
    make = lambda: sizes.tinygrad_model(name, W, x)
else:
    a = Tensor.empty(64 << 20).realize()
    make = lambda: a.sum()
t0 = time.perf_counter()
make().realize()
print("schedule: %.1f ms" % ((time.perf_counter() - t0) * 1e3))
"""


def tinygrad_ms(python, script, name, env):
    """Run one of the tinygrad scripts above in a fresh process; the milliseconds it prints, or None."""
    r = subprocess.run([python, "-c", script, name, os.path.dirname(os.path.abspath(__file__))],
                       capture_output=True, text=True, env=env)
    m = re.search(r"(?:first|schedule): ([0-9.]+) ms", r.stdout)
    return float(m.group(1)) if m else None


def tgc_pass_ms(tgc, path, out, flags):
    """tgc compile --time-passes: the wall time of parsing and every pass up to the kernels' compilation."""
    r = subprocess.run([tgc, "compile", path, "-o", out, "--time-passes"] + flags, capture_output=True, text=True)
    total = 0.0
    for line in r.stderr.splitlines():
        m = re.match(r"\s*([0-9.]+) \(\s*[0-9.]+%\)\s+(.*)", line)
        if not m:
            continue
        if m.group(2).startswith("kernels"):
            return total * 1e3
        total += float(m.group(1))
    return None


def worker(kind, name, bench):
    import numpy as np

    rng = np.random.default_rng(0)
    f32 = np.float32
    if kind == "tinygrad":
        os.environ.setdefault("DEV", "CPU")  # tinygrad's CPU device (it would pick OpenCL where PoCL is installed)
        from tinygrad import Device, Tensor, TinyJit

        # tinygrad's graph is hash-consed: the same expression on the same tensors is already realized the second
        # time. TinyJit captures the kernels once and replays them on every call, as tinygrad's own benchmarks do.
        # Inputs are the jitted function's arguments (a closure over them would be captured as constants).
        # The device runs kernels asynchronously: every call waits for them.
        def tiny(f, *args):
            jit = TinyJit(lambda *xs: f(*xs).realize())
            dev = Device[Device.DEFAULT]
            return lambda: (jit(*args), dev.synchronize())

    if name.startswith("gemm"):
        n = int(name[4:])
        a = rng.standard_normal((n, n), dtype=f32)
        b = rng.standard_normal((n, n), dtype=f32)
        if kind == "numpy":
            c = np.empty((n, n), f32)
            fn = lambda: np.matmul(a, b, out=c)
        elif kind == "torch":
            import torch

            ta, tb = torch.from_numpy(a), torch.from_numpy(b)
            tc = torch.empty((n, n))
            fn = lambda: torch.mm(ta, tb, out=tc)
        else:
            fn = tiny(lambda x, y: x @ y, Tensor(a).realize(), Tensor(b).realize())
    elif name == "add16M":
        a = rng.standard_normal(ADD_N, dtype=f32)
        b = rng.standard_normal(ADD_N, dtype=f32)
        if kind == "numpy":
            c = np.empty(ADD_N, f32)
            fn = lambda: np.add(a, b, out=c)
        elif kind == "torch":
            import torch

            ta, tb, tc = torch.from_numpy(a), torch.from_numpy(b), torch.empty(ADD_N)
            fn = lambda: torch.add(ta, tb, out=tc)
        else:
            fn = tiny(lambda x, y: x + y, Tensor(a).realize(), Tensor(b).realize())
    elif name == "sum64M":
        a = rng.standard_normal(SUM_N, dtype=f32)
        if kind == "numpy":
            fn = lambda: a.sum()
        elif kind == "torch":
            import torch

            ta = torch.from_numpy(a)
            fn = lambda: ta.sum()
        else:
            fn = tiny(lambda x: x.sum(), Tensor(a).realize())
    elif name == "embed32k":
        w = rng_weights(name)["w"]
        ids = model_input(name, rng)
        ok = ids >= 0  # as tgc's embedding: an index outside [0, V) gives a zero row
        if kind == "numpy":
            out = np.empty((EMBED_T, EMBED_D), f32)
            safe = np.where(ok, ids, 0)
            fn = lambda: (np.take(w, safe, axis=0, out=out), out.__setitem__(~ok, 0))
        elif kind == "torch":
            import torch

            tw, tids, tok = torch.from_numpy(w), torch.from_numpy(ids).long(), torch.from_numpy(ok)[:, None]
            fn = lambda: torch.where(tok, torch.nn.functional.embedding(tids.clamp(min=0), tw), 0.0)
        else:
            tw = Tensor(w).realize()
            fn = tiny(lambda xs: tinygrad_model(name, {"w": tw}, xs), Tensor(ids).realize())
    elif name in ("mlp_b64", "cnn_b128"):
        W = {k: v for k, v in rng_weights(name).items()}
        x = model_input(name, rng)
        key = "mlp" if name == "mlp_b64" else "mnist_cnn"
        if kind == "tinygrad":
            tw = {k: Tensor(v).realize() for k, v in W.items()}
            fn = tiny(lambda xs: tinygrad_model(name, tw, xs), Tensor(x).realize())
        elif kind == "numpy":
            impl = models.numpy_models(np)[key]
            fn = lambda: impl(W, x)
        else:
            import torch

            torch.set_grad_enabled(False)
            tw = {k: torch.from_numpy(v) for k, v in W.items()}
            tx = torch.from_numpy(x)
            impl = models.torch_models(torch)[key]
            fn = lambda: impl(tw, tx)
    else:
        print("no %s version of %s" % (kind, name))
        return 2
    for _ in range(3 if kind == "tinygrad" else 1):  # TinyJit captures on its second call
        fn()
    times = []
    for _ in range(bench):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    print("bench: %d runs, min %.4f ms, median %.4f ms" % (bench, min(times), statistics.median(times)))
    return 0


def model_input(name, rng):
    import numpy as np

    if name == "embed32k":  # tgc's executables draw signed integer inputs from [-8, 8): half pick a row
        return rng.integers(-8, 8, EMBED_T).astype(np.int32)
    return rng.standard_normal((64, 784) if name == "mlp_b64" else (128, 1, 28, 28), dtype=np.float32)


def tinygrad_model(name, W, x):
    """The MLP and the beautiful_mnist CNN in tinygrad, as bench/run.py writes them for numpy and PyTorch."""
    if name == "embed32k":  # tinygrad.nn.Embedding's forward
        from tinygrad import Tensor

        return (Tensor.arange(EMBED_V) == x.unsqueeze(-1)).unsqueeze(-1).where(W["w"], 0).sum(-2)
    if name == "mlp_b64":
        h = (x @ W["fc1.weight"] + W["fc1.bias"]).relu()
        h = (h @ W["fc2.weight"] + W["fc2.bias"]).relu()
        return (h @ W["fc3.weight"] + W["fc3.bias"]).softmax(1)

    def bn(h, p):
        scale = W[p + ".weight"] * (W[p + ".running_var"] + 1e-5).rsqrt()
        shift = W[p + ".bias"] - W[p + ".running_mean"] * scale
        return h * scale.reshape(1, -1, 1, 1) + shift.reshape(1, -1, 1, 1)

    h = x.conv2d(W["l1.weight"], W["l1.bias"]).relu()
    h = bn(h.conv2d(W["l2.weight"], W["l2.bias"]).relu(), "bn1").max_pool2d(2)
    h = h.conv2d(W["l3.weight"], W["l3.bias"]).relu()
    h = bn(h.conv2d(W["l4.weight"], W["l4.bias"]).relu(), "bn2").max_pool2d(2)
    return h.flatten(1) @ W["fc.weight"].T + W["fc.bias"]


def rng_weights(name):
    """The weights tgc's executable embeds (its safetensors file), so both compute the same model."""
    out = os.environ["TGC_BENCH_OUT"]
    m = re.search(r'^weights "([^"]+)"', open(os.path.join(out, name + ".uop")).read(), re.M)
    return models.load_safetensors(os.path.join(out, m.group(1)))


# ----------------------------------------------------------------------------------------------------------------
# Probes: the machine's limits, measured in the same run

PEAK_C = r"""
#include <immintrin.h>
#include <stdio.h>
#include <time.h>
#ifdef __AVX512F__
typedef __m512 V; enum { L = 16 };
#define FMA(a, b, c) _mm512_fmadd_ps(a, b, c)
#define SET(x) _mm512_set1_ps(x)
#define SUM(v) _mm512_reduce_add_ps(v)
#else
typedef __m256 V; enum { L = 8 };
#define FMA(a, b, c) _mm256_fmadd_ps(a, b, c)
#define SET(x) _mm256_set1_ps(x)
static float SUM(__m256 v) { float f[8]; _mm256_storeu_ps(f, v); return f[0] + f[7]; }
#endif
int main(void) {
  V acc[12], m = SET(0.999999f), a = SET(1e-7f);
  for (int i = 0; i < 12; ++i) acc[i] = SET((float)i);
  long iters = 20000000;
  double best = 0;
  for (int rep = 0; rep < 7; ++rep) {
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    for (long it = 0; it < iters; ++it)
      for (int i = 0; i < 12; ++i) acc[i] = FMA(acc[i], m, a);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    double s = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
    double g = 2.0 * L * 12 * iters / s / 1e9;
    if (g > best) best = g;
  }
  float sink = 0;
  for (int i = 0; i < 12; ++i) sink += SUM(acc[i]);
  printf("%.1f %d %f\n", best, L, sink);
  return 0;
}
"""


def cpu_description():
    model, flags = "unknown", set()
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name") and model == "unknown":
                model = line.split(":", 1)[1].strip()
            if line.startswith("flags") and not flags:
                flags = set(line.split(":", 1)[1].split())
    except OSError:
        pass
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else "SSE"
    return "%s, %s, %d cpus" % (model, isa, os.cpu_count() or 0)


ISAS = {  # --isa: tgc's --mcpu, the probe's -march and the baselines' kernel choice
    "native": {"mcpu": None, "march": "native", "env": {}},
    "avx2": {"mcpu": "x86-64-v3", "march": "x86-64-v3",
             "env": {"OPENBLAS_CORETYPE": "Haswell", "ATEN_CPU_CAPABILITY": "avx2"}},
}


def peak_probe(march="native"):
    cc = shutil.which("clang-19") or shutil.which("clang") or shutil.which("cc")
    if not cc:
        return None
    with tempfile.TemporaryDirectory() as d:
        src, exe = os.path.join(d, "peak.c"), os.path.join(d, "peak")
        open(src, "w").write(PEAK_C)
        if subprocess.run([cc, "-O2", "-march=" + march, src, "-o", exe], capture_output=True).returncode != 0:
            return None
        r = subprocess.run([exe], capture_output=True, text=True)
        return float(r.stdout.split()[0]) if r.returncode == 0 else None


def bandwidth_probe(python, env):
    code = ("import numpy as np, time\n"
            "a = np.ones(64 * 1024 * 1024, np.float32); b = np.empty_like(a); np.copyto(b, a)\n"
            "best = min((lambda t: (np.copyto(b, a), time.perf_counter() - t)[1])(time.perf_counter()) "
            "for _ in range(9))\n"
            "print(2 * a.nbytes / best / 1e9)\n")
    r = subprocess.run([python, "-c", code], capture_output=True, text=True, env=env)
    return float(r.stdout.strip()) if r.returncode == 0 else None


# ----------------------------------------------------------------------------------------------------------------
# Driver


def setup(build):
    env_dir = os.path.join(build, "benchenv")
    subprocess.run([sys.executable, "-m", "venv", env_dir], check=True)
    pip = os.path.join(env_dir, "bin", "pip")
    subprocess.run([pip, "install", "-q", "numpy", "tinygrad"], check=True)
    # the CPU-only wheel; where download.pytorch.org is unreachable, PyPI's (which pulls its CUDA libraries, about
    # 3 GB, unused here)
    if subprocess.run([pip, "install", "-q", "torch", "--index-url", "https://download.pytorch.org/whl/cpu"]).returncode:
        if subprocess.run([pip, "install", "-q", "torch"]).returncode:
            print("torch: not installed; its columns will show n/a")
    print("made %s: pass --python %s" % (env_dir, os.path.join(env_dir, "bin", "python")))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default="build", help="tgc build directory (default build)")
    ap.add_argument("--python", default=sys.executable, help="Python with the baselines (numpy, torch, tinygrad)")
    ap.add_argument("--only", default=",".join(WORKLOADS), help="comma-separated workloads (default all)")
    ap.add_argument("--rounds", type=int, default=5, help="interleaved rounds (default 5)")
    ap.add_argument("--bench", type=int, default=5, help="timed calls per contender per round (default 5)")
    ap.add_argument("--reps", type=int, default=3, help="compile repetitions (default 3)")
    ap.add_argument("--threads", type=int, default=1, help="threads for every contender (default 1)")
    ap.add_argument("--tgc-flags", default="", help="extra flags for tgc compile, e.g. --tgc-flags=--fp-contract=fast")
    ap.add_argument("--baselines", default="numpy,torch,tinygrad", help="which baselines to run")
    ap.add_argument("--isa", choices=sorted(ISAS), default="native",
                    help="native (default) or avx2: code for AVX2 CPUs from every contender, on any newer host")
    ap.add_argument("--setup", action="store_true", help="make BUILD/benchenv with the baselines from PyPI and exit")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    ap.add_argument("--name", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        return worker(args.worker, args.name, args.bench)
    build = os.path.abspath(os.path.join(ROOT, args.build))
    if args.setup:
        return setup(build)
    tgc = os.path.join(build, "bin", "tgc")
    out = os.path.join(build, "bench-sizes")
    os.makedirs(out, exist_ok=True)
    env = models.baseline_env()
    for k in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "TGC_NUM_THREADS", "MKL_NUM_THREADS"):
        env[k] = str(args.threads)
    env["TGC_BENCH_OUT"] = out
    isa = ISAS[args.isa]
    env.update(isa["env"])
    names = [n for n in args.only.split(",") if n]
    for n in names:
        if n not in WORKLOADS:
            print("unknown workload '%s' (have %s)" % (n, ", ".join(WORKLOADS)))
            return 1

    print("cpu: %s%s" % (cpu_description(), "" if args.isa == "native" else "; code for %s (--isa)" % args.isa))
    peak = peak_probe(isa["march"])
    bw = bandwidth_probe(args.python, env)
    print("measured: fp32 FMA peak (1 core) %s GFLOPS, copy bandwidth %s GB/s" %
          ("%.1f" % peak if peak else "n/a", "%.1f" % bw if bw else "n/a (numpy missing)"))
    baselines = []
    for b in [b for b in args.baselines.split(",") if b]:
        mod = {"numpy": "numpy", "torch": "torch", "tinygrad": "tinygrad"}[b]
        if subprocess.run([args.python, "-c", "import numpy, " + mod], capture_output=True, env=env).returncode == 0:
            baselines.append(b)
        else:
            print("%s not importable by %s: skipped (bench/sizes.py --setup)" % (b, args.python))

    # compile
    exes, compile_ms, first_ms, schedule_ms = {}, {}, {}, {}
    flags = (args.tgc_flags.split() if args.tgc_flags else []) + (["--mcpu=" + isa["mcpu"]] if isa["mcpu"] else [])
    for n in names:
        text, _, _ = WORKLOADS[n]
        path = os.path.join(out, n + ".uop")
        open(path, "w").write(text())
        if "weights " in text():
            subprocess.run([tgc, "weights", path], check=True, capture_output=True)
        times = []
        for _ in range(args.reps):
            t0 = time.perf_counter()
            r = subprocess.run([tgc, "compile", path, "-o", os.path.join(out, n)] + flags, capture_output=True,
                               text=True)
            times.append((time.perf_counter() - t0) * 1e3)
            if r.returncode != 0:
                print("tgc compile %s failed: %s" % (n, r.stderr.strip()[-400:]))
                return 1
        compile_ms[n] = statistics.median(times)
        # the same model from nothing to its first result: tgc compile + the executable's first run, and tinygrad
        # from `import tinygrad` (scheduling, code generation, its C compiler, the run) in a fresh process, cold:
        # CCACHE=0 keeps it from reusing kernels it compiled in an earlier repetition (tgc keeps none either)
        if "tinygrad" in baselines:
            cold = dict(env, CCACHE="0")
            runs = [ms for ms in (tinygrad_ms(args.python, FIRST_RESULT, n, cold) for _ in range(args.reps)) if ms]
            if runs:
                # every run of the executable is a first run (it keeps nothing between processes): median of --reps
                exe = exes[n] if n in exes else os.path.join(out, n, n)
                firsts = []
                for _ in range(args.reps):
                    t0 = time.perf_counter()
                    subprocess.run([exe, "--threads", str(args.threads)], capture_output=True, env=env)
                    firsts.append((time.perf_counter() - t0) * 1e3)
                first_ms[n] = (compile_ms[n] + statistics.median(firsts), statistics.median(runs))
            # the passes alone: tgc's from parsing to linearized kernels, tinygrad's scheduling and rendering
            tiny = [ms for ms in (tinygrad_ms(args.python, SCHEDULE_ONLY, n, env) for _ in range(args.reps)) if ms]
            ours = [tgc_pass_ms(tgc, path, os.path.join(out, n + "-passes"), flags) for _ in range(args.reps)]
            ours = [ms for ms in ours if ms is not None]
            if tiny and ours:
                schedule_ms[n] = (statistics.median(ours), statistics.median(tiny))
        exes[n] = os.path.join(out, n, n)

    # run, interleaved
    contenders = ["tgc"] + baselines
    results = {(n, c): [] for n in names for c in contenders}
    for rnd in range(args.rounds):
        order = contenders[rnd % len(contenders):] + contenders[: rnd % len(contenders)]
        for n in names:
            for c in order:
                if c == "tgc":
                    cmd = [exes[n], "--bench", str(args.bench), "--threads", str(args.threads)]
                else:
                    cmd = [args.python, os.path.abspath(__file__), "--worker", c, "--name", n, "--bench",
                           str(args.bench)]
                try:
                    results[(n, c)].append(run_bench(cmd, env))
                except RuntimeError as e:
                    if rnd == 0:
                        print("%s on %s: %s" % (c, n, str(e).splitlines()[-1][:200]))
        print("round %d/%d done" % (rnd + 1, args.rounds), file=sys.stderr)

    med = {k: statistics.median(v) if v else None for k, v in results.items()}
    head = "%-10s %10s %9s %8s" % ("workload", "tgc ms", "compile", "tgc rate")
    for b in baselines:
        head += " %10s %8s" % (b + " ms", "ratio")
    print(head)
    for n in names:
        t = med[(n, "tgc")]
        _, flops, nbytes = WORKLOADS[n]
        rate = "n/a"
        if t and flops:
            rate = "%.1f GF" % (flops / t / 1e6)
            if peak:
                rate += " (%.0f%%)" % (100 * flops / t / 1e6 / peak)
        elif t and nbytes:
            rate = "%.1f GB/s" % (nbytes / t / 1e6)
        line = "%-10s %10s %8.0fms %8s" % (n, "%.3f" % t if t else "n/a", compile_ms[n], rate)
        for b in baselines:
            v = med[(n, b)]
            line += " %10s %8s" % ("%.3f" % v if v else "n/a", "%.2fx" % (v / t) if v and t else "n/a")
        print(line)
    print("ratios: baseline / tgc, > 1 means tgc is faster; medians of %d interleaved rounds of %d calls, %d thread(s)"
          % (args.rounds, args.bench, args.threads))
    if first_ms:
        print("time to first result (tgc: compile + first run of the executable; tinygrad: from import, fresh process,"
              " CCACHE=0):")
        for n, (tgc_ms, tiny_ms) in first_ms.items():
            print("  %-10s tgc %8.0f ms   tinygrad %8.0f ms   %.1fx" % (n, tgc_ms, tiny_ms, tiny_ms / tgc_ms))
    if schedule_ms:
        print("passes alone (tgc: parse to linearized kernels, --time-passes; tinygrad: realize() on its NULL device):")
        for n, (tgc_ms, tiny_ms) in schedule_ms.items():
            print("  %-10s tgc %8.1f ms   tinygrad %8.1f ms   %.1fx" % (n, tgc_ms, tiny_ms, tiny_ms / tgc_ms))
    return 0


if __name__ == "__main__":
    sys.exit(main())
