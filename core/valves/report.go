package valves

import (
	"encoding/json"
	"io"
	"reflect"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"
)

// Report writes the effective configuration as a table, one valve per row in the order of
// Names: the valve, where its value came from, its environment variable and flag, and the
// value. Values are JSON; a secret that is set shows as "<redacted>" (an empty one stays
// ""), and its variable as FILESHED_<NAME>[_FILE]. A valve missing from src is reported as
// from the default.
func (c *Config) Report(w io.Writer, src Sources) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	io.WriteString(tw, "VALVE\tSOURCE\tVARIABLE\tFLAG\tVALUE\n")
	for _, v := range all {
		from := src[v.name]
		if from == "" {
			from = fromDefault
		}
		env := v.env()
		if v.secret {
			env += "[_FILE]"
		}
		io.WriteString(tw, v.name+"\t"+from+"\t"+env+"\t--"+v.flag()+"\t"+v.show(c)+"\n")
	}
	return tw.Flush()
}

// ReportEnv writes the effective configuration as environment variables, one
// FILESHED_<NAME>=value line per valve (an env file for docker run --env-file or compose):
// lists as comma-separated values where that reads back the same, else JSON; maps as JSON.
// A secret that is set is a comment ("# FILESHED_<NAME>=<redacted> ..."): the file stays
// usable and never sets a secret to the word "<redacted>".
func (c *Config) ReportEnv(w io.Writer) error {
	var b strings.Builder
	b.WriteString("# fileshed valves --env: the effective configuration (secrets redacted)\n")
	for _, v := range all {
		if v.secret && v.field(c).String() != "" {
			b.WriteString("# " + v.env() + "=<redacted>  (set: give it here, or as " + v.env() + "_FILE)\n")
			continue
		}
		b.WriteString(v.env() + "=" + v.envValue(c) + "\n")
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// envValue renders the valve's value in c as parse reads it back. A string that a line
// of an env file cannot carry as it is (control characters, surrounding spaces, a leading
// quote) is quoted, so that no value can forge another line.
func (v valve) envValue(c *Config) string {
	f := v.field(c)
	switch {
	case f.Kind() == reflect.String:
		s := f.String()
		if strings.TrimSpace(s) != s || strings.HasPrefix(s, `"`) || strings.IndexFunc(s, unicode.IsControl) >= 0 {
			return strconv.Quote(s)
		}
		return s
	case f.Kind() == reflect.Slice && plainList(f.Interface().([]string)):
		return strings.Join(f.Interface().([]string), ",")
	case f.Kind() == reflect.Slice || f.Kind() == reflect.Map:
		b, _ := json.Marshal(f.Interface()) // lists and maps of strings cannot fail
		return string(b)
	}
	return v.show(c) // ints and bools
}

// plainList reports whether list reads back from its comma-separated form (splitList).
func plainList(list []string) bool {
	for i, s := range list {
		if s == "" || strings.TrimSpace(s) != s || strings.ContainsRune(s, ',') || (i == 0 && strings.HasPrefix(s, "[")) ||
			strings.IndexFunc(s, unicode.IsControl) >= 0 {
			return false
		}
	}
	return true
}
