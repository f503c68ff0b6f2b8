package info

import "github.com/fileshed/fileshed/core"

// The answers of the info tools. Fields are declared in the order of their JSON names (the
// order the maps these replaced were written in; "_info" sorts first): the model-facing
// JSON is pinned byte for byte by the golden tests of the handlers package.

// parameters is the answer of shed_parameters.
type parameters struct {
	Info                  parametersInfo `json:"_info"`
	Archive               archiveLimits  `json:"archive"`
	ExecTimeoutDefault    int            `json:"exec_timeout_default"`
	ExecTimeoutMax        int            `json:"exec_timeout_max"`
	GroupDefaultMode      string         `json:"group_default_mode"`
	LockForceAfterMinutes int            `json:"lock_force_after_minutes"`
	LockMaxAgeHours       int            `json:"lock_max_age_hours"`
	MaxFileSizeMB         int            `json:"max_file_size_mb"`
	MaxOutputAbsolute     int            `json:"max_output_absolute"`
	MaxOutputDefault      int            `json:"max_output_default"`
	NetworkMode           string         `json:"network_mode"`
	OpenWebUIAPIURL       string         `json:"openwebui_api_url"`
	QuotaFilesPerGroup    int            `json:"quota_files_per_group"`
	QuotaFilesPerUser     int            `json:"quota_files_per_user"`
	QuotaPerGroupMB       int            `json:"quota_per_group_mb"`
	QuotaPerUserMB        int            `json:"quota_per_user_mb"`
}

// archiveLimits is the archive section of shed_parameters.
type archiveLimits struct {
	MaxDepth      int `json:"max_depth"`
	MaxEntries    int `json:"max_entries"`
	MaxNameLength int `json:"max_name_length"`
	MaxRatio      int `json:"max_ratio"`
	MaxTotalMB    int `json:"max_total_mb"`
}

// parametersInfo is what the valves mean for the model (the _info section).
type parametersInfo struct {
	GroupsAvailable      bool `json:"groups_available"`
	NetworkEnabled       bool `json:"network_enabled"`
	NetworkUploadAllowed bool `json:"network_upload_allowed"`
}

// stats is the answer of shed_stats. Groups is set where the caller's groups are known
// (an empty list when the caller is in none), nil otherwise.
type stats struct {
	Documents zoneLine      `json:"documents"`
	Groups    *[]groupQuota `json:"groups,omitempty"`
	Links     linkCount     `json:"links"`
	Locks     lockList      `json:"locks"`
	Storage   zoneLine      `json:"storage"`
	Total     totalUsage    `json:"total"`
	Uploads   zoneLine      `json:"uploads"`
}

// zoneLine is one personal zone of shed_stats, as measured; Unmeasured lists what the walk
// could not read.
type zoneLine struct {
	Files   int64 `json:"files"`
	Folders int64 `json:"folders"`
	// HistoryBytes, in the Documents line, is its history's share of the quota: the old
	// versions kept in its repository (outside SizeBytes).
	HistoryBytes   *int64   `json:"history_bytes,omitempty"`
	PercentOfQuota string   `json:"percent_of_quota"`
	SizeBytes      int64    `json:"size_bytes"`
	SizeHuman      string   `json:"size_human"`
	Unmeasured     []string `json:"unmeasured,omitempty"`
}

// totalUsage is the caller's accounted usage against the quota (core.QuotaLine with the
// size in bytes and in MB, and the quota in MB).
type totalUsage struct {
	FilesLimit   int64  `json:"files_limit"`
	FilesUsed    int64  `json:"files_used"`
	LimitBytes   int64  `json:"limit_bytes"`
	QuotaMB      int    `json:"quota_mb"`
	SizeBytes    int64  `json:"size_bytes"`
	SizeHuman    string `json:"size_human"`
	UsagePercent string `json:"usage_percent"`
	UsedBytes    int64  `json:"used_bytes"`
}

// groupQuota is the usage of one of the caller's groups (core.QuotaLine with its name and id,
// and its history's share of used_bytes).
type groupQuota struct {
	FilesLimit   int64  `json:"files_limit"`
	FilesUsed    int64  `json:"files_used"`
	Group        string `json:"group"`
	HistoryBytes int64  `json:"history_bytes"`
	ID           string `json:"id"`
	LimitBytes   int64  `json:"limit_bytes"`
	UsagePercent string `json:"usage_percent"`
	UsedBytes    int64  `json:"used_bytes"`
}

// linkCount counts the caller's links.
type linkCount struct {
	Active int `json:"active"`
	Total  int `json:"total"`
}

// lockList is the caller's open locked edits: the exact count, the first maxStatLocks.
type lockList struct {
	Count int        `json:"count"`
	Items []lockLine `json:"items"`
}

// lockLine is one locked edit; ThisConversation says whether this conversation holds it
// (only that conversation can save it).
type lockLine struct {
	Path             string `json:"path"`
	Since            string `json:"since"`
	ThisConversation bool   `json:"this_conversation"`
	Zone             string `json:"zone"`
}

// helpQuick is the answer of shed_help without a guide: the quick reference and the
// guides' descriptions, keyed by guide name (a map: the keys are the embedded guides).
type helpQuick struct {
	Help   string            `json:"help"`
	Howtos map[string]string `json:"howtos"`
}

// helpText is the answer of shed_help for one guide (Topic) or all of them (no topic).
type helpText struct {
	Help  string `json:"help"`
	Topic string `json:"topic,omitempty"`
}

// quotaCheck is one owner's line of shed_maintenance: the usage recorded before and measured
// now. Unmeasured lists what the walk could not read; then the recorded usage is kept and
// Reconciled is false (absent otherwise).
type quotaCheck struct {
	ID            string   `json:"id"`
	LimitBytes    int64    `json:"limit_bytes"`
	LimitFiles    int64    `json:"limit_files"`
	MeasuredBytes int64    `json:"measured_bytes"`
	MeasuredFiles int64    `json:"measured_files"`
	Owner         string   `json:"owner"`
	Reconciled    *bool    `json:"reconciled,omitempty"`
	RecordedBytes int64    `json:"recorded_bytes"`
	RecordedFiles int64    `json:"recorded_files"`
	Unmeasured    []string `json:"unmeasured,omitempty"`
}

// repoCheck is one repository's line of shed_maintenance. Status is ok, repaired or
// damaged; Problem is what the check found, Error why it could not be repaired; IndexRebuilt
// and RemovedLocks are set on a repair only; CommittedPending is the commit of changes an
// interrupted operation left uncommitted.
type repoCheck struct {
	CommittedPending string    `json:"committed_pending,omitempty"`
	Error            string    `json:"error,omitempty"`
	IndexRebuilt     *bool     `json:"index_rebuilt,omitempty"`
	Problem          string    `json:"problem,omitempty"`
	RemovedLocks     *[]string `json:"removed_locks,omitempty"`
	Status           string    `json:"status"`
	Zone             string    `json:"zone"`
}

// totalOf is q as the stats total line, with the size in MB and the quota in MB.
func totalOf(q core.QuotaLine, sizeHuman string, quotaMB int) totalUsage {
	return totalUsage{FilesLimit: q.FilesLimit, FilesUsed: q.FilesUsed, LimitBytes: q.LimitBytes, QuotaMB: quotaMB,
		SizeBytes: q.UsedBytes, SizeHuman: sizeHuman, UsagePercent: q.UsagePercent, UsedBytes: q.UsedBytes}
}

// groupQuotaOf is q as the stats line of group id (named name).
func groupQuotaOf(q core.QuotaLine, name, id string, history int64) groupQuota {
	return groupQuota{FilesLimit: q.FilesLimit, FilesUsed: q.FilesUsed, Group: name, HistoryBytes: history, ID: id,
		LimitBytes: q.LimitBytes, UsagePercent: q.UsagePercent, UsedBytes: q.UsedBytes}
}
