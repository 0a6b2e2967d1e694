#!/bin/sh
# Runs a globalmanager under heaptrack's preload library, for edge_fanout_bench --globalmanager.
# Unlike `heaptrack PROGRAM`, it keeps the GM's pid (exec) and its stdout clean, so the bench can
# read the GM's first stdout line and /proc/<pid>/status. Heaptrack (Debian package `heaptrack`)
# is a measurement tool only, not a build dependency.
#
#   GM=build/globalmanager/globalmanager OUT=/tmp/gm-heap \
#     build/bench/edge_fanout_bench --globalmanager bench/heap_profile/gm_under_heaptrack.sh ...
#   heaptrack_print -f /tmp/gm-heap.zst --flamegraph-cost-type peak -F /tmp/gm-heap.folded
#   bench/heap_profile/heap_categories.py /tmp/gm-heap.folded 1000
set -e
: "${GM:?GM=path of the globalmanager binary}"
out=${OUT:-/tmp/gm-heap}
rm -f "$out.fifo"
mkfifo "$out.fifo"
/usr/lib/heaptrack/libexec/heaptrack_interpret <"$out.fifo" | zstd -q -c >"$out.zst" &
exec env LD_PRELOAD=/usr/lib/heaptrack/libheaptrack_preload.so DUMP_HEAPTRACK_OUTPUT="$out.fifo" \
  "$GM" "$@"
