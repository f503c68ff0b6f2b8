package jsonargs

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"math/rand/v2"
	"strings"
	"testing"
	"testing/iotest"
)

// referenceArgs is how arguments were read before the body was streamed: the whole body
// through encoding/json (the behaviour Scan must keep).
func referenceArgs(body []byte, known func(string) bool) (map[string]Arg, error) {
	raw := map[string]json.RawMessage{}
	if len(bytes.TrimSpace(body)) > 0 {
		if err := json.Unmarshal(body, &raw); err != nil {
			return nil, ErrSyntax
		}
	}
	out := map[string]Arg{}
	for k, m := range raw {
		if !known(k) {
			continue
		}
		var s string
		if len(m) > 0 && m[0] == '"' && json.Unmarshal(m, &s) == nil {
			out[k] = Arg{Str: s, IsStr: true}
			continue
		}
		var compact bytes.Buffer
		if err := json.Compact(&compact, m); err != nil {
			return nil, err
		}
		out[k] = Arg{Raw: compact.Bytes()}
	}
	return out, nil
}

// sameArgs compares what Scan and the reference read from body, through a reader that
// returns one byte at a time (every buffer boundary is crossed) and through a whole one.
func sameArgs(t *testing.T, body []byte) {
	t.Helper()
	known := func(k string) bool { return k != "unknown" }
	want, werr := referenceArgs(body, known)
	for _, r := range []io.Reader{bytes.NewReader(body), iotest.OneByteReader(bytes.NewReader(body))} {
		got, err := Scan(r, int64(len(body)), known)
		if (err != nil) != (werr != nil) {
			t.Fatalf("body %q: error %v, encoding/json %v", body, err, werr)
		}
		if len(got) != len(want) {
			t.Fatalf("body %q: %d arguments, encoding/json %d", body, len(got), len(want))
		}
		for k, w := range want {
			g := got[k]
			if g.IsStr != w.IsStr || g.Str != w.Str || !bytes.Equal(g.Raw, w.Raw) {
				t.Fatalf("body %q, key %q: got %+v (%q), encoding/json %+v (%q)", body, k, g, g.Raw, w, w.Raw)
			}
		}
	}
}

// TestDecodeMatchesEncodingJSON: the streaming scanner reads every body as encoding/json
// did: escapes, surrogate pairs (split or lone), invalid UTF-8, numbers, nesting, repeated
// keys, null, whitespace, trailing data and every kind of malformed JSON.
func TestDecodeMatchesEncodingJSON(t *testing.T) {
	t.Parallel()
	bodies := []string{
		``, ` `, "\t\n\r ", "\u00a0", "\u00a0{}", `null`, ` null `, `nul`, `nullx`, `{}`, ` { } `, `{`, `}`, `[]`, `"x"`, `1`, `true`,
		`{"a":1}`, `{"a":1,}`, `{,}`, `{"a" 1}`, `{"a":}`, `{"a":1}x`, `{"a":1} {}`, `{"a":1}` + "\n\t",
		`{"a":"x","a":"y"}`, `{"a":"x","a":2}`, `{"a":null}`, `{"a":""}`, `{"a":" 5 "}`, `{"a":true,"b":false}`,
		`{"a":tru}`, `{"a":falsey}`, `{"a":-0}`, `{"a":-}`, `{"a":01}`, `{"a":1.}`, `{"a":.5}`, `{"a":1e}`, `{"a":1e+5}`,
		`{"a":1E-05}`, `{"a":-12.5e3}`, `{"a":+1}`, `{"a":1.2.3}`, `{"a":0x10}`, `{"a":12345678901234567890123}`,
		`{"a":[1,"two",{"three":[3]},null,true]}`, `{"a":[ 1 , 2 ]}`, `{"a":[1,]}`, `{"a":[,1]}`, `{"a":{"b":}}`,
		`{"a":{"b" : [ ] , "c" : { } }}`, `{"a":["x\"y","\u00e9"]}`, `{"unknown":[1,{"x":[2,3]}],"a":"v"}`,
		`{"unknown":[1,2}`, `{"unknown":"\x"}`, `{"unknown":"` + "\x01" + `"}`,
		`{"a":"\"\\\/\b\f\n\r\t"}`, `{"a":"\'"}`, `{"a":"\x"}`, `{"a":"\u00e9\u00E9"}`, `{"a":"\u12"}`, `{"a":"\u12G4"}`,
		`{"a":"\ud83d\ude00"}`, `{"a":"\uD83D\uDE00x"}`, `{"a":"\ud83d"}`, `{"a":"\ud83dx"}`, `{"a":"\ude00\ud83d"}`,
		`{"a":"\ud83d\ud83d\ude00"}`, `{"a":"\ud83d\u0041"}`, `{"a":"\ud83d\n"}`, `{"a":"\u0000"}`, `{"a":"\ud83d\u"}`,
		`{"a":"` + "\xff\xfe" + `"}`, `{"a":"` + "\xe2\x82" + `"}`, `{"a":"` + "\xe2\x82\xac" + `"}`, `{"a":"` + "\xed\xa0\x80" + `"}`,
		`{"a":"` + "\xf0\x9f\x98" + `"}`, `{"a":"` + "\xc0\xaf" + `"}`, `{"a":"` + "\x80\x80" + `"}`, `{"a":"` + "\t" + `"}`,
		`{"a":"` + "\x7f" + `"}`, `{"a":"unterminated`, `{"a":"x\`, `{"\u0061":"key with an escape"}`, `{"a` + "\xff" + `":1}`,
		`{"a":"` + "日本語 😀" + `"}`, "\xef\xbb\xbf{}", `{"a":1}` + "\x00",
		`{"a":` + strings.Repeat("[", 9999) + strings.Repeat("]", 9999) + `}`,
		`{"a":` + strings.Repeat("[", 10000) + strings.Repeat("]", 10000) + `}`,
	}
	for _, b := range bodies {
		sameArgs(t, []byte(b))
	}
	// A long string with every kind of escape and invalid UTF-8 spread over buffer
	// boundaries, with and without an announced size.
	rng := rand.New(rand.NewPCG(1, 2))
	pieces := []string{"abc", `\"`, `\\`, `\n`, `\u00e9`, `\ud83d\ude00`, `\ud83d`, "é", "😀", "\xff", "\xe2\x82", " ", `\/`}
	var sb strings.Builder
	sb.WriteString(`{"path":"x","a":"`)
	for sb.Len() < 300<<10 {
		sb.WriteString(pieces[rng.IntN(len(pieces))])
	}
	sb.WriteString(`","b":[1,2],"unknown":"` + strings.Repeat("z", 70<<10) + `"}`)
	sameArgs(t, []byte(sb.String()))
	if got, err := Scan(bytes.NewReader([]byte(sb.String())), -1, func(string) bool { return true }); err != nil || len(got["a"].Str) < 100<<10 {
		t.Fatalf("without a size: %v", err)
	}
}

// FuzzDecode compares the streaming scanner with encoding/json on any body.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{`{"a":"\ud83d\ude00","b":[1,{"c":null}],"unknown":1e5}`, `{"a":"` + "\xff" + `"}`, `null`, ` {} `} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { sameArgs(t, body) })
}

// TestDecodeReadErrors: a failing body is a *ReadError (answered as huma answers it), not
// INVALID_PARAMETER, wherever it fails.
func TestDecodeReadErrors(t *testing.T) {
	t.Parallel()
	boom := errors.New("connection reset")
	for _, prefix := range []string{``, `{`, `{"a"`, `{"a":"xx`, `{"a":12`, `{"a":[1,`, `{"a":"\`, `{"a":"` + "\xe2"} {
		r := io.MultiReader(strings.NewReader(prefix), iotest.ErrReader(boom))
		_, err := Scan(r, -1, func(string) bool { return true })
		var re *ReadError
		if !errors.As(err, &re) || !errors.Is(err, boom) {
			t.Errorf("prefix %q: %v, want the read error", prefix, err)
		}
	}
}
