package handlers_test

import (
	"bufio"
	"fmt"
	"os"
	osexec "os/exec"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// processCPU is the CPU time (user + system) this process has used.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// writeBenchCSV writes rows × 8 columns of mixed types (integers, reals, dates, text with
// quoted commas) to path.
func writeBenchCSV(b *testing.B, path string, rows int) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "id,name,price,qty,day,city,flag,note")
	cities := []string{"Paris", "Lyon", "Berlin", "Madrid", "Roma"}
	for i := range rows {
		fmt.Fprintf(w, "%d,item %d,%d.%02d,%d,2024-%02d-%02d,%s,%d,\"note, %d\"\n",
			i, i, i%1000, i%100, i%50, i%12+1, i%28+1, cities[i%5], i%2, i)
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	if err := f.Close(); err != nil {
		b.Fatal(err)
	}
}

// BenchmarkSQLiteImport imports a 200,000 × 8 CSV into a fresh database through
// shed_sqlite over HTTP (type inference and encoding/delimiter detection included) and
// with the sqlite3 CLI's `.import --csv` (all TEXT, no detection), interleaved; reports
// both medians, their ratio, and the ratio of CPU time used (the server runs in this
// process; the CLI's is its child's).
func BenchmarkSQLiteImport(b *testing.B) {
	cli, err := osexec.LookPath("sqlite3")
	if err != nil {
		b.Skip("sqlite3 CLI missing: apt-get install sqlite3")
	}
	e := start(b, map[string]string{"FILESHED_QUOTA_PER_USER_MB": "100000"})
	dir := filepath.Join(e.base, zoneDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	csvPath := filepath.Join(dir, "bench.csv")
	writeBenchCSV(b, csvPath, 200_000)
	post := poster(b, e, "shed_sqlite")
	cliDir := b.TempDir()
	// CPU time too: on a shared machine the wall clock of both sides swings with the load.
	var shedCPU, cliCPU time.Duration
	p50 := latencies(b,
		timed{"shed_sqlite", func(i int) {
			before := processCPU()
			post(fmt.Sprintf(`{"zone":"storage","path":"imp%d.db","import_csv":"bench.csv","table":"t"}`, i))
			shedCPU += processCPU() - before
			b.StopTimer()
			os.Remove(filepath.Join(dir, fmt.Sprintf("imp%d.db", i)))
			b.StartTimer()
		}},
		timed{"sqlite3-cli", func(i int) {
			db := filepath.Join(cliDir, fmt.Sprintf("cli%d.db", i))
			cmd := osexec.Command(cli, db, ".import --csv "+csvPath+" t")
			if out, err := cmd.CombinedOutput(); err != nil {
				b.Fatalf("sqlite3: %v %s", err, out)
			}
			cliCPU += cmd.ProcessState.UserTime() + cmd.ProcessState.SystemTime()
			os.Remove(db)
		}})
	b.ReportMetric(float64(shedCPU)/float64(cliCPU), "cpu-shed/cli")
	b.ReportMetric(float64(p50[0])/float64(p50[1]), "shed/cli")
}

// BenchmarkSQLiteSelect reads 1,000 rows of 8 columns over HTTP through shed_sqlite and
// through shed_exec running `sqlite3 -json` on the same database, interleaved; reports
// both medians and their ratio.
func BenchmarkSQLiteSelect(b *testing.B) {
	if _, err := osexec.LookPath("sqlite3"); err != nil {
		b.Skip("sqlite3 CLI missing: apt-get install sqlite3")
	}
	e := start(b, map[string]string{"FILESHED_MAX_OUTPUT_DEFAULT": "2000000", "FILESHED_EXEC_TIMEOUT_DEFAULT": "60"})
	dir := filepath.Join(e.base, zoneDir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		b.Fatal(err)
	}
	writeBenchCSV(b, filepath.Join(dir, "small.csv"), 5_000)
	post := poster(b, e, "shed_sqlite")
	post(`{"zone":"storage","path":"sel.db","import_csv":"small.csv","table":"t"}`)
	exec := poster(b, e, "shed_exec")
	const q = "SELECT * FROM t WHERE id >= 1000 ORDER BY id LIMIT 1000"
	shed := func(int) { post(`{"zone":"storage","path":"sel.db","query":"` + q + `"}`) }
	viaExec := func(int) {
		exec(`{"zone":"storage","cmd":"sqlite3","args":["-json","sel.db","` + q + `"]}`)
	}
	shed(0)
	viaExec(0)
	time.Sleep(10 * time.Millisecond)
	p50 := latencies(b, timed{"shed_sqlite", shed}, timed{"shed_exec-sqlite3", viaExec})
	b.ReportMetric(float64(p50[0])/float64(p50[1]), "shed/exec")
}
