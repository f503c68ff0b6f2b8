package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// Names in state_identity (migration 9).
const (
	// IdentityDatabase is the state database's random id, written by the first server that
	// opens it; a storage's record names it.
	IdentityDatabase = "database"
	// IdentityStorage is the id of the storage directory the database serves (its record's).
	IdentityStorage = "storage"
	// IdentityMasterKey and IdentityLinksSecret are fingerprints of the encryption master
	// key and of the links secret of the servers of this state.
	IdentityMasterKey   = "fingerprint.master_key"
	IdentityLinksSecret = "fingerprint.links_secret"
)

// Identity returns the value recorded under name, recording fresh first when there is none
// (the first writer wins: servers starting together read back the same value). fresh ""
// only reads: then ok reports whether there is a value.
func (d *DB) Identity(ctx context.Context, name, fresh string) (value string, ok bool, err error) {
	if fresh != "" {
		if _, err := d.durableExec(ctx, `INSERT INTO state_identity (name, value, updated_us) VALUES ($1, $2, $3)
			ON CONFLICT (name) DO NOTHING`, name, fresh, time.Now().UnixMicro()); err != nil {
			return "", false, fmt.Errorf("store: record the state's %s: %w", name, err)
		}
	}
	err = d.queryRow(ctx, `SELECT value FROM state_identity WHERE name = $1`, name).Scan(&value)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		return "", false, fmt.Errorf("store: read the state's %s: %w", name, err)
	}
	return value, true, nil
}

// SetIdentity records value under name, replacing what was there.
func (d *DB) SetIdentity(ctx context.Context, name, value string) error {
	if _, err := d.durableExec(ctx, `INSERT INTO state_identity (name, value, updated_us) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO UPDATE SET value = excluded.value, updated_us = excluded.updated_us`,
		name, value, time.Now().UnixMicro()); err != nil {
		return fmt.Errorf("store: record the state's %s: %w", name, err)
	}
	return nil
}

// Exclusive holds a lock that servers of the state database take one at a time (an advisory
// lock on a connection of its own, PostgreSQL) for a check that spans the database and the
// storage directory, until release is called. On SQLite it is nothing: one server runs alone
// (its storage lock is exclusive).
func (d *DB) Exclusive(ctx context.Context) (release func(), err error) {
	if d.dialect != Postgres {
		return func() {}, nil
	}
	c, err := d.sql.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("store: identity lock: %w", err)
	}
	s := &Session{c: c, db: d}
	if _, err := s.conn().exec(ctx, `SELECT pg_advisory_lock($1, $2)`, advisoryNamespace, identityLock); err != nil {
		s.Close()
		return nil, fmt.Errorf("store: identity lock: %w", err)
	}
	return func() { s.Close() }, nil
}
