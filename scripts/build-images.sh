#!/usr/bin/env bash
# Builds Nereid's two container images from deploy/docker/: nereid/globalmanager:TAG and
# nereid/localcontroller:TAG, with podman (buildah) or Docker.
#
#   scripts/build-images.sh [--tag TAG] [--from-build DIR] [--tool podman|docker]
#
#   --tag TAG         image tag (default: the tag deploy/kustomization.yaml pins)
#   --from-build DIR  package the binaries of an existing build tree (DIR/globalmanager/globalmanager,
#                     DIR/localcontroller/localcontroller) instead of compiling in the image: the
#                     same runtime stage, in seconds (tests, CI). DIR is only read: the build
#                     contexts are made in a temporary directory, removed at exit.
#                     Without it: the multi-stage from-source build (a ccache cache mount, static
#                     gRPC as scripts/test.sh builds it); work files go to build-images/.
#   --tool T          podman (default when installed) or docker
#   --base-only       only make sure the from-source build's base image is in the local store
#
# Both images are `FROM scratch` + the binary and the shared libraries it links (its ldd closure,
# deploy/docker/runtime-payload.sh): no shell, no package manager. The sizes are printed at the end.
#
# podman here uses a project-local containers.conf, build-images/containers.conf (passed with
# CONTAINERS_CONF unless you set one; the container tests use it too), never /etc: containers
# inherit the host's rlimits (default_ulimits = [], for hosts where root lacks
# CAP_SYS_RESOURCE), the runc runtime when installed (crun refuses hybrid cgroup layouts) and, without systemd, cgroupfs and file event logging. The from-source build starts
# FROM debian:bookworm-slim; when no such image is in the local store it is bootstrapped from this
# machine's apt sources with mmdebstrap (no registry needed), once per store.
set -euo pipefail
cd "$(dirname "$0")/.."
repo="$(pwd)"

usage() {
  sed -n '2,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

tag=""
from_build=""
tool=""
base_only=0
while [ $# -gt 0 ]; do
  case "$1" in
    --tag) [ $# -ge 2 ] || usage; tag="$2"; shift 2 ;;
    --from-build) [ $# -ge 2 ] || usage; from_build="$2"; shift 2 ;;
    --tool) [ $# -ge 2 ] || usage; tool="$2"; shift 2 ;;
    --base-only) base_only=1; shift ;;
    -h|--help) usage ;;
    *) echo "build-images: unknown argument $1" >&2; usage ;;
  esac
done
say() { echo "build-images: $*"; }
die() { echo "build-images: FAILED: $*" >&2; exit 1; }

if [ -z "$tag" ]; then
  tag="$(sed -n '/name: nereid\/globalmanager/{n;s/.*newTag: *//p}' deploy/kustomization.yaml)"
  [ -n "$tag" ] || die "no --tag and no newTag for nereid/globalmanager in deploy/kustomization.yaml"
fi
if [ -z "$tool" ]; then
  if command -v podman >/dev/null; then tool=podman
  elif command -v docker >/dev/null; then tool=docker
  else die "neither podman nor docker is installed (scripts/install-deps.sh --containers installs podman)"
  fi
fi
case "$tool" in podman|docker) ;; *) die "--tool must be podman or docker" ;; esac
command -v "$tool" >/dev/null || die "$tool is not installed"

settings="$repo/build-images"
mkdir -p "$settings"
if [ -n "$from_build" ]; then
  from_build="$(cd "$from_build" && pwd)" || die "no build tree $from_build"
  work="$(mktemp -d "${TMPDIR:-/tmp}/nereid-images.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
else
  work="$settings"
fi

# --- podman's project-local configuration --------------------------------------------------------
if [ "$tool" = podman ] && [ -z "${CONTAINERS_CONF:-}" ]; then
  {
    echo "# Written by scripts/build-images.sh: project-local podman settings (see its header)."
    echo "[containers]"
    echo "default_ulimits = []"
    echo "[engine]"
    if command -v runc >/dev/null; then echo 'runtime = "runc"'; fi
    if [ ! -d /run/systemd/system ]; then
      echo 'cgroup_manager = "cgroupfs"'
      echo 'events_logger = "file"'
    fi
  } >"$settings/containers.conf"
  export CONTAINERS_CONF="$settings/containers.conf"
fi

# --- the from-source build's base image ----------------------------------------------------------
base=docker.io/library/debian:bookworm-slim
ensure_base_image() {
  [ "$tool" = podman ] || return 0   # Docker pulls it from its registry as usual.
  podman image exists "$base" && return 0
  command -v mmdebstrap >/dev/null ||
    die "$base is not in the local store and mmdebstrap is not installed to bootstrap it (scripts/install-deps.sh --containers)"
  say "bootstrapping $base from this machine's apt sources (mmdebstrap, once per image store)"
  local sources tarball started
  started=$(date +%s)
  sources="$work/base.sources"
  tarball="$work/bookworm-slim.tar"
  scripts/lib/debian-apt-sources.sh deb >"$sources"
  # minbase without documentation, man pages and translations: what bookworm-slim leaves out.
  mmdebstrap --quiet --variant=minbase --mode=root --format=tar \
    --dpkgopt='path-exclude=/usr/share/man/*' --dpkgopt='path-exclude=/usr/share/doc/*' \
    --dpkgopt='path-include=/usr/share/doc/*/copyright' \
    --dpkgopt='path-exclude=/usr/share/locale/*' --dpkgopt='path-exclude=/usr/share/info/*' \
    --aptopt='Acquire::Languages "none"' \
    bookworm "$tarball" "$sources"
  # Without PATH the image's processes (and `podman kube play`) find no binaries.
  podman import --quiet \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'CMD ["bash"]' "$tarball" "$base" >/dev/null
  rm -f "$tarball"
  say "bootstrapped $base in $(( $(date +%s) - started ))s"
}

# --- build ---------------------------------------------------------------------------------------
build_one() {  # build_one COMPONENT
  local component="$1" image="nereid/$1:$tag" dockerfile="$repo/deploy/docker/$1.Dockerfile"
  local started context args=()
  started=$(date +%s)
  if [ -n "$from_build" ]; then
    local binary="$from_build/$component/$component"
    [ -x "$binary" ] || die "$binary is missing: build it first (cmake --build $from_build --target $component)"
    context="$work/$component"
    mkdir -p "$context"
    deploy/docker/runtime-payload.sh "$binary" "$context/payload"
    args=(--build-arg PAYLOAD=prebuilt)
  else
    context="$repo"
    # The build stage runs apt-get and so needs the network; host networking needs no bridge setup.
    # PAYLOAD is passed although it is the default: buildah 1.28 does not apply an ARG's default
    # to a FROM that names a stage ("short-name source-payload did not resolve").
    args=(--build-arg PAYLOAD=source)
    [ "$tool" = podman ] && args+=(--network host)
  fi
  say "building $image with $tool from ${from_build:-source}"
  "$tool" build --quiet "${args[@]}" -f "$dockerfile" -t "$image" "$context" >/dev/null ||
    die "$tool build of $image failed"
  say "built $image in $(( $(date +%s) - started ))s"
}

[ -n "$from_build" ] || ensure_base_image
[ "$base_only" = 0 ] || exit 0
for component in globalmanager localcontroller; do build_one "$component"; done

# --- sizes ---------------------------------------------------------------------------------------
for component in globalmanager localcontroller; do
  image="nereid/$component:$tag"
  bytes="$("$tool" image inspect --format '{{.Size}}' "$image")"
  gz="$("$tool" save "$image" 2>/dev/null | gzip -1 | wc -c)"
  awk -v i="$image" -v b="$bytes" -v g="$gz" \
    'BEGIN { printf "build-images: %-34s %6.1f MB (%.1f MB gzip-compressed, as pulled)\n", i, b / 1e6, g / 1e6 }'
done
