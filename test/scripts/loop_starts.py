"""Where the loops of an object file start: one line per backward branch's target, its offset in the section modulo 64.

usage: loop_starts.py K.o|DIR...   (a directory: its *.o files; reads `llvm-objdump -d`; a loop's start is the target of a branch back to it)
"""
import glob
import os
import re
import subprocess
import sys

BRANCH = re.compile(r'^\s*([0-9a-f]+):\s+j[a-z]+\s+(?:0x)?([0-9a-f]+) <')


def loop_starts(path):
    listing = subprocess.run(['llvm-objdump', '-d', '--no-show-raw-insn', path], capture_output=True, text=True,
                             check=True).stdout
    for line in listing.splitlines():
        m = BRANCH.match(line)
        if m and int(m.group(2), 16) < int(m.group(1), 16):
            yield int(m.group(2), 16)


def main():
    paths = []
    for arg in sys.argv[1:]:
        paths += sorted(glob.glob(os.path.join(arg, '*.o'))) if os.path.isdir(arg) else [arg]
    for path in paths:
        for start in loop_starts(path):
            print(f'loop start: offset {start:#x}, {start % 64} past a 64-byte line')


if __name__ == '__main__':
    main()
