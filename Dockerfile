# syntax=docker/dockerfile:1
# Build: static binary, no cgo (modernc SQLite is pure Go).
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/fileshed . \
 && CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o /out/fileshed-sandbox ./cmd/fileshed-sandbox

# Runtime: debian-slim with the whitelisted command tools, tini as PID 1, non-root user.
FROM debian:bookworm-slim
RUN apt-get update \
 && apt-get install -y --no-install-recommends tini ca-certificates git zip unzip jq gawk sed \
      sqlite3 file xxd bsdextrautils bzip2 xz-utils zstd lz4 curl \
 && rm -rf /var/lib/apt/lists/* \
 && useradd --system --uid 10001 --home-dir /data --shell /usr/sbin/nologin fileshed \
 && mkdir -p /data && chown fileshed:fileshed /data
# The small launcher beside the server starts commands faster than re-executing the server.
COPY --from=build /out/fileshed /out/fileshed-sandbox /usr/local/bin/
USER fileshed
ENV FILESHED_LISTEN=0.0.0.0:8000 \
    FILESHED_STORAGE_BASE_PATH=/data
VOLUME /data
EXPOSE 8000
HEALTHCHECK --interval=30s --timeout=5s --start-period=5s CMD ["fileshed", "healthcheck"]
ENTRYPOINT ["/usr/bin/tini", "--", "fileshed"]
