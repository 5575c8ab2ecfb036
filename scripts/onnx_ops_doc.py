#!/usr/bin/env python3
"""Writes (or with --check, verifies) the operator table of docs/onnx.md from `tgc import --list-ops`, the
importer's own table (lib/Frontend/OnnxOps.def).

  onnx_ops_doc.py TGC DOCS_ONNX_MD [--check]
"""
import subprocess
import sys

BEGIN, END = "<!-- BEGIN generated: tgc import --list-ops -->", "<!-- END generated -->"


def table(tgc):
    out = subprocess.run([tgc, "import", "--list-ops"], check=True, capture_output=True, text=True).stdout
    rows = ["| operator | notes |", "|---|---|"]
    for line in out.splitlines():
        name, _, notes = line.partition(" ")
        rows.append(f"| {name} | {notes.strip()} |")
    return "\n".join(rows), len(rows) - 2


def main():
    tgc, path = sys.argv[1], sys.argv[2]
    text = open(path).read()
    head, _, rest = text.partition(BEGIN)
    _, _, tail = rest.partition(END)
    generated, count = table(tgc)
    new = f"{head}{BEGIN}\n{generated}\n{END}{tail}"
    if "--check" in sys.argv[3:]:
        if new != text:
            print(f"docs/onnx.md: the operator table differs from tgc import --list-ops; run {sys.argv[0]} to update")
            return 1
        print(f"docs/onnx.md: {count} operators, up to date")
        return 0
    open(path, "w").write(new)
    print(f"docs/onnx.md: {count} operators written")
    return 0


if __name__ == "__main__":
    sys.exit(main())
