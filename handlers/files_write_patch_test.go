package handlers_test

import (
	"strings"
	"testing"
	"time"
)

func TestPatchText(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, before string
		args         map[string]any
		want         string
		affected     float64
	}{
		{"append", "a\n", map[string]any{"content": "b\n"}, "a\nb\n", 1},
		{"append to a missing file creates it", "", map[string]any{"content": "b"}, "b", 1},
		{"prepend", "a\n", map[string]any{"position": "start", "content": "h\n"}, "h\na\n", 1},
		{"append keeps CRLF", "a\r\nb\r\n", map[string]any{"content": "c\nd\n"}, "a\r\nb\r\nc\r\nd\r\n", 2},
		{"before line", "1\n2\n3\n", map[string]any{"position": "before", "line": 2, "content": "x"}, "1\nx\n2\n3\n", 1},
		{"before line n+1", "1\n2\n", map[string]any{"position": "before", "line": "3", "content": "x\n"}, "1\n2\nx\n", 1},
		{"after line", "1\n2\n3\n", map[string]any{"position": "after", "line": 3, "content": "x\n"}, "1\n2\n3\nx\n", 1},
		{"after last unterminated line", "1\n2", map[string]any{"position": "after", "line": 2, "content": "x"}, "1\n2\nx", 1},
		{"replace line range", "1\n2\n3\n4\n", map[string]any{"position": "replace", "line": 2, "end_line": 3, "content": "x"}, "1\nx\n4\n", 2},
		{"replace lines with nothing", "1\n2\n3\n", map[string]any{"position": "replace", "line": 2, "content": ""}, "1\n3\n", 1},
		{"replace in CRLF", "1\r\n2\r\n", map[string]any{"position": "replace", "line": 1, "content": "a\nb"}, "a\r\nb\r\n2\r\n", 1},
		{"end_line past the end", "1\n2\n", map[string]any{"position": "replace", "line": 2, "end_line": 9, "content": "x\n"}, "1\nx\n", 1},
		{"before pattern", "a\nfoo\nfoo\n", map[string]any{"position": "before", "pattern": "^foo$", "content": "x"}, "a\nx\nfoo\nfoo\n", 1},
		{"after pattern, all, CRLF", "foo\r\nbar\r\nFOO\r\n", map[string]any{"position": "after", "pattern": "foo$", "regex_flags": "i", "match_all": true, "content": "x"}, "foo\r\nx\r\nbar\r\nFOO\r\nx\r\n", 2},
		{"replace pattern with groups", "name: bob\n", map[string]any{"position": "replace", "pattern": `name: (?P<who>\w+)`, "content": `who=\g<who> (\1)`}, "who=bob (bob)\n", 1},
		{"replace pattern all", "a1 a2 a3", map[string]any{"position": "replace", "pattern": `a(\d)`, "match_all": "true", "content": `b\1`}, "b1 b2 b3", 3},
		{"replacement backslashes are literal", "path=X", map[string]any{"position": "replace", "pattern": "X", "content": `C:\new\dir \\ \n $1 \0 \1`}, `path=C:\new\dir \\ \n $1 \0 \1`, 1},
		{"C source replaced as sent", "int main;\n", map[string]any{"position": "replace", "pattern": `int (\w+);`, "content": `printf("%s\n\\", "\1");`}, "printf(\"%s\\n\\\\\", \"main\");\n", 1},
		{"LaTeX replaced as sent", "X\n", map[string]any{"position": "replace", "pattern": "X", "content": `\\ \section{A} \g<nope> \g<1>`}, `\\ \section{A} \g<nope> \g<1>` + "\n", 1},
		{"groups beyond the pattern's are literal", "ab", map[string]any{"position": "replace", "pattern": "(a)", "content": `\2\1\12\g<0>`}, `\2a` + "a2ab", 1},
		{"multi-line pattern", "a\nb\nc\n", map[string]any{"position": "replace", "pattern": `a\nb`, "content": "z"}, "z\nc\n", 1},
		{"overwrite ignores position", "old", map[string]any{"overwrite": true, "position": "at", "content": "new"}, "new", 1},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t, nil)
			if tc.before != "" {
				e.write(storageDir+"/f.txt", tc.before)
			}
			args := map[string]any{"zone": "storage", "path": "f.txt"}
			for k, v := range tc.args {
				args[k] = v
			}
			r := e.post("shed_patch_text", args, nil)
			wantOK(t, r)
			if got := e.disk("f.txt"); got != tc.want {
				t.Fatalf("content %q, want %q", got, tc.want)
			}
			if r.Data["lines_affected"] != tc.affected || r.Data["file_size"] != float64(len(tc.want)) {
				t.Fatalf("data: %s", r.raw)
			}
			if e.used(t) != int64(len(tc.want)) {
				t.Fatalf("usage %d, want %d", e.used(t), len(tc.want))
			}
			noTemp(t, e.base)
		})
	}
}

func TestPatchTextRefusals(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(storageDir+"/f.txt", "1\n2\n")
	e.write(storageDir+"/bin.dat", "\xff\xfe\x00x\n")
	e.write(storageDir+"/dir/x", "x")
	cases := []struct {
		name string
		args map[string]any
		code string
	}{
		{"invalid position", map[string]any{"position": "middle"}, "INVALID_PARAMETER"},
		{"position overwrite", map[string]any{"position": "overwrite"}, "INVALID_PARAMETER"},
		{"position at", map[string]any{"position": "at", "line": 1}, "INVALID_PARAMETER"},
		{"negative line", map[string]any{"position": "before", "line": -1}, "INVALID_PARAMETER"},
		{"line not a number", map[string]any{"position": "before", "line": "two"}, "INVALID_PARAMETER"},
		{"negative end_line", map[string]any{"position": "replace", "line": 1, "end_line": -2}, "INVALID_PARAMETER"},
		{"before without line or pattern", map[string]any{"position": "before"}, "MISSING_PARAMETER"},
		{"end_line without replace", map[string]any{"position": "after", "line": 1, "end_line": 2}, "INVALID_PARAMETER"},
		{"end_line before line", map[string]any{"position": "replace", "line": 2, "end_line": 1}, "INVALID_PARAMETER"},
		{"end_line without line", map[string]any{"position": "replace", "pattern": "1", "end_line": 1}, "MISSING_PARAMETER"},
		{"line beyond file", map[string]any{"position": "after", "line": 3}, "INVALID_PARAMETER"},
		{"before beyond n+1", map[string]any{"position": "before", "line": 4}, "INVALID_PARAMETER"},
		{"pattern not found", map[string]any{"position": "replace", "pattern": "zzz"}, "PATTERN_NOT_FOUND"},
		{"line pattern not found", map[string]any{"position": "after", "pattern": "^zzz$"}, "PATTERN_NOT_FOUND"},
		{"lookahead is not RE2", map[string]any{"position": "replace", "pattern": "(?=1)"}, "INVALID_PARAMETER"},
		{"NUL in content", map[string]any{"content": "\x00"}, "INVALID_PARAMETER"},
		{"binary file", map[string]any{"path": "bin.dat", "position": "before", "line": 1}, "INVALID_FORMAT"},
		{"directory", map[string]any{"path": "dir"}, "NOT_A_FILE"},
		{"missing file for before", map[string]any{"path": "nope.txt", "position": "before", "line": 1}, "FILE_NOT_FOUND"},
		{"uploads", map[string]any{"zone": "uploads"}, "ZONE_READONLY"},
		{"unknown zone", map[string]any{"zone": "etc"}, "INVALID_ZONE"},
		{"symlink escape", map[string]any{"path": "../f.txt"}, "PATH_ESCAPE"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"zone": "storage", "path": "f.txt", "content": "x"}
			for k, v := range tc.args {
				args[k] = v
			}
			r := e.post("shed_patch_text", args, nil)
			wantError(t, r, tc.code)
			if (tc.code == "INVALID_PARAMETER" || tc.code == "MISSING_PARAMETER") && !strings.HasPrefix(r.Usage, "shed_patch_text(") {
				t.Fatalf("no usage: %s", r.raw)
			}
		})
	}
	if e.disk("f.txt") != "1\n2\n" || e.disk("bin.dat") != "\xff\xfe\x00x\n" {
		t.Fatal("a refused patch changed a file")
	}
}

// TestPatchTextCatastrophicRegexIsLinear: (a+)+$ against "aaaa...!" takes exponential time
// in a backtracking engine (the original's Python re hung the server); RE2 is linear.
func TestPatchTextCatastrophicRegexIsLinear(t *testing.T) {
	e := start(t, nil)
	e.write(storageDir+"/f.txt", strings.Repeat("a", 100000)+"!\n")
	t0 := time.Now()
	r := e.post("shed_patch_text", map[string]any{"zone": "storage", "path": "f.txt", "position": "replace",
		"pattern": "(a+)+$", "content": "x"}, nil)
	wantError(t, r, "PATTERN_NOT_FOUND")
	if d := time.Since(t0); d > 5*time.Second {
		t.Fatalf("took %v", d)
	}
}

func TestPatchBytes(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		before string
		args   map[string]any
		want   string
	}{
		{"append", "ab", map[string]any{"content": "6364"}, "abcd"},
		{"prepend", "ab", map[string]any{"position": "start", "content": "7a"}, "zab"},
		{"insert at", "ab", map[string]any{"position": "at", "offset": 1, "content": "2d"}, "a-b"},
		{"insert at 0", "ab", map[string]any{"position": "at", "offset": "0", "content": "2d"}, "-ab"},
		{"insert at end", "ab", map[string]any{"position": "at", "offset": 2, "content": "2d"}, "ab-"},
		{"replace", "abcdef", map[string]any{"position": "replace", "offset": 1, "length": 3, "content": "58"}, "aXef"},
		{"replace past the end", "abc", map[string]any{"position": "replace", "offset": 2, "length": 10, "content": "5859"}, "abXY"},
		{"replace with nothing", "abc", map[string]any{"position": "replace", "offset": 0, "length": 1, "content": ""}, "bc"},
		{"raw", "", map[string]any{"content": "héllo", "content_format": "raw"}, "héllo"},
		{"base64 unpadded", "", map[string]any{"content": "AAE", "content_format": "base64"}, "\x00\x01"},
		{"overwrite", "abc", map[string]any{"overwrite": true, "content": "00"}, "\x00"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := start(t, nil)
			if tc.before != "" {
				e.write(storageDir+"/f.bin", tc.before)
			}
			args := map[string]any{"zone": "storage", "path": "f.bin"}
			for k, v := range tc.args {
				args[k] = v
			}
			r := e.post("shed_patch_bytes", args, nil)
			wantOK(t, r)
			if got := e.disk("f.bin"); got != tc.want {
				t.Fatalf("content %q, want %q", got, tc.want)
			}
			if r.Data["file_size"] != float64(len(tc.want)) || e.used(t) != int64(len(tc.want)) {
				t.Fatalf("data: %s, usage %d", r.raw, e.used(t))
			}
		})
	}
}

func TestPatchBytesRefusals(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_MAX_FILE_SIZE_MB": "1"})
	e.write(storageDir+"/f.bin", "abc")
	cases := []struct {
		name string
		args map[string]any
		code string
	}{
		{"invalid position", map[string]any{"position": "before"}, "INVALID_PARAMETER"},
		{"position overwrite", map[string]any{"position": "overwrite"}, "INVALID_PARAMETER"},
		{"at without offset", map[string]any{"position": "at"}, "MISSING_PARAMETER"},
		{"replace without length", map[string]any{"position": "replace", "offset": 0}, "MISSING_PARAMETER"},
		{"negative offset", map[string]any{"position": "at", "offset": -5}, "INVALID_PARAMETER"},
		{"negative length", map[string]any{"position": "replace", "offset": 0, "length": -3}, "INVALID_PARAMETER"},
		{"offset beyond size", map[string]any{"position": "at", "offset": 4}, "INVALID_PARAMETER"},
		{"huge offset", map[string]any{"position": "at", "offset": "9223372036854775807"}, "INVALID_PARAMETER"},
		{"offset not a number", map[string]any{"position": "at", "offset": "x"}, "INVALID_PARAMETER"},
		{"at on a missing file", map[string]any{"path": "nope.bin", "position": "at", "offset": 0}, "FILE_NOT_FOUND"},
		{"invalid hex", map[string]any{"content": "zz"}, "INVALID_PARAMETER"},
		{"invalid base64", map[string]any{"content": "a", "content_format": "base64"}, "INVALID_PARAMETER"},
		{"too large after decoding", map[string]any{"content": strings.Repeat("00", 1<<20)}, "FILE_TOO_LARGE"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			args := map[string]any{"zone": "storage", "path": "f.bin", "content": "00"}
			for k, v := range tc.args {
				args[k] = v
			}
			wantError(t, e.post("shed_patch_bytes", args, nil), tc.code)
		})
	}
	if e.disk("f.bin") != "abc" {
		t.Fatal("a refused patch changed the file")
	}
}
