package launch

import (
	"reflect"
	"strings"
	"testing"
)

// TestSpecRoundTrip: what Run encodes is exactly what the launcher decodes,
// including bytes that would break a separator-based format.
func TestSpecRoundTrip(t *testing.T) {
	cases := []struct {
		name string
		s    Spec
	}{
		{"minimal", Spec{Argv: []string{"/usr/bin/true"}}},
		{"full", Spec{Argv: []string{"/usr/bin/cat", "--", "a.txt"}, Exec: []string{"/usr/bin/cat", "/lib64/ld-linux-x86-64.so.2"},
			Dir: "/srv/zone", ReadOnly: true, ExtraRW: []string{"/srv/rw"}, ExtraRO: []string{"/srv/git", "/srv/ro"},
			Memory: 1 << 30, CPU: 30, FileSize: 12345, Network: true, Landlock: true, ABI: 6}},
		{"hostile bytes in args", Spec{Argv: []string{"/bin/echo", "3:abc", "", "a\nb", "x:y:z", "ü\xff", strings.Repeat("9", 100)},
			Dir: "/d:1"}},
		{"negative limits", Spec{Argv: []string{"/bin/x"}, Memory: -1, CPU: -5, ABI: -1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, err := Decode(c.s.Encode())
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, c.s) {
				t.Errorf("got %+v, want %+v", got, c.s)
			}
		})
	}
}

// TestDecodeRejectsMalformedSpec: the launcher refuses (never guesses) anything
// that is not exactly a Spec of this version.
func TestDecodeRejectsMalformedSpec(t *testing.T) {
	good := (&Spec{Argv: []string{"/usr/bin/cat", "a"}, Dir: "/z", Landlock: true, ABI: 4}).Encode()
	cases := []struct {
		name string
		in   []byte
	}{
		{"empty", nil},
		{"json of the old protocol", []byte(`{"Argv":["/usr/bin/cat"],"Dir":"/z"}`)},
		{"other version", []byte(strings.Replace(string(good), wireVersion, "fileshed-launch-0", 1))},
		{"truncated", good[:len(good)-1]},
		{"trailing bytes", append(append([]byte{}, good...), '0')},
		{"no argv", (&Spec{Dir: "/z"}).Encode()},
		{"length beyond input", []byte("17:fileshed-launch-1999:x")},
		{"huge count", []byte("17:fileshed-launch-110:9999999999")},
		{"negative count", []byte("17:fileshed-launch-12:-1")},
		{"length without colon", []byte("17fileshed-launch-1")},
		{"overlong length digits", []byte("000000000017:fileshed-launch-1")},
		{"flag not 0 or 1", []byte(flagged("2"))},
		{"oversized", make([]byte, maxSpec+1)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if s, err := Decode(c.in); err == nil {
				t.Errorf("accepted %q as %+v", c.in, s)
			}
		})
	}
}

// flagged is the encoding of Spec{Argv: {"/a"}} with readOnly as the ReadOnly field.
func flagged(readOnly string) string {
	return "17:" + wireVersion + "1:1" + "2:/a" + "1:0" + "0:" + "1:" + readOnly + strings.Repeat("1:0", 8)
}

// TestFlaggedIsWellFormed keeps the "flag not 0 or 1" case honest: the same bytes
// with a 1 decode.
func TestFlaggedIsWellFormed(t *testing.T) {
	s, err := Decode([]byte(flagged("1")))
	if err != nil || !s.ReadOnly {
		t.Fatalf("%+v %v", s, err)
	}
}
