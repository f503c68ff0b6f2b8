package browsertest

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
)

func TestLoadAndRead(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte(`<!doctype html><title>t</title><h1>Hello</h1><a href="/x">x</a>`))
	}))
	defer srv.Close()
	b := New(t, 30*time.Second)
	b.Do(chromedp.Navigate(srv.URL), chromedp.WaitVisible("h1"))
	if h := Eval[string](b, `document.querySelector("h1").textContent`); h != "Hello" {
		t.Errorf("h1 = %q", h)
	}
	if p := b.Screenshot("browsertest.png", 400, 300); p == "" {
		t.Error("no screenshot")
	}
}
