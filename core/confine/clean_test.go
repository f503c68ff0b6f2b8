package confine

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

const (
	eNFC = "\u00e9"  // é precomposed
	eNFD = "e\u0301" // e + combining acute
)

func TestClean(t *testing.T) {
	comp255 := strings.Repeat("a", 255)
	// 32 components of 40 x U+0958, which NFC decomposes (3 -> 6 bytes):
	// 3,903 bytes as given, 7,743 after normalisation.
	expands := strings.TrimSuffix(strings.Repeat(strings.Repeat("\u0958", 40)+"/", 32), "/")
	tests := []struct {
		name string
		in   string
		want string
		err  error
	}{
		{"empty is root", "", "", nil},
		{"dot is root", ".", "", nil},
		{"slash dot", "./", "", nil},
		{"simple", "a", "a", nil},
		{"inner dot", "a/./b", "a/b", nil},
		{"inner dotdot pops", "a/../b", "b", nil},
		{"dotdot back to root", "a/..", "", nil},
		{"trailing slash", "a/b/", "a/b", nil},
		{"double slash inside", "a//b", "a/b", nil},
		{"leading dot slash", "./a", "a", nil},
		{"backslash separator", `a\b`, "a/b", nil},
		{"percent-encoded dots are literal", "%2e%2e/x", "%2e%2e/x", nil},
		{"percent dots then real dotdot", "a/%2e%2e/../x", "a/x", nil},
		{"tilde is literal", "~/x", "~/x", nil},
		{"three dots is a name", ".../x", ".../x", nil},
		{"dotdot prefix is a name", "..a/b..", "..a/b..", nil},
		{"space is a name", " /x", " /x", nil},
		{"colon later is fine", "a/C:/x", "a/C:/x", nil},
		{"colon not a drive", "ab:c", "ab:c", nil},
		{"NFD becomes NFC", eNFD + ".txt", eNFC + ".txt", nil},
		{"NFC stays", eNFC + ".txt", eNFC + ".txt", nil},
		{"255-byte component", "d/" + comp255, "d/" + comp255, nil},
		{"4096-byte path", strings.Repeat("a/", 2047) + "bb", strings.Repeat("a/", 2047) + "bb", nil},

		{"dotdot alone", "..", "", ErrEscape},
		{"dotdot then name", "../x", "", ErrEscape},
		{"climbs after descending", "a/../../x", "", ErrEscape},
		{"sibling with zone prefix", "../data_evil/secret", "", ErrEscape},
		{"backslash dotdot", `a\..\..\x`, "", ErrEscape},
		{"absolute", "/etc/passwd", "", ErrEscape},
		{"root slash", "/", "", ErrEscape},
		{"double slash absolute", "//x", "", ErrEscape},
		{"backslash absolute", `\x`, "", ErrEscape},
		{"UNC path", `\\server\share\x`, "", ErrEscape},
		{"device path", `\\?\C:\x`, "", ErrEscape},
		{"drive backslash", `C:\x`, "", ErrEscape},
		{"drive slash", "C:/x", "", ErrEscape},
		{"drive relative", "c:x", "", ErrEscape},
		{"drive alone", "Z:", "", ErrEscape},
		{"drive revealed by dotdot", "a/../C:/x", "", ErrEscape},

		{"NUL", "a\x00b", "", ErrInvalid},
		{"newline", "a\nb", "", ErrInvalid},
		{"tab", "a\tb", "", ErrInvalid},
		{"DEL", "a\x7fb", "", ErrInvalid},
		{"C1 NEL", "a\u0085b", "", ErrInvalid},
		{"invalid UTF-8", "a\xffb", "", ErrInvalid},
		{"truncated UTF-8", "a\xc3", "", ErrInvalid},
		{"NUL before escape", "../\x00", "", ErrInvalid},
		{"5 kB name", strings.Repeat("x", 5000), "", ErrInvalid},
		{"4097-byte path", strings.Repeat("a/", 2048) + "b", "", ErrInvalid},
		{"256-byte component", "d/" + strings.Repeat("a", 256), "", ErrInvalid},
		{"256-byte component popped still refused", strings.Repeat("a", 256) + "/..", "", ErrInvalid},
		{"NFC expansion beyond the limit", expands, "", ErrInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Clean(tt.in)
			if tt.err != nil {
				if !errors.Is(err, tt.err) {
					t.Fatalf("Clean(%q) = %q, %v; want %v", tt.in, got, err, tt.err)
				}
				var pe *PathError
				if !errors.As(err, &pe) || pe.Op != "clean" || pe.Path != tt.in {
					t.Fatalf("error %#v is not a *PathError for the given path", err)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("Clean(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
}

// TestCleanNFCAndNFDNameOneFile: the two spellings of "é" are one file.
func TestCleanNFCAndNFDNameOneFile(t *testing.T) {
	z := newZone(t)
	if err := z.fs.Mkdir(eNFD, 0o700); err != nil {
		t.Fatal(err)
	}
	fi, err := z.fs.Stat(eNFC)
	if err != nil || !fi.IsDir() {
		t.Fatalf("Stat NFC after Mkdir NFD: %v", err)
	}
}

func TestPathErrorMessage(t *testing.T) {
	long := strings.Repeat("é", 300) // 600 bytes, cut inside no rune
	tests := []struct {
		name string
		err  *PathError
		want string
	}{
		{"short", &PathError{Op: "open", Path: "../x", Err: ErrEscape}, `open "../x": path escapes the zone`},
		{"control characters quoted", &PathError{Op: "clean", Path: "a\nb", Err: ErrInvalid}, `clean "a\nb": invalid path`},
		{"long path shortened", &PathError{Op: "stat", Path: long, Err: ErrInvalid}, `stat "` + strings.Repeat("é", 100) + `"...: invalid path`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.err.Error(); got != tt.want {
				t.Fatalf("Error() = %q, want %q", got, tt.want)
			}
			if !utf8.ValidString(tt.err.Error()) {
				t.Fatal("message is not valid UTF-8")
			}
		})
	}
}

func TestIsTempName(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want bool
	}{
		{"generated", tempPrefix + "ABCDEFGHIJKLMNOPQRSTUVWXYZ", true},
		{"generated in a directory", "a/b/" + tempPrefix + "ABCDEFGHIJKLMNOPQRSTUVWX27", true},
		{"longer random text", tempPrefix + strings.Repeat("A", 40), true},
		{"user file with the prefix", tempPrefix + "notes", false},
		{"lower case", tempPrefix + strings.Repeat("a", 26), false},
		{"short random text", tempPrefix + strings.Repeat("A", 25), false},
		{"prefix only", tempPrefix, false},
		{"prefix in a directory name", tempPrefix + strings.Repeat("A", 26) + "/x", false},
		{"plain", "file.txt", false},
		{"empty", "", false},
		{"with a replica id", tempPrefix + "ABCDEFGHIJKLMNOP-" + strings.Repeat("Q", 26), true},
		{"made now", TempName(), true},
		{"replica id too short", tempPrefix + "ABCDEFGHIJKLMNO-" + strings.Repeat("Q", 26), false},
		{"replica id too long", tempPrefix + "ABCDEFGHIJKLMNOPQ-" + strings.Repeat("Q", 26), false},
		{"replica id in lower case", tempPrefix + "abcdefghijklmnop-" + strings.Repeat("Q", 26), false},
		{"replica id, short random text", tempPrefix + "ABCDEFGHIJKLMNOP-" + strings.Repeat("Q", 25), false},
		{"replica id, no random text", tempPrefix + "ABCDEFGHIJKLMNOP-", false},
		{"two dashes", tempPrefix + "ABCDEFGHIJKLMNOP-" + strings.Repeat("Q", 26) + "-X", false},
		{"user file with a dash", tempPrefix + "my-notes", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := IsTempName(tt.in); got != tt.want {
				t.Fatalf("IsTempName(%q) = %v", tt.in, got)
			}
		})
	}
}

// A temporary name tells which replica made it: this process's id for a name made now,
// none for a name of the older form.
func TestTempReplica(t *testing.T) {
	if id, ok := TempReplica("a/" + TempName()); !ok || id != Replica() || len(id) != 16 {
		t.Fatalf("TempReplica(TempName()) = %q, %v; Replica() = %q", id, ok, Replica())
	}
	if id, ok := TempReplica(tempPrefix + strings.Repeat("A", 26)); !ok || id != "" {
		t.Fatalf("older form: %q, %v", id, ok)
	}
	if _, ok := TempReplica("notes.txt"); ok {
		t.Fatal("a user's file parsed as a temporary name")
	}
}

func FuzzClean(f *testing.F) {
	for _, s := range []string{"", ".", "a/../b", "../x", `C:\x`, "//x", `a\..\..\x`, "%2e%2e/x",
		"a\x00b", "\xff", eNFD, ".../..", "a/./b//c/", `\\server\x`, "a/../C:/x", "\u0958/\u0301"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		got, err := Clean(p)
		if err != nil {
			if !errors.Is(err, ErrEscape) && !errors.Is(err, ErrInvalid) {
				t.Fatalf("Clean(%q): unexpected error kind %v", p, err)
			}
			return
		}
		switch {
		case strings.HasPrefix(got, "/"), strings.HasPrefix(got, "../"), got == "..":
			t.Fatalf("Clean(%q) = %q escapes", p, got)
		case strings.Contains(got, "//"), strings.ContainsRune(got, 0), strings.Contains(got, `\`):
			t.Fatalf("Clean(%q) = %q is not clean", p, got)
		case len(got) > MaxPathLen, !utf8.ValidString(got), !norm.NFC.IsNormalString(got):
			t.Fatalf("Clean(%q) = %q is too long, not UTF-8 or not NFC", p, got)
		}
		for _, c := range strings.Split(got, "/") {
			if got != "" && (c == "" || c == "." || c == ".." || len(c) > MaxNameLen) {
				t.Fatalf("Clean(%q) = %q has component %q", p, got, c)
			}
		}
		if again, err := Clean(got); err != nil || again != got {
			t.Fatalf("Clean(Clean(%q)) = %q, %v; want %q", p, again, err, got)
		}
	})
}
