package core

import (
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/internal/testvalves"
)

// A second server on the storage directory of a running one is refused (issue 25: three
// servers on one SQLite state lost 109 of 240 acknowledged appends); an operator's
// exclusive work is still refused while a server runs, and a server starts again once the
// first one is closed.
func TestSecondServerOnOneStorageIsRefused(t *testing.T) {
	t.Parallel()
	s, base := testService(t, nil)
	cfg := *s.Config()
	second, err := New(&cfg, Options{})
	if err == nil {
		second.Close()
		t.Fatal("a second server started on the same storage directory")
	}
	if !errors.Is(err, ErrStorageInUse) {
		t.Fatalf("error %v is not ErrStorageInUse", err)
	}
	for _, want := range []string{base, "state.driver: postgres"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("message %q does not name %q", err, want)
		}
	}
	if _, err := os.Stat(base + "/fileshed.sqlite"); err != nil {
		t.Fatal(err)
	}
	// The operator's rules are unchanged: admin opens beside the server, exclusive work is refused.
	admin, err := New(&cfg, Options{Admin: true})
	if err != nil {
		t.Fatalf("admin beside a server: %v", err)
	}
	defer admin.Close()
	if _, err := admin.AdminReconcile(t.Context(), "user"); !errors.Is(err, ErrServerRunning) {
		t.Fatalf("reconcile beside a server: %v", err)
	}
	s.Close()
	again, err := New(&cfg, Options{})
	if err != nil {
		t.Fatalf("a server after the first stopped: %v", err)
	}
	again.Close()
}

// An operator's exclusive work (restore, reconcile) keeps a server from starting, with the
// operator named as the reason.
func TestServerRefusedWhileOperatorHoldsStorage(t *testing.T) {
	t.Parallel()
	base := t.TempDir()
	cfg := testvalves.Config(t, base, nil)
	l, err := lockStorage(base, holderOperator)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	s, err := New(cfg, Options{})
	if err == nil {
		s.Close()
		t.Fatal("a server started while an operator held the storage")
	}
	if !strings.Contains(err.Error(), "operator") {
		t.Fatalf("message %q does not name the operator", err)
	}
}
