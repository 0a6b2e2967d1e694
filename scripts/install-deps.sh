#!/usr/bin/env bash
# Installs exactly the Debian 12 packages Nereid's build and tests need. Idempotent: when every
# package is present it returns at once without touching apt; otherwise it runs apt-get update
# first, then installs only what is missing. --fuzz adds clang and its libFuzzer/sanitizer runtime
# (scripts/fuzz.sh).
set -euo pipefail

PACKAGES=(
  build-essential cmake pkg-config ccache git
  libabsl-dev
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libcpp-httplib-dev libssl-dev
  nlohmann-json3-dev libyaml-cpp-dev libsqlite3-dev prometheus-cpp-dev
  catch2 libbenchmark-dev
  openssl curl procps
)
if [ "${1:-}" = "--fuzz" ]; then
  PACKAGES+=(clang libclang-rt-14-dev)
fi

missing=()
for pkg in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed'; then
    missing+=("$pkg")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then SUDO="sudo"; fi
echo "install-deps: installing ${missing[*]}" >&2
$SUDO apt-get update -qq
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
