package handlers

import (
	"context"
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

// Build wires a whole server from the configuration: the Open WebUI client (when
// openwebui.url is set), the authenticator of auth.mode, the core service and the HTTP
// handler. main and the tests both call it, so what is tested is what runs. The caller
// closes the service.
func Build(cfg *valves.Config, log *slog.Logger) (http.Handler, huma.API, *core.Service, error) {
	if err := Check(cfg); err != nil {
		return nil, nil, nil, err
	}
	var client *owui.Client
	var verifier *owui.Verifier
	if cfg.OpenWebUI.URL != "" {
		client = owui.New(cfg.OpenWebUI.URL, time.Duration(cfg.OpenWebUI.TimeoutSeconds)*time.Second)
		verifier = owui.NewVerifier(client, time.Duration(cfg.OpenWebUI.CacheSeconds)*time.Second)
	}
	auth, err := NewAuthenticator(cfg, verifier)
	if err != nil {
		return nil, nil, nil, err
	}
	// Calls on the user's behalf use the user's token (session mode); imports in the other
	// modes use openwebui.admin_api_key.
	opts := core.Options{OpenWebUI: client}
	svc, err := core.New(cfg, opts)
	if err != nil {
		return nil, nil, nil, err
	}
	if n, err := svc.EncryptionMismatch(context.Background()); err == nil && n > 0 {
		log.Error("encryption: the master key (encryption.master_key) is missing or is not the one the data keys were wrapped with; "+
			"these users' storage and uploads are refused (ENCRYPTION_KEY_REQUIRED or INVALID_ENCRYPTION_KEY), nothing is changed, "+
			"until the original key is configured", "users", n)
	}
	set, err := tools.New(svc)
	if err != nil {
		svc.Close()
		return nil, nil, nil, err
	}
	h, api := New(Deps{Tools: set, Auth: auth, Log: log})
	return h, api, svc, nil
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
