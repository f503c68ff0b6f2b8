#!/bin/sh
# drivers.sh [ROUNDS] [CALLS]: issue 25's single-write target, state.driver postgres against
# sqlite. Runs handlers' BenchmarkStateDrivers ROUNDS times (default 5) in one test binary:
# each round starts one server per driver (two for postgres) and calls them alternately
# CALLS times (default 300) with a 1 KB append to Storage and to Documents (write +
# commit). PostgreSQL is the
# tests' private server with a production server's durability (FILESHED_PGTEST_DURABLE=1),
# once as fileshed sets it (synchronous_commit=off) and once with synchronous_commit=on in
# state.url. Prints each round's p50s
# (ms) and ratios (postgres / sqlite; target <= 1.5), then the median and the range of the
# ratios, and the load average before and after.
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
    function ms(k) { return v[k "-p50-µs"] / 1000 }
    /^BenchmarkStateDrivers/ {
      for (i = 3; i < NF; i++) v[$(i+1)] = $i
      n++
      for (z = 0; z < 2; z++) {
        zone = z ? "documents" : "storage"
        r[zone, n] = v[zone "-ratio"]; a[zone, n] = v[zone "-ratio-sync"]
        printf "round %d  %-9s p50 sqlite %6.2f ms  postgres %6.2f ms (ratio %.2f)  postgres synchronous_commit=on %6.2f ms (ratio %.2f)\n",
          n, zone, ms(zone "-sqlite"), ms(zone "-postgres"), r[zone, n], ms(zone "-postgres-sync"), a[zone, n]
      }
      next
    }
    /^(FAIL|panic|---)/ || /_test\.go/ { print; failed = 1 }
    function summary(name, x, zone,   i, j, t, b) {
      for (i = 1; i <= n; i++) b[i] = x[zone, i]
      for (i = 2; i <= n; i++) for (j = i; j > 1 && b[j-1] > b[j]; j--) { t = b[j]; b[j] = b[j-1]; b[j-1] = t }
      printf "%-32s median %.2f (range %.2f-%.2f, %d rounds)\n", name, n % 2 ? b[(n+1)/2] : (b[n/2] + b[n/2+1]) / 2, b[1], b[n], n
    }
    END {
      if (n == 0) { print "no benchmark result"; exit 1 }
      summary("storage-ratio", r, "storage"); summary("storage-ratio (synchronous_commit=on)", a, "storage")
      summary("documents-ratio", r, "documents"); summary("documents-ratio (synchronous_commit=on)", a, "documents")
      exit failed
    }'
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
