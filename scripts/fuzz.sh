#!/usr/bin/env bash
# Builds and runs the libFuzzer targets of tests/fuzz (see tests/fuzz/README.md) with Debian's
# clang, ASan and UBSan, in their own build tree (build-fuzz/).
#
#   scripts/fuzz.sh --smoke                  every target for a fixed number of executions from a
#                                            fixed seed (SMOKE_SEED, default 1), at most
#                                            SMOKE_SECONDS (default 30) each (CI)
#   scripts/fuzz.sh --long [SECONDS]         every target until 10^7 executions or SECONDS (default
#                                            1800) each, whichever comes first
#   scripts/fuzz.sh --target NAME [SECONDS]  one target (default 300 s)
#   --no-build   use the binaries already in the build tree
#   --build-dir DIR  the build tree (default build-fuzz/); scripts/sanitize.sh passes its sanitizer tree,
#                    which builds the unit tests and these targets with the same instrumentation
#
# Each run starts from the target's seeds (tests/fuzz/corpus/NAME, read only) and its working
# corpus (build-fuzz/fuzz-corpus/NAME, kept between runs). Crashes, leaks and timeouts are written
# to build-fuzz/fuzz-findings/NAME/ and fail the script; logs go to build-fuzz/fuzz-logs/NAME.log.
# The summary line per target gives executions, seconds and the corpus size.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD=build-fuzz
mode=""
seconds=""
only=""
build=1
while [ $# -gt 0 ]; do
  case "$1" in
    --smoke) mode=smoke ;;
    --long) mode=long; if [[ "${2:-}" =~ ^[0-9]+$ ]]; then seconds=$2; shift; fi ;;
    --target) mode=target; only=${2:?--target needs a name}; shift
              if [[ "${2:-}" =~ ^[0-9]+$ ]]; then seconds=$2; shift; fi ;;
    --no-build) build=0 ;;
    --build-dir) BUILD=${2:?--build-dir needs a directory}; shift ;;
    *) echo "usage: $0 --smoke | --long [SECONDS] | --target NAME [SECONDS] [--no-build] [--build-dir DIR]" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$mode" ] || { echo "usage: $0 --smoke | --long [SECONDS] | --target NAME [SECONDS]" >&2; exit 2; }

# Target -> dictionary (tests/fuzz/dict/); targets not listed run without one.
declare -A DICT=(
  [worker_report]=json [lc_rest]=http [dataset_stream]=json [watch_stream]=json
  [api_object]=yaml [config_yaml]=yaml [kube_parsers]=selectors
)
# Target -> extra libFuzzer flags: the counters need inputs past the SIMD kernels' 8 KiB chunks.
declare -A EXTRA=(
  [dataset_stream]="-max_len=20000" [watch_stream]="-max_len=16384" [lc_rest]="-max_len=8192"
)
# Target -> executions in the smoke: about 10 s each on a CI machine (2 vCPUs, -O1 clang tree). A
# CI gate must give the same answer for the same commit: the smoke replays the same mutations from
# the same seed every time (exploration is the long runs' job), so a finding in CI reproduces with
# `scripts/fuzz.sh --smoke` and the code it found in is what changed, not the dice.
declare -A SMOKE_RUNS=(
  [worker_report]=50000 [lc_rest]=10000 [dataset_stream]=150000 [dataset_dir]=8000
  [lc_downstream]=3000 [gm_upstream]=6000 [watch_stream]=60000 [api_object]=30000
  [kube_parsers]=140000 [config_yaml]=75000
)
TARGETS=(worker_report lc_rest dataset_stream dataset_dir lc_downstream gm_upstream watch_stream
         api_object kube_parsers config_yaml)
if [ -n "$only" ]; then TARGETS=("$only"); fi

JOBS="${JOBS:-2}"
if [ "$build" = 1 ]; then
  scripts/install-deps.sh --fuzz
  start=$(date +%s)
  CC=clang CXX=clang++ cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DNEREID_FUZZ=ON \
    -DNEREID_BUILD_TESTS=OFF -DNEREID_BUILD_BENCH=OFF -DNEREID_STATIC_GRPC_DIR= >/dev/null
  cmake --build "$BUILD" -j"$JOBS" --target $(printf 'fuzz_%s ' "${TARGETS[@]}")
  echo "fuzz.sh: build took $(( $(date +%s) - start ))s"
fi

case "$mode" in
  smoke) limits=(-seed="${SMOKE_SEED:-1}" -max_total_time="${SMOKE_SECONDS:-30}") ;;
  long) limits=(-max_total_time="${seconds:-1800}" -runs=10000000) ;;
  target) limits=(-max_total_time="${seconds:-300}") ;;
esac

failed=()
for name in "${TARGETS[@]}"; do
  binary="$BUILD/tests/fuzz/fuzz_$name"
  seeds="tests/fuzz/corpus/$name"
  corpus="$BUILD/fuzz-corpus/$name"
  findings="$BUILD/fuzz-findings/$name"
  log="$BUILD/fuzz-logs/$name.log"
  mkdir -p "$corpus" "$findings" "$(dirname "$log")"
  args=("${limits[@]}" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1
        -artifact_prefix="$findings/")
  if [ "$mode" = smoke ]; then args+=(-runs="${SMOKE_RUNS[$name]}"); fi
  if [ -n "${DICT[$name]:-}" ]; then args+=(-dict="tests/fuzz/dict/${DICT[$name]}.dict"); fi
  if [ -n "${EXTRA[$name]:-}" ]; then read -ra extra <<<"${EXTRA[$name]}"; args+=("${extra[@]}"); fi
  status=0
  ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
    "$binary" "${args[@]}" "$corpus" "$seeds" >"$log" 2>&1 || status=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  secs=$(grep -o 'Done [0-9]* runs in [0-9]* second' "$log" | grep -o 'in [0-9]*' | grep -o '[0-9]*' || echo "?")
  units=$(find "$corpus" -type f | wc -l)
  if [ "$status" -ne 0 ]; then
    failed+=("$name")
    echo "fuzz.sh: $name FAILED (exit $status) after $runs runs; see $log and $findings/" >&2
    grep -E 'ERROR:|property violated|SUMMARY' "$log" | head -5 >&2 || true
  else
    echo "fuzz.sh: $name: $runs runs in ${secs}s, corpus $units inputs"
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: findings in: ${failed[*]}" >&2
  exit 1
fi
