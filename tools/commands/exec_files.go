package commands

import (
	"errors"
	"io"
	"path"

	"github.com/fileshed/fileshed/core"

	"github.com/fileshed/fileshed/core/confine"
)

// sink streams one output stream of a command into a zone file: the stream is written
// to a temporary file beside the target and renamed over it when the command ends
// (confine.Fs.WriteAtomic), so a reader never sees a half-written file and a symlink
// planted at the target cannot redirect it outside the zone. The bytes are capped at
// the owner's remaining quota (and max_file_size_mb): past the cap the stream is cut
// (the command gets EPIPE) and the file is not written.
type sink struct {
	pw   *io.PipeWriter
	done chan sinkResult
}

type sinkResult struct {
	n    int64
	err  error
	over bool
}

var errOverLimit = errors.New("output exceeds the remaining quota")

// startSink creates the target's parent directories and starts the atomic writer.
func startSink(dir *confine.Fs, rel string, limit int64) (*sink, error) {
	if parent := path.Dir(rel); parent != "." {
		if err := dir.MkdirAll(parent, 0o700); err != nil {
			return nil, err
		}
	}
	pr, pw := io.Pipe()
	s := &sink{pw: pw, done: make(chan sinkResult, 1)}
	go func() {
		lr := &capReader{r: pr, left: limit}
		n, err := dir.WriteAtomic(rel, lr, 0o600)
		// Unblock the command's output copier if the writer stopped early.
		pr.CloseWithError(errOverLimit)
		s.done <- sinkResult{n: n, err: err, over: lr.over}
	}()
	return s, nil
}

// Write implements io.Writer (the command's stream).
func (s *sink) Write(b []byte) (int, error) { return s.pw.Write(b) }

// finish ends the stream (the command has exited) and waits for the rename.
func (s *sink) finish() sinkResult {
	s.pw.Close()
	return <-s.done
}

// abort drops the stream: the temporary file is removed, the target untouched.
func (s *sink) abort() {
	if s != nil {
		s.pw.CloseWithError(errOverLimit)
		<-s.done
	}
}

// finishSink completes a stdout_file/stderr_file (param) and returns its name and size for
// the answer ("" and nil when it was not written).
func (s *Tools) finishSink(k *sink, z *core.Zone, name, param string, limit int64) (string, *int64, error) {
	r := k.finish()
	switch {
	case r.over && limit >= int64(s.Config().MaxFileSizeMB)<<20:
		return "", nil, core.Errf(core.FileTooLarge, "%s would be larger than max_file_size_mb (%d MB): not written", param, s.Config().MaxFileSizeMB).
			With("path", name).With("limit", limit)
	case r.over:
		return "", nil, core.Errf(core.QuotaExceeded, "%s would exceed the remaining quota (%s): not written", param, core.HumanMB(limit)).
			With("path", name).With("remaining", limit).
			WithHint("Free space with shed_delete (see shed_info(action='stats')), or limit the output (e.g. head -c)")
	case r.err != nil:
		return "", nil, core.PathError(r.err, z, name)
	}
	return name, &r.n, nil
}

// capReader reads at most left bytes and fails (over=true) when more arrive.
type capReader struct {
	r    io.Reader
	left int64
	over bool
}

func (c *capReader) Read(p []byte) (int, error) {
	if int64(len(p)) > c.left+1 {
		p = p[:c.left+1]
	}
	n, err := c.r.Read(p)
	if int64(n) > c.left {
		c.over = true
		return 0, errOverLimit
	}
	c.left -= int64(n)
	return n, err
}
