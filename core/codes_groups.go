package core

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
