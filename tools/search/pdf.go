package search

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"

	"github.com/fileshed/fileshed/core"
)

// PDFs are searched in their text, extracted by the sandboxed reader of shed_read
// (files.PDFText: pdftotext under the command limits, the bytes fed through a pipe). One
// extraction runs at a time per search (the call holds one command slot, so one reader's
// memory), and the text of a PDF of a zone that is not encrypted is cached by content
// (core's text cache on disk, and the texts used last in this server's memory: memTexts):
// a second search reads the PDF once to hash it and extracts nothing. The PDFs of an
// encrypted zone are decrypted as a stream into the reader and never cached
// (the cache is plaintext on disk).

// pdfMaxText is the most text kept of one PDF.
const pdfMaxText = 16 << 20

// pdfText is the text of the PDF rel of z (pages ended by form feeds). In a zone that is not
// encrypted, its content is hashed from the open file (head, its first readChunk bytes in
// the scanner's buffer, then the rest of in) and the cache asked first; the reader gets the
// file opened again.
func (r *searchRun) pdfText(ctx context.Context, z *core.Zone, rel string, head []byte, in io.Reader) ([]byte, error) {
	key := ""
	if !z.Fs().Sealed() {
		h := sha256.New()
		h.Write([]byte(z.Owner.Kind + ":" + z.Owner.ID + "\x00"))
		h.Write(head)
		// head is the scanner's buffer (a short one holds the whole file): the rest of the
		// file goes through it, bounded by the call's time.
		if len(head) == readChunk {
			if _, err := io.CopyBuffer(h, ctxReader{ctx, in}, head[:readChunk]); err != nil {
				return nil, err
			}
		}
		key = hex.EncodeToString(h.Sum(nil))
		if text, ok := r.s.texts.recall(key); ok {
			return text, nil
		}
		if text, ok := r.s.CachedText(key); ok {
			r.s.texts.remember(key, text)
			return text, nil
		}
	}
	r.pdfMu.Lock()
	defer r.pdfMu.Unlock()
	f, err := z.Fs().Open(rel)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	pctx, stop := context.WithCancel(ctx)
	defer stop()
	out := &textBuf{max: pdfMaxText, full: stop}
	if err := r.s.Files.PDFText(pctx, z, rel, f, out); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, err // the search's end, not out full: the text may be short
	}
	if key != "" {
		r.s.CacheText(key, out.b.Bytes())
		r.s.texts.remember(key, out.b.Bytes())
	}
	return out.b.Bytes(), nil
}

// ctxReader reads r until ctx ends (its error then).
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// textBuf keeps the first max bytes written to it and calls full once when more arrive.
type textBuf struct {
	b    bytes.Buffer
	max  int
	full func()
	done bool
}

func (t *textBuf) Write(p []byte) (int, error) {
	if room := t.max - t.b.Len(); len(p) > room {
		t.b.Write(p[:max(room, 0)])
		if !t.done {
			t.done = true
			t.full()
		}
		return len(p), nil
	}
	return t.b.Write(p)
}

// pdfPages scans the text of a PDF page by page (lines numbered in their page).
func (sc *scanner) pdfPages(ctx context.Context, text []byte, keep int, out *fileScan) error {
	for page := 1; len(text) > 0; page++ {
		p := text
		if i := bytes.IndexByte(text, '\f'); i >= 0 {
			p, text = text[:i], text[i+1:]
		} else {
			text = nil
		}
		if err := sc.scan(ctx, bytes.NewReader(p), 0, keep, page, out); err != nil {
			return err
		}
	}
	return nil
}

// errSkip marks a file the search leaves out, with the reason it is counted under.
type errSkip struct{ reason string }

func (e *errSkip) Error() string { return "skipped: " + e.reason }

// skipReason is the reason a file's error is counted under: a bound of the search, a PDF
// the reader refuses, or an unreadable file.
func skipReason(err error) string {
	var sk *errSkip
	switch {
	case errors.As(err, &sk):
		return sk.reason
	case errors.Is(err, errTooLarge):
		return "too_large"
	}
	if e, ok := core.AsError(err); ok {
		switch e.Code {
		case core.PdfEncrypted, core.PdfUnreadable, core.PdfTooCostly:
			return "pdf_unreadable"
		case core.DecryptionFailed, core.InvalidEncryptedFile, core.DecryptionRequired:
			return "undecryptable"
		}
	}
	return "unreadable"
}
