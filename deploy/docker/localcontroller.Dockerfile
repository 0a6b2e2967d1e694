# syntax=docker/dockerfile:1
# The LocalController image. Build from the repository root (the context must be the whole tree):
#
#   docker build -f deploy/docker/localcontroller.Dockerfile -t nereid/localcontroller:0.1.0 .
#
# Stage 1 builds the one target with the same dependency script as CI, gRPC and Abseil linked
# statically (scripts/build-static-grpc.sh: the LC's idle memory target, bench/RESULTS.md); stage 2
# is bookworm-slim with only the runtime shared libraries and the binary. No HEALTHCHECK: Kubernetes probes
# /healthz and /readyz on 127.0.0.1:9100.
#
# It runs as root (uid 0), on purpose and with nothing else: the database directory
# (/var/lib/nereid) and the node's key (/etc/nereid/pki) are root-owned host paths, and datasets
# under the read-only /rootfs are usually readable by root. deploy/lc/daemonset.yaml drops every
# capability, forbids privilege escalation and mounts the root filesystem read-only, so this root
# cannot bypass file permissions. To run it as a non-root user instead, have the node installer
# chown /var/lib/nereid and /etc/nereid/pki to that uid and set runAsUser in the DaemonSet.

FROM debian:bookworm AS build
COPY scripts/install-deps.sh /src/scripts/install-deps.sh
# Root in the build container: the script calls apt-get directly (no sudo).
RUN /src/scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY . /src
RUN --mount=type=cache,target=/root/.cache/ccache \
    /src/scripts/build-static-grpc.sh /opt/grpc-static \
 && cmake -S /src -B /build -DCMAKE_BUILD_TYPE=RelWithDebInfo \
          -DNEREID_BUILD_TESTS=OFF -DNEREID_BUILD_BENCH=OFF -DNEREID_STATIC_GRPC_DIR=/opt/grpc-static \
 && cmake --build /build --target localcontroller -j"$(nproc)" \
 && strip --strip-debug -o /localcontroller /build/localcontroller/localcontroller

FROM debian:bookworm-slim
# The shared libraries the binary links (ldd build/localcontroller/localcontroller | dpkg -S; apt adds
# their own dependencies such as libbrotli1), and nothing else: gRPC and Abseil are static.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libprotobuf-lite32 libssl3 libc-ares2 libre2-9 zlib1g \
      libcpp-httplib0.11 libyaml-cpp0.7 libsqlite3-0 \
      libprometheus-cpp-core1.0 \
 && rm -rf /var/lib/apt/lists/*
COPY --from=build /localcontroller /usr/local/bin/localcontroller
# 9100: REST (worker reports, operator API), bound to 127.0.0.1 by default (host network).
EXPOSE 9100
ENTRYPOINT ["/usr/local/bin/localcontroller"]
