#!/usr/bin/env bash
# deploy/release.sh: what a release publishes, built from one commit.
#   bash deploy/release.sh [OUT_DIR]           (default: dist/)
# For each of linux/amd64 and linux/arm64: a static fileshed and fileshed-sandbox (the image's
# flags: CGO off, -trimpath, -s -w, the commit given with -X main.commit) in
# fileshed_<version>_linux_<arch>.tar.gz with README.md, LICENSE, CHANGELOG.md and
# valves.yaml; beside it <archive>.sbom.txt, the modules each binary was built from
# (`go version -m`: module paths, versions and sums); and SHA256SUMS over all of them. The
# container image of the same commit is built from the Dockerfile with
# `docker build --build-arg COMMIT=<commit> -t fileshed:<version> .`.
# The version is handlers.Version; on a tagged commit the tag must be v<version>.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-dist}
version=$(sed -n 's/^const Version = "\(.*\)"$/\1/p' handlers/handlers.go)
[ -n "$version" ] || { echo "release: no handlers.Version"; exit 1; }
COMMIT=$(git rev-parse HEAD 2>/dev/null || echo "")
if tag=$(git describe --tags --exact-match 2>/dev/null) && [ "$tag" != "v$version" ]; then
  echo "release: the commit is tagged $tag but handlers.Version is $version"; exit 1
fi
if [ -n "$(git status --porcelain 2>/dev/null)" ]; then
  echo "release: uncommitted changes: a release is built from a commit"; exit 1
fi
rm -rf "$out"; mkdir -p "$out"
for arch in amd64 arm64; do
  name="fileshed_${version}_linux_${arch}"
  stage=$(mktemp -d); dir="$stage/$name"; mkdir "$dir"
  CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath -ldflags="-s -w -X main.commit=${COMMIT}" -o "$dir/fileshed" .
  CGO_ENABLED=0 GOOS=linux GOARCH=$arch go build -trimpath -ldflags="-s -w" -o "$dir/fileshed-sandbox" ./cmd/fileshed-sandbox
  cp README.md LICENSE CHANGELOG.md valves.yaml "$dir/"
  go version -m "$dir/fileshed" "$dir/fileshed-sandbox" | sed "s|$stage/||" >"$out/$name.tar.gz.sbom.txt"
  tar -C "$stage" --owner=0 --group=0 --numeric-owner -czf "$out/$name.tar.gz" "$name"
  rm -rf "$stage"
done
(cd "$out" && sha256sum -- *.tar.gz *.sbom.txt >SHA256SUMS)
echo "release $version (commit ${COMMIT:-unknown}) in $out:"
(cd "$out" && ls -l)
