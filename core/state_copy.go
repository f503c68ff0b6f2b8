package core

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/fileshed/fileshed/core/store"
)

// StateCopy copies the SQLite state of the storage directory base (fileshed.sqlite) into the
// empty PostgreSQL database of toURL (`fileshed admin state-copy --to`): every table, all or
// nothing, each table's rows counted in the target; then the database records the storage
// it serves and the storage's record names the database, so that replicas start on it and
// a server with the SQLite state no longer does. Refused while a server runs on the storage,
// for a storage whose state is already in PostgreSQL, and for a target that holds rows.
// fileshed.sqlite is left as it was.
func StateCopy(ctx context.Context, base, toURL string) (store.CopyReport, error) {
	var rep store.CopyReport
	l, err := lockStorage(base, holderOperator)
	if err != nil {
		return rep, err
	}
	defer l.Close()
	rec, recorded, err := ReadStateRecord(base)
	switch {
	case err != nil:
		return rep, err
	case recorded && rec.Driver != store.SQLite:
		return rep, fmt.Errorf("the state of %s is already in PostgreSQL (%s): nothing to copy", base, orUnknown(rec.Where))
	}
	path := LayoutOf(base).StateFile()
	if _, err := os.Stat(path); err != nil {
		return rep, fmt.Errorf("%s has no SQLite state (fileshed.sqlite) to copy: %w", base, errors.Unwrap(err))
	}
	from, err := store.Open(path)
	if err != nil {
		return rep, fmt.Errorf("the SQLite state: %w", err)
	}
	defer from.Close()
	to, err := store.OpenSource(store.Source{Driver: store.Postgres, URL: toURL})
	if err != nil {
		return rep, fmt.Errorf("the target database: %w", err)
	}
	defer to.Close()
	if rep, err = store.CopyState(ctx, from, to); err != nil {
		return rep, err
	}
	if rec.Storage == "" {
		rec.Storage = randomID()
	}
	dbID, _, err := to.Identity(ctx, store.IdentityDatabase, randomID())
	if err != nil {
		return rep, err
	}
	if err := to.SetIdentity(ctx, store.IdentityStorage, rec.Storage); err != nil {
		return rep, err
	}
	rec = StateRecord{Driver: store.Postgres, Storage: rec.Storage, Database: dbID, Where: store.Describe(toURL)}
	if err := WriteStateRecord(base, rec); err != nil {
		return rep, fmt.Errorf("the state is copied, but the storage's record %s could not be written (%w): "+
			"empty the target database (DROP and CREATE it) and run state-copy again", StateRecordName, err)
	}
	return rep, nil
}
