// Package golden compares the JSON a test produced with a file under the test package's
// testdata/golden, byte for byte (key order included), and rewrites the file when the test
// runs with -update-golden. It keeps the model-facing answers of the tools from changing
// unnoticed while their code moves.
package golden

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

var update = flag.Bool("update-golden", false, "rewrite the golden files under testdata/golden")

// JSON compares got, a JSON document, with testdata/golden/<name>.json. The values of the
// keys named in volatile (times, hashes, durations, ids: strings or numbers, at any depth)
// are replaced with "<volatile>" first; the document is indented so a change reads as a
// diff. With -update-golden it writes the file instead.
func JSON(t testing.TB, name string, got []byte, volatile ...string) {
	t.Helper()
	for _, key := range volatile {
		re := regexp.MustCompile(`("` + regexp.QuoteMeta(key) + `":)("(?:[^"\\]|\\.)*"|-?[0-9][0-9.eE+-]*)`)
		got = re.ReplaceAll(got, []byte(`${1}"<volatile>"`))
	}
	var out bytes.Buffer
	if err := json.Indent(&out, got, "", "  "); err != nil {
		t.Fatalf("golden %s: not JSON: %v\n%s", name, err, got)
	}
	out.WriteByte('\n')
	path := filepath.Join("testdata", "golden", name+".json")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("golden %s: %v (run the test with -update-golden to write it)", name, err)
	}
	if !bytes.Equal(out.Bytes(), want) {
		t.Errorf("golden %s: the answer changed\n--- want (%s)\n%s\n--- got\n%s", name, path, want, out.Bytes())
	}
}
