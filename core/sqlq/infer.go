package sqlq

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// naValues are read as NULL (the original's list and pandas' usual ones).
var naValues = map[string]bool{"": true, "NA": true, "N/A": true, "n/a": true, "NULL": true, "null": true, "None": true,
	"none": true, "#N/A": true, "#NA": true, "NaN": true, "nan": true, "<NA>": true}

// colType is the inferred type of a column: it starts as INTEGER and widens as values
// arrive (INTEGER → REAL → TEXT). Date columns are TEXT.
type colType int

const (
	typeInteger colType = iota
	typeReal
	typeText
)

func (t colType) String() string {
	return [...]string{"INTEGER", "REAL", "TEXT"}[t]
}

// numbers parse numeric cells with the decimal separator of the import.
type numbers struct {
	comma bool // decimal=",": "." groups thousands
}

// number normalises s to Go's number syntax, or says it is not a number. Integers with a
// leading zero ("007", zip codes) are not numbers: their zeros matter.
func (n numbers) number(s string) (string, bool) {
	if len(s) > 0 && (s[0] == ' ' || s[len(s)-1] == ' ' || s[0] == '\t') {
		s = strings.TrimSpace(s)
	}
	if n.comma {
		s = strings.ReplaceAll(s, " ", "")
		if !grouped(s, '.', ',') {
			return "", false
		}
		s = strings.ReplaceAll(s, ".", "")
		s = strings.Replace(s, ",", ".", 1)
	}
	if !plainNumber(s) {
		return "", false
	}
	return s, true
}

// grouped checks [+-]digits[,decimals] where the digits may be grouped by three with sep.
func grouped(s string, sep, dec byte) bool {
	s = strings.TrimLeft(s, "+-")
	intPart, frac, hasFrac := strings.Cut(s, string(dec))
	if hasFrac && (frac == "" || strings.Trim(frac, "0123456789") != "") {
		return false
	}
	groups := strings.Split(intPart, string(sep))
	for i, g := range groups {
		if g == "" || strings.Trim(g, "0123456789") != "" || (i > 0 && len(g) != 3) || (len(groups) > 1 && i == 0 && len(g) > 3) {
			return false
		}
	}
	return true
}

// plainNumber checks [+-]digits[.digits][e[+-]digits] (no hex, no inf, no underscores;
// at least one digit before the exponent), and refuses integers with a leading zero.
func plainNumber(s string) bool {
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	start, digits, dot, exp := i, 0, false, false
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot && !exp:
			dot = true
		case (c == 'e' || c == 'E') && !exp && digits > 0:
			exp = true
			if i+1 < len(s) && (s[i+1] == '+' || s[i+1] == '-') {
				i++
			}
			if i+1 >= len(s) {
				return false
			}
		default:
			return false
		}
	}
	if digits == 0 {
		return false
	}
	return dot || exp || len(s)-start == 1 || s[start] != '0'
}

// classify widens t with one non-NA value.
func (n numbers) classify(t colType, s string) colType {
	if t == typeText {
		return t
	}
	v, ok := n.number(s)
	if !ok {
		return typeText
	}
	if t == typeInteger {
		if _, err := strconv.ParseInt(v, 10, 64); err == nil {
			return typeInteger
		}
	}
	if _, err := strconv.ParseFloat(v, 64); err == nil {
		return typeReal
	}
	return typeText
}

// value converts a non-NA cell of a column of type INTEGER or REAL; false when it does
// not fit the type.
func (n numbers) value(t colType, s string) (any, bool) {
	v, ok := n.number(s)
	if !ok {
		return nil, false
	}
	if t == typeInteger {
		i, err := strconv.ParseInt(v, 10, 64)
		return i, err == nil
	}
	f, err := strconv.ParseFloat(v, 64)
	return f, err == nil
}

// dates parses the cells of date columns into ISO 8601 text ("2024-03-01", or
// "2024-03-01 14:30:00" with a time).
type dates struct {
	layouts []string
}

var (
	isoLayouts = []string{"2006-01-02", "2006-01-02T15:04:05Z07:00", "2006-01-02T15:04:05", "2006-01-02 15:04:05",
		"2006-01-02T15:04", "2006-01-02 15:04", "2006/01/02", "2 Jan 2006", "02 Jan 2006", "Jan 2, 2006", "January 2, 2006", "2 January 2006"}
	dayFirst = []string{"02/01/2006", "2/1/2006", "02-01-2006", "2-1-2006", "02.01.2006", "2.1.2006", "02/01/06", "02-01-06",
		"02/01/2006 15:04", "02/01/2006 15:04:05", "02.01.2006 15:04"}
	monthFirst = []string{"01/02/2006", "1/2/2006", "01-02-2006", "1-2-2006", "01/02/06", "01-02-06", "01/02/2006 15:04",
		"01/02/2006 15:04:05", "1/2/2006 3:04 PM"}
)

// newDates resolves date_format: dayfirst, monthfirst, auto (ISO forms, then month
// first as pandas does), or one layout (strftime "%d/%m/%Y" or Go "02/01/2006").
func newDates(format string) (dates, error) {
	switch strings.ToLower(strings.TrimSpace(format)) {
	case "", "auto":
		return dates{layouts: append(append([]string{}, isoLayouts...), monthFirst...)}, nil
	case "dayfirst":
		return dates{layouts: append(append([]string{}, isoLayouts...), dayFirst...)}, nil
	case "monthfirst":
		return dates{layouts: append(append([]string{}, isoLayouts...), monthFirst...)}, nil
	}
	if !strings.Contains(format, "%") {
		return dates{layouts: []string{format}}, nil
	}
	l, err := strftime(format)
	if err != nil {
		return dates{}, err
	}
	return dates{layouts: []string{l}}, nil
}

// parse returns the ISO text of s, or false.
func (d dates) parse(s string) (string, bool) {
	s = strings.TrimSpace(s)
	for _, l := range d.layouts {
		t, err := time.Parse(l, s)
		if err != nil {
			continue
		}
		if t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0 && !strings.Contains(l, "15") && !strings.Contains(l, "3:04") {
			return t.Format(time.DateOnly), true
		}
		return t.Format(time.DateTime), true
	}
	return "", false
}

// strftime converts Python's directives to a Go layout.
func strftime(f string) (string, error) {
	dir := map[byte]string{'Y': "2006", 'y': "06", 'm': "01", 'd': "02", 'H': "15", 'I': "03", 'M': "04", 'S': "05",
		'p': "PM", 'b': "Jan", 'B': "January", 'a': "Mon", 'A': "Monday", 'f': "000000", 'z': "-0700", '%': "%"}
	var sb strings.Builder
	for i := 0; i < len(f); i++ {
		if f[i] != '%' {
			sb.WriteByte(f[i])
			continue
		}
		if i+1 >= len(f) {
			return "", fmt.Errorf("date_format ends with a lone %%")
		}
		l, ok := dir[f[i+1]]
		if !ok {
			return "", fmt.Errorf("date_format directive %%%c is not supported", f[i+1])
		}
		sb.WriteString(l)
		i++
	}
	return sb.String(), nil
}
