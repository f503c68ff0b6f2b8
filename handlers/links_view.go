package handlers

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"html/template"
	"io"
	"net/http"
	"path"
	"strings"

	"github.com/fileshed/fileshed/tools/links"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/extension"
)

// A page link (made by shed_save_page; store.Link.Page) opened with ?view shows a result
// page instead of downloading it; ?view on any other link is ignored (links_serve.go): Markdown rendered by goldmark (GitHub-flavoured: tables, strikethrough,
// task lists, autolinks) into a standalone page, HTML as written by the model. Why CSP
// rather than a sanitiser for the model's HTML: the page is the model's own layout, which
// a sanitiser would rewrite, and a policy of default-src 'none' with sandbox stops every
// script (inline, javascript: links, event handlers) and every request (images, frames,
// fonts, forms, prefetches) in the browser itself, with no parser disagreement to exploit.
// Markdown gets both: goldmark drops raw HTML and dangerous URLs, the policy does the rest.

// viewStyle is the rendered Markdown page's only style sheet (allowed by its hash):
// dark text on white, readable on a phone, wide tables and code scroll inside the page.
const viewStyle = `
body{font:17px/1.6 system-ui,sans-serif;margin:0 auto;max-width:46rem;padding:1rem;color:#1b1b1b;background:#fff;overflow-wrap:break-word}
a{color:#0645ad}a:focus{outline:3px solid #1a73e8;outline-offset:2px}
h1,h2,h3{line-height:1.25;margin:1.5rem 0 .5rem}h1{font-size:1.75rem}h2{font-size:1.35rem}
pre{background:#f4f4f4;padding:.75rem;overflow-x:auto;border-radius:.25rem}
code{font:.9em ui-monospace,monospace;background:#f4f4f4;padding:.1em .25em}pre code{padding:0}
.table{overflow-x:auto}table{border-collapse:collapse;margin:1rem 0}
th,td{border:1px solid #ccc;padding:.4rem .6rem;vertical-align:top}th{background:#f0f0f0;text-align:left}
[align=right]{text-align:right}[align=center]{text-align:center}
blockquote{margin:0;padding-left:1rem;border-left:4px solid #ccc;color:#444}
img{max-width:100%}
`

// viewCSP: no script, no request of any kind, no form, no framing; sandbox (an opaque
// origin, no automatic navigation such as meta refresh) on top.
var viewCSP = func() string {
	sum := sha256.Sum256([]byte(viewStyle))
	return "default-src 'none'; style-src 'sha256-" + base64.StdEncoding.EncodeToString(sum[:]) +
		"'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; sandbox"
}()

// htmlCSP is the policy of the model's HTML pages: its inline styles are allowed, nothing
// that runs or loads.
const htmlCSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'; sandbox"

// markdown is GitHub-flavoured Markdown; table alignment as align attributes, since the
// policy refuses style attributes.
var markdown = goldmark.New(goldmark.WithExtensions(extension.Strikethrough, extension.Linkify, extension.TaskList,
	extension.NewTable(extension.WithTableCellAlignMethod(extension.TableCellAlignAttribute))))

var viewTemplate = template.Must(template.New("view").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex"><title>{{.Title}}</title><style>{{.Style}}</style></head>
<body><main>{{.Body}}</main></body></html>
`))

// maxView bounds a file shown as a page (read whole to render): larger ones download.
const maxView = 8 << 20

// view answers a ?view request for a Markdown or HTML file and reports true; for any other
// file (or one too large) it does nothing and reports false.
func (l *linkServer) view(w http.ResponseWriter, r *http.Request, t *links.LinkTarget) bool {
	ext := strings.ToLower(path.Ext(t.Name))
	if (ext != ".md" && ext != ".html" && ext != ".htm") || t.Info.Size() > maxView {
		return false
	}
	src, err := io.ReadAll(io.LimitReader(t.Content(), maxView))
	if err != nil {
		l.fail(w, r, err)
		return true
	}
	page, csp := src, htmlCSP
	if ext == ".md" {
		var body bytes.Buffer
		if err := markdown.Convert(src, &body); err != nil {
			l.fail(w, r, err)
			return true
		}
		// Wide tables scroll in their own box rather than the page.
		out := strings.NewReplacer("<table>", `<div class="table"><table>`, "</table>", "</table></div>").Replace(body.String())
		var b bytes.Buffer
		_ = viewTemplate.Execute(&b, map[string]any{"Title": markdownHeading(src, t.Name), "Style": template.CSS(viewStyle),
			"Body": template.HTML(out)}) // goldmark's output: raw HTML and dangerous URLs dropped
		page, csp = b.Bytes(), viewCSP
	}
	if status := checkRanges(r.Header.Get("Range"), int64(len(page))); status != 0 {
		errorPage(w, status, "The requested byte range cannot be served.")
		return true
	}
	if r.Method == http.MethodGet {
		if err := l.svc.Links.UseLink(r.Context(), t.Link); err != nil {
			l.fail(w, r, err)
			return true
		}
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", csp)
	h.Set("Content-Disposition", disposition(true, t.Name))
	h.Set("ETag", strings.TrimSuffix(etag(t), `"`)+`-view"`)
	http.ServeContent(w, r, "", t.Info.ModTime(), bytes.NewReader(page))
	return true
}

// markdownHeading is the page title: the text of a first line "# Title" (backslash
// escapes removed), else the file name.
func markdownHeading(src []byte, name string) string {
	first, _, _ := bytes.Cut(src, []byte{'\n'})
	title, ok := bytes.CutPrefix(bytes.TrimSpace(first), []byte("# "))
	if !ok {
		return name
	}
	var b strings.Builder
	for i := 0; i < len(title); i++ {
		if title[i] == '\\' && i+1 < len(title) {
			i++
		}
		b.WriteByte(title[i])
	}
	return b.String()
}
