package handlers

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/danielgtaylor/huma/v2"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/owui"
	"github.com/fileshed/fileshed/core/valves"
	"github.com/fileshed/fileshed/tools"
)

// Build wires a whole server from the configuration as main does, from the same pieces:
// the identity (the Open WebUI client and the authenticator of auth.mode), the kernel and
// its tool families (tools.Open), the HTTP handler (New). The tests call it, so what is
// tested is what runs. The caller closes the kernel.
func Build(cfg *valves.Config, log *slog.Logger) (http.Handler, huma.API, *core.Service, error) {
	if err := Check(cfg); err != nil {
		return nil, nil, nil, err
	}
	client, auth, err := Identity(cfg)
	if err != nil {
		return nil, nil, nil, err
	}
	set, err := tools.Open(cfg, core.Options{OpenWebUI: client}, log)
	if err != nil {
		return nil, nil, nil, err
	}
	h, api := New(Deps{Tools: set, Auth: auth, Log: log})
	return h, api, set.Service, nil
}

// Identity is who a request is: the Open WebUI client (nil without openwebui.url), which
// the kernel uses on the caller's behalf too (groups, uploads; in session mode with the
// user's token, else with openwebui.admin_api_key), and the authenticator of auth.mode,
// which verifies session tokens through it. It opens no storage: main builds it first.
func Identity(cfg *valves.Config) (*owui.Client, Authenticator, error) {
	var client *owui.Client
	var verifier *owui.Verifier
	if cfg.OpenWebUI.URL != "" {
		client = owui.New(cfg.OpenWebUI.URL, time.Duration(cfg.OpenWebUI.TimeoutSeconds)*time.Second)
		verifier = owui.NewVerifier(client, time.Duration(cfg.OpenWebUI.CacheSeconds)*time.Second)
	}
	auth, err := NewAuthenticator(cfg, verifier)
	if err != nil {
		return nil, nil, err
	}
	return client, auth, nil
}

// Check refuses what only the HTTP edge can judge in a configuration that valves.Validate
// accepted: tool_descriptions naming a tool the model does not see (unknown, or an action
// of a merged tool). It opens nothing, so main runs it with Validate before any command
// and Build before it creates the storage.
func Check(cfg *valves.Config) error {
	if len(cfg.ToolDescriptions) == 0 {
		return nil
	}
	if unknown := unknownTools(Spec(cfg), cfg.ToolDescriptions); len(unknown) > 0 {
		return fmt.Errorf("tool_descriptions: names tools the model does not see: %s (the model-facing tools are listed in /openapi.json) (%s)",
			strings.Join(unknown, ", "), valves.Where("tool_descriptions"))
	}
	return nil
}
