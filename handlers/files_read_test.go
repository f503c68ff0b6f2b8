package handlers_test

import (
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

const zoneDir = "users/local/Storage/data/"

// TestReadText covers shed_read's happy paths: whole files, line ranges, CRLF kept, every
// zone including the read-only Uploads and a group.
func TestReadText(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_GROUPS_STATIC": `{"team":["local"]}`})
	e.write(zoneDir+"a.txt", "one\ntwo\nthree\nfour\nfive\n")
	e.write(zoneDir+"crlf.txt", "l1\r\nl2\r\nl3")
	e.write(zoneDir+"empty.txt", "")
	e.write(zoneDir+"utf8.txt", "héllo wörld ✓\n")
	e.write("users/local/Uploads/unknown/up.txt", "uploaded\n")
	e.write("users/local/Documents/data/doc.md", "# doc\n")
	e.write("groups/team/data/g.txt", "shared\n")
	cases := []struct {
		name    string
		body    map[string]any
		content string
		want    map[string]any
	}{
		{"whole file", map[string]any{"zone": "storage", "path": "a.txt"}, "one\ntwo\nthree\nfour\nfive\n",
			map[string]any{"start_line": 1.0, "end_line": 5.0, "total_lines": 5.0, "size": 24.0, "truncated": false, "line_endings": "lf", "encrypted": false}},
		{"range", map[string]any{"zone": "storage", "path": "a.txt", "start_line": 2, "end_line": 3}, "two\nthree\n",
			map[string]any{"start_line": 2.0, "end_line": 3.0, "total_lines": 5.0}},
		{"range as strings", map[string]any{"zone": "storage", "path": "a.txt", "start_line": "4", "end_line": "4"}, "four\n", nil},
		{"start only", map[string]any{"zone": "storage", "path": "a.txt", "start_line": 5}, "five\n", map[string]any{"end_line": 5.0}},
		{"end beyond file", map[string]any{"zone": "storage", "path": "a.txt", "start_line": 4, "end_line": 1e6}, "four\nfive\n", map[string]any{"end_line": 5.0}},
		{"null and empty are absent", map[string]any{"zone": "storage", "path": "a.txt", "start_line": nil, "end_line": ""}, "one\ntwo\nthree\nfour\nfive\n", nil},
		{"crlf kept", map[string]any{"zone": "storage", "path": "crlf.txt"}, "l1\r\nl2\r\nl3", map[string]any{"line_endings": "crlf", "total_lines": 3.0}},
		{"crlf range", map[string]any{"zone": "storage", "path": "crlf.txt", "start_line": 2, "end_line": 2}, "l2\r\n", nil},
		{"empty file", map[string]any{"zone": "storage", "path": "empty.txt"}, "", map[string]any{"total_lines": 0.0, "end_line": 0.0}},
		{"utf-8", map[string]any{"zone": "storage", "path": "utf8.txt"}, "héllo wörld ✓\n", nil},
		{"uploads", map[string]any{"zone": "uploads", "path": "up.txt"}, "uploaded\n", map[string]any{"zone": "uploads"}},
		{"documents", map[string]any{"zone": "documents", "path": "doc.md"}, "# doc\n", nil},
		{"group", map[string]any{"zone": "group", "group": "team", "path": "g.txt"}, "shared\n", map[string]any{"group": "team"}},
		{"zone name allowed", map[string]any{"zone": "storage", "path": "./a.txt", "start_line": 1, "end_line": 1}, "one\n", map[string]any{"path": "a.txt"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.post("shed_read", tc.body, nil)
			wantOK(t, r)
			if r.Data["content"] != tc.content {
				t.Fatalf("content %q, want %q", r.Data["content"], tc.content)
			}
			for k, v := range tc.want {
				if r.Data[k] != v {
					t.Errorf("%s = %v, want %v (%s)", k, r.Data[k], v, r.raw)
				}
			}
			if !strings.HasPrefix(r.Message, "Read ") {
				t.Errorf("message %q", r.Message)
			}
		})
	}
}

// TestReadCapsHeadAndTail: output beyond max_output_default keeps the start and the end,
// with a marker naming the lines cut and how to read them.
func TestReadCapsHeadAndTail(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_MAX_OUTPUT_DEFAULT": "1000"})
	var b strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&b, "line %04d\n", i)
	}
	e.write(zoneDir+"big.txt", b.String())
	r := e.post("shed_read", map[string]any{"zone": "storage", "path": "big.txt"}, nil)
	wantOK(t, r)
	c := r.Data["content"].(string)
	if !strings.HasPrefix(c, "line 0001\n") || !strings.HasSuffix(c, "line 1000\n") {
		t.Fatalf("head or tail missing: %q", c)
	}
	if len(c) > 1200 || r.Data["truncated"] != true {
		t.Fatalf("not capped (%d bytes): %s", len(c), r.raw)
	}
	// 60 head lines (600 bytes), 40 tail lines: lines 61-960 are cut.
	if !strings.Contains(c, "line 0060\n\n[... 9000 bytes (900 lines) cut: lines 61-960 not shown, read them with start_line=61 end_line=960 ...]\nline 0961\n") {
		t.Fatalf("marker: %q", c)
	}
	if r.Data["cut_lines"] != 900.0 || r.Data["cut_bytes"] != 9000.0 || r.Data["total_lines"] != 1000.0 {
		t.Fatalf("data: %v", r.Data)
	}
	// Following the marker's advice gives exactly the missing lines.
	r = e.post("shed_read", map[string]any{"zone": "storage", "path": "big.txt", "start_line": 61, "end_line": 100}, nil)
	wantOK(t, r)
	if !strings.HasPrefix(r.Data["content"].(string), "line 0061\n") || r.Data["truncated"] != false {
		t.Fatalf("range after marker: %s", r.raw)
	}
	// One huge line with multi-byte characters: cut on character boundaries, never mojibake.
	e.write(zoneDir+"oneline.txt", strings.Repeat("é", 5000))
	r = e.post("shed_read", map[string]any{"zone": "storage", "path": "oneline.txt"}, nil)
	wantOK(t, r)
	c = r.Data["content"].(string)
	if strings.ContainsRune(c, '\uFFFD') || r.Data["invalid_utf8_bytes"] != nil || !strings.Contains(c, "lines 1-1 not shown") {
		t.Fatalf("multi-byte cut: %s", r.raw)
	}
}

// TestReadRefusesBinary: NUL bytes or > 5% control characters in the first 8 KB answer
// BINARY_FILE with a hint naming shed_read_bytes and shed_hexdump; invalid UTF-8 text is
// shown with U+FFFD and counted, never silently mangled.
func TestReadRefusesBinary(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(zoneDir+"nul.bin", "text\x00more")
	e.write(zoneDir+"png.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	e.write(zoneDir+"ctl.txt", strings.Repeat("abcdefghi\x01", 10))             // 10% control
	e.write(zoneDir+"fewctl.txt", strings.Repeat("abcdefghijklmnopqrs\x01", 5)) // 5%: text
	e.write(zoneDir+"ansi.log", strings.Repeat("\x1b[31mred\x1b[0m\n", 20))
	e.write(zoneDir+"late-nul.txt", strings.Repeat("x", 9000)+"\x00")
	e.write(zoneDir+"latin1.txt", "caf\xe9 cr\xe8me\n")
	for _, p := range []string{"nul.bin", "png.png", "ctl.txt"} {
		t.Run(p, func(t *testing.T) {
			r := e.post("shed_read", map[string]any{"zone": "storage", "path": p}, nil)
			wantError(t, r, "BINARY_FILE")
			if !strings.Contains(r.Hint, "shed_read_bytes") || !strings.Contains(r.Hint, "shed_hexdump") {
				t.Fatalf("hint: %s", r.Hint)
			}
		})
	}
	for _, p := range []string{"fewctl.txt", "ansi.log", "late-nul.txt"} {
		t.Run(p, func(t *testing.T) { wantOK(t, e.post("shed_read", map[string]any{"zone": "storage", "path": p}, nil)) })
	}
	r := e.post("shed_read", map[string]any{"zone": "storage", "path": "latin1.txt"}, nil)
	wantOK(t, r)
	if r.Data["content"] != "caf\uFFFD cr\uFFFDme\n" || r.Data["invalid_utf8_bytes"] != 2.0 || !strings.Contains(r.Message, "not UTF-8") {
		t.Fatalf("latin-1: %s", r.raw)
	}
}

// TestReadArguments: every refusal of shed_read and shed_read_bytes, with its code.
func TestReadArguments(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(zoneDir+"a.txt", "1\n2\n3\n")
	e.write(zoneDir+"dir/x.txt", "x")
	if err := syscall.Mkfifo(filepath.Join(e.base, zoneDir, "fifo"), 0o600); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		tool string
		body map[string]any
		code string
	}{
		{"shed_read", map[string]any{"zone": "storage"}, "MISSING_PARAMETER"},
		{"shed_read", map[string]any{"path": "a.txt"}, "MISSING_PARAMETER"},
		{"shed_read", map[string]any{"zone": "storage", "path": ""}, "MISSING_PARAMETER"},
		{"shed_read", map[string]any{"zone": "attic", "path": "a.txt"}, "INVALID_ZONE"},
		{"shed_read", map[string]any{"zone": "storage", "path": "nope.txt"}, "FILE_NOT_FOUND"},
		{"shed_read", map[string]any{"zone": "storage", "path": "a.txt/below"}, "FILE_NOT_FOUND"},
		{"shed_read", map[string]any{"zone": "storage", "path": "dir"}, "NOT_A_FILE"},
		{"shed_read", map[string]any{"zone": "storage", "path": "."}, "NOT_A_FILE"},
		{"shed_read", map[string]any{"zone": "storage", "path": "fifo"}, "NOT_A_FILE"},
		{"shed_read", map[string]any{"zone": "storage", "path": "storage/a.txt"}, "PATH_STARTS_WITH_ZONE"},
		{"shed_read", map[string]any{"zone": "storage", "path": "a.txt", "start_line": 0}, "INVALID_PARAMETER"},
		{"shed_read", map[string]any{"zone": "storage", "path": "a.txt", "start_line": -5}, "INVALID_PARAMETER"},
		{"shed_read", map[string]any{"zone": "storage", "path": "a.txt", "end_line": -1}, "INVALID_PARAMETER"},
		{"shed_read", map[string]any{"zone": "storage", "path": "a.txt", "start_line": 3, "end_line": 2}, "INVALID_PARAMETER"},
		{"shed_read", map[string]any{"zone": "storage", "path": "a.txt", "start_line": 4}, "INVALID_PARAMETER"},
		{"shed_read", map[string]any{"zone": "storage", "path": "a.txt", "start_line": "one"}, "INVALID_PARAMETER"},
		{"shed_read", map[string]any{"zone": "storage", "path": "a.txt", "start_line": 1.5}, "INVALID_PARAMETER"},
		{"shed_read", map[string]any{"zone": "storage", "path": "a.txt", "start_line": "99999999999999999999"}, "INVALID_PARAMETER"},
		{"shed_read_bytes", map[string]any{"zone": "storage", "path": "a.txt", "output_format": "octal"}, "INVALID_PARAMETER"},
		{"shed_read_bytes", map[string]any{"zone": "nowhere", "path": "a.txt", "output_format": "octal"}, "INVALID_PARAMETER"},
		{"shed_read_bytes", map[string]any{"zone": "storage", "path": "a.txt", "offset": -1}, "INVALID_PARAMETER"},
		{"shed_read_bytes", map[string]any{"zone": "storage", "path": "a.txt", "length": -1}, "INVALID_PARAMETER"},
		{"shed_read_bytes", map[string]any{"zone": "storage", "path": "dir"}, "NOT_A_FILE"},
		{"shed_read_bytes", map[string]any{"zone": "storage", "path": "gone"}, "FILE_NOT_FOUND"},
		{"shed_read_bytes", map[string]any{"zone": "storage"}, "MISSING_PARAMETER"},
		{"shed_hexdump", map[string]any{"zone": "storage", "path": "dir"}, "INVALID_FORMAT"},
		{"shed_hexdump", map[string]any{"zone": "storage", "path": "."}, "INVALID_FORMAT"},
		{"shed_hexdump", map[string]any{"zone": "storage", "path": "gone"}, "FILE_NOT_FOUND"},
		{"shed_hexdump", map[string]any{"zone": "storage", "path": "a.txt", "offset": "x"}, "INVALID_PARAMETER"},
		{"shed_hexdump", map[string]any{"zone": "storage", "path": "fifo"}, "NOT_A_FILE"},
		{"shed_file_type", map[string]any{"zone": "storage", "path": "gone"}, "FILE_NOT_FOUND"},
		{"shed_file_type", map[string]any{"zone": "storage", "path": "fifo"}, "NOT_A_FILE"},
		{"shed_file_type", map[string]any{"zone": "storage"}, "MISSING_PARAMETER"},
		{"shed_file_type", map[string]any{"zone": "group", "path": "a.txt"}, "MISSING_PARAMETER"},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("%s %v", tc.tool, tc.body), func(t *testing.T) {
			r := e.post(tc.tool, tc.body, nil)
			wantError(t, r, tc.code)
			if (tc.code == "INVALID_PARAMETER" || tc.code == "MISSING_PARAMETER") && !strings.HasPrefix(r.Usage, tc.tool+"(zone") {
				t.Fatalf("parameter error without usage: %s", r.raw)
			}
		})
	}
}

// TestReadBytes covers offsets, lengths, formats and the per-call cap with next_offset.
func TestReadBytes(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_MAX_OUTPUT_DEFAULT": "100"})
	blob := make([]byte, 300)
	for i := range blob {
		blob[i] = byte(i)
	}
	e.write(zoneDir+"blob.bin", string(blob))
	e.write("users/local/Uploads/unknown/u.bin", "\x00\x01")
	cases := []struct {
		name      string
		body      map[string]any
		want      []byte
		format    string
		truncated bool
		next      any
	}{
		{"hex default", map[string]any{"path": "blob.bin", "length": 4}, blob[:4], "hex", false, nil},
		{"base64", map[string]any{"path": "blob.bin", "output_format": "BASE64", "offset": 10, "length": 6}, blob[10:16], "base64", false, nil},
		{"offset to end", map[string]any{"path": "blob.bin", "offset": 290}, blob[290:], "hex", false, nil},
		{"length past end", map[string]any{"path": "blob.bin", "offset": 298, "length": 1000}, blob[298:], "hex", false, nil},
		{"offset at end", map[string]any{"path": "blob.bin", "offset": 300}, []byte{}, "hex", false, nil},
		{"huge offset", map[string]any{"path": "blob.bin", "offset": int64(1) << 62}, []byte{}, "hex", false, nil},
		{"huge length", map[string]any{"path": "blob.bin", "offset": 1, "length": int64(1)<<62 + 5}, blob[1:51], "hex", true, 51.0},
		{"hex capped", map[string]any{"path": "blob.bin"}, blob[:50], "hex", true, 50.0},
		{"base64 capped on a multiple of 3", map[string]any{"path": "blob.bin", "output_format": "base64", "offset": 75}, blob[75:150], "base64", true, 150.0},
		{"uploads", map[string]any{"zone": "uploads", "path": "u.bin"}, []byte{0, 1}, "hex", false, nil},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.body["zone"] == nil {
				tc.body["zone"] = "storage"
			}
			r := e.post("shed_read_bytes", tc.body, nil)
			wantOK(t, r)
			var got []byte
			var err error
			if tc.format == "hex" {
				got, err = hex.DecodeString(r.Data["content"].(string))
			} else {
				got, err = base64.StdEncoding.DecodeString(r.Data["content"].(string))
			}
			if err != nil || string(got) != string(tc.want) {
				t.Fatalf("content %q (%v), want %x: %s", r.Data["content"], err, tc.want, r.raw)
			}
			if r.Data["content_format"] != tc.format || r.Data["bytes_read"] != float64(len(tc.want)) ||
				r.Data["truncated"] != tc.truncated || r.Data["next_offset"] != tc.next {
				t.Fatalf("data: %s", r.raw)
			}
		})
	}
}

// TestHexdump checks the original's exact format, clamping and the beyond-EOF answer.
func TestHexdump(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(zoneDir+"t.txt", "orig\nappended\n")
	big := strings.Repeat("0123456789abcdef", 400) // 6400 bytes
	e.write(zoneDir+"big.txt", big)
	r := e.post("shed_hexdump", map[string]any{"zone": "storage", "path": "t.txt"}, nil)
	wantOK(t, r)
	if r.Data["hexdump"] != "00000000: 6f72 6967 0a61 7070 656e 6465 640a       orig.appended." ||
		r.Data["length"] != 14.0 || r.Data["file_size"] != 14.0 || r.Message != "Hexdump of t.txt (14 bytes from offset 0)" {
		t.Fatalf("dump: %s", r.raw)
	}
	r = e.post("shed_hexdump", map[string]any{"zone": "storage", "path": "t.txt", "offset": 3, "length": 3}, nil)
	wantOK(t, r)
	if r.Data["hexdump"] != "00000003: 670a 61                                  g.a" {
		t.Fatalf("odd byte: %q", r.Data["hexdump"])
	}
	cases := []struct {
		name           string
		offset, length any
		wantLen        float64
		wantOffset     float64
	}{
		{"default 256", nil, nil, 256, 0},
		{"negative offset is 0", -50, 16, 16, 0},
		{"zero length is 1", 0, 0, 1, 0},
		{"negative length is 1", 0, -7, 1, 0},
		{"huge length clamped to 4096", 0, int64(1) << 40, 4096, 0},
		{"near the end", 6390, 100, 10, 6390},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := e.post("shed_hexdump", map[string]any{"zone": "storage", "path": "big.txt", "offset": tc.offset, "length": tc.length}, nil)
			wantOK(t, r)
			if r.Data["length"] != tc.wantLen || r.Data["offset"] != tc.wantOffset {
				t.Fatalf("data: %s", r.raw)
			}
			lines := strings.Split(r.Data["hexdump"].(string), "\n")
			if want := int((tc.wantLen + 15) / 16); len(lines) != want {
				t.Fatalf("%d lines, want %d", len(lines), want)
			}
		})
	}
	r = e.post("shed_hexdump", map[string]any{"zone": "storage", "path": "t.txt", "offset": int64(1) << 62}, nil)
	wantOK(t, r)
	if r.Data["hexdump"] != "(offset beyond file)" || r.Message != "Offset is beyond end of file" || r.Data["size"] != 14.0 {
		t.Fatalf("beyond: %s", r.raw)
	}
}

// TestFileType: the original's fields plus the text/binary summary, for the common kinds.
func TestFileType(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(zoneDir+"a.txt", "hello\r\nworld\r\n")
	e.write(zoneDir+"s.sh", "#!/bin/sh\necho hi\n")
	e.write(zoneDir+"p.png", "\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
	e.write(zoneDir+"l.txt", "caf\xe9\n")
	e.write(zoneDir+"u.md", "# Über\n")
	e.write(zoneDir+"e.bin", "")
	e.write(zoneDir+"x.tar.gz", "\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03")
	e.write(zoneDir+".bashrc", "alias x=y\n")
	e.write(zoneDir+"d/k.txt", "x")
	cases := []struct {
		path string
		want map[string]any
	}{
		{"a.txt", map[string]any{"mime": "text/plain", "magic": "Text file (UTF-8)", "kind": "text", "text_encoding": "ascii",
			"line_endings": "crlf", "extension": ".txt", "size": 14.0, "size_human": "14 B", "encoding": nil}},
		{"s.sh", map[string]any{"magic": "Script (shebang)", "kind": "text", "line_endings": "lf"}},
		{"p.png", map[string]any{"mime": "image/png", "magic": "PNG image", "kind": "binary", "text_encoding": nil, "line_endings": nil}},
		{"l.txt", map[string]any{"magic": "Binary file", "kind": "text", "text_encoding": "unknown (not UTF-8)"}},
		{"u.md", map[string]any{"magic": "Text file (UTF-8)", "text_encoding": "utf-8", "extension": ".md"}},
		{"e.bin", map[string]any{"kind": "empty", "magic": "Empty file", "size": 0.0}},
		{"x.tar.gz", map[string]any{"mime": "application/gzip", "magic": "Gzip compressed", "encoding": "gzip", "extension": ".gz"}},
		{".bashrc", map[string]any{"extension": ""}},
		{"d", map[string]any{"type": "directory", "mime": "inode/directory"}},
		{".", map[string]any{"type": "directory", "path": "."}},
	}
	for _, tc := range cases {
		t.Run(tc.path, func(t *testing.T) {
			r := e.post("shed_file_type", map[string]any{"zone": "storage", "path": tc.path}, nil)
			wantOK(t, r)
			for k, v := range tc.want {
				if r.Data[k] != v {
					t.Errorf("%s = %v, want %v", k, r.Data[k], v)
				}
			}
		})
	}
	e.write(zoneDir+"m.bin", strings.Repeat("x", 3<<20/2))
	r := e.post("shed_file_type", map[string]any{"zone": "storage", "path": "m.bin"}, nil)
	if r.Data["size_human"] != "1.50 MB" || r.Message != "Text file (UTF-8)" {
		t.Fatalf("size: %s", r.raw)
	}
}
