package files

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/fileshed/fileshed/core"
)

// ConvertEOLInput is the input of shed_convert_eol.
type ConvertEOLInput struct {
	core.ZoneArgs
	Path string `json:"path" required:"true"`
	To   string `json:"to,omitempty" default:"unix" enum:"unix,dos,lf,crlf"`
}

// eolFormats maps the accepted values of `to` to the two targets.
var eolFormats = map[string]string{"unix": "unix", "lf": "unix", "dos": "dos", "crlf": "dos"}

// ConvertEOL rewrites a text file's line endings to LF or CRLF (reference §5.24),
// atomically, with the growth reserved against the quota (the original did neither).
// Files with NUL bytes are refused: converting a binary blindly corrupts it.
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
	tx, t, err := s.BeginWrite(ctx, c, z, rel, in.Path, core.Edit{Tool: "Convert EOL", Message: fmt.Sprintf("Convert EOL to %s: %s", target, rel)})
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
	text, err := s.readText(ctx, z, t)
	if err != nil {
		return core.Result{}, err
	}
	b := []byte(text)
	crlf := bytes.Count(b, []byte("\r\n"))
	lfOnly := bytes.Count(b, []byte("\n")) - crlf
	crOnly := bytes.Count(b, []byte("\r")) - crlf
	original := "mixed"
	switch {
	case crlf > 0 && lfOnly == 0 && crOnly == 0:
		original = "dos"
	case lfOnly > 0 && crlf == 0 && crOnly == 0:
		original = "unix"
	case crOnly > 0 && crlf == 0 && lfOnly == 0:
		original = "mac (old)"
	}
	out := strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	converted := crlf + crOnly
	if target == "dos" {
		out = strings.ReplaceAll(out, "\n", "\r\n")
		converted = lfOnly + crOnly
	}
	if out == text {
		return core.Result{Data: map[string]any{"path": rel, "format": original, "changed": false},
			Message: fmt.Sprintf("File already in %s format", target)}, nil
	}
	hash, err := tx.WriteFile(core.Write{Size: int64(len(out)), Body: strings.NewReader(out)})
	if err != nil {
		return core.Result{}, err
	}
	data := map[string]any{"path": rel, "original_format": original, "new_format": target, "changed": true,
		"lines_converted": converted}
	addWriteFields(data, z, hash)
	return core.Result{Data: data, Message: fmt.Sprintf("Converted %s from %s to %s", rel, original, target)}, nil
}
