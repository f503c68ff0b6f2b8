package core

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/fileshed/fileshed/core/confine"
	"github.com/fileshed/fileshed/core/crypt"
	"github.com/fileshed/fileshed/core/store"
)

// ZoneKind is one of the four kinds of zone.
type ZoneKind int

// The zones of DESIGN §4.
const (
	Uploads ZoneKind = iota
	Storage
	Documents
	GroupZone
)

// ZoneNames are the values accepted in the `zone` argument (case-insensitive).
var ZoneNames = map[string]ZoneKind{"uploads": Uploads, "storage": Storage, "documents": Documents, "group": GroupZone}

// Zone is a resolved zone: its confined file system and what may be done in it.
// Close it when the call is done.
type Zone struct {
	Kind ZoneKind
	// Name is the display name of the original ("Storage", "Group:team").
	Name string
	// Label is the lower-case zone argument ("storage", "group").
	Label string
	// fs is the zone's confined file system, writable: core's own (Tx.Fs hands out the
	// declared writes). A family reads through Fs.
	fs       *confine.Fs
	ReadOnly bool
	// Versioned zones (Documents, group) commit every change.
	Versioned bool
	GroupID   string
	// Owner is the quota account the zone's bytes are charged to.
	Owner store.Owner
	// space is the host directory that holds data/, editzone/ and the git directory.
	Space string
	// conv is the conversation of an Uploads zone (its folder in space).
	conv string
	// group is the resolved group of a group zone (members, for the group tools).
	Group Group
}

// Fs is the zone's file system as a family sees it: read-only (ReadFs).
func (z *Zone) Fs() ReadFs { return ReadFs{z.fs} }

// Close releases the zone's root handle.
func (z *Zone) Close() {
	if z != nil && z.fs != nil {
		_ = z.fs.Close()
	}
}

// UploadsParent is the Uploads zone z seen from the folder holding every conversation's
// uploads, so that the conversation's own folder can be moved (shed_move_uploads_to_*
// with the whole folder). The caller closes it.
func (z *Zone) UploadsParent() (*Zone, error) {
	up, err := confine.New(z.Space)
	if err != nil {
		return nil, Errf(InternalError, "Cannot open the Uploads folder").Because(err)
	}
	up.ShareSeal(z.fs)
	parent := *z
	parent.fs = up
	return &parent, nil
}

// ResolveZone turns (zone, group) into a Zone for the caller, creating its layout lazily.
// write=true refuses the read-only Uploads zone.
func (s *Service) ResolveZone(ctx context.Context, c Caller, zone, group string, write bool) (*Zone, error) {
	kind, ok := ZoneNames[strings.ToLower(strings.TrimSpace(zone))]
	if !ok {
		if zone == "" {
			return nil, Errf(MissingParameter, "Parameter 'zone' is required").With("valid", ZoneList())
		}
		return nil, Errf(InvalidZone, "Invalid zone: %s", zone).With("zone", zone).With("valid", ZoneList())
	}
	l := s.Layout()
	z := &Zone{Kind: kind, Owner: store.Owner{Kind: "user", ID: c.UserID}}
	var dataDir string
	switch kind {
	case Uploads:
		if write {
			return nil, Errf(ZoneReadonly, "Uploads zone is read-only").With("zone", "uploads")
		}
		z.Name, z.Label, z.ReadOnly = "Uploads", "uploads", true
		z.Space, z.conv = l.Uploads(c.UserID), c.ConvID
		dataDir = l.UploadsOf(c.UserID, c.ConvID)
	case Storage:
		z.Name, z.Label = "Storage", "storage"
		z.Space = l.StorageSpace(c.UserID)
		dataDir = DataDir(z.Space)
	case Documents:
		z.Name, z.Label, z.Versioned = "Documents", "documents", true
		z.Space = l.DocumentsSpace(c.UserID)
		dataDir = DataDir(z.Space)
	case GroupZone:
		g, err := s.resolveGroup(ctx, c, group)
		if err != nil {
			return nil, err
		}
		z.Name, z.Label, z.Versioned, z.GroupID, z.Group = "Group:"+group, "group", true, g.ID, g
		z.Owner = store.Owner{Kind: "group", ID: g.ID}
		z.Space = l.GroupSpace(g.ID)
		dataDir = DataDir(z.Space)
	}
	if err := os.MkdirAll(dataDir, 0o700); err != nil {
		return nil, Errf(InternalError, "Cannot prepare the %s zone", z.Name).Because(err)
	}
	fs, err := confine.New(dataDir)
	if err != nil {
		return nil, Errf(InternalError, "Cannot open the %s zone", z.Name).Because(err)
	}
	z.fs = fs
	if kind == Storage || kind == Uploads {
		if err := s.sealZone(ctx, c.UserID, fs); err != nil {
			fs.Close()
			return nil, err
		}
	}
	return z, nil
}

func ZoneList() []string { return []string{"uploads", "storage", "documents", "group"} }

// Path validates a model-supplied path for this zone and returns its clean zone-relative
// form ("" is the zone root). A first component equal to the zone's label is refused with
// PATH_STARTS_WITH_ZONE unless allowZone (the original's guard: models often prefix it).
func (z *Zone) Path(p string, allowZone bool) (string, error) {
	clean, err := confine.Clean(p)
	if err != nil {
		return "", PathError(err, z, p)
	}
	first, rest, _ := strings.Cut(clean, "/")
	if !allowZone && first != "" && strings.EqualFold(first, z.Label) {
		return "", Errf(PathStartsWithZone, "Path '%s' starts with zone name '%s'", p, first).
			With("zone", z.Label).With("path", p).With("first_component", first).
			WithHint("The zone parameter already sets the working directory. Use '%s' instead of '%s'. If you really want a subfolder named '%s', add allow_zone_in_path=true", rest, p, first)
	}
	return clean, nil
}

// ErrChangedMeanwhile is a file that changed between the two reads of one streamed edit (a
// command of the zone wrote it meanwhile): the edit's atomic write is abandoned, so the file
// stays as the command left it. PathError answers FILE_LOCKED: busy, retry.
var ErrChangedMeanwhile = errors.New("the file changed while it was edited")

// PathError translates a confinement error into the catalogue, without host paths.
func PathError(err error, z *Zone, p string) *Error {
	if e, ok := AsError(err); ok {
		return e // already an answer (e.g. QUOTA_EXCEEDED for the folders a write makes)
	}
	switch {
	case errors.Is(err, confine.ErrEscape):
		return Errf(PathEscape, "Path escapes the zone: %s", p).With("path", p).With("zone", z.Label).Because(err)
	case errors.Is(err, confine.ErrInvalid):
		return Errf(InvalidPath, "Invalid path: %q", Shorten(p)).With("path", Shorten(p)).With("zone", z.Label).Because(err).
			WithHint("Paths are relative, use '/' between folders, at most 255 bytes per name, no control characters")
	case errors.Is(err, os.ErrNotExist):
		return Errf(FileNotFound, "File not found: %s", p).With("path", p).With("zone", z.Label)
	case errors.Is(err, crypt.ErrAuth):
		return Errf(DecryptionFailed, "Cannot decrypt %s: its encrypted content was altered", p).With("path", p).With("zone", z.Label).Because(err)
	case errors.Is(err, confine.ErrNoKey):
		return Errf(DecryptionRequired, "%s is encrypted and the server cannot use your key", p).With("path", p).With("zone", z.Label)
	case errors.Is(err, crypt.ErrFormat):
		return Errf(InvalidEncryptedFile, "%s is not a valid encrypted file", p).With("path", p).With("zone", z.Label).Because(err)
	case errors.Is(err, ErrChangedMeanwhile):
		return Errf(FileLocked, "%s changed while it was edited (a command in the %s zone wrote it meanwhile): nothing was changed", p, z.Label).
			With("path", p).With("zone", z.Label).WithHint("Wait for the command to end, read the file again, then retry the edit")
	}
	return Errf(InternalError, "File system error on %s", p).With("path", p).Because(err)
}

// Shorten keeps messages readable when a model sends a huge argument.
func Shorten(s string) string {
	if len(s) <= 120 {
		return s
	}
	return s[:100] + "..." + s[len(s)-12:]
}

// ZonePath resolves the zone of a path-taking tool and validates the path: the preamble
// every file operation shares. The caller closes the zone.
func (s *Service) ZonePath(ctx context.Context, c Caller, args ZoneArgs, p string, write bool) (*Zone, string, error) {
	z, err := s.ResolveZone(ctx, c, args.Zone, args.Group, write)
	if err != nil {
		return nil, "", err
	}
	if p == "" {
		z.Close()
		return nil, "", Errf(MissingParameter, "Path parameter is required").With("parameter", "path")
	}
	rel, err := z.Path(p, args.AllowZoneInPath)
	if err != nil {
		z.Close()
		return nil, "", err
	}
	return z, rel, nil
}

// ZoneArgs are the arguments shared by every zone-scoped tool.
type ZoneArgs struct {
	Zone            string `json:"zone" required:"true" enum:"uploads,storage,documents,group" doc:"Zone: uploads (read-only chat files), storage (free workshop), documents (versioned), group (shared; needs group)"`
	Group           string `json:"group,omitempty" doc:"Group id or exact name, only with zone='group'"`
	AllowZoneInPath bool   `json:"allow_zone_in_path,omitempty" doc:"Allow a path whose first folder is named like the zone"`
}

// PathNotFound maps a stat/open failure on a user path to the catalogue.
func PathNotFound(err error, z *Zone, p string) *Error {
	if errors.Is(err, fs.ErrNotExist) {
		return Errf(FileNotFound, "Path not found: %s", p).With("path", p).With("zone", z.Label)
	}
	return PathError(err, z, p)
}
