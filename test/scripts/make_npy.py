#!/usr/bin/env python3
"""Writes a small .npy file for tests: make_npy.py PATH DTYPE D0,D1,... [--truncate BYTES] [--values v,v,...]
[--each N] [--tile N] [--fill V] [--set I=V,...]

DTYPE is f32, f64, i32, i64 or u8; the values default to 0, 1, 2, ... ; --each repeats every value of --values N
times in place, --tile repeats the whole list N times (a, a, b, b / a, b, a, b: all pairs of two lists); --truncate cuts the file to BYTES bytes."""
import struct
import sys

FMT = {"f32": ("<f4", "f"), "f64": ("<f8", "d"), "i32": ("<i4", "i"), "i64": ("<i8", "q"), "u8": ("|u1", "B")}


def main():
    path, dtype, dims = sys.argv[1], sys.argv[2], sys.argv[3]
    shape = [int(d) for d in dims.split(",") if d]
    n = 1
    for d in shape:
        n *= d
    values = list(range(n))
    if "--values" in sys.argv:
        values = [float(v) if dtype.startswith("f") else int(v) for v in sys.argv[sys.argv.index("--values") + 1].split(",")]
        if "--each" in sys.argv:
            values = [v for v in values for _ in range(int(sys.argv[sys.argv.index("--each") + 1]))]
        if "--tile" in sys.argv:
            values = values * int(sys.argv[sys.argv.index("--tile") + 1])
    if "--fill" in sys.argv:  # every value, then --set I=V,I=V changes single ones
        values = [float(sys.argv[sys.argv.index("--fill") + 1])] * n
    if "--set" in sys.argv:
        for item in sys.argv[sys.argv.index("--set") + 1].split(","):
            i, v = item.split("=")
            values[int(i)] = float(v) if dtype.startswith("f") else int(v)
    descr, fmt = FMT[dtype]
    shape_txt = "(%s,)" % shape[0] if len(shape) == 1 else "(" + ", ".join(map(str, shape)) + ")"
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape_txt)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    data = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode() + struct.pack("<" + fmt * n, *values)
    if "--truncate" in sys.argv:
        data = data[: int(sys.argv[sys.argv.index("--truncate") + 1])]
    open(path, "wb").write(data)


if __name__ == "__main__":
    main()
