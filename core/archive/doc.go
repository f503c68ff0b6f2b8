// Package archive reads and writes zip archives for fileshed's shed_zip, shed_unzip and
// shed_zipinfo, without trusting the archive: every entry name is checked the way Go's
// zipinsecurepath=0 would (no "..", no absolute path, no drive letter, no backslash, no
// control character), symlink and special entries are never extracted as such, modes are
// reduced to 0600/0700, and the limits (entry count, total bytes, per-entry and overall
// ratio, path depth and length) are enforced on the bytes actually decompressed, never on
// the sizes the headers claim.
//
// It sits in core/archive, a leaf below core: it knows nothing of zones, quotas or
// versioning. Core opens the files, hands Extract a Dest (a staging folder inside the zone)
// and translates the plain errors of this package (*LimitError, *NameError, *FormatError)
// into the catalogue once.
//
// This package must never import github.com/fileshed/fileshed/core (its parent), net/http
// or any handler package.
package archive
