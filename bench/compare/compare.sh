#!/bin/sh
# compare.sh BASE AFTER [ROUNDS]: the handlers benchmarks of two commits, run alternately
# (base, after, base, after, ...) so that the machine's load moves both alike. Each commit
# gets its own checkout (its test binary reads ../valves.yaml) and test binary; the p50 of
# each benchmark per round is printed, to be compared as ratios round by round.
#
#   sh bench/compare/compare.sh fcf5417 37e9446 5
set -eu
base=$1 after=$2 rounds=${3:-3}
work=$(mktemp -d)
repo=$(git rev-parse --show-toplevel)
for v in base after; do
  eval commit=\$$v
  git -C "$repo" worktree add -f --detach "$work/$v" "$commit" >/dev/null
  (cd "$work/$v/handlers" && go test -c -o "$work/$v.test" .)
done
export FILESHED_SKIP_CATALOGUE=1 FILESHED_BENCH_SECONDS=10
for round in $(seq "$rounds"); do
  for v in base after; do
    echo "== $v round $round"
    cd "$work/$v/handlers"
    "$work/$v.test" -test.run '^$' -test.bench 'BenchmarkPatchTextAppend/files=100$|BenchmarkExecCat/landlock' -test.benchtime 500x -test.timeout 30m | grep -E '^Benchmark'
    "$work/$v.test" -test.run '^$' -test.bench 'BenchmarkVersioning' -test.benchtime 40x -test.timeout 30m | grep -E '^Benchmark'
    "$work/$v.test" -test.run '^$' -test.bench 'BenchmarkBusyDocuments' -test.benchtime 1x -test.timeout 30m | grep -E '^Benchmark'
  done
done
for v in base after; do git -C "$repo" worktree remove --force "$work/$v"; done
rm -rf "$work"
