#!/usr/bin/env bash
# DEMO ONLY — a pretend kubelet for the quickstart. No container runs: it rewrites pod STATUS through
# the pods' status subresource (as a kubelet would report it), so that with devapiserver, which has
# no kubelet, jobs visibly progress: Pending → Running → (after --run-seconds) Succeeded with exit
# code 0 — except pods with restartPolicy Always (service workers), which a kubelet restarts and
# which therefore keep running. Likewise it plays the deployment controller: a Deployment's status
# says all its replicas are available. It announces every change it makes. Never point it at a real cluster: it would report
# pods as running that are not. It refuses to unless --i-know-this-is-fake is given.
#
# Usage: scripts/demo-kubelet.sh [--once] [--run-seconds N] [--interval S] [--namespace NS]
#   --once          one pass over the pods, then exit
#   --run-seconds   how long a pod "runs" before it "succeeds" (default 30; 0 = runs forever)
#   --interval      seconds between passes (default 2)
#   --namespace     only this namespace (default: all)
# Uses $KUBECONFIG (the quickstart's run/quickstart/kubeconfig).
set -euo pipefail

usage() {
  sed -n '2,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

once=0
run_seconds=30
interval=2
ns_args=(--all-namespaces)
allow_real=0
while [ $# -gt 0 ]; do
  case "$1" in
    --once) once=1; shift ;;
    --run-seconds) [ $# -ge 2 ] || usage; run_seconds="$2"; shift 2 ;;
    --interval) [ $# -ge 2 ] || usage; interval="$2"; shift 2 ;;
    --namespace) [ $# -ge 2 ] || usage; ns_args=(--namespace "$2"); shift 2 ;;
    --i-know-this-is-fake) allow_real=1; shift ;;
    -h|--help) usage ;;
    *) echo "demo-kubelet: unknown argument $1" >&2; usage ;;
  esac
done
for n in "$run_seconds" "$interval"; do
  case "$n" in ''|*[!0-9]*) echo "demo-kubelet: '$n' is not a number of seconds" >&2; exit 2 ;; esac
done
[ "$interval" -ge 1 ] || interval=1

say() { echo "demo-kubelet: $*"; }

# devapiserver says who it is in /version; a real API server does not.
if [ "$allow_real" != 1 ] && ! kubectl version -o json 2>/dev/null | grep -q 'nereid-devapiserver'; then
  echo "demo-kubelet: the API server is not devapiserver; refusing to fake pod status on a real" \
       "cluster (pass --i-know-this-is-fake to override)" >&2
  exit 1
fi

say "DEMO ONLY: no containers run; pod phases are faked through the status subresource"

now_rfc3339() { date -u +%Y-%m-%dT%H:%M:%SZ; }

# container_statuses PHASE CONTAINERS...: the containerStatuses JSON a kubelet would report.
container_statuses() {
  local phase="$1" now out="" sep="" c state
  shift
  now="$(now_rfc3339)"
  for c in "$@"; do
    if [ "$phase" = Running ]; then
      state="{\"running\":{\"startedAt\":\"$now\"}}"
    else
      state="{\"terminated\":{\"exitCode\":0,\"reason\":\"Completed\",\"finishedAt\":\"$now\"}}"
    fi
    out+="$sep{\"name\":\"$c\",\"ready\":$([ "$phase" = Running ] && echo true || echo false),"
    out+="\"restartCount\":0,\"image\":\"demo\",\"imageID\":\"\",\"started\":"
    out+="$([ "$phase" = Running ] && echo true || echo false),\"state\":$state}"
    sep=","
  done
  echo "[$out]"
}

# set_phase NS NAME PHASE CONTAINERS...
set_phase() {
  local ns="$1" name="$2" phase="$3" now ready patch
  shift 3
  now="$(now_rfc3339)"
  ready=False
  [ "$phase" = Running ] && ready=True
  patch="{\"status\":{\"phase\":\"$phase\",\"hostIP\":\"127.0.0.1\",\"podIP\":\"127.0.0.1\","
  [ "$phase" = Running ] && patch+="\"startTime\":\"$now\","
  patch+="\"conditions\":[{\"type\":\"Ready\",\"status\":\"$ready\",\"lastTransitionTime\":\"$now\"}],"
  patch+="\"containerStatuses\":$(container_statuses "$phase" "$@")}}"
  if kubectl patch pod "$name" -n "$ns" --subresource=status --type=merge -p "$patch" >/dev/null 2>&1; then
    say "FAKED pod $ns/$name → $phase"
  else
    say "could not patch pod $ns/$name (deleted meanwhile?)"
  fi
}

# Deployments: every replica "available", as the deployment controller would report it.
pass_deployments() {
  local ns name replicas generation observed available patch now
  kubectl get deployments "${ns_args[@]}" -o jsonpath='{range .items[*]}{.metadata.namespace}{"|"}{.metadata.name}{"|"}{.spec.replicas}{"|"}{.metadata.generation}{"|"}{.status.observedGeneration}{"|"}{.status.availableReplicas}{"\n"}{end}' 2>/dev/null |
  while IFS='|' read -r ns name replicas generation observed available; do
    [ -n "$name" ] || continue
    replicas="${replicas:-1}"
    generation="${generation:-1}"
    [ "$observed" = "$generation" ] && [ "${available:-0}" = "$replicas" ] && continue
    now="$(now_rfc3339)"
    patch="{\"status\":{\"observedGeneration\":$generation,\"replicas\":$replicas,"
    patch+="\"readyReplicas\":$replicas,\"availableReplicas\":$replicas,\"updatedReplicas\":$replicas,"
    patch+="\"conditions\":[{\"type\":\"Available\",\"status\":\"True\",\"reason\":\"MinimumReplicasAvailable\",\"lastTransitionTime\":\"$now\"},"
    patch+="{\"type\":\"Progressing\",\"status\":\"True\",\"reason\":\"NewReplicaSetAvailable\",\"lastTransitionTime\":\"$now\"}]}}"
    if kubectl patch deployment "$name" -n "$ns" --subresource=status --type=merge -p "$patch" >/dev/null 2>&1; then
      say "FAKED deployment $ns/$name → $replicas/$replicas available"
    else
      say "could not patch deployment $ns/$name (deleted meanwhile?)"
    fi
  done
}

pass() {
  pass_deployments
  local line ns name phase start deletion restart containers now_s start_s
  now_s="$(date -u +%s)"
  # One line per pod: namespace name phase startTime|deletionTimestamp|restartPolicy|containers.
  kubectl get pods "${ns_args[@]}" -o jsonpath='{range .items[*]}{.metadata.namespace}{" "}{.metadata.name}{" "}{.status.phase}{" "}{.status.startTime}{"|"}{.metadata.deletionTimestamp}{"|"}{.spec.restartPolicy}{"|"}{range .spec.containers[*]}{.name}{","}{end}{"\n"}{end}' 2>/dev/null |
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    ns="${line%% *}"; line="${line#* }"
    name="${line%% *}"; line="${line#* }"
    phase="${line%% *}"; line="${line#* }"
    start="${line%%|*}"; line="${line#*|}"
    deletion="${line%%|*}"; line="${line#*|}"
    restart="${line%%|*}"; containers="${line#*|}"
    [ -z "$deletion" ] || continue
    IFS=',' read -r -a names <<<"${containers%,}"
    case "$phase" in
      ""|Pending) set_phase "$ns" "$name" Running "${names[@]}" ;;
      Running)
        if [ "$run_seconds" -gt 0 ] && [ -n "$start" ] && [ "$restart" != Always ]; then
          start_s="$(date -u -d "$start" +%s 2>/dev/null || echo "$now_s")"
          if [ $((now_s - start_s)) -ge "$run_seconds" ]; then
            set_phase "$ns" "$name" Succeeded "${names[@]}"
          fi
        fi
        ;;
    esac
  done
}

trap 'say "stopped"; exit 0' INT TERM
while true; do
  pass
  [ "$once" = 1 ] && exit 0
  sleep "$interval"
done
