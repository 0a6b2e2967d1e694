# syntax=docker/dockerfile:1
# The GlobalManager image. Built by scripts/build-images.sh (podman/buildah or Docker), or by hand
# from the repository root (the context must be the whole tree):
#
#   docker build -f deploy/docker/globalmanager.Dockerfile -t nereid/globalmanager:0.1.0 .
#
# Stage `build` compiles the one target with the same dependency script as CI, gRPC and Abseil
# linked statically (scripts/build-static-grpc.sh, as scripts/test.sh builds), and assembles the
# runtime tree with deploy/docker/runtime-payload.sh: the binary, its ldd closure, passwd/group.
# The runtime image is `FROM scratch` + that tree: no shell, no package manager. With
# --build-arg PAYLOAD=prebuilt the tree comes from the build context's payload/ directory instead
# (scripts/build-images.sh --from-build assembles it from an existing build tree); the runtime
# stage is the same either way. It runs as the unprivileged user 65532 (deploy/gm/deployment.yaml
# pins the same uid). No HEALTHCHECK: Kubernetes probes /healthz and /readyz on the http port.
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
 && cmake --build /build --target globalmanager -j"$(nproc)" \
 && /src/deploy/docker/runtime-payload.sh /build/globalmanager/globalmanager /payload

FROM scratch AS source-payload
COPY --from=build /payload/ /

FROM scratch AS prebuilt-payload
COPY payload/ /

FROM ${PAYLOAD}-payload
USER 65532:65532
# 9000: edge hub (gRPC, mTLS); 8080: /healthz /readyz /metrics (gm.yaml httpListen).
EXPOSE 9000 8080
ENTRYPOINT ["/usr/local/bin/globalmanager"]
