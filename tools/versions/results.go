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

// changeList is the answer of shed_changes; NextOffset is 0 on the last page.
type changeList struct {
	Changes    []change `json:"changes"`
	Count      int      `json:"count"`
	NextOffset int      `json:"next_offset,omitempty"`
}

// change is one change of the journal: lines for text, byte sizes otherwise.
type change struct {
	BytesAfter   *int64 `json:"bytes_after,omitempty"`
	BytesBefore  *int64 `json:"bytes_before,omitempty"`
	By           string `json:"by"`
	Group        string `json:"group,omitempty"`
	ID           int64  `json:"id"`
	LinesAdded   *int64 `json:"lines_added,omitempty"`
	LinesRemoved *int64 `json:"lines_removed,omitempty"`
	OldPath      string `json:"old_path,omitempty"`
	Op           string `json:"op"`
	Path         string `json:"path"`
	Time         string `json:"time"`
	Tool         string `json:"tool"`
	Undoable     bool   `json:"undoable"`
	Undone       bool   `json:"undone,omitempty"`
	Why          string `json:"why,omitempty"`
	Zone         string `json:"zone"`
}

// changeDiff is the answer of shed_changes with change_id.
type changeDiff struct {
	Binary      bool   `json:"binary,omitempty"`
	Change      change `json:"change"`
	Cut         bool   `json:"cut,omitempty"`
	Diff        string `json:"diff,omitempty"`
	Unavailable string `json:"unavailable,omitempty"`
}

// undone is the answer of shed_undo.
type undone struct {
	Count   int      `json:"count"`
	Skipped []change `json:"skipped,omitempty"`
	Undone  []change `json:"undone"`
}
