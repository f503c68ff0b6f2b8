package core

import "context"

// Group ownership (reference §2.10, §5): in group zones every file has an owner and a mode
// (owner, group, owner_ro). Every tool that writes into a zone calls checkGroupWrite before
// it touches a file and recordGroupFiles after it created files, so one place decides.
// Outside group zones both are no-ops.
//
// INTEGRATION SEAM: the groups change replaces these bodies with the real rules; the
// other families (archives, sqlite, bridges) already call them.

// writeKind says what a write does to a file, for the ownership rules.
type writeKind int

const (
	// writeCreate makes a new file (or replaces a missing one).
	writeCreate writeKind = iota
	// writeModify changes or replaces the content of an existing file.
	writeModify
	// writeDelete removes a file or moves it away (a rename's source).
	writeDelete
)

// checkGroupWrite refuses a write that the group ownership modes forbid (FILE_OWNER_ONLY,
// FILE_READ_ONLY, NOT_FILE_OWNER). rel is zone-relative and clean; a folder counts for
// every file below it. nil outside group zones.
func (s *Service) checkGroupWrite(ctx context.Context, c Caller, z *Zone, kind writeKind, rel string) error {
	return nil
}

// recordGroupFiles records c as the owner of files newly created in a group zone, with
// mode ("" = group_default_mode). A no-op outside group zones.
func (s *Service) recordGroupFiles(ctx context.Context, c Caller, z *Zone, mode string, rels ...string) error {
	return nil
}
