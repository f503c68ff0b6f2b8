package valves

import (
	"net"
	"net/url"
	"slices"
	"strings"
)

// Config is the effective configuration. The yaml tag is the valve's key; the other tags are
// read by this package: secret:"true" (redacted in Report, also read from FILESHED_<NAME>_FILE),
// enum:"a|b" (allowed values), min/max (inclusive range, required on every int so that no
// valve can overflow when converted to bytes or a time.Duration), minlen (the shortest value
// a string may have when it is set: a guessable key is refused at start).
type Config struct {
	// Listen is the host:port the HTTP server binds.
	Listen string `yaml:"listen"`
	// StorageBasePath is the root directory of all zones and of the SQLite state database.
	StorageBasePath string `yaml:"storage_base_path"`
	// State says where the state database lives.
	State StateConfig `yaml:"state"`
	// PublicURLBase is the public_url valve as configured (may be empty); use PublicURL for the
	// effective value.
	PublicURLBase string `yaml:"public_url"`
	// Auth says how callers are identified.
	Auth AuthConfig `yaml:"auth"`
	// OpenWebUI locates and times the Open WebUI instance fileshed talks to.
	OpenWebUI OpenWebUIConfig `yaml:"openwebui"`
	// CORS lists the origins allowed to make cross-origin requests.
	CORS CORSConfig `yaml:"cors"`
	// Groups gives group membership where Open WebUI is not asked.
	Groups GroupsConfig `yaml:"groups"`
	// QuotaPerUserMB is each user's storage quota in MB.
	QuotaPerUserMB int `yaml:"quota_per_user_mb" min:"1" max:"1073741824"`
	// QuotaPerGroupMB is each group space's storage quota in MB.
	QuotaPerGroupMB int `yaml:"quota_per_group_mb" min:"1" max:"1073741824"`
	// QuotaFilesPerUser is how many names (files, folders, links) each user may hold.
	QuotaFilesPerUser int `yaml:"quota_files_per_user" min:"1" max:"1000000000"`
	// QuotaFilesPerGroup is how many names each group space may hold.
	QuotaFilesPerGroup int `yaml:"quota_files_per_group" min:"1" max:"1000000000"`
	// MaxFileSizeMB is the largest file one write or import may produce, in MB.
	MaxFileSizeMB int `yaml:"max_file_size_mb" min:"1" max:"1073741824"`
	// LockMaxAgeHours is the age after which shed_maintenance releases a locked edit.
	LockMaxAgeHours int `yaml:"lock_max_age_hours" min:"1" max:"87600"`
	// LockForceAfterMinutes is how long a locked edit in a group space must be idle before
	// another member may break it with shed_force_unlock.
	LockForceAfterMinutes int `yaml:"lock_force_after_minutes" min:"0" max:"5256000"`
	// ExecTimeoutDefault is the shed_exec timeout, in seconds, when the call gives none.
	ExecTimeoutDefault int `yaml:"exec_timeout_default" min:"1" max:"86400"`
	// ExecTimeoutMax is the largest shed_exec timeout a call may ask for, in seconds.
	ExecTimeoutMax int `yaml:"exec_timeout_max" min:"1" max:"86400"`
	// ExecMemoryLimitMB is RLIMIT_AS of every command in MB (0 = no limit).
	ExecMemoryLimitMB int `yaml:"exec_memory_limit_mb" min:"0" max:"1073741824"`
	// ExecCPULimitSeconds is RLIMIT_CPU of every command in seconds (0 = no limit).
	ExecCPULimitSeconds int `yaml:"exec_cpu_limit_seconds" min:"0" max:"86400"`
	// ExecSandbox says whether Landlock confinement of commands is required, best effort or off.
	ExecSandbox string `yaml:"exec_sandbox" enum:"required|best_effort|off"`
	// ExecMaxPerUser is how many commands one user may run at once.
	ExecMaxPerUser int `yaml:"exec_max_per_user" min:"1" max:"100000"`
	// ExecMaxTotal is how many commands may run at once on the server (0 = 4 per CPU core).
	ExecMaxTotal int `yaml:"exec_max_total" min:"0" max:"100000"`
	// ExecMemoryTotalMB bounds the sum of the running commands' memory limits, in MB
	// (0 = half of the machine's memory).
	ExecMemoryTotalMB int `yaml:"exec_memory_total_mb" min:"0" max:"1073741824"`
	// GroupDefaultMode is the access mode of new files in group spaces.
	GroupDefaultMode string `yaml:"group_default_mode" enum:"group|owner|owner_ro"`
	// NetworkMode is the network access of commands.
	NetworkMode string `yaml:"network_mode" enum:"disabled|safe|all"`
	// MaxOutputDefault is a command's output cap, in characters, when the call gives none.
	MaxOutputDefault int `yaml:"max_output_default" min:"1" max:"1073741824"`
	// MaxOutputAbsolute is the largest output cap a call may ask for, in characters.
	MaxOutputAbsolute int `yaml:"max_output_absolute" min:"1" max:"1073741824"`
	// SQLiteReadonly refuses writing statements in shed_sqlite.
	SQLiteReadonly bool `yaml:"sqlite_readonly"`
	// SQLiteJournalMode is the journal mode of shed_sqlite databases (SQLiteJournal is the
	// effective one).
	SQLiteJournalMode string `yaml:"sqlite_journal_mode" enum:"wal|delete|truncate|memory"`
	// SQLiteRowsDefault is how many rows a shed_sqlite query answers when the call gives no limit.
	SQLiteRowsDefault int `yaml:"sqlite_rows_default" min:"1" max:"1000000"`
	// SQLiteRowsMax is the most rows a shed_sqlite query answers (limit=0 asks for this many).
	SQLiteRowsMax int `yaml:"sqlite_rows_max" min:"1" max:"1000000"`
	// SQLiteMemoryMB bounds the SQLite heap of one connection (one shed_sqlite call), in MB.
	SQLiteMemoryMB int `yaml:"sqlite_memory_mb" min:"16" max:"65536"`
	// LinkTTLHoursDefault is a download link's lifetime when the call gives none, in hours.
	LinkTTLHoursDefault int `yaml:"link_ttl_hours_default" min:"1" max:"87600"`
	// LinkTTLHoursMax is the longest lifetime a download link may ask for, in hours.
	LinkTTLHoursMax int `yaml:"link_ttl_hours_max" min:"1" max:"87600"`
	// PageMaxKB is the largest result page shed_save_page writes, in KB.
	PageMaxKB int `yaml:"page_max_kb" min:"1" max:"1048576"`
	// Links says who serves download links.
	Links LinksConfig `yaml:"links"`
	// AuditRetentionDays is how long `fileshed admin audit prune` keeps audit entries by default.
	AuditRetentionDays int `yaml:"audit_retention_days" min:"0" max:"36500"`
	// Metrics configures the Prometheus endpoint /metrics.
	Metrics MetricsConfig `yaml:"metrics"`
	// MCP configures the Model Context Protocol endpoint POST /mcp.
	MCP MCPConfig `yaml:"mcp"`
	// Archive bounds what shed_unzip extracts.
	Archive ArchiveConfig `yaml:"archive"`
	// Encryption configures encryption at rest of Storage and Uploads.
	Encryption EncryptionConfig `yaml:"encryption"`
	// Journal configures the change journal (shed_version changes, undo, review).
	Journal JournalConfig `yaml:"journal"`
	// LogLevel is the level of the JSON logs.
	LogLevel string `yaml:"log_level" enum:"debug|info|warn|error"`
	// ToolDescriptions replaces the description of model-facing tools (tool name -> text),
	// for operators who tune prompts.
	ToolDescriptions map[string]string `yaml:"tool_descriptions"`
	// MaxBodyMB is the body limit of content-carrying tools in MB (0 = max_file_size_mb + 1);
	// use MaxBodyBytes for the effective value.
	MaxBodyMB int `yaml:"max_body_mb" min:"0" max:"1073741824"`
	// ShutdownGraceSeconds is how long a stopping server lets calls in flight finish before
	// it kills their commands.
	ShutdownGraceSeconds int `yaml:"shutdown_grace_seconds" min:"1" max:"3600"`
}

// StateConfig is the state section: the database that holds ownership, locks, links, usage,
// keys and the audit trail.
type StateConfig struct {
	// Driver is sqlite (fileshed.sqlite in the storage directory: one server) or postgres
	// (the database at URL, which several replicas share).
	Driver string `yaml:"driver" enum:"sqlite|postgres"`
	// URL is the PostgreSQL connection URL of driver postgres (postgres://user:password@host/db);
	// a secret, since it may carry the password.
	URL string `yaml:"url" secret:"true"`
	// LockConnections is how many PostgreSQL connections the locks of driver postgres may
	// fill before a call holding none waits (one per held lock; a call holding locks takes
	// its next ones past it).
	LockConnections int `yaml:"lock_connections" min:"1" max:"1000"`
}

// EncryptionConfig is the encryption section: where the key that wraps every user's data key
// comes from, and where decrypted working copies live while a command runs.
type EncryptionConfig struct {
	// MasterKey wraps the users' data keys (at least 32 characters); empty disables
	// shed_encryption setup. Keep it outside the storage directory.
	MasterKey string `yaml:"master_key" secret:"true" minlen:"32"`
	// WorkDir holds the decrypted copies that shed_exec, shed_sqlite and PDF reading need for
	// the length of one call ("" = {storage_base_path}/.plain); a tmpfs keeps them off disk.
	WorkDir string `yaml:"work_dir"`
}

// MetricsConfig is the metrics section.
type MetricsConfig struct {
	// Token, when set, is the bearer token /metrics requires.
	Token string `yaml:"token" secret:"true" minlen:"16"`
}

// MCPConfig is the mcp section: the same tools over the Model Context Protocol (Streamable
// HTTP, stateless) at POST /mcp, for editors and desktop assistants.
type MCPConfig struct {
	// Enabled serves POST /mcp; off, the route does not exist.
	Enabled bool `yaml:"enabled"`
}

// ArchiveConfig is the archive section: the limits of shed_unzip, checked on the bytes
// actually decompressed (and reported as warnings by shed_zipinfo).
type ArchiveConfig struct {
	// MaxEntries is the most entries (files, folders, skipped ones) an archive may hold.
	MaxEntries int `yaml:"max_entries" min:"1" max:"10000000"`
	// MaxTotalMB is the most an archive may expand to, in MB.
	MaxTotalMB int `yaml:"max_total_mb" min:"1" max:"1073741824"`
	// MaxRatio is the largest expansion ratio of an entry and of the archive (past 1 MiB).
	MaxRatio int `yaml:"max_ratio" min:"1" max:"100000"`
	// MaxDepth is the most path components of an entry name.
	MaxDepth int `yaml:"max_depth" min:"1" max:"4096"`
	// MaxNameLength is the longest entry name, in bytes.
	MaxNameLength int `yaml:"max_name_length" min:"1" max:"4096"`
}

// JournalConfig is the journal section: the record of every change of a zone and the
// before-images that undo puts back (core/journal.go).
type JournalConfig struct {
	// Enabled records the changes; false records nothing (undo has nothing to put back).
	Enabled bool `yaml:"enabled"`
	// KeepDays is how long a change and its before-image are kept.
	KeepDays int `yaml:"keep_days" min:"1" max:"3650"`
	// MaxPercent bounds a user's before-images in Storage, as a percentage of the user's
	// quota (outside it); the oldest go first.
	MaxPercent int `yaml:"max_percent" min:"1" max:"100"`
	// MaxFileMB is the largest file whose before-image is kept, in MB (larger ones are
	// recorded without one).
	MaxFileMB int `yaml:"max_file_mb" min:"0" max:"1073741824"`
	// InlineKB is the largest file whose before-image is kept inside its journal row in the
	// state database, in KB (larger ones, and folders, in the journal area; 0 = never inline).
	// At most 256: the journal reads a file whole (for its line counts) up to 256 KB.
	InlineKB int `yaml:"inline_kb" min:"0" max:"256"`
}

// AuthConfig is the auth section: how a request's caller is identified.
type AuthConfig struct {
	// Mode is session, jwt, headers or none.
	Mode string `yaml:"mode" enum:"session|jwt|headers|none"`
	// APIKey is the static bearer key of jwt and headers modes.
	APIKey string `yaml:"api_key" secret:"true" minlen:"16"`
	// JWTSecret is the HS256 secret that signs X-OpenWebUI-User-Jwt.
	JWTSecret string `yaml:"jwt_secret" secret:"true" minlen:"16"`
	// JWTIssuer is the iss claim a forwarded JWT must carry ("" accepts any issuer).
	JWTIssuer string `yaml:"jwt_issuer"`
	// AllowInsecureNone allows mode none on a non-loopback listen address.
	AllowInsecureNone bool `yaml:"allow_insecure_none"`
	// NoneUserID is the fixed user of mode none.
	NoneUserID string `yaml:"none_user_id"`
}

// OpenWebUIConfig is the openwebui section: the Open WebUI instance fileshed talks to.
type OpenWebUIConfig struct {
	// URL is Open WebUI's base URL, e.g. http://localhost:8080.
	URL string `yaml:"url"`
	// AdminAPIKey is an admin API key for calls made without a user token.
	AdminAPIKey string `yaml:"admin_api_key" secret:"true"`
	// TimeoutSeconds bounds each call to Open WebUI.
	TimeoutSeconds int `yaml:"timeout_seconds" min:"1" max:"3600"`
	// CacheSeconds is how long a verified token is cached (0 = no cache); groups are not.
	CacheSeconds int `yaml:"cache_seconds" min:"0" max:"86400"`
}

// CORSConfig is the cors section.
type CORSConfig struct {
	// AllowedOrigins holds "*" or exact origins (scheme://host[:port]); empty means
	// openwebui.url's origin (Config.TrustedOrigins).
	AllowedOrigins []string `yaml:"allowed_origins"`
}

// TrustedOrigins are the origins whose pages may call fileshed from a browser:
// cors.allowed_origins as set, or, when it is empty, the origin of openwebui.url (Open
// WebUI's page calls a user's direct tool servers itself); none when neither is set.
// Each is written as a browser sends it in Origin (lower case, no default port), so that
// an exact comparison holds.
func (c *Config) TrustedOrigins() []string {
	list := c.CORS.AllowedOrigins
	if len(list) == 0 {
		if c.OpenWebUI.URL == "" {
			return nil
		}
		list = []string{c.OpenWebUI.URL}
	}
	out := make([]string, 0, len(list))
	for _, o := range list {
		out = append(out, serializedOrigin(o))
	}
	return out
}

// serializedOrigin is the origin of URL s as a browser serializes it (RFC 6454): scheme and
// host in lower case, the scheme's default port dropped; "*" and what is no URL unchanged.
func serializedOrigin(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return s
	}
	scheme, host := strings.ToLower(u.Scheme), strings.ToLower(u.Hostname())
	port := u.Port()
	if scheme == "http" && port == "80" || scheme == "https" && port == "443" {
		port = ""
	}
	if port != "" || strings.Contains(host, ":") {
		if port == "" {
			return scheme + "://[" + host + "]"
		}
		host = net.JoinHostPort(host, port)
	}
	return scheme + "://" + host
}

// AnyOrigin reports whether cors.allowed_origins holds "*": every page may call fileshed.
func (c *Config) AnyOrigin() bool { return slices.Contains(c.CORS.AllowedOrigins, "*") }

// GroupsConfig is the groups section: membership for headers, jwt and none modes.
type GroupsConfig struct {
	// Header is the request header carrying comma-separated group ids (headers mode).
	Header string `yaml:"header"`
	// Static maps a group id to its member user ids.
	Static map[string][]string `yaml:"static"`
	// MemberSeenDays is how recently a user must have been seen as a member of a group
	// (a request listing it) to count as one where no source lists the members.
	MemberSeenDays int `yaml:"member_seen_days" min:"1" max:"3650"`
}

// LinksConfig is the links section.
type LinksConfig struct {
	// Mode is fileshed (links served by fileshed) or openwebui (upload into Open WebUI).
	Mode string `yaml:"mode" enum:"fileshed|openwebui"`
	// Secret is the key that signs link tokens; empty means a random key kept in
	// {storage_base_path}/links.key (0600, created on first start).
	Secret string `yaml:"secret" secret:"true" minlen:"16"`
}

// PublicURL is the base URL of download links, without a trailing slash: public_url, or
// http://<listen> when it is empty. A listen address without a host or with an unspecified
// one (0.0.0.0, ::) becomes localhost there, since no browser can open those.
func (c *Config) PublicURL() string {
	if c.PublicURLBase != "" {
		return strings.TrimRight(c.PublicURLBase, "/")
	}
	host, port, err := net.SplitHostPort(c.Listen)
	if err != nil {
		return "http://" + c.Listen
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		host = "localhost"
	}
	return "http://" + net.JoinHostPort(host, port)
}

// SQLiteJournal is the journal mode shed_sqlite sets: sqlite_journal_mode, except that wal
// becomes delete with state.driver postgres. Why: WAL keeps its index in shared memory,
// which processes on different hosts sharing the volume do not share, so two replicas
// writing one database in WAL mode would corrupt it; a rollback journal relies on file
// locks only, which a shared volume made for replicas provides.
func (c *Config) SQLiteJournal() string {
	if c.SQLiteJournalMode == "wal" && c.State.Driver == "postgres" {
		return "delete"
	}
	return c.SQLiteJournalMode
}

// MaxBodyBytes is the request body limit of the tools that carry content: max_body_mb, or
// max_file_size_mb + 1 (room for the JSON around the largest file) when max_body_mb is 0.
func (c *Config) MaxBodyBytes() int64 {
	mb := c.MaxBodyMB
	if mb == 0 {
		mb = c.MaxFileSizeMB + 1
	}
	return int64(mb) << 20
}

// Names returns every valve name ("listen", "auth.mode", ...) in the order of valves.yaml.
func Names() []string {
	names := make([]string, len(all))
	for i, v := range all {
		names[i] = v.name
	}
	return names
}
