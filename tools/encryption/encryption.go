package encryption

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"syscall"

	"github.com/fileshed/fileshed/core"

	"github.com/spf13/afero"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/crypt"
	"github.com/fileshed/fileshed/core/lock"
	"github.com/fileshed/fileshed/core/store"
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
		if err := s.DB().SetUserKeyState(ctx, c.UserID, "active"); err != nil {
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

// sealedCount is what status, migrate and disable count: the files encrypted and not (as
// found, before any change), the files changed, and what could not be processed.
type sealedCount struct {
	Encrypted int
	Plain     int
	Changed   int
	Errors    []string
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
	n, err := s.sealWalk(ctx, c.UserID, u.Key, nil)
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

// EncryptionMigrate encrypts the caller's files written before setup. Each file is replaced
// atomically, so an interrupted migrate leaves every file readable, and a new run skips what
// is encrypted already (never twice).
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
	n, err := s.sealWalk(ctx, c.UserID, u.Key, migrateFile)
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
	locks, err := s.DB().LocksByUser(ctx, c.UserID)
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
	n, err := s.sealWalk(ctx, c.UserID, u.Key, unsealFile)
	if err != nil {
		return core.Result{}, err
	}
	if len(n.Errors) == 0 {
		if err := s.DB().SetUserKeyState(ctx, c.UserID, "disabled"); err != nil {
			return core.Result{}, core.Errf(core.InternalError, "Cannot disable encryption").Because(err)
		}
		s.ForgetUserKey(c.UserID)
	}
	return core.Result{Data: disabled{FilesDecrypted: n.Changed, FilesChanged: n.Changed, FilesEncrypted: n.Encrypted,
		FilesUnencrypted: n.Plain, Errors: n.Errors}, Message: countMessage("Decrypted", n)}, nil
}

// keyChange serialises the changes of a user's encryption (setup, migrate, disable): it
// takes the owner's quota lock exclusively and returns its release. Every write of the user
// holds that lock shared from its reservation to its end, so none runs meanwhile; and each
// change reads the key's state under it, after the change before it ended (which forgot the
// cached state), so the state a change checks is still the state when it ends. Why: a
// migrate that checked 'active' and then waited for a disable's walk sealed every file of
// the now disabled account, and commands, which run on the raw files of a disabled zone,
// read ciphertext (issue 24). Callers must not hold the owner's lock (ensureUsage would
// deadlock under it).
func (s *Tools) keyChange(ctx context.Context, userID string) (func(), error) {
	return s.HoldOwner(ctx, store.Owner{Kind: "user", ID: userID}, lock.Exclusive)
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

func countMessage(verb string, n sealedCount) string {
	msg := fmt.Sprintf("%s %d file(s)", verb, n.Changed)
	if len(n.Errors) > 0 {
		msg += fmt.Sprintf(", %d file(s) could not be processed (see errors)", len(n.Errors))
	}
	return msg
}

// fileAction turns one file of a sealed zone (fsys; sealWalk holds the owner's lock) into
// its new form; state says what the file is now.
type fileAction func(fsys *confine.Fs, rel string, state sealState) (changed bool, err error)

// sealState is what a file is with respect to the user's key.
type sealState int

const (
	plainFile   sealState = iota // no header: not encrypted
	sealedFile                   // encrypted with the user's key
	foreignFile                  // a header, but not sealed with this key (damaged or alien)
)

// migrateFile encrypts a plaintext file in place (atomically).
func migrateFile(fsys *confine.Fs, rel string, st sealState) (bool, error) {
	if st != plainFile {
		return false, nil
	}
	src, err := fsys.Raw().Open(rel)
	if err != nil {
		return false, err
	}
	defer src.Close()
	_, err = fsys.WriteAtomic(rel, src, 0o600)
	return err == nil, err
}

// unsealFile decrypts a sealed file in place (atomically).
func unsealFile(fsys *confine.Fs, rel string, st sealState) (bool, error) {
	if st != sealedFile {
		return false, nil
	}
	src, err := fsys.Open(rel)
	if err != nil {
		return false, err
	}
	defer src.Close()
	_, err = fsys.Raw().WriteAtomic(rel, src, 0o600)
	return err == nil, err
}

// sealWalk visits every regular file of the user's encrypted zones (Storage, every
// conversation's Uploads), counts them by state and applies act (nil: count only; key
// nil: count only, by header). With act
// the caller holds keyChange, so no write of the user runs meanwhile. (Not the files' write
// locks too: a writer takes those first, then the owner's lock.)
func (s *Tools) sealWalk(ctx context.Context, userID string, key *crypt.Key, act fileAction) (sealedCount, error) {
	n := sealedCount{Errors: []string{}}
	for _, d := range s.sealedDirs(userID) {
		if _, err := os.Stat(d.dir); errors.Is(err, fs.ErrNotExist) {
			continue // never used: nothing to count, and status creates no folder
		}
		fsys, err := confine.New(d.dir)
		if err != nil {
			return n, core.Errf(core.InternalError, "Cannot open %s", d.name).Because(err)
		}
		fsys.Seal(key)
		err = afero.Walk(fsys.Raw(), "", func(rel string, fi fs.FileInfo, err error) error {
			if err != nil || !fi.Mode().IsRegular() || confine.IsTempName(path.Base(rel)) {
				return nil
			}
			if err := ctx.Err(); err != nil {
				return err
			}
			st := fileSealState(fsys, rel, key)
			switch st {
			case sealedFile:
				n.Encrypted++
			case plainFile:
				n.Plain++
			case foreignFile:
				n.Errors = append(n.Errors, d.name+"/"+rel+": encrypted, but not readable with your key (damaged?)")
				return nil
			}
			if act == nil {
				return nil
			}
			changed, err := act(fsys, rel, st)
			if err != nil {
				n.Errors = append(n.Errors, d.name+"/"+rel+": "+shortErr(err))
			} else if changed {
				n.Changed++
			}
			return nil
		})
		fsys.Close()
		if err != nil {
			return n, core.Errf(core.InternalError, "Cannot walk %s", d.name).Because(err)
		}
	}
	return n, nil
}

// shortErr is an error's text without the zone-relative path the message already names.
func shortErr(err error) string {
	var pe *confine.PathError
	switch {
	case errors.Is(err, crypt.ErrAuth):
		return "its encrypted content was altered"
	case errors.Is(err, syscall.ENOSPC):
		return "the disk is full"
	case errors.As(err, &pe):
		return pe.Err.Error()
	}
	return err.Error()
}

// fileSealState reads rel's header (raw) and, when it has one, authenticates it with key
// (nil: a status without a usable key counts the header only).
func fileSealState(fsys *confine.Fs, rel string, key *crypt.Key) sealState {
	f, err := fsys.Raw().OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return plainFile
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return plainFile
	}
	if !confine.HasMagic(f) {
		return plainFile
	}
	if key == nil || crypt.Check(f, fi.Size(), key) { // without a key, the header is all that tells
		return sealedFile
	}
	return foreignFile
}

// sealedDir is one directory of encrypted files and its name in messages.
type sealedDir struct{ dir, name string }

// sealedDirs are the user's directories that encryption covers: Storage's data and each
// conversation's Uploads.
func (s *Tools) sealedDirs(userID string) []sealedDir {
	l, o := s.Layout(), store.Owner{Kind: "user", ID: userID}
	dirs := []sealedDir{{l.ZoneRoot(o, core.Storage), "Storage"}}
	convs, _ := os.ReadDir(l.ZoneRoot(o, core.Uploads))
	for _, c := range convs {
		if c.IsDir() {
			dirs = append(dirs, sealedDir{l.UploadsOf(userID, c.Name()), "Uploads/" + c.Name()})
		}
	}
	return dirs
}
