# syntax=docker/dockerfile:1
# Base images are pinned by digest (refresh: docker buildx imagetools inspect <image:tag>).
# Build: static binaries, no cgo (modernc SQLite is pure Go). The build context has no .git,
# so the commit comes as an argument, printed by `fileshed version` and in the revision label:
#   docker build --build-arg COMMIT=$(git rev-parse HEAD) -t fileshed .
FROM golang:1.26-bookworm@sha256:a688600ca24f8a4d3ca77f95b0dd40704a9fc787c826660eb7ba0b641b8b175d AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG COMMIT=""
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.commit=${COMMIT}" -o /out/fileshed . \
 && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/fileshed-sandbox ./cmd/fileshed-sandbox

# Runtime: Debian slim with the command tools the whitelist promises (one list, in
# deploy/image-tools.sh, which CI also runs on the host before its smoke test), tini as PID 1,
# a non-root user.
FROM debian:bookworm-slim@sha256:3783cc01769c7b2b1b83a5c5ad96c815348e28ed7da68e2e3687004faa906251
ARG COMMIT=""
LABEL org.opencontainers.image.title="fileshed" \
      org.opencontainers.image.description="A persistent, sandboxed file workshop for Open WebUI: an OpenAPI tool server" \
      org.opencontainers.image.source="https://github.com/fileshed/fileshed" \
      org.opencontainers.image.version="0.2.0" \
      org.opencontainers.image.revision="${COMMIT}"
COPY deploy/image-tools.sh /tmp/image-tools.sh
RUN sh /tmp/image-tools.sh --slim && rm /tmp/image-tools.sh \
 && useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin fileshed \
 && install -d -m 0700 -o fileshed -g fileshed /data
# The small launcher beside the server starts commands faster than re-executing the server.
COPY --from=build /out/fileshed /out/fileshed-sandbox /usr/local/bin/
USER fileshed
# Listening on 0.0.0.0 needs an authentication mode: set FILESHED_AUTH_MODE (session with
# FILESHED_OPENWEBUI_URL, or jwt or headers with FILESHED_AUTH_API_KEY) and FILESHED_PUBLIC_URL
# (the address browsers reach for download links); see README "With Docker".
# GOMEMLIMIT is the Go runtime's soft memory limit: near it the collector works harder
# instead of growing the heap (commands run outside it). Override with -e GOMEMLIMIT=...
ENV FILESHED_LISTEN=0.0.0.0:8000 \
    FILESHED_STORAGE_BASE_PATH=/data \
    GOMEMLIMIT=256MiB
VOLUME /data
EXPOSE 8000
# Commands are killed after the shutdown grace; docker stop must wait a little longer:
# run with --stop-timeout 35 (compose: stop_grace_period: 35s).
STOPSIGNAL SIGTERM
# Readiness, not mere liveness (/readyz): a server that answers but refuses every command
# (no Landlock under an old seccomp profile, a read-only volume, draining) is unhealthy.
HEALTHCHECK --interval=30s --timeout=5s --start-period=5s CMD ["fileshed", "healthcheck", "--ready"]
ENTRYPOINT ["/usr/bin/tini", "--", "fileshed"]
