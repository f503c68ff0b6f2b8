package files

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/fileshed/fileshed/core"
)

// Anchored lines (issue 37): shed_read(anchors=true) shows each line as "N:hh|text", hh the
// first two hex digits of the SHA-256 of the line's text (its terminator dropped, so a CRLF
// file and its LF copy agree); shed_patch_text(anchor="N:hh") edits line N only if it still
// has hash hh, else ANCHOR_MISMATCH names the line as it is now and the nearest line (±50)
// that has hh, so that the model retries without reading again.

// anchorWindow is how far from line N ANCHOR_MISMATCH looks for the line that has hh.
const anchorWindow = 50

// shownLineMax bounds the text of a line quoted in an error's details.
const shownLineMax = 200

// lineHash is the anchor hash of a line: two hex digits of its text without terminator.
func lineHash(l []byte) string {
	sum := sha256.Sum256(trimEOL(l))
	return hex.EncodeToString(sum[:1])
}

// anchored is line n as shed_read(anchors=true) shows it, its text cut to shownLineMax.
func anchored(n int, l []byte) string {
	text := trimEOL(l)
	if len(text) > shownLineMax {
		text = text[:completeRunes(text[:shownLineMax])]
	}
	return fmt.Sprintf("%d:%s|%s", n, lineHash(l), text)
}

// parseAnchor reads "N:hh" (N >= 1, hh two hex digits).
func parseAnchor(a string) (int, string, error) {
	n, hh, ok := strings.Cut(strings.TrimSpace(a), ":")
	line, err := strconv.Atoi(n)
	hh = strings.ToLower(strings.TrimSpace(strings.SplitN(hh, "|", 2)[0])) // "N:hh|text" copied whole is fine
	if _, herr := hex.DecodeString(hh); !ok || err != nil || line < 1 || len(hh) != 2 || herr != nil {
		return 0, "", core.Errf(core.InvalidParameter, "anchor must be \"N:hh\" as shed_read(anchors=true) shows it, got %q", core.Shorten(a)).
			With("anchor", core.Shorten(a)).WithHint("Read the lines with shed_read(anchors=true) and pass the N:hh before the '|', e.g. anchor=\"12:3f\"")
	}
	return line, hh, nil
}

// anchorWriter writes what copyLines gives it (whole lines, from line n on) to w, each line
// prefixed with "N:hh|". It holds one line at a time (the longest line, as patch_text's
// streaming does); Close writes a last line without terminator.
type anchorWriter struct {
	w    io.Writer
	n    int64
	line []byte
}

func (a *anchorWriter) Write(p []byte) (int, error) {
	done := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			a.line = append(a.line, p...)
			break
		}
		a.line = append(a.line, p[:i+1]...)
		p = p[i+1:]
		a.flush()
	}
	return done, nil
}

// flush writes the line held, if any.
func (a *anchorWriter) flush() {
	if len(a.line) == 0 {
		return
	}
	fmt.Fprintf(a.w, "%d:%s|", a.n, lineHash(a.line))
	_, _ = a.w.Write(a.line)
	a.n++
	a.line = a.line[:0]
}

// Close writes the last line held.
func (a *anchorWriter) Close() error {
	a.flush()
	return nil
}

// errStopScan ends an eachLine early.
var errStopScan = errors.New("stop")

// checkAnchor reads the text r up to line n+anchorWindow and answers nil when line n has
// hash hh, else ANCHOR_MISMATCH with the line now and the nearest line that has hh.
func checkAnchor(r io.Reader, t core.Target, n int, hh string) error {
	var now string
	lines, best, bestDist, ties := 0, "", anchorWindow+1, 0
	err := eachLine(r, func(l []byte) error {
		lines++
		if lines == n {
			now = anchored(n, l)
			if lineHash(l) == hh {
				return errStopScan
			}
		}
		d := lines - n
		if d < 0 {
			d = -d
		}
		if lines != n && d <= anchorWindow && lineHash(l) == hh {
			switch {
			case d < bestDist:
				best, bestDist, ties = anchored(lines, l), d, 0
			case d == bestDist:
				ties++
			}
		}
		if lines >= n+anchorWindow {
			return errStopScan
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStopScan) {
		return err
	}
	if now != "" && strings.HasPrefix(now, fmt.Sprintf("%d:%s|", n, hh)) {
		return nil
	}
	anchor := fmt.Sprintf("%d:%s", n, hh)
	e := core.Errf(core.AnchorMismatch, "Line %d no longer has hash %s: nothing was written", n, hh).
		With("path", t.Shown).With("anchor", anchor)
	if now == "" {
		e = core.Errf(core.AnchorMismatch, "Line %d is beyond the end of the file (%d lines): nothing was written", n, lines).
			With("path", t.Shown).With("anchor", anchor).With("lines", lines)
	} else {
		e.With("line_now", now)
	}
	switch {
	case best != "" && ties == 0:
		moved, _, _ := strings.Cut(best, "|")
		e.With("nearest", best).WithHint("The line moved: call again with anchor=\"%s\" (details.nearest shows it)", moved)
	case best != "":
		e.With("nearest", best).WithHint("Several lines near %d have hash %s: read them again with shed_read(anchors=true) and pick the anchor", n, hh)
	default:
		e.WithHint("No line within %d of line %d has hash %s: read the lines again with shed_read(anchors=true)", anchorWindow, n, hh)
	}
	return e
}
