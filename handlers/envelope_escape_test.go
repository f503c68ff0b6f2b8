package handlers_test

import (
	"net/http"
	"strings"
	"testing"
)

// TestAnswersAreNotHTMLEscaped: `<`, `>` and `&` reach the model as sent, not as \u003c.
func TestAnswersAreNotHTMLEscaped(t *testing.T) {
	t.Parallel()
	e := start(t, nil)
	e.write(storageDir+"/t.html", "<b>a && b -> c</b>\n")
	r := e.post("shed_read", map[string]any{"zone": "storage", "path": "t.html"}, nil)
	wantOK(t, r)
	if !strings.Contains(r.raw, "<b>a && b -> c</b>") || strings.Contains(r.raw, `\u003`) {
		t.Fatalf("escaped answer: %s", r.raw)
	}
	// Errors too, including those written outside huma (middleware, 404).
	r = e.post("shed_read", map[string]any{"zone": "storage", "path": "<nope>&.txt"}, nil)
	if r.Success || strings.Contains(r.raw, `\u003`) || !strings.Contains(r.raw, "<nope>&") {
		t.Fatalf("escaped error: %s", r.raw)
	}
	req, _ := http.NewRequest(http.MethodGet, e.srv.URL+"/a<b>", nil)
	if r := e.do(req); strings.Contains(r.raw, `\u003`) {
		t.Fatalf("escaped 404: %s", r.raw)
	}
}
