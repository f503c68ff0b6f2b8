package browsertest

import (
	"fmt"
	"sync"

	"github.com/chromedp/cdproto/log"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
)

// Watch records what the tab does from the moment it is made: every request it sends
// (documents, images, frames, fonts...) and every console error, uncaught exception and
// browser log error (a Content-Security-Policy refusal is one).
type Watch struct {
	mu       sync.Mutex
	requests []string
	errors   []string
}

// Watch starts recording the tab's requests and errors.
func (b *Browser) Watch() *Watch {
	b.t.Helper()
	w := &Watch{}
	err := chromedp.Listen(b.ctx, func(ev any) {
		w.mu.Lock()
		defer w.mu.Unlock()
		switch e := ev.(type) {
		case *network.EventRequestWillBeSent:
			w.requests = append(w.requests, e.Request.URL)
		case *log.EventEntryAdded:
			if e.Entry.Level == log.EntryLevelError {
				w.errors = append(w.errors, e.Entry.Text)
			}
		case *runtime.EventExceptionThrown:
			w.errors = append(w.errors, "exception: "+e.ExceptionDetails.Text)
		case *runtime.EventConsoleAPICalled:
			if e.Type == runtime.ConsoleAPICalledTypeError {
				w.errors = append(w.errors, fmt.Sprintf("console.error (%d arguments)", len(e.Args)))
			}
		}
	})
	if err != nil {
		b.t.Fatal(err)
	}
	return w
}

// Requests are the URLs requested so far, in order.
func (w *Watch) Requests() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.requests...)
}

// Errors are the console and log errors so far.
func (w *Watch) Errors() []string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]string(nil), w.errors...)
}
