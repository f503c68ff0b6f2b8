#!/usr/bin/env bash
# bench/flaky/flaky.sh: is the suite deterministic on a busy machine? Runs every test named in
# bench/flaky/tests.txt N times, each run beside two busy loops (the load of a CI machine with
# two packages testing at once), then the whole suite K times (plain `go test ./...`), and
# prints the failures per test. Exit status 1 when anything failed.
#   bash bench/flaky/flaky.sh [-n N] [-k K] [-l LIST]     (defaults: N=10, K=3)
set -uo pipefail
cd "$(dirname "$0")/../.."
n=10; k=3; list=bench/flaky/tests.txt
while getopts "n:k:l:" o; do
  case $o in n) n=$OPTARG ;; k) k=$OPTARG ;; l) list=$OPTARG ;; *) exit 2 ;; esac
done
work=$(mktemp -d); trap 'kill $busy 2>/dev/null; rm -rf "$work"' EXIT
busy=""
start_busy() { for _ in 1 2; do (while :; do :; done) & busy="$busy $!"; done; }
stop_busy() { kill $busy 2>/dev/null; wait $busy 2>/dev/null; busy=""; }
declare -A failed
total=0
echo "== named tests, $n runs each beside two busy loops"
while read -r pkg name; do
  case "$pkg" in ""|\#*) continue ;; esac
  bin="$work/$(echo "$pkg" | tr '/.' '__').test"
  [ -x "$bin" ] || go test -c -o "$bin" "$pkg" || { echo "cannot build $pkg"; exit 1; }
  fails=0
  start_busy
  for _ in $(seq "$n"); do
    (cd "$pkg" && "$bin" -test.run "^${name}\$" -test.count=1 >"$work/out" 2>&1) || {
      fails=$((fails + 1)); grep -m3 -E -- '--- FAIL|_test.go:[0-9]+' "$work/out" | sed 's/^/      /'; }
  done
  stop_busy
  printf '  %-55s %d/%d failed\n' "$pkg $name" "$fails" "$n"
  total=$((total + fails))
done <"$list"
echo "== the whole suite, $k runs (go test -count=1 ./...)"
for i in $(seq "$k"); do
  t0=$SECONDS
  go test -count=1 -json ./... >"$work/suite.json" 2>&1
  # a failed test by its name; a package that failed without a failed test (a build
  # failure, a panic outside a test, a timeout) by its path
  fails=$( { grep '"Action":"fail"' "$work/suite.json" | grep -o '"Test":"[^"]*"';
             grep '"Action":"fail"' "$work/suite.json" | grep -v '"Test"' | grep -o '"Package":"[^"]*"'; } | sort -u)
  echo "  run $i: $((SECONDS - t0)) s, $(grep -c '"Action":"pass","Package":"[^"]*","Test"' "$work/suite.json") tests passed, $(echo -n "$fails" | grep -c . ) failed"
  for f in $fails; do failed[$f]=$(( ${failed[$f]:-0} + 1 )); total=$((total + 1)); done
done
for f in "${!failed[@]}"; do echo "  $f failed in ${failed[$f]} of $k suite runs"; done
echo "== $total failures"
[ "$total" -eq 0 ]
