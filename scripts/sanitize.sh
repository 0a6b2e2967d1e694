#!/usr/bin/env bash
# The unit tests and the fuzz targets under AddressSanitizer + UndefinedBehaviorSanitizer, in one
# clang tree (build-san/): every library instrumented with ASan, UBSan and libFuzzer's coverage
# hooks, the unit tests linked against it, every fuzz seed replayed, then every fuzz target briefly
# from its seeds (scripts/fuzz.sh --smoke: the same mutations every run, so a finding reproduces).
#
#   scripts/sanitize.sh
#
# Not part of scripts/test.sh: this tree is a second full build (about 40 minutes cold on 2 cores),
# and with it the test command ran past CI's 90 minutes. Run it before landing a change to a parser,
# a trust boundary or a lock, and record the result in tests/fuzz/RESULTS.md. Only what runs here is
# built (targets unit_tests and fuzz_all): the tree stays about 3 GiB.
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS="${JOBS:-2}"
start=$(date +%s)
scripts/install-deps.sh --fuzz  # the test command's packages, and clang
# The patched static gRPC of the release build (scripts/test.sh), so the tests here run on the gRPC
# the product ships; Debian's shared gRPC when it cannot be built.
static_grpc=build-deps/grpc-static
static_grpc_dir=""
if scripts/build-static-grpc.sh "$static_grpc"; then static_grpc_dir="$PWD/$static_grpc"; fi
source scripts/lib/cmake-configure.sh
CC=clang CXX=clang++ nereid_configure build-san -DCMAKE_BUILD_TYPE=Debug -DNEREID_FUZZ=ON \
  -DNEREID_BUILD_BENCH=OFF "-DNEREID_STATIC_GRPC_DIR=$static_grpc_dir"
cmake --build build-san -j"$JOBS" --target unit_tests fuzz_all
(cd build-san && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
   ctest --output-on-failure -j"$JOBS" -L 'unit|fuzz' --timeout 600)
echo "sanitize.sh: sanitizer build + unit tests + fuzz seed replay took $(( $(date +%s) - start ))s"
scripts/fuzz.sh --smoke --no-build --build-dir build-san
echo "sanitize.sh: all done in $(( $(date +%s) - start ))s"
