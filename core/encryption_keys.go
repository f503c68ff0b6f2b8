package core

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/crypt"
	"github.com/fileshed/fileshed/core/store"
)

// keyring holds the server's master key and the users' unwrapped data keys.
//
// Threat model (README "Encryption at rest"): a user's files in Storage and Uploads are
// sealed with the user's random data key; the data key is stored in the state database
// wrapped (AES-256-GCM) by a key derived (HKDF-SHA256) from the master key, a per-user salt
// and the user id. The master key lives outside the storage directory, so a stolen disk or
// backup, database included, reveals names and sizes but no content.
type keyring struct {
	master []byte
	id     string // names the master key in user_keys.key_id ("" when there is none)
	mu     sync.Mutex
	users  map[string]UserKey
	// gen counts forgetUserKey calls: a load that saw another generation is not cached (it
	// may predate the setup or disable that forgot the user).
	gen uint64
}

// UserKey is what the keyring knows of one user: no row (key nil, state ""), or the
// unwrapped key and its state, or why it cannot be used.
type UserKey struct {
	Key   *crypt.Key
	State string // "active" or "disabled"
	Err   error
	// version is what of the row it was read from tells a change: its state and wrapped key
	// ("" for no row). Setup, disable, setup again and a rotation each change it.
	version string
}

// newKeyring keeps master (may be empty: no encryption can be set up).
func newKeyring(master string) *keyring {
	k := &keyring{users: map[string]UserKey{}}
	if master != "" {
		k.master, k.id = []byte(master), masterKeyID([]byte(master))
	}
	return k
}

// masterKeyID names a master key without revealing it (user_keys.key_id).
func masterKeyID(master []byte) string {
	mac := hmac.New(sha256.New, master)
	mac.Write([]byte("fileshed master key id v1"))
	return hex.EncodeToString(mac.Sum(nil)[:8])
}

// UserKey returns the caller's key state, unwrapping it once per change of the key. Every
// call of a Storage or Uploads zone asks, so the lock is never held across the database
// read. One server (SQLite state) trusts its cache: only its own setup and disable change
// the key, and they forget it. Replicas (PostgreSQL) read the row on every call and keep the
// unwrapped key while the row is unchanged: after a setup on another replica this one
// seals the next write, instead of writing plaintext until it restarts.
func (s *Service) UserKey(ctx context.Context, userID string) UserKey {
	k := s.keys
	k.mu.Lock()
	u, ok := k.users[userID]
	gen := k.gen
	k.mu.Unlock()
	if ok && s.cfg.State.Driver != store.Postgres {
		return u
	}
	row, err := s.db.UserKey(ctx, userID)
	if ok && err == nil && u.version == userKeyVersion(row) || ok && errors.Is(err, store.ErrNoKey) && u.version == "" {
		return u
	}
	u = s.unwrapUserKey(userID, row, err)
	if u.Err == nil || !isTransient(u.Err) {
		k.mu.Lock()
		if k.gen == gen {
			k.users[userID] = u
		}
		k.mu.Unlock()
	}
	return u
}

// userKeyVersion is UserKey.version of a stored row.
func userKeyVersion(row store.UserKey) string { return row.State + ":" + string(row.Wrapped) }

// isTransient tells a database failure (retry later) from a verdict on the key.
func isTransient(err error) bool {
	e, ok := AsError(err)
	return !ok || e.Code == InternalError
}

// unwrapUserKey is what the keyring knows of userID from the read of its row (row, err).
func (s *Service) unwrapUserKey(userID string, row store.UserKey, err error) UserKey {
	if errors.Is(err, store.ErrNoKey) {
		return UserKey{}
	}
	if err != nil {
		return UserKey{Err: Errf(InternalError, "Cannot read your encryption key").Because(err)}
	}
	u := UserKey{State: row.State, version: userKeyVersion(row)}
	switch {
	case s.keys.master == nil:
		u.Err = Errf(EncryptionKeyRequired, "Your files are encrypted but the server has no encryption master key").
			WithHint("Ask the administrator to configure encryption.master_key (the one your files were encrypted with)")
	case row.KeyID != s.keys.id:
		u.Err = Errf(InvalidEncryptionKey, "The server's encryption master key is not the one your files were encrypted with").
			WithHint("Ask the administrator to restore the original encryption.master_key; nothing was changed")
	default:
		kek := crypt.DeriveKEK(s.keys.master, userID, row.Salt)
		key, err := crypt.Unwrap(&kek, row.Wrapped, userID)
		if err != nil {
			u.Err = Errf(InvalidEncryptionKey, "Your encryption key cannot be unwrapped with the server's master key").
				Because(err).WithHint("Ask the administrator to check encryption.master_key; nothing was changed")
		} else {
			u.Key = &key
		}
	}
	return u
}

// ForgetUserKey drops the cached state after setup or disable changed it.
func (s *Service) ForgetUserKey(userID string) {
	s.keys.mu.Lock()
	delete(s.keys.users, userID)
	s.keys.gen++
	s.keys.mu.Unlock()
}

// EncryptionMismatch counts the users whose data key the configured master key cannot
// unwrap (none configured, or another one): the server refuses their Storage and Uploads
// with a clear error instead of writing anything. main logs it at start.
func (s *Service) EncryptionMismatch(ctx context.Context) (int, error) {
	return s.db.UserKeysNotWrappedBy(ctx, s.keys.id)
}

// NewUserKey creates, wraps and stores a fresh data key for userID.
func (s *Service) NewUserKey(ctx context.Context, userID string) (bool, error) {
	dek, err := crypt.NewKey()
	if err != nil {
		return false, Errf(InternalError, "Cannot create an encryption key").Because(err)
	}
	row, err := wrapUserKey(s.keys.master, userID, &dek)
	if err != nil {
		return false, Errf(InternalError, "Cannot wrap the encryption key").Because(err)
	}
	added, err := s.db.AddUserKey(ctx, row)
	if err != nil {
		return false, Errf(InternalError, "Cannot store the encryption key").Because(err)
	}
	return added, nil
}

// wrapUserKey wraps dek for userID under master, with a fresh salt.
func wrapUserKey(master []byte, userID string, dek *crypt.Key) (store.UserKey, error) {
	salt := make([]byte, 32)
	if _, err := rand.Read(salt); err != nil {
		return store.UserKey{}, err
	}
	kek := crypt.DeriveKEK(master, userID, salt)
	wrapped, err := crypt.Wrap(&kek, dek, userID)
	if err != nil {
		return store.UserKey{}, err
	}
	return store.UserKey{UserID: userID, Wrapped: wrapped, Salt: salt, KeyID: masterKeyID(master)}, nil
}

// RotationReport is what AdminRotateMasterKey did.
type RotationReport struct {
	Rotated int `json:"rotated"`
	// Already counts keys wrapped by the new master key (a rotation run before).
	Already int `json:"already"`
	// Unknown lists users whose key neither master key wraps.
	Unknown []string `json:"unknown"`
}

// AdminRotateMasterKey re-wraps every user's data key from the master key old to the
// configured one (the files do not change: only the wrapping does). Each key is replaced in
// one statement, so an interrupted rotation is resumed by running it again. Restart the
// server with the new key afterwards.
func (s *Service) AdminRotateMasterKey(ctx context.Context, old string) (RotationReport, error) {
	rep := RotationReport{Unknown: []string{}}
	if s.keys.master == nil || old == "" {
		return rep, errors.New("both the new encryption.master_key and the old key are needed")
	}
	oldID := masterKeyID([]byte(old))
	rows, err := s.db.UserKeys(ctx)
	if err != nil {
		return rep, err
	}
	for _, row := range rows {
		switch row.KeyID {
		case s.keys.id:
			rep.Already++
			continue
		case oldID:
		default:
			rep.Unknown = append(rep.Unknown, row.UserID)
			continue
		}
		kek := crypt.DeriveKEK([]byte(old), row.UserID, row.Salt)
		dek, err := crypt.Unwrap(&kek, row.Wrapped, row.UserID)
		if err != nil {
			return rep, fmt.Errorf("user %s: the old key does not unwrap its data key: %w", row.UserID, err)
		}
		next, err := wrapUserKey(s.keys.master, row.UserID, &dek)
		if err != nil {
			return rep, err
		}
		done, err := s.db.RewrapUserKey(ctx, next, oldID)
		if err != nil {
			return rep, err
		}
		if done {
			rep.Rotated++
		}
		s.ForgetUserKey(row.UserID)
	}
	if len(rep.Unknown) == 0 { // the servers restarted with the new key start (checkFingerprints)
		if err := s.recordFingerprints(ctx, store.IdentityMasterKey); err != nil {
			return rep, err
		}
	}
	return rep, nil
}

// sealZone applies the user's key to a Storage or Uploads zone: active encrypts what is
// written and decrypts what is read; disabled only decrypts (files sealed before).
func (s *Service) sealZone(ctx context.Context, userID string, fsys *confine.Fs) error {
	u := s.UserKey(ctx, userID)
	switch {
	case u.State == "":
		return nil
	case u.Err != nil && u.State == "active":
		return u.Err
	case u.Err != nil:
		fsys.RefuseSealed() // disabled and no usable key: plain files read, a stray sealed one is refused
	case u.State == "active":
		fsys.Seal(u.Key)
	default:
		fsys.ReadSealed(u.Key)
	}
	return nil
}
