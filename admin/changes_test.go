package admin_test

import (
	"strings"
	"testing"
)

// fileshed admin changes lists a user's journal, newest first, narrowed to a conversation
// and a time; an invalid user id is refused.
func TestAdminChanges(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	l := serve(t, base)
	l.call(t, "shed_create_file", map[string]any{"zone": "storage", "path": "a b.txt", "content": "one\n"}, "")
	l.call(t, "shed_create_file", map[string]any{"zone": "storage", "path": "a b.txt", "content": "two\n", "overwrite": true}, "")
	code, out, _ := run(t, base, "changes", "--user", "local")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if code != 0 || len(lines) != 3 || !strings.Contains(lines[1], "write") || !strings.Contains(lines[1], `"a b.txt"`) ||
		!strings.Contains(lines[2], "create") || !strings.Contains(lines[1], "yes") {
		t.Fatalf("changes (%d):\n%s", code, out)
	}
	if code, out, _ := run(t, base, "changes", "--user", "local", "--conversation", "other"); code != 0 || strings.Count(out, "\n") != 1 {
		t.Fatalf("another conversation (%d):\n%s", code, out)
	}
	if code, out, _ := run(t, base, "changes", "--user", "local", "--since", "2999-01-01T00:00:00Z"); code != 0 || strings.Count(out, "\n") != 1 {
		t.Fatalf("since the future (%d):\n%s", code, out)
	}
	if code, _, errOut := run(t, base, "changes", "--user", "../x"); code != 1 || !strings.Contains(errOut, "not a valid user id") {
		t.Fatalf("an invalid user: %d %s", code, errOut)
	}
}
