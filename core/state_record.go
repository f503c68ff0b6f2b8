package core

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/store"
	"github.com/fileshed/fileshed/core/valves"
)

// A storage knows its state (issue 32 #4). Ownership, keys, locks and links live in the
// state database, not beside the files: a server that opened the storage with another state
// (the SQLite file where replicas used PostgreSQL, another PostgreSQL database) would find
// none of them — owner_ro files writable by every member, encrypted users reading
// ciphertext and writing plaintext, links dead. So the storage records its state in
// StateRecordName at its first start, and the state database records the storage it
// serves (state_identity); a server whose state does not match both ways refuses to start
// and says what was recorded, what it was given and the command that moves the state
// (`fileshed admin state-copy`). A storage without a record (made by an older fileshed)
// adopts one at its next start, unless what it holds shows it served another state.

// StateRecordName is the storage's record of its state database, in the storage directory.
const StateRecordName = ".fileshed-state"

// StateRecord is what the storage records of its state.
type StateRecord struct {
	// Driver is state.driver: sqlite or postgres.
	Driver string `json:"driver"`
	// Storage is the storage directory's random id, which a PostgreSQL state records too.
	Storage string `json:"storage"`
	// Database is the PostgreSQL database's random id (state_identity); Where names it for
	// the operator (database and host, never the URL or its password).
	Database string `json:"database,omitempty"`
	Where    string `json:"where,omitempty"`
}

// ReadStateRecord reads the record of the storage base; ok is false when there is none.
func ReadStateRecord(base string) (rec StateRecord, ok bool, err error) {
	b, err := os.ReadFile(LayoutOf(base).StateRecord())
	if errors.Is(err, fs.ErrNotExist) {
		return rec, false, nil
	}
	if err != nil {
		return rec, false, fmt.Errorf("the storage's state record %s: %w", StateRecordName, err)
	}
	if err := json.Unmarshal(b, &rec); err != nil || rec.Driver == "" {
		return rec, false, fmt.Errorf("the storage's state record %s in %s is damaged (%v): it names the state database "+
			"this storage's ownership, keys, locks and links are in; restore it from a backup", StateRecordName, base, err)
	}
	return rec, true, nil
}

// WriteStateRecord replaces the record of the storage base, atomically.
func WriteStateRecord(base string, rec StateRecord) error {
	b, err := json.MarshalIndent(rec, "", "  ")
	if err != nil {
		return err
	}
	root, err := confine.New(base)
	if err != nil {
		return err
	}
	defer root.Close()
	_, err = root.WriteAtomic(StateRecordName, bytes.NewReader(append(b, '\n')), 0o600)
	return err
}

// randomID is a new random id for a storage or a state database.
func randomID() string { return rand.Text() }

// checkRecordBefore refuses, before the state database is opened, a driver the storage's
// record does not name, or a storage without a record that served another state.
func checkRecordBefore(cfg *valves.Config, base string) (StateRecord, bool, error) {
	rec, ok, err := ReadStateRecord(base)
	if err != nil {
		return rec, ok, err
	}
	driver := cfg.State.Driver
	if driver == "" {
		driver = store.SQLite
	}
	switch {
	case ok && rec.Driver != driver && driver == store.Postgres:
		return rec, ok, fmt.Errorf("this storage directory (%s) keeps its state in the SQLite file fileshed.sqlite, "+
			"and this server was given state.driver postgres: it would start with none of the storage's ownership, "+
			"encryption keys, locks and links. To move to replicas, stop the server and copy the state into an empty "+
			"PostgreSQL database first: fileshed admin state-copy --to postgres://... (README \"From one server to replicas\"); "+
			"else start with state.driver sqlite (FILESHED_STATE_DRIVER)", base)
	case ok && rec.Driver != driver:
		return rec, ok, fmt.Errorf("this storage directory (%s) keeps its state in PostgreSQL (%s), and this server "+
			"was given state.driver %s: it would start with none of the storage's ownership, encryption keys, locks "+
			"and links. Start it with state.driver postgres and the replicas' state.url (FILESHED_STATE_DRIVER, "+
			"FILESHED_STATE_URL_FILE)", base, orUnknown(rec.Where), driver)
	case ok:
		return rec, ok, nil
	}
	// No record: a storage of an older fileshed, or a new one.
	sqliteUsed := false
	if fi, err := os.Stat(LayoutOf(base).StateFile()); err == nil && fi.Size() > 0 {
		sqliteUsed = true
	}
	_, clockErr := os.Stat(LayoutOf(base).Clock())
	switch {
	case driver == store.Postgres && sqliteUsed:
		return rec, ok, fmt.Errorf("this storage directory (%s) holds the state of a server with state.driver sqlite "+
			"(fileshed.sqlite), and this server was given state.driver postgres: it would start with none of the "+
			"storage's ownership, encryption keys, locks and links. Stop the server and copy the state first: "+
			"fileshed admin state-copy --to postgres://... (README \"From one server to replicas\"); "+
			"else start with state.driver sqlite (FILESHED_STATE_DRIVER)", base)
	case driver == store.SQLite && !sqliteUsed && clockErr == nil:
		return rec, ok, fmt.Errorf("this storage directory (%s) was served by replicas with state.driver postgres, "+
			"and this server was given state.driver sqlite: it would start with none of the storage's ownership, "+
			"encryption keys, locks and links. Start it with state.driver postgres and the replicas' state.url "+
			"(FILESHED_STATE_DRIVER, FILESHED_STATE_URL_FILE)", base)
	}
	return rec, false, nil
}

// orUnknown is s, or "a database not named" when s is empty.
func orUnknown(s string) string {
	if s == "" {
		return "a database not named"
	}
	return s
}

// checkRecordAfter compares the storage's record with the opened state database, both ways,
// and adopts a record when there is none (write false: an operator's command only reads).
// With the SQLite state the database is in the storage: only the record's driver matters.
func (s *Service) checkRecordAfter(ctx context.Context, rec StateRecord, recorded, write bool) error {
	if s.cfg.State.Driver != store.Postgres {
		if !recorded && write {
			return WriteStateRecord(s.base, StateRecord{Driver: store.SQLite, Storage: randomID()})
		}
		return nil
	}
	release, err := s.db.Exclusive(ctx) // replicas starting together adopt one record
	if err != nil {
		return fmt.Errorf("state database: %w", err)
	}
	defer release()
	if !recorded { // another replica may have adopted it while this one waited
		var err error
		if rec, recorded, err = ReadStateRecord(s.base); err != nil {
			return err
		}
	}
	fresh := ""
	if write {
		fresh = randomID()
	}
	dbID, _, err := s.db.Identity(ctx, store.IdentityDatabase, fresh)
	if err != nil {
		return fmt.Errorf("state database: %w", err)
	}
	storage, served, err := s.db.Identity(ctx, store.IdentityStorage, "")
	if err != nil {
		return fmt.Errorf("state database: %w", err)
	}
	where := store.Describe(s.cfg.State.URL)
	switch {
	case recorded && rec.Database != dbID:
		return fmt.Errorf("this storage directory (%s) keeps its state in another PostgreSQL database (%s, id %s) than "+
			"state.url names (%s, id %s): the server would start with none of the storage's ownership, encryption keys, "+
			"locks and links. Give it the replicas' state.url (FILESHED_STATE_URL_FILE)", s.base, orUnknown(rec.Where), rec.Database, where, orUnknown(dbID))
	case served && (!recorded || rec.Storage != storage):
		return fmt.Errorf("the PostgreSQL database of state.url (%s) holds the state of another storage directory (id %s), "+
			"not of %s: the server would apply that storage's ownership, keys, locks and links to these files. Give each "+
			"storage a database of its own (an empty one: the first server records it)", where, storage, s.base)
	case recorded || !write:
		return nil
	}
	rec = StateRecord{Driver: store.Postgres, Storage: randomID(), Database: dbID, Where: where}
	if err := s.db.SetIdentity(ctx, store.IdentityStorage, rec.Storage); err != nil {
		return fmt.Errorf("state database: %w", err)
	}
	return WriteStateRecord(s.base, rec)
}

// secretFingerprint names a secret without revealing it: HMAC-SHA256 keyed by the secret
// over a constant naming its use, cut to 8 bytes; "none" when the secret is empty.
func secretFingerprint(secret, use string) string {
	if secret == "" {
		return "none"
	}
	mac := hmac.New(sha256.New, []byte(secret))
	mac.Write([]byte("fileshed fingerprint v1: " + use))
	return hex.EncodeToString(mac.Sum(nil)[:8])
}

// fingerprints are this server's fingerprints of the settings every server of a state must
// share, by state_identity name, with the valve each names.
func fingerprints(cfg *valves.Config) []fingerprint {
	return []fingerprint{
		{store.IdentityMasterKey, "encryption.master_key", secretFingerprint(cfg.Encryption.MasterKey, "encryption.master_key")},
		{store.IdentityLinksSecret, "links.secret", secretFingerprint(cfg.Links.Secret, "links.secret")},
	}
}

// fingerprint is one shared setting's fingerprint.
type fingerprint struct{ name, valve, value string }

// checkFingerprints refuses to start a replica whose encryption master key or links secret
// differs from the one the state database recorded at its first start (users' keys would
// fail both ways, links made on one replica would answer 404 on the other). With the SQLite
// state (one server) it records this server's, which `state-copy` carries to the replicas.
func (s *Service) checkFingerprints(ctx context.Context) error {
	if s.cfg.State.Driver != store.Postgres {
		return s.recordFingerprints(ctx, "")
	}
	for _, f := range fingerprints(s.cfg) {
		got, _, err := s.db.Identity(ctx, f.name, f.value)
		if err != nil {
			return fmt.Errorf("state database: %w", err)
		}
		if got != f.value {
			return fmt.Errorf("%s (%s) differs from the one the servers of this state database use (fingerprint %s recorded, "+
				"this server's %s): give every replica the same value. After a deliberate change, stop every replica, then "+
				"record the new value with fileshed admin state-fingerprints --record (for the master key, "+
				"fileshed admin encryption rotate first re-wraps the users' keys and records it)",
				f.valve, valves.Where(f.valve), got, f.value)
		}
	}
	return nil
}

// AdminRecordFingerprints records this configuration's fingerprints of the encryption master
// key and the links secret in the state database (`fileshed admin state-fingerprints
// --record`), after a deliberate change. Refused while a server runs on the storage.
func (s *Service) AdminRecordFingerprints(ctx context.Context) error {
	l, err := lockStorage(s.base, holderOperator)
	if err != nil {
		return err
	}
	defer l.Close()
	return s.recordFingerprints(ctx, "")
}

// recordFingerprints records this configuration's fingerprint named only, or every one
// (only "").
func (s *Service) recordFingerprints(ctx context.Context, only string) error {
	for _, f := range fingerprints(s.cfg) {
		if only != "" && f.name != only {
			continue
		}
		if err := s.db.SetIdentity(ctx, f.name, f.value); err != nil {
			return fmt.Errorf("state database: %w", err)
		}
	}
	return nil
}
