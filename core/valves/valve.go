package valves

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
	"strconv"
	"strings"
)

// envPrefix starts every environment variable; configEnv names the config file.
const (
	envPrefix = "FILESHED_"
	configEnv = envPrefix + "CONFIG"
)

// valve is one setting: a leaf field of Config and everything derived from it.
type valve struct {
	name     string // YAML path, e.g. "auth.mode"
	index    []int  // field path from Config, for reflect.Value.FieldByIndex
	typ      reflect.Type
	secret   bool
	enum     []string // allowed values of a string valve; nil when free
	min, max int      // inclusive range of an int valve
	minLen   int      // shortest accepted value of a string valve that is set (0 = any)
}

// all lists the valves in field order (the order of valves.yaml); byFlag and byName index it
// by flag and by name.
var (
	all    = collect(reflect.TypeFor[Config](), "", nil)
	byFlag = index(valve.flag)
	byName = index(func(v valve) string { return v.name })
)

func index(key func(valve) string) map[string]*valve {
	m := make(map[string]*valve, len(all))
	for i := range all {
		m[key(all[i])] = &all[i]
	}
	return m
}

// collect walks the fields of t: a struct field is a section whose fields are valves named
// "section.key". Malformed tags are programming errors and stop the program at init.
func collect(t reflect.Type, prefix string, parent []int) []valve {
	var out []valve
	for i := range t.NumField() {
		f := t.Field(i)
		name := prefix + strings.Split(f.Tag.Get("yaml"), ",")[0]
		idx := append(append([]int(nil), parent...), i)
		if f.Type.Kind() == reflect.Struct {
			out = append(out, collect(f.Type, name+".", idx)...)
			continue
		}
		v := valve{name: name, index: idx, typ: f.Type, secret: f.Tag.Get("secret") == "true"}
		if e, ok := f.Tag.Lookup("enum"); ok {
			v.enum = strings.Split(e, "|")
		}
		if v.typ.Kind() == reflect.Int {
			v.min, v.max = mustAtoi(name, f.Tag.Get("min")), mustAtoi(name, f.Tag.Get("max"))
		}
		if l, ok := f.Tag.Lookup("minlen"); ok {
			v.minLen = mustAtoi(name, l)
		}
		// Secrets must be strings: only then can no parse error ever echo a secret's text.
		if v.secret && v.typ.Kind() != reflect.String {
			panic("valves: secret " + name + " must be a string")
		}
		// Lists are read as comma-separated text (parse): only lists of strings can be.
		if v.typ.Kind() == reflect.Slice && v.typ != reflect.TypeFor[[]string]() {
			panic("valves: list " + name + " must be a []string")
		}
		out = append(out, v)
	}
	return out
}

func mustAtoi(name, s string) int {
	n, err := strconv.Atoi(s)
	if err != nil {
		panic("valves: int " + name + " needs min and max tags: " + err.Error())
	}
	return n
}

// flag is the valve's command-line flag without dashes: dots and underscores become "-".
func (v valve) flag() string {
	return strings.NewReplacer(".", "-", "_", "-").Replace(v.name)
}

// env is the valve's environment variable: FILESHED_ + the upper-case name, dots as "_".
func (v valve) env() string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(v.name, ".", "_"))
}

// where names the valve's variable and flag, for messages: a container user sets
// FILESHED_* variables, not YAML keys.
func (v valve) where() string {
	return "variable " + v.env() + ", flag --" + v.flag()
}

// Where names the variable and flag of the valve name ("auth.mode"), for the messages of
// checks made outside this package; "" for a name that is not a valve.
func Where(name string) string {
	if v := byName[name]; v != nil {
		return v.where()
	}
	return ""
}

// field is the valve's field inside c, settable.
func (v valve) field(c *Config) reflect.Value {
	return reflect.ValueOf(c).Elem().FieldByIndex(v.index)
}

// parse turns the text of an environment variable or flag into a value of the valve's type:
// strings as they are, ints and bools by strconv, lists as comma-separated values or JSON
// (text starting with "["), maps as JSON. The error never contains the text of a secret
// (secrets are strings, which cannot fail).
func (v valve) parse(raw string) (reflect.Value, error) {
	out := reflect.New(v.typ).Elem()
	switch v.typ.Kind() {
	case reflect.String:
		out.SetString(raw)
	case reflect.Int:
		n, err := strconv.Atoi(strings.TrimSpace(raw))
		if err != nil {
			return out, fmt.Errorf("%q is not an integer", raw)
		}
		out.SetInt(int64(n))
	case reflect.Bool:
		b, err := strconv.ParseBool(strings.TrimSpace(raw))
		if err != nil {
			return out, fmt.Errorf("%q is not a boolean (true or false)", raw)
		}
		out.SetBool(b)
	case reflect.Slice:
		if !strings.HasPrefix(strings.TrimSpace(raw), "[") {
			out.Set(reflect.ValueOf(splitList(raw)))
		} else if err := json.Unmarshal([]byte(raw), out.Addr().Interface()); err != nil {
			return out, fmt.Errorf("not a JSON list (%v): give comma-separated values (a,b) or a JSON list ([\"a\",\"b\"])", err)
		}
	default:
		if err := json.Unmarshal([]byte(raw), out.Addr().Interface()); err != nil {
			example := `{"name":"text"}`
			if v.typ.Elem().Kind() == reflect.Slice {
				example = `{"name":["a","b"]}`
			}
			return out, fmt.Errorf("not a JSON object of the expected shape (%v): give one like %s", err, example)
		}
	}
	return out, nil
}

// splitList reads comma-separated values, trimmed, empty ones dropped ("" is an empty list).
func splitList(raw string) []string {
	out := []string{}
	for _, s := range strings.Split(raw, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// show renders the valve's value in c for Report: JSON (so a string with a newline stays on
// one line), or "<redacted>" for a secret that is set.
func (v valve) show(c *Config) string {
	f := v.field(c)
	if v.secret && f.String() != "" {
		return "<redacted>"
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	_ = enc.Encode(f.Interface()) // cannot fail for strings, ints, bools, lists and maps of strings
	return strings.TrimSuffix(b.String(), "\n")
}
