"""A seeded generator of valid random tensor programs (.uop), and the error model that says how closely two correct
implementations of each program must agree.

A program is a list of Nodes in definition order plus the names of its outputs. Every node records its dtype and
shape (the generator knows each op's shape rule; the parser checks them) and two numbers the comparison needs:
  mag  a bound on the magnitude of its finite values (inputs are in [-1, 1), integers in [-8, 16));
  err  a bound on how far two correct implementations may differ on it: 0 when every op on the way is computed
       identically everywhere (movement, basic IEEE arithmetic, integer ops, selections), more where results may
       legitimately differ (an f32/f64 product added to something, which the contract pass may fuse into one
       rounding where the interpreter rounds twice; polynomial transcendentals, reassociated sums, composites
       evaluated in double by the interpreter); inf where no useful bound exists. Nodes with err = inf are never used again, and an op whose
       result would jump on a tiny input difference (a comparison, a cast to an integer) only takes exact operands.
analyze() recomputes both from the ops alone, so a minimized program gets the right tolerances.
"""
import math
import random
from dataclasses import dataclass, field

INF = float("inf")
FLOATS = ["f32", "f16", "bf16", "f64"]
INTS = ["i32", "i8", "u8", "i64", "i16", "u32"]
EPS = {"f32": 2.0 ** -24, "f16": 2.0 ** -11, "bf16": 2.0 ** -8, "f64": 2.0 ** -53}
MAXF = {"f32": 3.4e38, "f16": 65504.0, "bf16": 3.3e38, "f64": 1.7e308}
BITS = {"i8": 8, "u8": 8, "i16": 16, "u16": 16, "i32": 32, "u32": 32, "i64": 64, "u64": 64, "bool": 8,
        "f16": 16, "bf16": 16, "f32": 32, "f64": 64}
MAX_ELEMENTS = 4096


def is_float(d):
    return d in FLOATS


def is_int(d):
    return d in INTS


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def shape_text(dtype, shape):
    return f"{dtype}[{', '.join(map(str, shape))}]"


@dataclass
class Node:
    name: str
    op: str
    srcs: list
    arg: object  # python data: rendered by arg_text
    dtype: str
    shape: tuple
    mag: float = 1.0
    err: float = 0.0
    product: bool = False  # an f32/f64 product, maybe moved or negated: an add of it may become one fma

    @property
    def exact(self):
        return self.err == 0.0


def render_arg(op, arg):
    """The .uop text of an op's arg (None: no arg)."""
    if arg is None:
        return ""
    if op == "const":
        return arg
    if isinstance(arg, str):
        return arg
    return lists(arg)


def lists(a):
    if isinstance(a, (list, tuple)):
        return "[" + ", ".join(lists(x) for x in a) + "]"
    if isinstance(a, bool):
        return "true" if a else "false"
    if isinstance(a, float):
        return repr(a)
    return str(a)


@dataclass
class Program:
    nodes: list = field(default_factory=list)
    outputs: list = field(default_factory=list)

    def by_name(self):
        return {n.name: n for n in self.nodes}

    def text(self):
        lines = []
        for n in self.nodes:
            t = shape_text(n.dtype, n.shape)
            if n.op == "input":
                lines.append(f'%{n.name} = input "{n.name}" : {t}')
            elif n.op == "const":
                lines.append(f"%{n.name} = const {n.arg} : {t}")
            else:
                srcs = ", ".join("%" + s for s in n.srcs)
                arg = render_arg(n.op, n.arg)
                lines.append(f"%{n.name} = {n.op}({srcs}){' ' + arg if arg else ''} : {t}")
        for i, o in enumerate(self.outputs):
            lines.append(f'%out{i} = output(%{o}) "out{i}"')
        lines.append("%root = sink(" + ", ".join(f"%out{i}" for i in range(len(self.outputs))) + ")")
        return "\n".join(lines) + "\n"

    def live(self):
        """Drop nodes no output depends on."""
        by = self.by_name()
        keep, work = set(), list(self.outputs)
        while work:
            n = work.pop()
            if n in keep:
                continue
            keep.add(n)
            work.extend(by[n].srcs)
        self.nodes = [n for n in self.nodes if n.name in keep]


# --- the error model ------------------------------------------------------------------------------------------

def rounding(dtype, mag):
    return EPS.get(dtype, 0.0) * mag


def info(n, src):
    """(mag, err) of node n from its operands' (mag, err)."""
    op, d = n.op, n.dtype
    m = [s.mag for s in src]
    e = [s.err for s in src]
    ex = all(x == 0 for x in e)
    if op == "input":
        return (1.0 if is_float(d) else 16.0 if d != "bool" else 1.0), 0.0
    if op == "const":
        v = float(n.arg) if n.arg not in ("true", "false") else 1.0
        return (abs(v) if math.isfinite(v) else 1.0), 0.0
    if op in ("reshape", "permute", "expand", "shrink", "flip", "contiguous", "neg", "pad"):
        return m[0], e[0]
    if op in ("max", "where"):
        k = 1 if op == "where" else 0
        return max(m[k:]), max(e[k:])
    if op in ("add", "sub"):
        mag = m[0] + m[1]
        # the contract pass may fuse a product operand: one rounding of a*b+c instead of two
        fused = max([s.mag for s in src if s.product], default=0.0)
        return mag, (0.0 if (ex and not fused) or not is_float(d) else e[0] + e[1] + rounding(d, mag) +
                     rounding(d, fused))
    if op == "mul":
        mag = m[0] * m[1]
        if not is_float(d) or ex:
            return mag, 0.0
        return mag, m[0] * e[1] + m[1] * e[0] + e[0] * e[1] + rounding(d, mag)
    if op in ("fdiv", "recip"):
        den = src[-1]
        if den.op == "const" and op == "fdiv" and float(den.arg) != 0:
            c = abs(float(den.arg))
            return m[0] / c, (0.0 if ex else e[0] / c + rounding(d, m[0] / c))
        return INF, (0.0 if ex else INF)
    if op == "sqrt":
        mag = math.sqrt(m[0])
        return mag, (0.0 if ex else math.sqrt(e[0]) + rounding(d, mag))
    if op == "trunc":
        return m[0], (0.0 if ex else INF)
    if op == "exp2":
        mag = 2.0 ** min(m[0], 1000)
        return mag, 4 * rounding(d, mag) + mag * 0.7 * e[0] * 1.01
    if op == "log2":
        return 160.0, (8 * rounding(d, 160.0) if ex else INF)
    if op == "sin":
        return 1.0, e[0] + 8 * rounding(d, max(1.0, m[0]))
    if op == "pow":
        return INF, INF
    if op in ("idiv", "mod", "and", "or", "xor", "shl", "shr"):
        return (m[0] if op in ("idiv", "mod", "shr") else 2.0 ** BITS[d]), 0.0
    if op in ("cmplt", "cmpne", "cmpeq"):
        return 1.0, (0.0 if ex else INF)
    if op == "cast":
        s = src[0]
        if is_float(d):
            mag = min(s.mag, MAXF[d])
            return mag, (0.0 if ex else e[0] + rounding(d, mag))
        return (1.0 if d == "bool" else s.mag), (0.0 if ex else INF)
    if op == "bitcast":
        return INF, (0.0 if ex else INF)
    if op == "reduce_axis":
        kind, axes = n.arg
        k = numel(src[0].shape) // max(1, numel(n.shape)) if numel(n.shape) else 0
        mag = {"add": m[0] * max(k, 1), "max": m[0], "mul": power(m[0], k)}[kind]
        if kind == "max" or not is_float(d):
            return mag, (e[0] if kind == "max" else 0.0)
        if kind == "add":  # f16/bf16 sums accumulate in f32 and round once
            acc = "f32" if d in ("f16", "bf16") else d
            return mag, k * e[0] + 4 * k ** 1.5 * rounding(acc, m[0]) + rounding(d, mag)
        return mag, (2 * k * rounding(d, mag) if ex else INF)
    mag, err = composite_info(n, src, m, e)
    if n.op not in EXACT_COMPOSITES:
        err = max(err, 1e-300)  # computed differently (double, another order): the sign of a zero may differ
    return mag, err


EXACT_COMPOSITES = {"relu", "clip", "concat", "gather", "embedding", "max_pool2d", "arange", "pad_mode"}


def power(m, k):
    return INF if m > 1 and k * math.log(m) > 700 else m ** max(k, 1)


def composite_info(n, src, m, e):
    op, d = n.op, n.dtype
    if op == "arange":
        start, stop, step = n.arg
        return max(abs(start), abs(stop)) + abs(step), 0.0
    eps = EPS.get(d, 0.0)
    r = lambda mag: 16 * eps * mag  # the interpreter evaluates composites in double; the pipeline in the dtype
    if op in ("relu", "clip", "concat", "gather", "embedding", "max_pool2d"):
        return max(m[:1] if op != "concat" else m), max(e[:1] if op != "concat" else e) + (r(m[0]) if op == "clip" else 0)
    if op == "leaky_relu":
        return m[0], e[0] + r(m[0])
    if op in ("sigmoid", "tanh"):
        return 1.0, e[0] + r(1.0)
    if op == "erf":  # slope at most 2/sqrt(pi)
        return 1.0, 1.2 * e[0] + r(4.0)
    if op == "pad_mode":  # moves values (the constant is exact in the dtype)
        return max(m[0], abs(n.arg[2]) if len(n.arg) > 2 else 0), e[0]
    if op in ("gelu", "silu"):
        return m[0], 2 * e[0] + r(m[0] + 1)
    if op == "exp":
        mag = math.exp(min(m[0], 700))
        return mag, mag * (e[0] * 1.01 + 8 * eps)
    if op == "log":
        return 110.0, (r(110.0) if e[0] == 0 else INF)
    k = composite_reduce_size(n, src)
    if op == "matmul":
        mag = k * m[0] * m[1]
        return mag, k * (m[0] * e[1] + m[1] * e[0]) + 4 * k ** 1.5 * eps * m[0] * m[1] + r(mag)
    if op in ("conv2d", "conv_transpose2d"):
        mag = k * m[0] * m[1] + (m[2] if len(m) > 2 else 0)
        return mag, k * (m[0] * e[1] + m[1] * e[0]) + 4 * k ** 1.5 * eps * m[0] * m[1] + (e[2] if len(e) > 2 else 0) + r(mag)
    if op == "avg_pool2d":
        return m[0], e[0] + 4 * k ** 0.5 * eps * m[0] + r(m[0])
    if op in ("softmax",):
        return 1.0, 2 * e[0] + 8 * k * eps
    if op in ("log_softmax", "logsumexp"):
        mag = m[0] + math.log(max(k, 1)) + 1
        return mag, 2 * e[0] + 8 * k * eps * mag
    if op == "mean":
        return m[0], e[0] + 4 * k ** 0.5 * eps * m[0] + r(m[0])
    if op == "cumsum":
        return m[0] * k, k * e[0] + 4 * k ** 1.5 * eps * m[0] + r(m[0] * k)
    if op == "var":
        return 4 * m[0] ** 2, 8 * m[0] * e[0] + 16 * k ** 0.5 * eps * m[0] ** 2 + r(4 * m[0] ** 2)
    if op in ("layernorm", "rmsnorm"):
        # normalized by sqrt(var + eps) >= sqrt(eps): amplification up to 1/sqrt(eps) = 316
        w = m[1] if len(m) > 1 else 1.0
        mag = (k ** 0.5 + 1) * w + (m[2] if len(m) > 2 else 0)
        return mag, 400 * (e[0] + 8 * k ** 0.5 * eps * m[0]) * w + sum(e[1:]) * mag + r(mag)
    if op == "batchnorm":
        mag = (m[0] + m[3]) * m[1] * 320 + m[2]
        return mag, (r(mag) * 4 if all(x == 0 for x in e) else INF)
    return INF, INF


def composite_reduce_size(n, src):
    op = n.op
    if op == "matmul":
        return src[0].shape[-1]
    if op == "conv2d":
        w = src[1].shape
        return w[1] * w[2] * w[3]
    if op == "conv_transpose2d":
        w = src[1].shape
        return w[0] * w[2] * w[3]
    if op == "avg_pool2d":
        return n.arg[0][0] * n.arg[0][1]
    if op in ("softmax", "log_softmax", "logsumexp", "cumsum"):
        return src[0].shape[n.arg]
    if op in ("mean", "layernorm", "rmsnorm", "var"):
        axes = n.arg if op == "mean" else n.arg[0]
        return numel([src[0].shape[a] for a in axes])
    if op == "arange":
        return n.shape[0]
    return 1


CONTRACTED = ("f32", "f64")  # dtypes whose a*b+c the contract pass fuses
THROUGH_PRODUCT = ("reshape", "permute", "expand", "shrink", "flip", "neg")  # stay a product inside a kernel


def checked_info(n, src):
    """info(), plus: inexactness is contagious (an inexact operand times a zero constant is a zero whose sign is not
    reliable, though its magnitude bound is 0)."""
    mag, err = info(n, src)
    n.product = n.dtype in CONTRACTED and (n.op == "mul" or (n.op in THROUGH_PRODUCT and src[0].product))
    if err == 0 and any(s.err > 0 for s in src) and is_float(n.dtype):
        err = 1e-300
    return mag, err


def analyze(prog):
    by = {}
    for n in prog.nodes:
        n.mag, n.err = checked_info(n, [by[s] for s in n.srcs])
        if is_float(n.dtype) and n.mag > MAXF[n.dtype] / 16 and n.err > 0:
            n.err = INF  # near overflow an inexact value may be finite in one implementation and inf in another
        by[n.name] = n
    return prog


# --- the generator --------------------------------------------------------------------------------------------

class Generator:
    def __init__(self, seed, max_ops=None):
        self.r = random.Random(seed)
        self.p = Program()
        self.count = 0
        self.inputs = 0
        self.max_ops = max_ops or self.r.randint(3, 25)

    # helpers
    def fresh(self, prefix="v"):
        self.count += 1
        return f"{prefix}{self.count}"

    def add(self, op, srcs, arg, dtype, shape, prefix="v"):
        n = Node(self.fresh(prefix), op, [s.name for s in srcs], arg, dtype, tuple(shape))
        n.mag, n.err = checked_info(n, srcs)
        if is_float(dtype) and n.mag > MAXF[dtype] / 16 and n.err > 0:
            n.err = INF
        self.p.nodes.append(n)
        return n

    def usable(self):
        return [n for n in self.p.nodes if n.err != INF]

    def pick(self, pred=lambda n: True):
        c = [n for n in self.usable() if pred(n)]
        if not c:
            return None
        # prefer recent values: deeper graphs
        w = [1 + i for i in range(len(c))]
        return self.r.choices(c, weights=w)[0]

    def random_dtype(self):
        return self.r.choices(["f32", "f16", "bf16", "f64", "i32", "i8", "u8", "i64", "bool"],
                              weights=[40, 8, 4, 3, 20, 4, 4, 3, 10])[0]

    def random_shape(self):
        if self.r.random() < 0.04:
            s = [self.r.choice([1, 2, 3]) for _ in range(self.r.randint(1, 3))]
            s[self.r.randrange(len(s))] = 0
            return tuple(s)
        rank = self.r.choices([0, 1, 2, 3, 4], weights=[8, 20, 35, 22, 15])[0]
        while True:
            s = tuple(self.r.choice([1, 1, 2, 3, 4, 5, 7, 8, 16, 32]) for _ in range(rank))
            if numel(s) <= MAX_ELEMENTS:
                return s

    def new_input(self, dtype=None, shape=None):
        self.inputs += 1
        d = dtype or self.random_dtype()
        return self.add("input", [], None, d, self.random_shape() if shape is None else shape, prefix="in")

    def const(self, dtype, value, shape=()):
        if dtype == "bool":
            text = "true" if value else "false"
        elif is_float(dtype):
            text = repr(float(value)) if math.isfinite(value) else ("nan" if math.isnan(value) else ("inf" if value > 0 else "-inf"))
        else:
            text = str(int(value))
        return self.add("const", [], text, dtype, shape, prefix="c")

    def scalar_const(self, dtype):
        if dtype == "bool":
            return self.const(dtype, self.r.random() < 0.5)
        if is_float(dtype):
            return self.const(dtype, self.r.choice([0.0, -0.0, 1.0, 0.5, -2.0, 3.0, 0.25, 1e-3]))
        lo = 0 if dtype.startswith("u") else -5
        return self.const(dtype, self.r.randint(lo, 7))

    def cast_to(self, x, dtype):
        if x.dtype == dtype:
            return x
        if not x.exact and not is_float(dtype):
            return None
        return self.add("cast", [x], None, dtype, x.shape)

    def partner(self, a, dtype=None, exact=False):
        """A second operand for an elementwise op with a: same dtype, a's shape, rank 0, or a new input of a shape
        that broadcasts to a's in numpy's sense (leading axes dropped, some axes 1: the parser inserts the
        reshape and expand)."""
        dtype = dtype or a.dtype
        r = self.r.random()
        ok = lambda n: n.dtype == dtype and (n.shape == a.shape or n.shape == ()) and (n.exact or not exact)
        if r < 0.45:
            b = self.pick(ok)
            if b:
                return b
        if r < 0.6:
            return self.scalar_const(dtype)
        if r < 0.7 and a.shape:
            # the same data through another view of the same shape (aliasing)
            if len(a.shape) >= 2 and a.shape[-1] == a.shape[-2]:
                order = list(range(len(a.shape)))
                order[-1], order[-2] = order[-2], order[-1]
                v = self.add("permute", [a], order, a.dtype, a.shape)
                return self.cast_to(v, dtype) if v.dtype != dtype else v
            v = self.add("flip", [a], [len(a.shape) - 1], a.dtype, a.shape)
            return self.cast_to(v, dtype) if v.dtype != dtype else v
        if r < 0.9 and a.shape and self.inputs < 8:
            shape = [1 if self.r.random() < 0.4 else d for d in a.shape[self.r.randint(0, len(a.shape) - 1):]]
            return self.new_input(dtype, tuple(shape))
        if self.inputs < 4:
            return self.new_input(dtype, a.shape)
        return self.scalar_const(dtype)

    # --- op builders: each returns a node or None when it does not apply
    def unary_float(self):
        a = self.pick(lambda n: is_float(n.dtype))
        if not a:
            return None
        op = self.r.choice(["exp2", "log2", "sin", "sqrt", "recip", "neg", "trunc"])
        if op == "exp2" and a.mag > 16:
            return None
        if op == "sin" and a.mag > 1e4:
            return None
        if op in ("log2", "trunc", "recip") and not a.exact:
            return None
        return self.add(op, [a], None, a.dtype, a.shape)

    def unary_int(self):
        a = self.pick(lambda n: is_int(n.dtype))
        return self.add("neg", [a], None, a.dtype, a.shape) if a else None

    def binary(self):
        a = self.pick(lambda n: n.dtype != "bool")
        if not a:
            return None
        ops = ["add", "sub", "mul", "max"]
        ops += ["fdiv", "pow"] if is_float(a.dtype) else ["idiv", "mod", "and", "or", "xor", "shl", "shr"]
        op = self.r.choice(ops)
        if op in ("pow",) and not a.exact:
            return None
        if op == "fdiv" and not a.exact and self.r.random() < 0.7:
            b = self.const(a.dtype, self.r.choice([2.0, -4.0, 0.5, 3.0]))
        else:
            b = self.partner(a, exact=op in ("fdiv", "pow"))
        if b is None or (op in ("fdiv", "pow") and not b.exact):
            return None
        if op == "mul" and a.mag * b.mag > 1e6 and not (a.exact and b.exact):
            return None
        if op in ("idiv", "mod"):
            b = self.add("or", [b, self.const(b.dtype, 1)], None, b.dtype, b.shape)  # never zero
        if op in ("shl", "shr"):
            b = self.add("and", [b, self.const(b.dtype, BITS[b.dtype] - 1)], None, b.dtype, b.shape)  # in range
            if b.dtype.startswith("i"):
                b = self.add("max", [b, self.const(b.dtype, 0)], None, b.dtype, b.shape)
        shape = a.shape if a.shape else b.shape
        return self.add(op, [a, b], None, a.dtype, shape)

    def logic(self):
        a = self.pick(lambda n: n.dtype == "bool")
        if not a:
            return None
        b = self.partner(a)
        return self.add(self.r.choice(["and", "or", "xor", "cmpne", "cmpeq"]), [a, b], None, "bool",
                        a.shape if a.shape else b.shape)

    def compare(self):
        a = self.pick(lambda n: n.exact and n.dtype != "bool")
        if not a:
            return None
        b = self.partner(a, exact=True)
        if b is None or not b.exact:
            return None
        return self.add(self.r.choice(["cmplt", "cmpne", "cmpeq"]), [a, b], None, "bool", a.shape if a.shape else b.shape)

    def where(self):
        c = self.pick(lambda n: n.dtype == "bool" and n.exact)
        if not c or self.r.random() < 0.15:
            c = self.const("bool", self.r.random() < 0.5)  # a constant condition
        x = self.pick(lambda n: n.shape == c.shape or c.shape == () or n.shape == ())
        if not x:
            return None
        shape = c.shape if c.shape else x.shape
        if x.shape and shape and x.shape != shape:
            return None
        y = self.pick(lambda n: n.dtype == x.dtype and (n.shape == shape or n.shape == ()) and n is not x)
        if y is None:
            y = self.scalar_const(x.dtype)
        if not shape:
            shape = y.shape
        if (x.shape and x.shape != shape) or (y.shape and y.shape != shape) or (c.shape and c.shape != shape):
            return None
        return self.add("where", [c, x, y], None, x.dtype, shape)

    def self_select(self):
        """where(c, t, f) whose branch computes with c itself, directly or read at other elements through a view
        (flip, a permute reshaped back), maybe cast to an integer: simplify may fold c inside a branch only where the
        branch reads c at the same element."""
        c = self.pick(lambda n: n.dtype == "bool" and n.exact and len(n.shape) >= 1)
        if not c:
            return None
        x = self.partner(c, exact=True)
        if x is None or not x.exact:
            return None
        pair = [c, x] if self.r.random() < 0.5 else [x, c]
        t = self.add(self.r.choice(["and", "or", "xor", "cmpne", "cmpeq"]), pair, None, "bool", c.shape)
        if self.r.random() < 0.7:
            t = self.view(t)
        f = self.r.choice([c, x if x.shape == c.shape else c, self.const("bool", self.r.random() < 0.5)])
        if self.r.random() < 0.4:
            d = self.r.choice(["i32", "i8", "u8", "f32"])
            t, f = self.add("cast", [t], None, d, t.shape), self.add("cast", [f], None, d, f.shape)
        branches = [t, f] if self.r.random() < 0.5 else [f, t]
        return self.add("where", [c] + branches, None, t.dtype, c.shape)

    def view(self, a):
        """a at other elements, in a's shape: a flip of some axes, or a permute reshaped back to a's shape."""
        s = a.shape
        if len(s) >= 2 and self.r.random() < 0.5:
            order = list(reversed(range(len(s))))
            p = self.add("permute", [a], order, a.dtype, tuple(s[i] for i in order))
            return self.add("reshape", [p], None, a.dtype, s)
        axes = sorted(self.r.sample(range(len(s)), self.r.randint(1, len(s))))
        return self.add("flip", [a], axes, a.dtype, s)

    def guarded_division(self):
        """q = a / where(b == 0, k, b) with b often a bool cast to an integer, maybe max-reduced: the select that
        keeps a divisor from zero, as frontends write it."""
        a = self.pick(lambda n: n.exact and n.dtype != "bool" and not is_float(n.dtype) and len(n.shape) >= 1)
        if not a:
            return None
        b = self.pick(lambda n: n.exact and n.dtype == "bool" and n.shape == a.shape)
        b = self.add("cast", [b], None, a.dtype, a.shape) if b and self.r.random() < 0.7 else self.partner(a, exact=True)
        if b is None or not b.exact or b.dtype != a.dtype:
            return None
        zero = self.add("cmpeq", [b, self.const(a.dtype, 0)], None, "bool", b.shape)
        den = self.add("where", [zero, self.const(a.dtype, self.r.choice([1, 3, 7])), b], None, a.dtype, b.shape)
        q = self.add(self.r.choice(["idiv", "mod"]), [a, den], None, a.dtype, a.shape)
        if self.r.random() < 0.5:
            axes = sorted(self.r.sample(range(len(q.shape)), self.r.randint(1, len(q.shape))))
            out = tuple(1 if i in axes else d for i, d in enumerate(q.shape))
            q = self.add("reduce_axis", [q], [self.r.choice(["max", "add"]), axes], q.dtype, out)
        return q

    def cast(self):
        a = self.pick()
        if not a:
            return None
        d = self.random_dtype()
        if d == a.dtype:
            return None
        if is_float(a.dtype) and not is_float(d):
            if not a.exact or a.mag > 1e4:
                return None
            if d != "bool":  # float -> int is undefined out of range: scale into a safe range first
                a = self.add("trunc", [a], None, a.dtype, a.shape)
        if self.r.random() < 0.2 and a.exact and self.plain(a):
            bd = {"f32": "i32", "i32": "f32", "f16": "i16", "bf16": "i16", "i16": "f16", "f64": "i64", "i64": "f64",
                  "u32": "f32", "u8": "i8", "i8": "u8"}.get(a.dtype)
            if bd:
                return self.add("bitcast", [a], None, bd, a.shape)
        return self.add("cast", [a], None, d, a.shape)

    def plain(self, n):
        """No arithmetic on the way from the inputs: the bits are defined (a NaN an op computes has unspecified bits,
        which a bitcast would expose)."""
        if not is_float(n.dtype):
            return True
        by = self.p.by_name()
        work = [n]
        while work:
            x = work.pop()
            if x.op not in ("input", "const", "reshape", "permute", "expand", "pad", "shrink", "flip", "contiguous",
                            "cast", "where", "concat") or (x.op == "cast" and is_float(by[x.srcs[0]].dtype)):
                return False
            work.extend(by[s] for s in x.srcs if x.op != "cast")
        return True

    def movement(self):
        a = self.pick(lambda n: len(n.shape) > 0)
        if not a:
            return None
        s = list(a.shape)
        op = self.r.choice(["reshape", "permute", "expand", "pad", "shrink", "flip"])
        if op == "reshape":
            n = numel(s)
            if n == 0:
                return self.add("reshape", [a], None, a.dtype, tuple(reversed(s)))
            dims, rest = [], n
            while rest > 1 and len(dims) < 4:
                f = self.r.choice([d for d in range(1, rest + 1) if rest % d == 0][:8])
                dims.append(f)
                rest //= f
            dims.append(rest)
            if self.r.random() < 0.3:
                dims.insert(self.r.randrange(len(dims) + 1), 1)
            return self.add("reshape", [a], None, a.dtype, tuple(dims))
        if op == "permute":
            order = list(range(len(s)))
            self.r.shuffle(order)
            return self.add("permute", [a], order, a.dtype, tuple(s[i] for i in order))
        if op == "expand":
            ones = [i for i, d in enumerate(s) if d == 1]
            if not ones:
                return None
            t = list(s)
            for i in ones:
                t[i] = self.r.choice([1, 2, 3, 4, 8])
            if numel(t) > MAX_ELEMENTS:
                return None
            return self.add("expand", [a], None, a.dtype, tuple(t))
        if op == "pad":
            pads = [[self.r.choice([0, 0, 1, 2]), self.r.choice([0, 0, 1, 3])] for _ in s]
            t = tuple(d + p[0] + p[1] for d, p in zip(s, pads))
            if numel(t) > MAX_ELEMENTS:
                return None
            return self.add("pad", [a], pads, a.dtype, t)
        if op == "shrink":
            b = []
            for d in s:
                lo = self.r.randint(0, d)
                b.append([lo, self.r.randint(lo, d)])
            return self.add("shrink", [a], b, a.dtype, tuple(hi - lo for lo, hi in b))
        axes = self.r.sample(range(len(s)), self.r.randint(1, len(s)))
        return self.add("flip", [a], sorted(axes), a.dtype, tuple(s))

    def reduce(self):
        a = self.pick(lambda n: len(n.shape) > 0 and n.dtype != "bool")
        if not a:
            return None
        axes = sorted(self.r.sample(range(len(a.shape)), self.r.randint(1, len(a.shape))))
        kind = self.r.choice(["add", "add", "max", "mul"])
        k = numel([a.shape[i] for i in axes])
        if kind == "mul" and k > 8 and is_float(a.dtype):
            return None
        out = tuple(1 if i in axes else d for i, d in enumerate(a.shape))
        return self.add("reduce_axis", [a], [kind, axes], a.dtype, out)

    def contiguous(self):
        a = self.pick()
        return self.add("contiguous", [a], None, a.dtype, a.shape) if a else None

    # --- composites
    def float_operand(self, rank=None, min_rank=0):
        a = self.pick(lambda n: is_float(n.dtype) and len(n.shape) >= min_rank and (rank is None or len(n.shape) == rank)
                      and n.mag < 1e3)
        if a is None and self.inputs < 5:
            shape = self.random_shape()
            while len(shape) < min_rank or (rank is not None and len(shape) != rank):
                shape = self.random_shape()
            a = self.new_input("f32" if self.r.random() < 0.8 else "f16", shape)
        return a

    def activation(self):
        a = self.float_operand()
        if not a:
            return None
        op = self.r.choice(["relu", "leaky_relu", "sigmoid", "tanh", "gelu", "silu", "exp", "log", "clip", "erf"])
        arg = None
        if op == "leaky_relu":
            arg = 0.1
        if op == "gelu":
            arg = self.r.choice(['"tanh"', '"erf"'])
        if op == "clip":
            arg = [-0.5, 0.5]
        if op == "exp" and a.mag > 30:
            return None
        if op == "log" and not a.exact:
            return None
        return self.add(op, [a], arg, a.dtype, a.shape)

    def axis_composite(self):
        a = self.float_operand(min_rank=1)
        if not a or numel(a.shape) == 0:
            return None
        op = self.r.choice(["softmax", "log_softmax", "logsumexp", "mean", "var", "cumsum", "layernorm", "rmsnorm"])
        rank = len(a.shape)
        if op in ("softmax", "log_softmax", "logsumexp", "cumsum"):
            ax = self.r.randrange(rank)
            shape = a.shape if op != "logsumexp" else tuple(1 if i == ax else d for i, d in enumerate(a.shape))
            return self.add(op, [a], ax, a.dtype, shape)
        if op in ("mean", "var"):
            axes = sorted(self.r.sample(range(rank), self.r.randint(1, rank)))
            shape = tuple(1 if i in axes else d for i, d in enumerate(a.shape))
            if op == "var" and numel([a.shape[i] for i in axes]) < 2:
                return None
            return self.add(op, [a], axes if op == "mean" else [axes, 1], a.dtype, shape)
        axes = list(range(rank - self.r.randint(1, rank), rank))
        return self.add(op, [a], [axes, 1e-5], a.dtype, a.shape)

    def matmul(self):
        a = self.float_operand(min_rank=2)
        if not a:
            return None
        n = self.r.choice([1, 2, 3, 8, 16])
        bshape = a.shape[:-2] + (a.shape[-1], n)
        if numel(a.shape[:-1]) * n > MAX_ELEMENTS or numel(bshape) > MAX_ELEMENTS:
            return None
        b = self.pick(lambda x: x.dtype == a.dtype and x.shape == bshape and x.mag < 1e3) or self.new_input(a.dtype, bshape)
        return self.add("matmul", [a, b], None, a.dtype, a.shape[:-1] + (n,))

    def tc_matmul(self):
        """A half-precision matmul the tensor cores take on cuda (16 | m, k; 8 | n), maybe batched, with the second
        operand maybe transposed."""
        dtype = self.r.choice(["f16", "bf16"])
        batch = self.r.choice([(), (), (2,)])
        m, k, n = self.r.choice([16, 32, 48]), self.r.choice([16, 32]), self.r.choice([8, 16, 24])
        a = self.new_input(dtype, batch + (m, k))
        if self.r.random() < 0.3:
            bt = self.new_input(dtype, batch + (n, k))
            order = list(range(len(batch))) + [len(batch) + 1, len(batch)]
            b = self.add("permute", [bt], order, dtype, batch + (k, n))
        else:
            b = self.new_input(dtype, batch + (k, n))
        return self.add("matmul", [a, b], None, dtype, batch + (m, n))

    def pad_mode(self):
        a = self.pick(lambda n: len(n.shape) >= 1 and numel(n.shape) > 0)
        if not a:
            return None
        mode = self.r.choice(["constant", "edge", "reflect"])
        pads = []
        for d in a.shape:
            most = d - 1 if mode == "reflect" else 2
            pads.append([self.r.randint(0, min(2, most)), self.r.randint(0, min(2, most))])
        shape = tuple(d + p[0] + p[1] for d, p in zip(a.shape, pads))
        if numel(shape) > MAX_ELEMENTS:
            return None
        values = [0.0, 1.0, -2.5] if is_float(a.dtype) else [0, 1]  # exact in the dtype
        arg = [pads, f'"{mode}"'] + ([self.r.choice(values)] if mode == "constant" else [])
        return self.add("pad_mode", [a], arg, a.dtype, shape)

    def conv(self):
        x = self.float_operand(rank=4)
        if not x or numel(x.shape) == 0:
            return None
        N, C, H, W = x.shape
        transpose = self.r.random() < 0.3
        kh, kw = self.r.choice([1, 2, 3]), self.r.choice([1, 2, 3])
        s = [self.r.choice([1, 2]), self.r.choice([1, 2])]
        d = [self.r.choice([1, 1, 2]), 1]
        p = [self.r.choice([0, 1]) for _ in range(4)]
        g = self.r.choice([g for g in (1, 2, 3) if C % g == 0])
        if transpose:
            O = g * self.r.choice([1, 2])
            op_ = [0, 0]
            oh = (H - 1) * s[0] - p[0] - p[1] + d[0] * (kh - 1) + 1
            ow = (W - 1) * s[1] - p[2] - p[3] + d[1] * (kw - 1) + 1
            if oh < 1 or ow < 1 or N * O * oh * ow > MAX_ELEMENTS:
                return None
            w = self.new_input(x.dtype, (C, O // g, kh, kw))
            b = [self.new_input(x.dtype, (O,))] if self.r.random() < 0.5 else []
            return self.add("conv_transpose2d", [x, w] + b, [g, s, d, p, op_], x.dtype, (N, O, oh, ow))
        O = g * self.r.choice([1, 2, 4])
        oh = (H + p[0] + p[1] - d[0] * (kh - 1) - 1)
        ow = (W + p[2] + p[3] - d[1] * (kw - 1) - 1)
        if oh < 0 or ow < 0:
            return None
        oh, ow = oh // s[0] + 1, ow // s[1] + 1
        if N * O * oh * ow > MAX_ELEMENTS or numel((N, C, oh, ow, kh, kw)) * O > 8 * MAX_ELEMENTS:
            return None
        w = self.new_input(x.dtype, (O, C // g, kh, kw))
        b = [self.new_input(x.dtype, (O,))] if self.r.random() < 0.5 else []
        return self.add("conv2d", [x, w] + b, [g, s, d, p], x.dtype, (N, O, oh, ow))

    def pool(self):
        x = self.float_operand(min_rank=2)
        if not x:
            return None
        H, W = x.shape[-2:]
        k = [self.r.choice([1, 2, 3]), self.r.choice([1, 2])]
        s = [self.r.choice([1, 2]), self.r.choice([1, 2])]
        p = [self.r.choice([0, 1]) if k[0] > 1 else 0, 0, self.r.choice([0, 1]) if k[1] > 1 else 0, 0]
        oh, ow = H + p[0] + p[1] - k[0], W + p[2] + p[3] - k[1]
        if oh < 0 or ow < 0:
            return None
        shape = x.shape[:-2] + (oh // s[0] + 1, ow // s[1] + 1)
        if self.r.random() < 0.5:
            return self.add("max_pool2d", [x], [k, s, [1, 1], p], x.dtype, shape)
        return self.add("avg_pool2d", [x], [k, s, p, self.r.random() < 0.5], x.dtype, shape)

    def gather(self):
        x = self.pick(lambda n: len(n.shape) >= 1 and numel(n.shape) > 0 and n.dtype != "bool")
        if not x:
            return None
        if self.r.random() < 0.5 and len(x.shape) == 2:
            V, D = x.shape
            ishape = (self.r.choice([1, 2, 3, 5]),)
            idx = self.index_input(ishape, V)
            return self.add("embedding", [x, idx], None, x.dtype, ishape + (D,))
        ax = self.r.randrange(len(x.shape))
        ishape = tuple(self.r.randint(1, d) if i != ax else self.r.choice([1, 2, 3]) for i, d in enumerate(x.shape))
        idx = self.index_input(ishape, x.shape[ax])
        return self.add("gather", [x, idx], ax, x.dtype, ishape)

    def index_input(self, shape, n):
        """An integer index tensor mostly in [0, n): an input masked into range, sometimes out of range."""
        i = self.new_input("i32", shape)
        if self.r.random() < 0.15:
            return i  # values in [-8, 8): some fall outside: gather gives 0 there
        m = self.add("and", [i, self.const("i32", 1023)], None, "i32", shape)
        return self.add("mod", [m, self.const("i32", n)], None, "i32", shape)

    def concat(self):
        a = self.pick(lambda n: len(n.shape) >= 1)
        if not a:
            return None
        ax = self.r.randrange(len(a.shape))
        parts = [a]
        for _ in range(self.r.randint(1, 3)):
            shape = tuple(self.r.choice([0, 1, 2, 3]) if i == ax else d for i, d in enumerate(a.shape))
            b = self.pick(lambda n: n.dtype == a.dtype and n.shape == shape) or self.new_input(a.dtype, shape)
            parts.append(b)
        total = sum(p.shape[ax] for p in parts)
        shape = tuple(total if i == ax else d for i, d in enumerate(a.shape))
        if numel(shape) > MAX_ELEMENTS:
            return None
        self.r.shuffle(parts)
        return self.add("concat", parts, ax, a.dtype, shape)

    def arange(self):
        d = self.r.choice(["i32", "f32", "i64"])
        start, step = self.r.randint(-4, 4), self.r.choice([1, 2, 3, -1])
        stop = start + step * self.r.randint(0, 12)
        n = max(0, math.ceil((stop - start) / step))
        return self.add("arange", [], [start, stop, step], d, (n,))

    def batchnorm(self):
        x = self.float_operand(min_rank=2)
        if not x or not x.exact:
            return None
        C = x.shape[1]
        params = [self.new_input(x.dtype, (C,)) for _ in range(3)]
        v = self.new_input(x.dtype, (C,))
        var = self.add("mul", [v, v], None, x.dtype, (C,))
        return self.add("batchnorm", [x] + params + [var], 1e-5, x.dtype, x.shape)

    BUILDERS = [("unary_float", 10), ("unary_int", 3), ("binary", 25), ("logic", 4), ("compare", 6), ("where", 6),
                ("self_select", 3), ("guarded_division", 2), ("cast", 8), ("movement", 25), ("reduce", 10),
                ("contiguous", 2), ("activation", 6), ("axis_composite", 6), ("matmul", 4), ("tc_matmul", 1),
                ("pad_mode", 2), ("conv", 3), ("pool", 3), ("gather", 3), ("concat", 3), ("arange", 1),
                ("batchnorm", 1)]

    def generate(self):
        for _ in range(self.r.randint(1, 2)):
            self.new_input()
        made = 0
        tries = 0
        while made < self.max_ops and tries < self.max_ops * 20:
            tries += 1
            name = self.r.choices([b for b, _ in self.BUILDERS], weights=[w for _, w in self.BUILDERS])[0]
            before = len(self.p.nodes)
            n = getattr(self, name)()
            if n is None:
                del self.p.nodes[before:]  # drop helper nodes of a build that did not apply
                continue
            made += 1
        candidates = [n for n in self.p.nodes if n.err != INF and n.op not in ("input", "const")]
        if not candidates:
            candidates = [n for n in self.p.nodes if n.err != INF]
        outs = [candidates[-1]] + self.r.sample(candidates, min(len(candidates) - 1, self.r.randint(0, 2)))
        self.p.outputs = list(dict.fromkeys(o.name for o in outs))
        self.p.live()
        return analyze(self.p)


def generate(seed, max_ops=None):
    return Generator(seed, max_ops).generate()
