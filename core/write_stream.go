package core

import (
	"errors"
	"io"
)

// Produced runs produce in its own goroutine and hands what it writes to a write as its
// body (Write.Body), so that a tool can stream a result it computes (an archive, an edited
// text) into the transaction's atomic write instead of holding it. At most limit bytes
// pass: more fails the write (ErrTooBig), so a producer can never write past the quota
// reserved for it. finish, called once the write has returned, stops a producer the write
// abandoned and returns the producer's own error (which the write, reading it through the
// pipe, failed with too). Call finish before the transaction closes: the producer still
// reads the file its lock protects.
func Produced(limit int64, produce func(io.Writer) error) (body io.Reader, finish func() error) {
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		err := produce(&capWriter{w: pw, left: limit})
		pw.CloseWithError(err)
		done <- err
	}()
	return pr, func() error {
		pr.CloseWithError(errors.New("write ended")) // unblocks the producer if the write failed first
		return <-done
	}
}

// ErrTooBig is what a producer gets when it writes more than the limit given to Produced.
var ErrTooBig = errors.New("output larger than planned")

// capWriter passes at most left bytes to w.
type capWriter struct {
	w    io.Writer
	left int64
}

func (c *capWriter) Write(p []byte) (int, error) {
	if int64(len(p)) > c.left {
		return 0, ErrTooBig
	}
	c.left -= int64(len(p))
	return c.w.Write(p)
}
