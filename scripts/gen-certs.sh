#!/usr/bin/env bash
# Makes the certificates for the GM <-> LC mTLS link with openssl, for local runs and tests:
#   OUTDIR/ca.crt ca.key                      the CA both sides trust (reused when present)
#   OUTDIR/globalmanager.crt globalmanager.key  GM cert (server, and client when a replica relays
#                                             to the leader): CN globalmanager,
#                                             SAN DNS:localhost, DNS:globalmanager, IP:127.0.0.1 (+ extras)
#   OUTDIR/nodes/<node>.crt <node>.key        LC client cert per node: CN = node, SAN DNS = node
# The GM takes the node identity from the client certificate (CN or DNS SAN), so one cert per node.
#
# Usage: gen-certs.sh [--san SAN[,SAN...]] [--days N] [--force] OUTDIR [node ...]
#   --san     extra SANs for the GM certificate, e.g. DNS:gm.sedna.svc,IP:10.0.0.5
#             (also from env NEREID_GM_EXTRA_SANS, same format)
#   --days    validity of new leaf certificates (default 365; the CA gets 10 years)
#   --force   re-issue the GM and the named node certificates even when they exist (the CA is kept;
#             delete ca.* to start over)
# Idempotent: existing files are kept unless --force, so re-running only adds missing node certs.
# Keys are EC P-256, written with mode 0600.
set -euo pipefail

usage() {
  sed -n '2,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

extra_sans="${NEREID_GM_EXTRA_SANS:-}"
days=365
force=0
while [ $# -gt 0 ]; do
  case "$1" in
    --san) [ $# -ge 2 ] || usage; extra_sans="${extra_sans:+$extra_sans,}$2"; shift 2 ;;
    --san=*) extra_sans="${extra_sans:+$extra_sans,}${1#--san=}"; shift ;;
    --days) [ $# -ge 2 ] || usage; days="$2"; shift 2 ;;
    --force) force=1; shift ;;
    -h|--help) usage ;;
    --) shift; break ;;
    -*) echo "gen-certs: unknown option $1" >&2; usage ;;
    *) break ;;
  esac
done
[ $# -ge 1 ] || usage
out="$1"
shift

case "$days" in
  ''|*[!0-9]*) echo "gen-certs: --days must be a positive integer, got '$days'" >&2; exit 2 ;;
esac
# SANs go into an openssl config line: allow only DNS:/IP: entries with plain characters.
if [ -n "$extra_sans" ]; then
  IFS=',' read -r -a san_list <<<"$extra_sans"
  for san in "${san_list[@]}"; do
    if ! [[ "$san" =~ ^(DNS:[A-Za-z0-9*.-]+|IP:[0-9A-Fa-f:.]+)$ ]]; then
      echo "gen-certs: bad SAN '$san' (want DNS:name or IP:address)" >&2
      exit 2
    fi
  done
fi
# Node names become certificate subjects and file names: require RFC 1123 subdomains, as Kubernetes
# node names are.
for node in "$@"; do
  if ! [[ "$node" =~ ^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$ ]] ||
     [ ${#node} -gt 253 ]; then
    echo "gen-certs: bad node name '$node' (want a lowercase RFC 1123 subdomain)" >&2
    exit 2
  fi
done

command -v openssl >/dev/null || { echo "gen-certs: openssl not found" >&2; exit 1; }
umask 077
mkdir -p "$out/nodes"
tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT

wrote=()

new_key() {
  openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out "$1" 2>/dev/null
  chmod 600 "$1"
}

# issue KEY CRT CN EXTFILE: a CSR for KEY signed by the CA with the extensions in EXTFILE.
issue() {
  local key="$1" crt="$2" cn="$3" ext="$4"
  new_key "$key"
  openssl req -new -key "$key" -subj "/O=nereid/CN=$cn" -out "$tmp/req.csr" 2>/dev/null
  openssl x509 -req -in "$tmp/req.csr" -CA "$out/ca.crt" -CAkey "$out/ca.key" -CAcreateserial \
    -CAserial "$tmp/ca.srl" -days "$days" -sha256 -extfile "$ext" -out "$crt" 2>/dev/null
  chmod 644 "$crt"
  wrote+=("$crt" "$key")
}

if [ ! -s "$out/ca.crt" ] || [ ! -s "$out/ca.key" ]; then
  new_key "$out/ca.key"
  openssl req -x509 -new -key "$out/ca.key" -subj "/O=nereid/CN=nereid-ca" -days 3650 -sha256 \
    -addext "basicConstraints=critical,CA:TRUE" \
    -addext "keyUsage=critical,keyCertSign,cRLSign" \
    -out "$out/ca.crt" 2>/dev/null
  chmod 644 "$out/ca.crt"
  wrote+=("$out/ca.crt" "$out/ca.key")
fi

gm_sans="DNS:localhost,DNS:globalmanager,IP:127.0.0.1${extra_sans:+,$extra_sans}"
if [ "$force" = 1 ] || [ ! -s "$out/globalmanager.crt" ] || [ ! -s "$out/globalmanager.key" ]; then
  cat >"$tmp/gm.ext" <<EOF
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=serverAuth,clientAuth
subjectAltName=$gm_sans
EOF
  issue "$out/globalmanager.key" "$out/globalmanager.crt" globalmanager "$tmp/gm.ext"
fi

for node in "$@"; do
  crt="$out/nodes/$node.crt"
  key="$out/nodes/$node.key"
  if [ "$force" = 1 ] || [ ! -s "$crt" ] || [ ! -s "$key" ]; then
    cat >"$tmp/node.ext" <<EOF
basicConstraints=critical,CA:FALSE
keyUsage=critical,digitalSignature,keyEncipherment
extendedKeyUsage=clientAuth
subjectAltName=DNS:$node
EOF
    issue "$key" "$crt" "$node" "$tmp/node.ext"
  fi
done

if [ ${#wrote[@]} -eq 0 ]; then
  echo "gen-certs: nothing to do, all certificates exist in $out"
else
  for f in "${wrote[@]}"; do
    echo "gen-certs: wrote $f"
  done
fi
