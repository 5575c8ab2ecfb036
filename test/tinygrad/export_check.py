#!/usr/bin/env python3
"""Exports tinygrad models with tgc_tinygrad and checks tgc's outputs against tinygrad's own.

Models: tinygrad's beautiful_mnist CNN (examples/beautiful_mnist.py: two 5x5 and two 3x3 convolutions, batchnorm,
max pools, a linear layer; batch 8, random weights, inference) and a transformer block (layernorm, 4-head
attention with a causal mask, a GELU MLP, residuals; tinygrad's own ops). Each is exported to .uop + safetensors,
then run by `tgc run` (LLVM JIT) and by an executable from `tgc compile`, on the input tinygrad ran on
(rtol 1e-4, atol 1e-5). Needs the `tinygrad` PyPI package (test/onnx/setup_venv.sh installs it).

  export_check.py --tgc build/bin/tgc --work DIR
"""
import argparse
import os
import subprocess
import sys

os.environ.setdefault("DEV", "CPU")
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python"))

try:
    import numpy as np
    from tinygrad import Tensor, nn
    from tgc_tinygrad import export
except ImportError as e:
    print(f"tinygrad export: skipped ({e.name} is not installed; run test/onnx/setup_venv.sh)")
    sys.exit(0)


class MnistCNN:
    """examples/beautiful_mnist.py's Model."""

    def __init__(self):
        self.layers = [
            nn.Conv2d(1, 32, 5), Tensor.relu, nn.Conv2d(32, 32, 5), Tensor.relu, nn.BatchNorm(32), Tensor.max_pool2d,
            nn.Conv2d(32, 64, 3), Tensor.relu, nn.Conv2d(64, 64, 3), Tensor.relu, nn.BatchNorm(64), Tensor.max_pool2d,
            lambda x: x.flatten(1), nn.Linear(576, 10)]

    def __call__(self, x):
        return x.sequential(self.layers)


class TransformerBlock:
    def __init__(self, dim=64, heads=4, hidden=256):
        self.heads = heads
        self.ln1, self.ln2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
        self.qkv, self.out = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
        self.fc1, self.fc2 = nn.Linear(dim, hidden), nn.Linear(hidden, dim)

    def __call__(self, x):
        b, t, d = x.shape
        q, k, v = [y.reshape(b, t, self.heads, d // self.heads).transpose(1, 2)
                   for y in self.qkv(self.ln1(x)).chunk(3, dim=-1)]
        att = q.scaled_dot_product_attention(k, v, is_causal=True)
        x = x + self.out(att.transpose(1, 2).reshape(b, t, d))
        return x + self.fc2(self.fc1(self.ln2(x)).gelu())


def randomize(model, rng):
    """Random weights (and batchnorm statistics), so that the check does not pass on zeros and ones."""
    for name, t in nn.state.get_state_dict(model).items():
        if "num_batches_tracked" in name:
            continue
        v = rng.standard_normal(t.shape).astype(np.float32) * 0.1
        if "running_var" in name or name.endswith("ln1.weight") or name.endswith("ln2.weight"):
            v = np.abs(v) + 0.5
        t.assign(Tensor(v)).realize()


def check(name, model, shape, tgc, work, rng):
    randomize(model, rng)
    Tensor.training = False
    x = Tensor(rng.standard_normal(shape).astype(np.float32)).realize()
    y = model(x)
    uop = os.path.join(work, name + ".uop")
    export({"y": y}, inputs={"x": x}, weights=nn.state.get_state_dict(model), path=uop)
    want = y.numpy()
    np.save(os.path.join(work, name + "_x.npy"), x.numpy())
    ok = True
    for mode in ("run", "exe"):
        out = os.path.join(work, f"{name}_{mode}")
        if mode == "run":
            cmd = [tgc, "run", uop]
        else:
            subprocess.run([tgc, "compile", uop, "-o", os.path.join(work, name)], check=True)
            cmd = [os.path.join(work, name, name)]
        subprocess.run(cmd + [f"--input=x={work}/{name}_x.npy", "--output-dir", out], check=True,
                       stdout=subprocess.DEVNULL)
        got = np.load(os.path.join(out, "y.npy"))
        err = float(np.max(np.abs(got - want)))
        same = got.shape == want.shape and np.allclose(got, want, rtol=1e-4, atol=1e-5)
        print(f"{name} ({mode}): {'matches' if same else 'DIFFERS FROM'} tinygrad (max abs error {err:.2e}, "
              f"output {list(got.shape)})", flush=True)
        ok = ok and same
    return ok


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tgc", required=True)
    ap.add_argument("--work", required=True)
    args = ap.parse_args()
    os.makedirs(args.work, exist_ok=True)
    tgc, work, rng = os.path.abspath(args.tgc), os.path.abspath(args.work), np.random.default_rng(0)
    results = [check("mnist_cnn", MnistCNN(), (8, 1, 28, 28), tgc, work, rng),
               check("transformer_block", TransformerBlock(), (2, 16, 64), tgc, work, rng)]
    print(f"tinygrad export: {sum(results)} passed, {len(results) - sum(results)} failed")
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
