#!/usr/bin/env python3
"""docs/ grows with the code: every op of Ops.def has a section in docs/ops.md and every pass of Passes.def one in
docs/passes.md. Usage: check_docs.py SOURCE_DIR"""
import re
import sys


def main():
    src = sys.argv[1]
    ops = re.findall(r'^TGC_OP\(\w+,\s*"([a-z_0-9]+)"', open(f"{src}/lib/IR/Ops.def").read(), re.M)
    passes = re.findall(r'^TGC_PASS\("([a-z\-0-9]+)"', open(f"{src}/lib/Passes/Passes.def").read(), re.M)
    op_doc = set(re.findall(r"^### (\S+)$", open(f"{src}/docs/ops.md").read(), re.M))
    pass_doc = set(re.findall(r"^## (\S+)$", open(f"{src}/docs/passes.md").read(), re.M))
    missing = [f"op '{o}' in docs/ops.md" for o in ops if o not in op_doc]
    missing += [f"pass '{p}' in docs/passes.md" for p in passes if p not in pass_doc]
    for m in missing:
        print("MISSING", m)
    print(f"docs: {len(ops)} ops, {len(passes)} passes, {len(missing)} missing")
    return 1 if missing or not ops or not passes else 0


if __name__ == "__main__":
    sys.exit(main())
