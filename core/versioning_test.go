package core

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// documents opens user's Documents for writing.
func documents(t *testing.T, s *Service, user string) *Zone {
	t.Helper()
	z, err := s.ResolveZone(context.Background(), Caller{UserID: user, ConvID: "c"}, "documents", "", true)
	if err != nil {
		t.Fatal(err)
	}
	return z
}

// writeDoc writes one file into user's Documents through the write transaction (one
// commit) and fails the test otherwise.
func writeDoc(t *testing.T, s *Service, user, content string) {
	t.Helper()
	z := documents(t, s, user)
	defer z.Close()
	tx, _, err := s.BeginWrite(context.Background(), Caller{UserID: user, ConvID: "c"}, z, "f.txt", "f.txt", Edit{Tool: "Patch"})
	if err == nil {
		defer tx.Close()
		_, err = tx.WriteFile(Write{Size: int64(len(content)), Body: strings.NewReader(content)})
	}
	if err != nil {
		t.Fatalf("%s: write: %v", user, err)
	}
}

// docHistory is the number of versions of f.txt in user's Documents.
func docHistory(t *testing.T, s *Service, user string) int {
	t.Helper()
	z := documents(t, s, user)
	defer z.Close()
	r, err := s.Repo(z)
	if err != nil {
		t.Fatal(err)
	}
	defer r.Release()
	log, err := r.Log("f.txt", 100)
	if err != nil {
		t.Fatalf("%s: history: %v", user, err)
	}
	return len(log)
}

// openRepos is the number of open repositories, failing the test if one is still held.
func openRepos(t *testing.T, s *Service) int {
	t.Helper()
	s.repos.mu.Lock()
	defer s.repos.mu.Unlock()
	for space, o := range s.repos.m {
		if o.refs != 0 {
			t.Fatalf("%s is still held by %d caller(s) after every call returned", space, o.refs)
		}
	}
	return len(s.repos.m)
}

// However many users write, at most max repositories stay open, and a closed one reopens
// with its whole history.
func TestOpenRepositoriesAreBounded(t *testing.T) {
	t.Parallel()
	s, _ := testService(t, nil)
	s.repos.max = 4
	for round := range 2 {
		for i := range 10 {
			writeDoc(t, s, fmt.Sprintf("u%d", i), fmt.Sprintf("round %d\n", round))
			if n := openRepos(t, s); n > 4 {
				t.Fatalf("after user %d of round %d: %d repositories open, at most 4", i, round, n)
			}
		}
	}
	for i := range 10 {
		if n := docHistory(t, s, fmt.Sprintf("u%d", i)); n != 2 {
			t.Errorf("u%d: %d versions after its repository was closed and reopened, want 2", i, n)
		}
	}
}

// A repository somebody holds is never closed, even past the bound: the caller keeps using
// the same Repo, and every other user's writes still commit.
func TestRepositoryInUseIsNeverClosed(t *testing.T) {
	t.Parallel()
	s, _ := testService(t, nil)
	s.repos.max = 2
	writeDoc(t, s, "alice", "one\n")
	z := documents(t, s, "alice")
	defer z.Close()
	held, err := s.Repo(z)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		writeDoc(t, s, fmt.Sprintf("u%d", i), "x\n")
	}
	s.repos.mu.Lock()
	same, n := s.repos.m[z.Space] == held, len(s.repos.m)
	s.repos.mu.Unlock()
	if !same || n > 2 {
		t.Fatalf("held repository still open: %v; %d open (bound 2)", same, n)
	}
	if _, err := held.Log("f.txt", 0); err != nil {
		t.Fatalf("held repository unusable: %v", err)
	}
	writeDoc(t, s, "alice", "two\n") // shares the held Repo
	held.Release()
	if n := docHistory(t, s, "alice"); n != 2 {
		t.Errorf("alice: %d versions, want 2", n)
	}
}

// Repositories unused for the idle time are closed while the server serves others (here a
// user whose repository is already open: the sweep runs on release too); the gates go with
// them, so nothing keyed by a user stays behind.
func TestIdleRepositoriesAreClosed(t *testing.T) {
	t.Parallel()
	s, _ := testService(t, nil)
	s.repos.idle = 2 * time.Second
	for i := range 3 {
		writeDoc(t, s, fmt.Sprintf("u%d", i), "x\n")
	}
	if n := openRepos(t, s); n != 3 {
		t.Fatalf("%d repositories open, want 3", n)
	}
	time.Sleep(2600 * time.Millisecond)
	writeDoc(t, s, "u0", "y\n")
	if n := openRepos(t, s); n != 1 {
		t.Errorf("%d repositories open after two stayed idle, want 1", n)
	}
	if n := docHistory(t, s, "u1"); n != 1 {
		t.Errorf("u1: %d versions after its idle repository was closed, want 1", n)
	}
}

// TestFirstLockRecoversWhatADeadWriterLeft: vcs.Open removes no lock file (on a shared
// volume it may be another host's live one); the first holder of the repository's key after
// the opening does, so a server restarted after a crash mid-commit commits again at once.
func TestFirstLockRecoversWhatADeadWriterLeft(t *testing.T) {
	t.Parallel()
	s, base := testService(t, nil)
	writeDoc(t, s, "alice", "one\n")
	s.closeRepos()
	lockFile := filepath.Join(base, "users", "alice", "Documents", "repo.git", "index.lock")
	if err := os.WriteFile(lockFile, []byte("left by a writer killed mid-commit"), 0o600); err != nil {
		t.Fatal(err)
	}
	writeDoc(t, s, "alice", "two\n")
	if n := docHistory(t, s, "alice"); n != 2 {
		t.Fatalf("%d versions of f.txt, want 2", n)
	}
	if _, err := os.Stat(lockFile); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("index.lock still there: %v", err)
	}
}
