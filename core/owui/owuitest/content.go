package owuitest

import (
	"bytes"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/fileshed/fileshed/core/owui"
)

// Delivery says how the fake sends one file's content, to reproduce what real
// deployments do to a download: answer an error, stream without a length,
// trickle, or drop the connection half-way.
type Delivery struct {
	// Status, when non-zero, is answered instead of the content (e.g. 500).
	Status int
	// NoLength sends the body without Content-Length (chunked encoding).
	NoLength bool
	// Chunk is the size of each write (default 64 KiB); Pause waits between
	// writes (a slow server), each write being flushed.
	Chunk int
	Pause time.Duration
	// CutAfter, when positive, drops the connection after that many bytes.
	CutAfter int64
}

// SetDelivery sets how the content of file id is sent (the file must exist).
func (s *Server) SetDelivery(id string, d Delivery) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f, ok := s.files[id]; ok {
		f.delivery = d
		s.files[id] = f
	}
}

// AddGeneratedFile stores an upload of size bytes owned by ownerID whose
// content is generated while it is sent (Pattern), so huge files cost no
// memory. f.Size is kept as given: 0 makes the metadata say nothing of the
// size, another value makes it lie.
func (s *Server) AddGeneratedFile(ownerID string, f owui.FileInfo, size int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	f.UserID = ownerID
	s.files[f.ID] = file{info: f, size: size, created: time.Now().Unix()}
}

// Pattern returns the first n bytes of the content of generated files.
func Pattern(n int64) []byte {
	b, _ := io.ReadAll(io.LimitReader(&pattern{}, n))
	return b
}

// pattern yields the bytes 0..250 repeated (a prime period, so that misplaced
// chunks show).
type pattern struct{ off int64 }

func (p *pattern) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = byte((p.off + int64(i)) % 251)
	}
	p.off += int64(len(b))
	return len(b), nil
}

// send writes f's content as its Delivery says.
func send(w http.ResponseWriter, r *http.Request, f file) {
	d := f.delivery
	var body io.Reader = bytes.NewReader(f.content)
	size := int64(len(f.content))
	if f.content == nil && f.size > 0 {
		body, size = io.LimitReader(&pattern{}, f.size), f.size
	}
	if !d.NoLength {
		w.Header().Set("Content-Length", strconv.FormatInt(size, 10))
	}
	w.WriteHeader(http.StatusOK)
	flusher, _ := w.(http.Flusher)
	if d.NoLength && flusher != nil {
		flusher.Flush() // the headers go now: no length can be added later
	}
	chunk := d.Chunk
	if chunk <= 0 {
		chunk = 64 << 10
	}
	buf := make([]byte, chunk)
	var sent int64
	for {
		n, err := io.ReadFull(body, buf)
		if d.CutAfter > 0 && sent+int64(n) >= d.CutAfter {
			_, _ = w.Write(buf[:d.CutAfter-sent])
			if flusher != nil {
				flusher.Flush()
			}
			panic(http.ErrAbortHandler) // drops the connection mid-body
		}
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			sent += int64(n)
		}
		if err != nil {
			return
		}
		if d.Pause > 0 {
			if flusher != nil {
				flusher.Flush()
			}
			select {
			case <-time.After(d.Pause):
			case <-r.Context().Done():
				return
			}
		}
	}
}
