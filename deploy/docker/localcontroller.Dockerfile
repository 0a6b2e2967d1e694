# syntax=docker/dockerfile:1
# The LocalController image. Built by scripts/build-images.sh (podman/buildah or Docker), or by
# hand from the repository root (the context must be the whole tree):
#
#   docker build -f deploy/docker/localcontroller.Dockerfile -t nereid/localcontroller:0.1.0 .
#
# Stages as in globalmanager.Dockerfile: `build` compiles the one target, gRPC and Abseil linked
# statically (scripts/build-static-grpc.sh: the LC's idle memory target, bench/RESULTS.md), and
# deploy/docker/runtime-payload.sh assembles the binary with its ldd closure; the runtime image is
# `FROM scratch` + that tree (no shell, no package manager), or + the build context's payload/
# with --build-arg PAYLOAD=prebuilt (scripts/build-images.sh --from-build). No HEALTHCHECK:
# Kubernetes probes /healthz and /readyz on 127.0.0.1:9100.
#
# It runs as root (uid 0), on purpose and with nothing else: the database directory
# (/var/lib/nereid) and the node's key (/etc/nereid/pki) are root-owned host paths, and datasets
# under the read-only /rootfs are usually readable by root. deploy/lc/daemonset.yaml drops every
# capability, forbids privilege escalation and mounts the root filesystem read-only, so this root
# cannot bypass file permissions. To run it as a non-root user instead, have the node installer
# chown /var/lib/nereid and /etc/nereid/pki to that uid and set runAsUser in the DaemonSet.
ARG PAYLOAD=source

FROM debian:bookworm-slim AS build
COPY scripts/install-deps.sh /src/scripts/install-deps.sh
# Root in the build container: the script calls apt-get directly (no sudo).
RUN /src/scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY scripts/build-static-grpc.sh /src/scripts/build-static-grpc.sh
COPY scripts/lib/ /src/scripts/lib/
COPY scripts/grpc-patches/ /src/scripts/grpc-patches/
RUN --mount=type=cache,target=/root/.cache/ccache \
    /src/scripts/build-static-grpc.sh /opt/grpc-static
COPY . /src
RUN --mount=type=cache,target=/root/.cache/ccache \
    cmake -S /src -B /build -DCMAKE_BUILD_TYPE=RelWithDebInfo \
          -DNEREID_BUILD_TESTS=OFF -DNEREID_BUILD_BENCH=OFF -DNEREID_STATIC_GRPC_DIR=/opt/grpc-static \
 && cmake --build /build --target localcontroller -j"$(nproc)" \
 && /src/deploy/docker/runtime-payload.sh /build/localcontroller/localcontroller /payload

FROM scratch AS source-payload
COPY --from=build /payload/ /

FROM scratch AS prebuilt-payload
COPY payload/ /

FROM ${PAYLOAD}-payload
USER 0:0
# 9100: REST (worker reports, operator API), bound to 127.0.0.1 by default (host network).
EXPOSE 9100
ENTRYPOINT ["/usr/local/bin/localcontroller"]
