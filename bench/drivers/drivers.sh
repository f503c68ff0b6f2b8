#!/bin/sh
# drivers.sh [ROUNDS] [CALLS]: issue 25's single-write target, state.driver postgres against
# sqlite. Runs handlers' BenchmarkStateDrivers ROUNDS times (default 5) in one test binary:
# each round starts one server per driver and calls them alternately CALLS times (default
# 300) with a 1 KB append to Storage and to Documents (write + commit). PostgreSQL is the
# tests' private server with a production server's durability (FILESHED_PGTEST_DURABLE=1).
# Prints each round's p50s (ms) and ratios (postgres / sqlite; target <= 1.5), then the
# median and the range of the ratios, and the load average before and after.
#
#   sh bench/drivers/drivers.sh 5 300
set -eu
rounds=${1:-5} calls=${2:-300}
repo=$(git rev-parse --show-toplevel)
bin=$(mktemp -d)
trap 'rm -rf "$bin"' EXIT
(cd "$repo/handlers" && go test -c -o "$bin/handlers.test" .)
echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)"
cd "$repo/handlers"
FILESHED_SKIP_CATALOGUE=1 FILESHED_PGTEST_DURABLE=1 "$bin/handlers.test" -test.run '^$' \
  -test.bench '^BenchmarkStateDrivers$' -test.benchtime "${calls}x" -test.count "$rounds" -test.timeout 60m |
  awk '
    /^BenchmarkStateDrivers/ {
      for (i = 3; i < NF; i++) v[$(i+1)] = $i
      n++; sr[n] = v["storage-ratio"]; dr[n] = v["documents-ratio"]
      printf "round %d  storage p50 sqlite %.2f ms postgres %.2f ms ratio %.2f | documents p50 sqlite %.2f ms postgres %.2f ms ratio %.2f\n",
        n, v["storage-sqlite-p50-µs"]/1000, v["storage-postgres-p50-µs"]/1000, sr[n],
        v["documents-sqlite-p50-µs"]/1000, v["documents-postgres-p50-µs"]/1000, dr[n]
      next
    }
    /^(FAIL|panic|---)/ || /_test\.go/ { print; failed = 1 }
    function median(a, n,   i, j, t, b) {
      for (i = 1; i <= n; i++) b[i] = a[i]
      for (i = 2; i <= n; i++) for (j = i; j > 1 && b[j-1] > b[j]; j--) { t = b[j]; b[j] = b[j-1]; b[j-1] = t }
      lo = b[1]; hi = b[n]
      return n % 2 ? b[(n+1)/2] : (b[n/2] + b[n/2+1]) / 2
    }
    END {
      if (n == 0) { print "no benchmark result"; exit 1 }
      m = median(sr, n); printf "storage-ratio   median %.2f (range %.2f-%.2f, %d rounds)\n", m, lo, hi, n
      m = median(dr, n); printf "documents-ratio median %.2f (range %.2f-%.2f, %d rounds)\n", m, lo, hi, n
      exit failed
    }'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
