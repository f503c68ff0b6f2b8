package core

// Codes of encryption at rest (reference §5.36-§5.39 keep their spelling). Ours differ in
// cause: the key comes from the server (encryption.master_key), never from the model, so
// ENCRYPTION_KEY_REQUIRED and INVALID_ENCRYPTION_KEY are the administrator's to fix.
// DECRYPTION_FAILED is a file whose ciphertext was changed (tampering, a flipped bit, a
// truncation): nothing of it is returned. DECRYPTION_REQUIRED is an encrypted file left in
// the zone of a user whose key the server cannot use (after disable, without the master key):
// its ciphertext is never served. INVALID_ENCRYPTED_FILE is a file that carries the
// format's header but cannot be one (an impossible size).
const (
	EncryptionUnavailable    Code = "ENCRYPTION_UNAVAILABLE"
	EncryptionAlreadyEnabled Code = "ENCRYPTION_ALREADY_ENABLED"
	EncryptionNotEnabled     Code = "ENCRYPTION_NOT_ENABLED"
	EncryptionKeyRequired    Code = "ENCRYPTION_KEY_REQUIRED"
	InvalidEncryptionKey     Code = "INVALID_ENCRYPTION_KEY"
	DecryptionFailed         Code = "DECRYPTION_FAILED"
	DecryptionRequired       Code = "DECRYPTION_REQUIRED"
	InvalidEncryptedFile     Code = "INVALID_ENCRYPTED_FILE"
	ConfirmationRequired     Code = "CONFIRMATION_REQUIRED"
)

func init() {
	addHints(map[Code]string{
		EncryptionUnavailable:    "The administrator has not configured encryption.master_key on this server",
		EncryptionAlreadyEnabled: "See shed_encryption(action='status'); action='migrate' encrypts files written before setup",
		EncryptionNotEnabled:     "Run shed_encryption(action='setup') first",
		EncryptionKeyRequired:    "Ask the administrator to configure encryption.master_key",
		InvalidEncryptionKey:     "Ask the administrator to restore the encryption.master_key your files were encrypted with",
		DecryptionFailed:         "The file was altered on disk and cannot be trusted: delete it with shed_delete, or ask the administrator to restore it from a backup",
		DecryptionRequired:       "The file is encrypted and the server cannot use your key: ask the administrator to configure encryption.master_key",
		InvalidEncryptedFile:     "The file is damaged (cut short): delete it with shed_delete, or ask the administrator to restore it from a backup",
		ConfirmationRequired:     "Call again with confirm=true",
	})
}
