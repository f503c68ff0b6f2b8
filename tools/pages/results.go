package pages

import "github.com/fileshed/fileshed/tools/links"

// The answers of shed_save_page: the link's answer (links.LinkCreated or, in links.mode
// openwebui, links.LinkUploaded) with the page's title, format and, for Markdown, its
// content. Fields are declared in the order of their JSON names (the order the map these
// replaced was written in): the golden tests of the handlers package pin it byte for byte.

// pageContent is the content a Markdown page's answer carries (an HTML page's has none:
// the embedded pointer is nil and its fields are left out).
type pageContent struct {
	Content          string `json:"content"`
	ContentTruncated bool   `json:"content_truncated"`
}

// pageSaved is the answer for a page fileshed serves.
type pageSaved struct {
	ClickableLink string `json:"clickable_link"`
	*pageContent
	ExpiresAt    string `json:"expires_at"`
	Filename     string `json:"filename"`
	Format       string `json:"format"`
	Kind         string `json:"kind"`
	LinkID       string `json:"link_id"`
	MaxDownloads int64  `json:"max_downloads"`
	Path         string `json:"path"`
	SizeBytes    *int64 `json:"size_bytes,omitempty"`
	Title        string `json:"title"`
	URL          string `json:"url"`
	Zone         string `json:"zone"`
}

// pageUploaded is the answer for a page uploaded into Open WebUI (links.mode openwebui).
type pageUploaded struct {
	ClickableLink string `json:"clickable_link"`
	*pageContent
	DownloadURL string `json:"download_url"`
	FileID      string `json:"file_id"`
	Filename    string `json:"filename"`
	Format      string `json:"format"`
	LinkID      string `json:"link_id"`
	Path        string `json:"path"`
	SizeBytes   int64  `json:"size_bytes"`
	Title       string `json:"title"`
	URL         string `json:"url"`
	Zone        string `json:"zone"`
}

// pageAnswer builds the answer of shed_save_page from the link's answer; ok is false for
// an answer of another shape (returned as it is).
func pageAnswer(link any, title, format string, content *pageContent) (data any, click string, ok bool) {
	switch l := link.(type) {
	case links.LinkCreated:
		url := l.URL + "?" + PageView
		click = "[📄 " + links.MarkdownEscape(title) + "](" + url + ")"
		return pageSaved{ClickableLink: click, pageContent: content, ExpiresAt: l.ExpiresAt, Filename: l.Filename,
			Format: format, Kind: l.Kind, LinkID: l.LinkID, MaxDownloads: l.MaxDownloads, Path: l.Path,
			SizeBytes: l.SizeBytes, Title: title, URL: url, Zone: l.Zone}, click, true
	case links.LinkUploaded:
		return pageUploaded{ClickableLink: l.ClickableLink, pageContent: content, DownloadURL: l.DownloadURL,
			FileID: l.FileID, Filename: l.Filename, Format: format, LinkID: l.LinkID, Path: l.Path,
			SizeBytes: l.SizeBytes, Title: title, URL: l.URL, Zone: l.Zone}, l.ClickableLink, true
	}
	return nil, "", false
}
