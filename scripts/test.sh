#!/usr/bin/env bash
# The test command: installs dependencies, configures, builds with -j2 and runs every test.
# Then (unless NEREID_SKIP_SANITIZE=1) builds again with clang, AddressSanitizer + UBSan, runs the
# unit tests there and every fuzz target briefly (scripts/fuzz.sh --smoke). Build trees: build/ and
# build-san/.
set -euo pipefail
cd "$(dirname "$0")/.."

# Conventions first (file length, comments citing issues, raw close()): a second, no build.
scripts/check_conventions.sh

scripts/install-deps.sh

JOBS="${JOBS:-2}"
start=$(date +%s)

# gRPC and Abseil linked statically, as the LocalController image ships them (its idle memory
# target, bench/RESULTS.md), built once from Debian's gRPC source into build-deps/. Without it (the
# archive unreachable, another gRPC version) the build links Debian's shared libraries and says so.
static_grpc=build-deps/grpc-static
if scripts/build-static-grpc.sh "$static_grpc"; then
  static_grpc_flag="-DNEREID_STATIC_GRPC_DIR=$PWD/$static_grpc"
else
  echo "test.sh: WARNING: static gRPC not built; linking Debian's shared gRPC (the LC misses its idle memory target)" >&2
  static_grpc_flag="-DNEREID_STATIC_GRPC_DIR="
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo "$static_grpc_flag" >/dev/null
cmake --build build -j"$JOBS"
(cd build && ctest --output-on-failure -j"$JOBS" --timeout 600 -LE containers)
echo "test.sh: release build + tests took $(( $(date +%s) - start ))s"

if [ "${NEREID_SKIP_SANITIZE:-0}" != "1" ]; then
  # One clang tree for both: every library with ASan + UBSan and libFuzzer's coverage hooks, the
  # unit tests linked against it, and the fuzz targets of tests/fuzz (scripts/fuzz.sh). Only what
  # runs here is built (targets unit_tests and fuzz_all): the tree stays about 3 GiB.
  asan_start=$(date +%s)
  scripts/install-deps.sh --fuzz
  CC=clang CXX=clang++ cmake -S . -B build-san -DCMAKE_BUILD_TYPE=Debug -DNEREID_FUZZ=ON \
    -DNEREID_BUILD_BENCH=OFF -DNEREID_STATIC_GRPC_DIR= >/dev/null
  cmake --build build-san -j"$JOBS" --target unit_tests fuzz_all
  (cd build-san && ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
     ctest --output-on-failure -j"$JOBS" -L 'unit|fuzz' --timeout 600)
  echo "test.sh: sanitizer build + unit tests + fuzz seed replay took $(( $(date +%s) - asan_start ))s"
  # Every fuzz target briefly from its seeds, the same mutations every run: what a change broke in
  # a parser shows here, and reproduces.
  scripts/fuzz.sh --smoke --no-build --build-dir build-san
fi

# The main job end to end (added by the deploy/quickstart work): scripts/quickstart.sh --check starts
# devapiserver + GM + two LCs from build/ on loopback, applies the examples and fails unless the GM
# is ready, both LCs are connected and every Dataset is counted. Needs kubectl, like the
# integration tests; skipped loudly without it.
if command -v kubectl >/dev/null; then
  scripts/quickstart.sh --check
else
  echo "test.sh: WARNING: kubectl not found: scripts/quickstart.sh --check skipped" >&2
fi
# The container images built from build/ and the deployment in deploy/ run from them with podman
# (tests/containers). Installs podman & co. only here (install-deps.sh --containers); on a machine
# where podman cannot run containers these tests fail, loudly. NEREID_SKIP_CONTAINERS=1 skips them.
if [ "${NEREID_SKIP_CONTAINERS:-0}" != "1" ]; then
  containers_start=$(date +%s)
  scripts/install-deps.sh --containers
  cmake -S . -B build -DNEREID_CONTAINER_TESTS=ON >/dev/null
  (cd build && ctest --output-on-failure -L containers --timeout 600)
  echo "test.sh: container images + tests took $(( $(date +%s) - containers_start ))s"
fi
echo "test.sh: all done in $(( $(date +%s) - start ))s"
