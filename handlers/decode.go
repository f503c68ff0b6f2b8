package handlers

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/handlers/jsonargs"
)

// field is one JSON argument of a tool input struct (embedded structs are flattened).
//
// Tags read besides json, required and default:
//   - empty:"value": "" is a value (content), not "absent".
//   - absent:"-1": the value the field takes when the argument is absent, kept out of the
//     spec; a value sent must then be >= the minimum tag, so a sentinel is never a value
//     a model can send (line=0, offset=-1 are INVALID_PARAMETER, not "not given").
type field struct {
	name      string
	index     []int
	required  bool
	def       string
	hasDef    bool
	emptyOK   bool
	absent    string
	hasAbsent bool
	minimum   int64
	kind      reflect.Kind
}

// fieldsOf lists the JSON arguments of an input type, in declaration order.
func fieldsOf(t reflect.Type) []field {
	var out []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			for _, sub := range fieldsOf(f.Type) {
				sub.index = append([]int{i}, sub.index...)
				out = append(out, sub)
			}
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			continue
		}
		def, hasDef := f.Tag.Lookup("default")
		absent, hasAbsent := f.Tag.Lookup("absent")
		minimum, _ := strconv.ParseInt(f.Tag.Get("minimum"), 10, 64)
		out = append(out, field{name: name, index: []int{i}, required: f.Tag.Get("required") == "true", def: def, hasDef: hasDef,
			emptyOK: f.Tag.Get("empty") == "value", absent: absent, hasAbsent: hasAbsent, minimum: minimum, kind: f.Type.Kind()})
	}
	return out
}

// usage renders the one-line signature added to parameter errors: shed_tree(zone, path='.', depth=3, ...).
func usage(tool string, fields []field) string {
	parts := make([]string, 0, len(fields))
	for _, f := range fields {
		switch {
		case f.required:
			parts = append(parts, f.name)
		case f.hasDef:
			parts = append(parts, fmt.Sprintf("%s=%s", f.name, f.def))
		case f.kind == reflect.Bool:
			parts = append(parts, f.name+"=false")
		default:
			parts = append(parts, f.name+"=None")
		}
	}
	return tool + "(" + strings.Join(parts, ", ") + ")"
}

// decode fills dst (a pointer to an input struct) from a JSON object read from body (size
// bytes when announced, else -1) the lenient way models need: unknown keys ignored; null
// and "" mean absent (then the default applies), except "" for a field tagged
// empty:"value"; numbers and booleans given as strings are coerced; a JSON array sent as a
// string is parsed. Anything else is INVALID_PARAMETER, a missing required argument
// MISSING_PARAMETER. A failure to read the body itself is a *jsonargs.ReadError.
func decode(body io.Reader, size int64, dst any, fields []field) error {
	raw, err := jsonargs.Scan(body, size, func(name string) bool {
		for _, f := range fields {
			if f.name == name {
				return true
			}
		}
		return false
	})
	if errors.Is(err, jsonargs.ErrSyntax) {
		return core.Errf(core.InvalidParameter, "The request body must be a JSON object of arguments").Because(err)
	}
	if err != nil {
		return err
	}
	v := reflect.ValueOf(dst).Elem()
	for _, f := range fields {
		fv := v.FieldByIndex(f.index)
		a, present := raw[f.name]
		if present && absent(a, f.emptyOK) {
			present = false
		}
		if !present {
			if f.required {
				return core.Errf(core.MissingParameter, "Parameter '%s' is required", f.name).With("parameter", f.name).
					WithHint("Add the argument %s and call again (usage lists every argument)", f.name)
			}
			def, hasDef := f.def, f.hasDef
			if f.hasAbsent {
				def, hasDef = f.absent, true
			}
			if hasDef {
				if err := setFromString(fv, def); err != nil {
					panic(fmt.Sprintf("bad default tag on %s: %v", f.name, err)) // a programming error caught by tests
				}
			}
			continue
		}
		if err := setArg(fv, a); err != nil {
			return core.Errf(core.InvalidParameter, "Parameter '%s': %v", f.name, err).With("parameter", f.name).
				WithHint("Send %s as %s", f.name, kindText(fv.Kind()))
		}
		if f.hasAbsent && fv.CanInt() && fv.Int() < f.minimum {
			return core.Errf(core.InvalidParameter, "Parameter '%s' must be >= %d (got %d)", f.name, f.minimum, fv.Int()).
				With("parameter", f.name).With(f.name, fv.Int()).
				WithHint("Give %s >= %d, or leave %s out", f.name, f.minimum, f.name)
		}
	}
	return nil
}

// kindText names a JSON type with an example, for hints.
func kindText(k reflect.Kind) string {
	switch k {
	case reflect.Int, reflect.Int64:
		return "an integer, e.g. 3"
	case reflect.Bool:
		return "true or false"
	case reflect.Slice:
		return `an array, e.g. ["-n", "notes.txt"]`
	}
	return `a string, e.g. "notes.txt"`
}

// absent reports whether an argument means "not given": null, and "" unless the empty
// string is a value for the field.
func absent(a jsonargs.Arg, emptyOK bool) bool {
	if a.IsStr {
		return a.Str == "" && !emptyOK
	}
	return string(a.Raw) == "null"
}

// setArg sets fv from one argument: a string (already decoded) or a raw JSON value.
func setArg(fv reflect.Value, a jsonargs.Arg) error {
	if !a.IsStr {
		return setValue(fv, a.Raw)
	}
	switch fv.Kind() {
	case reflect.String:
		fv.SetString(a.Str)
		return nil
	case reflect.Int, reflect.Int64, reflect.Bool:
		return setFromString(fv, strings.TrimSpace(a.Str))
	case reflect.Slice:
		return setValue(fv, json.RawMessage(a.Str)) // a JSON array sent as a string
	}
	q, _ := json.Marshal(a.Str)
	return setValue(fv, q)
}

// setValue decodes one JSON value into fv with the coercions of decode.
func setValue(fv reflect.Value, m json.RawMessage) error {
	var s string
	isString := json.Unmarshal(m, &s) == nil
	switch fv.Kind() {
	case reflect.String:
		if isString {
			fv.SetString(s)
			return nil
		}
		var n json.Number
		if err := json.Unmarshal(m, &n); err == nil {
			fv.SetString(n.String())
			return nil
		}
		return fmt.Errorf("expected a string")
	case reflect.Int, reflect.Int64:
		if isString {
			return setFromString(fv, strings.TrimSpace(s))
		}
		var n int64
		if err := json.Unmarshal(m, &n); err != nil {
			return fmt.Errorf("expected an integer")
		}
		fv.SetInt(n)
		return nil
	case reflect.Bool:
		if isString {
			return setFromString(fv, strings.TrimSpace(s))
		}
		var b bool
		if err := json.Unmarshal(m, &b); err != nil {
			return fmt.Errorf("expected true or false")
		}
		fv.SetBool(b)
		return nil
	case reflect.Slice:
		if isString {
			m = json.RawMessage(s) // a JSON array sent as a string
		}
		var items []json.RawMessage
		if err := json.Unmarshal(m, &items); err != nil {
			return fmt.Errorf("expected an array")
		}
		out := reflect.MakeSlice(fv.Type(), len(items), len(items))
		for i, it := range items {
			if err := setValue(out.Index(i), it); err != nil {
				return fmt.Errorf("item %d: %w", i, err)
			}
		}
		fv.Set(out)
		return nil
	}
	return json.Unmarshal(m, fv.Addr().Interface())
}

// setFromString parses a default tag or a string-encoded number/boolean.
func setFromString(fv reflect.Value, s string) error {
	switch fv.Kind() {
	case reflect.String:
		fv.SetString(s)
	case reflect.Int, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("expected an integer, got %q", s)
		}
		fv.SetInt(n)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("expected true or false, got %q", s)
		}
		fv.SetBool(b)
	default:
		return fmt.Errorf("unsupported default for %s", fv.Kind())
	}
	return nil
}
