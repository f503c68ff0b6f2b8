package archive

import "fmt"

// LimitError is an archive over one of the Limits: a decompression bomb or a hostile shape.
// Limit names the limit ("entries", "total_bytes", "ratio", "overall_ratio", "depth",
// "name_length", "overlap", "size_mismatch"); Value and Max are in the limit's unit.
type LimitError struct {
	Limit string
	Entry string // the entry that crossed the limit ("" for the whole archive)
	Value int64
	Max   int64
}

func (e *LimitError) Error() string {
	switch e.Limit {
	case "entries":
		return fmt.Sprintf("the archive has more than the %d entries allowed", e.Max)
	case "total_bytes":
		return fmt.Sprintf("the archive expands to more than %d bytes (limit %d)", e.Value, e.Max)
	case "ratio":
		return fmt.Sprintf("entry %q expands more than %d times its compressed size (limit %d)", short(e.Entry), e.Value, e.Max)
	case "overall_ratio":
		return fmt.Sprintf("the archive expands more than %d times its size (limit %d)", e.Value, e.Max)
	case "depth":
		return fmt.Sprintf("entry %q is %d folders deep (limit %d)", short(e.Entry), e.Value, e.Max)
	case "name_length":
		return fmt.Sprintf("entry name %q is %d bytes long (limit %d)", short(e.Entry), e.Value, e.Max)
	case "overlap":
		return fmt.Sprintf("entry %q shares its compressed data with another entry (overlapping-entry bomb)", short(e.Entry))
	case "size_mismatch":
		return fmt.Sprintf("entry %q has more data than the %d bytes its header declares", short(e.Entry), e.Max)
	}
	return fmt.Sprintf("archive limit %s: %d over %d", e.Limit, e.Value, e.Max)
}

// NameError is an entry whose name is not a safe relative path. Escape is true when the
// name tries to leave the destination (absolute, "..", drive letter, backslash).
type NameError struct {
	Entry  string
	Reason string
	Escape bool
}

func (e *NameError) Error() string { return fmt.Sprintf("entry %q: %s", short(e.Entry), e.Reason) }

// FormatError is a file that is not a usable zip archive: another format (Kind names it:
// "gzip", "tar", ...), a truncated or corrupt archive, or an entry this package cannot
// read (encrypted, unsupported compression method).
type FormatError struct {
	Kind   string // what the file is, when it is recognisably something else ("" otherwise)
	Entry  string // the entry at fault, if any
	Reason string
}

func (e *FormatError) Error() string {
	if e.Entry != "" {
		return fmt.Sprintf("entry %q: %s", short(e.Entry), e.Reason)
	}
	return e.Reason
}

// short keeps a hostile entry name readable in a message: at most about 120 bytes.
func short(s string) string {
	if len(s) <= 120 {
		return s
	}
	return s[:100] + "..." + s[len(s)-12:]
}
