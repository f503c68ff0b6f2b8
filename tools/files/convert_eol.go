package files

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"unicode/utf8"

	"github.com/fileshed/fileshed/core"
)

// ConvertEOLInput is the input of shed_convert_eol.
type ConvertEOLInput struct {
	core.ZoneArgs
	Path         string `json:"path" required:"true"`
	To           string `json:"to,omitempty" default:"unix" enum:"unix,dos,lf,crlf"`
	ExpectedHash string `json:"expected_hash,omitempty" doc:"Hash of your last read; \"new\": must not exist"`
}

// eolFormats maps the accepted values of `to` to the two targets.
var eolFormats = map[string]string{"unix": "unix", "lf": "unix", "dos": "dos", "crlf": "dos"}

// ConvertEOL rewrites a text file's line endings to LF or CRLF (reference §5.24),
// atomically, with the growth reserved against the quota (the original did neither).
// Files with NUL bytes are refused: converting a binary blindly corrupts it. The file is
// streamed, never held.
func (s *Tools) ConvertEOL(ctx context.Context, c core.Caller, in ConvertEOLInput) (core.Result, error) {
	z, err := s.ResolveZone(ctx, c, in.Zone, in.Group, true)
	if err != nil {
		return core.Result{}, err
	}
	defer z.Close()
	to := in.To
	if to == "" {
		to = "unix"
	}
	target, ok := eolFormats[strings.ToLower(strings.TrimSpace(to))]
	if !ok {
		return core.Result{}, core.Errf(core.InvalidMode, "Invalid EOL format: %s", in.To).With("to", in.To).
			With("valid", []string{"unix", "dos", "lf", "crlf"})
	}
	if in.Path == "" {
		return core.Result{}, core.Errf(core.MissingParameter, "Path parameter is required").With("parameter", "path")
	}
	rel, err := z.Path(in.Path, in.AllowZoneInPath)
	if err != nil {
		return core.Result{}, err
	}
	tx, t, err := s.BeginWrite(ctx, c, z, rel, in.Path, core.Edit{Tool: "Convert EOL", Message: fmt.Sprintf("Convert EOL to %s: %s", target, rel), Expect: in.ExpectedHash})
	if e, ok := core.AsError(err); ok && e.Code == core.NotAFile {
		return core.Result{}, core.Errf(core.InvalidFormat, "Cannot convert directory: %s", in.Path).With("path", in.Path).
			WithHint("Give a text file; list a folder with shed_tree")
	}
	if err != nil {
		return core.Result{}, err
	}
	defer tx.Close()
	if !t.Exists {
		return core.Result{}, core.Errf(core.FileNotFound, "File not found: %s", in.Path).With("path", in.Path).With("zone", z.Label)
	}
	if err := s.CheckSize(t.Size); err != nil {
		return core.Result{}, err // a file over max_file_size_mb is not converted
	}
	f, err := core.OpenOld(z, t)
	if err != nil {
		return core.Result{}, err
	}
	defer f.Close()
	// Streamed (issue 24): one read checks, counts and hashes (the answer of a file already
	// in the format asked for carries its hash too), a second writes; only 64 KiB are held.
	sum := core.NewContentHash()
	crlf, lf, cr, err := scanEOL(io.TeeReader(io.NewSectionReader(f, 0, t.Size), sum), z, t)
	if err != nil {
		return core.Result{}, err
	}
	lfOnly, crOnly := lf-crlf, cr-crlf
	original := "mixed"
	switch {
	case crlf > 0 && lfOnly == 0 && crOnly == 0:
		original = "dos"
	case lfOnly > 0 && crlf == 0 && crOnly == 0:
		original = "unix"
	case crOnly > 0 && crlf == 0 && lfOnly == 0:
		original = "mac (old)"
	}
	converted, size := crlf+crOnly, t.Size-int64(crlf)
	unchanged := crlf+crOnly == 0
	if target == "dos" {
		converted, size = lfOnly+crOnly, t.Size+int64(lfOnly+crOnly)
		unchanged = lfOnly+crOnly == 0
	}
	if unchanged {
		return core.Result{Data: eolUnchanged{Changed: false, Format: original, Hash: sum.Sum(), Path: rel},
			Message: fmt.Sprintf("File already in %s format", target)}, nil
	}
	body, finish := core.Produced(size, func(w io.Writer) error {
		return writeEOL(w, io.NewSectionReader(f, 0, t.Size), target == "dos", size)
	})
	defer finish() // after the write, before tx.Close: the producer reads the file under its lock
	hash, err := tx.WriteFile(core.Write{Size: size, Body: body})
	if err != nil {
		return core.Result{}, err
	}
	data := eolConverted{Changed: true, LinesConverted: converted, NewFormat: target, OriginalFormat: original, Path: rel}
	data.Group, data.Commit = writeFields(z, hash)
	data.Hash = tx.ContentHash()
	return core.Result{Data: data, Message: fmt.Sprintf("Converted %s from %s to %s", rel, original, target)}, nil
}

// eolUnchanged is the answer of shed_convert_eol when the file already has the line
// endings asked for (fields in the order of the JSON keys, alphabetical).
type eolUnchanged struct {
	Changed bool   `json:"changed"`
	Format  string `json:"format"`
	Hash    string `json:"hash"`
	Path    string `json:"path"`
}

// eolConverted is the answer of shed_convert_eol when the file was rewritten (fields in
// the order of the JSON keys, alphabetical; group and commit only when they apply).
type eolConverted struct {
	Changed        bool   `json:"changed"`
	Commit         string `json:"commit,omitempty"`
	Group          string `json:"group,omitempty"`
	Hash           string `json:"hash,omitempty"`
	LinesConverted int    `json:"lines_converted"`
	NewFormat      string `json:"new_format"`
	OriginalFormat string `json:"original_format"`
	Path           string `json:"path"`
}

// scanEOL reads the text of t (in z) once: it must be UTF-8 without NUL. It counts the
// "\r\n" pairs, the "\n" and the "\r".
func scanEOL(r io.Reader, z *core.Zone, t core.Target) (crlf, lf, cr int, err error) {
	buf := make([]byte, 64<<10)
	keep, prevCR := 0, false // keep: an unfinished UTF-8 sequence carried to the next chunk
	for {
		n, rerr := r.Read(buf[keep:])
		b, fresh := buf[:keep+n], buf[keep:keep+n]
		end := len(b)
		if rerr == nil {
			end -= unfinishedRune(b)
		}
		if !utf8.Valid(b[:end]) || bytes.IndexByte(fresh, 0) >= 0 {
			return 0, 0, 0, notText(t)
		}
		lf += bytes.Count(fresh, []byte("\n"))
		cr += bytes.Count(fresh, []byte("\r"))
		crlf += bytes.Count(fresh, []byte("\r\n"))
		if prevCR && len(fresh) > 0 && fresh[0] == '\n' {
			crlf++ // a pair split between two reads
		}
		if len(fresh) > 0 {
			prevCR = fresh[len(fresh)-1] == '\r'
		}
		keep = copy(buf, b[end:])
		switch {
		case rerr == io.EOF:
			return crlf, lf, cr, nil
		case rerr != nil:
			return 0, 0, 0, core.WriteError(rerr, z, t.Shown)
		}
	}
}

// unfinishedRune is the length of an incomplete UTF-8 sequence at the end of b (0 if none).
func unfinishedRune(b []byte) int {
	for i := 1; i <= min(utf8.UTFMax-1, len(b)); i++ {
		if utf8.RuneStart(b[len(b)-i]) {
			if utf8.FullRune(b[len(b)-i:]) {
				return 0
			}
			return i
		}
	}
	return 0
}

// writeEOL writes the text read from r with every line break ("\r\n", "\n" or a lone
// "\r") as "\n", or as "\r\n" when dos. It fails with core.ErrChangedMeanwhile unless it writes exactly
// size bytes.
func writeEOL(w io.Writer, r io.Reader, dos bool, size int64) error {
	cw := &countWriter{w: w}
	bw := bufio.NewWriterSize(cw, 64<<10)
	nl := "\n"
	if dos {
		nl = "\r\n"
	}
	buf := make([]byte, 64<<10)
	cr := false // the last byte was a "\r" not yet written
	text := func(p []byte) {
		if len(p) > 0 {
			if cr {
				_, _ = bw.WriteString(nl)
				cr = false
			}
			_, _ = bw.Write(p)
		}
	}
	for {
		n, rerr := r.Read(buf)
		b, start := buf[:n], 0
		for i, c := range b {
			switch c {
			case '\r':
				text(b[start:i])
				if cr {
					_, _ = bw.WriteString(nl) // a lone "\r" before this one
				}
				cr, start = true, i+1
			case '\n':
				text(b[start:i])
				_, _ = bw.WriteString(nl) // "\n", or the end of a "\r\n"
				cr, start = false, i+1
			}
		}
		text(b[start:])
		if rerr == io.EOF {
			break
		}
		if rerr != nil {
			return rerr
		}
		if _, err := bw.Write(nil); err != nil {
			return err // the write ended: stop reading
		}
	}
	if cr {
		_, _ = bw.WriteString(nl)
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	if cw.n != size {
		return core.ErrChangedMeanwhile
	}
	return nil
}
