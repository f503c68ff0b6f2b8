package core

// The error catalogue: every code fileshed can answer, with the default hint sent when a
// call site has nothing more specific to say. FUNCTIONS.md is the contract for these names.
const (
	InvalidUser        Code = "INVALID_USER"
	InvalidZone        Code = "INVALID_ZONE"
	ZoneReadonly       Code = "ZONE_READONLY"
	InvalidGroupID     Code = "INVALID_GROUP_ID"
	GroupNotFound      Code = "GROUP_NOT_FOUND"
	GroupNotAvailable  Code = "GROUP_NOT_AVAILABLE"
	GroupAccessDenied  Code = "GROUP_ACCESS_DENIED"
	MissingParameter   Code = "MISSING_PARAMETER"
	InvalidParameter   Code = "INVALID_PARAMETER"
	InvalidPath        Code = "INVALID_PATH"
	PathEscape         Code = "PATH_ESCAPE"
	PathStartsWithZone Code = "PATH_STARTS_WITH_ZONE"
	FileNotFound       Code = "FILE_NOT_FOUND"
	FileTooLarge       Code = "FILE_TOO_LARGE"
	QuotaExceeded      Code = "QUOTA_EXCEEDED"
	ExecutionError     Code = "EXECUTION_ERROR"
	AuthRequired       Code = "AUTH_REQUIRED"
	AuthInvalid        Code = "AUTH_INVALID"
	AuthUnavailable    Code = "AUTH_UNAVAILABLE"
	BodyTooLarge       Code = "BODY_TOO_LARGE"
	InternalError      Code = "INTERNAL_ERROR"
	// StateUnavailable is an INTERNAL_ERROR whose cause is the state database refusing a
	// connection (too many clients, starting or stopping, unreachable): Because turns one
	// into the other, so the caller learns that a retry may work.
	StateUnavailable Code = "STATE_UNAVAILABLE"
	// CrossOriginForbidden refuses a request another web page made from a user's browser
	// (403): a cross-site call from an origin not in cors.allowed_origins, or a foreign Host
	// on a loopback address (DNS rebinding). The HTTP edge answers it, never a tool.
	CrossOriginForbidden Code = "CROSS_ORIGIN_FORBIDDEN"
)

// hints is the catalogue: every code with its default hint. Each tool family's file adds
// its own codes with addHints in an init (codes_files.go, codes_tools.go).
var hints = map[Code]string{
	InvalidUser:        "Sign in to Open WebUI again: the server could not derive a valid user id",
	InvalidZone:        "Use zone='uploads', 'storage', 'documents' or 'group' (with group=...)",
	ZoneReadonly:       "Uploads is read-only: write in zone='storage' or 'documents'; remove an upload with shed_delete",
	InvalidGroupID:     "Group ids are 1-64 letters, digits, '-' and '_', starting with a letter or digit; list yours with shed_group(action='list')",
	GroupNotFound:      "Check the group name (case-sensitive) or id with shed_group(action='list')",
	GroupNotAvailable:  "Groups are not configured on this server: use zone='storage' or 'documents'",
	GroupAccessDenied:  "Request access from a group administrator, or use a group from shed_group(action='list')",
	MissingParameter:   "Add the argument named in details.parameter (usage lists them) and call again",
	InvalidParameter:   "Fix the argument named in details (usage lists them) and call again",
	InvalidPath:        "Use a relative path inside the zone, e.g. path='notes/x.txt' (see shed_tree)",
	PathEscape:         "Use a path inside the zone, e.g. path='notes/x.txt' (see shed_tree)",
	PathStartsWithZone: "The zone argument already sets the working directory: drop the zone name from path (or set allow_zone_in_path=true for a folder of that name)",
	FileNotFound:       "Check the path with shed_tree",
	FileTooLarge:       "Split the content into smaller parts, or ask an administrator to raise max_file_size_mb",
	QuotaExceeded:      "Free space with shed_delete (see shed_info(action='stats')), or ask an administrator to raise the quota",
	ExecutionError:     "Run shed_info(action='maintenance') to repair the repository",
	AuthRequired:       "Configure the tool server in Open WebUI with auth type Session (or the bearer key)",
	AuthInvalid:        "Sign in to Open WebUI again, or check the tool server's key",
	AuthUnavailable:    "Open WebUI could not verify the session: retry in a moment (administrator: check openwebui.url, FILESHED_OPENWEBUI_URL)",
	BodyTooLarge:       "Send less data per call (see max_file_size_mb in shed_info(action='parameters'))",
	InternalError:      "Retry; if it persists, report the request id to the administrator",
	StateUnavailable:   "The state database refuses connections now: retry in a moment (administrator: PostgreSQL max_connections and the replicas' connections, README 'Several replicas')",
	// A web page's request: the administrator decides which pages may call fileshed.
	CrossOriginForbidden: "Only pages of the origins in cors.allowed_origins (FILESHED_CORS_ALLOWED_ORIGINS; by default openwebui.url's) may call fileshed from a browser: add the page's origin there",
}

// addHints registers a family's codes in the catalogue.
func addHints(m map[Code]string) {
	for c, h := range m {
		hints[c] = h
	}
}

func defaultHint(c Code) string {
	if h, ok := hints[c]; ok {
		return h
	}
	return "See shed_help"
}

// Codes lists every code of the catalogue (used by the error-catalogue test).
func Codes() []Code {
	out := make([]Code, 0, len(hints))
	for c := range hints {
		out = append(out, c)
	}
	return out
}
