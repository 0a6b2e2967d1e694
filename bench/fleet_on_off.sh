#!/usr/bin/env bash
# What the fleet view (EdgeNode objects, `kubectl get en`) costs the GM at N nodes: edge_fanout_bench
# twice in one run with the same arguments, first with --edge-nodes off (the baseline: the GM
# without the writer), then on. Prints, side by side with their ratio: the GM's memory per
# connected node (RSS after connect minus RSS at setup, over N), its VmHWM after connect and after
# the restart, the reconnect storm (every node resynced after the new GM was ready) and the new
# GM's API requests until the last resync; for "on" also how long until every EdgeNode showed its
# node connected, and the GM's EdgeNode requests for it.
#
#   bench/fleet_on_off.sh BUILD_DIR NODES [more edge_fanout_bench flags]
#
# Each run's full output is kept in $OUT (default /tmp/fleet-on-off). 10,000 nodes need about
# 25,000 descriptors in this process (the simulated nodes) and as many in the GM.
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:?usage: fleet_on_off.sh BUILD_DIR NODES [edge_fanout_bench flags]}"
nodes="${2:?usage: fleet_on_off.sh BUILD_DIR NODES [edge_fanout_bench flags]}"
shift 2
out="${OUT:-/tmp/fleet-on-off}"
mkdir -p "$out"
ulimit -n "$(ulimit -Hn)"

run() {
  local mode="$1"
  shift
  echo "fleet_on_off: --edge-nodes $mode ($nodes nodes)" >&2
  "$build/bench/edge_fanout_bench" --devapiserver "$build/tools/devapiserver/devapiserver" \
    --globalmanager "$build/globalmanager/globalmanager" --gen-certs scripts/gen-certs.sh \
    --crd deploy/crds --nodes "$nodes" --datasets-per-node 1 --baseline-writes 0 --restart \
    --gm-log-level warning --timeout 15m --dir "$out/$mode" --edge-nodes "$mode" "$@" \
    >"$out/$mode.txt" 2>"$out/$mode.log"
}
run off "$@"
run on "$@"

# Field F of the phase table's row for PHASE (2 seconds, 3 VmHWM MiB, 4 RSS MiB).
phase() { awk -v p="$2" -v f="$3" '$1 == p && NF == 7 { print $f }' "$out/$1.txt"; }
per_node_kib() { awk -v a="$(phase "$1" connect 4)" -v b="$(phase "$1" setup 4)" -v n="$nodes" \
  'BEGIN { printf "%.1f", (a - b) * 1024 / n }'; }
resync() { sed -n 's/.*nodes resynced \([0-9.]*\) s after ready.*/\1/p' "$out/$1.txt"; }
storm_requests() { sed -n "s/^restart: the new GM's API requests until the last resync: \([0-9]*\).*/\1/p" "$out/$1.txt"; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2fx", a / b; else print "-" }'; }
row() { printf '%-52s %12s %12s %8s\n' "$1" "$2" "$3" "$(ratio "$3" "$2")"; }

printf '%-52s %12s %12s %8s\n' "GM with $nodes nodes, --edge-nodes" off on on/off
row "memory per connected node (KiB)" "$(per_node_kib off)" "$(per_node_kib on)"
row "VmHWM after connect (MiB)" "$(phase off connect 3)" "$(phase on connect 3)"
row "VmHWM after restart (MiB)" "$(phase off restart 3)" "$(phase on restart 3)"
row "restart: all nodes resynced after ready (s)" "$(resync off)" "$(resync on)"
row "restart: new GM's API requests until last resync" "$(storm_requests off)" "$(storm_requests on)"
grep '^fleet: ' "$out/on.txt" || true
