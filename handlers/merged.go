package handlers

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/danielgtaylor/huma/v2"

	"github.com/fileshed/fileshed/core"
)

// handleFunc runs one registered tool on a JSON body of size bytes (-1: unknown): decoding,
// the call, audit, metrics.
type handleFunc func(ctx context.Context, body io.Reader, size int64) (*output, error)

// registry keeps every registered tool's handle: the one dispatch that the tool's route,
// a merged tool and MCP all call.
type registry struct {
	handles map[string]handleFunc
	hints   map[string]hints // every tool's effects, the merged ones derived from their actions'
}

// mergedSpec is one model-facing tool that stands for several original tools: the model
// sends `action` and the arguments of that action; the original tools stay routes of their
// own (prompts and scripts use their names) but leave the model-facing spec.
type mergedSpec struct {
	name        string
	summary     string
	description string
	actions     []mergedAction
}

// mergedAction maps one value of `action` to the original tool it runs.
type mergedAction struct {
	action string
	tool   string
}

// merge registers spec as POST /<spec.name> and removes its members from the spec. The
// request schema is the union of the members' arguments plus a required `action`.
func merge(api huma.API, d Deps, spec mergedSpec) {
	doc := api.OpenAPI()
	schemas := doc.Components.Schemas.Map()
	props := map[string]*huma.Schema{}
	enum := make([]any, 0, len(spec.actions))
	byAction := map[string]string{}
	var unused []string
	for _, a := range spec.actions {
		enum = append(enum, a.action)
		byAction[a.action] = a.tool
		item := doc.Paths["/"+a.tool]
		if item == nil || item.Post == nil {
			panic("merge " + spec.name + ": no tool " + a.tool) // a programming error, caught by every test
		}
		if rb := item.Post.RequestBody; rb != nil {
			s := rb.Content["application/json"].Schema
			if s.Ref != "" {
				name := strings.TrimPrefix(s.Ref, "#/components/schemas/")
				s = schemas[name]
				unused = append(unused, name) // removed once every action has been read
			}
			for k, p := range s.Properties {
				if _, ok := props[k]; !ok {
					props[k] = p
				}
			}
		}
		delete(doc.Paths, "/"+a.tool)
	}
	for _, name := range unused {
		if !referenced(doc, name) {
			delete(schemas, name)
		}
	}
	limit := int64(0)
	members := make([]hints, 0, len(spec.actions))
	for _, a := range spec.actions {
		limit = max(limit, d.limits["/"+a.tool])
		members = append(members, d.registry.hints[a.tool])
	}
	d.registry.hints[spec.name] = mergeHints(members)
	d.limits["/"+spec.name] = limit // the largest body of its actions, enforced by limitBodies
	props["action"] = &huma.Schema{Type: huma.TypeString, Enum: enum}
	input := &huma.Schema{Type: huma.TypeObject, Properties: props, Required: []string{"action"}}
	op := huma.Operation{
		OperationID: spec.name, Method: http.MethodPost, Path: "/" + spec.name,
		Summary: spec.summary, Description: spec.description, MaxBodyBytes: -1,
		SkipValidateBody: true, Tags: []string{"fileshed"},
	}
	listed := make([]map[string]string, 0, len(spec.actions))
	for _, a := range spec.actions {
		listed = append(listed, map[string]string{"action": a.action, "tool": a.tool})
	}
	op.Extensions = map[string]any{"x-fileshed-actions": listed}
	names := make([]string, 0, len(byAction))
	for a := range byAction {
		names = append(names, a)
	}
	sort.Strings(names)
	handle := func(ctx context.Context, body io.Reader, _ int64) (*output, error) {
		raw, err := io.ReadAll(body)
		if err != nil {
			return nil, bodyReadFailure(err)
		}
		var head struct {
			Action any `json:"action"`
		}
		_ = json.Unmarshal(raw, &head)
		action, isString := head.Action.(string)
		if !isString && head.Action != nil {
			action = fmt.Sprint(head.Action)
		}
		tool, ok := byAction[strings.ToLower(strings.TrimSpace(action))]
		if !ok {
			code, msg := core.InvalidParameter, "Unknown action "+quote(action)
			if head.Action == nil || action == "" {
				code, msg = core.MissingParameter, "Missing action"
			}
			e := core.Errf(code, "%s for %s", msg, spec.name).With("actions", names).
				WithHint("Give action, one of: %s", strings.Join(names, ", "))
			status, env := failure(d.Log, requestID(ctx), e)
			env.Usage = spec.name + "(action, ...): action = " + strings.Join(names, " | ")
			return &output{Status: status, Body: env}, nil
		}
		return d.registry.handles[tool](ctx, bytes.NewReader(raw), int64(len(raw)))
	}
	d.registry.handles[spec.name] = handle // one dispatch: the route below and MCP call it
	huma.Register(api, op, func(ctx context.Context, in *rawInput) (*output, error) {
		return handle(ctx, bytes.NewReader(in.RawBody), int64(len(in.RawBody)))
	})
	api.OpenAPI().Paths["/"+spec.name].Post.RequestBody = &huma.RequestBody{Required: true,
		Content: map[string]*huma.MediaType{"application/json": {Schema: input}}}
}

// referenced reports whether a tool left in doc takes the component schema name as its body.
func referenced(doc *huma.OpenAPI, name string) bool {
	for _, item := range doc.Paths {
		if item.Post == nil || item.Post.RequestBody == nil {
			continue
		}
		for _, mt := range item.Post.RequestBody.Content {
			if mt.Schema != nil && mt.Schema.Ref == "#/components/schemas/"+name {
				return true
			}
		}
	}
	return false
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}
