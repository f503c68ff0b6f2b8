package groups

import "github.com/fileshed/fileshed/core"

// The answers of the group tools. Fields are declared in the order of their JSON names (the
// order the maps these replaced were written in): the model-facing JSON is pinned byte for
// byte by the golden tests of the handlers package.

// groupList is the answer of shed_group_list.
type groupList struct {
	Count  int         `json:"count"`
	Groups []groupLine `json:"groups"`
}

// groupLine is one group of shed_group_list; MemberCount is set only where the group's
// source lists its members (0 is a count).
type groupLine struct {
	Description string `json:"description"`
	ID          string `json:"id"`
	MemberCount *int   `json:"member_count,omitempty"`
	Name        string `json:"name"`
}

// groupInfo is the answer of shed_group_info. members (ids) and member_count are the
// original's fields; members_complete, members_source and members_truncated say where the
// list comes from and whether it is whole.
type groupInfo struct {
	Files            []groupFile    `json:"files"`
	FilesTruncated   bool           `json:"files_truncated"`
	GroupID          string         `json:"group_id"`
	MemberCount      int            `json:"member_count"`
	MemberDetails    []memberDetail `json:"member_details"`
	Members          []string       `json:"members"`
	MembersComplete  bool           `json:"members_complete"`
	MembersSource    string         `json:"members_source"`
	MembersTruncated bool           `json:"members_truncated"`
	Name             string         `json:"name"`
	Quota            core.QuotaLine `json:"quota"`
	TotalFiles       int            `json:"total_files"`
	TotalSize        int64          `json:"total_size"`
	TotalSizeHuman   string         `json:"total_size_human"`
}

// groupFile is one file of shed_group_info; owner and mode are "unknown" without an
// ownership record.
type groupFile struct {
	Mode  string `json:"mode"`
	Owner string `json:"owner"`
	Path  string `json:"path"`
	Size  int64  `json:"size"`
}

// memberDetail is one member of shed_group_info; LastSeen is set when this server saw the
// member's requests.
type memberDetail struct {
	ID       string `json:"id"`
	LastSeen string `json:"last_seen,omitempty"`
	Name     string `json:"name"`
}

// modeChanged is the answer of shed_group_set_mode.
type modeChanged struct {
	NewMode string `json:"new_mode"`
	OldMode string `json:"old_mode"`
	Path    string `json:"path"`
}

// ownerChanged is the answer of shed_group_chown.
type ownerChanged struct {
	NewOwner string `json:"new_owner"`
	OldOwner string `json:"old_owner"`
	Path     string `json:"path"`
}

// groupCopied is the answer of shed_copy_to_group; Commit is set when the copy changed the
// group's files, SkippedNotRegular when the source held other things than regular files.
type groupCopied struct {
	BytesCopied       int64    `json:"bytes_copied"`
	Commit            string   `json:"commit,omitempty"`
	DestPath          string   `json:"dest_path"`
	FilesCopied       int      `json:"files_copied"`
	Group             string   `json:"group"`
	Mode              string   `json:"mode"`
	SkippedNotRegular []string `json:"skipped_not_regular,omitempty"`
	SrcPath           string   `json:"src_path"`
	SrcZone           string   `json:"src_zone"`
}
