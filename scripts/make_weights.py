#!/usr/bin/env python3
"""Writes deterministic weights for a .uop model into the safetensors file its `weights` directive names.

Every `weight` node gets values uniform in [-s, s) with s = 1/sqrt(fan_in) (fan_in: the product of all axes but
the first), from Python's random.Random seeded with the model's file name and the tensor's name, so the file is the
same on every machine. Usage: make_weights.py TGC MODEL.uop [--seed N]
"""
import json
import math
import os
import random
import struct
import subprocess
import sys

FORMATS = {"f32": ("F32", "f", 4), "f64": ("F64", "d", 8), "i32": ("I32", "i", 4), "i64": ("I64", "q", 8)}


def write_safetensors(path, tensors):
    header, blobs, offset = {}, [], 0
    for name in sorted(tensors):
        dtype, shape, values = tensors[name]
        st, fmt, size = FORMATS[dtype]
        blob = struct.pack("<" + fmt * len(values), *values)
        header[name] = {"dtype": st, "shape": shape, "data_offsets": [offset, offset + len(blob)]}
        blobs.append(blob)
        offset += len(blob)
    h = json.dumps(header, separators=(",", ":")).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))
    os.replace(tmp, path)


def main():
    tgc, model = sys.argv[1], sys.argv[2]
    seed = int(sys.argv[sys.argv.index("--seed") + 1]) if "--seed" in sys.argv else 0
    info = json.loads(subprocess.run([tgc, "info", model, "--json"], check=True, capture_output=True).stdout)
    if not info["weights_files"]:
        sys.exit(f"{model} names no weights file")
    tensors = {}
    for w in info["weights"]:
        if w["dtype"] not in FORMATS:
            sys.exit(f"weight {w['name']}: dtype {w['dtype']} is not supported here")
        n = math.prod(w["shape"])
        fan_in = math.prod(w["shape"][1:]) if len(w["shape"]) > 1 else n
        scale = 1 / math.sqrt(max(fan_in, 1))
        rng = random.Random(f"{seed}:{os.path.basename(model)}:{w['name']}")
        if w["dtype"].startswith("f"):
            values = [struct.unpack("<f", struct.pack("<f", rng.uniform(-scale, scale)))[0] for _ in range(n)]
        else:
            values = [rng.randrange(-8, 8) for _ in range(n)]
        tensors[w["name"]] = (w["dtype"], w["shape"], values)
    path = os.path.join(os.path.dirname(model), info["weights_files"][0])
    write_safetensors(path, tensors)
    print(f"wrote {len(tensors)} tensors to {path}")


if __name__ == "__main__":
    main()
