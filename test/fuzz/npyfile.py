"""Reading .npy files without numpy, for the test scripts: dtype, shape, float values and raw bit patterns."""
import re
import struct

# descr -> (dtype name in .uop, struct format of the value, struct format of the bits)
DESCR = {
    "<f4": ("f32", "f", "I"), "<f8": ("f64", "d", "Q"), "<f2": ("f16", "e", "H"), "<V2": ("bf16", None, "H"),
    "|b1": ("bool", "?", "B"), "|i1": ("i8", "b", "B"), "|u1": ("u8", "B", "B"), "<i2": ("i16", "h", "H"),
    "<u2": ("u16", "H", "H"), "<i4": ("i32", "i", "I"), "<u4": ("u32", "I", "I"), "<i8": ("i64", "q", "Q"),
    "<u8": ("u64", "Q", "Q"),
}


class Npy:
    def __init__(self, dtype, shape, values, bits):
        self.dtype, self.shape, self.values, self.bits = dtype, shape, values, bits


def read_npy(path):
    data = open(path, "rb").read()
    if data[:6] != b"\x93NUMPY":
        raise ValueError(f"{path}: not a .npy file")
    major = data[6]
    hlen_size = 2 if major == 1 else 4
    hlen = int.from_bytes(data[8:8 + hlen_size], "little")
    header = data[8 + hlen_size:8 + hlen_size + hlen].decode()
    descr = re.search(r"'descr': '([^']+)'", header).group(1)
    shape = tuple(int(d) for d in re.search(r"'shape': \(([^)]*)\)", header).group(1).replace(",", " ").split())
    dtype, vfmt, bfmt = DESCR[descr]
    body = data[8 + hlen_size + hlen:]
    n = len(body) // struct.calcsize(bfmt)
    bits = list(struct.unpack("<" + bfmt * n, body[:n * struct.calcsize(bfmt)]))
    if dtype == "bf16":
        values = [struct.unpack("<f", struct.pack("<I", b << 16))[0] for b in bits]
    else:
        values = list(struct.unpack("<" + vfmt * n, body[:n * struct.calcsize(vfmt)]))
    return Npy(dtype, shape, values, bits)
