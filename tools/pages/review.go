package pages

import (
	"context"
	"crypto/rand"
	"fmt"
	"strings"
	"time"
	"unicode"

	"github.com/fileshed/fileshed/core"
)

// ReviewInput is the input of shed_review (shed_version action=review): the changes a
// review page shows, chosen as shed_changes chooses them.
type ReviewInput struct {
	Zone            string `json:"zone,omitempty"`
	Group           string `json:"group,omitempty"`
	Path            string `json:"path,omitempty"`
	AllowZoneInPath bool   `json:"allow_zone_in_path,omitempty"`
	Conversation    string `json:"conversation,omitempty"`
	Limit           int    `json:"limit,omitempty"`
}

// Bounds of a review page: the newest reviewDefault changes (at most reviewMax), each
// diff as shed_changes with change_id cuts it; the page stops before page_max_kb.
const (
	reviewDefault = 20
	reviewMax     = 50
)

// Review answers shed_review: a read-only result page (Markdown, served like
// shed_save_page's: rendered under a strict Content-Security-Policy, expiring link) of this
// conversation's newest changes with their diffs, written in Storage under output/. Every
// name and diff line on it is the user's or the model's, so hostile: names are code spans
// and diffs fenced code blocks whose fences are longer than any backtick run they hold, so
// nothing in them becomes markup.
func (s *Tools) Review(ctx context.Context, c core.Caller, in ReviewInput) (core.Result, error) {
	limit := in.Limit
	if limit <= 0 {
		limit = reviewDefault
	}
	limit = min(limit, reviewMax)
	list, next, err := s.Kernel.Changes(ctx, c, core.ChangesQuery{Conversation: in.Conversation, Zone: in.Zone, Group: in.Group,
		Path: in.Path, AllowZoneInPath: in.AllowZoneInPath, Limit: limit})
	if err != nil {
		return core.Result{}, err
	}
	title := "Changes of this conversation"
	if strings.EqualFold(in.Conversation, "all") {
		title = "Changes of every conversation"
	}
	var b strings.Builder
	fmt.Fprintf(&b, "# %s\n\n%d change(s), newest first, as of %s UTC.", title, len(list), time.Now().UTC().Format("2006-01-02 15:04"))
	if next > 0 {
		b.WriteString(" Older ones: shed_version action=changes.")
	}
	b.WriteString("\n")
	budget := s.Config().PageMaxKB<<10 - 1024
	for i, ch := range list {
		d, err := s.ChangeDiff(ctx, c, ch.ID)
		if err != nil {
			return core.Result{}, err
		}
		section := reviewSection(d.ChangeInfo, d.Diff, d.Unavailable, d.Cut, d.Binary)
		if b.Len()+len(section) > budget {
			fmt.Fprintf(&b, "\n%d older change(s) did not fit on this page: shed_version action=changes.\n", len(list)-i)
			break
		}
		b.WriteString(section)
	}
	p := fmt.Sprintf("output/review-%s.md", strings.ToLower(rand.Text()[:6]))
	res, click, err := s.publish(ctx, c, core.ZoneArgs{Zone: "storage"}, p, b.String(), title, nil)
	if err != nil || click == "" {
		return res, err
	}
	return core.Result{Data: res.Data, Message: fmt.Sprintf("Review page of %d change(s): %s (show clickable_link to the user)",
		len(list), click)}, nil
}

// reviewSection is one change on the review page: a heading naming it, its facts, its diff
// (as core.Diff holds it: the text, why there is none, whether it was cut, binary content).
func reviewSection(d core.ChangeInfo, diff, unavailable string, cut, binary bool) string {
	var b strings.Builder
	where := d.Zone
	if d.Group != "" {
		where += " " + d.Group
	}
	fmt.Fprintf(&b, "\n## %d. %s %s\n\n", d.ID, d.Op, codeSpan(d.Path))
	facts := []string{d.Time.UTC().Format("2006-01-02 15:04:05"), codeSpan(where), codeSpan(d.Tool)}
	if d.OldPath != "" {
		facts = append(facts, "from "+codeSpan(d.OldPath))
	}
	if !d.This {
		facts = append(facts, "another conversation")
	}
	switch {
	case d.LinesAdded >= 0:
		facts = append(facts, fmt.Sprintf("+%d −%d lines", d.LinesAdded, d.LinesRemoved))
	case d.BytesBefore >= 0 || d.BytesAfter >= 0:
		facts = append(facts, fmt.Sprintf("%d → %d bytes", max(d.BytesBefore, 0), max(d.BytesAfter, 0)))
	}
	switch {
	case d.Undone:
		facts = append(facts, "undone")
	case d.Undoable:
		facts = append(facts, "undoable")
	default:
		facts = append(facts, "not undoable: "+codeSpan(d.Why))
	}
	b.WriteString(strings.Join(facts, " · ") + "\n\n")
	switch {
	case unavailable != "":
		b.WriteString("No diff: " + codeSpan(unavailable) + "\n")
	case binary:
		b.WriteString("Binary content: no diff.\n")
	case diff != "":
		fence := strings.Repeat("`", max(3, longestRun(diff, '`')+1))
		b.WriteString(fence + "diff\n" + strings.TrimSuffix(diff, "\n") + "\n" + fence + "\n")
		if cut {
			b.WriteString("\nThe diff was cut: see it whole with shed_version action=changes change_id.\n")
		}
	}
	return b.String()
}

// codeSpan is s as Markdown inline code, shown literally whatever it holds: control
// characters (a newline in a file name) as U+FFFD, delimited by a backtick run longer than
// any inside.
func codeSpan(s string) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return unicode.ReplacementChar
		}
		return r
	}, s)
	if s == "" {
		return "–"
	}
	fence := strings.Repeat("`", longestRun(s, '`')+1)
	return fence + " " + s + " " + fence
}

// longestRun is the length of the longest run of c in s.
func longestRun(s string, c byte) int {
	best, n := 0, 0
	for i := 0; i < len(s); i++ {
		if s[i] == c {
			n++
			best = max(best, n)
		} else {
			n = 0
		}
	}
	return best
}
