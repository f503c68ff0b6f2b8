#!/bin/sh
# The system packages of the fileshed image: the command tools shed_exec's whitelist promises,
# plus tini. One list, run by the Dockerfile and by CI on the host (deploy/smoke.sh checks that
# shed_allowed_commands then reports nothing missing), so the image and the whitelist agree.
set -eu
PACKAGES="tini ca-certificates coreutils findutils grep sed gawk diffutils patch tar gzip bzip2
xz-utils zstd lz4 zip unzip jq yq sqlite3 file curl wget git bsdextrautils xxd binutils bc less
gettext-base dos2unix recode ripgrep libxml2-utils ncal util-linux debianutils poppler-utils"
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# shellcheck disable=SC2086 # the list is split on purpose
apt-get install -y -qq --no-install-recommends $PACKAGES >/dev/null
if [ "${1:-}" = "--slim" ]; then
  rm -rf /var/lib/apt/lists/*
fi
