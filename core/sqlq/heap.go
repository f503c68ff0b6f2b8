package sqlq

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/libc/sys/types"
	sqlite3 "modernc.org/sqlite/lib"
)

// The memory bound of a connection.
//
// Why not sqlite3_hard_heap_limit64: SQLite's heap limits are process-wide, and the server's
// own state database runs in the same library: user statements filling such a limit would
// make the next ownership, quota or audit write fail for every user. The bound is per
// connection instead, so that no connection can take memory from another: every allocation
// SQLite makes goes through the allocator below, which charges it to the connection that
// made it (modernc gives each connection its own libc.TLS and passes it to every call; the
// TLS id is never reused) and refuses, with SQLITE_NOMEM, one that would take that
// connection past the limit. SQLite then stops the statement and frees what it held. A
// 16-byte header before each block remembers its size, the connection charged and the bytes
// charged, so a block freed from another connection is credited to the right one.
//
// What is counted is all of SQLite's heap: values as they are built or read (before the
// driver converts them), sorting, temporary tables and indexes (temp_store=MEMORY: nothing
// goes to /var/tmp), the page cache, prepared statements. Go's copies of the values a
// statement returns are not (they are at most one row's worth, collected by the GC).

// header is the size of the bookkeeping before each block (keeps the allocator's alignment).
const header = 16

var heap struct {
	mu    sync.Mutex
	used  map[int32]int64 // by TLS id; entries leave at zero
	limit atomic.Int64    // per connection; 0 = none
	err   error           // the allocator could not be installed
}

// The allocator's functions as SQLite calls them (sqlite3_mem_methods).
var memMethods = sqlite3.Tsqlite3_mem_methods{
	FxMalloc:   cFunc(heapMalloc),
	FxFree:     cFunc(heapFree),
	FxRealloc:  cFunc(heapRealloc),
	FxSize:     cFunc(heapSize),
	FxRoundup:  cFunc(heapRoundup),
	FxInit:     cFunc(heapInit),
	FxShutdown: cFunc(heapShutdown),
}

// init installs the allocator: SQLite accepts SQLITE_CONFIG_MALLOC only before it is
// initialised, that is before the first connection of the process is opened.
func init() {
	heap.used = map[int32]int64{}
	tls := libc.NewTLS()
	defer tls.Close()
	m := libc.Xmalloc(tls, types.Size_t(unsafe.Sizeof(memMethods)))
	args := libc.Xmalloc(tls, 8)
	if m == 0 || args == 0 {
		heap.err = errors.New("sqlq: out of memory installing the allocator")
		return
	}
	defer libc.Xfree(tls, args)
	*(*sqlite3.Tsqlite3_mem_methods)(at(m)) = memMethods // SQLite copies it
	if rc := sqlite3.Xsqlite3_config(tls, sqlite3.SQLITE_CONFIG_MALLOC, libc.VaList(args, m)); rc != sqlite3.SQLITE_OK {
		heap.err = fmt.Errorf("sqlq: SQLite refused the allocator (code %d): it was initialised before", rc)
	}
}

// SetConnMemory bounds the heap of every SQLite connection of the process (bytes, 0 = no
// bound); it applies to the allocations made after it.
func SetConnMemory(bytes int64) error {
	if heap.err != nil {
		return heap.err
	}
	heap.limit.Store(max(bytes, 0))
	return nil
}

// ConnMemory is the bound of SetConnMemory.
func ConnMemory() int64 { return heap.limit.Load() }

// MaxValue is the largest string or BLOB a statement may build or read: half the
// connection's bound (SQLITE_LIMIT_LENGTH), so that one value and its copy fit.
func MaxValue() int {
	if lim := ConnMemory(); lim > 0 {
		return int(min(lim/2, 1<<30))
	}
	return 1 << 30
}

// charge adds n bytes to connection id and reports true; with check, it refuses (false)
// growth that would pass the bound.
func charge(id int32, n int64, check bool) bool {
	heap.mu.Lock()
	defer heap.mu.Unlock()
	u := heap.used[id] + n
	if lim := heap.limit.Load(); check && lim > 0 && n > 0 && u > lim {
		return false
	}
	if u == 0 {
		delete(heap.used, id)
	} else {
		heap.used[id] = u
	}
	return true
}

// A block is [size int64][connection int32][charged uint32][SQLite's n bytes]: charged is
// what the C allocator really gave (its size classes round up), so the bound is on memory
// actually taken, not only on what SQLite asked for.

// heapMalloc is xMalloc.
func heapMalloc(tls *libc.TLS, n int32) uintptr {
	want := int64(n) + header
	if n <= 0 || !charge(tls.ID, want, true) {
		return 0
	}
	b := libc.Xmalloc(tls, types.Size_t(want))
	if b == 0 {
		charge(tls.ID, -want, false)
		return 0
	}
	got := int64(libc.UsableSize(b))
	charge(tls.ID, got-want, false)
	*(*int64)(at(b)) = int64(n)
	*(*int32)(at(b + 8)) = tls.ID
	*(*uint32)(at(b + 12)) = uint32(got)
	return b + header
}

// heapFree is xFree.
func heapFree(tls *libc.TLS, p uintptr) {
	if p == 0 {
		return
	}
	b := p - header
	charge(*(*int32)(at(b + 8)), -int64(*(*uint32)(at(b + 12))), false)
	libc.Xfree(tls, b)
}

// heapRealloc is xRealloc: the block stays charged to the connection that made it.
func heapRealloc(tls *libc.TLS, p uintptr, n int32) uintptr {
	if p == 0 {
		return heapMalloc(tls, n)
	}
	if n <= 0 {
		return 0
	}
	b := p - header
	id, had := *(*int32)(at(b + 8)), int64(*(*uint32)(at(b + 12)))
	want := int64(n) + header
	if !charge(id, want-had, true) {
		return 0 // SQLite keeps the old block
	}
	q := libc.Xrealloc(tls, b, types.Size_t(want))
	if q == 0 {
		charge(id, had-want, false)
		return 0
	}
	got := int64(libc.UsableSize(q))
	charge(id, got-want, false)
	*(*int64)(at(q)) = int64(n)
	*(*uint32)(at(q + 12)) = uint32(got)
	return q + header
}

// heapSize is xSize.
func heapSize(_ *libc.TLS, p uintptr) int32 {
	if p == 0 {
		return 0
	}
	return int32(*(*int64)(at(p - header)))
}

// heapRoundup is xRoundup.
func heapRoundup(_ *libc.TLS, n int32) int32 { return (n + 7) &^ 7 }

func heapInit(*libc.TLS, uintptr) int32 { return sqlite3.SQLITE_OK }

func heapShutdown(*libc.TLS, uintptr) {}

// at is the address p of the C heap (modernc's allocator, outside Go's heap) as a pointer.
func at(p uintptr) unsafe.Pointer { return unsafe.Add(unsafe.Pointer(nil), p) }

// cFunc is the C function pointer of a Go function, as modernc's transpiled code calls it
// (a pointer to the function value: golang.org/s/go11func). f must be a top-level function.
func cFunc[T any](f T) uintptr {
	return *(*uintptr)(unsafe.Pointer(&struct{ f T }{f}))
}
