package files

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/tools/commands"

	"github.com/fileshed/fileshed/core/sandbox"
	"github.com/fileshed/fileshed/core/textcap"
)

// PDFs are read by poppler's pdftotext and pdfinfo, run like every shed_exec command:
// through the launcher (Landlock read-only on the zone, rlimits on memory, CPU and files,
// the process group killed at the timeout). A malformed PDF is a classic exploit vector,
// so the parser never runs inside the server. A PDF call also takes the budget of a
// command (issue 24 item 3: 30 parallel reads ran 30 pdftotext outside every limit): a
// command slot of the caller, exec_timeout_default for the whole call, and in an
// encrypted zone the owner's turn for its decrypted copy (pdfCall).

// pdfMagic starts every PDF (the specification tolerates bytes before it: readers look
// in the first 1024).
var pdfMagic = []byte("%PDF-")

// isPDF reports whether the sample starts with the PDF header, or holds it in its first
// 1024 bytes of binary content.
func isPDF(sample []byte) bool {
	return bytes.HasPrefix(sample, pdfMagic) ||
		(bytes.Contains(sample[:min(len(sample), 1024)], pdfMagic) && textcap.LooksBinary(sample))
}

// pdfInfo is what pdfinfo says of a file.
type pdfInfo struct {
	pages     int64
	encrypted bool
}

// pdfStderrCap bounds what is kept of a poppler tool's diagnostics (a damaged file can
// make it print one warning per object).
const pdfStderrCap = 4096

// pdfCall runs fn, the poppler work on zone file rel, within a command's budget: a
// command slot of c (TOO_MANY_COMMANDS when none frees in time), exec_timeout_default for
// the whole call (waits, copy and runs: fn gets that deadline in ctx), and, in an
// encrypted zone, a decrypted copy of rel alone made under the owner's turn (one copy per
// user at a time, removed before the turn is given back). fn gets the zone and the folder
// poppler reads (the zone's own, or its decrypted copy).
func (s *Tools) pdfCall(ctx context.Context, c core.Caller, z *core.Zone, rel string, fn func(ctx context.Context, z *core.Zone, dir core.ReadFs) error) error {
	timeout, _ := s.Commands.ExecTimeout(0)
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	release, err := s.AcquireSlot(ctx, c.UserID, core.PdfSlot)
	if err != nil {
		return err
	}
	defer release()
	if z.Fs().Sealed() { // poppler reads the decrypted copy
		turn, err := s.OwnerTurn(ctx, z, core.PdfSlot)
		if err != nil {
			return err
		}
		defer turn()
		m, err := s.OpenMirrorWithin(ctx, z.Fs(), []string{rel})
		if e, ok := core.AsError(err); ok && e.Code == core.Timeout {
			return e.WithHint("Decrypting the PDF took longer than a PDF read may last (exec_timeout_default: %ds): try again when the server is less busy", int(timeout/time.Second))
		}
		if err != nil {
			return err
		}
		defer m.Remove()
		return fn(ctx, z, m.ReadFs())
	}
	return fn(ctx, z, z.Fs())
}

// pdfRun runs a poppler tool on zone file rel, read-only, sending stdout to out, until the
// deadline of ctx (pdfCall's): TIMEOUT then. ctx cancelled (out full) kills it too. stdin,
// when set, is fed to the tool through a pipe (it reads the PDF from "-").
func (s *Tools) pdfRun(ctx context.Context, z *core.Zone, dir core.ReadFs, cmd string, stdin io.Reader, out io.Writer, args ...string) (sandbox.Result, error) {
	c, err := sandbox.Prepare(sandbox.Request{Cmd: cmd, Args: args, Kind: sandbox.ReadOnly,
		Confine: commands.ConfineFn(z, dir, false)})
	if err != nil {
		var v *sandbox.Violation
		if errors.As(err, &v) {
			if v.Kind == sandbox.CommandNotFound {
				return sandbox.Result{}, core.Errf(core.CommandNotFound, "Cannot read PDFs: %s is not installed", cmd).With("command", cmd).
					WithHint("Ask the admin to install poppler-utils; shed_read_bytes shows the raw bytes")
			}
			return sandbox.Result{}, commands.Violation(v, z)
		}
		return sandbox.Result{}, core.Errf(core.InternalError, "Cannot check the PDF command").Because(err)
	}
	spec := sandbox.Spec{Argv: c.Argv, Exec: c.Exec, Dir: dir.Dir(), ReadOnly: true, Env: sandbox.BuildEnv("."),
		MaxOutput: pdfStderrCap, MemoryBytes: int64(s.Config().ExecMemoryLimitMB) << 20,
		CPUSeconds: int64(s.Config().ExecCPULimitSeconds), Mode: sandbox.Mode(s.Config().ExecSandbox), Stdout: out}
	if stdin != nil {
		feed, err := feedPipe(stdin)
		if err != nil {
			return sandbox.Result{}, core.Errf(core.InternalError, "Cannot start the PDF engine").Because(err)
		}
		defer feed.close()
		spec.Stdin = feed.r
	}
	res, err := s.RunSandboxed(ctx, spec)
	if errors.Is(err, sandbox.ErrSandboxUnavailable) {
		return res, core.Errf(core.SandboxUnavailable, "Cannot read PDFs: exec_sandbox is 'required' and this kernel has no Landlock").
			With("command", cmd)
	}
	if err != nil {
		return res, core.Errf(core.ExecError, "The PDF engine could not be started").With("command", cmd).Because(err)
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		timeout, _ := s.Commands.ExecTimeout(0)
		sec := int(timeout / time.Second)
		return res, core.Errf(core.Timeout, "PDF extraction stopped after %ds", sec).With("command", cmd).With("timeout", sec).
			WithHint("The PDF is too costly to read whole: ask for fewer pages (pages=\"1-2\")")
	}
	return res, nil
}

// pdfInfoOf runs pdfinfo on rel: page count and encryption, or PDF_ENCRYPTED and
// PDF_UNREADABLE.
func (s *Tools) pdfInfoOf(ctx context.Context, z *core.Zone, dir core.ReadFs, rel string) (pdfInfo, error) {
	out := newCapBuf(64<<10, nil)
	res, err := s.pdfRun(ctx, z, dir, "pdfinfo", nil, out, "./"+rel)
	if err != nil {
		return pdfInfo{}, err
	}
	if res.ExitCode != 0 {
		return pdfInfo{}, s.pdfFailure(res, z, rel)
	}
	var info pdfInfo
	for line := range strings.Lines(string(out.buf)) {
		k, v, _ := strings.Cut(line, ":")
		v = strings.TrimSpace(v)
		switch k {
		case "Pages":
			info.pages, _ = strconv.ParseInt(v, 10, 64)
		case "Encrypted":
			info.encrypted = strings.HasPrefix(v, "yes")
		}
	}
	return info, nil
}

// pdfFailure maps a poppler tool's failure: poppler exits 1 for a file it cannot open or
// a wrong password, 3 when the document forbids copying its text; it aborts when an
// allocation fails at the memory limit, and the kernel stops it at the CPU limit.
func (s *Tools) pdfFailure(res sandbox.Result, z *core.Zone, rel string) error {
	if res.ExitCode == 3 || strings.Contains(res.Stderr, "Incorrect password") {
		return core.Errf(core.PdfEncrypted, "The PDF is encrypted: %s", rel).With("path", rel).With("zone", z.Label)
	}
	outOfMemory := res.ExitCode == -int(syscall.SIGABRT) &&
		(strings.Contains(res.Stderr, "Out of memory") || strings.Contains(res.Stderr, "bad_alloc"))
	if outOfMemory || res.ExitCode == -int(syscall.SIGXCPU) || res.ExitCode == -int(syscall.SIGKILL) {
		limit := fmt.Sprintf("memory limit (exec_memory_limit_mb = %d)", s.Config().ExecMemoryLimitMB)
		if !outOfMemory {
			limit = fmt.Sprintf("CPU-time limit (exec_cpu_limit_seconds = %d)", s.Config().ExecCPULimitSeconds)
		}
		return core.Errf(core.PdfTooCostly, "The PDF engine reached its %s on %s", limit, rel).With("path", rel).With("zone", z.Label).
			With("memory_limit_mb", s.Config().ExecMemoryLimitMB).With("cpu_limit_seconds", s.Config().ExecCPULimitSeconds).
			WithHint("Read fewer pages at a time (pages=\"1-2\"); a PDF this costly may be built to exhaust the reader")
	}
	detail, _, _ := strings.Cut(strings.TrimSpace(res.Stderr), "\n")
	return core.Errf(core.PdfUnreadable, "Cannot read the PDF: %s", rel).With("path", rel).With("zone", z.Label).
		With("engine_message", core.ClipText(detail, 200))
}

// pageRange parses pages="3-5", "3", "3-" (to the end) against a page count.
func pageRange(spec string, count int64) (from, to int64, err error) {
	bad := func(format string, args ...any) (int64, int64, error) {
		return 0, 0, core.Errf(core.InvalidParameter, format, args...).With("pages", spec).With("page_count", count).
			WithHint("Use pages=\"3-5\", \"3\" or \"3-\", between 1 and %d", max(count, 1))
	}
	a, b, isRange := strings.Cut(strings.TrimSpace(spec), "-")
	from, err1 := strconv.ParseInt(strings.TrimSpace(a), 10, 64)
	to, err2 := from, error(nil)
	if isRange {
		to = count
		if b = strings.TrimSpace(b); b != "" {
			to, err2 = strconv.ParseInt(b, 10, 64)
		}
	}
	switch {
	case err1 != nil || err2 != nil:
		return bad("pages must look like \"3-5\", got %q", spec)
	case from < 1 || to < from:
		return bad("pages %q is not a range of pages (first page is 1)", spec)
	case from > count:
		return bad("page %d is beyond the end of the PDF (%d pages)", from, count)
	}
	return from, min(to, count), nil
}

// readPDF answers shed_read for a PDF: the text of pages (all of them by default) laid
// out by pdftotext -layout, each under a "[page N]" line, whole pages only up to the
// output cap; next_pages names the rest. It runs within a command's budget (pdfCall).
func (s *Tools) readPDF(ctx context.Context, c core.Caller, z *core.Zone, rel string, size int64, in ReadInput) (res core.Result, err error) {
	err = s.pdfCall(ctx, c, z, rel, func(ctx context.Context, z *core.Zone, dir core.ReadFs) error {
		res, err = s.pdfText(ctx, z, dir, rel, size, in)
		return err
	})
	return res, err
}

// pdfText is readPDF on the zone poppler reads.
func (s *Tools) pdfText(ctx context.Context, z *core.Zone, dir core.ReadFs, rel string, size int64, in ReadInput) (core.Result, error) {
	info, err := s.pdfInfoOf(ctx, z, dir, rel)
	if err != nil {
		return core.Result{}, err
	}
	if info.pages < 1 {
		return core.Result{}, core.Errf(core.PdfUnreadable, "The PDF has no pages: %s", rel).With("path", rel).With("zone", z.Label)
	}
	from, to := int64(1), info.pages
	if in.Pages != "" {
		if from, to, err = pageRange(in.Pages, info.pages); err != nil {
			return core.Result{}, err
		}
	}
	limit := max(s.Config().MaxOutputDefault, 1)
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	out := newCapBuf(limit, cancel) // enough pages: pdftotext is stopped
	res, err := s.pdfRun(ctx, z, dir, "pdftotext", nil, out, "-layout", "-enc", "UTF-8", "-f", strconv.FormatInt(from, 10),
		"-l", strconv.FormatInt(to, 10), "./"+rel, "-")
	if err != nil {
		return core.Result{}, err
	}
	if res.ExitCode != 0 && !out.full {
		return core.Result{}, s.pdfFailure(res, z, rel)
	}
	var b strings.Builder
	last, text, cutPage := from-1, false, false
	pages := bytes.Split(out.buf, []byte{'\f'})
	for i, p := range pages {
		if i == len(pages)-1 && len(p) == 0 {
			break // after the last form feed
		}
		complete := i < len(pages)-1 || !out.full
		page := from + int64(i)
		head := fmt.Sprintf("[page %d]\n", page)
		body, _ := textcap.ValidText(bytes.TrimRight(p, " \n"))
		if strings.TrimSpace(body) != "" {
			text = true
		}
		if !complete || b.Len()+len(head)+len(body)+1 > limit {
			if page == from { // one page longer than the cap: its head, marked
				keep := core.ClipText(body, max(limit-len(head)-80, 0))
				b.WriteString(head + keep + "\n[page cut at the output cap]\n")
				last, cutPage = page, true
			}
			break
		}
		b.WriteString(head + body + "\n")
		last = page
	}
	if !text {
		return core.Result{}, core.Errf(core.PdfNoText, "No text on pages %d-%d of %s: they are images (a scan?)", from, last, rel).
			With("path", rel).With("zone", z.Label).With("page_count", info.pages).With("pages", fmt.Sprintf("%d-%d", from, last)).
			WithHint("No OCR here: the pages are images. Try other pages, or ask the user for a text version")
	}
	data := readPDFResult{Content: b.String(), Encrypted: info.encrypted, Group: z.GroupID, PageCount: info.pages,
		PageCut: cutPage, Pages: fmt.Sprintf("%d-%d", from, last), Path: rel, Size: size, Truncated: last < to || cutPage,
		Type: "pdf", Zone: z.Label}
	msg := fmt.Sprintf("Read pages %d-%d of %d (%d characters)", from, last, info.pages, utf8.RuneCountInString(b.String()))
	if cutPage {
		msg += fmt.Sprintf("; page %d is longer than the output cap: for all of it, shed_exec pdftotext -layout -f %d -l %d with an output file, then shed_read it with offset", last, last, last)
	}
	if last < info.pages {
		next := fmt.Sprintf("%d-%d", last+1, min(last+1+(last-from), info.pages))
		data.NextPages = next
		msg += fmt.Sprintf("; read on with pages=%q", next)
	}
	return core.Result{Data: data, Message: msg}, nil
}

// readPDFResult is the answer of shed_read on a PDF (fields in the order of the JSON keys,
// alphabetical, as the map it replaces wrote them): group in group zones, next_pages when
// pages follow, page_cut (true) when the last page shown was cut at the output cap.
type readPDFResult struct {
	Content   string `json:"content"`
	Encrypted bool   `json:"encrypted"`
	Group     string `json:"group,omitempty"`
	NextPages string `json:"next_pages,omitempty"`
	PageCount int64  `json:"page_count"`
	PageCut   bool   `json:"page_cut,omitempty"`
	Pages     string `json:"pages"`
	Path      string `json:"path"`
	Size      int64  `json:"size"`
	Truncated bool   `json:"truncated"`
	Type      string `json:"type"`
	Zone      string `json:"zone"`
}

// capBuf keeps the first n bytes written to it and reports the rest as written (so the
// writer never blocks); onFull runs once when more than n arrive.
type capBuf struct {
	buf    []byte
	n      int
	full   bool
	onFull func()
}

func newCapBuf(n int, onFull func()) *capBuf { return &capBuf{n: n, onFull: onFull} }

// Write keeps what fits.
func (c *capBuf) Write(p []byte) (int, error) {
	room := c.n - len(c.buf)
	if len(p) > room {
		c.buf = append(c.buf, p[:max(room, 0)]...)
		if !c.full && c.onFull != nil {
			c.onFull()
		}
		c.full = true
		return len(p), nil
	}
	c.buf = append(c.buf, p...)
	return len(p), nil
}
