#!/usr/bin/env python3
"""Live heap between two moments of a heaptrack run, by the GM code that allocated it.

heaptrack_print answers for the peak or the end; a phase's cost is the live heap at its end less
the live heap at its start. This reads heaptrack's interpreted data (v3 text lines: s strings,
i instruction pointers, t traces, a allocation kinds, + / - allocations and frees, c time in ms,
R resident pages), prints the heap and RSS every 2 s, and the difference between T1 and T2 (seconds
since the GM started) grouped by the innermost nereid:: frames of each allocation's stack.

usage: zstd -dc /tmp/gm-heap.zst | heap_window.py T1 T2 [ROWS] [FRAMES]
"""
import collections
import re
import sys

# Allocator frames skipped when naming a stack.
ALLOCATOR = re.compile(r"^(malloc|calloc|realloc|operator new|__gnu_cxx::new_allocator|"
                       r"std::allocator|std::__new_allocator|gpr_malloc|gpr_zalloc|CRYPTO_malloc|"
                       r"CRYPTO_zalloc|\?)")


class Trace:
    def __init__(self, t1_ms, t2_ms):
        self.t1_ms, self.t2_ms = t1_ms, t2_ms
        self.strings = [""]
        self.ips = [None]            # instruction pointer -> function names (inlined first)
        self.traces = [(0, 0)]       # trace -> (instruction pointer, parent trace)
        self.kinds = []              # allocation kind -> (size, trace)
        self.live = []               # allocation kind -> live count
        self.heap = 0
        self.rss_pages = 0
        self.snapshots = {}
        self.timeline = []

    def read(self, lines):
        next_tick = 0
        for line in lines:
            tag = line[0]
            if tag == "+":
                kind = int(line[2:], 16)
                self.live[kind] += 1
                self.heap += self.kinds[kind][0]
            elif tag == "-":
                kind = int(line[2:], 16)
                self.live[kind] -= 1
                self.heap -= self.kinds[kind][0]
            elif tag == "a":
                _, size, trace = line.split()
                self.kinds.append((int(size, 16), int(trace, 16)))
                self.live.append(0)
            elif tag == "t":
                _, ip, parent = line.split()
                self.traces.append((int(ip, 16), int(parent, 16)))
            elif tag == "i":
                fields = line.split()[3:]
                names = [self.strings[int(f, 16)] if int(f, 16) else "?" for f in fields[0::3]]
                self.ips.append(names or ["?"])
            elif tag == "s":
                parts = line.rstrip("\n").split(" ", 2)
                self.strings.append(parts[2] if len(parts) > 2 else "")
            elif tag == "R":
                self.rss_pages = int(line[2:], 16)
            elif tag == "c":
                now = int(line[2:], 16)
                for name, at in (("t1", self.t1_ms), ("t2", self.t2_ms)):
                    if name not in self.snapshots and now >= at:
                        self.snapshots[name] = (now, list(self.live), self.heap)
                if now >= next_tick:
                    self.timeline.append((now / 1000, self.heap / 2**20,
                                          self.rss_pages * 4096 / 2**20))
                    next_tick = now + 2000

    def stack(self, trace):
        frames = []
        while trace and len(frames) < 40:
            ip, trace = self.traces[trace]
            frames.extend(self.ips[ip])
        frames = [re.sub(r"\(.*", "", f)[:90] for f in frames]
        return [f for f in frames if not ALLOCATOR.match(f)]


def name_of(frames, depth):
    ours = [f for f in frames if "nereid::" in f and "nereid::edge::v1" not in f]
    if not ours:
        return " < ".join(frames[-depth:])
    inner = frames[max(0, frames.index(ours[0]) - 1)][:50]
    return inner + " @ " + " < ".join(ours[:depth])


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    rows = int(sys.argv[3]) if len(sys.argv) > 3 else 30
    depth = int(sys.argv[4]) if len(sys.argv) > 4 else 4
    trace = Trace(float(sys.argv[1]) * 1000, float(sys.argv[2]) * 1000)
    trace.read(sys.stdin)
    print("heap / RSS MiB every 2 s: " +
          " ".join("%.0fs:%.0f/%.0f" % point for point in trace.timeline))
    if "t1" not in trace.snapshots or "t2" not in trace.snapshots:
        sys.exit("T1 or T2 is past the end of the run")
    (at1, live1, heap1), (at2, live2, heap2) = trace.snapshots["t1"], trace.snapshots["t2"]
    print("live heap %.1f MiB at %.1f s, %.1f MiB at %.1f s: %+.1f MiB" %
          (heap1 / 2**20, at1 / 1000, heap2 / 2**20, at2 / 1000, (heap2 - heap1) / 2**20))
    grown = collections.Counter()
    count = collections.Counter()
    for kind, (size, stack) in enumerate(trace.kinds):
        delta = (live2[kind] if kind < len(live2) else 0) - (live1[kind] if kind < len(live1) else 0)
        if delta:
            key = name_of(trace.stack(stack), depth)
            grown[key] += delta * size
            count[key] += delta
    for key, size in sorted(grown.items(), key=lambda item: -abs(item[1]))[:rows]:
        print("%8.2f MiB %8d allocations  %s" % (size / 2**20, count[key], key[:400]))


if __name__ == "__main__":
    main()
