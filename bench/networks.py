#!/usr/bin/env python3
"""tgc against onnxruntime on whole networks: compile time, agreement, run time at 1 thread and at all cores.

The networks are ONNX files with random weights (fixed seeds), written node by node in the patterns
torch.onnx.export emits at opset 17 (eval mode: no Dropout), on torchvision's and Hugging Face's layer shapes:

  resnet18, mobilenetv2, vit   test/onnx/networks.py's (imported from there, with its Builder and helpers)
  googlenet      224x224; inception blocks of four branches (1x1; 1x1-3x3; 1x1-3x3, as torchvision has it; 3x3
                 max pool-1x1) meeting at Concat, max pools with ceil_mode, BatchNorm eps 1e-3; no aux heads
  efficientnet_b0  224x224; MBConv blocks (1x1 expand, depthwise 3x3/5x5, squeeze-excitation as GlobalAveragePool,
                 1x1 convs with bias, Sigmoid and Mul; 1x1 project), SiLU written as x * Sigmoid(x)
  shufflenetv2   x0.5, batch 2; channel split as Split (torch's chunk), channel shuffle as Reshape, Transpose, Reshape
  densenet121    224x224; dense blocks whose layers Concat every earlier output, BN-ReLU-Conv, transitions with
                 AveragePool
  bert           BERT-base shapes (sequence 128, hidden 768, 12 heads, feed-forward 3072) with 4 encoder layers
                 instead of 12 (keeps the file near 110 MB); the input is the summed token embeddings [1, 128, 768]
                 (no Gather of token ids), position embeddings added, LayerNormalization (eps 1e-12), erf GELU;
                 the output ("logits") is the last hidden state
  gpt2           GPT-2-small shapes (sequence 128, hidden 768, 12 heads) with 4 decoder blocks instead of 12 and no
                 vocabulary projection; Conv1D as Reshape-Gemm-Reshape, q/k/v by Split, the causal mask added as a
                 constant, tanh GELU in the node pattern torch exports for gelu(approximate='tanh'); the output is
                 the final LayerNormalization's

For each network: `tgc compile` (timed), one run of the executable compared with onnxruntime on the same input
(rtol 1e-3, atol 1e-4), then, for each thread count T, --rounds rounds that alternate which contender runs first:
onnxruntime (CPUExecutionProvider, all graph optimizations, intra_op_num_threads = T; median of --bench runs after
3 warm-ups) and the executable (`EXE --input=input=X.npy --threads T --bench N`, its median). The table shows the
median of the per-round medians and ort / tgc (> 1: tgc is faster) as the median of the per-round ratios: the two
contenders of a round run seconds apart, while a shared VM's speed changes over minutes, so a slow phase that
catches one round moves both of its times and not their ratio. Then the geometric mean of the ratios per T.

Roofline: one more run of each executable on one thread with TGC_DEBUG=2 gives every kernel's time, GFLOPS and
GB/s (from tgc's estimate of each kernel's work), medians of --profile-runs runs. With one core's fp32 FMA peak and
copy bandwidth measured in the same run (bench/sizes.py's probes), a call's fraction of its roofline is
max(GFLOPS / peak, GB/s / bandwidth). tgc counts every load and store, cache hits included, so the memory side
comes out high; the share of time in calls below 50% of their roofline is therefore given two ways that bracket it:
with those byte counts (a lower bound) and against the FLOP peak alone (an upper bound: memory-bound calls count as
slow). The five kernels with the most time follow (calls of one kernel name together).

  build/pyenv/bin/python bench/networks.py [--models a,b] [--threads 1,4] [--rounds R] [--bench N] [--no-check]
"""

import argparse
import datetime
import math
import os
import re
import shlex
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

try:
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import helper
except ImportError as e:
    print(f"bench/networks.py: skipped ({e.name} is not installed; run it with build/pyenv/bin/python, which "
          "test/onnx/setup_venv.sh makes)")
    sys.exit(0)

sys.path.insert(0, os.path.join(ROOT, "test", "onnx"))
import networks as onnx_networks  # test/onnx/networks.py (this script runs as __main__, so the name is free)
from networks import Builder, classifier, conv_bn

import sizes  # bench/sizes.py: the CPU description and the peak and bandwidth probes
from run import BENCH_RE

# ----------------------------------------------------------------------------------------------------------------
# Networks


def set_epsilon(b, eps):
    """The epsilon of the last BatchNormalization node built (conv_bn writes torch's default, 1e-5)."""
    node = next(n for n in reversed(b.nodes) if n.op_type == "BatchNormalization")
    del node.attribute[:]
    node.attribute.extend([helper.make_attribute("epsilon", eps)])


def batchnorm(b, x, c):
    return b.op("BatchNormalization", [x, b.param("bn.weight", (c,), value=b.rng.uniform(0.5, 1.5, c)),
                                       b.param("bn.bias", (c,), 0.1), b.param("bn.mean", (c,), 0.1),
                                       b.param("bn.var", (c,), value=b.rng.uniform(0.5, 1.5, c))], epsilon=1e-5)


def conv(b, x, cin, cout, k, stride=1, bias=False):
    inputs = [x, b.param("conv.weight", (cout, cin, k, k))] + ([b.param("conv.bias", (cout,), 0.02)] if bias else [])
    return b.op("Conv", inputs, dilations=[1, 1], group=1, kernel_shape=[k, k], pads=[k // 2] * 4,
                strides=[stride, stride])


def max_pool(b, x, k, stride, pad=0, ceil=0):
    return b.op("MaxPool", [x], ceil_mode=ceil, kernel_shape=[k, k], pads=[pad] * 4, strides=[stride, stride])


def silu(b, x):
    return b.op("Mul", [x, b.op("Sigmoid", [x])])


def googlenet():
    b = Builder(22)

    def basic(x, cin, cout, k, stride=1):  # torchvision's BasicConv2d: Conv (no bias), BatchNorm eps 1e-3, ReLU
        y = conv_bn(b, x, cin, cout, k, stride)
        set_epsilon(b, 1e-3)
        return y

    def inception(x, cin, c1, c3r, c3, c5r, c5, pool):
        b1 = basic(x, cin, c1, 1)
        b2 = basic(basic(x, cin, c3r, 1), c3r, c3, 3)
        b3 = basic(basic(x, cin, c5r, 1), c5r, c5, 3)  # 3x3, not 5x5, as in torchvision
        b4 = basic(max_pool(b, x, 3, 1, pad=1, ceil=1), cin, pool, 1)
        return b.op("Concat", [b1, b2, b3, b4], axis=1), c1 + c3 + c5 + pool

    x = basic("input", 3, 64, 7, 2)
    x = max_pool(b, x, 3, 2, ceil=1)
    x = basic(basic(x, 64, 64, 1), 64, 192, 3)
    x = max_pool(b, x, 3, 2, ceil=1)
    c = 192
    for cfg in [(64, 96, 128, 16, 32, 32), (128, 128, 192, 32, 96, 64), "pool", (192, 96, 208, 16, 48, 64),
                (160, 112, 224, 24, 64, 64), (128, 128, 256, 24, 64, 64), (112, 144, 288, 32, 64, 64),
                (256, 160, 320, 32, 128, 128), "pool2", (256, 160, 320, 32, 128, 128), (384, 192, 384, 48, 128, 128)]:
        if cfg == "pool":
            x = max_pool(b, x, 3, 2, ceil=1)
        elif cfg == "pool2":
            x = max_pool(b, x, 2, 2, ceil=1)
        else:
            x, c = inception(x, c, *cfg)
    return b.model([1, 3, 224, 224], classifier(b, x, c, 1000))


def efficientnet_b0():
    b = Builder(30)

    def conv_bn_silu(x, cin, cout, k, stride=1, groups=1):
        return silu(b, conv_bn(b, x, cin, cout, k, stride, groups=groups, act=None))

    x = conv_bn_silu("input", 3, 32, 3, 2)
    cin = 32
    # expand ratio, kernel, stride, output channels, layers (torchvision's B0 setting)
    for t, k, s, c, n in [(1, 3, 1, 16, 1), (6, 3, 2, 24, 2), (6, 5, 2, 40, 2), (6, 3, 2, 80, 3), (6, 5, 1, 112, 3),
                          (6, 5, 2, 192, 4), (6, 3, 1, 320, 1)]:
        for i in range(n):
            stride, hidden, squeeze = (s if i == 0 else 1), cin * t, max(1, cin // 4)
            y = conv_bn_silu(x, cin, hidden, 1) if t != 1 else x
            y = conv_bn_silu(y, hidden, hidden, k, stride, groups=hidden)
            se = silu(b, conv(b, b.op("GlobalAveragePool", [y]), hidden, squeeze, 1, bias=True))
            se = b.op("Sigmoid", [conv(b, se, squeeze, hidden, 1, bias=True)])
            y = conv_bn(b, b.op("Mul", [se, y]), hidden, c, 1, act=None)
            x = b.op("Add", [y, x]) if stride == 1 and cin == c else y
            cin = c
    x = conv_bn_silu(x, cin, 1280, 1)
    return b.model([1, 3, 224, 224], classifier(b, x, 1280, 1000))


def shufflenetv2(batch=2):
    b = Builder(5)

    def unit(x, cin, cout, stride, hw):
        half = cout // 2
        if stride == 1:
            x1, x2 = b.op("Split", [x, b.const([cin // 2, cin // 2])], n_out=2, axis=1)
        else:
            x1 = conv_bn(b, conv_bn(b, x, cin, cin, 3, stride, groups=cin, act=None), cin, half, 1)
            x2 = x
        y = conv_bn(b, x2, cin if stride > 1 else half, half, 1)
        y = conv_bn(b, conv_bn(b, y, half, half, 3, stride, groups=half, act=None), half, half, 1)
        out = b.op("Concat", [x1, y], axis=1)
        # channel shuffle, 2 groups: view(b, 2, c/2, h, w), transpose(1, 2), view(b, -1, h, w)
        out = b.op("Reshape", [out, b.const([batch, 2, half, hw, hw])])
        out = b.op("Transpose", [out], perm=[0, 2, 1, 3, 4])
        return b.op("Reshape", [out, b.const([batch, -1, hw, hw])])

    x = max_pool(b, conv_bn(b, "input", 3, 24, 3, 2), 3, 2, pad=1)
    cin, hw = 24, 56
    for repeats, cout in [(4, 48), (8, 96), (4, 192)]:
        hw //= 2
        for i in range(repeats):
            x = unit(x, cin, cout, 2 if i == 0 else 1, hw)
            cin = cout
    x = b.op("ReduceMean", [conv_bn(b, x, cin, 1024, 1)], axes=[2, 3], keepdims=0)
    x = b.op("Gemm", [x, b.param("fc.weight", (1000, 1024)), b.param("fc.bias", (1000,), 0.01)], transB=1)
    return b.model([batch, 3, 224, 224], x)


def densenet121(growth=32, bn_size=4):
    b = Builder(121)
    x = max_pool(b, conv_bn(b, "input", 3, 64, 7, 2), 3, 2, pad=1)
    c = 64
    for block, layers in enumerate([6, 12, 24, 16]):
        features = [x]
        for _ in range(layers):
            y = b.op("Concat", features, axis=1) if len(features) > 1 else x
            cin = c + growth * (len(features) - 1)
            y = conv(b, b.op("Relu", [batchnorm(b, y, cin)]), cin, bn_size * growth, 1)
            y = conv(b, b.op("Relu", [batchnorm(b, y, bn_size * growth)]), bn_size * growth, growth, 3)
            features.append(y)
        x, c = b.op("Concat", features, axis=1), c + growth * layers
        if block < 3:  # transition
            x = conv(b, b.op("Relu", [batchnorm(b, x, c)]), c, c // 2, 1)
            x = b.op("AveragePool", [x], ceil_mode=0, count_include_pad=1, kernel_shape=[2, 2], pads=[0] * 4,
                     strides=[2, 2])
            c //= 2
    x = b.op("Relu", [batchnorm(b, x, c)])
    return b.model([1, 3, 224, 224], classifier(b, x, c, 1000))


def layer_norm(b, x, dim, eps):
    return b.op("LayerNormalization", [x, b.param("ln.weight", (dim,), value=b.rng.uniform(0.8, 1.2, dim)),
                                       b.param("ln.bias", (dim,), 0.02)], axis=-1, epsilon=eps)


def linear(b, x, fin, fout):  # nn.Linear on a 3-D input: MatMul with the transposed weight, then Add
    return b.op("Add", [b.op("MatMul", [x, b.param("linear.weight", (fin, fout))]), b.param("linear.bias", (fout,),
                                                                                             0.02)])


def heads_first(b, x, seq, heads, hd, perm=(0, 2, 1, 3)):
    return b.op("Transpose", [b.op("Reshape", [x, b.const([1, seq, heads, hd])])], perm=list(perm))


def merge_heads(b, x, seq, dim):
    return b.op("Reshape", [b.op("Transpose", [x], perm=[0, 2, 1, 3]), b.const([1, seq, dim])])


def bert(seq=128, dim=768, heads=12, layers=4, ffn=3072):
    b = Builder(12)
    hd = dim // heads
    x = layer_norm(b, b.op("Add", ["input", b.param("position_embeddings", (1, seq, dim), 0.02)]), dim, 1e-12)
    for _ in range(layers):
        q = heads_first(b, linear(b, x, dim, dim), seq, heads, hd)
        k = heads_first(b, linear(b, x, dim, dim), seq, heads, hd, perm=(0, 2, 3, 1))  # permute + transpose(-1, -2)
        v = heads_first(b, linear(b, x, dim, dim), seq, heads, hd)
        att = b.op("Div", [b.op("MatMul", [q, k]), b.const(math.sqrt(hd), np.float32)])
        o = merge_heads(b, b.op("MatMul", [b.op("Softmax", [att], axis=-1), v]), seq, dim)
        x = layer_norm(b, b.op("Add", [linear(b, o, dim, dim), x]), dim, 1e-12)
        h = linear(b, x, dim, ffn)  # GELU, erf form: x * 0.5 * (1 + erf(x / sqrt(2)))
        erf = b.op("Erf", [b.op("Div", [h, b.const(math.sqrt(2), np.float32)])])
        h = b.op("Mul", [b.op("Mul", [h, b.const(0.5, np.float32)]), b.op("Add", [erf, b.const(1.0, np.float32)])])
        x = layer_norm(b, b.op("Add", [linear(b, h, ffn, dim), x]), dim, 1e-12)
    return b.model([1, seq, dim], x)


def gpt2(seq=128, dim=768, heads=12, layers=4):
    b = Builder(124)
    hd = dim // heads

    def conv1d(x, fin, fout):  # Hugging Face's Conv1D: addmm(bias, x.view(-1, fin), weight).view(1, seq, fout)
        y = b.op("Gemm", [b.op("Reshape", [x, b.const([-1, fin])]), b.param("conv1d.weight", (fin, fout)),
                          b.param("conv1d.bias", (fout,), 0.02)], alpha=1.0, beta=1.0)
        return b.op("Reshape", [y, b.const([1, seq, fout])])

    def gelu_tanh(x):  # torch's export of gelu(approximate='tanh') at opset < 20
        cube = b.op("Mul", [x, b.op("Mul", [x, x])])
        inner = b.op("Add", [x, b.op("Mul", [b.const(0.044715, np.float32), cube])])
        t = b.op("Tanh", [b.op("Mul", [b.const(math.sqrt(2 / math.pi), np.float32), inner])])
        return b.op("Mul", [b.const(0.5, np.float32), b.op("Mul", [x, b.op("Add", [b.const(1.0, np.float32), t])])])

    mask = np.triu(np.full((seq, seq), -1e4, np.float32), 1).reshape(1, 1, seq, seq)
    causal = b.param("causal_mask", mask.shape, value=mask)
    x = b.op("Add", ["input", b.param("wpe", (1, seq, dim), 0.01)])
    for _ in range(layers):
        qkv = b.op("Split", [conv1d(layer_norm(b, x, dim, 1e-5), dim, 3 * dim), b.const([dim] * 3)], n_out=3, axis=2)
        q, v = heads_first(b, qkv[0], seq, heads, hd), heads_first(b, qkv[2], seq, heads, hd)
        k = heads_first(b, qkv[1], seq, heads, hd, perm=(0, 2, 3, 1))
        att = b.op("Div", [b.op("MatMul", [q, k]), b.const(float(hd)**0.5, np.float32)])
        att = b.op("Softmax", [b.op("Add", [att, causal])], axis=-1)
        o = merge_heads(b, b.op("MatMul", [att, v]), seq, dim)
        x = b.op("Add", [conv1d(o, dim, dim), x])
        h = conv1d(gelu_tanh(conv1d(layer_norm(b, x, dim, 1e-5), dim, 4 * dim)), 4 * dim, dim)
        x = b.op("Add", [h, x])
    return b.model([1, seq, dim], layer_norm(b, x, dim, 1e-5))


MODELS = {
    "resnet18": onnx_networks.resnet18,
    "mobilenetv2": onnx_networks.mobilenetv2,
    "vit": onnx_networks.vit,
    "googlenet": googlenet,
    "efficientnet_b0": efficientnet_b0,
    "shufflenetv2": shufflenetv2,
    "densenet121": densenet121,
    "bert": bert,
    "gpt2": gpt2,
}

# ----------------------------------------------------------------------------------------------------------------
# Measuring

DEBUG_RE = re.compile(r"^tgc: (\S+)\s+([0-9.]+) us\s+([0-9.eE+-]+|inf|nan) GFLOPS\s+([0-9.eE+-]+|inf|nan) GB/s")
PEAK_RE = re.compile(r"peak of one core \((.*)\): ([0-9.]+) GFLOPS \(f32 FMA\), ([0-9.]+) GB/s")
KERNELS_RE = re.compile(r"^tgc: .*: (\d+) kernels, (\d+) threads")


def ort_session(path, threads):
    opts = ort.SessionOptions()
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])


def ort_ms(sess, x, n):
    for _ in range(3):
        sess.run(None, {"input": x})
    times = []
    for _ in range(n):
        t = time.perf_counter()
        sess.run(None, {"input": x})
        times.append(time.perf_counter() - t)
    return statistics.median(times) * 1e3


def tgc_ms(exe, x_path, threads, n):
    cmd = [exe, f"--input=input={x_path}", "--threads", str(threads), "--bench", str(n)]
    r = subprocess.run(cmd, capture_output=True, text=True)
    m = BENCH_RE.search(r.stdout)
    if r.returncode != 0 or not m:
        raise RuntimeError(f"{' '.join(cmd)} failed (rc {r.returncode}): {(r.stdout + r.stderr).strip()[-600:]}")
    return float(m.group(3))


def kernel_profile(exe, x_path, runs):
    """Per-kernel times of one thread from TGC_DEBUG=2: [(name, us, GFLOPS, GB/s)] per call, medians over `runs`
    runs after the first (which also runs the calls that depend on the weights alone), and the runtime's peaks."""
    env = dict(os.environ, TGC_DEBUG="2")
    cmd = [exe, f"--input=input={x_path}", "--threads", "1", "--bench", str(runs)]
    r = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if r.returncode != 0:
        raise RuntimeError(f"TGC_DEBUG=2 {' '.join(cmd)} failed (rc {r.returncode}): {r.stderr.strip()[-600:]}")
    lines, calls, peak = [], None, None
    for line in r.stderr.splitlines():
        if m := DEBUG_RE.match(line):
            lines.append((m.group(1), float(m.group(2)), float(m.group(3)), float(m.group(4))))
        elif m := KERNELS_RE.match(line):
            calls = int(m.group(1))
        elif m := PEAK_RE.search(line):
            peak = (float(m.group(2)), float(m.group(3)))
    steady = lines[calls:] if calls is not None else []
    if not steady or len(steady) % runs:
        raise RuntimeError(f"cannot split TGC_DEBUG=2's {len(lines)} kernel lines into runs ({calls} kernels)")
    per = len(steady) // runs
    profile = []
    for i in range(per):
        samples = [steady[r * per + i] for r in range(runs)]
        us = statistics.median(s[1] for s in samples)
        # the work is fixed: rescale the rates of the median time from any sample's work
        name, t0, gf, gb = samples[0]
        profile.append((name, us, gf * t0 / us if us else 0.0, gb * t0 / us if us else 0.0))
    return profile, peak


def roofline(profile, peak_gflops, peak_gbps):
    """The share of kernel time in calls below half of their roofline, counted two ways that bracket it: with tgc's
    byte estimate (every load and store, cache hits included, so memory-side fractions come out high: a lower
    bound), and against the FLOP peak alone (memory-bound kernels count as slow: an upper bound). Then the kernels
    by time, calls of one kernel name together: (name, calls, us, GFLOPS, GB/s, fraction of roofline)."""
    total = sum(p[1] for p in profile) or 1.0

    def frac(gf, gb):
        return max(gf / peak_gflops, gb / peak_gbps)

    below = sum(us for _, us, gf, gb in profile if frac(gf, gb) < 0.5) / total
    below_flops = sum(us for _, us, gf, _ in profile if gf / peak_gflops < 0.5) / total
    groups = {}
    for name, us, gf, gb in profile:
        g = groups.setdefault(name, [0, 0.0, 0.0, 0.0])
        g[0], g[1], g[2], g[3] = g[0] + 1, g[1] + us, g[2] + gf * us, g[3] + gb * us  # us * G/s: work
    rows = [(name, n, us, fl / us if us else 0.0, by / us if us else 0.0,
             frac(fl / us, by / us) if us else 0.0) for name, (n, us, fl, by) in groups.items()]
    return sorted(rows, key=lambda r: -r[2]), below, below_flops, total


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else None


# ----------------------------------------------------------------------------------------------------------------
# Driver


def run_network(name, args, threads):
    work = args.work
    res = {"name": name, "compile_s": None, "check": "not checked", "err": None, "times": {}, "error": None}
    model = MODELS[name]()
    path = os.path.join(work, name + ".onnx")
    onnx.save(model, path)
    res["mb"] = os.path.getsize(path) / 1e6
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    res["shape"] = shape
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    x_path = os.path.join(work, name + "_input.npy")
    np.save(x_path, x)

    cmd = [args.tgc, "compile", path, "-o", os.path.join(work, name)]
    t0 = time.perf_counter()
    r = subprocess.run(cmd, capture_output=True, text=True)
    res["compile_s"] = time.perf_counter() - t0
    if r.returncode != 0:
        res["error"] = f"`{' '.join(cmd)}` failed (rc {r.returncode}): {(r.stdout + r.stderr).strip()[-800:]}"
        print(f"{name}: {res['error']}", flush=True)
        return res
    exe = os.path.join(work, name, name)

    if not args.no_check:
        want = ort_session(path, threads[0]).run(None, {"input": x})[0]
        out = os.path.join(work, name + "_out")
        cmd = [exe, f"--input=input={x_path}", "--output-dir", out, "--threads", str(threads[0])]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            res["error"] = f"`{' '.join(cmd)}` failed (rc {r.returncode}): {(r.stdout + r.stderr).strip()[-800:]}"
            print(f"{name}: {res['error']}", flush=True)
            return res
        got = np.load(os.path.join(out, "logits.npy"))
        same_shape = got.shape == want.shape
        res["err"] = float(np.max(np.abs(got - want))) if same_shape else float("nan")
        ok = same_shape and bool(np.allclose(got, want, rtol=1e-3, atol=1e-4))
        res["check"] = ("matches" if ok else "DIFFERS" if same_shape else
                        f"SHAPE {list(got.shape)} != {list(want.shape)}")
    print(f"{name}: input {shape}, {res['mb']:.1f} MB, tgc compile {res['compile_s']:.1f} s, {res['check']}"
          + (f" (max abs error {res['err']:.2e})" if res["err"] is not None else ""), flush=True)

    for t in threads:
        # one session at a time: the idle workers of a session with more threads slowed the executable's one-thread
        # runs (MobileNetV2 14.7 ms with a two-thread session alive, 9.9 ms without)
        session = ort_session(path, t)
        ort_runs, tgc_runs = [], []
        for rnd in range(args.rounds):
            order = ["ort", "tgc"] if rnd % 2 == 0 else ["tgc", "ort"]
            for who in order:
                try:
                    if who == "ort":
                        ort_runs.append(ort_ms(session, x, args.bench))
                    else:
                        tgc_runs.append(tgc_ms(exe, x_path, t, args.bench))
                except RuntimeError as e:
                    res["error"] = str(e)
                    print(f"{name}: {e}", flush=True)
                    return res
                time.sleep(0.05)  # let the other contender's workers stop polling
        o, g = statistics.median(ort_runs), statistics.median(tgc_runs)
        ratio = statistics.median(a / b for a, b in zip(ort_runs, tgc_runs))
        res["times"][t] = (o, g, ratio)
        print(f"{name}: {t} thread{'s' if t > 1 else ''}: onnxruntime {o:.3f} ms, tgc {g:.3f} ms, "
              f"ort/tgc {ratio:.2f}x (per round: " + ", ".join(f"{a / b:.2f}" for a, b in zip(ort_runs, tgc_runs))
              + ")", flush=True)
        del session

    if args.profile_runs:
        try:
            res["profile"] = kernel_profile(exe, x_path, args.profile_runs)
        except RuntimeError as e:
            print(f"{name}: {e}", flush=True)
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tgc", default=os.path.join(ROOT, "build", "bin", "tgc"), help="tgc (default build/bin/tgc)")
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "bench-networks"),
                    help="models, executables and inputs (default build/bench-networks)")
    ap.add_argument("--models", default=",".join(MODELS), help="comma-separated subset of " + ",".join(MODELS))
    ap.add_argument("--threads", default=None, help="comma-separated thread counts (default 1 and all cores)")
    ap.add_argument("--rounds", type=int, default=3, help="alternating timing rounds (default 3)")
    ap.add_argument("--bench", type=int, default=20, help="timed runs per contender per round (default 20)")
    ap.add_argument("--profile-runs", type=int, default=5,
                    help="runs of the TGC_DEBUG=2 kernel profile (default 5; 0 skips the roofline)")
    ap.add_argument("--no-check", action="store_true", help="skip the comparison with onnxruntime's output")
    args = ap.parse_args()
    args.tgc, args.work = os.path.abspath(args.tgc), os.path.abspath(args.work)
    cores = os.cpu_count() or 1
    threads = [int(t) for t in args.threads.split(",")] if args.threads else sorted({1, cores})
    models = [m for m in args.models.split(",") if m]
    unknown = [m for m in models if m not in MODELS]
    if unknown:
        sys.exit(f"unknown model(s) {','.join(unknown)} (have {','.join(MODELS)})")
    if not os.access(args.tgc, os.X_OK):
        sys.exit(f"tgc not found at {args.tgc} (build it, or pass --tgc)")
    os.makedirs(args.work, exist_ok=True)

    print("# tgc vs onnxruntime: networks")
    print(f"date: {datetime.datetime.now().strftime('%Y-%m-%d %H:%M')}")
    print(f"cpu: {sizes.cpu_description()}")
    python = os.path.relpath(sys.executable, ROOT) if sys.executable.startswith(ROOT + os.sep) else sys.executable
    print(f"command: {shlex.join([python] + sys.argv)}")
    print(f"onnxruntime {ort.__version__} (CPUExecutionProvider), onnx {onnx.__version__}, numpy {np.__version__}; "
          f"threads {','.join(map(str, threads))}; {args.rounds} rounds x {args.bench} runs")
    load = os.getloadavg()[0]
    if load > 0.5:
        print(f"warning: 1-minute load average {load:.2f} before starting; other processes will add noise")
    peak_gflops = sizes.peak_probe() if args.profile_runs else None
    peak_gbps = sizes.bandwidth_probe(sys.executable, dict(os.environ)) if args.profile_runs else None
    if args.profile_runs:
        print("measured: fp32 FMA peak (1 core) %s GFLOPS, copy bandwidth (1 core) %s GB/s" %
              ("%.1f" % peak_gflops if peak_gflops else "n/a", "%.1f" % peak_gbps if peak_gbps else "n/a"))
    print(flush=True)

    results = [run_network(m, args, threads) for m in models]

    print()
    head = ["network", "input", "compile", "check (max abs error)"]
    for t in threads:
        head += [f"ort {t}T", f"tgc {t}T", f"ort/tgc {t}T"]
    print("| " + " | ".join(head) + " |")
    print("|" + "---|" * len(head))
    ratios = {t: [] for t in threads}
    for res in results:
        check = res["check"] + (f" ({res['err']:.1e})" if res["err"] is not None else "")
        row = [res["name"], "x".join(map(str, res.get("shape", []))),
               f"{res['compile_s']:.1f} s" if res["compile_s"] is not None else "n/a",
               "FAILED" if res["error"] and not res["times"] else check]
        for t in threads:
            if t in res["times"]:
                o, g, ratio = res["times"][t]
                ratios[t].append(ratio)
                row += [f"{o:.2f} ms", f"{g:.2f} ms", f"{ratio:.2f}x"]
            else:
                row += ["n/a"] * 3
        print("| " + " | ".join(row) + " |")
    print()
    for t in threads:
        gm = geomean(ratios[t])
        print(f"geometric mean of ort/tgc at {t} thread{'s' if t > 1 else ''}: "
              + (f"{gm:.2f}x over {len(ratios[t])} networks" if gm else "n/a"))
    for res in results:
        if res["error"]:
            print(f"failure: {res['name']}: {res['error']}")

    profiled = [r for r in results if r.get("profile")]
    if profiled:
        print(f"\n## Roofline, 1 thread (TGC_DEBUG=2, medians of {args.profile_runs} runs; one core's peaks)")
        for res in profiled:
            profile, rt_peak = res["profile"]
            pf = peak_gflops or (rt_peak[0] if rt_peak else None)
            pb = peak_gbps or (rt_peak[1] if rt_peak else None)
            if not pf or not pb:
                print(f"{res['name']}: no peak measurement")
                continue
            rows, below, below_flops, total = roofline(profile, pf, pb)
            ms = res["times"].get(1, (None, None))[1]
            print(f"\n{res['name']}: {len(profile)} calls, {total / 1e3:.2f} ms in kernels"
                  + (f" (tgc's 1-thread median {ms:.2f} ms)" if ms else "")
                  + f"; time in calls below 50% of their roofline: {100 * below:.0f}% with tgc's byte counts (cache "
                  f"hits included), {100 * below_flops:.0f}% against the FLOP peak alone")
            print("| kernel (calls) | time | share | GFLOPS | of FLOP peak | GB/s | of bandwidth |")
            print("|---|---|---|---|---|---|---|")
            for name, n, us, gf, gb, _ in rows[:5]:
                print(f"| {name} ({n}) | {us / 1e3:.3f} ms | {100 * us / total:.1f}% | {gf:.1f} | "
                      f"{100 * gf / pf:.0f}% | {gb:.1f} | {100 * gb / pb:.0f}% |")
    return 1 if any(r["error"] or r["check"] not in ("matches", "not checked") for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
