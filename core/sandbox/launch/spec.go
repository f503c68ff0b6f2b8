package launch

import (
	"errors"
	"strconv"
)

// Spec is what Run sends to the launcher on SpecFD.
type Spec struct {
	Argv []string // Argv[0] is the absolute path of the command
	// Exec is every file the command may execute: Argv[0] and its helpers with their
	// interpreters (ld.so, "#!" programs), already expanded and existing.
	Exec             []string
	Dir              string // working directory, the only writable tree unless ReadOnly
	ReadOnly         bool
	ExtraRW, ExtraRO []string
	Memory, CPU      int64 // RLIMIT_AS bytes, RLIMIT_CPU seconds; 0 = none
	FileSize         int64 // RLIMIT_FSIZE bytes; 0 = none
	Network          bool  // allow TCP connect (and UDP at ABI >= 10)
	Landlock         bool  // apply Landlock at ABI
	ABI              int
}

// The wire format is a version tag then every field in a fixed order. A string is
// its decimal length, ':' and its bytes; a number (or bool as 0/1) is a string of
// its decimal value; a list is its count as a number then its strings. It is
// written by this same binary's source (the server and the launcher are built
// together), so any deviation is an error, never a guess.
const wireVersion = "fileshed-launch-1"

// maxSpec bounds what the launcher reads and how many list items it accepts.
const maxSpec = 1 << 20

// Encode returns the wire form of s.
func (s *Spec) Encode() []byte {
	var b []byte
	str := func(v string) {
		b = strconv.AppendInt(b, int64(len(v)), 10)
		b = append(b, ':')
		b = append(b, v...)
	}
	num := func(v int64) { str(strconv.FormatInt(v, 10)) }
	list := func(vs []string) {
		num(int64(len(vs)))
		for _, v := range vs {
			str(v)
		}
	}
	flag := func(v bool) {
		if v {
			num(1)
		} else {
			num(0)
		}
	}
	str(wireVersion)
	list(s.Argv)
	list(s.Exec)
	str(s.Dir)
	flag(s.ReadOnly)
	list(s.ExtraRW)
	list(s.ExtraRO)
	num(s.Memory)
	num(s.CPU)
	num(s.FileSize)
	flag(s.Network)
	flag(s.Landlock)
	num(int64(s.ABI))
	return b
}

var errBadSpec = errors.New("bad launch spec")

// Decode parses the wire form written by Encode. It refuses anything else:
// another version, a truncated or oversized input, bad numbers, trailing bytes.
func Decode(b []byte) (Spec, error) {
	if len(b) > maxSpec {
		return Spec{}, errBadSpec
	}
	d := decoder{b: b}
	var s Spec
	if d.str() != wireVersion {
		return Spec{}, errBadSpec
	}
	s.Argv = d.list()
	s.Exec = d.list()
	s.Dir = d.str()
	s.ReadOnly = d.flag()
	s.ExtraRW = d.list()
	s.ExtraRO = d.list()
	s.Memory = d.num()
	s.CPU = d.num()
	s.FileSize = d.num()
	s.Network = d.flag()
	s.Landlock = d.flag()
	s.ABI = int(d.num())
	if d.bad || len(d.b) != 0 || len(s.Argv) == 0 {
		return Spec{}, errBadSpec
	}
	return s, nil
}

// decoder consumes b; after the first error bad is set and every read is empty.
type decoder struct {
	b   []byte
	bad bool
}

func (d *decoder) str() string {
	if d.bad {
		return ""
	}
	i := 0
	for i < len(d.b) && i < 8 && d.b[i] >= '0' && d.b[i] <= '9' {
		i++
	}
	if i == 0 || i >= len(d.b) || d.b[i] != ':' {
		d.bad = true
		return ""
	}
	n, err := strconv.Atoi(string(d.b[:i]))
	if err != nil || n > len(d.b)-i-1 {
		d.bad = true
		return ""
	}
	v := string(d.b[i+1 : i+1+n])
	d.b = d.b[i+1+n:]
	return v
}

func (d *decoder) num() int64 {
	s := d.str()
	if d.bad {
		return 0
	}
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		d.bad = true
		return 0
	}
	return v
}

func (d *decoder) flag() bool {
	v := d.num()
	if v > 1 {
		d.bad = true
	}
	return v == 1
}

func (d *decoder) list() []string {
	n := d.num()
	// Every item takes at least two bytes ("0:"), so a count beyond that is a lie.
	if d.bad || n < 0 || n > int64(len(d.b)/2) {
		d.bad = true
		return nil
	}
	var out []string
	for range n {
		out = append(out, d.str())
	}
	return out
}
