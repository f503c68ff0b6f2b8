package search

import (
	"context"
)

// page assembles one answer from the findings, taken in the walk's order: the first offset
// matches are counted and passed over; the next ones go in until the answer's byte budget
// (max_output_default) or maxPageMatches is reached. A match is a matching name (first,
// when a file's name matches) or a matching line.
type page struct {
	ans    answer
	offset int
	skip   int // matches still to pass over
	budget int // bytes the answer may still take
	taken  int // matches in the answer
	// timedOut: the call's time ran out (the answer is what was found by then).
	timedOut bool
}

func newPage(offset, budget int) *page {
	return &page{ans: answer{Files: []fileAnswer{}, Offset: offset, Zones: []string{}}, offset: offset, skip: offset, budget: budget}
}

// take adds finding f to the page; false when the page is complete (full, or the search's
// time ran out while f was read). sc reads a file again when the page starts further into
// its matches than the worker kept.
func (p *page) take(ctx context.Context, r *searchRun, sc *scanner, f finding) bool {
	if f.cut {
		p.stop(true)
		return false
	}
	switch f.e.kind {
	case linkEntry:
		p.skipped("symlinks")
		return true
	case unlistedEntry:
		p.skipped("unreadable_folders")
		return true
	case fileEntry:
		p.ans.FilesSearched++
	}
	if f.skip != "" {
		p.skipped(f.skip)
	}
	name := 0
	if f.name {
		name = 1
	}
	count := name + f.scan.count
	if p.skip >= count {
		p.skip -= count
		return true
	}
	z := r.zones[f.zone]
	fa := fileAnswer{Group: z.GroupID, Kind: f.kind, Path: f.e.rel, Zone: z.Label}
	if f.e.kind == dirEntry {
		fa.Path += "/"
	}
	cost := fileOverhead + len(fa.Path) + len(fa.Group)
	defer func() {
		if fa.Name || len(fa.Lines) > 0 {
			p.ans.Files = append(p.ans.Files, fa)
			p.ans.FilesMatched++
		}
	}()
	idx := p.skip // the first match of f that goes in
	p.skip = 0
	if f.name && idx == 0 {
		if !p.fits(cost) {
			return false
		}
		fa.Name, cost = true, 0
	}
	for ci := max(idx-name, 0); ci < f.scan.count; ci++ {
		if ci < f.scan.from || ci >= f.scan.from+len(f.scan.hits) {
			f = r.find(ctx, sc, f.job, ci) // read again, keeping the details from ci on
			if f.cut {
				p.stop(true)
				return false
			}
		}
		h := f.scan.hits[ci-f.scan.from]
		l := lineAnswer{Line: h.line, Page: h.page, Text: h.text}
		if !p.fits(cost + l.size()) {
			return false
		}
		fa.Lines, cost = append(fa.Lines, l), 0
	}
	return true
}

// fits takes n bytes and a match into the page if they fit (the first match always does, so
// that every call moves on); when they do not, the page is complete and says where to go on.
func (p *page) fits(n int) bool {
	if p.taken > 0 && (n > p.budget || p.taken >= maxPageMatches) {
		next := p.offset + p.taken
		p.ans.NextOffset, p.ans.Truncated = &next, true
		return false
	}
	p.budget -= n
	p.taken++
	p.ans.Matches++
	return true
}

// stop ends the page early: the call's time ran out.
func (p *page) stop(timedOut bool) {
	p.timedOut = p.timedOut || timedOut
	p.ans.TimedOut = p.timedOut
	if p.taken > 0 {
		next := p.offset + p.taken
		p.ans.NextOffset, p.ans.Truncated = &next, true
	}
}

// skipped counts an entry left out for reason.
func (p *page) skipped(reason string) {
	if p.ans.Skipped == nil {
		p.ans.Skipped = map[string]int{}
	}
	p.ans.Skipped[reason]++
}
