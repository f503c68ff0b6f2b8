package handlers

import (
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"html/template"
	"mime"
	"net/http"
	"net/url"
	"path"
	"strings"
	"time"

	"github.com/fileshed/fileshed/tools/links"

	"github.com/go-chi/chi/v5"
)

// pageStyle is the pages' only style sheet: inline, so the page needs no other request,
// and allowed by its hash in the Content-Security-Policy (no 'unsafe-inline', no scripts).
const pageStyle = `
body{font:16px/1.5 system-ui,sans-serif;margin:0 auto;max-width:60rem;padding:1rem;color:#1b1b1b;background:#fff}
nav ol{list-style:none;display:flex;flex-wrap:wrap;gap:.25rem;padding:0;margin:0 0 1rem}
nav li+li::before{content:"/";margin-right:.25rem;color:#555}
a{color:#0645ad}a:focus{outline:3px solid #1a73e8;outline-offset:2px}
h1{font-size:1.5rem;margin:.5rem 0;overflow-wrap:anywhere}
.zip{display:inline-block;padding:.5rem 1rem;border:1px solid #0645ad;border-radius:.25rem;text-decoration:none;font-weight:600}
table{width:100%;border-collapse:collapse;margin-top:1rem}
caption{text-align:left;font-weight:600;padding:.25rem 0}
th,td{text-align:left;padding:.5rem;border-bottom:1px solid #ddd;vertical-align:top}
tbody th{font-weight:400;overflow-wrap:anywhere}
td.num{text-align:right;white-space:nowrap}
@media (max-width:40rem){.type{display:none}th,td{padding:.4rem .25rem}body{padding:.5rem}}
`

// pageCSP forbids everything but the inline style above: no script, no external asset,
// no form, no framing.
var pageCSP = func() string {
	sum := sha256.Sum256([]byte(pageStyle))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) +
		"'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
}()

var listingPage = template.Must(template.New("listing").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>{{.Title}} – shared folder</title><style>{{.Style}}</style></head>
<body><header><nav aria-label="Breadcrumb"><ol>{{range .Crumbs}}<li>{{if .Current}}<span aria-current="page"><bdi>{{.Name}}</bdi></span>{{else}}<a href="{{.Href}}"><bdi>{{.Name}}</bdi></a>{{end}}</li>{{end}}</ol></nav></header>
<main><h1><bdi>{{.Title}}</bdi></h1>
<p><a class="zip" href="{{.Zip}}" download>Download as zip</a></p>
<table><caption>{{.Summary}}</caption>
<thead><tr><th scope="col">Name</th><th scope="col" class="num">Size</th><th scope="col">Modified</th><th scope="col" class="type">Type</th></tr></thead>
<tbody>{{range .Entries}}<tr><th scope="row"><a href="{{.Href}}"><bdi>{{.Name}}</bdi></a>{{if .IsDir}}/{{end}}</th><td class="num">{{.Size}}</td><td><time datetime="{{.ISO}}">{{.Modified}}</time></td><td class="type">{{.Type}}</td></tr>
{{else}}<tr><td colspan="4">This folder is empty.</td></tr>{{end}}</tbody></table>
{{if .More}}<p>Only the first {{len .Entries}} entries are shown; the zip holds everything.</p>{{end}}
</main><footer><p>Link valid until <time datetime="{{.ExpiresISO}}">{{.Expires}}</time>.</p></footer></body></html>
`))

var errorTemplate = template.Must(template.New("error").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>{{.Status}} {{.Text}}</title><style>{{.Style}}</style></head>
<body><main><h1>{{.Text}}</h1><p>{{.Message}}</p></main></body></html>
`))

// errorPage answers a small HTML page with status: never a JSON envelope, never a stack.
func errorPage(w http.ResponseWriter, status int, message string) {
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", pageCSP)
	h.Del("Content-Disposition")
	h.Del("ETag")
	w.WriteHeader(status)
	_ = errorTemplate.Execute(w, map[string]any{"Status": status, "Text": http.StatusText(status), "Message": message,
		"Style": template.CSS(pageStyle)})
}

type crumb struct {
	Name, Href string
	Current    bool
}

type pageEntry struct {
	Name, Href, Size, Modified, ISO, Type string
	IsDir                                 bool
}

// listing answers a folder link's page: breadcrumb, zip action and a table whose entries
// carry their own sub-paths under the same token. HEAD gets the headers only.
func (l *linkServer) listing(w http.ResponseWriter, r *http.Request, t *links.LinkTarget) {
	entries, more, err := t.Entries()
	if err != nil {
		l.fail(w, r, err)
		return
	}
	root := l.base + "/dl/" + chi.URLParam(r, "token")
	here := root + escapePath(t.Sub)
	data := map[string]any{"Style": template.CSS(pageStyle), "Title": displayName(t.Name), "Zip": here + "?zip",
		"More": more, "Expires": t.Link.Expires.UTC().Format("2006-01-02 15:04 UTC"),
		"ExpiresISO": t.Link.Expires.UTC().Format(time.RFC3339)}
	rootName := path.Base("/" + t.Link.Path)
	if t.Link.Path == "" {
		rootName = "Shared folder"
	}
	crumbs := []crumb{{Name: displayName(rootName), Href: root, Current: t.Sub == ""}}
	if t.Sub != "" {
		parts := strings.Split(t.Sub, "/")
		for i, p := range parts {
			crumbs = append(crumbs, crumb{Name: displayName(p), Href: root + escapePath(strings.Join(parts[:i+1], "/")),
				Current: i == len(parts)-1})
		}
	}
	data["Crumbs"] = crumbs
	rows := make([]pageEntry, 0, len(entries))
	var files, dirs int
	for _, e := range entries {
		pe := pageEntry{Name: displayName(e.Name), Href: here + "/" + url.PathEscape(e.Name),
			Modified: e.Modified.UTC().Format("2006-01-02 15:04"), ISO: e.Modified.UTC().Format(time.RFC3339)}
		if e.IsDir {
			dirs++
			pe.IsDir, pe.Size, pe.Type = true, "—", "Folder"
		} else {
			files++
			pe.Size, pe.Type = humanBytes(e.Size), typeOf(e.Name)
		}
		rows = append(rows, pe)
	}
	data["Entries"] = rows
	data["Summary"] = fmt.Sprintf("%d folder(s), %d file(s)", dirs, files)
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", pageCSP)
	if r.Method == http.MethodHead {
		return
	}
	_ = listingPage.Execute(w, data)
}

// escapePath turns a clean relative path into "/seg/seg" with every segment escaped.
func escapePath(rel string) string {
	if rel == "" {
		return ""
	}
	var b strings.Builder
	for _, p := range strings.Split(rel, "/") {
		b.WriteString("/" + url.PathEscape(p))
	}
	return b.String()
}

// typeOf names a file's type from its extension with the system's MIME table ("File" when
// it has none); the page never reads the files themselves.
func typeOf(name string) string {
	if t := mime.TypeByExtension(path.Ext(name)); t != "" {
		base, _, _ := strings.Cut(t, ";")
		return base
	}
	return "File"
}

// humanBytes renders a size for people: "12 B", "3.4 KB", "1.2 GB".
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	v, i := float64(n)/unit, 0
	for v >= unit && i < 4 {
		v /= unit
		i++
	}
	return fmt.Sprintf("%.1f %cB", v, "KMGTP"[i])
}
