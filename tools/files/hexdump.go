package files

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/fileshed/fileshed/core"
)

// HexdumpInput is the input of shed_hexdump.
type HexdumpInput struct {
	core.ZoneArgs
	Path   string `json:"path" required:"true"`
	Offset int64  `json:"offset,omitempty" default:"0"`
	Length int64  `json:"length,omitempty" default:"256" doc:"1-4096"`
}

// hexdumpMax is the original's largest dump (reference §5.25).
const hexdumpMax = 4096

// Hexdump answers shed_hexdump (reference §5.25): an xxd-like dump of at most 4096 bytes,
// read at the offset (never the whole file). Offsets below 0 become 0 and lengths are
// clamped to 1-4096, as in the original; a directory is INVALID_FORMAT.
func (s *Tools) Hexdump(ctx context.Context, c core.Caller, in HexdumpInput) (core.Result, error) {
	o, err := s.OpenRead(ctx, c, in.ZoneArgs, in.Path, func(z *core.Zone, p string) error {
		return core.Errf(core.InvalidFormat, "Cannot hexdump directory").With("path", p).With("zone", z.Label).
			WithHint("shed_hexdump shows a file's bytes: list the folder with shed_tree and pick a file")
	})
	if err != nil {
		return core.Result{}, err
	}
	defer o.Close()
	rel, f, info := o.Rel, o.F, o.Info
	offset, length := max(in.Offset, 0), min(max(in.Length, 1), hexdumpMax)
	size := info.Size()
	if offset >= size {
		return core.Result{Data: hexBeyond{Hexdump: "(offset beyond file)", Offset: offset, Path: rel, Size: size},
			Message: "Offset is beyond end of file"}, nil
	}
	buf := make([]byte, min(length, size-offset))
	n, err := f.ReadAt(buf, offset)
	if err != nil && err != io.EOF {
		return core.Result{}, core.ReadFail(err, o.Z, rel)
	}
	return core.Result{Data: hexDump{FileSize: size, Hexdump: hexdump(buf[:n], offset), Length: n, Offset: offset, Path: rel},
		Message: fmt.Sprintf("Hexdump of %s (%d bytes from offset %d)", rel, n, offset)}, nil
}

// hexBeyond is the answer of shed_hexdump for an offset past the end of the file (fields
// in the order of the JSON keys, alphabetical).
type hexBeyond struct {
	Hexdump string `json:"hexdump"`
	Offset  int64  `json:"offset"`
	Path    string `json:"path"`
	Size    int64  `json:"size"`
}

// hexDump is the answer of shed_hexdump (fields in the order of the JSON keys, alphabetical).
type hexDump struct {
	FileSize int64  `json:"file_size"`
	Hexdump  string `json:"hexdump"`
	Length   int    `json:"length"`
	Offset   int64  `json:"offset"`
	Path     string `json:"path"`
}

// hexdump renders b as the original does: per 16 bytes "{offset:08x}: " then eight groups
// of two bytes ("6f72", a lone last byte "6f  ", a missing group four spaces) separated by
// one space, two spaces, and the bytes 32-126 as themselves, others as '.'.
func hexdump(b []byte, offset int64) string {
	var sb strings.Builder
	for i := 0; i < len(b); i += 16 {
		row := b[i:min(i+16, len(b))]
		if i > 0 {
			sb.WriteByte('\n')
		}
		fmt.Fprintf(&sb, "%08x: ", offset+int64(i))
		for g := 0; g < 8; g++ {
			if g > 0 {
				sb.WriteByte(' ')
			}
			switch {
			case 2*g+1 < len(row):
				fmt.Fprintf(&sb, "%02x%02x", row[2*g], row[2*g+1])
			case 2*g < len(row):
				fmt.Fprintf(&sb, "%02x  ", row[2*g])
			default:
				sb.WriteString("    ")
			}
		}
		sb.WriteString("  ")
		for _, c := range row {
			if c >= 32 && c <= 126 {
				sb.WriteByte(c)
			} else {
				sb.WriteByte('.')
			}
		}
	}
	return sb.String()
}
