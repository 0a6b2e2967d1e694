#!/usr/bin/env bash
# Assembles the whole filesystem of a Nereid runtime image in DEST: the binary (debug info
# stripped), exactly the shared libraries it links as the dynamic loader resolves them (its `ldd`
# closure, the loader included), and the few files glibc reads at run time. The images are
# `FROM scratch` + this tree: no shell, no package manager, nothing the binary does not load.
#
#   deploy/docker/runtime-payload.sh BINARY DEST
#
# Run where the binary was built (the image's build stage, or the host for
# scripts/build-images.sh --from-build), so the libraries copied are the ones it was linked with.
# Libraries loaded with dlopen() are not in an ldd closure; Nereid loads none (glibc's files and
# dns NSS modules are part of libc.so.6 since glibc 2.34; OpenSSL's default provider is built in).
set -euo pipefail

binary="${1:?usage: runtime-payload.sh BINARY DEST}"
dest="${2:?usage: runtime-payload.sh BINARY DEST}"
name="$(basename "$binary")"

[ -x "$binary" ] || { echo "runtime-payload: $binary is not an executable" >&2; exit 1; }
rm -rf "$dest"
mkdir -p "$dest/usr/local/bin" "$dest/etc" "$dest/tmp"
chmod 1777 "$dest/tmp"

strip --strip-debug -o "$dest/usr/local/bin/$name" "$binary"

# `ldd` lines: "libx.so.1 => /path/libx.so.1 (0x...)", or "/lib64/ld-linux-x86-64.so.2 (0x...)".
closure="$(ldd "$binary")"
if grep -q 'not found' <<<"$closure"; then
  echo "runtime-payload: $binary has unresolved libraries:" >&2
  grep 'not found' <<<"$closure" >&2
  exit 1
fi
while read -r path; do
  mkdir -p "$dest$(dirname "$path")"
  cp -L "$path" "$dest$path"
done < <(grep -oE '(^|=> )/[^ ]+' <<<"$closure" | sed 's/^=> //')
# The loader as the binary's PT_INTERP names it (/lib64/... is a symlink into /lib on the build
# host; the image has no merged /usr, so it gets a copy at the exact path).
interp="$(readelf -l "$binary" | sed -n 's/.*Requesting program interpreter: \(.*\)]/\1/p')"
if [ -n "$interp" ] && [ ! -e "$dest$interp" ]; then
  mkdir -p "$dest$(dirname "$interp")"
  cp -L "$interp" "$dest$interp"
fi

# Users: root, and 65532 `nereid` (the GM's uid in deploy/gm/deployment.yaml), so ids resolve to
# names in logs and tools; no shell for either.
cat >"$dest/etc/passwd" <<'EOF'
root:x:0:0:root:/root:/usr/sbin/nologin
nereid:x:65532:65532:nereid:/nonexistent:/usr/sbin/nologin
EOF
cat >"$dest/etc/group" <<'EOF'
root:x:0:
nereid:x:65532:
EOF
# Host names from /etc/hosts (the runtime writes it) before DNS, as on Debian.
printf 'passwd: files\ngroup: files\nhosts: files dns\n' >"$dest/etc/nsswitch.conf"
# The system's CA bundle, for HTTPS model URLs and the in-cluster fallback to system roots.
if [ -f /etc/ssl/certs/ca-certificates.crt ]; then
  mkdir -p "$dest/etc/ssl/certs"
  cp /etc/ssl/certs/ca-certificates.crt "$dest/etc/ssl/certs/"
fi
echo "runtime-payload: $name + $(grep -cE '(^|=> )/' <<<"$closure") libraries in $dest ($(du -sh "$dest" | cut -f1))"
