package handlers

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/fileshed/fileshed/tools"
	"github.com/fileshed/fileshed/tools/links"
	"github.com/fileshed/fileshed/tools/pages"

	"github.com/gabriel-vasile/mimetype"
	"github.com/go-chi/chi/v5"
)

// linkServer serves GET|HEAD /dl/{token}[/sub/path]: files with http.ServeContent (Range,
// ETag, conditional requests, sendfile), folders as an HTML page or a streamed zip. Its
// answers are never JSON envelopes: a browser shows them to a person.
type linkServer struct {
	svc     *tools.Set
	metrics *metrics
	log     *slog.Logger
	// base is public_url: every address on a page is built from it, never from the
	// request's Host header.
	base string
}

// Why these headers on every answer: the content is the user's, possibly hostile (an HTML
// file with a script); no-store keeps it out of shared caches, no-referrer keeps the token
// out of the Referer of anything a page links to, nosniff stops browsers from guessing a
// more dangerous type than the one sent.
// downloadTime is how long a download of size bytes may take: 10 minutes, plus the time the
// bytes need at 64 KiB/s (a folder's zip, of unknown size, gets an hour).
func downloadTime(size int64) time.Duration {
	if size <= 0 {
		return time.Hour
	}
	return 10*time.Minute + time.Duration(size/(64<<10))*time.Second
}

func commonHeaders(h http.Header) {
	h.Set("Cache-Control", "private, no-store")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("X-Content-Type-Options", "nosniff")
}

func (l *linkServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	cw := &countingWriter{ResponseWriter: w, status: http.StatusOK}
	defer func() {
		l.metrics.downloads.WithLabelValues(strconv.Itoa(cw.status)).Inc()
		l.metrics.bytes.Add(float64(cw.n))
		l.log.Info("download", "request_id", requestID(r.Context()), "method", r.Method, "status", cw.status, "bytes", cw.n)
	}()
	commonHeaders(cw.Header())
	// "//a.txt" is a doubled slash, not an absolute path: the path is otherwise as sent.
	sub := strings.TrimLeft(chi.URLParam(r, "*"), "/")
	t, err := l.svc.Links.OpenLink(r.Context(), chi.URLParam(r, "token"), sub)
	if err != nil {
		l.fail(cw, r, err)
		return
	}
	defer t.Close()
	defer func() { l.svc.Links.AuditDownload(t, cw.status) }()
	cw.target = t
	// The server's write timeout is sized for tool answers; a download gets time for its
	// size at a slow client's pace (64 KiB/s), so large files are not cut off, and a client
	// that stops reading is still let go.
	size := int64(0)
	if t.File != nil {
		size = t.Info.Size()
	}
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(downloadTime(size)))
	switch {
	case t.File != nil:
		l.file(cw, r, t)
	case r.URL.Query().Has("zip"):
		l.zip(cw, r, t)
	default:
		l.listing(cw, r, t)
	}
}

// fail answers a refused link: 404 for what is unknown, 410 for what is gone.
func (l *linkServer) fail(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, links.ErrLinkUnknown):
		errorPage(w, http.StatusNotFound, "This link does not exist. Check that it was copied whole.")
	case errors.Is(err, links.ErrLinkGone):
		reason := "This link cannot be used any more."
		if g := (*links.GoneError)(nil); errors.As(err, &g) {
			reason = g.Reason()
		}
		errorPage(w, http.StatusGone, reason+" Ask for a new link.")
	default:
		l.log.Error("download failed", "request_id", requestID(r.Context()), "err", err)
		errorPage(w, http.StatusInternalServerError, "The server could not serve this link. Request id: "+requestID(r.Context()))
	}
}

// file streams one file. The download is counted (one atomic UPDATE) before the first
// byte, on GET only: HEAD and conditional answers without a body count too little to
// matter, and counting them would let a probe use a one-time link up.
func (l *linkServer) file(w http.ResponseWriter, r *http.Request, t *links.LinkTarget) {
	// Only a page link renders (core.PageView): on any other link ?view changes nothing.
	if t.Link.Page && r.URL.Query().Has(pages.PageView) && l.view(w, r, t) {
		return
	}
	size := t.Info.Size()
	if status := checkRanges(r.Header.Get("Range"), size); status != 0 {
		w.Header().Set("Content-Range", fmt.Sprintf("bytes */%d", size))
		errorPage(w, status, "The requested byte range cannot be served.")
		return
	}
	content := t.Content()
	mt, err := mimetype.DetectReader(content)
	if err == nil {
		_, err = content.Seek(0, io.SeekStart)
	}
	if err != nil {
		l.fail(w, r, err)
		return
	}
	if r.Method == http.MethodGet {
		if err := l.svc.Links.UseLink(r.Context(), t.Link); err != nil {
			l.fail(w, r, err)
			return
		}
	}
	h := w.Header()
	ctype := mt.String()
	h.Set("Content-Type", ctype)
	h.Set("Content-Disposition", disposition(inlineSafe(ctype), t.Name))
	// Why for every file: HTML and SVG run scripts when opened; a sandboxed document has an
	// opaque origin and no scripts, whatever the type turns out to be.
	h.Set("Content-Security-Policy", "sandbox")
	h.Set("ETag", etag(t))
	http.ServeContent(w, r, "", t.Info.ModTime(), content)
}

// etag names this version of the file: inode, size and mtime.
func etag(t *links.LinkTarget) string {
	return fmt.Sprintf(`"%x-%x-%x"`, inode(t.Info), t.Info.Size(), t.Info.ModTime().UnixNano())
}

// inlineSafe reports whether a type may be shown in the browser rather than downloaded:
// raster images, plain text, audio and video. Never HTML, SVG, XML or PDF.
func inlineSafe(ctype string) bool {
	base, _, _ := strings.Cut(ctype, ";")
	switch base {
	case "image/png", "image/jpeg", "image/gif", "image/webp", "image/avif", "text/plain":
		return true
	}
	return strings.HasPrefix(base, "audio/") || strings.HasPrefix(base, "video/")
}

// zipRetryAfter is the Retry-After (seconds) of a zip refused while the link creator's
// command slots (or the server's) are all taken.
const zipRetryAfter = "10"

// zip streams the folder as a zip archive (counted as one download on GET). It takes one
// of the link creator's command slots first (links.LinkZipSlot): when none frees in time,
// 503 with Retry-After, and the download is not counted.
func (l *linkServer) zip(w http.ResponseWriter, r *http.Request, t *links.LinkTarget) {
	h := w.Header()
	h.Set("Content-Type", "application/zip")
	h.Set("Content-Disposition", disposition(false, t.Name+".zip"))
	h.Set("Content-Security-Policy", "sandbox")
	if r.Method != http.MethodGet {
		return
	}
	release, err := l.svc.Links.LinkZipSlot(r.Context(), t)
	if err != nil {
		h.Set("Retry-After", zipRetryAfter)
		errorPage(w, http.StatusServiceUnavailable, "The server is busy: try the download again in a few seconds.")
		return
	}
	defer release()
	if err := l.svc.Links.UseLink(r.Context(), t.Link); err != nil {
		h.Del("Content-Disposition")
		l.fail(w, r, err)
		return
	}
	if err := t.WriteZip(r.Context(), w); err != nil {
		// The status is sent: abort the connection so the client sees a truncated
		// download, not a valid-looking archive.
		l.log.Warn("zip stream failed", "request_id", requestID(r.Context()), "err", err)
		panic(http.ErrAbortHandler)
	}
}

// countingWriter records the status and the body bytes of an answer, for the metrics.
// ReadFrom passes through so that http.ServeContent keeps its sendfile path (and an
// encrypted file its whole-segment stream).
type countingWriter struct {
	http.ResponseWriter
	status int
	n      int64
	target *links.LinkTarget // an encrypted file streams itself in whole segments
}

func (c *countingWriter) WriteHeader(status int) {
	c.status = status
	c.ResponseWriter.WriteHeader(status)
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n += int64(n)
	return n, err
}

func (c *countingWriter) ReadFrom(src io.Reader) (int64, error) {
	if c.target != nil {
		if n, ok, err := c.target.StreamTo(struct{ io.Writer }{c}, src); ok {
			return n, err
		}
	}
	if rf, ok := c.ResponseWriter.(io.ReaderFrom); ok {
		n, err := rf.ReadFrom(src)
		c.n += n
		return n, err
	}
	return io.Copy(struct{ io.Writer }{c}, src)
}

// Flush sends what is buffered (the zip stream starts at once).
func (c *countingWriter) Flush() { _ = http.NewResponseController(c.ResponseWriter).Flush() }

// Unwrap lets http.ResponseController reach the server's writer (flush, deadlines).
func (c *countingWriter) Unwrap() http.ResponseWriter { return c.ResponseWriter }
