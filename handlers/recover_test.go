package handlers

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestPanicBecomesInternalError(t *testing.T) {
	h := withRequestID(recoverer(slog.New(slog.NewTextHandler(io.Discard, nil)))(http.HandlerFunc(func(http.ResponseWriter, *http.Request) {
		panic("boom at /secret/host/path")
	})))
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest(http.MethodPost, "/shed_tree", nil))
	var env Envelope
	if err := json.Unmarshal(rec.Body.Bytes(), &env); err != nil {
		t.Fatal(err)
	}
	if env.Error != "INTERNAL_ERROR" || env.Details["request_id"] == "" || strings.Contains(rec.Body.String(), "boom") {
		t.Fatalf("panic answer: %s", rec.Body.String())
	}
	if rec.Header().Get("X-Request-Id") != env.Details["request_id"] {
		t.Fatalf("request id mismatch")
	}
}
