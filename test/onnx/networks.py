#!/usr/bin/env python3
"""Builds ResNet-18, MobileNetV2 and a small ViT as ONNX files (random weights) and checks tgc against onnxruntime.

The networks are torchvision's architectures written node by node in the patterns torch.onnx.export emits
(opset 17: Conv, BatchNormalization, Clip for ReLU6, Gemm, LayerNormalization, erf-form GELU, the
Shape/Gather/Unsqueeze/Concat chain that sizes the class token's Expand, ...). PyTorch itself is not used: its
wheels are not installable here (download.pytorch.org is unreachable and PyPI's Linux wheel pulls 2.5 GB of CUDA
libraries). Each model is compiled with `tgc compile`, run as an executable, and compared with onnxruntime on the
same input (rtol 1e-3, atol 1e-4); with --bench both are timed on one thread (medians).

  networks.py --tgc build/bin/tgc --work DIR [--bench N] [--models resnet18,mobilenetv2,vit]
"""

import argparse
import os
import subprocess
import sys
import time

try:
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper
except ImportError as e:
    print(f"onnx networks: skipped ({e.name} is not installed; run test/onnx/setup_venv.sh)")
    sys.exit(0)


class Builder:
    """Appends nodes and random initializers to one graph; names are unique and deterministic."""

    def __init__(self, seed):
        self.nodes, self.inits, self.rng, self.count = [], [], np.random.default_rng(seed), 0

    def name(self, base):
        self.count += 1
        return f"{base}_{self.count}"

    def param(self, base, shape, scale=None, value=None, dtype=np.float32):
        if value is None:
            fan_in = int(np.prod(shape[1:])) if len(shape) > 1 else shape[0]
            value = self.rng.normal(0, scale if scale is not None else 1 / np.sqrt(fan_in), shape)
        n = self.name(base)
        self.inits.append(numpy_helper.from_array(np.asarray(value, dtype=dtype), n))
        return n

    def op(self, op_type, inputs, n_out=1, **attrs):
        outs = [self.name(op_type.lower()) for _ in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=outs[0], **attrs))
        return outs[0] if n_out == 1 else outs

    def const(self, values, dtype=np.int64):
        return self.param("const", None, value=np.array(values, dtype=dtype), dtype=dtype)

    def model(self, x_shape, out, out_name="logits"):
        graph = helper.make_graph(
            self.nodes + [helper.make_node("Identity", [out], [out_name])], "net", [
                helper.make_tensor_value_info("input", TensorProto.FLOAT, x_shape)
            ], [helper.make_tensor_value_info(out_name, TensorProto.FLOAT, None)], self.inits)
        return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def conv_bn(b, x, cin, cout, k, stride=1, groups=1, act="relu"):
    w = b.param("conv.weight", (cout, cin // groups, k, k))
    y = b.op("Conv", [x, w], kernel_shape=[k, k], strides=[stride, stride], pads=[k // 2] * 4, group=groups)
    y = b.op("BatchNormalization", [y, b.param("bn.weight", (cout,), value=b.rng.uniform(0.5, 1.5, cout)),
                                    b.param("bn.bias", (cout,), 0.1), b.param("bn.mean", (cout,), 0.1),
                                    b.param("bn.var", (cout,), value=b.rng.uniform(0.5, 1.5, cout))], epsilon=1e-5)
    if act == "relu":
        return b.op("Relu", [y])
    if act == "relu6":
        return b.op("Clip", [y, b.const(0.0, np.float32), b.const(6.0, np.float32)])
    return y


def classifier(b, x, features, classes):
    y = b.op("Flatten", [b.op("GlobalAveragePool", [x])], axis=1)
    return b.op("Gemm", [y, b.param("fc.weight", (classes, features)), b.param("fc.bias", (classes,), 0.01)],
                transB=1)


def resnet18():
    b = Builder(18)
    x = conv_bn(b, "input", 3, 64, 7, 2)
    x = b.op("MaxPool", [x], kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    cin = 64
    for cout, stride in [(64, 1), (128, 2), (256, 2), (512, 2)]:
        for block in range(2):
            s = stride if block == 0 else 1
            y = conv_bn(b, x, cin, cout, 3, s)
            y = conv_bn(b, y, cout, cout, 3, 1, act=None)
            skip = conv_bn(b, x, cin, cout, 1, s, act=None) if (s != 1 or cin != cout) else x
            x = b.op("Relu", [b.op("Add", [y, skip])])
            cin = cout
    return b.model([1, 3, 224, 224], classifier(b, x, 512, 1000))


def mobilenetv2():
    b = Builder(2)
    x = conv_bn(b, "input", 3, 32, 3, 2, act="relu6")
    cin = 32
    for t, c, n, s in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1), (6, 160, 3, 2),
                       (6, 320, 1, 1)]:
        for i in range(n):
            stride, hidden = (s if i == 0 else 1), cin * t
            y = conv_bn(b, x, cin, hidden, 1, act="relu6") if t != 1 else x
            y = conv_bn(b, y, hidden, hidden, 3, stride, groups=hidden, act="relu6")
            y = conv_bn(b, y, hidden, c, 1, act=None)
            x = b.op("Add", [x, y]) if stride == 1 and cin == c else y
            cin = c
    x = conv_bn(b, x, cin, 1280, 1, act="relu6")
    x = b.op("Dropout", [x])
    return b.model([1, 3, 224, 224], classifier(b, x, 1280, 1000))


def vit(image=64, patch=8, dim=192, heads=3, depth=4, mlp=768, classes=10):
    b = Builder(16)
    tokens, hd = (image // patch) ** 2, dim // heads
    x = b.op("Conv", ["input", b.param("patch.weight", (dim, 3, patch, patch)), b.param("patch.bias", (dim,), 0.02)],
             kernel_shape=[patch, patch], strides=[patch, patch])
    x = b.op("Transpose", [b.op("Reshape", [x, b.const([1, dim, tokens])])], perm=[0, 2, 1])
    # the class token, expanded to the batch size that torch reads off the input's shape
    batch = b.op("Unsqueeze", [b.op("Gather", [b.op("Shape", ["input"]), b.const(0)], axis=0), b.const([0])])
    target = b.op("Concat", [batch, b.const([1, dim])], axis=0)
    cls = b.op("Expand", [b.param("class_token", (1, 1, dim), 0.02), target])
    x = b.op("Add", [b.op("Concat", [cls, x], axis=1), b.param("pos_embedding", (1, tokens + 1, dim), 0.02)])
    n = tokens + 1

    def layer_norm(v):
        return b.op("LayerNormalization", [v, b.param("ln.weight", (dim,), value=np.ones(dim)),
                                          b.param("ln.bias", (dim,), value=np.zeros(dim))], axis=-1, epsilon=1e-6)

    def linear(v, fin, fout):
        return b.op("Add", [b.op("MatMul", [v, b.param("linear.weight", (fin, fout))]),
                            b.param("linear.bias", (fout,), 0.02)])

    for _ in range(depth):
        h = layer_norm(x)
        qkv = b.op("Transpose", [b.op("Reshape", [linear(h, dim, 3 * dim), b.const([1, n, 3, heads, hd])])],
                   perm=[2, 0, 3, 1, 4])
        q, k, v = (b.op("Gather", [qkv, b.const(i)], axis=0) for i in range(3))
        att = b.op("Mul", [b.op("MatMul", [q, b.op("Transpose", [k], perm=[0, 1, 3, 2])]),
                           b.const(1 / np.sqrt(hd), np.float32)])
        o = b.op("MatMul", [b.op("Softmax", [att], axis=-1), v])
        o = b.op("Reshape", [b.op("Transpose", [o], perm=[0, 2, 1, 3]), b.const([1, n, dim])])
        x = b.op("Add", [x, linear(o, dim, dim)])
        h = linear(layer_norm(x), dim, mlp)  # GELU, erf form, as torch exports it
        erf = b.op("Erf", [b.op("Div", [h, b.const(np.sqrt(2), np.float32)])])
        h = b.op("Mul", [b.op("Mul", [h, b.op("Add", [erf, b.const(1.0, np.float32)])]), b.const(0.5, np.float32)])
        x = b.op("Add", [x, linear(h, mlp, dim)])
    x = b.op("Gather", [layer_norm(x), b.const(0)], axis=1)
    return b.model([1, 3, image, image], b.op("Gemm", [x, b.param("head.weight", (classes, dim)),
                                                       b.param("head.bias", (classes,), 0.02)], transB=1))


MODELS = {"resnet18": resnet18, "mobilenetv2": mobilenetv2, "vit": vit}


def median_time(fn, n):
    times = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return sorted(times)[len(times) // 2]


def check(name, tgc, work, bench):
    model = MODELS[name]()
    path = os.path.join(work, name + ".onnx")
    onnx.save(model, path)
    shape = [d.dim_value for d in model.graph.input[0].type.tensor_type.shape.dim]
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    np.save(os.path.join(work, name + "_input.npy"), x)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(path, opts, providers=["CPUExecutionProvider"])
    want = sess.run(None, {"input": x})[0]
    t0 = time.perf_counter()
    subprocess.run([tgc, "compile", path, "-o", os.path.join(work, name)], check=True)
    compile_s = time.perf_counter() - t0
    exe = os.path.join(work, name, name)
    out = os.path.join(work, name + "_out")
    subprocess.run([exe, f"--input=input={work}/{name}_input.npy", "--output-dir", out, "--threads", "1"], check=True,
                   stdout=subprocess.DEVNULL)
    got = np.load(os.path.join(out, "logits.npy"))
    err = float(np.max(np.abs(got - want)))
    ok = got.shape == want.shape and np.allclose(got, want, rtol=1e-3, atol=1e-4)
    line = (f"{name}: {'matches' if ok else 'DIFFERS FROM'} onnxruntime {ort.__version__} (max abs error {err:.2e}, "
            f"outputs {list(got.shape)}), tgc compile {compile_s:.1f} s")
    if bench:
        ort_s = median_time(lambda: sess.run(None, {"input": x}), bench)
        r = subprocess.run([exe, f"--input=input={work}/{name}_input.npy", "--threads", "1", "--bench", str(bench)],
                           check=True, capture_output=True, text=True)
        line += f"; 1 thread: onnxruntime {ort_s * 1e3:.1f} ms, tgc: {r.stderr.strip() or r.stdout.strip()}"
    print(line, flush=True)
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tgc", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--models", default=",".join(MODELS))
    ap.add_argument("--bench", type=int, default=0)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    results = [check(m, os.path.abspath(args.tgc), os.path.abspath(args.work), args.bench)
               for m in args.models.split(",")]
    print(f"onnx networks: {sum(results)} passed, {len(results) - sum(results)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
