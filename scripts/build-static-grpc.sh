#!/usr/bin/env bash
# Builds gRPC's C++ libraries as static archives from Debian's own source tarball, for the
# LocalController's memory target (bench/RESULTS.md, LC memory): Debian ships gRPC only as shared
# libraries, and the dynamic loader keeps their symbol tables and relocations resident (3 MiB for
# the gRPC/Abseil family). Linked statically, with Abseil's static archives from libabsl-dev, an
# idle LC drops from 22.8 to 19.6 MB. The build applies scripts/grpc-patches/*.patch (smaller
# per-connection buffers for the GM's many idle edge streams; README.md there).
#
#   scripts/build-static-grpc.sh PREFIX
#
# Writes PREFIX/lib/lib{grpc++,grpc,gpr,upb,address_sorting}.a and PREFIX/STAMP; configure with
# -DNEREID_STATIC_GRPC_DIR=PREFIX to use them. Idempotent: exits at once when PREFIX/STAMP matches.
# The version must equal the installed libgrpc++-dev (its headers are the ones we compile against).
# The source comes through apt, from this machine's configured Debian sources (its mirror, its
# proxy settings): `apt-get source --download-only` with deb-src entries derived from them
# (scripts/lib/debian-apt-sources.sh) in a private apt configuration, so /etc/apt is not touched.
# apt checks the files against the archive's signed index; the upstream tarball is checked again
# by SHA-256 here. NEREID_GRPC_SOURCE_TARBALL=FILE uses a tarball fetched beforehand (offline
# machines), with the same check. Takes about 6 minutes on 2 cores. Exits non-zero on any
# failure; callers may fall back to the shared libraries.
set -euo pipefail

prefix="${1:?usage: build-static-grpc.sh PREFIX}"
version=1.51.1
sha256=b55696fb249669744de3e71acc54a9382bea0dce7cd5ba379b356b12b82d4229
# Nereid's patches to gRPC (scripts/grpc-patches/*.patch, applied in name order; README.md there
# says what each one does and why). Their checksum is part of the stamp, so a changed patch rebuilds.
patch_dir="$(cd "$(dirname "$0")" && pwd)/grpc-patches"
patches=("$patch_dir"/*.patch)
patches_sum=$(cat "${patches[@]}" | sha256sum | cut -c1-16)
stamp="grpc ${version} ${sha256} static-pic-gc-sections patches ${patches_sum}"

if [ -f "$prefix/STAMP" ] && [ "$(cat "$prefix/STAMP")" = "$stamp" ]; then
  exit 0
fi
installed=$(dpkg-query -W -f='${Version}' libgrpc++-dev 2>/dev/null || true)
case "$installed" in
  "$version"-*) ;;
  *) echo "build-static-grpc: libgrpc++-dev is '$installed', not $version: the static build would not match its headers" >&2
     exit 1 ;;
esac

work=$(mktemp -d "${TMPDIR:-/tmp}/nereid-grpc-XXXXXX")
trap 'rm -rf "$work"' EXIT
if [ -n "${NEREID_GRPC_SOURCE_TARBALL:-}" ]; then
  cp "$NEREID_GRPC_SOURCE_TARBALL" "$work/grpc.tar.gz"
else
  # A private apt state: the machine's Debian sources as deb-src, lists and cache under $work.
  apt_dir="$work/apt"
  mkdir -p "$apt_dir/sources.list.d" "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$work/src"
  "$(dirname "$0")/lib/debian-apt-sources.sh" deb-src >"$apt_dir/sources.list.d/debian-src.sources"
  apt_opts=(-o "Dir::Etc::SourceList=/dev/null" -o "Dir::Etc::SourceParts=$apt_dir/sources.list.d"
            -o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
            -o "Debug::NoLocking=1" -o "APT::Sandbox::User=root")
  source_version=$(dpkg-query -W -f='${source:Version}' libgrpc++-dev)
  echo "build-static-grpc: fetching Debian source package grpc=$source_version through apt"
  apt-get "${apt_opts[@]}" -qq update
  (cd "$work/src" && apt-get "${apt_opts[@]}" -qq source --download-only "grpc=$source_version")
  mv "$work/src/grpc_${version}.orig.tar.gz" "$work/grpc.tar.gz"
fi
echo "$sha256  $work/grpc.tar.gz" | sha256sum -c --quiet -
tar -xzf "$work/grpc.tar.gz" -C "$work"
src="$work/grpc-${version}"
for p in "${patches[@]}"; do
  patch -d "$src" -p1 --quiet --forward <"$p"
done
# The generated xDS/opencensus code is in the tarball; these dirs only stop CMake from downloading
# the protos it would regenerate from (no network access beyond Debian's archive is assumed).
mkdir -p "$src/third_party/envoy-api" "$src/third_party/googleapis" \
  "$src/third_party/opencensus-proto/src" "$src/third_party/xds"
# Debian's libc-ares-dev has no CMake package; name its library for gRPC's find_package(c-ares).
mkdir -p "$work/c-ares"
cat >"$work/c-ares/c-aresConfig.cmake" <<'EOF'
add_library(c-ares::cares SHARED IMPORTED)
set_target_properties(c-ares::cares PROPERTIES
  IMPORTED_LOCATION /usr/lib/x86_64-linux-gnu/libcares.so)
set(c-ares_FOUND TRUE)
EOF

launcher=()
# Relative paths under the temporary source dir, so a rebuild hits ccache.
export CCACHE_BASEDIR="$work"
if command -v ccache >/dev/null; then
  launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
plugins=()
for p in CPP CSHARP NODE OBJECTIVE_C PHP PYTHON RUBY; do plugins+=("-DgRPC_BUILD_GRPC_${p}_PLUGIN=OFF"); done
cmake -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=Release -DBUILD_SHARED_LIBS=OFF \
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON -DCMAKE_CXX_STANDARD=17 \
  -DCMAKE_C_FLAGS="-ffunction-sections -fdata-sections" \
  -DCMAKE_CXX_FLAGS="-ffunction-sections -fdata-sections" "${launcher[@]}" \
  -Dc-ares_DIR="$work/c-ares" -DProtobuf_PROTOC_LIBRARY=/usr/lib/x86_64-linux-gnu/libprotoc.so.32 \
  -DgRPC_BUILD_TESTS=OFF -DgRPC_BUILD_CODEGEN=OFF -DgRPC_BUILD_CSHARP_EXT=OFF "${plugins[@]}" \
  -DgRPC_ABSL_PROVIDER=package -DgRPC_CARES_PROVIDER=package -DgRPC_PROTOBUF_PROVIDER=package \
  -DgRPC_RE2_PROVIDER=package -DgRPC_SSL_PROVIDER=package -DgRPC_ZLIB_PROVIDER=package >/dev/null
cmake --build "$work/build" --target grpc++ -j"${JOBS:-2}" >"$work/build.log" 2>&1 || {
  tail -30 "$work/build.log" >&2
  exit 1
}
mkdir -p "$prefix/lib"
for lib in grpc++ grpc gpr upb address_sorting; do
  cp "$work/build/lib${lib}.a" "$prefix/lib/"
done
echo "$stamp" >"$prefix/STAMP"
echo "build-static-grpc: static gRPC ${version} in $prefix/lib"
