# syntax=docker/dockerfile:1
# The GlobalManager image. Build from the repository root (the context must be the whole tree):
#
#   docker build -f deploy/docker/globalmanager.Dockerfile -t nereid/globalmanager:0.1.0 .
#
# Stage 1 builds the one target with the same dependency script as CI; stage 2 is bookworm-slim
# with only the runtime shared libraries and the binary, running as the unprivileged user 65532
# (deploy/gm/deployment.yaml pins the same uid). No HEALTHCHECK: Kubernetes probes /healthz and
# /readyz on the http port.

FROM debian:bookworm AS build
COPY scripts/install-deps.sh /src/scripts/install-deps.sh
# Root in the build container: the script calls apt-get directly (no sudo).
RUN /src/scripts/install-deps.sh && rm -rf /var/lib/apt/lists/*
COPY . /src
RUN --mount=type=cache,target=/root/.cache/ccache \
    cmake -S /src -B /build -DCMAKE_BUILD_TYPE=RelWithDebInfo \
          -DNEREID_BUILD_TESTS=OFF -DNEREID_BUILD_BENCH=OFF \
 && cmake --build /build --target globalmanager -j"$(nproc)" \
 && strip --strip-debug -o /globalmanager /build/globalmanager/globalmanager

FROM debian:bookworm-slim
# The shared libraries the binary links (ldd build/globalmanager/globalmanager | dpkg -S; apt adds
# their own dependencies such as libc-ares2 and libre2-9), and nothing else.
RUN apt-get update \
 && apt-get install -y --no-install-recommends \
      libabsl20220623 libgrpc++1.51 libgrpc29 libprotobuf-lite32 libssl3 \
      libcpp-httplib0.11 libyaml-cpp0.7 libsqlite3-0 \
      libprometheus-cpp-core1.0 \
 && rm -rf /var/lib/apt/lists/* \
 && groupadd --gid 65532 nereid \
 && useradd --uid 65532 --gid 65532 --no-create-home --home-dir /nonexistent \
            --shell /usr/sbin/nologin nereid
COPY --from=build /globalmanager /usr/local/bin/globalmanager
USER 65532:65532
# 9000: edge hub (gRPC, mTLS); 8080: /healthz /readyz /metrics (gm.yaml httpListen).
EXPOSE 9000 8080
ENTRYPOINT ["/usr/local/bin/globalmanager"]
