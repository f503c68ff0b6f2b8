package encryption

import (
	"context"
	"fmt"

	"github.com/fileshed/fileshed/core"
)

// EncryptionArgs are the arguments of shed_encryption_disable.
type EncryptionArgs struct {
	Confirm bool `json:"confirm,omitempty"`
}

// encryptedZones names the zones encryption covers, for messages.
var encryptedZones = []string{"storage", "uploads"}

// EncryptionSetup creates the caller's data key: from now on every file written to Storage
// and Uploads is encrypted; migrate encrypts the files written before.
func (s *Tools) EncryptionSetup(ctx context.Context, c core.Caller) (core.Result, error) {
	if !s.EncryptionAvailable() {
		return core.Result{}, core.Errf(core.EncryptionUnavailable, "Encryption at rest is not available on this server")
	}
	unlock, err := s.keyChange(ctx, c.UserID)
	if err != nil {
		return core.Result{}, err
	}
	defer unlock()
	u := s.UserKey(ctx, c.UserID)
	switch {
	case u.Err != nil:
		return core.Result{}, u.Err
	case u.State == "active":
		return core.Result{}, core.Errf(core.EncryptionAlreadyEnabled, "Encryption is already set up for your account")
	case u.State == "disabled":
		// The key was kept by disable: take it up again (files it sealed stay readable).
		if err := s.State().SetUserKeyState(ctx, c.UserID, "active"); err != nil {
			return core.Result{}, core.Errf(core.InternalError, "Cannot enable encryption").Because(err)
		}
	default:
		added, err := s.NewUserKey(ctx, c.UserID)
		if err != nil {
			return core.Result{}, err
		}
		if !added { // a concurrent setup won
			s.ForgetUserKey(c.UserID)
			return core.Result{}, core.Errf(core.EncryptionAlreadyEnabled, "Encryption is already set up for your account")
		}
	}
	s.ForgetUserKey(c.UserID)
	return core.Result{Data: setupDone{Status: "active", Zones: encryptedZones,
		Next: "shed_encryption(action='migrate') encrypts the files you already have"},
		Message: "Encryption enabled: new files in storage and uploads are encrypted"}, nil
}

// The original's four states (reference §5.38), from whether the caller's key is set up
// (database_enabled) and whether the server can use it (key_configured: the master key
// that wraps it; the original's was the user's own key in User Valves).
var encryptionStates = map[[2]bool][2]string{
	{true, true}:   {"active", "Encryption is active"},
	{true, false}:  {"key_missing", "Encryption is set up but the server's encryption key is missing or not the one it was set up with"},
	{false, true}:  {"not_setup", "Encryption is available but not set up (run shed_encryption(action='setup'))"},
	{false, false}: {"disabled", "Encryption is not enabled"},
}

// EncryptionStatus reports whether the caller's files are encrypted, and how many are, with
// the original's fields (status active, key_missing, not_setup or disabled, status_message,
// database_enabled, key_configured, files_encrypted, files_unencrypted, files_total,
// crypto_available) beside ours (available, zones, key_state, errors).
func (s *Tools) EncryptionStatus(ctx context.Context, c core.Caller) (core.Result, error) {
	u := s.UserKey(ctx, c.UserID)
	if e, ok := core.AsError(u.Err); ok && e.Code == core.InternalError {
		return core.Result{}, u.Err // the database did not answer: nothing can be told
	}
	enabled := u.State == "active"
	configured := u.Key != nil || u.State == "" && s.EncryptionAvailable()
	st := encryptionStates[[2]bool{enabled, configured}]
	if u.State == "disabled" { // disabled by the user: the key is kept for setup to take up again
		st = encryptionStates[[2]bool{false, false}]
	}
	// A key not set up, or disabled, seals nothing: the files are counted by their header,
	// as the original counts them.
	n, err := s.SealWalk(ctx, c, u.Key, core.SealCount)
	if err != nil {
		return core.Result{}, err
	}
	data := statusReport{Status: st[0], StatusMessage: st[1], DatabaseEnabled: enabled, KeyConfigured: configured,
		FilesEncrypted: n.Encrypted, FilesUnencrypted: n.Plain, FilesTotal: n.Encrypted + n.Plain,
		CryptoAvailable: s.EncryptionAvailable(), Available: s.EncryptionAvailable(), Zones: encryptedZones,
		KeyState: u.State, Errors: n.Errors}
	if u.Err != nil {
		data.KeyError = u.Err.Error()
	}
	return core.Result{Data: data, Message: st[1]}, nil
}

// EncryptionMigrate encrypts the caller's files written before setup (the kernel's
// SealWalk). Each file is replaced atomically under its lock, so an interrupted migrate
// leaves every file readable, and a new run skips what is encrypted already (never twice);
// a file another conversation holds in a locked edit, or another call is writing, is left
// as it is and reported in errors, for the next run.
func (s *Tools) EncryptionMigrate(ctx context.Context, c core.Caller) (core.Result, error) {
	unlock, err := s.keyChange(ctx, c.UserID)
	if err != nil {
		return core.Result{}, err
	}
	defer unlock()
	u, err := s.activeKey(ctx, c)
	if err != nil {
		return core.Result{}, err
	}
	n, err := s.SealWalk(ctx, c, u.Key, core.SealEncrypt)
	if err != nil {
		return core.Result{}, err
	}
	return core.Result{Data: migrated{FilesEncrypted: n.Changed, FilesSkipped: n.Encrypted, FilesChanged: n.Changed,
		Errors: n.Errors}, Message: countMessage("Encrypted", n)}, nil
}

// EncryptionDisable decrypts every encrypted file of the caller, refused while one of the
// caller's Storage files is in a locked edit. The key is kept (state disabled) so a file an
// in-flight call seals afterwards stays readable; setup takes it up again.
func (s *Tools) EncryptionDisable(ctx context.Context, c core.Caller, a EncryptionArgs) (core.Result, error) {
	if !a.Confirm {
		return core.Result{}, core.Errf(core.ConfirmationRequired, "Disabling encryption decrypts all your files: confirm with confirm=true")
	}
	unlock, err := s.keyChange(ctx, c.UserID)
	if err != nil {
		return core.Result{}, err
	}
	defer unlock()
	u, err := s.activeKey(ctx, c)
	if err != nil {
		return core.Result{}, err
	}
	locks, err := s.State().LocksByUser(ctx, c.UserID)
	if err != nil {
		return core.Result{}, core.Errf(core.InternalError, "Cannot read your locks").Because(err)
	}
	for _, l := range locks {
		if l.ZoneKey == "user:"+c.UserID+":storage" {
			return core.Result{}, core.Errf(core.FileLocked, "A locked edit is open on %s: encryption cannot be disabled now", l.Path).
				With("path", l.Path).With("conversation", l.ConvID).
				WithHint("Save or cancel the locked edit first (shed_lockedit), then disable again")
		}
	}
	n, err := s.SealWalk(ctx, c, u.Key, core.SealDecrypt)
	if err != nil {
		return core.Result{}, err
	}
	if len(n.Errors) == 0 {
		if err := s.State().SetUserKeyState(ctx, c.UserID, "disabled"); err != nil {
			return core.Result{}, core.Errf(core.InternalError, "Cannot disable encryption").Because(err)
		}
		s.ForgetUserKey(c.UserID)
	}
	return core.Result{Data: disabled{FilesDecrypted: n.Changed, FilesChanged: n.Changed, FilesEncrypted: n.Encrypted,
		FilesUnencrypted: n.Plain, Errors: n.Errors}, Message: countMessage("Decrypted", n)}, nil
}

// keyChange serialises the changes of a user's encryption (core.Service.HoldKeyChange).
func (s *Tools) keyChange(ctx context.Context, userID string) (func(), error) {
	return s.HoldKeyChange(ctx, userID)
}

// activeKey is the caller's key when encryption is active.
func (s *Tools) activeKey(ctx context.Context, c core.Caller) (core.UserKey, error) {
	u := s.UserKey(ctx, c.UserID)
	switch {
	case u.Err != nil:
		return u, u.Err
	case u.State != "active":
		return u, core.Errf(core.EncryptionNotEnabled, "Encryption is not enabled for your account")
	}
	return u, nil
}

func countMessage(verb string, n core.Sealed) string {
	msg := fmt.Sprintf("%s %d file(s)", verb, n.Changed)
	if len(n.Errors) > 0 {
		msg += fmt.Sprintf(", %d file(s) could not be processed (see errors)", len(n.Errors))
	}
	return msg
}
