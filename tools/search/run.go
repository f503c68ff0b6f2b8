package search

import (
	"bytes"
	"context"
	"errors"
	"io"
	"path"
	"runtime"
	"sync"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/textcap"
	"github.com/fileshed/fileshed/tools/files"
)

// One search is a pipeline within the caller's command slot: the walk lists the entries of
// each zone in order and numbers them; workers (one per processor) read and match the files
// in parallel; the page takes their findings back in the walk's order, so that offset and
// next_offset count the same matches on every call. A window of numbered entries bounds
// what runs ahead of the page (memory), and the page cancels the rest once it is full.

// maxPageMatches bounds the matches of one answer (besides its bytes).
const maxPageMatches = 1000

// searchRun is one call's search.
type searchRun struct {
	s         *Tools
	zones     []*core.Zone
	m         matcher
	scope     scope
	namesOnly bool
	office    officeLimits
	pdfMu     sync.Mutex // one PDF extraction at a time
}

// job is one entry of the walk, numbered.
type job struct {
	seq  int
	zone int
	e    entry
}

// finding is what a worker found in one entry.
type finding struct {
	job
	name bool   // the name matched
	kind string // the text's source: "pdf", "docx", "odt", "xlsx"; "" for text
	scan fileScan
	skip string // why the content was not searched ("" when it was)
	// cut: the search ended (time, a full page) before the entry was read to its end.
	cut bool
}

// run searches every zone into p.
func (r *searchRun) run(ctx context.Context, p *page) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	workers := min(runtime.GOMAXPROCS(0), 8)
	jobs := make(chan job)
	found := make(chan finding, workers)
	window := make(chan struct{}, 4*workers+16)
	var walkErr error
	found0 := false // the scope's root exists in some zone
	go func() {
		defer close(jobs)
		seq := 0
		for i, z := range r.zones {
			err := walk(ctx, z, r.scope, func(e entry) error {
				select {
				case window <- struct{}{}:
				case <-ctx.Done():
					return ctx.Err()
				}
				select {
				case jobs <- job{seq: seq, zone: i, e: e}:
					seq++
					return nil
				case <-ctx.Done():
					return ctx.Err()
				}
			})
			if errors.Is(err, errNoRoot) {
				continue
			}
			found0 = true
			if err != nil && ctx.Err() == nil {
				walkErr = err
				cancel()
				return
			}
		}
	}()
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sc := newScanner(r.m)
			for j := range jobs {
				found <- r.find(ctx, sc, j, 0)
			}
		}()
	}
	go func() { wg.Wait(); close(found) }()

	pending := map[int]finding{}
	next, stopped := 0, false
	var sc *scanner // the page's own, for a file whose matches it must read again
	for f := range found {
		pending[f.seq] = f
		for !stopped {
			f, ok := pending[next]
			if !ok {
				break
			}
			delete(pending, next)
			next++
			<-window
			if sc == nil {
				sc = newScanner(r.m)
			}
			if !p.take(ctx, r, sc, f) {
				stopped = true
				cancel()
			}
		}
	}
	if walkErr != nil {
		return walkErr
	}
	if !found0 && r.scope.root != "" {
		return errNotFound(r.scope.root, r.zones)
	}
	if !stopped && errors.Is(ctx.Err(), context.DeadlineExceeded) {
		p.stop(true)
	}
	return nil
}

// find reads entry j: its name, then (a file, unless names only) its content, keeping the
// details of the matches numbered from `from` on.
func (r *searchRun) find(ctx context.Context, sc *scanner, j job, from int) finding {
	f := finding{job: j}
	if j.e.kind != fileEntry && j.e.kind != dirEntry {
		return f // counted, never named
	}
	if s, _ := r.m.find([]byte(path.Base(j.e.rel))); s >= 0 {
		f.name = true
	}
	if j.e.kind != fileEntry || r.namesOnly {
		return f
	}
	f.scan.from = from
	err := r.content(ctx, sc, r.zones[j.zone], j.e.rel, &f)
	switch {
	case ctx.Err() != nil:
		f.cut = true
	case err != nil:
		f.skip, f.scan = skipReason(err), fileScan{}
	}
	return f
}

// content matches the content of file rel of z: its text, a PDF's or an office document's.
// Binary files are skipped. The file is read once, its first chunk into the scanner's
// buffer (judged by its first textcap.SniffLen bytes, as shed_read judges a file), and no
// further than its size at the open (no read to learn of its end).
func (r *searchRun) content(ctx context.Context, sc *scanner, z *core.Zone, rel string, f *finding) error {
	file, info, err := core.OpenRegular(z, rel, rel, core.ReadDirError)
	if err != nil {
		return err
	}
	defer file.Close()
	var in io.Reader = file
	if !z.Fs().Sealed() {
		in = io.LimitReader(file, info.Size())
	}
	head, err := sc.head(in)
	if err != nil {
		return err
	}
	sample := head[:min(len(head), textcap.SniffLen)]
	keep := maxPageMatches + 1
	if files.IsPDF(sample) {
		text, err := r.pdfText(ctx, z, rel, head, in)
		if err == nil {
			f.kind = "pdf"
			return sc.pdfPages(ctx, text, keep, &f.scan)
		}
		if e, ok := core.AsError(err); !ok || e.Code != core.PdfUnreadable || textcap.LooksBinary(sample) {
			return err
		}
		// A text file that only starts like a PDF is searched as text (as shed_read reads
		// it); in a zone that is not encrypted from its start again, since the hash read it.
		if !z.Fs().Sealed() {
			if _, err := file.Seek(0, io.SeekStart); err != nil {
				return err
			}
			in = io.LimitReader(file, info.Size())
			if head, err = sc.head(in); err != nil {
				return err
			}
		}
	}
	if kind := officeKind(rel, sample); kind != "" {
		text, err := officeText(file, info.Size(), kind, r.office)
		if err != nil {
			return err
		}
		f.kind = kind
		return sc.scan(ctx, bytes.NewReader(text), 0, keep, 0, &f.scan)
	}
	if textcap.LooksBinary(sample) {
		return &errSkip{reason: "binary"}
	}
	return sc.scan(ctx, in, len(head), keep, 0, &f.scan)
}
