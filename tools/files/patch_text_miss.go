package files

import (
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"

	"github.com/fileshed/fileshed/core"
)

// A miss that teaches (issue 37): PATTERN_NOT_FOUND names the lines the model probably
// meant — those the pattern matches once whitespace is normalised (spaces for tabs, one
// space for two, a regex character taken literally), else the most similar lines — as
// "N:hh|text", so that the retry is an anchor, not a re-read. A pattern that matched
// several lines where one was edited says how many and where; FILE_CHANGED on a text edit
// shows the lines around the edit as they are now. All of it is read on the refusal's path,
// bounded: maxCandidates lines, each cut to shownLineMax.

// maxCandidates bounds the lines a refusal quotes.
const maxCandidates = 3

// minSimilarity is the least bigram similarity (Dice, 0..1) of a "most similar" line.
const minSimilarity = 0.5

// wsRun is a run of whitespace in a pattern: spaces, tabs, or their escapes.
var wsRun = regexp.MustCompile(`(?:[ \t]|\\s|\\t)+`)

// relaxed are the looser forms of pattern tried on a miss: whitespace made optional, and
// the same with the pattern taken literally.
func relaxed(pattern, flags string) []*regexp.Regexp {
	prefix := ""
	if strings.Contains(strings.ToLower(flags), "i") {
		prefix = "(?i)"
	}
	// The literal reading keeps the pattern's anchors: "^func main() {$".
	lit := strings.TrimSuffix(strings.TrimPrefix(pattern, "^"), "$")
	lit = pattern[:len(pattern)-len(strings.TrimPrefix(pattern, "^"))] + regexp.QuoteMeta(lit) +
		pattern[len(strings.TrimSuffix(pattern, "$")):]
	var out []*regexp.Regexp
	for _, p := range []string{pattern, lit} {
		loose := wsRun.ReplaceAllString(strings.TrimSpace(p), `[ \t]*`)
		if loose == "" {
			continue
		}
		if re, err := regexp.Compile(prefix + `^[ \t]*` + strings.TrimPrefix(loose, "^")); err == nil {
			out = append(out, re)
		}
		if re, err := regexp.Compile(prefix + loose); err == nil {
			out = append(out, re)
		}
	}
	return out
}

// literal is the text a pattern probably stands for: its escapes and anchors dropped, its
// whitespace normalised.
func literal(pattern string) string {
	p := strings.TrimSuffix(strings.TrimPrefix(pattern, "^"), "$")
	p = strings.NewReplacer(`\t`, " ", `\s+`, " ", `\s*`, " ", `\s`, " ", `\`, "").Replace(p)
	return strings.Join(strings.Fields(p), " ")
}

// bigrams is the set of byte pairs of s.
func bigrams(s string) map[string]bool {
	m := make(map[string]bool, len(s))
	for i := 0; i+2 <= len(s); i++ {
		m[s[i:i+2]] = true
	}
	return m
}

// similarity is the Dice coefficient of the bigrams of a and b.
func similarity(a map[string]bool, b string) float64 {
	bb := bigrams(b)
	if len(a)+len(bb) == 0 {
		return 0
	}
	common := 0
	for k := range bb {
		if a[k] {
			common++
		}
	}
	return 2 * float64(common) / float64(len(a)+len(bb))
}

// withCandidates adds to PATTERN_NOT_FOUND err the nearest candidates in the text r.
func withCandidates(err *core.Error, r io.Reader, pattern, flags string) *core.Error {
	loose := relaxed(pattern, flags)
	want := literal(pattern)
	wantGrams := bigrams(strings.ToLower(want))
	type scored struct {
		line  string
		score float64
		n     int
	}
	var exact []string
	var similar []scored
	n := 0
	_ = eachLine(r, func(l []byte) error {
		n++
		text := trimEOL(l)
		for _, re := range loose {
			if re.Match(text) {
				if len(exact) < maxCandidates {
					exact = append(exact, anchored(n, l))
				}
				return nil
			}
		}
		if len(exact) == 0 && want != "" {
			norm := strings.ToLower(strings.Join(strings.Fields(string(text)), " "))
			if s := similarity(wantGrams, norm); s >= minSimilarity {
				similar = append(similar, scored{anchored(n, l), s, n})
				if len(similar) > 4*maxCandidates { // keep the best few, bounded
					sort.SliceStable(similar, func(i, j int) bool { return similar[i].score > similar[j].score })
					similar = similar[:maxCandidates]
				}
			}
		}
		return nil
	})
	var cands []string
	switch {
	case len(exact) > 0:
		cands = exact
		first, _, _ := strings.Cut(exact[0], "|")
		err.With("candidates_by", "whitespace").
			WithHint("The pattern matches once whitespace (or a regex character) is read loosely: details.candidates shows the lines as they are; edit with anchor=\"%s\", or copy the exact text into the pattern (tabs are \\t)", first)
	case len(similar) > 0:
		sort.SliceStable(similar, func(i, j int) bool { return similar[i].score > similar[j].score })
		for _, s := range similar[:min(len(similar), maxCandidates)] {
			cands = append(cands, s.line)
		}
		first, _, _ := strings.Cut(cands[0], "|")
		err.With("candidates_by", "similarity").
			WithHint("No line matches; the most similar are in details.candidates: edit one with anchor=\"%s\" (or its N:hh), or correct the pattern", first)
	}
	if len(cands) > 0 {
		err.With("candidates", cands)
	}
	return err
}

// aroundLines are the lines around line n (1-based; 0 = the first lines) of the text r,
// as "N:hh|text": what FILE_CHANGED shows of a text edit.
func aroundLines(r io.Reader, n int) []string {
	from := max(n-2, 1)
	var out []string
	i := 0
	_ = eachLine(r, func(l []byte) error {
		i++
		if i >= from {
			out = append(out, anchored(i, l))
		}
		if len(out) == 5 {
			return errStopScan
		}
		return nil
	})
	return out
}

// manyMatches is the note of an edit whose pattern matched more lines than it edited:
// how many and where (the first few line numbers).
func manyMatches(total int, where []int) string {
	nums := make([]string, len(where))
	for i, w := range where {
		nums[i] = fmt.Sprint(w)
	}
	more := ""
	if total > len(where) {
		more = ", ..."
	}
	return fmt.Sprintf("; the pattern matches %d places (line %s%s): only the first was edited (match_all=true edits every one, anchor=\"N:hh\" one of them)",
		total, strings.Join(nums, ", "), more)
}

// changedAround adds to FILE_CHANGED err the lines around where edit e would land, as the
// file is now (read after the refusal: nothing is held, and nothing was written).
func changedAround(z *core.Zone, rel string, e textEdit, err *core.Error) *core.Error {
	f, oerr := z.Fs().Open(rel)
	if oerr != nil {
		return err
	}
	defer f.Close()
	n := e.line
	if n == 0 && e.re != nil {
		i := 0
		_ = eachLine(f, func(l []byte) error {
			if i++; e.matchLine(l) {
				n = i
				return errStopScan
			}
			return nil
		})
		if _, serr := f.Seek(0, io.SeekStart); serr != nil {
			return err
		}
	}
	if lines := aroundLines(f, n); len(lines) > 0 {
		err.With("lines", lines)
	}
	return err
}
