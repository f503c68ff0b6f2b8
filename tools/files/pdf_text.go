package files

import (
	"context"
	"io"
	"os"

	"github.com/fileshed/fileshed/core"
)

// PDFText writes the text of the PDF read from src to out: every page in reading order (no
// layout: a phrase stays on its line), each ended by a form feed. pdftotext runs as for
// shed_read (the launcher, the command limits, the zone read-only) but reads the bytes
// from src through a pipe: the file of an encrypted zone is decrypted as a stream in memory,
// never copied to disk. The caller holds a command slot for the call (shed_search); ctx
// bounds the run: its deadline is TIMEOUT, a cancel (out has enough) ends it quietly. rel
// names the file in errors (PDF_ENCRYPTED, PDF_UNREADABLE, PDF_TOO_COSTLY).
func (s *Tools) PDFText(ctx context.Context, z *core.Zone, rel string, src io.Reader, out io.Writer) error {
	res, err := s.pdfRun(ctx, z, z.Fs(), "pdftotext", src, out, "-enc", "UTF-8", "-", "-")
	if err != nil {
		return err
	}
	if res.ExitCode != 0 && ctx.Err() == nil {
		return s.pdfFailure(res, z, rel)
	}
	return nil
}

// pipeFeed copies a reader into a pipe whose read end a command gets as its input.
type pipeFeed struct {
	r    *os.File
	done chan struct{}
}

// feedPipe starts copying src into a new pipe.
func feedPipe(src io.Reader) (*pipeFeed, error) {
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	p := &pipeFeed{r: r, done: make(chan struct{})}
	go func() {
		defer close(p.done)
		// Why the error is ignored: a reader that stops early (the command ended, or was
		// stopped) breaks the pipe, and the command's own result says what happened.
		_, _ = io.Copy(w, src)
		_ = w.Close()
	}()
	return p, nil
}

// close closes the read end (a copy still writing then fails at once) and waits for the
// copy to end, so that src is never read after the call.
func (p *pipeFeed) close() {
	_ = p.r.Close()
	<-p.done
}

// IsPDF reports whether a file's first bytes (textcap.SniffLen of them) are a PDF's, as
// shed_read judges them.
func IsPDF(sample []byte) bool { return isPDF(sample) }
