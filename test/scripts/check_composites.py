#!/usr/bin/env python3
"""Every composite op, computed by tgc's interpreter, agrees with values computed independently here.

For each case: a .uop program with one composite op, inputs made here, and a reference written in plain Python
(the math module: no numpy needed). tgc evaluates the program three ways: the composite directly
(`tgc run --interp`), after `decompose`, and after the whole `lower-tensors` pipeline (as kernels). All three must
match the reference within float32 tolerance.
With --target opencl, each program also runs compiled for that target (tgc run --target opencl: the GPU pipeline,
executed by an OpenCL device such as PoCL), a fourth way.
Usage: check_composites.py TGC TGC_OPT WORKDIR [--target opencl]
"""
import math
import os
import random
import struct
import subprocess
import sys

# ---- tiny tensors: (flat list, shape) ------------------------------------------------------------------------------


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def strides(shape):
    s = [1] * len(shape)
    for i in range(len(shape) - 2, -1, -1):
        s[i] = s[i + 1] * shape[i + 1]
    return s


def unravel(i, shape):
    idx = []
    for d in reversed(shape):
        idx.append(i % d)
        i //= d
    return list(reversed(idx))


def f32(v):
    return struct.unpack("<f", struct.pack("<f", v))[0] if math.isfinite(v) else v


# ---- .npy ----------------------------------------------------------------------------------------------------------

DESCR = {"f32": ("<f4", "f"), "i32": ("<i4", "i")}


def write_npy(path, values, shape, dtype):
    descr, fmt = DESCR[dtype]
    shape_txt = "(" + "".join(f"{d}, " for d in shape).rstrip(" ") + ")" if len(shape) != 1 else f"({shape[0]},)"
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_txt)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<" + fmt * len(values), *values))


def read_npy(path):
    data = open(path, "rb").read()
    hlen = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + hlen].decode()
    fmt = "f" if "<f4" in header else "i"
    body = data[10 + hlen:]
    return list(struct.unpack("<" + fmt * (len(body) // 4), body))


# ---- references ----------------------------------------------------------------------------------------------------


def ref_matmul(a, b, sa, sb):
    m, k, n = sa[-2], sa[-1], sb[-1]
    batch = sa[:-2]
    out = []
    for bi in range(numel(batch)):
        for i in range(m):
            for j in range(n):
                out.append(sum(a[bi * m * k + i * k + q] * b[(bi if len(sb) > 2 else 0) * k * n + q * n + j]
                               for q in range(k)))
    return out


def ref_conv2d(x, w, b, xs, ws, groups, stride, dil, pads):
    n, c, h, wd = xs
    o, cg, kh, kw = ws
    oh = (h + pads[0] + pads[1] - dil[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (wd + pads[2] + pads[3] - dil[1] * (kw - 1) - 1) // stride[1] + 1
    og = o // groups
    out = []
    for ni in range(n):
        for oi in range(o):
            for y in range(oh):
                for xx in range(ow):
                    acc = b[oi] if b else 0.0
                    for ci in range(cg):
                        cin = (oi // og) * cg + ci
                        for ky in range(kh):
                            for kx in range(kw):
                                iy, ix = y * stride[0] + ky * dil[0] - pads[0], xx * stride[1] + kx * dil[1] - pads[2]
                                if 0 <= iy < h and 0 <= ix < wd:
                                    acc += x[((ni * c + cin) * h + iy) * wd + ix] * w[((oi * cg + ci) * kh + ky) * kw + kx]
                    out.append(acc)
    return out


def ref_conv_transpose2d(x, w, xs, ws, stride, pads, outpad):
    n, c, h, wd = xs
    _, o, kh, kw = ws
    oh = (h - 1) * stride[0] - pads[0] - pads[1] + kh - 1 + outpad[0] + 1
    ow = (wd - 1) * stride[1] - pads[2] - pads[3] + kw - 1 + outpad[1] + 1
    out = [0.0] * (n * o * oh * ow)
    for ni in range(n):
        for ci in range(c):
            for iy in range(h):
                for ix in range(wd):
                    for oi in range(o):
                        for ky in range(kh):
                            for kx in range(kw):
                                y, xx = iy * stride[0] - pads[0] + ky, ix * stride[1] - pads[2] + kx
                                if 0 <= y < oh and 0 <= xx < ow:
                                    out[((ni * o + oi) * oh + y) * ow + xx] += (
                                        x[((ni * c + ci) * h + iy) * wd + ix] * w[((ci * o + oi) * kh + ky) * kw + kx])
    return out


def ref_pool(x, xs, k, stride, pads, mode, include_pad=True):
    *lead, h, w = xs
    oh = (h + pads[0] + pads[1] - k[0]) // stride[0] + 1
    ow = (w + pads[2] + pads[3] - k[1]) // stride[1] + 1
    out = []
    for p in range(numel(lead)):
        for y in range(oh):
            for xx in range(ow):
                vals, count = [], 0
                for ky in range(k[0]):
                    for kx in range(k[1]):
                        iy, ix = y * stride[0] + ky - pads[0], xx * stride[1] + kx - pads[2]
                        if 0 <= iy < h and 0 <= ix < w:
                            vals.append(x[(p * h + iy) * w + ix])
                            count += 1
                        elif include_pad:
                            count += 1
                out.append(max(vals) if mode == "max" else sum(vals) / count)
    return out


def along_rows(x, shape, fn):
    """Apply fn to every row along the last axis; fn returns a list (row or single value)."""
    n = shape[-1]
    out = []
    for r in range(numel(shape) // n):
        out += fn(x[r * n:(r + 1) * n])
    return out


def softmax_row(r):
    m = max(r)
    e = [math.exp(v - m) for v in r]
    s = sum(e)
    return [v / s for v in e]


def erf_gelu(v):
    return 0.5 * v * (1 + math.erf(v / math.sqrt(2)))


def tanh_gelu(v):
    return 0.5 * v * (1 + math.tanh(math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)))


def mean(r):
    return sum(r) / len(r)


def ref_layernorm(r, eps):
    m = mean(r)
    var = mean([(v - m) ** 2 for v in r])
    return [(v - m) / math.sqrt(var + eps) for v in r]


def ref_gather(x, xs, idx, ishape, axis):
    out = []
    st = strides(xs)
    for i in range(numel(ishape)):
        pos = unravel(i, ishape)
        pos[axis] = idx[i]
        out.append(x[sum(p * s for p, s in zip(pos, st))] if 0 <= idx[i] < xs[axis] else 0.0)
    return out


def ref_cumsum_rows(r):
    out, acc = [], 0.0
    for v in r:
        acc += v
        out.append(acc)
    return out


# ---- cases ---------------------------------------------------------------------------------------------------------

rng = random.Random(1234)


def rand(n, lo=-1.0, hi=1.0):
    return [f32(rng.uniform(lo, hi)) for _ in range(n)]


def unary_case(op, arg, fn, shape=(3, 4), lo=-2.0, hi=2.0):
    x = rand(numel(shape), lo, hi)
    return (f"{op}({{x}}){arg}", {"x": (x, list(shape), "f32")}, [fn(v) for v in x])


def cases():
    c = {}
    a, b = rand(6), rand(12)
    c["matmul"] = ("matmul({a}, {b})", {"a": (a, [2, 3], "f32"), "b": (b, [3, 4], "f32")},
                   ref_matmul(a, b, [2, 3], [3, 4]))
    a, b = rand(2 * 2 * 3), rand(2 * 3 * 2)
    c["batched matmul"] = ("matmul({a}, {b})", {"a": (a, [2, 2, 3], "f32"), "b": (b, [2, 3, 2], "f32")},
                           ref_matmul(a, b, [2, 2, 3], [2, 3, 2]))
    x, w, bias = rand(1 * 4 * 5 * 5), rand(4 * 2 * 3 * 3), rand(4)
    c["conv2d groups stride pad bias"] = (
        "conv2d({x}, {w}, {b}) [2, [2, 1], [1, 1], [1, 0, 1, 1]]",
        {"x": (x, [1, 4, 5, 5], "f32"), "w": (w, [4, 2, 3, 3], "f32"), "b": (bias, [4], "f32")},
        ref_conv2d(x, w, bias, [1, 4, 5, 5], [4, 2, 3, 3], 2, [2, 1], [1, 1], [1, 0, 1, 1]))
    x, w = rand(1 * 1 * 7 * 7), rand(2 * 1 * 3 * 3)
    c["conv2d dilation"] = ("conv2d({x}, {w}) [1, [1, 1], [2, 2], [0, 0, 0, 0]]",
                            {"x": (x, [1, 1, 7, 7], "f32"), "w": (w, [2, 1, 3, 3], "f32")},
                            ref_conv2d(x, w, None, [1, 1, 7, 7], [2, 1, 3, 3], 1, [1, 1], [2, 2], [0, 0, 0, 0]))
    x, w = rand(1 * 2 * 3 * 3), rand(2 * 3 * 3 * 3)
    c["conv_transpose2d"] = ("conv_transpose2d({x}, {w}) [1, [2, 2], [1, 1], [1, 1, 1, 1], [1, 1]]",
                             {"x": (x, [1, 2, 3, 3], "f32"), "w": (w, [2, 3, 3, 3], "f32")},
                             ref_conv_transpose2d(x, w, [1, 2, 3, 3], [2, 3, 3, 3], [2, 2], [1, 1, 1, 1], [1, 1]))
    x = rand(2 * 5 * 5)
    c["max_pool2d"] = ("max_pool2d({x}) [[3, 3], [2, 2], [1, 1], [1, 1, 1, 1]]", {"x": (x, [2, 5, 5], "f32")},
                       ref_pool(x, [2, 5, 5], [3, 3], [2, 2], [1, 1, 1, 1], "max"))
    c["avg_pool2d include pad"] = ("avg_pool2d({x}) [[3, 3], [2, 2], [1, 1, 1, 1], true]",
                                   {"x": (x, [2, 5, 5], "f32")},
                                   ref_pool(x, [2, 5, 5], [3, 3], [2, 2], [1, 1, 1, 1], "avg", True))
    c["avg_pool2d exclude pad"] = ("avg_pool2d({x}) [[3, 3], [2, 2], [1, 1, 1, 1], false]",
                                   {"x": (x, [2, 5, 5], "f32")},
                                   ref_pool(x, [2, 5, 5], [3, 3], [2, 2], [1, 1, 1, 1], "avg", False))
    c["relu"] = unary_case("relu", "", lambda v: max(v, 0.0))
    c["leaky_relu"] = unary_case("leaky_relu", " 0.1", lambda v: v if v > 0 else 0.1 * v)
    c["sigmoid"] = unary_case("sigmoid", "", lambda v: 1 / (1 + math.exp(-v)))
    c["tanh"] = unary_case("tanh", "", math.tanh)
    c["gelu tanh"] = unary_case("gelu", ' "tanh"', tanh_gelu)
    c["gelu erf"] = unary_case("gelu", ' "erf"', erf_gelu)
    c["silu"] = unary_case("silu", "", lambda v: v / (1 + math.exp(-v)))
    c["exp"] = unary_case("exp", "", math.exp)
    c["log"] = unary_case("log", "", math.log, lo=0.1, hi=4.0)
    c["clip"] = unary_case("clip", " [-0.5, 0.5]", lambda v: min(max(v, -0.5), 0.5))
    x = rand(12, -3, 3)
    c["softmax"] = ("softmax({x}) 1", {"x": (x, [3, 4], "f32")}, along_rows(x, [3, 4], softmax_row))
    c["log_softmax"] = ("log_softmax({x}) 1", {"x": (x, [3, 4], "f32")},
                        along_rows(x, [3, 4], lambda r: [math.log(v) for v in softmax_row(r)]))
    c["logsumexp"] = ("logsumexp({x}) 1", {"x": (x, [3, 4], "f32")},
                      along_rows(x, [3, 4], lambda r: [max(r) + math.log(sum(math.exp(v - max(r)) for v in r))]))
    c["mean"] = ("mean({x}) [1]", {"x": (x, [3, 4], "f32")}, along_rows(x, [3, 4], lambda r: [mean(r)]))
    c["var"] = ("var({x}) [[1], 1]", {"x": (x, [3, 4], "f32")},
                along_rows(x, [3, 4], lambda r: [sum((v - mean(r)) ** 2 for v in r) / (len(r) - 1)]))
    wln, bln = rand(4), rand(4)
    c["layernorm"] = ("layernorm({x}, {w}, {b}) [[1], 1e-5]",
                      {"x": (x, [3, 4], "f32"), "w": (wln, [4], "f32"), "b": (bln, [4], "f32")},
                      [v * wln[i % 4] + bln[i % 4] for i, v in enumerate(along_rows(x, [3, 4],
                                                                                    lambda r: ref_layernorm(r, 1e-5)))])
    c["rmsnorm"] = ("rmsnorm({x}) [[1], 1e-6]", {"x": (x, [3, 4], "f32")},
                    along_rows(x, [3, 4], lambda r: [v / math.sqrt(mean([u * u for u in r]) + 1e-6) for v in r]))
    xb = rand(2 * 3 * 2)
    sc, bi, mu, va = rand(3), rand(3), rand(3), rand(3, 0.5, 2.0)
    c["batchnorm"] = ("batchnorm({x}, {s}, {b}, {m}, {v}) 1e-5",
                      {"x": (xb, [2, 3, 2], "f32"), "s": (sc, [3], "f32"), "b": (bi, [3], "f32"),
                       "m": (mu, [3], "f32"), "v": (va, [3], "f32")},
                      [(v - mu[(i // 2) % 3]) / math.sqrt(va[(i // 2) % 3] + 1e-5) * sc[(i // 2) % 3] + bi[(i // 2) % 3]
                       for i, v in enumerate(xb)])
    xg = rand(12)
    idx = [2, 0, 3, 1, 1, 5, 0, 2, 3]  # 5 is outside axis 1 (size 4): gives 0
    c["gather"] = ("gather({x}, {i}) 1", {"x": (xg, [3, 4], "f32"), "i": (idx, [3, 3], "i32")},
                   ref_gather(xg, [3, 4], idx, [3, 3], 1))
    we = rand(5 * 3)
    ids = [4, 0, 2, 2, 7]
    c["embedding"] = ("embedding({w}, {i})", {"w": (we, [5, 3], "f32"), "i": (ids, [5], "i32")},
                      [we[i * 3 + d] if 0 <= i < 5 else 0.0 for i in ids for d in range(3)])
    a, b = rand(2 * 2), rand(2 * 3)
    c["concat"] = ("concat({a}, {b}) 1", {"a": (a, [2, 2], "f32"), "b": (b, [2, 3], "f32")},
                   a[0:2] + b[0:3] + a[2:4] + b[3:6])
    c["cumsum"] = ("cumsum({x}) 1", {"x": (x, [3, 4], "f32")}, along_rows(x, [3, 4], ref_cumsum_rows))
    c["arange"] = ("arange [2, 9, 3] : i32[3]", {}, [2, 5, 8])
    c["arange float"] = ("arange [0.5, 2.5, 0.5] : f32[4]", {}, [0.5, 1.0, 1.5, 2.0])
    return c


def program(expr, inputs):
    lines = [f'%{n} = input "{n}" : {d}[{", ".join(map(str, s))}]' for n, (_, s, d) in inputs.items()]
    lines.append("%y = " + expr.format(**{n: "%" + n for n in inputs}))
    lines += ['%o = output(%y) "y"', "%root = sink(%o)"]
    return "\n".join(lines) + "\n"


def close(a, b):
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return abs(a - b) <= 1e-5 + 1e-4 * abs(b)


def main():
    tgc, opt, work = sys.argv[1], sys.argv[2], sys.argv[3]
    target = sys.argv[sys.argv.index("--target") + 1] if "--target" in sys.argv else None
    os.makedirs(work, exist_ok=True)
    failures = 0
    all_cases = cases()
    for name, (expr, inputs, expected) in all_cases.items():
        base = os.path.join(work, name.replace(" ", "_"))
        src = base + ".uop"
        open(src, "w").write(program(expr, inputs))
        flags = []
        for n, (vals, shape, dtype) in inputs.items():
            write_npy(f"{base}.{n}.npy", vals, shape, dtype)
            flags += ["--input", f"{n}={base}.{n}.npy"]
        variants = {"composite": src}
        for label, passes in (("decomposed", "decompose"), ("kernels", "lower-tensors")):
            out = f"{base}.{label}.uop"
            r = subprocess.run([opt, src, f"-passes={passes}", "-o", out], capture_output=True, text=True)
            if r.returncode:
                print(f"FAIL {name} ({label}): tgc-opt: {r.stderr.strip()}")
                failures += 1
            variants[label] = out
        runs = [(label, path, ["--interp"]) for label, path in variants.items()]
        if target:
            runs.append((target, src, ["--target", target]))
        for label, path, how in runs:
            outdir = f"{base}.{label}.out"
            r = subprocess.run([tgc, "run", path, "--output-dir", outdir] + how + flags,
                               capture_output=True, text=True)
            if r.returncode:
                print(f"FAIL {name} ({label}): {r.stderr.strip()}")
                failures += 1
                continue
            got = read_npy(os.path.join(outdir, "y.npy"))
            bad = [i for i, (g, e) in enumerate(zip(got, expected)) if not close(g, e)]
            if len(got) != len(expected) or bad:
                i = bad[0] if bad else 0
                print(f"FAIL {name} ({label}): element {i}: got {got[i] if got else None}, expected {expected[i]}")
                failures += 1
    ways = "four ways" if target else "three ways"
    print(f"composites: {len(all_cases)} ops checked {ways}, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
