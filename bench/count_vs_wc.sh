#!/usr/bin/env bash
# Dataset counting throughput: `localcontroller count` vs `wc -l` on 1 GiB txt, jsonl and quoted
# CSV files from the page cache, plus "append 1 MiB and recount incrementally" vs "count a 1 MiB
# file". Builds the two binaries (Release) unless BUILD already has them; extra arguments go to
# count_bench (e.g. --size 268435456 --reps 3 --dir /var/tmp --enforce).
#
#   bench/count_vs_wc.sh                 # default: 1 GiB files, 7 runs each, temp dir cleaned up
#   BUILD=build-bench bench/count_vs_wc.sh --reps 11
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD="${BUILD:-build-bench}"
if [ ! -x "$BUILD/bench/count_bench" ] || [ ! -x "$BUILD/localcontroller/localcontroller" ]; then
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=Release -DNEREID_BUILD_BENCH=ON >/dev/null
  cmake --build "$BUILD" --target localcontroller count_bench -j"${JOBS:-2}"
fi
exec "$BUILD/bench/count_bench" --localcontroller "$BUILD/localcontroller/localcontroller" "$@"
