package handlers

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"

	"github.com/danielgtaylor/huma/v2"

	"github.com/fileshed/fileshed/core"
)

// Envelope is every answer's body, with the original tool's field names.
type Envelope struct {
	Success bool           `json:"success" doc:"true when the operation succeeded"`
	Data    any            `json:"data,omitempty" doc:"The operation's result"`
	Message string         `json:"message,omitempty" doc:"A short human-readable summary"`
	Error   string         `json:"error,omitempty" doc:"Error code, e.g. FILE_NOT_FOUND"`
	Details map[string]any `json:"details,omitempty" doc:"Error details (zone-relative paths only)"`
	Hint    string         `json:"hint,omitempty" doc:"What to do next"`
	Usage   string         `json:"usage,omitempty" doc:"How to call the tool (parameter errors only)"`
}

// MarshalJSON writes the envelope; a failure always carries a details object, even an empty
// one (the contract: details is always an object, so models can rely on it).
func (e Envelope) MarshalJSON() ([]byte, error) {
	type plain Envelope
	if e.Success {
		return marshal(plain(e))
	}
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	return marshal(struct {
		plain
		Details map[string]any `json:"details"`
	}{plain(e), details})
}

// marshal is json.Marshal without HTML escaping: a model reads `a -> b` and `<div>`, not
// `a -\u003e b` (tokens spent, and code copied back wrong).
func marshal(v any) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// statusFor is the HTTP status of an error code: 200 for domain errors (the model reads
// and corrects them), 401/403 for authentication and foreign web pages, 413 for oversized bodies.
func statusFor(c core.Code) int {
	switch c {
	case core.AuthRequired:
		return http.StatusUnauthorized
	case core.AuthInvalid:
		return http.StatusUnauthorized
	case core.InvalidUser, core.CrossOriginForbidden:
		return http.StatusForbidden
	case core.AuthUnavailable:
		return http.StatusServiceUnavailable
	case core.BodyTooLarge:
		return http.StatusRequestEntityTooLarge
	}
	return http.StatusOK
}

// failure turns any error into the envelope; errors that are not *core.Error become
// INTERNAL_ERROR with the request id, logged once here.
func failure(log *slog.Logger, reqID string, err error) (int, Envelope) {
	e, ok := core.AsError(err)
	if !ok {
		if u := core.Unavailable(err); u != nil {
			e, ok = u, true
		}
	}
	if !ok || e.Code == core.InternalError {
		log.Error("internal error", "request_id", reqID, "err", err)
		e = core.Errf(core.InternalError, "Internal error (request id %s)", reqID).With("request_id", reqID)
	} else if e.Code == core.AuthUnavailable {
		// Every caller is refused while Open WebUI cannot be reached: the operator must see
		// why at the default level (the cause names the URL path and status, never a token).
		log.Warn("Open WebUI could not verify the caller", "request_id", reqID, "code", e.Code, "cause", e.Err)
	} else if e.Code == core.StateUnavailable {
		log.Warn("the state database refused a connection", "request_id", reqID, "cause", e.Err)
	} else if e.Err != nil {
		log.Debug("operation failed", "request_id", reqID, "code", e.Code, "cause", e.Err)
	}
	details := e.Details
	if details == nil {
		details = map[string]any{}
	}
	return statusFor(e.Code), Envelope{Error: string(e.Code), Message: e.Message, Details: details, Hint: e.Hint}
}

// writeEnvelope writes an envelope outside huma (middleware, recoverer, 404s).
func writeEnvelope(w http.ResponseWriter, status int, env Envelope) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	b, _ := marshal(env)
	_, _ = w.Write(append(b, '\n'))
}

// writeError writes the envelope of err outside huma.
func writeError(w http.ResponseWriter, log *slog.Logger, reqID string, err error) {
	status, env := failure(log, reqID, err)
	writeEnvelope(w, status, env)
}

// statusError is huma's error type replaced by our envelope (huma.NewError is overridden
// in init), so that huma's own 400/413/422/500 answers carry the same fields.
type statusError struct {
	status int
	Envelope
}

func (e *statusError) Error() string  { return e.Message }
func (e *statusError) GetStatus() int { return e.status }

func init() {
	huma.NewError = func(status int, msg string, errs ...error) huma.StatusError {
		for _, err := range errs {
			if tl, ok := err.(*bodyTooLargeError); ok { // limitBodies stopped the body
				_, env := failure(slog.Default(), "", tl.coreError())
				return &statusError{status: http.StatusRequestEntityTooLarge, Envelope: env}
			}
		}
		if status == http.StatusRequestTimeout { // limitBodies' read deadline passed
			_, env := failure(slog.Default(), "", core.Errf(core.InvalidParameter, "The request body did not arrive in time").
				WithHint("Send the whole JSON body at once, then wait for the answer"))
			return &statusError{status: http.StatusRequestTimeout, Envelope: env}
		}
		code := core.InvalidParameter
		switch {
		case status == http.StatusRequestEntityTooLarge:
			code = core.BodyTooLarge
		case status >= 500:
			code = core.InternalError
		}
		e := core.Errf(code, "%s", msg)
		if len(errs) > 0 {
			e.With("errors", errorTexts(errs))
		}
		s := status
		if code == core.InvalidParameter {
			s = http.StatusOK
		}
		return &statusError{status: s, Envelope: Envelope{Error: string(code), Message: msg, Details: e.Details, Hint: e.Hint}}
	}
}

func errorTexts(errs []error) []string {
	out := make([]string, 0, len(errs))
	for _, err := range errs {
		if err != nil {
			out = append(out, err.Error())
		}
	}
	return out
}
