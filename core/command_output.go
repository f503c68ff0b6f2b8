package core

import (
	"errors"
	"io"
	"path"
)

// A command's stdout_file/stderr_file (shed_exec, shed_lockedit_exec) is written by the
// kernel, not by the family (issue 35 item 1): the command transaction declared the file
// among its operands, and the write is the kernel's atomic one.

// CommandOutput streams one output stream of a command into a file of dir (the zone, or a
// working copy's folder): the stream is written to a temporary file beside the target and
// renamed over it when the command ends (confine.Fs.WriteAtomic), so a reader never sees a
// half-written file and a symlink planted at the target cannot redirect it outside dir. The
// bytes are capped at limit: past it the stream is cut (the command gets EPIPE) and the
// file is not written.
type CommandOutput struct {
	pw   *io.PipeWriter
	done chan outputResult
}

type outputResult struct {
	n    int64
	err  error
	over bool
}

var errOverLimit = errors.New("output exceeds the remaining quota")

// StartCommandOutput creates the parents of rel in d (the folder the command runs in: the
// kernel writes there, the family's view of it is read-only) (0700) and starts the atomic
// writer of at most limit bytes.
func StartCommandOutput(d ReadFs, rel string, limit int64) (*CommandOutput, error) {
	dir := d.f
	if parent := path.Dir(rel); parent != "." {
		if err := dir.MkdirAll(parent, 0o700); err != nil {
			return nil, err
		}
	}
	pr, pw := io.Pipe()
	o := &CommandOutput{pw: pw, done: make(chan outputResult, 1)}
	go func() {
		lr := &capReader{r: pr, left: limit}
		n, err := dir.WriteAtomic(rel, lr, 0o600)
		// Unblock the command's output copier if the writer stopped early.
		pr.CloseWithError(errOverLimit)
		o.done <- outputResult{n: n, err: err, over: lr.over}
	}()
	return o, nil
}

// Write implements io.Writer (the command's stream).
func (o *CommandOutput) Write(b []byte) (int, error) { return o.pw.Write(b) }

// Finish ends the stream (the command has exited) and waits for the rename: the bytes
// written, over when the stream passed the limit (nothing written), or the write's error.
func (o *CommandOutput) Finish() (n int64, over bool, err error) {
	o.pw.Close()
	r := <-o.done
	return r.n, r.over, r.err
}

// Abort drops the stream: the temporary file is removed, the target untouched. A nil
// output is a no-op.
func (o *CommandOutput) Abort() {
	if o != nil {
		o.pw.CloseWithError(errOverLimit)
		<-o.done
	}
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

// RemoveAdded removes from d (the kernel writes there) the topmost entries of after (d
// measured now) that before did not hold: a command stopped over the quota in a working
// copy's folder. Errors are ignored: the call answers QUOTA_EXCEEDED either way, and the
// folder goes whole at save or cancel.
func (after Snapshot) RemoveAdded(d ReadFs, before Snapshot) {
	dir := d.f
	for rel := range after.Entries {
		if _, old := before.Entries[rel]; old {
			continue
		}
		if parent := path.Dir(rel); parent != "." {
			if _, existed := before.Entries[parent]; !existed {
				continue // removed with its topmost new folder
			}
		}
		_ = dir.RemoveAll(rel)
	}
}
