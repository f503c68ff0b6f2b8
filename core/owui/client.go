package owui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Sentinel errors; every error returned by this package wraps exactly one of them.
var (
	// ErrUnauthorized means Open WebUI refused the token (401/403): bad,
	// expired or revoked. Malformed tokens are refused without a request.
	ErrUnauthorized = errors.New("owui: token refused by Open WebUI")
	// ErrUnavailable means Open WebUI could not be asked or gave no usable
	// answer: network error, timeout, 5xx, redirect, oversized or malformed body.
	ErrUnavailable = errors.New("owui: Open WebUI unavailable")
	// ErrNotFound means the file or chat does not exist or is not the caller's.
	ErrNotFound = errors.New("owui: not found")
	// ErrInvalidID means a file or chat id is not a safe URL path segment; no
	// request was made.
	ErrInvalidID = errors.New("owui: invalid id")
	// ErrRefused means Open WebUI answered but could not do what was asked (400, or an
	// upload answered without a usable file id: its file table did not take the entry).
	ErrRefused = errors.New("owui: refused by Open WebUI")
)

const (
	// defaultTimeout applies when New is given a non-positive timeout, so a
	// missing setting can never mean "wait forever".
	defaultTimeout = 10 * time.Second
	// maxAuthJSON caps the /auths/ answer: a user record is well under 1 KiB.
	maxAuthJSON = 1 << 20
	// maxBigJSON caps groups, file and chat answers: a file record carries the
	// document's extracted text, a chat its whole history.
	maxBigJSON = 32 << 20
	// maxErrorBody caps what is read of a non-200 answer (for its "detail").
	maxErrorBody = 4 << 10
	// maxTokenLen bounds the bearer token we forward; JWTs and sk- keys are far shorter.
	maxTokenLen = 16 << 10
	// maxIDLen bounds file and chat ids; Open WebUI uses 36-character UUIDs.
	maxIDLen = 128
)

// notFoundDetail is Open WebUI's ERROR_MESSAGES.NOT_FOUND. Open WebUI answers
// 401 with this detail for a chat that is missing or someone else's, which
// must not be mistaken for a bad token.
const notFoundDetail = "We could not find what you're looking for :/"

// Client calls Open WebUI's REST API with the caller's bearer token. It is
// safe for concurrent use.
type Client struct {
	base    string
	timeout time.Duration
	http    *http.Client
}

// New returns a client for the Open WebUI at baseURL (e.g.
// "http://open-webui:8080"). timeout bounds each JSON exchange from dial to
// the last byte, and FileContent until the response headers arrive; a
// non-positive timeout means 10 s. Redirects are never followed: a
// redirected request answers ErrUnavailable.
func New(baseURL string, timeout time.Duration) *Client {
	if timeout <= 0 {
		timeout = defaultTimeout
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.MaxIdleConnsPerHost = 16
	return &Client{
		base:    strings.TrimRight(baseURL, "/"),
		timeout: timeout,
		http: &http.Client{
			Transport: tr,
			// Why: a redirect could carry the user's token to another
			// origin, and Open WebUI's API never redirects a correct path.
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
		},
	}
}

// checkToken refuses tokens that cannot be a valid bearer credential before
// any request, so header injection and absurd sizes never reach the wire.
func checkToken(token string) error {
	if token == "" || len(token) > maxTokenLen {
		return fmt.Errorf("%w: missing or oversized token", ErrUnauthorized)
	}
	for i := 0; i < len(token); i++ {
		if b := token[i]; b <= ' ' || b >= 0x7f {
			return fmt.Errorf("%w: token has invalid characters", ErrUnauthorized)
		}
	}
	return nil
}

// checkID accepts only ids made of [A-Za-z0-9._:~-], which covers Open
// WebUI's UUIDs. Why so strict: the id becomes a URL path segment, and "/",
// "..", "." or "\" could make the request reach another endpoint with the
// user's token (e.g. "../../auths/" or "." turning files/{id} into the list).
func checkID(id string) error {
	if id == "" || len(id) > maxIDLen || id == "." || strings.Contains(id, "..") {
		return fmt.Errorf("%w: %q", ErrInvalidID, id)
	}
	for _, r := range id {
		ok := r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			r == '-' || r == '_' || r == '.' || r == ':' || r == '~'
		if !ok {
			return fmt.Errorf("%w: %q", ErrInvalidID, id)
		}
	}
	return nil
}

// get sends an authenticated GET for path (already escaped). It returns the
// response only for 200; any other answer is closed and mapped to an error.
// resource marks file and chat endpoints, where 404 (and Open WebUI's
// NOT_FOUND detail on any 4xx) means ErrNotFound; elsewhere a 404 means the
// base URL is not an Open WebUI, hence ErrUnavailable.
func (c *Client) get(ctx context.Context, token, path string, resource bool) (*http.Response, error) {
	if err := checkToken(token); err != nil {
		return nil, err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, c.base+path, nil)
	if err != nil {
		// The parse error would echo the base URL (maybe with credentials).
		return nil, fmt.Errorf("%w: GET %s: invalid Open WebUI URL", ErrUnavailable, path)
	}
	return c.do(req, token, path, resource)
}

// do sends req with the token and returns the response only for 200; any other answer
// is closed and mapped to an error (see get for resource).
func (c *Client) do(req *http.Request, token, path string, resource bool) (*http.Response, error) {
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", "fileshed")
	resp, err := c.http.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // drop the URL, keep the cause
		}
		return nil, fmt.Errorf("%w: %s %s: %w", ErrUnavailable, req.Method, path, err)
	}
	if resp.StatusCode == http.StatusOK {
		return resp, nil
	}
	defer resp.Body.Close()
	return nil, statusError(resp, path, resource)
}

// statusError maps a non-200 answer to a sentinel. The upstream detail is
// never copied into the message.
func statusError(resp *http.Response, path string, resource bool) error {
	code := resp.StatusCode
	switch {
	case resource && code == http.StatusNotFound:
		return fmt.Errorf("%w: GET %s", ErrNotFound, path)
	case resource && code >= 400 && code < 500 && errorDetail(resp.Body) == notFoundDetail:
		return fmt.Errorf("%w: GET %s", ErrNotFound, path)
	case code == http.StatusUnauthorized || code == http.StatusForbidden:
		return fmt.Errorf("%w: GET %s: status %d", ErrUnauthorized, path, code)
	case code == http.StatusBadRequest:
		return fmt.Errorf("%w: %s: status %d", ErrRefused, path, code)
	default:
		return fmt.Errorf("%w: GET %s: status %d", ErrUnavailable, path, code)
	}
}

// errorDetail returns FastAPI's {"detail": "..."} string, or "".
func errorDetail(body io.Reader) string {
	data, _ := io.ReadAll(io.LimitReader(body, maxErrorBody))
	var e struct {
		Detail any `json:"detail"`
	}
	if json.Unmarshal(data, &e) != nil {
		return ""
	}
	s, _ := e.Detail.(string)
	return s
}

// getJSON performs get within the client timeout and decodes at most limit
// bytes of JSON into v.
func (c *Client) getJSON(ctx context.Context, token, path string, resource bool, limit int64, v any) error {
	ctx, cancel := context.WithTimeout(ctx, c.timeout)
	defer cancel()
	resp, err := c.get(ctx, token, path, resource)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return fmt.Errorf("%w: GET %s: reading answer: %w", ErrUnavailable, path, err)
	}
	if int64(len(data)) > limit {
		return fmt.Errorf("%w: GET %s: answer larger than %d bytes", ErrUnavailable, path, limit)
	}
	if err := json.Unmarshal(data, v); err != nil {
		return fmt.Errorf("%w: GET %s: malformed answer: %w", ErrUnavailable, path, err)
	}
	return nil
}
