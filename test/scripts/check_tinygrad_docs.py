#!/usr/bin/env python3
"""Every tinygrad op the exporter names (Ops.X in python/tgc_tinygrad) appears as `X` in docs/tinygrad.md.

  check_tinygrad_docs.py TGC_SOURCE_DIR
"""
import os
import re
import sys

root = sys.argv[1]
src = open(os.path.join(root, "python", "tgc_tinygrad", "__init__.py")).read()
doc = open(os.path.join(root, "docs", "tinygrad.md")).read()
ops = sorted(set(re.findall(r"Ops\.([A-Z_0-9]+)", src)))
missing = [o for o in ops if f"`{o}`" not in doc]
print(f"docs/tinygrad.md: {len(ops)} ops, {len(missing)} missing {' '.join(missing)}".rstrip())
sys.exit(1 if missing else 0)
