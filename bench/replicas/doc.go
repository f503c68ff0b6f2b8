// Package replicas is issue 25's throughput target as a benchmark: the same fileshed binary
// (state.driver postgres) as 1 replica and as 3 replicas on one storage directory and one
// PostgreSQL (the tests' private server), under a busy-Documents load over loopback HTTP,
// rounds alternating the two, with the ratio of acknowledged writes per second (3 / 1;
// target ≥ 0.8 on a 2-core machine: coordinating the replicas must not collapse it).
//
//	go test -run '^$' -bench BenchmarkReplicas -benchtime 5x -timeout 60m ./bench/replicas/
//
// Each round's figures are printed, with where the replicas' time went per write (their
// CPU, and the count and mean duration of each internal operation, from their /metrics);
// FILESHED_BENCH_SECONDS sets each load's length (20 s), FILESHED_BENCH_FILES the files
// tracked in each user's Documents before it (0). TestReplicasLoad runs one short round so that the benchmark cannot rot.
// The load is bench/internal/loadgen's, the replica processes internal/replicatest's.
package replicas
