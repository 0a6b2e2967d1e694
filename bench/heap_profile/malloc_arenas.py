#!/usr/bin/env python3
"""Sums glibc malloc_info XML: bytes in use and bytes malloc holds free, over all arenas.

With two files (before, after) it prints the difference too: what a phase added to live memory
and what it left with malloc (freed, not handed back to the system).

usage: malloc_arenas.py BEFORE.xml [AFTER.xml]
"""
import re
import sys


def totals(path):
    text = open(path).read()
    system = free = 0
    for body in re.findall(r'<heap nr="\d+">(.*?)</heap>', text, re.S):
        system += int(re.search(r'<system type="current" size="(\d+)"', body).group(1))
        sizes = re.search(r'<total type="fast" count="\d+" size="(\d+)"/>\s*'
                          r'<total type="rest" count="\d+" size="(\d+)"', body)
        free += int(sizes.group(1)) + int(sizes.group(2))
    return system - free, free


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    rows = [(path, *totals(path)) for path in sys.argv[1:3]]
    for path, used, free in rows:
        print("%-40s in use %7.1f MiB, free in malloc %6.1f MiB" % (path, used / 2**20, free / 2**20))
    if len(rows) == 2:
        print("difference: in use %+.1f MiB, free in malloc %+.1f MiB" %
              ((rows[1][1] - rows[0][1]) / 2**20, (rows[1][2] - rows[0][2]) / 2**20))


if __name__ == "__main__":
    main()
