package sqlq

import (
	"bufio"
	"strings"
	"testing"
)

func TestNumbers(t *testing.T) {
	dot, comma := numbers{}, numbers{comma: true}
	cases := []struct {
		n    numbers
		in   string
		want string
		ok   bool
	}{
		{dot, "42", "42", true}, {dot, "-1.5", "-1.5", true}, {dot, "1e3", "1e3", true}, {dot, " 7 ", "7", true},
		{dot, "007", "", false}, {dot, "0", "0", true}, {dot, "0.5", "0.5", true}, {dot, "inf", "", false},
		{dot, "0x10", "", false}, {dot, "1_000", "", false}, {dot, "1,5", "", false}, {dot, ".", "", false},
		{comma, "1.234,5", "1234.5", true}, {comma, "1 234,5", "1234.5", true}, {comma, "-3,25", "-3.25", true},
		{comma, "12", "12", true}, {comma, "1.5", "", false}, {comma, "1234.567,8", "", false},
	}
	for _, c := range cases {
		got, ok := c.n.number(c.in)
		if ok != c.ok || got != c.want {
			t.Errorf("number(%q, comma=%v) = %q, %v; want %q, %v", c.in, c.n.comma, got, ok, c.want, c.ok)
		}
	}
	if got := dot.classify(typeInteger, "3"); got != typeInteger {
		t.Errorf("3: %v", got)
	}
	if got := dot.classify(typeInteger, "3.5"); got != typeReal {
		t.Errorf("3.5: %v", got)
	}
	if got := dot.classify(typeInteger, "99999999999999999999"); got != typeReal {
		t.Errorf("huge: %v", got)
	}
	if got := dot.classify(typeReal, "x"); got != typeText {
		t.Errorf("x: %v", got)
	}
}

func TestDates(t *testing.T) {
	cases := []struct{ format, in, want string }{
		{"dayfirst", "31/12/2024", "2024-12-31"}, {"dayfirst", "1.2.2024", "2024-02-01"}, {"monthfirst", "12/31/2024", "2024-12-31"},
		{"auto", "2024-03-01T10:30:00", "2024-03-01 10:30:00"}, {"auto", "Mar 5, 2024", "2024-03-05"},
		{"%d/%m/%Y %H:%M", "05/03/2024 14:30", "2024-03-05 14:30:00"}, {"02.01.2006", "05.03.2024", "2024-03-05"},
	}
	for _, c := range cases {
		d, err := newDates(c.format)
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := d.parse(c.in); !ok || got != c.want {
			t.Errorf("%s %q = %q, %v; want %q", c.format, c.in, got, ok, c.want)
		}
	}
	if _, err := newDates("%Q"); err == nil {
		t.Error("%Q: want an error")
	}
}

func TestSniffDelimiter(t *testing.T) {
	cases := map[string]rune{
		"a,b,c\n1,2,3\n":                 ',',
		"a;b;c\n1,5;2;3\n4;5,5;6\n":      ';',
		"a\tb\n1\t2\n":                   '\t',
		"a|b|c\n1|2|3\n":                 '|',
		"\"x;y\",b\n\"1;2\",3\n":         ',',
		"single column\nvalue\n":         ',',
		"name;note\nx;\"a,b,c,d,e,f\"\n": ';',
	}
	for in, want := range cases {
		got, err := pickDelimiter("", bufio.NewReader(strings.NewReader(in)))
		if err != nil || got != want {
			t.Errorf("sniff %q = %q, %v; want %q", in, got, err, want)
		}
	}
}

func TestPickEncoding(t *testing.T) {
	cases := map[string]string{"plain ascii": "utf-8", "caf\xc3\xa9": "utf-8", "\xef\xbb\xbfa,b": "utf-8-sig",
		"caf\xe9": "latin-1", "\x93quoted\x94 \x80": "cp1252", "\xff\xfea\x00": "utf-16"}
	cases[strings.Repeat("a", sampleSize-1)+"\xc3"] = "utf-8"
	for in, want := range cases {
		d, err := pickEncoding("", []byte(in))
		if err != nil || d.name != want {
			t.Errorf("detect %q = %q, %v; want %q", in, d.name, err, want)
		}
	}
	if _, err := pickEncoding("klingon", nil); err == nil {
		t.Error("unknown encoding accepted")
	}
	if d, err := pickEncoding("ISO-8859-1", nil); err != nil || d.enc == nil {
		t.Errorf("iso-8859-1: %v", err)
	}
}

func TestHeaderNames(t *testing.T) {
	got := headerNames([]string{" Prix (€) ", "", "2024", "a", "A", "été"})
	want := []string{"Prix", "col_2", "_2024", "a", "A_2", "été"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("headerNames = %v, want %v", got, want)
	}
}
