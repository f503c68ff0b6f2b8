package core

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"path"
	"strings"
	"syscall"
	"time"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/store"
)

// The change journal (issue 36): every change the write transaction applies is one row per
// path in the state database, written pending before the change runs (with its
// before-image already kept) and settled after it (tx.go's Apply): with the SQLite state
// the settlement is queued and written in batches, before any read of the journal
// (store.JournalSettleLater). So a server killed between the two leaves a pending row
// beside a change that may or may not have happened, and the recovery (journal_recover.go)
// tells which by the path's identity: the same as before, nothing happened and the row
// goes; another, the change happened and the row stays. Never a row without its change,
// never a change without its row.
//
// Uploads are not journaled (read-only to the model, a conversation's own files).

// journaled reports whether changes of z are recorded.
func (s *Service) journaled(z *Zone) bool {
	return s.cfg.Journal.Enabled && z != nil && z.Kind != Uploads && z.fs != nil
}

// ident is an entry's identity as the journal compares it: kind, device, inode, size and
// modification time ("" when absent). An atomic write makes a new inode, a rename keeps it.
func ident(fi fs.FileInfo) string {
	if fi == nil {
		return ""
	}
	kind := "f"
	switch {
	case fi.IsDir():
		kind = "d"
	case fi.Mode()&fs.ModeSymlink != 0:
		kind = "l"
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fmt.Sprintf("%s:%d:%d", kind, fi.Size(), fi.ModTime().UnixNano())
	}
	if kind == "d" { // a folder's time and size move with its entries
		return fmt.Sprintf("d:%d:%d", st.Dev, st.Ino)
	}
	// The size on disk (st.Size), not fi.Size(): a sealed zone's view tells its plaintext size,
	// the recovery's raw view the ciphertext's; the identity must not depend on the view.
	return fmt.Sprintf("%s:%d:%d:%d:%d", kind, st.Dev, st.Ino, st.Size, fi.ModTime().UnixNano())
}

// statEntry is rel of z as the journal sees it: followed (a write's path) or itself.
func statEntry(z *Zone, rel string, follow bool) fs.FileInfo {
	fi, _ := lstatEntry(z, rel, follow)
	return fi
}

// lstatEntry is statEntry, and whether rel itself is a link (followed when follow): the
// entry itself first, followed only when it is a link (one look for a file, not two).
func lstatEntry(z *Zone, rel string, follow bool) (fi fs.FileInfo, link bool) {
	fi, _, err := z.fs.LstatIfPossible(rel)
	if err != nil {
		return nil, false // absent (a missing entry is missing followed too)
	}
	if link = fi.Mode()&fs.ModeSymlink != 0; link && follow {
		if fi, err = z.fs.Stat(rel); err != nil {
			return nil, true
		}
	}
	return fi, link
}

// sizeOf is a regular file's size, else -1.
func sizeOf(fi fs.FileInfo) int64 {
	if fi == nil || !fi.Mode().IsRegular() {
		return -1
	}
	return fi.Size()
}

// jrec is one row a transaction will write, with what settling it needs.
type jrec struct {
	e      store.JournalEntry
	z, old *Zone // old: the zone of OldPath (a rename's source, same space)
	follow bool
	// link says the path itself was a link before the change (followed when follow).
	link bool
	// before is the plaintext before the change, for its line counts (nil: not counted).
	before []byte
	// add marks the placeholder of an addition (OpAdd): itemised when it settles.
	add bool
}

// txJournal is the journal of one transaction (nil: nothing recorded).
type txJournal struct {
	s      *Service
	ctx    context.Context
	batch  string
	recs   []*jrec
	begun  bool
	undoes string // the batch an undo reverts
}

// newBatch is a fresh batch id.
func newBatch() string { return rand.Text() }

// journalTx plans the rows of tx's steps (see the package comment of tx.go for the ops).
func (s *Service) journalTx(tx *Tx) *txJournal {
	j := &txJournal{s: s, ctx: context.WithoutCancel(tx.ctx), batch: newBatch()}
	first := 0
	if u := tx.e.undo; u != nil {
		j.batch, j.undoes, first = u.batch, u.of, u.next
		defer func() { u.next += len(j.recs) }()
	}
	steps := tx.e.Steps
	tool := cmp.Or(tx.c.tool, tx.e.Tool) // the tool the model called ("Patch" labels a commit)
	if tx.e.undo != nil {
		tool = tx.e.Tool // an undo's rows say so, whichever tool asked for it
	}
	add := func(z *Zone, p, op string, follow bool) *jrec {
		return j.add(tx.c, tool, first, z, p, op, follow)
	}
	writeOp := func(i int) string {
		if tx.targets[i].Exists {
			return "write"
		}
		return "create"
	}
	for i := 0; i < len(steps); i++ {
		st := steps[i]
		next := i + 1
		paired := next < len(steps) && steps[next].Op == OpMoveTo
		switch {
		case st.Op == OpWrite && s.journaled(st.Zone):
			add(st.Zone, st.Path, writeOp(i), true)
		case st.Op == OpRemove && s.journaled(st.Zone):
			add(st.Zone, st.Path, "delete", false)
		case st.Op == OpAdd && s.journaled(st.Zone):
			add(st.Zone, st.Path, "add", false).add = true
		case st.Op == OpMoveFrom && paired && st.Zone.Space == steps[next].Zone.Space && s.journaled(st.Zone):
			r := add(steps[next].Zone, steps[next].Path, "rename", false)
			r.e.OldPath, r.old = st.Path, st.Zone
			i++
		case (st.Op == OpMoveFrom || st.Op == OpCopyFrom) && paired:
			if st.Op == OpMoveFrom && s.journaled(st.Zone) {
				add(st.Zone, st.Path, "delete", false)
			}
			if to := steps[next]; s.journaled(to.Zone) {
				add(to.Zone, to.Path, writeOp(next), false)
			}
			i++
		case st.Op == OpMoveTo && s.journaled(st.Zone):
			add(st.Zone, st.Path, writeOp(i), false)
		}
	}
	if len(j.recs) == 0 {
		return nil
	}
	return j
}

// add plans the row of op on p of z, by c through tool, numbered after first and the rows
// already planned.
func (j *txJournal) add(c Caller, tool string, first int, z *Zone, p, op string, follow bool) *jrec {
	r := &jrec{z: z, follow: follow, e: store.JournalEntry{Batch: j.batch, N: first + len(j.recs), Pending: true,
		Replica: confine.Replica(), UserID: c.UserID, ConvID: c.ConvID, Tool: tool, Owner: z.Owner,
		Zone: z.Label, GroupID: z.GroupID, Path: p, Op: op, BytesBefore: -1, BytesAfter: -1, LinesAdded: -1,
		LinesRemoved: -1, Undoes: j.undoes}}
	j.recs = append(j.recs, r)
	return r
}

// begin measures each path before the change, keeps its before-image and writes the
// pending rows; an error refuses the change (nothing was changed).
func (j *txJournal) begin() error {
	if j == nil || j.begun {
		return nil
	}
	rows := make([]store.JournalEntry, len(j.recs))
	areas := map[string]*imageArea{}
	defer func() {
		for _, a := range areas {
			a.Close()
		}
	}()
	now := time.Now()
	for i, r := range j.recs {
		r.e.At = now
		fi, link := lstatEntry(r.z, r.e.Path, r.follow)
		r.link = link
		r.e.BeforeIdent, r.e.BytesBefore = ident(fi), sizeOf(fi)
		if r.old != nil {
			ofi := statEntry(r.old, r.e.OldPath, false)
			r.e.OldIdent, r.e.Dir = ident(ofi), ofi != nil && ofi.IsDir()
		} else {
			r.e.Dir = fi != nil && fi.IsDir()
		}
		if fi != nil && !r.add {
			j.keep(r, fi, areas)
		}
		if fi == nil && r.e.Op == "create" {
			r.e.Made = madeFor(r.z, r.e.Path)
		}
		rows[i] = r.e
	}
	if err := j.s.db.JournalBegin(j.ctx, rows); err != nil {
		return Errf(InternalError, "Cannot record the change in the journal before it runs").Because(err).
			WithHint("Retry in a moment; nothing was changed")
	}
	j.begun = true
	return nil
}

// keep notes where r's before-image is (fi: the entry before) and reads its text for the
// line counts.
func (j *txJournal) keep(r *jrec, fi fs.FileInfo, areas map[string]*imageArea) {
	z := r.z
	var content []byte // read once: the line counts and the image
	if fi.Mode().IsRegular() && fi.Size() <= lineLimit {
		if b, err := readAll(z, r.e.Path); err == nil {
			content = b
			if isText(b) {
				r.before = b
			}
		}
	}
	if z.Versioned {
		r.e.Image = imageGit // the commit's parent, once the commit is known
		return
	}
	limit := int64(j.s.cfg.Journal.MaxFileMB) << 20
	if fi.Size() <= limit {
		image, data, ok, err := j.s.inlineImage(z, r.link, fi, content)
		switch {
		case ok && err != nil:
			r.e.NoImage = "the before-image could not be kept"
			slog.Warn("journal: keep inline image", "err", err)
			return
		case ok:
			r.e.Image, r.e.ImageData, r.e.ImageBytes = image, data, int64(len(data))
			return
		}
	}
	a := areas[z.Space]
	if a == nil {
		var err error
		if a, err = j.s.openArea(z); err != nil {
			r.e.NoImage = "the journal area cannot be written"
			slog.Warn("journal: open area", "err", err)
			return
		}
		areas[z.Space] = a
	}
	image, n, err := a.keepImage(z, r.e.Path, limit, content)
	switch {
	case err == errImageTooLarge:
		r.e.NoImage = fmt.Sprintf("larger than journal.max_file_mb (%d MB)", j.s.cfg.Journal.MaxFileMB)
	case err != nil:
		r.e.NoImage = "the before-image could not be kept"
		slog.Warn("journal: keep image", "err", err)
	default:
		r.e.Image, r.e.ImageBytes = image, n
	}
}

// madeFor is the topmost missing folder above rel of z: the one a creation of rel makes
// ("" when rel's folder exists).
func madeFor(z *Zone, rel string) string {
	made := ""
	for d := path.Dir(rel); d != "." && d != "/" && d != ""; d = path.Dir(d) {
		if statEntry(z, d, false) != nil {
			break
		}
		made = d
	}
	return made
}

// readAll reads rel of z whole (plaintext), at most lineLimit+1 bytes.
func readAll(z *Zone, rel string) ([]byte, error) {
	f, err := z.fs.Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var buf bytes.Buffer
	if fi, err := f.Stat(); err == nil && fi.Size() <= lineLimit {
		buf.Grow(int(fi.Size()) + bytes.MinRead) // one read, and the one that says the end
	}
	_, err = buf.ReadFrom(io.LimitReader(f, lineLimit+1))
	b := buf.Bytes()
	if err == nil && len(b) > lineLimit {
		return nil, errImageTooLarge
	}
	return b, err
}

// settle writes what the change did: each row done with its after state, or dropped when
// its path is as it was (the change failed before touching it); an addition's placeholder
// is replaced by the paths ch names below it. hash is the commit ("" when none).
func (j *txJournal) settle(hash string, ch Change, ferr error) {
	if j == nil || !j.begun {
		return
	}
	var done, add []store.JournalEntry
	var drop []int
	named := map[string]bool{}
	for _, r := range j.recs {
		named[r.z.Space+"\x00"+r.e.Path] = true
	}
	for _, r := range j.recs {
		if r.add {
			items := j.itemise(r, ch, named, j.nextN(len(add)))
			drop = append(drop, r.e.N)
			if len(items) == 0 && ferr == nil && (ch.All || len(ch.Paths) == 0) {
				e := r.e
				e.NoImage, e.Pending = "the entries added are not itemised", false
				add = append(add, j.renumber(e, j.nextN(len(add))))
			}
			add = append(add, items...)
			continue
		}
		fi := statEntry(r.z, r.e.Path, r.follow)
		after := ident(fi)
		oldNow := ""
		if r.old != nil {
			oldNow = ident(statEntry(r.old, r.e.OldPath, false))
		}
		unchanged := after == r.e.BeforeIdent && (r.old == nil || oldNow == r.e.OldIdent)
		if unchanged || r.z.Versioned && hash == "" && ferr == nil {
			drop = append(drop, r.e.N) // not changed, or written with the content it had
			continue
		}
		r.e.AfterIdent, r.e.BytesAfter, r.e.Pending = after, sizeOf(fi), false
		if r.z.Versioned {
			r.e.Commit = hash
			if hash == "" && r.e.Image == imageGit {
				r.e.Image, r.e.NoImage = "", "the change was not committed"
			}
		}
		j.countLines(r, fi)
		done = append(done, r.e)
	}
	// Queued (store.JournalSettleLater: written in batches, before any read of the journal),
	// unless rows are added: their ids must follow the changes' order.
	var err error
	if len(add) == 0 {
		err = j.s.db.JournalSettleLater(j.ctx, j.batch, done, drop)
	} else {
		err = j.s.db.JournalSettle(j.ctx, j.batch, done, drop, add)
	}
	if err != nil {
		// The rows stay pending: the recovery settles them from the disk.
		slog.Warn("journal: settle", "err", err)
		return
	}
	j.s.evictSoon(j.recs)
}

// countLines counts the lines r's change added and removed when both sides are text.
func (j *txJournal) countLines(r *jrec, fi fs.FileInfo) {
	switch {
	case r.before != nil && fi != nil && fi.Mode().IsRegular() && fi.Size() <= lineLimit:
		if b, err := readAll(r.z, r.e.Path); err == nil && isText(b) {
			r.e.LinesAdded, r.e.LinesRemoved = lineDelta(r.before, b)
		}
	case r.e.BeforeIdent == "" && fi != nil && fi.Mode().IsRegular() && fi.Size() <= lineLimit:
		if b, err := readAll(r.z, r.e.Path); err == nil && isText(b) {
			r.e.LinesAdded, r.e.LinesRemoved = lineDelta(nil, b)
		}
	case r.before != nil && fi == nil:
		r.e.LinesAdded, r.e.LinesRemoved = lineDelta(r.before, nil)
	}
}

// itemise lists the entries an addition created: the paths ch names at or below the
// placeholder's, that no other row of the transaction names, numbered from n.
func (j *txJournal) itemise(r *jrec, ch Change, named map[string]bool, n int) []store.JournalEntry {
	var out []store.JournalEntry
	for _, p := range ch.Paths {
		if p != r.e.Path && !strings.HasPrefix(p, r.e.Path+"/") && r.e.Path != "" || named[r.z.Space+"\x00"+p] {
			continue
		}
		fi := statEntry(r.z, p, false)
		if fi == nil {
			continue
		}
		e := r.e
		e.Path, e.Op, e.Pending, e.Dir = p, "create", false, fi.IsDir()
		e.BeforeIdent, e.AfterIdent, e.BytesAfter = "", ident(fi), sizeOf(fi)
		rr := &jrec{z: r.z, e: e}
		j.countLines(rr, fi)
		out = append(out, j.renumber(rr.e, n+len(out)))
	}
	return out
}

// nextN is the number of a row added at settlement after k others: past every planned row.
func (j *txJournal) nextN(k int) int {
	last := 0
	for _, r := range j.recs {
		last = max(last, r.e.N)
	}
	return last + 1 + k
}

// renumber is e as row n of its batch.
func (j *txJournal) renumber(e store.JournalEntry, n int) store.JournalEntry {
	e.N = n
	return e
}
