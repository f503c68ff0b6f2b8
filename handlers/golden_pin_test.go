package handlers_test

import (
	"sort"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/internal/golden"
)

// pinAnswer asserts a successful call and compares its whole body with the golden file
// name (the values of the volatile keys masked): the model-facing JSON, key order
// included, must not change while the families' results become typed.
func pinAnswer(t *testing.T, name string, r reply, volatile ...string) {
	t.Helper()
	pinGolden(t, name, r, nil, volatile...)
}

// pinGolden compares the raw answer r with the golden file name (internal/golden), after
// replacing each key of swap (a secret such as a link token, or a random id or address)
// with its value, longest first, and masking the values of the volatile keys.
func pinGolden(t *testing.T, name string, r reply, swap map[string]string, volatile ...string) {
	t.Helper()
	wantOK(t, r)
	keys := make([]string, 0, len(swap))
	for k := range swap {
		if k == "" {
			t.Fatalf("golden %s: an empty string to swap", name)
		}
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return len(keys[i]) > len(keys[j]) || len(keys[i]) == len(keys[j]) && keys[i] < keys[j]
	})
	raw := r.raw
	for _, k := range keys {
		raw = strings.ReplaceAll(raw, k, swap[k])
	}
	golden.JSON(t, name, []byte(raw), volatile...)
}
