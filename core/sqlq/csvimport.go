package sqlq

import (
	"bufio"
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strings"
	"unicode/utf8"
)

// ImportOptions are the parameters of a CSV import (reference §5.26).
type ImportOptions struct {
	Table    string
	IfExists string // fail, replace or append
	// Delimiter is one character ("\t" written as two characters is a tab); "" detects
	// comma, semicolon, tab or pipe.
	Delimiter string
	// Encoding names the file's encoding; "" detects it.
	Encoding    string
	HasHeader   bool
	SkipRows    int
	DateColumns []string
	DateFormat  string
	// Decimal "," reads "1.234,5" as 1234.5.
	Decimal string
	// MaxRecord bounds one record in bytes (a 1 GB line is refused, not loaded).
	MaxRecord int64
}

// ImportReport is what an import did.
type ImportReport struct {
	Rows      int64
	Columns   []string
	Types     []string // per column: INTEGER, REAL or TEXT (the table's, when appending)
	Delimiter string
	Encoding  string
	// Generated is true when the columns were named col_1... (no header).
	Generated bool
	// SkippedLines are the first line numbers of the records left out (malformed quoting,
	// more fields than the header), SkippedCount all of them.
	SkippedLines []int
	SkippedCount int
	// DateFailures counts date cells kept as they were because no layout matched.
	DateFailures int
	// Appended is true when rows went into an existing table.
	Appended bool
}

// CSVError is a CSV the import refuses.
type CSVError struct {
	Kind    CSVErrorKind
	Line    int // 0 when not about one line
	Columns int // for TooWide
	Msg     string
}

// CSVErrorKind tells CSV refusals apart.
type CSVErrorKind int

// The kinds of CSVError.
const (
	CSVEmpty CSVErrorKind = iota
	CSVParse
	CSVTooWide
	CSVBadOption // an option that cannot work (unknown encoding, bad date_format, ...)
	CSVMismatch  // rows do not fit the existing table
)

func (e *CSVError) Error() string { return e.Msg }

// ErrTableExists is returned for if_exists=fail on an existing table.
var ErrTableExists = errors.New("table already exists")

// maxSkipped is how many malformed records an import leaves out before it gives up.
const maxSkipped = 1000

var tableName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// ValidTable reports whether name can be a table name (letters, digits, underscores, not a
// letter-less or sqlite_ name).
func ValidTable(name string) bool {
	return tableName.MatchString(name) && !strings.HasPrefix(strings.ToLower(name), "sqlite_")
}

// source is one pass over the CSV: decoded, lines skipped, cut into records.
type source struct {
	rd    *csv.Reader
	guard *guard
	skip  int // physical lines skipped before the first record
	enc   decoder
	delim rune
}

// guard counts the decoded bytes read and fails when one record grows past max.
type guard struct {
	r         io.Reader
	n, mark   int64
	max       int64
	overflown bool
}

var errRecordTooLong = errors.New("record too long")

func (g *guard) Read(p []byte) (int, error) {
	if g.n-g.mark > g.max {
		g.overflown = true
		return 0, errRecordTooLong
	}
	n, err := g.r.Read(p)
	g.n += int64(n)
	return n, err
}

// sampleSize is how much of the file the detections look at, as the original.
const sampleSize = 8192

// newSource prepares a pass over r with o's options; enc and delim are "" the first time
// (detected) and then those of the first pass.
func newSource(r io.Reader, o ImportOptions, enc *decoder, delim rune) (*source, error) {
	raw := bufio.NewReaderSize(r, 64<<10)
	s := &source{}
	if enc != nil {
		s.enc = *enc
	} else {
		sample, _ := raw.Peek(sampleSize)
		d, err := pickEncoding(o.Encoding, sample)
		if err != nil {
			return nil, &CSVError{Kind: CSVBadOption, Msg: err.Error()}
		}
		s.enc = d
	}
	s.guard = &guard{r: s.enc.reader(raw), max: o.MaxRecord}
	text := bufio.NewReaderSize(s.guard, 64<<10)
	for s.skip < o.SkipRows {
		if _, err := text.ReadSlice('\n'); err != nil && err != bufio.ErrBufferFull {
			break
		} else if err == nil {
			s.skip++
			s.guard.mark = s.guard.n
		}
	}
	s.delim = delim
	if delim == 0 {
		d, err := pickDelimiter(o.Delimiter, text)
		if err != nil {
			return nil, err
		}
		s.delim = d
	}
	s.rd = csv.NewReader(text)
	s.rd.Comma = s.delim
	s.rd.FieldsPerRecord = -1
	s.rd.ReuseRecord = true
	return s, nil
}

// pickDelimiter resolves the delimiter parameter or sniffs it from the next lines: the
// candidate (comma, semicolon, tab, pipe) found, outside quotes, the same number of times
// on most lines, the most frequent first; comma when none is.
func pickDelimiter(given string, text *bufio.Reader) (rune, error) {
	switch given {
	case "":
	case `\t`, "tab", "\t":
		return '\t', nil
	default:
		r, size := utf8.DecodeRuneInString(given)
		if size != len(given) || r == '"' || r == '\r' || r == '\n' || r == utf8.RuneError {
			return 0, &CSVError{Kind: CSVBadOption, Msg: fmt.Sprintf("delimiter must be one character, got %q", given)}
		}
		return r, nil
	}
	sample, _ := text.Peek(sampleSize)
	lines := strings.Split(string(sample), "\n")
	if len(lines) > 1 {
		lines = lines[:len(lines)-1] // the last one may be cut
	}
	lines = lines[:min(len(lines), 20)]
	best, bestScore := ',', 0
	for _, c := range []rune{',', ';', '\t', '|'} {
		counts := map[int]int{}
		for _, l := range lines {
			if n := countOutsideQuotes(l, c); n > 0 {
				counts[n]++
			}
		}
		for n, m := range counts {
			if score := m*1000 + n; m*2 >= len(lines) && score > bestScore {
				best, bestScore = c, score
			}
		}
	}
	return best, nil
}

func countOutsideQuotes(line string, c rune) int {
	n, quoted := 0, false
	for _, r := range line {
		switch {
		case r == '"':
			quoted = !quoted
		case r == c && !quoted:
			n++
		}
	}
	return n
}

// next returns the next well-formed record and its first line, skipping (and reporting)
// malformed ones; io.EOF at the end.
func (s *source) next(width int, skipped func(line int) error) ([]string, int, error) {
	for {
		rec, err := s.rd.Read()
		line := 0
		if err == nil {
			l, _ := s.rd.FieldPos(0)
			line = l + s.skip
		}
		switch {
		case s.guard.overflown:
			return nil, 0, &CSVError{Kind: CSVParse, Msg: fmt.Sprintf("a record is longer than %d MB (from line %d)", s.guard.max>>20, lineOf(err)+s.skip)}
		case err == io.EOF:
			return nil, 0, err
		case err != nil:
			var pe *csv.ParseError
			if !errors.As(err, &pe) {
				return nil, 0, err
			}
			s.guard.mark = s.guard.n
			if err := skipped(pe.StartLine + s.skip); err != nil {
				return nil, 0, err
			}
			continue
		}
		s.guard.mark = s.guard.n
		if width > 0 && len(rec) > width {
			if err := skipped(line); err != nil {
				return nil, 0, err
			}
			continue
		}
		if s.enc.enc == nil {
			for _, f := range rec {
				if !utf8.ValidString(f) {
					return nil, 0, &CSVError{Kind: CSVParse, Line: line,
						Msg: fmt.Sprintf("invalid UTF-8 at line %d (the file is not %s)", line, s.enc.name)}
				}
			}
		}
		return rec, line, nil
	}
}

func lineOf(err error) int {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return pe.StartLine
	}
	return 0
}
