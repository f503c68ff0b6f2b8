package core

import (
	"fmt"
	"path/filepath"
	"strings"
	"sync"

	"github.com/fileshed/fileshed/core/vcs"
)

// repos holds one vcs.Repo per versioned space for the life of the process: the repository
// lock only protects anything if every writer shares the same Repo.
type repos struct {
	mu sync.Mutex
	m  map[string]*vcs.Repo
}

// repo opens (once) the repository of a versioned zone: the work tree is the zone's data
// directory, the git directory sits beside it, outside the zone, so nothing a user command
// writes can change git's configuration or hooks.
func (s *Service) repo(z *Zone) (*vcs.Repo, error) {
	s.repos.mu.Lock()
	defer s.repos.mu.Unlock()
	if r, ok := s.repos.m[z.space]; ok {
		return r, nil
	}
	r, err := vcs.Open(filepath.Join(z.space, "repo.git"), z.Fs.Dir())
	if err != nil {
		return nil, Errf(ExecutionError, "The %s repository cannot be opened", z.Name).Because(err).
			WithHint("Run shed_maintenance to repair the repository")
	}
	if s.repos.m == nil {
		s.repos.m = map[string]*vcs.Repo{}
	}
	s.repos.m[z.space] = r
	return r, nil
}

// Change is what a modifying operation did: the zone-relative paths it touched (created,
// modified, deleted or renamed, both sides) — the hook point of versioning.
type Change struct {
	Paths []string
	// All asks for full change detection instead of Paths (after shed_exec).
	All bool
}

// mutate runs a modifying operation. In versioned zones it holds the repository lock across
// the write and the commit (so a concurrent full commit never sweeps a half-done change under
// another message) and commits what fn reports, with the caller as author; message defaults
// to "tool: path". Empty changes make no commit. It returns the commit hash ("" if none).
func (s *Service) mutate(c Caller, z *Zone, tool, message string, fn func() (Change, error)) (string, error) {
	if !z.Versioned {
		_, err := fn()
		return "", err
	}
	r, err := s.repo(z)
	if err != nil {
		return "", err
	}
	l, err := r.Lock()
	if err != nil {
		return "", Errf(ExecutionError, "The %s repository is busy or damaged", z.Name).Because(err).
			WithHint("Retry, or run shed_maintenance to repair the repository")
	}
	defer l.Unlock()
	ch, err := fn()
	if err != nil || (!ch.All && len(ch.Paths) == 0) {
		return "", err
	}
	if message == "" {
		message = tool
		if len(ch.Paths) > 0 {
			message = fmt.Sprintf("%s: %s", tool, strings.Join(ch.Paths, ", "))
		}
	}
	author := vcs.Signature{Name: c.Name, Email: c.Email}
	if author.Name == "" {
		author.Name = c.UserID
	}
	if author.Email == "" {
		author.Email = c.UserID + "@fileshed"
	}
	var hash string
	if ch.All {
		hash, err = l.CommitAll(author, message)
	} else {
		hash, err = l.CommitPaths(ch.Paths, author, message)
	}
	if err != nil {
		return "", Errf(ExecutionError, "The change was written but not committed").Because(err).
			WithHint("Run shed_maintenance to repair the repository; the file itself is saved")
	}
	return hash, nil
}

// closeRepos releases every open repository (Service.Close).
func (s *Service) closeRepos() {
	s.repos.mu.Lock()
	defer s.repos.mu.Unlock()
	for k, r := range s.repos.m {
		_ = r.Close()
		delete(s.repos.m, k)
	}
}
