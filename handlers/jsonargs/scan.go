package jsonargs

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"strings"
	"unicode"
	"unicode/utf16"
	"unicode/utf8"
)

// The request body of a tool is read once, as it arrives, by a small JSON scanner: each
// top-level string of a known argument is decoded straight into its final string (a
// create's content is never held twice: no body buffer, no map of raw values, no copy),
// other values of known arguments are kept as raw JSON for decode's coercions, and values
// of unknown keys are checked and dropped. The scanner accepts exactly what encoding/json
// accepts and decodes strings exactly as it does (invalid UTF-8 and lone surrogates become
// U+FFFD): TestDecodeMatchesEncodingJSON and FuzzDecode compare the two.

// ErrSyntax is a body that is not JSON (the caller answers INVALID_PARAMETER).
var ErrSyntax = errors.New("invalid JSON")

// ReadError is a failure of the body itself (too large, too slow, cut off), not of its JSON.
type ReadError struct{ Err error }

func (e *ReadError) Error() string { return e.Err.Error() }
func (e *ReadError) Unwrap() error { return e.Err }

// maxDepth is encoding/json's nesting limit.
const maxDepth = 10000

// growAfter is the decoded size after which a string is given room for the rest of the
// body at once (when its size is known), instead of growing step by step.
const growAfter = 64 << 10

// Arg is one argument of the body: a decoded string, or any other value as raw JSON.
type Arg struct {
	Raw   []byte // the raw JSON of a value that is not a string
	Str   string // the decoded string, when IsStr
	IsStr bool
}

// scanner reads one JSON document from a body.
type scanner struct {
	r    *bufio.Reader
	pos  int64 // bytes consumed
	size int64 // the body's announced size, or -1
}

// Scan reads a JSON object from r and returns the values of the keys known says are
// arguments. An empty body or null is no argument; anything but one object is ErrSyntax.
// size is the body's length when announced (-1 otherwise): a long string is then
// allocated once.
func Scan(r io.Reader, size int64, known func(string) bool) (map[string]Arg, error) {
	s := &scanner{r: bufio.NewReaderSize(r, 64<<10), size: size}
	args := map[string]Arg{}
	c, err := s.nonSpace()
	switch {
	case err == io.EOF:
		return args, nil
	case err != nil:
		return nil, err
	case c == 'n':
		err = s.literal("null")
	case c == '{':
		err = s.object(args, known)
	case s.restIsSpace():
		return args, nil // only Unicode spaces: an empty body, as bytes.TrimSpace sees it
	default:
		err = ErrSyntax
	}
	if err != nil {
		return nil, err
	}
	if _, err := s.nonSpace(); err != io.EOF {
		if err == nil {
			err = ErrSyntax // data after the object
		}
		return nil, err
	}
	return args, nil
}

// restIsSpace reports whether the rest of the body is Unicode white space only.
func (s *scanner) restIsSpace() bool {
	for {
		r, _, err := s.r.ReadRune()
		if err != nil {
			return err == io.EOF
		}
		if !unicode.IsSpace(r) {
			return false
		}
	}
}

// peek returns at least n buffered bytes (fewer only at the end of the body).
func (s *scanner) peek(n int) ([]byte, error) {
	b, err := s.r.Peek(n)
	if err != nil && err != io.EOF && !errors.Is(err, bufio.ErrBufferFull) {
		return b, &ReadError{err}
	}
	if len(b) == 0 {
		return nil, io.EOF
	}
	return b, nil
}

// buffered returns what is buffered (reading more if nothing is).
func (s *scanner) buffered() ([]byte, error) {
	if _, err := s.peek(1); err != nil {
		return nil, err
	}
	b, _ := s.r.Peek(s.r.Buffered())
	return b, nil
}

func (s *scanner) skip(n int) {
	_, _ = s.r.Discard(n)
	s.pos += int64(n)
}

// nonSpace returns the next byte that is not JSON whitespace, without consuming it.
func (s *scanner) nonSpace() (byte, error) {
	for {
		b, err := s.buffered()
		if err != nil {
			return 0, err
		}
		for i, c := range b {
			if c != ' ' && c != '\t' && c != '\n' && c != '\r' {
				s.skip(i)
				return c, nil
			}
		}
		s.skip(len(b))
	}
}

// expect consumes c, after whitespace.
func (s *scanner) expect(c byte) error {
	got, err := s.nonSpace()
	if err != nil {
		return eofSyntax(err)
	}
	if got != c {
		return ErrSyntax
	}
	s.skip(1)
	return nil
}

// eofSyntax turns the end of the body in the middle of a value into a syntax error.
func eofSyntax(err error) error {
	if err == io.EOF {
		return ErrSyntax
	}
	return err
}

// object reads the top-level object: each known key's value into args (a repeated key
// keeps its last value, as encoding/json does).
func (s *scanner) object(args map[string]Arg, known func(string) bool) error {
	s.skip(1) // {
	c, err := s.nonSpace()
	if err != nil {
		return eofSyntax(err)
	}
	if c == '}' {
		s.skip(1)
		return nil
	}
	for {
		if c != '"' {
			return ErrSyntax
		}
		var key strings.Builder
		if err := s.str(&key, nil); err != nil {
			return err
		}
		if err := s.expect(':'); err != nil {
			return err
		}
		if c, err = s.nonSpace(); err != nil {
			return eofSyntax(err)
		}
		name := key.String()
		switch {
		case !known(name):
			err = s.value(nil, 2)
		case c == '"':
			var v strings.Builder
			if err = s.str(&v, nil); err == nil {
				str := v.String()
				if v.Cap()-v.Len() > max(growAfter, v.Len()/8) {
					str = strings.Clone(str) // given room for the rest of the body, it did not need it
				}
				args[name] = Arg{Str: str, IsStr: true}
			}
		default:
			var raw bytes.Buffer
			if err = s.value(&raw, 2); err == nil {
				args[name] = Arg{Raw: raw.Bytes()}
			}
		}
		if err != nil {
			return err
		}
		if c, err = s.nonSpace(); err != nil {
			return eofSyntax(err)
		}
		s.skip(1)
		switch c {
		case '}':
			return nil
		case ',':
			if c, err = s.nonSpace(); err != nil {
				return eofSyntax(err)
			}
		default:
			return ErrSyntax
		}
	}
}

// value reads any JSON value, copying its bytes to raw (when not nil).
func (s *scanner) value(raw *bytes.Buffer, depth int) error {
	c, err := s.nonSpace()
	if err != nil {
		return eofSyntax(err)
	}
	switch {
	case c == '"':
		return s.str(nil, raw)
	case c == '{' || c == '[':
		return s.compound(c, raw, depth)
	case c == 't':
		return s.copyLiteral("true", raw)
	case c == 'f':
		return s.copyLiteral("false", raw)
	case c == 'n':
		return s.copyLiteral("null", raw)
	case c == '-' || c >= '0' && c <= '9':
		return s.number(raw)
	}
	return ErrSyntax
}

// compound reads an object or an array (open is its first byte).
func (s *scanner) compound(open byte, raw *bytes.Buffer, depth int) error {
	if depth > maxDepth {
		return ErrSyntax
	}
	closing := byte(']')
	if open == '{' {
		closing = '}'
	}
	s.skip(1)
	write(raw, open)
	c, err := s.nonSpace()
	if err != nil {
		return eofSyntax(err)
	}
	if c == closing {
		s.skip(1)
		write(raw, c)
		return nil
	}
	for {
		if open == '{' {
			if c != '"' {
				return ErrSyntax
			}
			if err := s.str(nil, raw); err != nil {
				return err
			}
			if err := s.expect(':'); err != nil {
				return err
			}
			write(raw, ':')
		}
		if err := s.value(raw, depth+1); err != nil {
			return err
		}
		if c, err = s.nonSpace(); err != nil {
			return eofSyntax(err)
		}
		s.skip(1)
		write(raw, c)
		switch c {
		case closing:
			return nil
		case ',':
			if c, err = s.nonSpace(); err != nil {
				return eofSyntax(err)
			}
		default:
			return ErrSyntax
		}
	}
}

func write(raw *bytes.Buffer, c byte) {
	if raw != nil {
		raw.WriteByte(c)
	}
}

// literal consumes word (true, false or null) exactly.
func (s *scanner) literal(word string) error { return s.copyLiteral(word, nil) }

func (s *scanner) copyLiteral(word string, raw *bytes.Buffer) error {
	b, err := s.peek(len(word))
	if err != nil {
		return eofSyntax(err)
	}
	if string(b) != word { // also when the body ends before the word does
		return ErrSyntax
	}
	s.skip(len(word))
	if raw != nil {
		raw.WriteString(word)
	}
	return nil
}

// number reads a JSON number: the bytes a number can hold, then its grammar checked.
func (s *scanner) number(raw *bytes.Buffer) error {
	var tok []byte
	for {
		b, err := s.buffered()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		i := 0
		for i < len(b) && (b[i] >= '0' && b[i] <= '9' || b[i] == '-' || b[i] == '+' || b[i] == '.' || b[i] == 'e' || b[i] == 'E') {
			i++
		}
		tok = append(tok, b[:i]...)
		s.skip(i)
		if i < len(b) {
			break
		}
	}
	if !isNumber(tok) {
		return ErrSyntax
	}
	if raw != nil {
		raw.Write(tok)
	}
	return nil
}

// isNumber checks JSON's number grammar: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?
func isNumber(b []byte) bool {
	digits := func() int {
		n := 0
		for n < len(b) && b[n] >= '0' && b[n] <= '9' {
			n++
		}
		b = b[n:]
		return n
	}
	if len(b) > 0 && b[0] == '-' {
		b = b[1:]
	}
	switch {
	case len(b) > 0 && b[0] == '0':
		b = b[1:]
	case digits() == 0:
		return false
	}
	if len(b) > 0 && b[0] == '.' {
		b = b[1:]
		if digits() == 0 {
			return false
		}
	}
	if len(b) > 0 && (b[0] == 'e' || b[0] == 'E') {
		b = b[1:]
		if len(b) > 0 && (b[0] == '+' || b[0] == '-') {
			b = b[1:]
		}
		if digits() == 0 {
			return false
		}
	}
	return len(b) == 0
}

// str reads a string (the opening quote is next): decoded into dec and/or copied as is
// into raw (either may be nil). Decoding follows encoding/json: the escapes \" \\ \/ \b
// \f \n \r \t \uXXXX, a surrogate pair as one character, a lone surrogate and every byte
// of invalid UTF-8 as U+FFFD; a control character or any other escape is ErrSyntax.
func (s *scanner) str(dec *strings.Builder, raw *bytes.Buffer) error {
	s.skip(1)
	if raw != nil {
		raw.WriteByte('"')
	}
	grown := false
	for {
		b, err := s.buffered()
		if err != nil {
			return eofSyntax(err)
		}
		// The plain run: ASCII and valid UTF-8, copied as is.
		i := 0
		for i < len(b) {
			c := b[i]
			if c < utf8.RuneSelf {
				if c < ' ' || c == '"' || c == '\\' {
					break
				}
				i++
				continue
			}
			if !utf8.FullRune(b[i:]) {
				break
			}
			r, n := utf8.DecodeRune(b[i:])
			if r == utf8.RuneError && n == 1 {
				break
			}
			i += n
		}
		if dec != nil {
			dec.Write(b[:i])
			if !grown && dec.Len() > growAfter && s.size > 0 {
				// The rest of this string is at most the rest of the body (escapes only
				// shrink; invalid UTF-8, which grows, is left to append).
				dec.Grow(int(max(0, s.size-s.pos)))
				grown = true
			}
		}
		if raw != nil {
			raw.Write(b[:i])
		}
		s.skip(i)
		if i < len(b) || len(b) == 0 {
			done, err := s.special(dec, raw)
			if done || err != nil {
				return err
			}
		}
	}
}

// special handles the byte that ended a plain run: the closing quote (done), an escape, a
// control character, or a multi-byte sequence that is invalid or not yet all buffered.
func (s *scanner) special(dec *strings.Builder, raw *bytes.Buffer) (done bool, err error) {
	b, err := s.peek(utf8.UTFMax)
	if err != nil {
		return false, eofSyntax(err)
	}
	c := b[0]
	switch {
	case c == '"':
		s.skip(1)
		if raw != nil {
			raw.WriteByte('"')
		}
		return true, nil
	case c < ' ':
		return false, ErrSyntax
	case c >= utf8.RuneSelf:
		r, n := utf8.DecodeRune(b) // the sequence is whole now, or cut by the end of the body
		if dec != nil {
			dec.WriteRune(r) // U+FFFD for an invalid byte
		}
		if raw != nil {
			raw.Write(b[:n])
		}
		s.skip(n)
		return false, nil
	}
	// An escape.
	if b, err = s.peek(12); err != nil {
		return false, eofSyntax(err)
	}
	if len(b) < 2 {
		return false, ErrSyntax
	}
	var out rune
	n := 2
	switch b[1] {
	case '"', '\\', '/':
		out = rune(b[1])
	case 'b':
		out = '\b'
	case 'f':
		out = '\f'
	case 'n':
		out = '\n'
	case 'r':
		out = '\r'
	case 't':
		out = '\t'
	case 'u':
		out = hex4(b)
		if out < 0 {
			return false, ErrSyntax
		}
		n = 6
		if utf16.IsSurrogate(out) {
			out = utf16.DecodeRune(out, hex4(b[6:])) // U+FFFD unless a valid pair follows
			if out != utf8.RuneError {
				n = 12
			}
		}
	default:
		return false, ErrSyntax
	}
	if dec != nil {
		dec.WriteRune(out)
	}
	if raw != nil {
		raw.Write(b[:n])
	}
	s.skip(n)
	return false, nil
}

// hex4 is the value of a \uXXXX escape at the start of b, or -1.
func hex4(b []byte) rune {
	if len(b) < 6 || b[0] != '\\' || b[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range b[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c -= 'a' - 10
		case 'A' <= c && c <= 'F':
			c -= 'A' - 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}
