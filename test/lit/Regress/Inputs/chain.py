"""Prints a chain of N elementwise ops: x, (x + 1.5) * 0.5, ... (deep-graph.test)."""
import sys

n = int(sys.argv[1])
print('%x = input "x" : f32[4]')
print("%a = const 1.5 : f32[]")
print("%b = const 0.5 : f32[]")
prev = "%x"
for i in range(n):
    print(f"%n{i} = {('add', 'mul')[i % 2]}({prev}, {('%a', '%b')[i % 2]})")
    prev = f"%n{i}"
print(f'%o = output({prev}) "y"')
print("%s = sink(%o)")
