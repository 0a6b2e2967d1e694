#!/usr/bin/env bash
# Installs exactly the Debian 12 packages Nereid's build and tests need. Idempotent: when every
# package is present it returns at once without touching apt; otherwise it runs apt-get update
# first, then installs only what is missing.
#
#   scripts/install-deps.sh               the build and the tests
#   scripts/install-deps.sh --containers  also what the container images and their tests need
#                                         (scripts/build-images.sh, ctest -L containers)
#   scripts/install-deps.sh --fuzz        also clang and its libFuzzer/sanitizer runtime
#                                         (scripts/fuzz.sh, sanitize.sh, check_thread_safety.sh)
set -euo pipefail

PACKAGES=(
  build-essential cmake ninja-build pkg-config ccache git
  libabsl-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libcpp-httplib-dev libssl-dev libmicrohttpd-dev
  nlohmann-json3-dev libyaml-cpp-dev libcli11-dev libsqlite3-dev prometheus-cpp-dev
  catch2 libbenchmark-dev
  openssl curl procps
  libcurl4-openssl-dev
  nodejs
  prometheus
)
# prometheus: the real server and promtool for tests/monitoring (rules, live scrapes, alerts).
# podman/buildah with the runc runtime and catatonit (the pods' infra process); mmdebstrap
# bootstraps the from-source build's base image from apt; the container tests are Python
# (python3-yaml reads the rendered manifests) and run in their own network namespace (iproute2).
CONTAINER_PACKAGES=(podman buildah runc catatonit mmdebstrap python3 python3-yaml iproute2)
FUZZ_PACKAGES=(clang libclang-rt-14-dev python3)
case "${1:-}" in
  --containers) PACKAGES+=("${CONTAINER_PACKAGES[@]}") ;;
  --fuzz) PACKAGES+=("${FUZZ_PACKAGES[@]}") ;;
  "") ;;
  *) echo "usage: $0 [--containers|--fuzz]" >&2; exit 2 ;;
esac

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done

# The S3 tests run s3rver (tests/support/s3rver) with node and npm. Some nodejs builds ship npm
# themselves and conflict with Debian's npm package, so npm is installed only when missing.
if ! command -v npm >/dev/null 2>&1; then
  missing+=(npm)
fi

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
