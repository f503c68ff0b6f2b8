package handlers

import (
	"fmt"
	"net/http"
	"os"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"unicode"
)

// maxRanges bounds a multi-range request: more parts than this is abuse, not a client.
const maxRanges = 16

// checkRanges refuses Range headers that http.ServeContent would serve at great cost or
// answer itself: more than maxRanges parts, overlapping parts, bad syntax, or nothing
// inside the file. It returns 0 when ServeContent may go ahead, else the status (416).
func checkRanges(header string, size int64) int {
	if header == "" {
		return 0
	}
	spec, ok := strings.CutPrefix(header, "bytes=")
	parts := strings.Split(spec, ",")
	if !ok || len(parts) > maxRanges {
		return http.StatusRequestedRangeNotSatisfiable
	}
	type span struct{ from, to int64 }
	var spans []span
	for _, p := range parts {
		p = strings.TrimSpace(p)
		a, b, ok := strings.Cut(p, "-")
		if !ok {
			return http.StatusRequestedRangeNotSatisfiable
		}
		var s span
		switch {
		case a == "": // suffix: the last b bytes
			n, err := strconv.ParseInt(b, 10, 64)
			if err != nil || n <= 0 {
				return http.StatusRequestedRangeNotSatisfiable
			}
			s = span{max(size-n, 0), size - 1}
		default:
			from, err := strconv.ParseInt(a, 10, 64)
			if err != nil || from < 0 {
				return http.StatusRequestedRangeNotSatisfiable
			}
			to := size - 1
			if b != "" {
				if to, err = strconv.ParseInt(b, 10, 64); err != nil || to < from {
					return http.StatusRequestedRangeNotSatisfiable
				}
			}
			if from >= size {
				continue // not satisfiable on its own: dropped, as RFC 9110 says
			}
			s = span{from, min(to, size-1)}
		}
		spans = append(spans, s)
	}
	if len(spans) == 0 {
		return http.StatusRequestedRangeNotSatisfiable
	}
	sort.Slice(spans, func(i, j int) bool { return spans[i].from < spans[j].from })
	for i := 1; i < len(spans); i++ {
		if spans[i].from <= spans[i-1].to {
			return http.StatusRequestedRangeNotSatisfiable
		}
	}
	return 0
}

// disposition builds Content-Disposition (RFC 6266): attachment unless inline, with an
// ASCII fallback filename and the exact name in filename* (RFC 5987, UTF-8, percent-encoded).
func disposition(inline bool, name string) string {
	kind := "attachment"
	if inline {
		kind = "inline"
	}
	name = displayName(name)
	var ascii, ext strings.Builder
	for _, r := range name {
		if r >= 0x20 && r < 0x7f && r != '"' && r != '\\' && r != '%' {
			ascii.WriteRune(r)
		} else {
			ascii.WriteByte('_')
		}
	}
	for _, b := range []byte(name) {
		if attrChar(b) {
			ext.WriteByte(b)
		} else {
			fmt.Fprintf(&ext, "%%%02X", b)
		}
	}
	return fmt.Sprintf(`%s; filename="%s"; filename*=UTF-8''%s`, kind, ascii.String(), ext.String())
}

// attrChar is RFC 5987's attr-char: what filename* may carry unencoded.
func attrChar(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || strings.IndexByte("!#$&+-.^_`|~", b) >= 0
}

// displayName replaces what must never reach a header or a page as is: control characters
// (CR/LF would split a header) and bidirectional controls (an RTL override makes
// "evil\u202Etxt.exe" read as "evilexe.txt").
func displayName(name string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || unicode.Is(unicode.Bidi_Control, r) || r == unicode.ReplacementChar {
			return '_'
		}
		return r
	}, name)
}

// inode is the file's inode number (0 where the platform has none).
func inode(info os.FileInfo) uint64 {
	if st, ok := info.Sys().(*syscall.Stat_t); ok {
		return st.Ino
	}
	return 0
}
