package golden

import (
	"os"
	"path/filepath"
	"testing"
)

// fakeT records failures instead of failing the real test.
type fakeT struct {
	testing.TB
	failed bool
}

func (f *fakeT) Helper()               {}
func (f *fakeT) Errorf(string, ...any) { f.failed = true }
func (f *fakeT) Fatalf(string, ...any) { f.failed = true }

func TestJSONComparesBytesAndMasksVolatileValues(t *testing.T) {
	t.Chdir(t.TempDir())
	if err := os.MkdirAll(filepath.Join("testdata", "golden"), 0o755); err != nil {
		t.Fatal(err)
	}
	want := "{\n  \"b\": 1,\n  \"a\": {\n    \"commit\": \"<volatile>\",\n    \"ms\": \"<volatile>\"\n  }\n}\n"
	if err := os.WriteFile(filepath.Join("testdata", "golden", "x.json"), []byte(want), 0o644); err != nil {
		t.Fatal(err)
	}
	same := &fakeT{TB: t}
	JSON(same, "x", []byte(`{"b":1,"a":{"commit":"ab\"c","ms":12.5}}`), "commit", "ms")
	if same.failed {
		t.Fatal("an equal answer with other volatile values failed")
	}
	for name, got := range map[string]string{
		"key order": `{"a":{"commit":"x","ms":1},"b":1}`,
		"value":     `{"b":2,"a":{"commit":"x","ms":1}}`,
		"not json":  `{"b":`,
	} {
		f := &fakeT{TB: t}
		JSON(f, "x", []byte(got), "commit", "ms")
		if !f.failed {
			t.Errorf("%s: a different answer passed", name)
		}
	}
	missing := &fakeT{TB: t}
	JSON(missing, "absent", []byte(`{}`))
	if !missing.failed {
		t.Error("a missing golden file passed")
	}
}
