package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/internal/testserver"
)

func TestLoadAgainstRealServer(t *testing.T) {
	url, base := testserver.Start(t, nil)
	tests := []struct {
		name       string
		args       []string
		code       int
		wantOutput []string
	}{
		{"TreeWithSeed", []string{"-tool", "shed_tree", "-body", `{"zone":"storage"}`, "-n", "20", "-c", "4", "-files", "30", "-header", "X-Test=1"},
			0, []string{"seeded 30 files", "count 20\n", "errors 0\n", "p50 ", "p90 ", "p99 ", "max ", "throughput "}},
		{"SeedAgainReusesFiles", []string{"-n", "3", "-files", "30"}, 0, []string{"seeded 30 files", "(0 errors", "count 3\n"}},
		{"FailedCallsAreErrors", []string{"-tool", "shed_read_text", "-body", `{"zone":"storage","path":"missing.txt"}`, "-n", "5", "-c", "2"},
			1, []string{"count 5\n", "errors 5\n"}},
		{"UnknownToolIsAnError", []string{"-tool", "shed_nothing", "-n", "2"}, 1, []string{"errors 2\n"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run(context.Background(), append([]string{"-url", url}, tc.args...), &out, &errb)
			if code != tc.code {
				t.Fatalf("exit %d, want %d\n%s%s", code, tc.code, out.String(), errb.String())
			}
			for _, w := range tc.wantOutput {
				if !strings.Contains(out.String(), w) {
					t.Errorf("output lacks %q:\n%s", w, out.String())
				}
			}
		})
	}
	if _, err := os.Stat(filepath.Join(base, "users/local/Storage/data/load-seed/0/f29.txt")); err != nil {
		t.Fatalf("seed files not on disk: %v", err)
	}
}

// TestRefusesBadFlags: non-loopback hosts (including names that merely look local) and
// unbounded or malformed values are refused before any request is sent.
func TestRefusesBadFlags(t *testing.T) {
	tests := map[string][]string{
		"PublicHost":         {"-url", "http://example.com"},
		"PrivateIP":          {"-url", "http://10.0.0.1:8000"},
		"NameLooksLocal":     {"-url", "http://127.0.0.1.nip.io:8000"},
		"UnspecifiedIP":      {"-url", "http://0.0.0.0:8000"},
		"UserInfoTrick":      {"-url", "http://127.0.0.1@example.com/"},
		"NotHTTP":            {"-url", "file:///etc/passwd"},
		"ZeroRequests":       {"-n", "0"},
		"TooManyRequests":    {"-n", "1000001"},
		"ZeroConcurrency":    {"-c", "0"},
		"HugeConcurrency":    {"-c", "100000"},
		"NegativeFiles":      {"-files", "-1"},
		"TooManyFiles":       {"-files", "1000001"},
		"BodyNotJSON":        {"-body", "{zone:"},
		"ToolWithPath":       {"-tool", "../admin"},
		"HeaderWithoutKey":   {"-header", "=x"},
		"StrayArgument":      {"extra"},
		"NonPositiveTimeout": {"-timeout", "0s"},
	}
	for name, args := range tests {
		t.Run(name, func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := run(context.Background(), args, &out, &errb); code != 2 || out.Len() != 0 {
				t.Fatalf("exit %d, output %q, stderr %q", code, out.String(), errb.String())
			}
		})
	}
	for _, ok := range []string{"http://127.0.0.1:8000", "http://127.3.4.5", "http://[::1]:8000/", "https://localhost:8443"} {
		if _, err := loopback(ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
}
