package search

import (
	"container/list"
	"sync"
)

// memTexts keeps the texts a server's searches used last (PDFs' text, by the kernel's cache
// key) in memory, up to memTextsMax bytes, the least recently used dropped first: a second
// search of the same PDFs reads no cache file (the kernel's cache on disk is what outlives
// the server).
type memTexts struct {
	mu    sync.Mutex
	byKey map[string]*list.Element // key -> an element of order
	order list.List                // *memText, the most recently used first
	size  int64
}

// memText is one text kept.
type memText struct {
	key  string
	text []byte
}

// memTextsMax bounds the bytes of texts a server keeps in memory.
const memTextsMax = 16 << 20

// recall is the text kept under key, marked recently used.
func (m *memTexts) recall(key string) ([]byte, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	e, ok := m.byKey[key]
	if !ok {
		return nil, false
	}
	m.order.MoveToFront(e)
	return e.Value.(*memText).text, true
}

// remember keeps text under key (never changed after: searches only read it).
func (m *memTexts) remember(key string, text []byte) {
	if int64(len(text)) > memTextsMax/4 {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.byKey == nil {
		m.byKey = map[string]*list.Element{}
	}
	if _, ok := m.byKey[key]; ok {
		return
	}
	m.byKey[key] = m.order.PushFront(&memText{key: key, text: text})
	for m.size += int64(len(text)); m.size > memTextsMax; {
		old := m.order.Remove(m.order.Back()).(*memText)
		delete(m.byKey, old.key)
		m.size -= int64(len(old.text))
	}
}
