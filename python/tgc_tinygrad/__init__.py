"""tgc_tinygrad: export a tinygrad computation as a tgc model (.uop text and a safetensors file of its weights).

tinygrad builds every Tensor lazily as a graph of UOps; tgc's tensor-level ops are the same ones (movement,
elementwise, reduce), so the export is a walk over that graph, node for node, before tinygrad schedules anything:

    from tinygrad import Tensor
    from tgc_tinygrad import export
    x = Tensor.empty(128, 1, 28, 28)
    export({"logits": model(x)}, inputs={"x": x}, weights=nn.state.get_state_dict(model), path="mnist.uop")
    # then: tgc compile mnist.uop -o out

Tensors in `inputs` become `input` nodes (their data is given at run time); every other buffer the outputs read
becomes a `weight`, named after `weights` (a state dict) where it appears there, else `buffer<N>`, with its current
data written to the safetensors file. The graph is what tinygrad 0.14 builds (tinygrad.uop.ops.Ops); an op without a
tgc counterpart raises ExportError naming it.
"""

from __future__ import annotations

import json
import os
import struct

import numpy as np
from tinygrad import Tensor, dtypes
from tinygrad.uop.ops import Ops, UOp

__all__ = ["export", "ExportError"]


class ExportError(Exception):
    pass


# tinygrad dtype name -> tgc dtype, safetensors dtype, numpy dtype
_DTYPES = {
    "bool": ("bool", "BOOL", np.bool_), "signed char": ("i8", "I8", np.int8),
    "unsigned char": ("u8", "U8", np.uint8), "short": ("i16", "I16", np.int16),
    "unsigned short": ("u16", "U16", np.uint16), "int": ("i32", "I32", np.int32),
    "unsigned int": ("u32", "U32", np.uint32), "long": ("i64", "I64", np.int64),
    "unsigned long": ("u64", "U64", np.uint64), "half": ("f16", "F16", np.float16),
    "__bf16": ("bf16", "BF16", None), "float": ("f32", "F32", np.float32), "double": ("f64", "F64", np.float64),
}

# elementwise ops with the same meaning in both IRs
_ALU = {
    Ops.ADD: "add", Ops.SUB: "sub", Ops.MUL: "mul", Ops.MAX: "max", Ops.CMPLT: "cmplt", Ops.CMPNE: "cmpne",
    Ops.CMPEQ: "cmpeq", Ops.WHERE: "where", Ops.NEG: "neg", Ops.RECIPROCAL: "recip", Ops.EXP2: "exp2",
    Ops.LOG2: "log2", Ops.SIN: "sin", Ops.SQRT: "sqrt", Ops.TRUNC: "trunc", Ops.CDIV: "idiv", Ops.CMOD: "mod",
    Ops.AND: "and", Ops.OR: "or", Ops.XOR: "xor", Ops.SHL: "shl", Ops.SHR: "shr", Ops.POW: "pow",
    Ops.FDIV: "fdiv", Ops.MULACC: "mulacc", Ops.FLOORDIV: "floordiv", Ops.FLOORMOD: "floormod",
}
_IDENTITY = {Ops.COPY, Ops.CONTIGUOUS, Ops.CONTIGUOUS_BACKWARD, Ops.DETACH, Ops.NOOP}
_COMPARE = {Ops.CMPLT, Ops.CMPNE, Ops.CMPEQ}


def _is_weak(u: UOp) -> bool:
    return u.dtype.name.startswith("weak") or u.op is Ops.CONST


def _dtype(dt) -> str:
    name = dt.name
    if name not in _DTYPES:
        raise ExportError(f"tinygrad dtype {dt} has no tgc counterpart")
    return _DTYPES[name][0]


def _shape(s) -> str:
    return "[" + ", ".join(str(int(d)) for d in s) + "]"


def _float_text(v: float) -> str:
    if v != v:
        return "nan"
    if v in (float("inf"), float("-inf")):
        return "inf" if v > 0 else "-inf"
    t = repr(float(v))
    return t if ("." in t or "e" in t) else t + ".0"


def _const_text(value, dtype: str) -> str:
    if dtype == "bool":
        return "true" if value else "false"
    if dtype.startswith(("f", "bf")):
        return _float_text(float(value))
    return str(int(value))


class _Writer:
    def __init__(self, inputs: dict[UOp, tuple[str, Tensor]], weights: dict[UOp, str]):
        self.lines: list[str] = []
        self.names: dict[UOp, str] = {}
        self.inputs, self.weight_names = inputs, weights
        self.weights: dict[str, np.ndarray] = {}
        self.weak_names: dict[tuple[UOp, str], str] = {}
        self.count = 0

    def emit(self, text: str) -> str:
        name = f"%{self.count}"
        self.count += 1
        self.lines.append(f"{name} = {text}")
        return name

    def const(self, u: UOp, dtype: str) -> str:
        return self.emit(f"const {_const_text(u.arg, dtype)} : {dtype}[]")  # rank 0: broadcasts

    def weak(self, u: UOp, dtype: str) -> str:
        """A weakly typed value (a constant, maybe reshaped or expanded) emitted at the dtype its user gives it."""
        key = (u, dtype)
        if key not in self.weak_names:
            if u.op is Ops.CONST:
                self.weak_names[key] = self.const(u, dtype)
            else:
                single = u.op not in _ALU and u.op not in (Ops.CAST, Ops.BITCAST)
                self.node(u, dtype, self.weak(u.src[0], dtype) if single else None)
                self.weak_names[key] = self.names.pop(u)
        return self.weak_names[key]

    def operand(self, node: UOp, i: int, node_dtype: str) -> str:
        """Operand i of node; constants take the dtype the operation gives them (tinygrad's are weakly typed)."""
        s = node.src[i]
        if not _is_weak(s):
            return self.names[s]
        if node.op is Ops.WHERE:
            dtype = "bool" if i == 0 else node_dtype
        elif node.op in _COMPARE:
            other = node.src[1 - i]
            dtype = _dtype(other.dtype) if not _is_weak(other) else "f32"
        elif node.op in (Ops.CAST, Ops.BITCAST):
            dtype = "f32" if s.dtype.name == "weakfloat" else "i32" if s.dtype.name == "weakint" else _dtype(s.dtype)
        else:
            dtype = node_dtype
        return self.weak(s, dtype)

    def leaf(self, u: UOp) -> str:
        """A buffer: an input (at its tensor's shape) or a weight with its data."""
        dtype = _dtype(u.dtype)
        if u in self.inputs:
            name, t = self.inputs[u]
            x = self.emit(f'input "{name}" : {dtype}{_shape(t.shape)}')
            return self.emit(f"reshape({x}) : {dtype}{_shape(u.shape)}") if tuple(t.shape) != tuple(u.shape) else x
        name, t = self.weight_names.get(u, (f"buffer{len(self.weights)}", None))
        shape = tuple(t.shape) if t is not None else tuple(u.shape)
        self.weights[name] = _buffer_data(u).reshape(shape)
        w = self.emit(f'weight "{name}" : {dtype}{_shape(shape)}')
        return self.emit(f"reshape({w}) : {dtype}{_shape(u.shape)}") if shape != tuple(u.shape) else w

    def node(self, u: UOp, weak_dtype: str | None = None, weak_src: str | None = None):
        op = u.op
        if weak_dtype is None and (op in (Ops.CONST, Ops.STACK) or _is_weak(u)):
            return  # weakly typed values are emitted where they are used; STACKs only carry movement arguments
        dtype = weak_dtype or _dtype(u.dtype)
        shape = _shape(u.shape)
        x = None
        if weak_src is not None:
            x = weak_src
        elif u.src and _is_weak(u.src[0]) and op not in _ALU and op not in (Ops.CAST, Ops.BITCAST):
            x = self.weak(u.src[0], dtype)  # a constant moved (reshaped, expanded) before its use
        elif u.src:
            x = self.names.get(u.src[0])
        if op is Ops.BUFFER:
            self.names[u] = self.leaf(u)
        elif op in _IDENTITY:
            self.names[u] = x
        elif op is Ops.RESHAPE:
            self.names[u] = self.emit(f"reshape({x}) : {dtype}{shape}")
        elif op is Ops.PERMUTE:
            self.names[u] = self.emit(f"permute({x}) [{', '.join(map(str, u.marg))}] : {dtype}{shape}")
        elif op is Ops.EXPAND:  # new leading axes: reshape to size 1 there, then expand
            ps = u.src[0].shape
            ones = (1,) * (len(u.shape) - len(ps)) + tuple(ps)
            r = self.emit(f"reshape({x}) : {dtype}{_shape(ones)}") if len(ones) != len(ps) else x
            self.names[u] = self.emit(f"expand({r}) : {dtype}{shape}") if tuple(ones) != tuple(u.shape) else r
        elif op is Ops.PAD:
            ps = u.src[0].shape
            pads = ", ".join(f"[{int(o)}, {int(sz) - int(o) - int(p)}]" for (o, sz), p in zip(u.marg, ps))
            self.names[u] = self.emit(f"pad({x}) [{pads}] : {dtype}{shape}")
        elif op is Ops.SHRINK:
            bounds = ", ".join(f"[{int(o)}, {int(o) + int(sz)}]" for o, sz in u.marg)
            self.names[u] = self.emit(f"shrink({x}) [{bounds}] : {dtype}{shape}")
        elif op is Ops.FLIP:
            axes = ", ".join(str(i) for i, f in enumerate(u.marg) if f)
            self.names[u] = self.emit(f"flip({x}) [{axes}] : {dtype}{shape}") if axes else x
        elif op is Ops.REDUCE:  # reduce the leading k axes and drop them
            rop, k = u.arg
            names = {Ops.ADD: "add", Ops.MUL: "mul", Ops.MAX: "max"}
            if rop not in names:
                raise ExportError(f"reduce with {rop} has no tgc counterpart")
            ps = u.src[0].shape
            kept = (1,) * k + tuple(ps[k:])
            r = self.emit(f"reduce_axis({x}) [{names[rop]}, [{', '.join(map(str, range(k)))}]] : {dtype}{_shape(kept)}")
            self.names[u] = self.emit(f"reshape({r}) : {dtype}{shape}") if k else r
        elif op is Ops.CAST:
            self.names[u] = self.emit(f"cast({self.operand(u, 0, dtype)}) : {dtype}{shape}")
        elif op is Ops.BITCAST:
            self.names[u] = self.emit(f"bitcast({self.operand(u, 0, dtype)}) : {dtype}{shape}")
        elif op in _ALU:
            args = ", ".join(self.operand(u, i, dtype) for i in range(len(u.src)))
            self.names[u] = self.emit(f"{_ALU[op]}({args}) : {dtype}{shape}")
        else:
            raise ExportError(f"tinygrad op {op} has no tgc counterpart")


def _buffer_data(u: UOp) -> np.ndarray:
    """The current contents of a realized tinygrad buffer, flat."""
    buf = u.buffer
    if not buf.is_allocated():
        raise ExportError(f"buffer of shape {u.shape} has no data: realize the weights before exporting")
    npdt = _DTYPES[u.dtype.name][2]
    raw = bytes(buf.as_memoryview())
    if npdt is None:  # bfloat16: kept as raw 16-bit words
        return np.frombuffer(raw, dtype=np.uint16).copy()
    return np.frombuffer(raw, dtype=npdt).copy()


def _base_buffer(t: Tensor) -> UOp:
    t.realize()
    base = t.uop.base
    if base.op is not Ops.BUFFER:
        raise ExportError(f"tensor of shape {t.shape} is not backed by a buffer after realize ({base.op})")
    return base


def _write_safetensors(path: str, tensors: dict[str, np.ndarray], dtypes_: dict[str, str]):
    header, offset, blobs = {}, 0, []
    for name in sorted(tensors):
        data = np.ascontiguousarray(tensors[name]).tobytes()
        header[name] = {"dtype": dtypes_[name], "shape": list(tensors[name].shape), "data_offsets": [offset,
                                                                                                   offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    head = json.dumps(header, separators=(",", ":")).encode()
    head += b" " * ((8 - len(head) % 8) % 8)
    with open(path + ".tmp", "wb") as f:
        f.write(struct.pack("<Q", len(head)) + head + b"".join(blobs))
    os.replace(path + ".tmp", path)


def export(outputs: dict[str, Tensor], inputs: dict[str, Tensor], path: str,
           weights: dict[str, Tensor] | None = None, weights_path: str | None = None) -> str:
    """Write the computation of `outputs` as a tgc model at `path` (.uop) and its weights beside it; returns the
    .uop text. `inputs` are fed at run time; `weights` (e.g. nn.state.get_state_dict(model)) names the rest."""
    input_map = {_base_buffer(t): (name, t) for name, t in inputs.items()}
    weight_map = {}
    for name, t in (weights or {}).items():
        b = _base_buffer(t)
        if b not in input_map:
            weight_map.setdefault(b, (name, t))
    w = _Writer(input_map, weight_map)
    roots = [t.uop for t in outputs.values()]
    for u in UOp.sink(*roots).toposort():
        if u.op is Ops.SINK:
            continue
        w.node(u)
    outs = []
    for (name, t), u in zip(outputs.items(), roots):
        if u not in w.names:
            raise ExportError(f"output '{name}' is a constant; tgc outputs are computed tensors")
        outs.append(w.emit(f'output({w.names[u]}) "{name}" : {_dtype(u.dtype)}{_shape(u.shape)}'))
    w.emit(f"sink({', '.join(outs)})")
    w.lines = _live(w.lines)
    weights_path = weights_path or os.path.splitext(path)[0] + ".safetensors"
    head = [f"// exported from tinygrad by tgc_tinygrad"]
    if w.weights:
        rel = os.path.relpath(os.path.abspath(weights_path), os.path.dirname(os.path.abspath(path)))
        head.append(f'weights "{rel}"')
        st = {n: _DTYPES[_dtype_name(a)][1] for n, a in w.weights.items()}
        _write_safetensors(weights_path, w.weights, st)
    text = "\n".join(head + w.lines) + "\n"
    with open(path + ".tmp", "w") as f:
        f.write(text)
    os.replace(path + ".tmp", path)
    return text


def _live(lines: list[str]) -> list[str]:
    """The statements the last one (the sink) reaches, renumbered: constants emitted for a use that folded away go."""
    import re
    used, kept = {lines[-1].split(" = ")[0]}, []
    for line in reversed(lines):
        name, _, rhs = line.partition(" = ")
        if name in used:
            kept.append(line)
            used.update(re.findall(r"%\d+", rhs))
    kept.reverse()
    number = {line.split(" = ")[0]: f"%{i}" for i, line in enumerate(kept)}
    return [re.sub(r"%\d+", lambda m: number[m.group(0)], line) for line in kept]


def _dtype_name(a: np.ndarray) -> str:
    for name, (_, _, npdt) in _DTYPES.items():
        if npdt is not None and a.dtype == npdt:
            return name
    if a.dtype == np.uint16:
        return "__bf16"
    raise ExportError(f"array dtype {a.dtype} has no safetensors counterpart")
