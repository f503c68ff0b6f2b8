package valves

import (
	"errors"
	"fmt"
	"maps"
	"net"
	"net/url"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// safeID is a user or group id that can be one path segment (FUNCTIONS.md, ids).
var safeID = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// Validate checks every valve (allowed values and ranges from the struct tags) and the rules
// that tie valves together. It reports all problems at once, each naming its valve, and
// never echoes a secret.
func (c *Config) Validate() error {
	var errs []error
	bad := func(name, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s", name, fmt.Sprintf(format, a...)))
	}
	for _, v := range all {
		f := v.field(c)
		switch {
		case v.enum != nil && !slices.Contains(v.enum, f.String()):
			bad(v.name, "%q is not one of %s", f.String(), strings.Join(v.enum, ", "))
		case v.typ.Kind() == reflect.Int && (f.Int() < int64(v.min) || f.Int() > int64(v.max)):
			bad(v.name, "%d is outside %d..%d", f.Int(), v.min, v.max)
		}
	}

	if err := checkListen(c.Listen); err != nil {
		bad("listen", "%v", err)
	}
	if c.StorageBasePath == "" || strings.ContainsRune(c.StorageBasePath, 0) {
		bad("storage_base_path", "must be a non-empty path without NUL")
	}
	if c.PublicURLBase != "" {
		if err := checkBaseURL(c.PublicURLBase); err != nil {
			bad("public_url", "%v", err)
		}
	}
	if c.OpenWebUI.URL != "" {
		if err := checkBaseURL(c.OpenWebUI.URL); err != nil {
			bad("openwebui.url", "%v", err)
		}
	}

	switch c.Auth.Mode {
	case "session":
		if c.OpenWebUI.URL == "" {
			bad("auth.mode", "session needs openwebui.url")
		}
	case "jwt":
		if c.Auth.JWTSecret == "" {
			bad("auth.jwt_secret", "auth.mode jwt needs it")
		}
		if c.Auth.APIKey == "" {
			bad("auth.api_key", "auth.mode jwt needs it")
		}
	case "headers":
		if c.Auth.APIKey == "" {
			bad("auth.api_key", "auth.mode headers needs it (plain identity headers are trusted only behind a key)")
		}
	}
	if !safeID.MatchString(c.Auth.NoneUserID) {
		bad("auth.none_user_id", "%q is not an id (letters, digits, _ and -, 1-64)", c.Auth.NoneUserID)
	}
	if k := c.Encryption.MasterKey; k != "" && len(k) < 32 {
		bad("encryption.master_key", "at least 32 characters (e.g. openssl rand -base64 32)")
	}
	if c.Links.Mode == "openwebui" && c.OpenWebUI.URL == "" {
		bad("links.mode", "openwebui needs openwebui.url")
	}

	for _, o := range c.CORS.AllowedOrigins {
		if err := checkOrigin(o); err != nil {
			bad("cors.allowed_origins", "%v", err)
		}
	}
	if !token(c.Groups.Header) {
		bad("groups.header", "%q is not an HTTP header name", c.Groups.Header)
	}
	for _, g := range slices.Sorted(maps.Keys(c.Groups.Static)) {
		if !safeID.MatchString(g) {
			bad("groups.static", "group id %q is not an id (letters, digits, _ and -, 1-64)", g)
		}
		for _, u := range c.Groups.Static[g] {
			if !safeID.MatchString(u) {
				bad("groups.static", "group %q: user id %q is not an id (letters, digits, _ and -, 1-64)", g, u)
			}
		}
	}

	if c.ExecTimeoutDefault > c.ExecTimeoutMax {
		bad("exec_timeout_default", "%d is above exec_timeout_max %d", c.ExecTimeoutDefault, c.ExecTimeoutMax)
	}
	if c.MaxOutputDefault > c.MaxOutputAbsolute {
		bad("max_output_default", "%d is above max_output_absolute %d", c.MaxOutputDefault, c.MaxOutputAbsolute)
	}
	if c.LinkTTLHoursDefault > c.LinkTTLHoursMax {
		bad("link_ttl_hours_default", "%d is above link_ttl_hours_max %d", c.LinkTTLHoursDefault, c.LinkTTLHoursMax)
	}
	return errors.Join(errs...)
}

// checkListen accepts host:port with a numeric port (an empty host means every interface).
func checkListen(s string) error {
	_, port, err := net.SplitHostPort(s)
	if err != nil {
		return fmt.Errorf("%q is not host:port", s)
	}
	if n, err := strconv.ParseUint(port, 10, 16); err != nil || port != strconv.FormatUint(n, 10) {
		return fmt.Errorf("%q: port must be a number 0-65535", s)
	}
	return nil
}

// checkBaseURL accepts an absolute http(s) URL with a host and no credentials, query or
// fragment: links and API calls are built by appending paths to it.
func checkBaseURL(s string) error {
	u, err := url.Parse(s)
	switch {
	case err != nil:
		return fmt.Errorf("%q is not a URL", s)
	case u.Scheme != "http" && u.Scheme != "https":
		return fmt.Errorf("%q must start with http:// or https://", s)
	case u.Host == "":
		return fmt.Errorf("%q has no host", s)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(s, "?#"):
		return fmt.Errorf("%q must not carry credentials, a query or a fragment", s)
	}
	return nil
}

// checkOrigin accepts "*" or an exact origin: scheme://host[:port], nothing else, since
// browsers compare the Origin header with it byte for byte.
func checkOrigin(s string) error {
	if s == "*" {
		return nil
	}
	u, err := url.Parse(s)
	if err != nil || u.Scheme == "" || u.Host == "" || u.User != nil || u.Path != "" ||
		u.RawQuery != "" || u.Fragment != "" || strings.ContainsAny(s, "?#") {
		return fmt.Errorf("%q is not \"*\" or an origin like https://chat.example.com", s)
	}
	return nil
}

// token reports whether s is a non-empty HTTP token (RFC 9110 tchar), i.e. a header name.
func token(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' ||
			strings.ContainsRune("!#$%&'*+-.^_`|~", r)) {
			return false
		}
	}
	return true
}
