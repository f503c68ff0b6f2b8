package versions

// The answers of shed_history and shed_restore. Fields are declared in the order of their
// JSON names (the order the maps these replaced were written in): the model-facing JSON is
// pinned byte for byte by the golden tests of the handlers package.

// historyList is the answer of shed_history.
type historyList struct {
	Count   int            `json:"count"`
	Entries []historyEntry `json:"entries"`
	Path    string         `json:"path"`
	Zone    string         `json:"zone"`
}

// historyEntry is one commit of shed_history.
type historyEntry struct {
	Author  string `json:"author"`
	Date    string `json:"date"`
	Hash    string `json:"hash"`
	Message string `json:"message"`
	Short   string `json:"short"`
}

// restored is the answer of shed_restore; Commit is "" (and Committed false) when the file
// already had that content.
type restored struct {
	Commit    string `json:"commit"`
	Committed bool   `json:"committed"`
	Path      string `json:"path"`
	Size      int64  `json:"size"`
	Version   string `json:"version"`
	Zone      string `json:"zone"`
}
