#!/usr/bin/env bash
# Host smoke test of the image recipe (no Docker engine here): with the image's packages
# installed (deploy/image-tools.sh), build the server and the small launcher as the image
# does (same flags, the commit given as COMMIT), start them as a non-root user, call one tool
# of each family, check that every whitelisted command is installed, that the image's
# HEALTHCHECK (healthcheck --ready) passes, and stop the server with SIGTERM.
set -euo pipefail
cd "$(dirname "$0")/.."
user=fileshed-smoke
work=$(mktemp -d /tmp/fileshed-smoke.XXXXXX)
chmod 755 "$work"
trap 'kill "${pid:-}" 2>/dev/null || true; rm -rf "$work"' EXIT
COMMIT=$(git rev-parse HEAD 2>/dev/null || echo smoke-test)
CGO_ENABLED=0 go build -trimpath -ldflags="-s -w -X main.commit=${COMMIT}" -o "$work/fileshed" .
CGO_ENABLED=0 go build -trimpath -ldflags="-s -w" -o "$work/fileshed-sandbox" ./cmd/fileshed-sandbox
"$work/fileshed" version | grep -q " commit ${COMMIT:0:12} " || { echo "smoke: version does not name commit $COMMIT"; "$work/fileshed" version; exit 1; }
id "$user" >/dev/null 2>&1 || useradd --system --no-create-home --shell /usr/sbin/nologin "$user"
mkdir -p "$work/data" && chown "$user:" "$work/data"
port=$(( 20000 + RANDOM % 20000 ))
url="http://127.0.0.1:$port"
( cd "$work" && exec setpriv --reuid "$user" --regid "$user" --clear-groups -- env -i PATH=/usr/local/bin:/usr/bin:/bin \
    FILESHED_STORAGE_BASE_PATH="$work/data" FILESHED_LISTEN="127.0.0.1:$port" \
    FILESHED_ENCRYPTION_MASTER_KEY="smoke-test-master-key-0123456789abcdef" \
    "$work/fileshed" ) >"$work/log" 2>&1 &
pid=$!
for _ in $(seq 100); do curl -fs "$url/healthz" >/dev/null 2>&1 && break; sleep 0.1; done
curl -fs "$url/healthz" >/dev/null || { echo "smoke: server did not start"; cat "$work/log"; exit 1; }

fail=0
call() { # tool, body, jq filter that must be true
  local out
  out=$(curl -s -XPOST "$url/$1" -H 'Content-Type: application/json' -d "$2")
  if ! echo "$out" | jq -e "$3" >/dev/null; then
    echo "smoke: $1 $2 -> $out"; fail=1
  else
    echo "smoke: $1 ok"
  fi
}
call shed_help '{"howto":""}' '.success'
call shed_create_file '{"zone":"storage","path":"a/hello.txt","content":"hello\n"}' '.success'
call shed_read '{"zone":"storage","path":"a/hello.txt"}' '.success and (.data.content|test("hello"))'
call shed_exec '{"zone":"storage","cmd":"grep","args":["-c","hello","a/hello.txt"]}' '.success and .data.returncode == 0'
call shed_create_file '{"zone":"documents","path":"plan.md","content":"v1\n"}' '.success'
call shed_history '{"zone":"documents","path":"plan.md"}' '.success and (.data.entries|length) >= 1'
call shed_lockedit '{"action":"open","zone":"documents","path":"plan.md"}' '.success'
call shed_lockedit '{"action":"overwrite","zone":"documents","path":"plan.md","content":"v2\n"}' '.success'
call shed_lockedit '{"action":"save","zone":"documents","path":"plan.md"}' '.success'
call shed_read '{"zone":"documents","path":"plan.md"}' '.success and (.data.content|test("v2"))'
call shed_info '{"action":"stats"}' '.success'
call shed_encryption '{"action":"setup"}' '.success'
call shed_create_file '{"zone":"storage","path":"secret.txt","content":"sealed\n"}' '.success'
call shed_exec '{"zone":"storage","cmd":"grep","args":["-c","sealed","secret.txt"]}' '.success and .data.returncode == 0'
call shed_search '{"query":"sealed","zone":"storage"}' '.success and .data.matches == 1'
head -c 8 "$work/data/users/local/Storage/data/secret.txt" | grep -q FSHDENC || { echo "smoke: secret.txt is not encrypted on disk"; fail=1; }
# The image's package list and the whitelist agree: nothing the whitelist names is missing.
call shed_info '{"action":"commands"}' '.success and .data.summary.missing == 0'
"$work/fileshed" healthcheck --ready --listen "127.0.0.1:$port" || { echo "smoke: the image's HEALTHCHECK (healthcheck --ready) fails"; fail=1; }
curl -fs "$url/metrics" -o "$work/metrics" && grep -q fileshed_tool_calls_total "$work/metrics" || { echo "smoke: /metrics"; fail=1; }
owner=$(stat -c %U "$work/data/users/local/Storage/data/a/hello.txt")
[ "$owner" = "$user" ] || { echo "smoke: files owned by $owner, want $user"; fail=1; }

kill -TERM "$pid"
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
if kill -0 "$pid" 2>/dev/null; then echo "smoke: SIGTERM did not stop the server"; fail=1; fi
wait "$pid" || { echo "smoke: server exited with $?"; fail=1; }
[ "$fail" = 0 ] || { echo "--- server log"; cat "$work/log"; exit 1; }
echo "smoke: image recipe ok"
