package admin

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/store"
)

// report is what import-original did: one entry per imported user and group, in the order
// met, and the notes about the original as a whole.
type report struct {
	owners []*ownerReport
	notes  []string
}

// ownerReport is what the import did for one user or group.
type ownerReport struct {
	kind, id  string
	zones     []zoneReport
	history   []string // per versioned zone: "Documents: 2 commits on master"
	ownership int      // ownership records imported (groups)
	members   int      // owners recorded as members (groups)
	used      int64    // usage recorded after the import, in bytes
	limit     int64
	notes     []string // what was left out, dropped or changed, by path in the original
	collided  []string // zone-relative paths left out: their reachable name was taken
}

// zoneReport counts what was copied into one zone.
type zoneReport struct {
	name  string
	files int
	bytes int64
}

// owner starts the report of one user or group.
func (r *report) owner(kind, id string) *ownerReport {
	o := &ownerReport{kind: kind, id: id}
	r.owners = append(r.owners, o)
	return o
}

// group returns the report of an imported group, or nil.
func (r *report) group(id string) *ownerReport {
	for _, o := range r.owners {
		if o.kind == "group" && o.id == id {
			return o
		}
	}
	return nil
}

// note records a line about the original as a whole.
func (r *report) note(format string, args ...any) {
	r.notes = append(r.notes, fmt.Sprintf(format, args...))
}

// note records a line about this owner: what was left out, dropped or changed.
func (o *ownerReport) note(format string, args ...any) {
	o.notes = append(o.notes, fmt.Sprintf(format, args...))
}

// store is the owner as the state database names it.
func (o *ownerReport) store() store.Owner { return store.Owner{Kind: o.kind, ID: o.id} }

// print writes the report: one line per owner, its notes indented below, then the notes
// about the original and a summary.
func (r *report) print(w io.Writer, src, base string) {
	for _, o := range r.owners {
		parts := make([]string, 0, len(o.zones))
		for _, z := range o.zones {
			parts = append(parts, fmt.Sprintf("%s %d file(s), %s", z.name, z.files, core.HumanSize(z.bytes)))
		}
		if len(parts) == 0 {
			parts = append(parts, "no files")
		}
		line := fmt.Sprintf("%s %s: %s", o.kind, o.id, strings.Join(parts, "; "))
		if len(o.history) > 0 {
			line += "; history: " + strings.Join(o.history, ", ")
		}
		if o.kind == "group" {
			line += fmt.Sprintf("; %d ownership record(s), %d member(s) recorded", o.ownership, o.members)
		}
		fmt.Fprintf(w, "%s; usage %s of %s\n", line, core.HumanSize(o.used), core.HumanSize(o.limit))
		if o.used > o.limit {
			fmt.Fprintf(w, "  - over its quota: writes that add bytes are refused until files are deleted\n")
		}
		for _, n := range o.notes {
			fmt.Fprintf(w, "  - %s\n", printable(n))
		}
	}
	for _, n := range r.notes {
		fmt.Fprintf(w, "- %s\n", printable(n))
	}
	t := r.totals()
	fmt.Fprintf(w, "imported %d user(s), %d group(s), %d file(s) (%s) from %s into %s\n", t.users, t.groups, t.files, core.HumanSize(t.bytes), src, base)
}

// totals are the counts of a whole import.
type totals struct {
	users, groups, files, ownership, members, notes int
	bytes                                           int64
}

// totals counts the report.
func (r *report) totals() totals {
	t := totals{notes: len(r.notes)}
	for _, o := range r.owners {
		if o.kind == "user" {
			t.users++
		} else {
			t.groups++
		}
		for _, z := range o.zones {
			t.files += z.files
			t.bytes += z.bytes
		}
		t.ownership += o.ownership
		t.members += o.members
		t.notes += len(o.notes)
	}
	return t
}

// audit appends the import's one entry to the staged state database's audit trail (tool
// "admin_import_original", no user: the operator), its counts in the outcome; it moves in
// with the rest, or not at all.
func (im *importer) audit(ctx context.Context) error {
	db, err := store.Open(core.LayoutOf(im.staging).StateFile())
	if err != nil {
		return err
	}
	defer db.Close()
	t := im.rep.totals()
	return db.Audit(ctx, store.AuditEntry{At: time.Now(), Tool: "admin_import_original", Outcome: fmt.Sprintf(
		"OK users=%d groups=%d files=%d bytes=%d ownership=%d members=%d notes=%d force=%t no_ownership=%t allow_damaged_history=%t",
		t.users, t.groups, t.files, t.bytes, t.ownership, t.members, t.notes, im.opt.force, im.opt.noOwnership, im.opt.allowDamaged)})
}

// printable escapes what a terminal would act on: notes quote names and link targets from
// the original, which its users chose (an escape sequence in a file name must not reach
// the operator's terminal as one).
func printable(s string) string {
	var b strings.Builder
	for i, r := range s {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(s[i:], string(utf8.RuneError)): // an invalid byte
			fmt.Fprintf(&b, "\\x%02x", s[i])
		case unicode.IsGraphic(r):
			b.WriteRune(r)
		case r < 0x10000:
			fmt.Fprintf(&b, "\\u%04x", r)
		default:
			fmt.Fprintf(&b, "\\U%08x", r)
		}
	}
	return b.String()
}
