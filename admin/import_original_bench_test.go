package admin_test

import (
	"bytes"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/fileshed/fileshed/admin"
)

// BenchmarkImportOriginal imports an original of 2,000 Storage files and 2,000 Documents
// files in one commit, against `cp -a` of the same tree in the same run (ratio = import /
// cp; the import also syncs every file, builds the repository and recounts usage).
func BenchmarkImportOriginal(b *testing.B) {
	o := original{t: b, dir: filepath.Join(b.TempDir(), "user_files")}
	docs := "users/" + alice + "/Documents/data"
	o.initRepo(docs, "storage@openwebui.local", true)
	for i := range 2000 {
		o.write(fmt.Sprintf("users/%s/Storage/data/d%02d/f%04d.txt", alice, i%50, i), fmt.Sprintf("storage file %d\n", i))
		o.write(fmt.Sprintf("%s/d%02d/f%04d.md", docs, i%50, i), fmt.Sprintf("document %d\n", i))
	}
	o.commit(docs, "", "seed")
	var imp, cp time.Duration
	for i := 0; b.Loop(); i++ {
		dst := filepath.Join(b.TempDir(), "storage")
		cfg := config(b, dst)
		start := time.Now()
		var out, errOut bytes.Buffer
		if code := admin.Run(cfg, []string{"import-original", o.dir}, &out, &errOut); code != 0 {
			b.Fatalf("import: %s", errOut.String())
		}
		imp += time.Since(start)
		start = time.Now()
		if err := exec.Command("cp", "-a", o.dir, filepath.Join(b.TempDir(), "copy")).Run(); err != nil {
			b.Fatal(err)
		}
		cp += time.Since(start)
	}
	b.ReportMetric(float64(imp)/float64(cp), "import/cp")
}
