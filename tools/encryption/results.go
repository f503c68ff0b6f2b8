package encryption

// The answers of shed_encryption. Fields are declared in the order of their JSON names (the
// order the maps these replaced were written in): the model-facing JSON is pinned byte for
// byte by the golden tests of the handlers package.

// setupDone is the answer of setup.
type setupDone struct {
	Next   string   `json:"next"`
	Status string   `json:"status"`
	Zones  []string `json:"zones"`
}

// statusReport is the answer of status: the original's fields (status, status_message,
// database_enabled, key_configured, files_encrypted, files_unencrypted, files_total,
// crypto_available) beside ours. Errors is set when files could not be read, KeyError when
// the key could not be opened, KeyState once a key was set up.
type statusReport struct {
	Available        bool     `json:"available"`
	CryptoAvailable  bool     `json:"crypto_available"`
	DatabaseEnabled  bool     `json:"database_enabled"`
	Errors           []string `json:"errors,omitempty"`
	FilesEncrypted   int      `json:"files_encrypted"`
	FilesTotal       int      `json:"files_total"`
	FilesUnencrypted int      `json:"files_unencrypted"`
	KeyConfigured    bool     `json:"key_configured"`
	KeyError         string   `json:"key_error,omitempty"`
	KeyState         string   `json:"key_state,omitempty"`
	Status           string   `json:"status"`
	StatusMessage    string   `json:"status_message"`
	Zones            []string `json:"zones"`
}

// migrated is the answer of migrate: files_encrypted and files_skipped are the original's
// names (reference §5.39); files_changed is ours, kept.
type migrated struct {
	Errors         []string `json:"errors"`
	FilesChanged   int      `json:"files_changed"`
	FilesEncrypted int      `json:"files_encrypted"`
	FilesSkipped   int      `json:"files_skipped"`
}

// disabled is the answer of disable: files_decrypted is the original's name (reference
// §5.37); the counts as found are ours.
type disabled struct {
	Errors           []string `json:"errors"`
	FilesChanged     int      `json:"files_changed"`
	FilesDecrypted   int      `json:"files_decrypted"`
	FilesEncrypted   int      `json:"files_encrypted"`
	FilesUnencrypted int      `json:"files_unencrypted"`
}
