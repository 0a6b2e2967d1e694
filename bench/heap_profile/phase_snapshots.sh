#!/bin/bash
# Runs edge_fanout_bench with --settle and snapshots the GM after the create and the report phase:
# /proc/<gm>/status and glibc's malloc_info (through gdb), so the report phase's memory can be
# split into live heap and memory malloc keeps without handing it back (see bench/RESULTS.md,
# "Report absorption"). Run from the build directory:
#
#   ../bench/heap_profile/phase_snapshots.sh globalmanager/globalmanager /tmp/snap 1000
#   ../bench/heap_profile/malloc_arenas.py /tmp/snap.create.malloc.xml /tmp/snap.report.malloc.xml
#
# GM may be a wrapper script that adds flags (GMBIN then names the binary it runs, for pgrep).
set -u
gm=$1 out=$2 nodes=${3:-1000}
gm_binary=${GMBIN:-$gm}
nice -n 10 bench/edge_fanout_bench --devapiserver tools/devapiserver/devapiserver \
  --gen-certs ../scripts/gen-certs.sh --crd ../deploy/crds --timeout 1800 --gm-log-level warning \
  --globalmanager "$gm" --nodes "$nodes" --datasets-per-node 10 --baseline-writes 0 --settle 12 \
  >"$out.txt" 2>&1 &
bench=$!

snapshot() {
  local pid
  pid=$(pgrep -f "^$gm_binary " | head -1)
  if [ -z "$pid" ]; then echo "no GM process" >"$out.$1.status"; return; fi
  grep -E "VmRSS|RssAnon|Threads" "/proc/$pid/status" >"$out.$1.status"
  gdb -p "$pid" -batch -ex "call (void*)fopen(\"$out.$1.malloc.xml\", \"w\")" \
    -ex 'call (int)malloc_info(0, $1)' -ex 'call (int)fclose($1)' >/dev/null 2>&1
}

taken_create=0 taken_report=0
while kill -0 "$bench" 2>/dev/null; do
  # Two seconds into the settle pause: the phase's last answers have been processed.
  if [ $taken_create = 0 ] && grep -q "settling .* after create" "$out.txt"; then
    sleep 2; snapshot create; taken_create=1
  fi
  if [ $taken_report = 0 ] && grep -q "settling .* after report" "$out.txt"; then
    sleep 2; snapshot report; taken_report=1
  fi
  sleep 0.2
done
wait "$bench"
