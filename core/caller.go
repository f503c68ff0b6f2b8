package core

import (
	"crypto/sha256"
	"encoding/hex"
	"regexp"

	"github.com/fileshed/fileshed/core/valves"
)

// Caller is who is calling and from which conversation. Only handlers/identity.go builds one
// (through NewCaller), from the authenticated request: identity is never a tool argument.
type Caller struct {
	UserID string
	Name   string
	Email  string
	Role   string
	// ConvID is the sanitised Open WebUI chat id ("unknown" when absent).
	ConvID string
	// Groups are the group ids the request itself vouches for (headers mode); nil means
	// "ask the configured group source".
	Groups []string
	// token is the user's Open WebUI token (session mode), used to call Open WebUI on the
	// user's behalf (groups, uploads). Never logged, never returned.
	token string
	// vouched marks a caller the kernel built for a stored decision (VouchedIn): its Groups
	// are the kernel's, not a request's, so they are never recorded as seen.
	vouched bool
	// tool is the tool the request calls ("shed_create_file"; "" outside a tool call): the
	// change journal records it.
	tool string
}

// Calling is c calling tool (handlers set it for every tool call): the change journal
// records which tool made a change, whatever label the family gives the change.
func (c Caller) Calling(tool string) Caller {
	c.tool = tool
	return c
}

// ValidID reports whether s can be used as one path segment for a user or group id:
// letters, digits, '-' and '_', 1 to 64 characters, starting with a letter or digit so that
// no id reads as a command option (UUIDs pass; "..", "", "a/b", "-rf" do not). The rule is
// valves.ValidID, so that an id the configuration accepts is one every request accepts.
func ValidID(s string) bool { return valves.ValidID(s) }

// NewCaller validates the user id and sanitises the conversation id.
func NewCaller(userID, name, email, role, convID string, groups []string, token string) (Caller, error) {
	if !ValidID(userID) {
		return Caller{}, Errf(InvalidUser, "User ID format is invalid").
			WithHint("User ids must be 1-64 letters, digits, '-' or '_', starting with a letter or digit")
	}
	return Caller{UserID: userID, Name: name, Email: email, Role: role,
		ConvID: SanitizeConvID(convID), Groups: groups, token: token}, nil
}

// Token returns the caller's Open WebUI token (empty outside session mode).
func (c Caller) Token() string { return c.token }

// VouchedIn is c as a member of groupID and of no other group, for opening that group's
// zone on a decision already taken (a stored link whose creator MemberStateOf still
// accepts). Why a mark: such a caller's groups did not come from a request, so they must
// never be recorded as what the user was seen in (that would mark every other group left).
func (c Caller) VouchedIn(groupID string) Caller {
	c.Groups, c.token, c.vouched = []string{groupID}, "", true
	return c
}

var convUnsafe = regexp.MustCompile(`[^A-Za-z0-9_-]`)

// SanitizeConvID turns an Open WebUI chat id into one safe path segment: "unknown" when
// absent (as the original), unsafe characters replaced by '_', long ids shortened with a
// hash suffix so that distinct ids stay distinct.
func SanitizeConvID(id string) string {
	if id == "" {
		return "unknown"
	}
	if ValidID(id) {
		return id
	}
	s := convUnsafe.ReplaceAllString(id, "_")
	if len(s) > 46 {
		s = s[:46]
	}
	if c := s[0]; c == '-' || c == '_' {
		s = "c" + s // never an option-like directory name
	}
	sum := sha256.Sum256([]byte(id))
	return s + "-" + hex.EncodeToString(sum[:8])
}
