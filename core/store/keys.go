package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"
)

// UserKey is a user's wrapped data key (encryption at rest).
type UserKey struct {
	UserID  string
	Wrapped []byte
	Salt    []byte
	// KeyID names the master key that wrapped it.
	KeyID string
	// State is "active", or "disabled" once shed_encryption disable decrypted the files.
	State string
}

// ErrNoKey is returned by UserKey for a user without encryption.
var ErrNoKey = errors.New("store: no key for this user")

// UserKey returns the user's wrapped key, or ErrNoKey.
func (d *DB) UserKey(ctx context.Context, userID string) (UserKey, error) {
	k := UserKey{UserID: userID}
	err := d.queryRow(ctx, `SELECT wrapped, salt, key_id, state FROM user_keys WHERE user_id = $1`,
		userID).Scan(&k.Wrapped, &k.Salt, &k.KeyID, &k.State)
	if errors.Is(err, sql.ErrNoRows) {
		return k, ErrNoKey
	}
	if err != nil {
		return k, fmt.Errorf("store: user key: %w", err)
	}
	return k, nil
}

// AddUserKey stores a new user key; false when the user already has one.
func (d *DB) AddUserKey(ctx context.Context, k UserKey) (bool, error) {
	now := time.Now().UnixMicro()
	res, err := d.durableExec(ctx, `INSERT INTO user_keys (user_id, wrapped, salt, key_id, state, created_us, updated_us)
		VALUES ($1, $2, $3, $4, 'active', $5, $5) ON CONFLICT (user_id) DO NOTHING`,
		k.UserID, k.Wrapped, k.Salt, k.KeyID, now)
	if err != nil {
		return false, fmt.Errorf("store: add user key: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// SetUserKeyState moves the user's key to state ("active" or "disabled").
func (d *DB) SetUserKeyState(ctx context.Context, userID, state string) error {
	_, err := d.durableExec(ctx, `UPDATE user_keys SET state = $1, updated_us = $2 WHERE user_id = $3`,
		state, time.Now().UnixMicro(), userID)
	if err != nil {
		return fmt.Errorf("store: set user key state: %w", err)
	}
	return nil
}

// DeleteUserKey forgets the user's key (after every file was decrypted).
func (d *DB) DeleteUserKey(ctx context.Context, userID string) error {
	if _, err := d.durableExec(ctx, `DELETE FROM user_keys WHERE user_id = $1`, userID); err != nil {
		return fmt.Errorf("store: delete user key: %w", err)
	}
	return nil
}

// UserKeysNotWrappedBy counts the user keys wrapped by another master key than keyID (a
// wrong or missing master key at start).
func (d *DB) UserKeysNotWrappedBy(ctx context.Context, keyID string) (int, error) {
	var n int
	err := d.queryRow(ctx, `SELECT COUNT(*) FROM user_keys WHERE key_id <> $1`, keyID).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("store: count user keys: %w", err)
	}
	return n, nil
}

// UserKeys returns every user's wrapped key, by user id.
func (d *DB) UserKeys(ctx context.Context) ([]UserKey, error) {
	rows, err := d.query(ctx, `SELECT user_id, wrapped, salt, key_id, state FROM user_keys ORDER BY user_id`)
	if err != nil {
		return nil, fmt.Errorf("store: list user keys: %w", err)
	}
	defer rows.Close()
	var keys []UserKey
	for rows.Next() {
		var k UserKey
		if err := rows.Scan(&k.UserID, &k.Wrapped, &k.Salt, &k.KeyID, &k.State); err != nil {
			return nil, fmt.Errorf("store: list user keys: %w", err)
		}
		keys = append(keys, k)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("store: list user keys: %w", err)
	}
	return keys, nil
}

// RewrapUserKey replaces the wrapping of a user's key, if it is still the one named
// oldKeyID (a concurrent rotation changes nothing twice); false when it was not.
func (d *DB) RewrapUserKey(ctx context.Context, k UserKey, oldKeyID string) (bool, error) {
	res, err := d.durableExec(ctx, `UPDATE user_keys SET wrapped = $1, salt = $2, key_id = $3, updated_us = $4
		WHERE user_id = $5 AND key_id = $6`, k.Wrapped, k.Salt, k.KeyID, time.Now().UnixMicro(), k.UserID, oldKeyID)
	if err != nil {
		return false, fmt.Errorf("store: rewrap user key: %w", err)
	}
	n, _ := res.RowsAffected()
	return n == 1, nil
}

// SharedKey returns the key stored under name, storing fresh first when there is none. The
// first writer wins: servers starting together on one state database each offer a key of
// their own, and all of them read back the same one.
func (d *DB) SharedKey(ctx context.Context, name string, fresh []byte) ([]byte, error) {
	if _, err := d.durableExec(ctx, `INSERT INTO server_keys (name, value, created_us) VALUES ($1, $2, $3)
		ON CONFLICT (name) DO NOTHING`, name, fresh, time.Now().UnixMicro()); err != nil {
		return nil, fmt.Errorf("store: store the %s key: %w", name, err)
	}
	var key []byte
	if err := d.queryRow(ctx, `SELECT value FROM server_keys WHERE name = $1`, name).Scan(&key); err != nil {
		return nil, fmt.Errorf("store: read the %s key: %w", name, err)
	}
	return key, nil
}
