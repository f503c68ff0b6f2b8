package search

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/fileshed/fileshed/core"
)

// SearchInput is the input of shed_search. Its arguments carry no description: the tool's
// one line says what zone, path and regex take (the spec's budget), shed_help the rest.
type SearchInput struct {
	Query         string `json:"query" required:"true"`
	Regex         bool   `json:"regex,omitempty"`
	Zone          string `json:"zone,omitempty"`
	Group         string `json:"group,omitempty"`
	Path          string `json:"path,omitempty"`
	NamesOnly     bool   `json:"names_only,omitempty"`
	CaseSensitive bool   `json:"case_sensitive,omitempty"`
	Offset        int    `json:"offset,omitempty" minimum:"0"`
	// AllowZoneInPath is the rare flag of every path-taking tool (hidden from the spec).
	AllowZoneInPath bool `json:"allow_zone_in_path,omitempty"`
}

// Search answers shed_search: the lines (and names) matching query in every zone the caller
// can read (Uploads of this conversation, Storage, Documents, each group they are a member
// of, in that order), or in one zone, under a folder or a glob. A match is a line; the
// answer groups them by file, in a stable order (zone, then path), each line cut to
// lineWidth bytes around its match, within max_output_default bytes; offset counts matches,
// and next_offset continues exactly where the answer stopped. It runs like a command: a
// command slot of the caller, exec_timeout_default for the whole call (what it found by
// then is the answer, timed_out); it never writes a zone.
func (s *Tools) Search(ctx context.Context, c core.Caller, in SearchInput) (core.Result, error) {
	m, err := newMatcher(in.Query, in.Regex, in.CaseSensitive)
	if err != nil {
		return core.Result{}, err
	}
	if in.Offset < 0 {
		return core.Result{}, core.Errf(core.InvalidParameter, "offset must be >= 0, got %d", in.Offset).With("offset", in.Offset).
			WithHint("Omit offset for the first matches; then call again with offset=next_offset")
	}
	timeout, err := s.Commands.ExecTimeout(0)
	if err != nil {
		return core.Result{}, err
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	release, err := s.AcquireSlot(ctx, c.UserID, core.SearchSlot)
	if err != nil {
		return core.Result{}, err
	}
	defer release()
	zones, err := s.zones(ctx, c, in)
	defer func() {
		for _, z := range zones {
			z.Close()
		}
	}()
	if err != nil {
		return core.Result{}, err
	}
	sc, err := s.scope(zones, in)
	if err != nil {
		return core.Result{}, err
	}
	r := &searchRun{s: s, zones: zones, m: m, scope: sc, namesOnly: in.NamesOnly,
		office: officeLimits{maxEntries: s.Config().Archive.MaxEntries, maxRatio: int64(s.Config().Archive.MaxRatio)}}
	p := newPage(in.Offset, max(s.Config().MaxOutputDefault, 1))
	if err := r.run(ctx, p); err != nil {
		return core.Result{}, err
	}
	if p.timedOut && p.taken == 0 {
		sec := int(timeout / time.Second)
		return core.Result{}, core.Errf(core.Timeout, "The search stopped after %ds (exec_timeout_default) before a match", sec).
			With("timeout", sec).With("files_searched", p.ans.FilesSearched).
			WithHint("Narrow the search: one zone (zone='storage'), a folder or a glob (path='docs', path='*.md')")
	}
	for _, z := range zones {
		p.ans.Zones = append(p.ans.Zones, z.Name)
	}
	return core.Result{Data: p.ans, Message: p.message(in)}, nil
}

// zones resolves the zones to search, in their order: one zone (zone, or group), every
// group of the caller (zone='group' without group), or all of them (no zone).
func (s *Tools) zones(ctx context.Context, c core.Caller, in SearchInput) ([]*core.Zone, error) {
	label := strings.ToLower(strings.TrimSpace(in.Zone))
	if label == "" && in.Group != "" {
		label = "group"
	}
	if label != "" && (label != "group" || in.Group != "") {
		z, err := s.ResolveZone(ctx, c, label, in.Group, false)
		if err != nil {
			return nil, err
		}
		return []*core.Zone{z}, nil
	}
	var zones []*core.Zone
	if label == "" {
		for _, kind := range []string{"uploads", "storage", "documents"} {
			z, err := s.ResolveZone(ctx, c, kind, "", false)
			if err != nil {
				return zones, err
			}
			zones = append(zones, z)
		}
	}
	groups, available, err := s.Memberships(ctx, c)
	if err != nil {
		return zones, err
	}
	if label == "group" && !available {
		return zones, core.Errf(core.GroupNotAvailable, "Group features are not available").
			WithHint("Search your own zones: omit zone, or zone='storage'")
	}
	slices.SortFunc(groups, func(a, b core.Group) int { return cmp.Compare(a.ID, b.ID) })
	for _, g := range groups {
		z, err := s.ResolveZone(ctx, c, "group", g.ID, false)
		if e, ok := core.AsError(err); ok && e.Code == core.InvalidGroupID {
			continue // an id that cannot be a folder: the group has no zone
		}
		if err != nil {
			return zones, err
		}
		zones = append(zones, z)
	}
	return zones, nil
}

// scope validates the path argument as every tool does (PATH_ESCAPE for '..' above the
// zone or an absolute path, INVALID_PATH, PATH_STARTS_WITH_ZONE in a zone named by the
// argument) and parses its glob.
func (s *Tools) scope(zones []*core.Zone, in SearchInput) (scope, error) {
	if in.Path == "" || len(zones) == 0 {
		return scope{}, nil
	}
	clean, err := zones[0].Path(in.Path, in.AllowZoneInPath || len(zones) > 1)
	if err != nil {
		return scope{}, err
	}
	return newScope(clean)
}

// message is the answer's one-line summary.
func (p *page) message(in SearchInput) string {
	a := p.ans
	msg := fmt.Sprintf("%d matches in %d files", a.Matches, a.FilesMatched)
	if in.NamesOnly {
		msg = fmt.Sprintf("%d matching names", a.Matches)
	}
	if len(a.Zones) == 0 {
		return "No zone to search: you are in no group"
	}
	msg += fmt.Sprintf(" (%d files searched in %s)", a.FilesSearched, strings.Join(a.Zones, ", "))
	if a.Matches == 0 && in.Offset > 0 {
		msg = fmt.Sprintf("No match after offset %d (%d files searched)", in.Offset, a.FilesSearched)
	}
	if a.TimedOut {
		msg += "; the search's time ran out (exec_timeout_default): narrow it with zone or path"
	}
	if a.NextOffset != nil {
		msg += fmt.Sprintf("; more matches follow: call again with offset=%d", *a.NextOffset)
	}
	return msg
}

// errNotFound is FILE_NOT_FOUND for a path that exists in no zone searched.
func errNotFound(p string, zones []*core.Zone) error {
	e := core.Errf(core.FileNotFound, "Path not found: %s", p).With("path", p)
	if len(zones) == 1 {
		return e.With("zone", zones[0].Label).WithHint("See the zone's folders with shed_tree, or omit path to search the whole zone")
	}
	return e.WithHint("No zone has this path: see the folders with shed_tree, or omit path")
}
