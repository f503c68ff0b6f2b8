package core

// The codes of the other tool families: commands, SQLite, locked edits, links, pages,
// groups, encryption.

// Codes of the command family (shed_exec, shed_allowed_commands, shed_lockedit_exec).
const (
	CommandForbidden   Code = "COMMAND_FORBIDDEN"
	ArgumentForbidden  Code = "ARGUMENT_FORBIDDEN"
	ArgumentRequired   Code = "ARGUMENT_REQUIRED"
	CommandNotFound    Code = "COMMAND_NOT_FOUND"
	Timeout            Code = "TIMEOUT"
	ExecError          Code = "EXEC_ERROR"
	SandboxUnavailable Code = "SANDBOX_UNAVAILABLE"
	TooManyCommands    Code = "TOO_MANY_COMMANDS"
)

func init() {
	addHints(map[Code]string{
		CommandForbidden:   "Use shed_info(action='commands') to see the commands this zone allows",
		ArgumentForbidden:  "Drop the refused option; see shed_help for what each command accepts",
		ArgumentRequired:   "Add the missing argument to args (e.g. curl -o file URL), or use stdout_file='out.txt', and call again",
		CommandNotFound:    "The command is not installed: check shed_info(action='commands') for what is available",
		Timeout:            "Increase timeout (at most exec_timeout_max, see shed_info(action='parameters')), or split the work",
		ExecError:          "Retry; if it persists, report the request id to the administrator",
		SandboxUnavailable: "The administrator must run fileshed on a kernel with Landlock, or set exec_sandbox to best_effort",
		TooManyCommands:    "Wait a few seconds for your running commands to finish, then call shed_exec again (one at a time)",
	})
}

// Codes of shed_sqlite. TABLE_EXISTS and the CSV codes are the original's; SQL_FORBIDDEN
// is ours (FUNCTIONS.md: an authorizer refusal). An SQL statement that fails, and a file
// that is not a database, is EXEC_ERROR, as in the original. DB_ERROR is the original's
// too, for what it meant there: Open WebUI did not store a file (links.mode openwebui).
const (
	DBError       Code = "DB_ERROR"
	TableExists   Code = "TABLE_EXISTS"
	CSVEmpty      Code = "CSV_EMPTY"
	CSVParseError Code = "CSV_PARSE_ERROR"
	CSVTooWide    Code = "CSV_TOO_WIDE"
	SQLForbidden  Code = "SQL_FORBIDDEN"
)

func init() {
	addHints(map[Code]string{
		DBError:       "Open WebUI could not store the file: retry later, or ask the administrator to check Open WebUI's storage",
		TableExists:   "Use if_exists='replace' or if_exists='append'",
		CSVEmpty:      "The CSV has no data rows: check the file with shed_read, or skip_rows/has_header",
		CSVParseError: "Give delimiter=, encoding= or skip_rows= explicitly (guide: shed_help(howto='csv_to_sqlite'))",
		CSVTooWide:    "SQLite tables have at most 2000 columns: cut the CSV's columns with shed_exec (cut -d, -f1-100)",
		SQLForbidden:  "ATTACH, DETACH, load_extension and PRAGMAs that change settings are not allowed: query the tables of this database with shed_sqlite",
	})
}

// Codes of the locked-edit family (reference §2.7, §5.9-§5.13, §5.34, §5.35) and of the
// history tools. ZoneForbidden also serves shed_history/shed_restore outside versioned zones.
const (
	FileLocked    Code = "FILE_LOCKED"
	NotInEditMode Code = "NOT_IN_EDIT_MODE"
	NotLockOwner  Code = "NOT_LOCK_OWNER"
	LockError     Code = "LOCK_ERROR"
	ZoneForbidden Code = "ZONE_FORBIDDEN"
	// UndoConflict refuses an undo whose paths were changed since by a change it does not
	// undo (named in details.later), or changed outside the journal.
	UndoConflict Code = "UNDO_CONFLICT"
)

func init() {
	addHints(map[Code]string{
		FileLocked:    "Another conversation is editing this file: wait for its shed_lockedit action save or cancel, or use shed_lockedit(action='force_unlock') or shed_info(action='maintenance')",
		NotInEditMode: "Use shed_lockedit(action='open') first. Note: shed_lockedit(action='save') closes edit mode",
		NotLockOwner:  "Only the user and conversation that opened the file can save or cancel; shed_lockedit(action='force_unlock') breaks an abandoned lock",
		LockError:     "Retry in a moment; if it persists, run shed_info(action='maintenance') or report it to the administrator",
		ZoneForbidden: "This tool does not work in that zone: pick another zone (shed_help lists each tool's zones)",
		UndoConflict:  "The path changed since: undo the later changes first (details.later), or pass force=true to put the old content back over them",
	})
}

// Codes of the links family (shed_link_create, shed_link_list, shed_link_delete).
// NOT_A_FILESHED_LINK keeps the original's spelling (reference §5.29); shed_link_delete
// also answers MISSING_FILE_ID (declared with shed_import, codes_files.go). LINK_NOT_FOUND
// is ours: an unknown link id, or another user's (both answer the same).
const (
	NotAFileshedLink Code = "NOT_A_FILESHED_LINK"
	LinkNotFound     Code = "LINK_NOT_FOUND"
)

func init() {
	addHints(map[Code]string{
		NotAFileshedLink: "Only links made by shed_link can be deleted here: see shed_link(action='list')",
		LinkNotFound:     "List your links with shed_link(action='list')",
	})
}

// Codes of page-by-page reading (shed_read on a PDF, shed_file_type's page count) and of
// result pages (shed_save_page).
const (
	// PdfEncrypted: the PDF needs a password, or forbids copying its text.
	PdfEncrypted Code = "PDF_ENCRYPTED"
	// PdfNoText: the pages asked for have no text layer (scanned images).
	PdfNoText Code = "PDF_NO_TEXT"
	// PdfUnreadable: the PDF engine cannot parse the file (truncated, corrupt).
	PdfUnreadable Code = "PDF_UNREADABLE"
	// PdfTooCostly: the PDF engine reached the command memory or CPU-time limit.
	PdfTooCostly Code = "PDF_TOO_COSTLY"
)

func init() {
	addHints(map[Code]string{
		PdfEncrypted:  "The PDF is password-protected: ask the user for an unprotected copy, then shed_import it",
		PdfNoText:     "The pages are images (a scan): no text to extract; try other pages=, or check page_count with shed_file_type",
		PdfUnreadable: "The file is damaged or not a PDF: shed_file_type and shed_hexdump show what it is",
		PdfTooCostly:  "Read fewer pages at a time (pages=\"1-2\"); a PDF this costly may be built to exhaust the reader",
	})
}

// Codes of group spaces (reference §2.10, §5.40-§5.44): ownership refusals and the
// administration tools.
const (
	// FileOwnerOnly refuses a write to a file in mode 'owner' by another member.
	FileOwnerOnly Code = "FILE_OWNER_ONLY"
	// FileReadOnly refuses a write to a file in mode 'owner_ro' (owner included).
	FileReadOnly Code = "FILE_READ_ONLY"
	// PermissionDenied refuses deleting or moving away a protected file (the original's
	// code for delete/rename refusals; details.reason says which mode refused).
	PermissionDenied Code = "PERMISSION_DENIED"
	// NotFileOwner refuses shed_group_set_mode / shed_group_chown by a non-owner.
	NotFileOwner Code = "NOT_FILE_OWNER"
	// InvalidOwner refuses a chown to someone who is not a current member.
	InvalidOwner Code = "INVALID_OWNER"
)

func init() {
	addHints(map[Code]string{
		FileOwnerOnly:    "Only the file's owner may change it: ask them (shed_group(action='info') shows owners), or write a copy under another name",
		FileReadOnly:     "The file is read-only (mode owner_ro): its owner can switch it back with shed_group(action='set_mode')",
		PermissionDenied: "Only the owner may delete or move this file: ask them (shed_group(action='info') shows owners)",
		NotFileOwner:     "Only the file's owner can change its mode or owner: see shed_group(action='info')",
		InvalidOwner:     "Give the user id of a current group member (shed_group(action='info') lists members)",
	})
}

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
