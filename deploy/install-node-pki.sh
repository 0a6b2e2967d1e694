#!/usr/bin/env bash
# Installs one edge node's client certificate where the LocalController DaemonSet mounts it
# (hostPath /etc/nereid/pki, deploy/lc/daemonset.yaml):
#   DEST/ca.crt   the CA that signed the GM's certificate (PKI_DIR/ca.crt)
#   DEST/tls.crt  this node's certificate, CN = the node name (PKI_DIR/nodes/NODE.crt)
#   DEST/tls.key  its key, mode 0600 (PKI_DIR/nodes/NODE.key)
# Run it on the node itself (as root; DEST defaults to /etc/nereid/pki), or point DEST at a
# staging directory and copy that to the node's /etc/nereid/pki (mode 0700, files as above).
# Each node gets only its own key: the GM takes a node's identity from its certificate.
#
#   scripts/gen-certs.sh --san DNS:gm.sedna,DNS:gm.sedna.svc PKI_DIR node-a node-b
#   deploy/install-node-pki.sh PKI_DIR node-a [DEST]
#
# The node name must be the Kubernetes Node name (NODENAME in the DaemonSet is spec.nodeName).
set -euo pipefail

if [ $# -lt 2 ] || [ $# -gt 3 ]; then
  sed -n '2,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
pki="$1"
node="$2"
dest="${3:-/etc/nereid/pki}"
crt="$pki/nodes/$node.crt"
key="$pki/nodes/$node.key"

for f in "$pki/ca.crt" "$crt" "$key"; do
  [ -s "$f" ] || { echo "install-node-pki: $f is missing (scripts/gen-certs.sh $pki $node)" >&2; exit 1; }
done
openssl verify -CAfile "$pki/ca.crt" "$crt" >/dev/null ||
  { echo "install-node-pki: $crt is not signed by $pki/ca.crt" >&2; exit 1; }
subject="$(openssl x509 -in "$crt" -noout -subject -nameopt multiline | sed -n 's/^ *commonName *= *//p')"
[ "$subject" = "$node" ] ||
  { echo "install-node-pki: $crt is for '$subject', not '$node'" >&2; exit 1; }
if [ "$(openssl x509 -in "$crt" -noout -pubkey)" != "$(openssl pkey -in "$key" -pubout 2>/dev/null)" ]; then
  echo "install-node-pki: $key does not belong to $crt" >&2
  exit 1
fi

umask 077
install -d -m 0700 "$dest"
install -m 0644 "$pki/ca.crt" "$dest/ca.crt"
install -m 0644 "$crt" "$dest/tls.crt"
install -m 0600 "$key" "$dest/tls.key"
echo "install-node-pki: installed $node's certificate in $dest (ca.crt, tls.crt, tls.key)"
