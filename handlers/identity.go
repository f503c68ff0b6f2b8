package handlers

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/fileshed/fileshed/core"
	"github.com/fileshed/fileshed/core/owui"
	"github.com/fileshed/fileshed/core/valves"
)

// Authenticator turns a request into the caller it speaks for. This file is the only place
// that builds a core.Caller: identity is never taken from tool arguments.
type Authenticator interface {
	Authenticate(r *http.Request) (core.Caller, error)
}

// Forwarded Open WebUI headers (ENABLE_FORWARD_USER_INFO_HEADERS).
const (
	headerChatID    = "X-OpenWebUI-Chat-Id"
	headerUserID    = "X-OpenWebUI-User-Id"
	headerUserName  = "X-OpenWebUI-User-Name"
	headerUserEmail = "X-OpenWebUI-User-Email"
	headerUserRole  = "X-OpenWebUI-User-Role"
	headerUserJWT   = "X-OpenWebUI-User-Jwt"
)

// NewAuthenticator builds the authenticator of the configured auth.mode.
func NewAuthenticator(cfg *valves.Config, verifier *owui.Verifier) (Authenticator, error) {
	switch cfg.Auth.Mode {
	case "none":
		return noneAuth{user: cfg.Auth.NoneUserID}, nil
	case "headers":
		return headersAuth{key: cfg.Auth.APIKey, groupHeader: cfg.Groups.Header}, nil
	case "jwt":
		return jwtAuth{key: cfg.Auth.APIKey, secret: []byte(cfg.Auth.JWTSecret), issuer: cfg.Auth.JWTIssuer}, nil
	case "session":
		if verifier == nil {
			return nil, errors.New("auth.mode session needs openwebui.url")
		}
		return sessionAuth{verifier: verifier}, nil
	}
	return nil, errors.New("unknown auth.mode " + cfg.Auth.Mode)
}

type noneAuth struct{ user string }

func (a noneAuth) Authenticate(r *http.Request) (core.Caller, error) {
	return core.NewCaller(a.user, a.user, "", "admin", r.Header.Get(headerChatID), nil, "")
}

type headersAuth struct{ key, groupHeader string }

func (a headersAuth) Authenticate(r *http.Request) (core.Caller, error) {
	if err := checkKey(r, a.key); err != nil {
		return core.Caller{}, err
	}
	h := r.Header
	id := h.Get(headerUserID)
	if id == "" {
		return core.Caller{}, core.Errf(core.AuthRequired, "Missing %s header", headerUserID).
			WithHint("Enable ENABLE_FORWARD_USER_INFO_HEADERS in Open WebUI")
	}
	// An absent header says nothing of the caller's groups (nil: groups.static answers
	// alone, and nothing is recorded as seen); a present one, even empty, is the whole list
	// (Open WebUI sends {{USER_GROUP_IDS}} empty for a user in no group).
	var groups []string
	if _, present := h[http.CanonicalHeaderKey(a.groupHeader)]; present {
		groups = []string{}
		for _, g := range strings.Split(h.Get(a.groupHeader), ",") {
			if g = strings.TrimSpace(g); g != "" {
				groups = append(groups, unescapeHeader(g))
			}
		}
	}
	return core.NewCaller(id, unescapeHeader(h.Get(headerUserName)), h.Get(headerUserEmail), h.Get(headerUserRole), h.Get(headerChatID), groups, "")
}

// unescapeHeader decodes a header value Open WebUI percent-encodes (the user name, and
// group names in a {{USER_GROUPS}} custom header: Python's quote(v, safe=' '), where '+'
// is sent as %2B). A value that is not valid percent-encoding is kept as sent.
func unescapeHeader(v string) string {
	if d, err := url.PathUnescape(v); err == nil {
		return d
	}
	return v
}

type sessionAuth struct{ verifier *owui.Verifier }

func (a sessionAuth) Authenticate(r *http.Request) (core.Caller, error) {
	token, ok := bearer(r)
	if !ok {
		return core.Caller{}, core.Errf(core.AuthRequired, "Missing bearer token").
			WithHint("In Open WebUI, set this tool server connection's auth type to Session")
	}
	u, err := a.verifier.Verify(r.Context(), token)
	switch {
	case errors.Is(err, owui.ErrUnauthorized):
		return core.Caller{}, core.Errf(core.AuthInvalid, "Open WebUI rejected the session token")
	case err != nil:
		return core.Caller{}, core.Errf(core.AuthUnavailable, "Open WebUI could not verify the session").Because(err)
	}
	if u.Role == "pending" {
		// An account awaiting an administrator's approval has no workshop yet.
		return core.Caller{}, core.Errf(core.AuthInvalid, "This Open WebUI account is pending approval")
	}
	return core.NewCaller(u.ID, u.Name, u.Email, u.Role, r.Header.Get(headerChatID), nil, token)
}

// bearer extracts the token of an "Authorization: Bearer x" header.
func bearer(r *http.Request) (string, bool) {
	scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "Bearer") || token == "" {
		return "", false
	}
	return token, true
}

// checkKey compares the static bearer key in constant time.
func checkKey(r *http.Request, key string) error {
	token, ok := bearer(r)
	if !ok {
		return core.Errf(core.AuthRequired, "Missing bearer key").
			WithHint("In Open WebUI, set this tool server connection's auth type to Bearer with the key of auth.api_key (FILESHED_AUTH_API_KEY)")
	}
	if subtle.ConstantTimeCompare([]byte(token), []byte(key)) != 1 {
		return core.Errf(core.AuthInvalid, "Invalid bearer key").
			WithHint("The connection's Bearer key in Open WebUI must equal auth.api_key (FILESHED_AUTH_API_KEY)")
	}
	return nil
}

type callerKey struct{}

// withCaller and callerFrom carry the authenticated caller from the middleware to the
// operation, inside this package only; core receives it as an explicit argument.
func withCaller(ctx context.Context, c core.Caller) context.Context {
	return context.WithValue(ctx, callerKey{}, c)
}

func callerFrom(ctx context.Context) (core.Caller, bool) {
	c, ok := ctx.Value(callerKey{}).(core.Caller)
	return c, ok
}
