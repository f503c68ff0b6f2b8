package handlers

import (
	"maps"
	"net/http"

	"github.com/go-chi/chi/v5"
)

// mountHealth adds the probes, hidden from the spec: /healthz answers 200 while serving,
// /readyz reports readiness details (core's Readiness: sandbox, database, storage, draining)
// plus what Deps.Ready adds.
func mountHealth(r chi.Router, d Deps) {
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeEnvelope(w, http.StatusOK, Envelope{Success: true, Message: "ok"})
	})
	r.Get("/readyz", func(w http.ResponseWriter, req *http.Request) {
		ok, details := d.Tools.Readiness(req.Context())
		if d.Ready != nil {
			more, extra := d.Ready()
			ok = ok && more
			maps.Copy(details, extra)
		}
		status := http.StatusOK
		if !ok {
			status = http.StatusServiceUnavailable
		}
		writeEnvelope(w, status, Envelope{Success: ok, Data: details})
	})
}
