package handlers

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/lock"
	"github.com/fileshed/fileshed/handlers/jsonargs"
)

// rawInput receives the request body untouched: decode applies the lenient rules that
// huma's strict validation would refuse (numbers in strings, null and "" as absent).
type rawInput struct {
	RawBody []byte `contentType:"application/json"`
}

// bodyInput receives the request body unread: decode reads it once, as it arrives, so a
// large content is never held twice (huma would read it whole into a growing buffer).
type bodyInput struct {
	body io.Reader
	size int64 // Content-Length, or -1
}

// Resolve takes the body from the request (huma calls it before the handler).
func (b *bodyInput) Resolve(ctx huma.Context) []error {
	b.body, b.size = ctx.BodyReader(), -1
	if n, err := strconv.ParseInt(ctx.Header("Content-Length"), 10, 64); err == nil {
		b.size = n
	}
	return nil
}

// output is every tool's answer: HTTP 200 (or the envelope's auth/size status) and the envelope.
type output struct {
	Status int
	Body   Envelope
}

// argString is the string argument named name of a decoded input ("" when the tool has none),
// for the audit trail.
func argString(args any, fields []field, name string) string {
	for _, f := range fields {
		if f.name == name {
			if v := reflect.ValueOf(args).FieldByIndex(f.index); v.Kind() == reflect.String {
				return v.String()
			}
		}
	}
	return ""
}

// toolSpec describes one tool for registration.
type toolSpec struct {
	name        string // shed_<name>: operationId and path
	summary     string // one line
	description string // short and precise: sent with every chat request
	maxBody     int64  // request body limit in bytes; 0 = 1 MiB
	hints       hints  // its effects, for MCP clients (descriptions.go)
	// specRequired marks optional arguments as required in the spec only, so that a model
	// always sends a body: Open WebUI up to 0.6.32 fails a call without arguments to an
	// operation that declares a request body. Decoding still treats them as optional.
	specRequired []string
}

// tool registers POST /<name> with the request schema of I, decoding the body leniently and
// calling run with the caller the identity middleware authenticated.
func tool[I any](api huma.API, d Deps, spec toolSpec, run func(context.Context, core.Caller, I) (core.Result, error)) {
	log := d.Log
	t := reflect.TypeFor[I]()
	fields := fieldsOf(t)
	maxBody := spec.maxBody
	if maxBody == 0 {
		maxBody = 1 << 20
	}
	op := huma.Operation{
		OperationID:  spec.name,
		Method:       http.MethodPost,
		Path:         "/" + spec.name,
		Summary:      spec.summary,
		Description:  spec.description,
		MaxBodyBytes: -1, // limitBodies (middleware.go) enforces maxBody and drains what is left
		// decode validates leniently; huma would validate the raw body as a string.
		SkipValidateBody: true,
		Tags:             []string{"fileshed"},
	}
	d.limits[op.Path] = maxBody
	if !spec.hints.valid() {
		panic("tool " + spec.name + ": hints must be readOnly, additive or destructive") // a programming error, caught by every test
	}
	d.registry.hints[spec.name] = spec.hints
	var handle handleFunc = func(ctx context.Context, body io.Reader, size int64) (*output, error) {
		start := time.Now()
		ctx = lock.WithCall(ctx) // one call for the Locker's pool (lock.Call)
		reqID := requestID(ctx)
		c, _ := callerFrom(ctx) // the middleware refused every unauthenticated request
		c = c.Calling(spec.name)
		// Every call tells the server the caller's groups: the members it has seen (issue 28).
		d.Tools.SeeCaller(ctx, c)
		var args I
		var res core.Result
		err := decode(body, size, &args, fields)
		if re := (*jsonargs.ReadError)(nil); errors.As(err, &re) {
			return nil, bodyReadFailure(re.Err) // answered as huma answers a body it cannot read
		}
		if err == nil {
			res, err = run(ctx, c, args)
		}
		out := &output{Status: http.StatusOK}
		code := "OK"
		if err != nil {
			out.Status, out.Body = failure(log, reqID, err)
			code = out.Body.Error
			if code == string(core.InvalidParameter) || code == string(core.MissingParameter) {
				out.Body.Usage = usage(spec.name, fields)
			}
		} else {
			out.Body = Envelope{Success: true, Data: res.Data, Message: res.Message}
		}
		d.Tools.Audit(c, spec.name, argString(args, fields, "zone"), argString(args, fields, "path"), code)
		d.metrics.observe(spec.name, code, time.Since(start))
		log.Info("tool", "request_id", reqID, "tool", spec.name, "user", c.UserID, "conv", c.ConvID,
			"outcome", code, "ms", float64(time.Since(start).Microseconds())/1000)
		return out, nil
	}
	d.registry.handles[spec.name] = handle
	if len(fields) == 0 {
		// Zero-argument tools read no body at all (and the spec shows none).
		huma.Register(api, op, func(ctx context.Context, _ *struct{}) (*output, error) { return handle(ctx, http.NoBody, 0) })
		return
	}
	huma.Register(api, op, func(ctx context.Context, in *bodyInput) (*output, error) { return handle(ctx, in.body, in.size) })
	// Replace the raw body's binary schema with the input's schema.
	o := api.OpenAPI().Paths["/"+spec.name].Post
	schema := api.OpenAPI().Components.Schemas.Schema(t, true, spec.name+"Input")
	required := false // an empty body stays accepted, also where the spec shows a required argument
	for _, f := range fields {
		required = required || f.required
	}
	if len(spec.specRequired) > 0 {
		s := api.OpenAPI().Components.Schemas.Map()[strings.TrimPrefix(schema.Ref, "#/components/schemas/")]
		s.Required = append(s.Required, spec.specRequired...)
	}
	o.RequestBody = &huma.RequestBody{Required: required, Content: map[string]*huma.MediaType{
		"application/json": {Schema: schema},
	}}
}

// bodyReadFailure is the answer to a body that could not be read, as huma gives it for the
// bodies it reads itself: BODY_TOO_LARGE (413), a body that did not arrive in time (408),
// or INTERNAL_ERROR (a client that went away).
func bodyReadFailure(err error) error {
	var ne net.Error
	switch {
	case errors.As(err, new(*bodyTooLargeError)):
		return huma.NewError(http.StatusRequestEntityTooLarge, "request body is too large", err)
	case errors.As(err, &ne) && ne.Timeout():
		return huma.NewError(http.StatusRequestTimeout, "request body read timeout")
	}
	return huma.NewError(http.StatusInternalServerError, "cannot read request body", err)
}
