package core

import (
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/fileshed/fileshed/core/store"
)

// Bounds of the journal (journal.keep_days, journal.max_percent): a change and its image
// are kept keep_days; a user's Storage images hold at most max_percent of the user's quota,
// outside it; past that the images named least recently go first, and their changes answer
// undoable: false, "evicted". Each owner is pruned at most once per prunePeriod, or at once
// when what it wrote since may exceed its bound; objects no row names (evicted, expired, or
// kept by a change that failed) are removed once older than objectGrace (an object is
// written before its row).
const (
	prunePeriod = time.Minute
	objectGrace = 10 * time.Minute
)

// journalState is what the journal remembers per owner between its prunes.
type journalState struct {
	mu sync.Mutex
	// last prune and bytes written since, per owner.
	last    map[store.Owner]time.Time
	written map[store.Owner]int64
	// evicted counts the images dropped for room, kept the bytes of the images this
	// process kept (metrics).
	evicted, kept int64
	// areas are the journal areas kept open (journal_area.go).
	areas openAreas
}

// evictSoon notes the images recs kept and prunes their owners when due.
func (s *Service) evictSoon(recs []*jrec) {
	due := map[store.Owner]bool{}
	js := &s.journal
	js.mu.Lock()
	if js.last == nil {
		js.last, js.written = map[store.Owner]time.Time{}, map[store.Owner]int64{}
	}
	for _, r := range recs {
		if r.e.ImageBytes == 0 && r.e.BeforeIdent == "" {
			continue
		}
		o := r.e.Owner
		js.written[o] += r.e.ImageBytes
		js.kept += r.e.ImageBytes
		if time.Since(js.last[o]) >= prunePeriod || js.written[o] > s.journalLimit(o)/4 {
			due[o] = true
			js.last[o], js.written[o] = time.Now(), 0
		}
	}
	js.mu.Unlock()
	for o := range due {
		if err := s.PruneJournal(context.Background(), o); err != nil {
			slog.Warn("journal: prune", "owner", o.ID, "err", err)
		}
	}
}

// journalLimit is the most o's images may hold (journal.max_percent of its quota).
func (s *Service) journalLimit(o store.Owner) int64 {
	return s.Limit(o).Bytes / 100 * int64(s.cfg.Journal.MaxPercent)
}

// JournalEvictions is the number of images evicted for room since the start (metrics).
func (s *Service) JournalEvictions() int64 {
	s.journal.mu.Lock()
	defer s.journal.mu.Unlock()
	return s.journal.evicted
}

// JournalImageBytes is the bytes of the before-images this process kept in journal areas
// since the start (metrics).
func (s *Service) JournalImageBytes() int64 {
	s.journal.mu.Lock()
	defer s.journal.mu.Unlock()
	return s.journal.kept
}

// PruneJournal applies the journal's bounds to owner o: its rows older than keep_days go,
// then the images named least recently while they hold more than max_percent of its quota,
// then the objects no row names. It returns the bytes its images hold after.
func (s *Service) PruneJournal(ctx context.Context, o store.Owner) error {
	keep := time.Duration(s.cfg.Journal.KeepDays) * 24 * time.Hour
	if _, err := s.db.JournalExpire(ctx, o, time.Now().Add(-keep)); err != nil {
		return err
	}
	images, err := s.db.JournalImages(ctx, o)
	if err != nil {
		return err
	}
	var total int64
	for _, im := range images {
		total += im.Bytes
	}
	limit := s.journalLimit(o)
	dropped := map[string]bool{}
	for _, im := range images {
		if total <= limit {
			break
		}
		if err := s.db.JournalDropImage(ctx, o, im.Image, "evicted: the journal's room (journal.max_percent) was needed"); err != nil {
			return err
		}
		total -= im.Bytes
		dropped[im.Image] = true
		s.journal.mu.Lock()
		s.journal.evicted++
		s.journal.mu.Unlock()
	}
	if o.Kind != "user" {
		return nil // group zones are versioned: their images are commits
	}
	return s.collectObjects(ctx, o, objectGrace, dropped)
}

// collectObjects removes the objects of o's journal area that no row names (through a
// manifest too): at once those of the images dropped names, the others once older than
// grace (an object is written before the row that names it).
func (s *Service) collectObjects(ctx context.Context, o store.Owner, grace time.Duration, dropped map[string]bool) error {
	list, err := s.db.JournalImages(ctx, o)
	if err != nil {
		return err
	}
	images := map[string]bool{}
	for _, im := range list {
		images[im.Image] = true
	}
	z, err := s.ResolveZone(ctx, Caller{UserID: o.ID}, "storage", "", false)
	if err != nil {
		return err
	}
	defer z.Close()
	a, err := s.openArea(z)
	if err != nil {
		return err
	}
	defer a.Close()
	live := a.objectsOf(images)
	gone := a.objectsOf(dropped)
	return walkObjects(a, func(name string, mod time.Time) {
		if !live[name] && (gone[name] || time.Since(mod) > grace) {
			_ = a.remove(name)
		}
	})
}

// objectsOf are the objects the images name, through their manifests.
func (a *imageArea) objectsOf(images map[string]bool) map[string]bool {
	out := map[string]bool{}
	for image := range images {
		if strings.HasPrefix(image, imageInline) {
			continue // held by its rows, not the area
		}
		name, tree := strings.CutPrefix(image, imageTree)
		name = strings.TrimPrefix(name, imageCAS)
		out[name] = true
		if tree {
			entries, err := a.manifest(name)
			if err != nil {
				continue // unreadable: its objects are collected, the undo will say so
			}
			for _, e := range entries {
				if e.Object != "" {
					out[e.Object] = true
				}
			}
		}
	}
	return out
}

// walkObjects calls fn with every object of the area and its modification time.
func walkObjects(a *imageArea, fn func(name string, mod time.Time)) error {
	d, err := a.fs.Open("objects")
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	fans, err := d.Readdirnames(-1)
	_ = d.Close()
	if err != nil {
		return err
	}
	for _, fan := range fans {
		f, err := a.fs.Open(path.Join("objects", fan))
		if err != nil {
			continue // a temporary object, or gone meanwhile
		}
		infos, err := f.Readdir(-1)
		_ = f.Close()
		if err != nil {
			continue
		}
		for _, fi := range infos {
			if fi.Mode().IsRegular() {
				fn(fi.Name(), fi.ModTime())
			}
		}
	}
	return nil
}
