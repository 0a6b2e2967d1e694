#!/bin/bash
# Runs a command beside N busy loops pinned to CPU C, then stops them: load that competes with
# whatever else is pinned there (the starved-GM reconnect storm in bench/RESULTS.md, "Reconnect
# storms with a starved GM").
#   bench/with_busy_loops.sh C N COMMAND [ARG]...
set -u
if [ $# -lt 3 ]; then
  echo "usage: $0 CPU LOOPS COMMAND [ARG]..." >&2
  exit 2
fi
cpu=$1 loops=$2
shift 2
pids=()
for _ in $(seq "$loops"); do
  taskset -c "$cpu" bash -c 'while :; do :; done' &
  pids+=($!)
done
trap 'kill "${pids[@]}" 2>/dev/null' EXIT
"$@"
