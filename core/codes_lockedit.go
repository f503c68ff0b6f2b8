package core

// Codes of the locked-edit family (reference §2.7, §5.9-§5.13, §5.34, §5.35) and of the
// history tools. ZoneForbidden also serves shed_history/shed_restore outside versioned zones.
const (
	FileLocked    Code = "FILE_LOCKED"
	NotInEditMode Code = "NOT_IN_EDIT_MODE"
	NotLockOwner  Code = "NOT_LOCK_OWNER"
	LockError     Code = "LOCK_ERROR"
	ZoneForbidden Code = "ZONE_FORBIDDEN"
)

func init() {
	addHints(map[Code]string{
		FileLocked:    "Another conversation is editing this file: wait for its shed_lockedit action save or cancel, or use shed_lockedit(action='force_unlock') or shed_info(action='maintenance')",
		NotInEditMode: "Use shed_lockedit(action='open') first. Note: shed_lockedit(action='save') closes edit mode",
		NotLockOwner:  "Only the user and conversation that opened the file can save or cancel; shed_lockedit(action='force_unlock') breaks an abandoned lock",
		LockError:     "Retry in a moment; if it persists, run shed_info(action='maintenance') or report it to the administrator",
		ZoneForbidden: "This tool does not work in that zone: pick another zone (shed_help lists each tool's zones)",
	})
}
