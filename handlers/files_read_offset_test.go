package handlers_test

import (
	"strings"
	"testing"
)

// TestReadByteOffset walks a file made of one 120 KB line (multi-byte characters across
// every boundary) with offset/next_offset: the pieces join to the file exactly, none is
// over the cap, and none starts or ends inside a character.
func TestReadByteOffset(t *testing.T) {
	t.Parallel()
	e := start(t, map[string]string{"FILESHED_MAX_OUTPUT_DEFAULT": "10000"})
	line := strings.Repeat("abc✓é🙂 ", 12_000)
	e.write(zoneDir+"long.txt", line)
	var got strings.Builder
	offset, calls := 0.0, 0
	for {
		r := e.post("shed_read", map[string]any{"zone": "storage", "path": "long.txt", "offset": offset}, nil)
		wantOK(t, r)
		c := r.Data["content"].(string)
		if len(c) > 10000 || strings.ContainsRune(c, '\uFFFD') || r.Data["invalid_utf8_bytes"] != nil {
			t.Fatalf("piece at %v: %d bytes, invalid %v", offset, len(c), r.Data["invalid_utf8_bytes"])
		}
		got.WriteString(c)
		calls++
		next, ok := r.Data["next_offset"].(float64)
		if !ok {
			if r.Data["truncated"] != false {
				t.Fatalf("last piece: %v", r.Data)
			}
			break
		}
		if next != offset+float64(len(c)) || !strings.Contains(r.Message, "offset=") {
			t.Fatalf("next_offset %v after %v + %d", next, offset, len(c))
		}
		offset = next
	}
	if got.String() != line || calls < len(line)/10000 {
		t.Fatalf("joined %d bytes in %d calls, want %d", got.Len(), calls, len(line))
	}

	r := e.post("shed_read", map[string]any{"zone": "storage", "path": "long.txt", "offset": len(line)}, nil)
	wantOK(t, r)
	if r.Data["content"] != "" || r.Data["next_offset"] != nil {
		t.Fatalf("at the end: %v", r.Data)
	}
	r = e.post("shed_read", map[string]any{"zone": "storage", "path": "long.txt", "offset": len(line) + 1}, nil)
	wantError(t, r, "INVALID_PARAMETER")
	if r.Hint == "" {
		t.Fatal("no hint")
	}
	r = e.post("shed_read", map[string]any{"zone": "storage", "path": "long.txt", "offset": -1}, nil)
	wantError(t, r, "INVALID_PARAMETER")
	e.write(zoneDir+"bin.dat", "\x00\x01\x02")
	wantError(t, e.post("shed_read", map[string]any{"zone": "storage", "path": "bin.dat", "offset": 0}, nil), "BINARY_FILE")
}
