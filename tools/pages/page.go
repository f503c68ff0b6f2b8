package pages

import (
	"context"
	"crypto/rand"
	"fmt"
	"html"
	"path"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/tools/files"
	"github.com/fileshed/fileshed/tools/links"

	"golang.org/x/text/unicode/norm"
)

// SavePageInput is the input of shed_save_page.
type SavePageInput struct {
	Title   string `json:"title" required:"true"`
	Content string `json:"content" required:"true"`
	Format  string `json:"format,omitempty" default:"markdown" enum:"markdown,html"`
	// Zone is optional here (storage by default), unlike ZoneArgs.
	Zone  string `json:"zone,omitempty" default:"storage" enum:"storage,documents,group"`
	Group string `json:"group,omitempty" doc:"Group id or name (zone=group)"`
	Path  string `json:"path,omitempty" doc:"Default: output/<title>-<id>.md|.html"`
}

// maxTitle bounds a result page's title, in characters: it becomes a heading and part
// of the file name.
const maxTitle = 200

// slugKeep is what a file name made from a title keeps: letters, digits, '-' and '_'.
var slugKeep = regexp.MustCompile(`[^\p{L}\p{N}_-]+`)

// slug turns a title into a file name part: NFC, lower case, runs of other characters
// as one '-', at most 48 bytes; "page" when nothing is left ("../../x" gives "x").
func slug(title string) string {
	s := slugKeep.ReplaceAllString(strings.ToLower(norm.NFC.String(title)), "-")
	s = core.ClipText(strings.Trim(s, "-_"), 48)
	if s = strings.Trim(s, "-_"); s == "" {
		return "page"
	}
	return s
}

// SavePage answers shed_save_page: a result page written through the one write path
// (quota, atomic write, commit in versioned zones) as Markdown (the title as its first
// heading) or HTML (the model's document as is, a <title> added when it has none), then a
// download link to it. The link opens the page in a browser: Markdown rendered to a
// standalone HTML page, HTML under a Content-Security-Policy that lets no script run and
// no request leave. A Markdown answer repeats the content up to the output cap, so the
// chat can show it at once.
func (s *Tools) SavePage(ctx context.Context, c core.Caller, in SavePageInput) (core.Result, error) {
	title := strings.TrimSpace(strings.Join(strings.Fields(in.Title), " "))
	switch n := utf8.RuneCountInString(title); {
	case n == 0:
		return core.Result{}, core.Errf(core.InvalidParameter, "title is empty").WithHint("Give the page a short title, such as title=\"Sales summary\"")
	case n > maxTitle:
		return core.Result{}, core.Errf(core.InvalidParameter, "title is %d characters long (at most %d)", n, maxTitle).With("length", n).
			With("max", maxTitle).WithHint("Use a short title; put the rest in content")
	}
	format := strings.ToLower(strings.TrimSpace(in.Format))
	ext := map[string]string{"": ".md", "markdown": ".md", "html": ".html"}[format]
	if ext == "" {
		return core.Result{}, core.Errf(core.InvalidParameter, "format must be 'markdown' or 'html', got %q", in.Format).With("format", in.Format).
			WithHint("Use format=\"markdown\" (rendered for the user) or format=\"html\" (served as is, without scripts)")
	}
	doc := "# " + markdownTitle(title) + "\n\n" + in.Content
	if ext == ".html" {
		doc = in.Content
		if !strings.Contains(strings.ToLower(in.Content), "<title") {
			doc = "<!doctype html>\n<meta charset=\"utf-8\">\n<title>" + html.EscapeString(title) + "</title>\n" + in.Content
		}
	}
	if limit := s.Config().PageMaxKB << 10; len(doc) > limit {
		return core.Result{}, core.Errf(core.FileTooLarge, "The page is %d bytes (at most %d KB)", len(doc), s.Config().PageMaxKB).
			With("size", len(doc)).With("max_kb", s.Config().PageMaxKB).
			WithHint("Shorten the page, or split it into several pages")
	}
	p := in.Path
	if p == "" {
		p = fmt.Sprintf("output/%s-%s%s", slug(title), strings.ToLower(rand.Text()[:6]), ext)
	} else if !strings.EqualFold(path.Ext(p), ext) {
		p += ext
	}
	za := core.ZoneArgs{Zone: in.Zone, Group: in.Group}
	if za.Zone == "" {
		za.Zone = "storage"
	}
	var content *pageContent
	if ext == ".md" {
		limit := max(s.Config().MaxOutputDefault, 1)
		content = &pageContent{Content: core.ClipText(in.Content, limit), ContentTruncated: len(in.Content) > limit}
	}
	res, click, err := s.publish(ctx, c, za, p, doc, title, content)
	if err != nil || click == "" {
		return res, err
	}
	return core.Result{Data: res.Data, Message: fmt.Sprintf("Page saved: %s (show clickable_link to the user)", click)}, nil
}

// publish writes doc at p through the one write path (quota, atomic write, commit in
// versioned zones) and answers with a page link to it (clickable_link, ?view); click is ""
// when the link's answer has a shape pageAnswer does not extend (res is then that answer).
func (s *Tools) publish(ctx context.Context, c core.Caller, za core.ZoneArgs, p, doc, title string, content *pageContent) (res core.Result, click string, err error) {
	if _, err := s.Files.PatchText(ctx, c, files.PatchTextInput{ZoneArgs: za, Path: p, Content: doc, Position: "end", Overwrite: true,
		Safe: true, Message: "Result page: " + title}); err != nil {
		return core.Result{}, "", err
	}
	link, err := s.Links.NewLink(ctx, c, links.LinkCreateInput{ZoneArgs: za, Path: p}, true)
	if err != nil {
		return core.Result{}, "", err
	}
	format := map[string]string{".md": "markdown", ".html": "html"}[strings.ToLower(path.Ext(p))]
	data, click, ok := pageAnswer(link.Data, title, format, content)
	if !ok {
		return link, "", nil // NewLink answers LinkCreated or LinkUploaded: no other shape to extend
	}
	return core.Result{Data: data}, click, nil
}

// PageView is the query parameter that opens a page link (made by shed_save_page) as a
// page: Markdown rendered to HTML, HTML shown (under a strict Content-Security-Policy)
// rather than downloaded. Any other link ignores it: the file downloads as without it.
const PageView = "view"

// markdownTitle keeps a title from turning into more than a heading's text: a title of
// "<script>" or "[x](javascript:...)" stays literal.
func markdownTitle(t string) string {
	return strings.NewReplacer(`\`, `\\`, "<", `\<`, ">", `\>`, "[", `\[`, "]", `\]`, "*", `\*`, "_", `\_`,
		"`", "\\`", "#", `\#`, "&", `\&`, "!", `\!`).Replace(t)
}
