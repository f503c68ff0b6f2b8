package core

import (
	"context"
	"strings"
)

// SQLite's companion files are the database. SQLite keeps X-wal (the write-ahead log),
// X-journal (the rollback journal) and X-shm (the index of the log) beside a database X,
// and whoever opens X next applies what they hold: a log's frames are read as pages of X
// (and copied into X at the next checkpoint), a "hot" journal is rolled back into X. So in
// a group zone a member who may not write X must not create or change its companions
// either: checkGroupWrite applies X's record to them (every tool, unzip's entries), the
// shed_exec guard removes those a command made, and a companion that still reached the
// folder (planted while X was open to every member, or left by a crash) is removed before
// shed_sqlite opens a protected X.

// CompanionOf returns the database whose companion rel is (zone-relative, clean).
func CompanionOf(rel string) (string, bool) {
	for _, j := range Journals {
		if db, ok := strings.CutSuffix(rel, j); ok && db != "" && !strings.HasSuffix(db, "/") {
			return db, true
		}
	}
	return "", false
}

// checkCompanion refuses kind on key (the ownership key of a path) when it is a companion
// of a database that c may not write. nil when key is no companion, or its database has no
// record.
func (s *Service) checkCompanion(ctx context.Context, c Caller, z *Zone, key string) error {
	db, ok := CompanionOf(key)
	if !ok {
		return nil
	}
	o, found, err := s.db.Ownership(ctx, z.GroupID, PhysicalRel(z, db))
	if err != nil {
		return OwnershipErr(err)
	}
	if !found || !EntryExists(z, o.Path) {
		return nil
	}
	// Creating, changing, moving or deleting a companion changes what the database holds:
	// it is a write of the database, whatever the kind of the operation on the file.
	e := refusal(c, o, WriteModify)
	if e == nil {
		return nil
	}
	e.Message = key + " is part of the SQLite database " + o.Path + ". " + e.Message
	return e.With("path", key).With("database", o.Path).With("zone", z.Label).
		WithHint("SQLite applies %s to %s: only who may write the database may write it (through shed_sqlite)", key, o.Path)
}

// Journals are the files SQLite keeps beside a database.
var Journals = []string{"-wal", "-journal", "-shm"}
