package core

import (
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/fileshed/fileshed/core/confine"
)

// The working folder (encryption.work_dir) holds what needs plaintext on disk for the length
// of one call: the decrypted copies (Mirror) and shed_sqlite's CSV exports. Each start of a
// server keeps them in a folder of its own, which a clean stop removes and a later sweep
// removes once the start's replica is dead.

// WorkDir is where mirrors live: encryption.work_dir, or {storage}/.plain.
func (s *Service) WorkDir() string {
	if d := s.cfg.Encryption.WorkDir; d != "" {
		return d
	}
	return s.Layout().Plain()
}

// WorkTemp makes a fresh private folder for one call's plaintext (a mirror, a CSV export)
// in this start's folder of the working folder (startDir). The caller removes it.
func (s *Service) WorkTemp() (string, error) {
	dir := s.startDir()
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", err
	}
	return os.MkdirTemp(dir, "m-")
}

// startDir is this start's folder of the working folder: "run-", the replica's id, "-" and a
// random text (startTag), made 0700 by the first copy. Every decrypted copy of this start
// lives in it, so that one folder tells whose copies they are: a clean stop removes it, and
// a sweep removes it once its replica is dead, never while it lives.
func (s *Service) startDir() string {
	return filepath.Join(s.WorkDir(), "run-"+confine.Replica()+"-"+s.startTag)
}

// sweepWorkDirOf removes from the working folder the copies of the starts that stale picks:
// those a crash left behind. A start's folder carries the replica that made it; copies of an
// older fileshed lie loose ("m-" + id + "-" + random, "m-" + random before replica ids).
// Why a start's folder is judged by its replica's life only, never by its age: its time
// changes only when a copy is made in it, and a replica may serve a day without one.
func (s *Service) sweepWorkDirOf(stale stale) {
	entries, _ := os.ReadDir(s.WorkDir())
	never := time.Now().Add(tempMaxAge) // no age: no hard bound applies
	own := filepath.Base(s.startDir())
	for _, e := range entries {
		name := e.Name()
		if rest, ok := strings.CutPrefix(name, "run-"); ok && name != own {
			if id, _, tagged := strings.Cut(rest, "-"); tagged && stale(id, never) {
				_ = os.RemoveAll(filepath.Join(s.WorkDir(), name))
			}
			continue
		}
		rest, ok := strings.CutPrefix(name, "m-")
		if !ok {
			continue
		}
		id, _, tagged := strings.Cut(rest, "-")
		if !tagged {
			id = ""
		}
		if fi, err := e.Info(); err == nil && stale(id, fi.ModTime()) {
			_ = os.RemoveAll(filepath.Join(s.WorkDir(), name))
		}
	}
}

// foreignStarts reports whether the working folder holds copies of another start than this
// one (which a replica's housekeeping then sweeps).
func (s *Service) foreignStarts() bool {
	entries, _ := os.ReadDir(s.WorkDir())
	own := filepath.Base(s.startDir())
	for _, e := range entries {
		if n := e.Name(); n != own && (strings.HasPrefix(n, "run-") || strings.HasPrefix(n, "m-")) {
			return true
		}
	}
	return false
}
