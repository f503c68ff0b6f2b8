package sqlq_test

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/fileshed/fileshed/core/sqlq"
)

// BenchmarkImport imports a 200,000 × 8 CSV into a fresh database (no HTTP).
func BenchmarkImport(b *testing.B) {
	dir := b.TempDir()
	p := filepath.Join(dir, "b.csv")
	f, _ := os.Create(p)
	w := bufio.NewWriter(f)
	fmt.Fprintln(w, "id,name,price,qty,day,city,flag,note")
	for i := range 200_000 {
		fmt.Fprintf(w, "%d,item %d,%d.%02d,%d,2024-%02d-%02d,Paris,%d,\"note, %d\"\n", i, i, i%1000, i%100, i%50, i%12+1, i%28+1, i%2, i)
	}
	w.Flush()
	f.Close()
	open := func() (io.ReadCloser, error) { return os.Open(p) }
	for i := 0; b.Loop(); i++ {
		d, err := sqlq.Open(context.Background(), filepath.Join(dir, fmt.Sprint(i, ".db")), sqlq.Options{Create: true, JournalMode: "wal"})
		if err != nil {
			b.Fatal(err)
		}
		if _, err := d.Import(context.Background(), open, sqlq.ImportOptions{Table: "t", IfExists: "fail", HasHeader: true}); err != nil {
			b.Fatal(err)
		}
		d.Close()
	}
}
