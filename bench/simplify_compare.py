#!/usr/bin/env python3
"""tgc's simplify against tinygrad's on random integer index expressions over bounded variables.

Builds random expressions with tinygrad's UOp API (variables with bounds, + - *, floor // and %, max, <, where,
and the shapes of the issue-13 rule families), simplifies each with tinygrad (uop.simplify()) and with
`tgc-opt -passes=simplify` (the expression exported as .uop with define_var leaves), and compares the cost of the
two results: the number of ALU nodes, and of divisions and remainders among them. Prints how often tgc's result is
cheaper, equal or dearer, and the dearest cases.

Usage: python3 bench/simplify_compare.py --python PY [--tgc-opt build/bin/tgc-opt] [--count 2000] [--seed 0]
PY must have tinygrad installed (bench/sizes.py --setup makes build/benchenv).
"""
import argparse
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

WORKER = r'''
import json, random, sys
from tinygrad.uop.ops import UOp, Ops
from tinygrad.dtype import dtypes

NAMES = {Ops.ADD: "add", Ops.SUB: "sub", Ops.MUL: "mul", Ops.FLOORDIV: "floordiv", Ops.FLOORMOD: "floormod",
         Ops.CDIV: "idiv", Ops.CMOD: "mod", Ops.MAX: "max", Ops.CMPLT: "cmplt", Ops.CMPNE: "cmpne",
         Ops.CMPEQ: "cmpeq", Ops.WHERE: "where", Ops.AND: "and", Ops.OR: "or", Ops.XOR: "xor", Ops.NEG: "neg"}
DIVS = {Ops.FLOORDIV, Ops.FLOORMOD, Ops.CDIV, Ops.CMOD}

def gen(rng, vs, depth):
    if depth == 0 or rng.random() < 0.2:
        return rng.choice(vs) if rng.random() < 0.75 else UOp.const(rng.randint(-8, 16), dtypes.weakint)
    k = rng.randrange(12)
    a = gen(rng, vs, depth - 1)
    c = rng.choice([2, 3, 4, 5, 6, 8, 12, 16])
    if k == 0: return a + gen(rng, vs, depth - 1)
    if k == 1: return a - gen(rng, vs, depth - 1)
    if k == 2: return a * rng.randint(-3, 6)
    if k == 3: return a // c
    if k == 4: return a % c
    if k == 5: return a.maximum(gen(rng, vs, depth - 1))
    if k == 6: return (a < gen(rng, vs, depth - 1)).where(gen(rng, vs, depth - 1), gen(rng, vs, depth - 1))
    if k == 7: return (a // c + rng.randint(-3, 3)) // rng.choice([2, 3, 4])           # nested division
    if k == 8: return (a * c + gen(rng, vs, 0)) // (c * rng.choice([2, 3]))            # by a factor
    if k == 9: return (a // c) * c + a % c                                               # recombination
    if k == 10: return (a < 0).where(0, a)                                               # select -> max
    return (a * rng.randint(1, 4) + gen(rng, vs, depth - 1) * rng.randint(1, 4)) < rng.randint(-2, 3)

def text(root):
    lines, names = [], {}
    for u in root.toposort():
        n = f"%{len(names)}"
        names[u] = n
        dt = "bool" if u.dtype == dtypes.bool else "index"
        if u.op is Ops.CONST:
            v = ("true" if u.arg else "false") if u.dtype == dtypes.bool else str(int(u.arg))
            lines.append(f"{n} = const {v} : {dt}")
        elif u.op in NAMES:
            lines.append(f"{n} = {NAMES[u.op]}({', '.join(names[s] for s in u.src)}) : {dt}")
        elif u.op is Ops.BUFFER or (u.op is Ops.DEFINE_VAR if hasattr(Ops, "DEFINE_VAR") else False):
            lo, hi = u.vmin, u.vmax
            lines.append(f'{n} = define_var ["{u.arg.name if hasattr(u.arg, "name") else u.arg[0]}", {lo}, {hi}] : index')
        elif u.op is Ops.STACK and not u.src:
            del names[u]
        else:
            raise ValueError(f"no .uop for {u.op}")
    return "\n".join(lines)

def cost(root):
    alu = [u for u in root.toposort() if u.op in NAMES]
    return len(alu), sum(u.op in DIVS for u in alu)

rng = random.Random(int(sys.argv[2]))
out = []
while len(out) < int(sys.argv[1]):
    vs = [UOp.variable(n, lo, lo + rng.randint(1, 40)) for n, lo in (("a", 0), ("b", rng.randint(-10, 0)), ("c", 0))]
    e = gen(rng, vs, 3)
    try:
        s = e.simplify()
        out.append({"expr": text(e), "tiny": cost(s), "tiny_text": text(s)})
    except Exception as ex:  # an expression tinygrad cannot simplify or render is left out
        continue
json.dump(out, sys.stdout)
'''

ALU = {"add", "sub", "mul", "floordiv", "floormod", "idiv", "mod", "max", "cmplt", "cmpne", "cmpeq", "where",
       "and", "or", "xor", "neg", "shl", "shr", "cast"}
DIVS = {"floordiv", "floormod", "idiv", "mod"}


def tgc_cost(chunk):
    ops = [line.split("=", 1)[1].strip().split("(")[0].split(" ")[0] for line in chunk.splitlines() if "=" in line]
    alu = [o for o in ops if o in ALU]
    return len(alu), sum(o in DIVS for o in alu)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--python", required=True, help="a python with tinygrad installed")
    ap.add_argument("--tgc-opt", default=os.path.join(ROOT, "build", "bin", "tgc-opt"))
    ap.add_argument("--count", type=int, default=2000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--show", type=int, default=5, help="how many of tgc's dearest cases to print")
    a = ap.parse_args()
    import json
    r = subprocess.run([a.python, "-c", WORKER, str(a.count), str(a.seed)], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"simplify_compare: the tinygrad worker failed:\n{r.stderr[-2000:]}")
    cases = json.loads(r.stdout)
    with tempfile.NamedTemporaryFile("w", suffix=".uop", delete=False) as f:
        f.write("\n// -----\n".join(c["expr"] for c in cases) + "\n")
        path = f.name
    r = subprocess.run([a.tgc_opt, path, "-passes=simplify", "--split-input-file"], capture_output=True, text=True)
    os.unlink(path)
    if r.returncode != 0:
        sys.exit(f"simplify_compare: tgc-opt failed:\n{r.stderr[-2000:]}")
    chunks = r.stdout.split("// -----\n")
    if len(chunks) != len(cases):
        sys.exit(f"simplify_compare: {len(cases)} inputs but {len(chunks)} outputs")
    better = same = worse = 0
    divs_better = divs_worse = 0
    dearest = []
    for c, out in zip(cases, chunks):
        t = tgc_cost(out)
        g = tuple(c["tiny"])
        better += t < g
        same += t == g
        worse += t > g
        divs_better += t[1] < g[1]
        divs_worse += t[1] > g[1]
        if t > g:
            dearest.append((t[0] - g[0], c, out))
    n = len(cases)
    print(f"{n} expressions (seed {a.seed}); cost = (ALU nodes, divisions) of the simplified result")
    print(f"tgc cheaper than tinygrad: {better} ({100 * better / n:.1f}%)")
    print(f"same cost:                 {same} ({100 * same / n:.1f}%)")
    print(f"tgc dearer:                {worse} ({100 * worse / n:.1f}%)")
    print(f"reaches tinygrad or better: {100 * (better + same) / n:.1f}%")
    print(f"divisions: fewer in tgc {divs_better}, more in tgc {divs_worse}")
    for d, c, out in sorted(dearest, key=lambda x: -x[0])[: a.show]:
        print(f"\n--- tgc dearer by {d} ALU nodes\ninput:\n{c['expr']}\ntinygrad:\n{c['tiny_text']}\ntgc:\n{out}")


if __name__ == "__main__":
    main()
