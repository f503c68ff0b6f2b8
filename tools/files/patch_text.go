package files

import (
	"context"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/fileshed/fileshed/core"
)

// PatchTextInput is the input of shed_patch_text.
type PatchTextInput struct {
	core.ZoneArgs
	Path         string `json:"path" required:"true"`
	Content      string `json:"content" required:"true" empty:"value" doc:"Literal except \\1 group refs"`
	Position     string `json:"position,omitempty" default:"end" enum:"start,end,before,after,replace"`
	Line         int    `json:"line,omitempty" minimum:"1" absent:"0"`
	EndLine      int    `json:"end_line,omitempty" minimum:"1" absent:"0" doc:"Last line replaced"`
	Pattern      string `json:"pattern,omitempty" doc:"RE2 regex"`
	RegexFlags   string `json:"regex_flags,omitempty" doc:"i, m and/or s"`
	MatchAll     bool   `json:"match_all,omitempty"`
	Overwrite    bool   `json:"overwrite,omitempty"`
	Safe         bool   `json:"safe,omitempty" default:"true" doc:"Refuse if another conversation holds the file in a locked edit"`
	Message      string `json:"message,omitempty" doc:"Commit message (documents, group)"`
	Mode         string `json:"mode,omitempty" doc:"Group zone, new file: owner, group or owner_ro"`
	ExpectedHash string `json:"expected_hash,omitempty" doc:"Hash of your last read; \"new\": must not exist"`
	Anchor       string `json:"anchor,omitempty" doc:"N:hh (shed_read anchors), for line"`
}

// textPositions are the positions of shed_patch_text.
var textPositions = map[string]bool{"start": true, "end": true, "before": true, "after": true, "replace": true}

// PatchText edits a text file (reference §5.3): append, prepend, insert before/after a line
// or the lines matching a pattern, replace lines or regex matches, or overwrite. CRLF files
// stay CRLF; the write is atomic and the quota is reserved before it.
func (s *Tools) PatchText(ctx context.Context, c core.Caller, in PatchTextInput) (core.Result, error) {
	z, rel, err := s.ZonePath(ctx, c, in.ZoneArgs, in.Path, true)
	if err != nil {
		return core.Result{}, err
	}
	defer z.Close()
	if err := checkText(in.Content); err != nil {
		return core.Result{}, err
	}
	e, err := textEditOf(in)
	if err != nil {
		return core.Result{}, err
	}
	position := e.position
	if in.Overwrite {
		position = "end" // overwriting creates the file like an append does
	}
	message := in.Message
	if message == "" {
		message = fmt.Sprintf("Patch %s: %s", rel, e.position)
	}
	tx, t, err := s.BeginWrite(ctx, c, z, rel, in.Path, core.Edit{Tool: "Patch", Message: message, Mode: in.Mode, Unsafe: !in.Safe, Expect: in.ExpectedHash})
	if ce, ok := core.AsError(err); ok && ce.Code == core.FileChanged {
		return core.Result{}, changedAround(z, rel, e, ce)
	}
	if err != nil {
		return core.Result{}, err
	}
	defer tx.Close()
	if !t.Exists && position != "start" && position != "end" {
		return core.Result{}, core.NeedsFile(z, in.Path, position, "create it with shed_create_file or position='end'")
	}
	var w core.Write
	affected, matches, note := 1, 0, ""
	switch {
	case in.Overwrite:
		w.Size, w.Body = int64(len(in.Content)), strings.NewReader(in.Content)
		affected = countLines(in.Content)
	case e.position == "start" || e.position == "end":
		content := in.Content
		if t.Exists {
			if err := s.CheckSize(t.Size + int64(len(content))); err != nil {
				return core.Result{}, err // the size check, before reading anything
			}
			f, err := core.OpenOld(z, t)
			if err != nil {
				return core.Result{}, err
			}
			defer f.Close()
			head := make([]byte, min(t.Size, 64<<10))
			if _, err := f.ReadAt(head, 0); err != nil && err != io.EOF {
				return core.Result{}, core.WriteError(err, z, in.Path)
			}
			content = withEOL(content, eolOf(string(head)))
			old := io.LimitReader(f, t.Size)
			if e.position == "end" {
				w.Body = io.MultiReader(old, strings.NewReader(content))
			} else {
				w.Body = io.MultiReader(strings.NewReader(content), old)
			}
			w.Size = t.Size + int64(len(content))
		} else {
			w.Size, w.Body = int64(len(content)), strings.NewReader(content)
		}
		affected = max(countLines(content), 1)
	default:
		ed, err := s.editText(z, t, e, in.Content)
		if err != nil {
			return core.Result{}, err
		}
		body, finish := core.Produced(ed.size, ed.produce)
		defer finish() // after the write, before tx.Close: the producer is done before the file is unlocked
		w.Size, w.Body, affected, matches, note = ed.size, body, ed.affected, ed.matches, ed.note
	}
	hash, err := tx.WriteFile(w)
	if err != nil {
		return core.Result{}, err
	}
	position, verb := e.position, e.position
	switch {
	case in.Overwrite:
		position, verb = "overwrite", "overwritten"
		if !t.Exists {
			verb = "created"
		}
	case !t.Exists:
		verb = "created"
	}
	data := patchTextResult{Created: !t.Exists, FileSize: w.Size, LinesAffected: affected, Path: rel,
		PatternMatches: matches, Position: position, SafeMode: in.Safe, Zone: in.Zone}
	data.Group, data.Commit = writeFields(z, hash)
	data.Hash = tx.ContentHash()
	return core.Result{Data: data, Message: fmt.Sprintf("File %s: %d line(s) affected", verb, affected) + note}, nil
}

// patchTextResult is the answer of shed_patch_text and shed_create_file; its fields are in
// the order of the JSON keys (alphabetical, as the map it replaces wrote them).
// pattern_matches is there only when a pattern matched; group and commit when they apply.
type patchTextResult struct {
	Commit         string `json:"commit,omitempty"`
	Created        bool   `json:"created"`
	FileSize       int64  `json:"file_size"`
	Group          string `json:"group,omitempty"`
	LinesAffected  int    `json:"lines_affected"`
	Path           string `json:"path"`
	Hash           string `json:"hash,omitempty"`
	PatternMatches int    `json:"pattern_matches,omitempty"`
	Position       string `json:"position"`
	SafeMode       bool   `json:"safe_mode"`
	Zone           string `json:"zone"`
}

// writeFields are the group id (group zones) and the commit id (versioned zones) of a
// write's answer, "" when they do not apply (the fields are then left out).
func writeFields(z *core.Zone, hash string) (group, commit string) {
	if z.Kind == core.GroupZone {
		group = z.GroupID
	}
	return group, hash
}

// checkText refuses content that cannot be a text file: NUL bytes, invalid UTF-8.
func checkText(content string) error {
	if i := strings.IndexByte(content, 0); i >= 0 {
		return core.Errf(core.InvalidParameter, "Content contains a NUL byte (at byte %d)", i).With("offset", i).
			WithHint("Text content cannot contain NUL: write binary data with shed_patch_bytes (hex or base64)")
	}
	if !utf8.ValidString(content) {
		return core.Errf(core.InvalidParameter, "Content is not valid UTF-8").
			WithHint("Send UTF-8 text, or write binary data with shed_patch_bytes (hex or base64)")
	}
	return nil
}

// textEditOf validates position, line, end_line and pattern (skipped with overwrite, as
// the original does).
func textEditOf(in PatchTextInput) (textEdit, error) {
	e := textEdit{position: strings.ToLower(strings.TrimSpace(in.Position)), line: in.Line, endLine: in.EndLine,
		matchAll: in.MatchAll, pattern: in.Pattern, flags: in.RegexFlags}
	if e.position == "" {
		e.position = "end"
	}
	if in.Overwrite {
		e.position = "end"
		return e, nil
	}
	if !textPositions[e.position] {
		err := core.Errf(core.InvalidParameter, "Invalid position: %s. Valid: start, end, before, after, replace", in.Position).
			With("position", in.Position).With("valid", []string{"start", "end", "before", "after", "replace"})
		switch e.position {
		case "overwrite":
			err.WithHint("To overwrite the entire file, use overwrite=true instead")
		case "at":
			err.WithHint("'at' is for shed_patch_bytes (binary). For text, use 'before' or 'after' with line=N")
		}
		return e, err
	}
	if in.Anchor != "" {
		if in.Line != 0 {
			return e, core.Errf(core.InvalidParameter, "Give anchor or line, not both").With("anchor", core.Shorten(in.Anchor)).With("line", in.Line).
				WithHint("Drop line: anchor=\"N:hh\" names line N and checks it")
		}
		n, hh, err := parseAnchor(in.Anchor)
		if err != nil {
			return e, err
		}
		in.Line, e.line, e.anchor = n, n, hh
	}
	if in.Line < 0 {
		return e, core.Errf(core.InvalidParameter, "Line must be >= 1 (first line is 1, not 0)").With("line", in.Line).
			WithHint("Use line=1 for the first line, line=2 for the second, etc.")
	}
	if in.EndLine < 0 {
		return e, core.Errf(core.InvalidParameter, "end_line must be >= 1 (first line is 1, not 0)").With("end_line", in.EndLine).
			WithHint("Use end_line=5 to replace lines up to line 5")
	}
	needs := e.position == "before" || e.position == "after" || e.position == "replace"
	if needs && in.Line == 0 && in.Pattern == "" {
		return e, core.Errf(core.MissingParameter, "Position '%s' requires 'line', 'anchor' or 'pattern'", e.position).With("position", e.position).
			WithHint("Add anchor=\"N:hh\" (from shed_read(anchors=true)), line=N (1-based) or pattern='regex'")
	}
	if in.EndLine > 0 && e.position != "replace" {
		return e, core.Errf(core.InvalidParameter, "end_line only valid with position='replace'").With("end_line", in.EndLine).
			WithHint("Use position='replace' with line and end_line to replace a range")
	}
	if in.EndLine > 0 && in.EndLine < in.Line {
		return e, core.Errf(core.InvalidParameter, "end_line must be >= line").With("line", in.Line).With("end_line", in.EndLine).
			WithHint("Use end_line >= line, e.g. line=3, end_line=5")
	}
	if in.EndLine > 0 && in.Line == 0 {
		return e, core.Errf(core.MissingParameter, "end_line requires line").With("end_line", in.EndLine).
			WithHint("Add line=N: lines line..end_line are replaced")
	}
	if in.Pattern != "" && needs && in.Line == 0 {
		re, err := compilePattern(in.Pattern, in.RegexFlags)
		if err != nil {
			return e, err
		}
		e.re = re
	}
	return e, nil
}

// textEditPlan is a planned line or pattern edit: the result's size, the lines affected,
// the pattern matches, and the function that writes the result.
type textEditPlan struct {
	size              int64
	affected, matches int
	produce           func(io.Writer) error
	note              string // said after the message: a pattern that matched more than it edited
}

// editText plans edit e of the existing file t with content. A file over max_file_size_mb
// is not edited.
func (s *Tools) editText(z *core.Zone, t core.Target, e textEdit, content string) (textEditPlan, error) {
	if err := s.CheckSize(t.Size); err != nil {
		return textEditPlan{}, err
	}
	f, err := core.OpenOld(z, t)
	if err != nil {
		return textEditPlan{}, err
	}
	if e.anchor != "" {
		if err := checkAnchor(io.NewSectionReader(f, 0, t.Size), t, e.line, e.anchor); err != nil {
			f.Close()
			return textEditPlan{}, err
		}
	}
	p, err := planText(f, z, t, e, content)
	if err != nil {
		f.Close()
		return textEditPlan{}, err
	}
	produce := p.produce
	p.produce = func(w io.Writer) error {
		defer f.Close()
		return produce(w)
	}
	return p, nil
}

// planText plans edit e of the text of t (in z), read from f. A pattern replace holds the
// text (see patch_text_stream.go); other edits read it twice, a line at a time.
func planText(f io.ReaderAt, z *core.Zone, t core.Target, e textEdit, content string) (textEditPlan, error) {
	if e.position == "replace" && e.line == 0 {
		text, err := readText(io.NewSectionReader(f, 0, t.Size), z, t)
		if err != nil {
			return textEditPlan{}, err
		}
		size, n, produce := e.replacePattern(text, withEOL(content, eolOf(text)))
		if n == 0 {
			return textEditPlan{}, withCandidates(patternNotFound(e.pattern), strings.NewReader(text), e.pattern, e.flags)
		}
		p := textEditPlan{size: size, affected: n, matches: n, produce: produce}
		if !e.matchAll {
			if all := e.re.FindAllStringIndex(text, 100); len(all) > 1 {
				var where []int
				for _, a := range all[:min(len(all), 5)] {
					where = append(where, strings.Count(text[:a[0]], "\n")+1)
				}
				p.note = manyMatches(len(all), where)
			}
		}
		return p, nil
	}
	sc, err := e.scan(io.NewSectionReader(f, 0, t.Size), z, t)
	if err != nil {
		return textEditPlan{}, err
	}
	// Line-based edits insert whole lines: a final terminator is added to the content.
	block := withEOL(content, sc.eol)
	if block != "" && !strings.HasSuffix(block, "\n") {
		block += sc.eol
	}
	size, affected, err := e.lineEdit(sc, t.Size, block)
	if ce, ok := core.AsError(err); ok && ce.Code == core.PatternNotFound {
		return textEditPlan{}, withCandidates(ce, io.NewSectionReader(f, 0, t.Size), e.pattern, e.flags)
	}
	if err != nil {
		return textEditPlan{}, err
	}
	p := textEditPlan{size: size, affected: affected, produce: func(w io.Writer) error {
		return e.writeLines(w, io.NewSectionReader(f, 0, t.Size), sc, block, size)
	}}
	if e.line == 0 {
		p.matches = sc.matches
		if !e.matchAll && sc.all > 1 {
			p.note = manyMatches(sc.all, sc.where)
		}
	}
	return p, nil
}
