package handlers

import (
	"net/http"

	"github.com/go-chi/chi/v5"
)

// mountHealth adds the probes, hidden from the spec: /healthz answers 200 while serving,
// /readyz reports readiness details (sandbox, storage).
func mountHealth(r chi.Router, d Deps) {
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeEnvelope(w, http.StatusOK, Envelope{Success: true, Message: "ok"})
	})
	r.Get("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		ok, details := true, map[string]any{}
		if d.Ready != nil {
			ok, details = d.Ready()
		}
		status := http.StatusOK
		if !ok {
			status = http.StatusServiceUnavailable
		}
		writeEnvelope(w, status, Envelope{Success: ok, Data: details})
	})
}
