// Package confine is fileshed's one confinement mechanism: every path a tool
// receives from the model goes through it before it touches the disk.
//
// It sits in core/confine, a leaf below core. Clean validates and normalises a
// model-supplied zone-relative path lexically; Fs is an afero.Fs confined to one
// zone directory through os.Root, so that no "..", symlink or rename race reaches
// outside the zone; Fs.Confined checks paths that a subprocess will open itself;
// Fs.WriteAtomic replaces a file durably.
//
// Errors are plain: the sentinels ErrEscape, ErrInvalid, ErrIsDir and ErrNotDir,
// wrapped in *PathError, plus the underlying errno values (errors.Is works with
// fs.ErrNotExist and friends). Core translates them into its error codes once.
// No error and no File.Name produced here ever contains a host path: only the
// zone-relative path the caller gave. Fs.Dir is the single way to learn the host
// path, and it exists only to start subprocesses in the zone.
//
// This package must never import github.com/fileshed/fileshed/core (its parent),
// the handlers, huma or chi.
package confine
