package links

// The answers of the link tools. Fields are declared in the order of their JSON names
// (the order the maps these replaced were written in): the model-facing JSON is pinned
// byte for byte by the golden tests of the handlers package.

// LinkCreated is the answer of shed_link_create for a link fileshed serves (shed_save_page
// builds its own answer from it).
type LinkCreated struct {
	ClickableLink string `json:"clickable_link"`
	ExpiresAt     string `json:"expires_at"`
	Filename      string `json:"filename"`
	Kind          string `json:"kind"`
	LinkID        string `json:"link_id"`
	MaxDownloads  int64  `json:"max_downloads"`
	Path          string `json:"path"`
	// SizeBytes is set for a file (0 for an empty one), never for a folder.
	SizeBytes *int64 `json:"size_bytes,omitempty"`
	URL       string `json:"url"`
	Zone      string `json:"zone"`
}

// LinkUploaded is the answer of shed_link_create in links.mode openwebui: the file was
// uploaded into the caller's Open WebUI files (shed_save_page builds its own answer from it).
type LinkUploaded struct {
	ClickableLink string `json:"clickable_link"`
	DownloadURL   string `json:"download_url"`
	FileID        string `json:"file_id"`
	Filename      string `json:"filename"`
	LinkID        string `json:"link_id"`
	Path          string `json:"path"`
	SizeBytes     int64  `json:"size_bytes"`
	URL           string `json:"url"`
	Zone          string `json:"zone"`
}

// linkList is the answer of shed_link_list.
type linkList struct {
	Count int         `json:"count"`
	Links []linkEntry `json:"links"`
}

// linkEntry is one link of shed_link_list. FileID is set for a links.mode openwebui link,
// Group for a link to a group file, URL while the link is active (and can be rebuilt).
type linkEntry struct {
	CreatedAt    string `json:"created_at"`
	Downloads    int64  `json:"downloads"`
	ExpiresAt    string `json:"expires_at"`
	FileID       string `json:"file_id,omitempty"`
	Group        string `json:"group,omitempty"`
	LinkID       string `json:"link_id"`
	MaxDownloads int64  `json:"max_downloads"`
	Path         string `json:"path"`
	State        string `json:"state"`
	URL          string `json:"url,omitempty"`
	Zone         string `json:"zone"`
}

// linkDeleted is the answer of shed_link_delete.
type linkDeleted struct {
	Deleted bool   `json:"deleted"`
	LinkID  string `json:"link_id"`
	Path    string `json:"path"`
	Zone    string `json:"zone"`
}
