#!/usr/bin/env python3
"""Prints the lines of a doc between `<!-- MARKER -->` and `<!-- end ... -->`, for tests that compare a generated
table with the docs. Usage: doc_block.py FILE MARKER"""
import sys


def main():
    path, marker = sys.argv[1], sys.argv[2]
    lines = open(path).read().splitlines()
    start = lines.index(f"<!-- {marker} -->")
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("<!-- end"))
    print("\n".join(lines[start + 1:end]))


if __name__ == "__main__":
    main()
