package handlers

import (
	"maps"
	"net/http"

	"github.com/go-chi/chi/v5"
)

// mountHealth adds the probes, hidden from the spec: /healthz answers 200 while serving,
// /readyz reports readiness details: the command sandbox (always; not ready when
// exec_sandbox=required and the kernel has no Landlock) plus what Deps.Ready adds.
func mountHealth(r chi.Router, d Deps) {
	r.Get("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		writeEnvelope(w, http.StatusOK, Envelope{Success: true, Message: "ok"})
	})
	r.Get("/readyz", func(w http.ResponseWriter, _ *http.Request) {
		sb := d.Service.SandboxStatus()
		ok, _ := sb["ready"].(bool)
		details := map[string]any{"sandbox": sb}
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
