#!/usr/bin/env bash
# The main job on one machine: Nereid's control plane with two edge nodes, on loopback.
#
#   scripts/quickstart.sh            run until Ctrl-C
#   scripts/quickstart.sh --check    run once, verify, stop; exit 1 if something did not converge (CI)
#
# Steps: install the Debian packages if missing (scripts/install-deps.sh); build devapiserver,
# globalmanager and localcontroller into build/ (-j2, only those targets); make certificates
# (scripts/gen-certs.sh: a CA, the GM server certificate, one client certificate per node);
# start devapiserver (a local Kubernetes-compatible API server), the GlobalManager and two
# LocalControllers for the nodes edge-0 and edge-1 — each with its own certificate, SQLite database
# and host root filled by examples/prepare-host-root.sh — all on 127.0.0.1 with free ports read
# from what each process prints; apply deploy/crds/ and examples/; wait (bounded) until the GM is
# ready, both LocalControllers are connected and synced and every Dataset has been counted; let
# the demo kubelet move the worker pods out of Pending; then show `kubectl get en` (the fleet),
# `kubectl get sedna`, each LocalController's /api/v1/status and what each column means at that
# point.
#
# Without a kubelet, worker pods stay Pending. scripts/demo-kubelet.sh FAKES pod phases and
# Deployment availability through the status subresource so jobs visibly progress, and says so on
# every change (--no-demo-kubelet turns it off): in passes before the table is shown, and
# (interactive runs) in the background afterwards.
#
# Options:
#   --check             run once and exit 0 (all checks passed) or 1
#   --no-demo-kubelet   do not fake pod phases
#   --timeout S         how long to wait for convergence (default 120)
# Environment: NEREID_QUICKSTART_DIR (default run/quickstart), NEREID_BUILD_DIR (default build),
# JOBS (build parallelism, default 2).
# State, logs and the kubeconfig are in run/quickstart/ (logs/*.log are the daemons' logs); the
# certificates in run/quickstart/pki are kept between runs, everything else starts fresh.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"

usage() {
  sed -n '2,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

check=0
demo_kubelet=1
timeout=120
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check=1; shift ;;
    --no-demo-kubelet) demo_kubelet=0; shift ;;
    --timeout) [ $# -ge 2 ] || usage; timeout="$2"; shift 2 ;;
    -h|--help) usage ;;
    *) echo "quickstart: unknown argument $1" >&2; usage ;;
  esac
done
case "$timeout" in ''|*[!0-9]*) echo "quickstart: --timeout wants seconds, got '$timeout'" >&2; exit 2 ;; esac

run="${NEREID_QUICKSTART_DIR:-$repo/run/quickstart}"
build="${NEREID_BUILD_DIR:-$repo/build}"
nodes=(edge-0 edge-1)
started_at=$(date +%s)

say() { echo "quickstart: $*"; }
die() { echo "quickstart: FAILED: $*" >&2; exit 1; }
elapsed() { echo "$(( $(date +%s) - started_at ))s"; }

# --- processes we start, stopped in reverse order on exit --------------------------------------
pids=()
names=()
cleanup() {
  local code=$? i pid deadline
  trap - EXIT INT TERM
  # One at a time, newest first: the GM releases its Lease while devapiserver still runs.
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    pid="${pids[$i]}"
    kill -TERM "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; continue; }
    deadline=$(( $(date +%s) + 10 ))
    while kill -0 "$pid" 2>/dev/null && [ "$(date +%s)" -lt "$deadline" ]; do sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then
      echo "quickstart: ${names[$i]} (pid $pid) did not stop within 10s; killing it" >&2
      kill -KILL "$pid" 2>/dev/null || true
    fi
    wait "$pid" 2>/dev/null || true
  done
  [ ${#pids[@]} -eq 0 ] || say "stopped ${#pids[@]} processes (logs in $run/logs)"
  exit "$code"
}
trap cleanup EXIT
trap 'echo; say "interrupted"; exit 130' INT TERM

# start NAME COMMAND...: runs it in the background, stdout → logs/NAME.out, stderr → logs/NAME.log
# (without the run-dir lock, so a daemon that outlives a killed script does not keep it).
start() {
  local name="$1"
  shift
  "$@" >"$run/logs/$name.out" 2>"$run/logs/$name.log" 9>&- &
  pids+=("$!")
  names+=("$name")
}

pid_of() {
  local i
  for i in "${!names[@]}"; do [ "${names[$i]}" = "$1" ] && echo "${pids[$i]}"; done
}

# first_line NAME REGEX SECONDS: waits for the first stdout line of NAME matching REGEX and prints
# it; fails with the end of NAME's log if the process exits or the time runs out.
first_line() {
  local name="$1" regex="$2" deadline=$(( $(date +%s) + $3 )) pid line
  pid="$(pid_of "$name")"
  while true; do
    line="$(grep -m1 -E "$regex" "$run/logs/$name.out" 2>/dev/null || true)"
    if [ -n "$line" ]; then echo "$line"; return 0; fi
    if ! kill -0 "$pid" 2>/dev/null; then
      tail -n 20 "$run/logs/$name.log" >&2 || true
      die "$name exited before it was listening (log: $run/logs/$name.log)"
    fi
    if [ "$(date +%s)" -ge "$deadline" ]; then
      tail -n 20 "$run/logs/$name.log" >&2 || true
      die "$name printed no address within $3s (log: $run/logs/$name.log)"
    fi
    sleep 0.1
  done
}

all_running() {
  local i
  for i in "${!pids[@]}"; do
    if ! kill -0 "${pids[$i]}" 2>/dev/null; then
      echo "quickstart: ${names[$i]} exited; last lines of $run/logs/${names[$i]}.log:" >&2
      tail -n 20 "$run/logs/${names[$i]}.log" >&2 || true
      return 1
    fi
  done
}

# --- 1. dependencies and build ------------------------------------------------------------------
scripts/install-deps.sh
command -v kubectl >/dev/null || die "kubectl is not installed, and Debian 12 has no package for it.
Install it from the Kubernetes apt repository (https://kubernetes.io/docs/tasks/tools/install-kubectl-linux/):
  sudo apt-get install -y apt-transport-https ca-certificates curl gpg
  curl -fsSL https://pkgs.k8s.io/core:/stable:/v1.32/deb/Release.key |
    sudo gpg --dearmor -o /etc/apt/keyrings/kubernetes-apt-keyring.gpg
  echo 'deb [signed-by=/etc/apt/keyrings/kubernetes-apt-keyring.gpg] https://pkgs.k8s.io/core:/stable:/v1.32/deb/ /' |
    sudo tee /etc/apt/sources.list.d/kubernetes.list
  sudo apt-get update && sudo apt-get install -y kubectl
then run scripts/quickstart.sh again."
command -v curl >/dev/null || die "curl is not installed (scripts/install-deps.sh installs it)"

# build/ is scripts/test.sh's build tree: reuse it as configured (same build type and options, so
# after the test suite nothing is rebuilt); a new one is configured as test.sh does. Configure runs
# every time (a few seconds) because the per-area CMake fragments are include(... OPTIONAL): one
# that appeared since the last configure (a pull) would otherwise not be noticed.
if [ -f "$build/CMakeCache.txt" ]; then
  cmake -S . -B "$build" >/dev/null || die "cmake configure of $build failed"
else
  say "configuring $build (RelWithDebInfo, as scripts/test.sh)"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null || die "cmake configure failed"
fi
say "building devapiserver, globalmanager, localcontroller in $build (a first build takes a while;" \
  "only the compile steps are shown, everything is in $build/quickstart-build.log)"
set +e
cmake --build "$build" --target devapiserver globalmanager localcontroller -j"${JOBS:-2}" 2>&1 |
  tee "$build/quickstart-build.log" | grep --line-buffered -E '^\[ *[0-9]+%\] (Building|Linking)'
build_rc=${PIPESTATUS[0]}
set -e
if [ "$build_rc" -ne 0 ]; then
  grep -E -B2 -A6 'error|Error' "$build/quickstart-build.log" | tail -n 40 >&2 || true
  die "build failed (rc $build_rc): see $build/quickstart-build.log"
fi
say "build up to date after $(elapsed)"
devapiserver="$build/tools/devapiserver/devapiserver"
globalmanager="$build/globalmanager/globalmanager"
localcontroller="$build/localcontroller/localcontroller"

# --- 2. run directory and certificates ----------------------------------------------------------
mkdir -p "$run"
exec 9>"$run/.lock"
flock -n 9 || die "another quickstart is running in $run"
rm -rf "$run/logs" "$run/kubeconfig" "$run/kubectl-cache"
for node in "${nodes[@]}"; do rm -rf "${run:?}/$node"; done
mkdir -p "$run/logs"
scripts/gen-certs.sh "$run/pki" "${nodes[@]}" >/dev/null
pki="$run/pki"

export KUBECONFIG="$run/kubeconfig"
kc() { kubectl --cache-dir "$run/kubectl-cache" "$@"; }

# --- 3. devapiserver ----------------------------------------------------------------------------
start devapiserver "$devapiserver" --listen 127.0.0.1:0 --kubeconfig-out "$KUBECONFIG"
api_url="$(first_line devapiserver '^listening on ' 20)"
api_url="${api_url#listening on }"
say "devapiserver (a local Kubernetes-compatible API server, not a cluster) on $api_url"

kc apply -f deploy/crds/ >/dev/null || die "kubectl apply -f deploy/crds/ failed"
kc wait --for=condition=Established crd --all --timeout=30s >/dev/null ||
  die "the CRDs were not Established within 30s"
# Two edge Nodes, labelled as KubeEdge labels edge nodes, so `kubectl get nodes` shows them.
for node in "${nodes[@]}"; do
  kc apply -f - >/dev/null <<EOF || die "could not create Node $node"
apiVersion: v1
kind: Node
metadata:
  name: $node
  labels:
    kubernetes.io/hostname: $node
    node-role.kubernetes.io/edge: ""
status:
  conditions:
    - type: Ready
      status: "True"
      reason: QuickstartNode
      message: a Node object only; no kubelet runs
EOF
done

# --- 4. GlobalManager ---------------------------------------------------------------------------
start globalmanager "$globalmanager" --kubeconfig "$KUBECONFIG" \
  --listen 127.0.0.1:0 --http-listen 127.0.0.1:0 \
  --tls-ca "$pki/ca.crt" --tls-cert "$pki/globalmanager.crt" --tls-key "$pki/globalmanager.key" \
  --id quickstart-gm
gm_line="$(first_line globalmanager 'edge hub on port [0-9]+, http on port [0-9]+' 60)"
gm_edge_port="$(sed -E 's/.*edge hub on port ([0-9]+).*/\1/' <<<"$gm_line")"
gm_http_port="$(sed -E 's/.*http on port ([0-9]+).*/\1/' <<<"$gm_line")"
gm_http="http://127.0.0.1:$gm_http_port"
say "GlobalManager: edge hub 127.0.0.1:$gm_edge_port (gRPC, mTLS), health/metrics $gm_http"

# --- 5. two LocalControllers --------------------------------------------------------------------
declare -A lc_url
for node in "${nodes[@]}"; do
  mkdir -p "$run/$node/rootfs"
  examples/prepare-host-root.sh "$run/$node/rootfs" >/dev/null
  start "lc-$node" "$localcontroller" --node "$node" --gm "127.0.0.1:$gm_edge_port" \
    --db "$run/$node/lc.db" --host-root "$run/$node/rootfs" --listen 127.0.0.1:0 \
    --tls-ca "$pki/ca.crt" --tls-cert "$pki/nodes/$node.crt" --tls-key "$pki/nodes/$node.key"
done
for node in "${nodes[@]}"; do
  line="$(first_line "lc-$node" '^listening on http://' 30)"
  lc_url[$node]="${line#listening on }"
  say "LocalController $node: REST ${lc_url[$node]}, host root $run/$node/rootfs"
done

# --- 6. the examples ----------------------------------------------------------------------------
kc apply -f examples/ >/dev/null || die "kubectl apply -f examples/ failed"
say "applied examples/: $(kc get sedna --no-headers 2>/dev/null | wc -l) sedna.io objects"

# --- 7. wait until it converges -----------------------------------------------------------------
gm_ready() { curl -fsS --max-time 3 "$gm_http/readyz" >/dev/null 2>&1; }
lc_status() { curl -fsS --max-time 3 "${lc_url[$1]}/api/v1/status" 2>/dev/null; }
lc_connected() {
  local s
  s="$(lc_status "$1")" || return 1
  grep -Eq '"state": *"connected"' <<<"$s" && grep -Eq '"synced": *true' <<<"$s"
}
# Every Dataset has status.numberOfSamples, and each node has at least one counted Dataset.
datasets_counted() {
  local rows node
  rows="$(kc get datasets -A -o jsonpath='{range .items[*]}{.spec.nodeName}{"="}{.status.numberOfSamples}{"\n"}{end}' 2>/dev/null)" ||
    return 1
  [ -n "$rows" ] || return 1
  grep -Eqv '=[0-9]+$' <<<"$rows" && return 1
  for node in "${nodes[@]}"; do grep -Eq "^$node=[0-9]+$" <<<"$rows" || return 1; done
}
converged() {
  gm_ready || return 1
  local node
  for node in "${nodes[@]}"; do lc_connected "$node" || return 1; done
  datasets_counted
}

say "waiting up to ${timeout}s for: GM ready, both LocalControllers connected and synced, Datasets counted"
wait_started=$(date +%s)
deadline=$(( wait_started + timeout ))
until converged; do
  all_running || die "a process exited (see above)"
  [ "$(date +%s)" -lt "$deadline" ] || break
  sleep 0.5
done

# --- 8. verify and show -------------------------------------------------------------------------
show_json() { if command -v python3 >/dev/null; then python3 -m json.tool; else cat; echo; fi; }
show() {
  echo
  echo "\$ kubectl get en     # the fleet: each node's LocalController as the GlobalManager sees it"
  kc get en 2>&1 || true
  echo
  echo "\$ kubectl get sedna"
  kc get sedna 2>&1 || true
  echo
  echo "\$ kubectl get datasets -o wide"
  kc get datasets -o wide 2>&1 || true
  for node in "${nodes[@]}"; do
    echo
    echo "\$ curl ${lc_url[$node]}/api/v1/status     # LocalController $node"
    lc_status "$node" | show_json || echo "(no answer)"
  done
  echo
}
# What the table's columns mean at this point, so that Pending is not read as a failure.
legend() {
  local workers
  if [ "$demo_kubelet" = 1 ]; then
    workers="There is no kubelet here: demo-kubelet.sh FAKED the pods' phases (no container
                ran), so services show Running and jobs move on as it keeps faking them."
  else
    workers="There is no kubelet here (--no-demo-kubelet): they stay so. On a cluster the
                kubelet runs the workers and they turn Running."
  fi
  cat <<LEGEND
How to read it:
  STATUS/PHASE  a service or job is Pending (an IL/LL job Waiting) until its worker pods run.
                $workers
  SAMPLES       a Dataset's samples, counted on its node by the LocalController; follows the file.
  VERIFIED      a Model: true once its node's LocalController checked the file against
                spec.sha256; false (NoDigest) when the Model gives no sha256 to check against
                although the file is there; empty when no edge node holds it (cloud workers').
LEGEND
}

failures=0
verdict() {  # verdict NAME COMMAND...: prints ok/FAIL for one check.
  local name="$1"
  shift
  if "$@"; then say "ok    $name"; else say "FAIL  $name"; failures=$((failures + 1)); fi
}
verdict "GlobalManager /readyz" gm_ready
for node in "${nodes[@]}"; do verdict "LocalController $node connected and synced" lc_connected "$node"; done
verdict "every Dataset counted, on both nodes (kubectl get datasets: SAMPLES)" datasets_counted
verdict "all processes running" all_running

if [ "$failures" -gt 0 ]; then
  show
  say "logs: $run/logs/ (devapiserver.log, globalmanager.log, lc-edge-0.log, lc-edge-1.log)"
  die "$failures check(s) failed after $(elapsed)"
fi
say "converged $(( $(date +%s) - wait_started ))s after the examples were applied ($(elapsed) in all)"

# Worker pods the GM created (e.g. the DistributedJob example's): with no kubelet they stay Pending.
# The demo kubelet moves them out of Pending before the table is shown (a table of Pending rows
# reads as failure). Controllers may create pods at any time (the next stage, a retry), so pass
# again until none is Pending, within a deadline.
pending_pods() { kc get pods -A --field-selector=status.phase=Pending --no-headers 2>/dev/null | wc -l; }
if [ "$demo_kubelet" = 1 ]; then
  faked_deadline=$(( $(date +%s) + 20 ))
  : >"$run/logs/demo-kubelet.out"
  while [ "$(pending_pods)" -gt 0 ]; do
    [ "$(date +%s)" -lt "$faked_deadline" ] || die "demo-kubelet.sh left $(pending_pods) pods Pending for 20s"
    scripts/demo-kubelet.sh --once >>"$run/logs/demo-kubelet.out" 2>&1 || die "demo-kubelet.sh failed"
  done
  faked="$(grep -c 'FAKED pod' "$run/logs/demo-kubelet.out" || true)"
  say "ok    no worker pod left Pending: demo-kubelet.sh faked $faked pod phase(s) (DEMO ONLY; no container ran)"
  # The multi-edge inference services (FE, object search, object tracking) turn Running once
  # their Deployments are available and their tracking pods run — here, as faked.
  services_running() {
    local r phases
    for r in featureextractionservices objectsearchservices objecttrackingservices; do
      phases="$(kc get "$r" -A -o jsonpath='{range .items[*]}{.status.phase}{"\n"}{end}' 2>/dev/null)" || return 1
      [ -n "$phases" ] || return 1
      grep -qv '^Running$' <<<"$phases" && return 1
    done
    return 0
  }
  faked_deadline=$(( $(date +%s) + 30 ))
  until services_running; do
    [ "$(date +%s)" -lt "$faked_deadline" ] || break
    scripts/demo-kubelet.sh --once >>"$run/logs/demo-kubelet.out" 2>&1 || die "demo-kubelet.sh failed"
    sleep 0.5
  done
  verdict "FeatureExtractionService, ObjectSearchService, ObjectTrackingService Running (kubectl get fe,objs,objt)" services_running
  [ "$failures" -eq 0 ] || die "$failures check(s) failed after $(elapsed)"
fi
show
legend

if [ "$check" = 1 ]; then
  say "check passed"
  exit 0
fi

# --- 9. keep running until Ctrl-C ---------------------------------------------------------------
if [ "$demo_kubelet" = 1 ]; then
  scripts/demo-kubelet.sh --run-seconds 30 9>&- &
  pids+=("$!")
  names+=("demo-kubelet")
fi
cat <<EOF

Nereid is running (Ctrl-C stops everything). In another terminal:

  export KUBECONFIG=$KUBECONFIG
  kubectl get en                          # the fleet: connected, LC version, what each node holds
  kubectl describe en edge-0              # one node: conditions, failing object, Events
  kubectl get sedna                       # every sedna.io object with its status columns
  kubectl get fe,objs,objt                # the pedestrian-tracking services: PHASE, ACTIVE, FAILED
  kubectl get datasets -w                 # SAMPLES follow the files on the nodes
  printf 'images/new/%d.jpg 1\n' 1 2 3 4 5 6 >> $run/edge-0/rootfs/data/helmet_detection/train_data/train_data.txt
  curl ${lc_url[edge-0]}/api/v1/status      # a LocalController's own view (also /api/v1/datasets)
  curl $gm_http/metrics                    # GlobalManager metrics

Logs: $run/logs/
EOF
[ "$demo_kubelet" = 1 ] &&
  echo "scripts/demo-kubelet.sh is FAKING pod phases (there is no kubelet); its lines say what it does."
while all_running; do sleep 2; done
die "a process exited (see above)"
