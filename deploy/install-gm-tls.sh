#!/usr/bin/env bash
# Creates (or updates) the GlobalManager's TLS Secret `nereid-gm-tls` in namespace sedna from the
# output of scripts/gen-certs.sh, with the keys deploy/gm/deployment.yaml mounts:
#   ca.crt   the CA that signed the nodes' client certificates (PKI_DIR/ca.crt)
#   tls.crt  the GM server certificate (PKI_DIR/globalmanager.crt)
#   tls.key  its key (PKI_DIR/globalmanager.key)
# The key goes from your disk to the API server only; it is never written into the repository.
#
#   scripts/gen-certs.sh --san DNS:gm.sedna,DNS:gm.sedna.svc PKI_DIR node-a node-b ...
#   deploy/install-gm-tls.sh PKI_DIR [kubectl flags, e.g. --context prod]
#
# LocalControllers dial gm.sedna:9000 (GM_ADDRESS) and check that the GM certificate names that
# host, so the script refuses a certificate without DNS:gm.sedna unless NEREID_GM_HOST names the
# host your nodes dial instead (e.g. NEREID_GM_HOST=gm.example.com for a LoadBalancer).
set -euo pipefail

if [ $# -lt 1 ] || [ "$1" = -h ] || [ "$1" = --help ]; then
  sed -n '2,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
pki="$1"
shift
host="${NEREID_GM_HOST:-gm.sedna}"

for f in ca.crt globalmanager.crt globalmanager.key; do
  [ -s "$pki/$f" ] || { echo "install-gm-tls: $pki/$f is missing (run scripts/gen-certs.sh first)" >&2; exit 1; }
done
openssl verify -CAfile "$pki/ca.crt" "$pki/globalmanager.crt" >/dev/null ||
  { echo "install-gm-tls: $pki/globalmanager.crt is not signed by $pki/ca.crt" >&2; exit 1; }
# "DNS:localhost,DNS:globalmanager,IPAddress:127.0.0.1" (the header line dropped, spaces removed).
sans="$(openssl x509 -in "$pki/globalmanager.crt" -noout -ext subjectAltName 2>/dev/null | tail -n +2 | tr -d ' ')"
if ! grep -Eq "(^|,)DNS:${host//./\\.}(,|$)" <<<"$sans"; then
  echo "install-gm-tls: $pki/globalmanager.crt does not name $host (it names: $sans)." >&2
  echo "  Re-issue it: scripts/gen-certs.sh --force --san DNS:$host,DNS:$host.svc $pki" >&2
  exit 1
fi

# A standby relays the node streams that reach it to the leader with this certificate as a client
# certificate; without clientAuth the leader refuses the relay and the standby redirects instead.
if ! openssl x509 -in "$pki/globalmanager.crt" -noout -ext extendedKeyUsage 2>/dev/null |
    grep -q "TLS Web Client Authentication"; then
  echo "install-gm-tls: warning: $pki/globalmanager.crt lacks extendedKeyUsage clientAuth, so" \
    "standby replicas cannot relay nodes to the leader (they send them there instead)." >&2
  echo "  Re-issue it: scripts/gen-certs.sh --force --san DNS:$host,DNS:$host.svc $pki" >&2
fi

kubectl create secret generic nereid-gm-tls --namespace sedna \
  --from-file=ca.crt="$pki/ca.crt" \
  --from-file=tls.crt="$pki/globalmanager.crt" \
  --from-file=tls.key="$pki/globalmanager.key" \
  --dry-run=client -o yaml "$@" | kubectl apply "$@" -f -
