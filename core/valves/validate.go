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

// idPattern is the one rule for user and group ids (FUNCTIONS.md, ids): one path segment of
// letters, digits, '-' and '_', 1 to 64 characters, starting with a letter or digit.
var idPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$`)

// ValidID reports whether s can be a user or group id. Ids become directory names and reach
// the command line of tools (`fileshed admin sandbox ls user ID`, paths given to commands), so
// a leading '-' or '_' is refused: no id reads as an option ("-rf"); UUIDs pass, "..", "" and
// "a/b" do not. core.ValidID is this function, so the configuration and the requests agree.
func ValidID(s string) bool { return idPattern.MatchString(s) }

// idRule says what ValidID accepts, for error messages.
const idRule = "letters, digits, _ and -, 1-64, starting with a letter or digit"

// Validate checks every valve (allowed values, ranges and lengths from the struct tags) and
// the rules that tie valves together: every check that needs no storage, so that `fileshed
// valves` and serve refuse the same configurations, before anything is created. It reports
// all problems at once, each naming its valve with its variable and flag, and never echoes
// a secret.
func (c *Config) Validate() error {
	var errs []error
	bad := func(name, format string, a ...any) {
		errs = append(errs, fmt.Errorf("%s: %s (%s)", name, fmt.Sprintf(format, a...), byName[name].where()))
	}
	for _, v := range all {
		f := v.field(c)
		switch {
		case v.enum != nil && !slices.Contains(v.enum, f.String()):
			bad(v.name, "%q is not one of %s", f.String(), strings.Join(v.enum, ", "))
		case v.typ.Kind() == reflect.Int && (f.Int() < int64(v.min) || f.Int() > int64(v.max)):
			bad(v.name, "%d is outside %d..%d", f.Int(), v.min, v.max)
		case v.minLen > 0 && f.Len() > 0 && f.Len() < v.minLen:
			// A short key is guessed or brute-forced: refuse it rather than serve behind it.
			bad(v.name, "at least %d characters, e.g. openssl rand -base64 %d", v.minLen, v.minLen)
		case v.minLen > 0 && f.Len() > 0 && distinct(f.String()) < minDistinct:
			// A placeholder ("aaaaaaaaaaaaaaaa", "xxxx...") passes the length and is guessed first.
			bad(v.name, "not a random value (%d different characters): use e.g. openssl rand -base64 %d", distinct(f.String()), v.minLen)
		}
	}

	if err := checkListen(c.Listen); err != nil {
		bad("listen", "%v", err)
	} else if c.Auth.Mode == "none" && !c.Auth.AllowInsecureNone && !loopback(c.Listen) {
		// With no authentication, anyone who reaches the port would own the workshop.
		bad("listen", "auth.mode none refuses %q (not loopback): anyone reaching the port would own the workshop. "+
			"Set auth.mode (FILESHED_AUTH_MODE: session, jwt or headers), or listen on 127.0.0.1, "+
			"or accept the risk with auth.allow_insecure_none (FILESHED_AUTH_ALLOW_INSECURE_NONE=true)", c.Listen)
	}
	if c.StorageBasePath == "" || strings.ContainsRune(c.StorageBasePath, 0) {
		bad("storage_base_path", "must be a non-empty path without NUL")
	}
	switch {
	case c.State.Driver == "postgres" && c.State.URL == "":
		bad("state.url", "state.driver postgres needs it, e.g. postgres://fileshed:PASSWORD@db:5432/fileshed (a secret: give it as a file)")
	case c.State.Driver == "postgres" && !postgresURL(c.State.URL):
		bad("state.url", "not a postgres:// or postgresql:// URL (the value is a secret and is not shown)")
	case c.State.Driver != "postgres" && c.State.URL != "":
		// Why refuse: a deployment meant for PostgreSQL would otherwise keep its state in a
		// file on the shared volume without a word.
		bad("state.url", "set, but state.driver is %q: set state.driver postgres, or remove state.url", c.State.Driver)
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
			bad("auth.mode", "session needs openwebui.url (%s), the address fileshed reaches Open WebUI at", Where("openwebui.url"))
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
	if !ValidID(c.Auth.NoneUserID) {
		bad("auth.none_user_id", "%q is not an id (%s)", c.Auth.NoneUserID, idRule)
	}
	if c.Links.Mode == "openwebui" && c.OpenWebUI.URL == "" {
		bad("links.mode", "openwebui needs openwebui.url (%s)", Where("openwebui.url"))
	}

	for _, o := range c.CORS.AllowedOrigins {
		if err := checkOrigin(o); err != nil {
			bad("cors.allowed_origins", "%v", err)
		}
	}
	if c.AnyOrigin() && c.Auth.Mode == "none" && !loopback(c.Listen) {
		// Why refuse: with no credential at all, "*" hands every web page that anyone on
		// the network opens the workshop, and lets it read the answers.
		bad("cors.allowed_origins", `"*" with auth.mode none on %q (not loopback): every web page could drive the tools. `+
			"Name the origins that may call fileshed (e.g. Open WebUI's https://chat.example.com), or set auth.mode", c.Listen)
	}
	if !token(c.Groups.Header) {
		bad("groups.header", "%q is not an HTTP header name", c.Groups.Header)
	}
	for _, g := range slices.Sorted(maps.Keys(c.Groups.Static)) {
		if !ValidID(g) {
			bad("groups.static", "group id %q is not an id (%s)", g, idRule)
		}
		for _, u := range c.Groups.Static[g] {
			if !ValidID(u) {
				bad("groups.static", "group %q: user id %q is not an id (%s)", g, u, idRule)
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

// loopback reports whether the host of the host:port s is localhost or a loopback address.
func loopback(s string) bool {
	host, _, _ := net.SplitHostPort(s)
	ip := net.ParseIP(host)
	return host == "localhost" || ip != nil && ip.IsLoopback()
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

// postgresURL reports whether s is a PostgreSQL URL (postgres:// or postgresql://), the form
// state.url takes. Only its scheme is checked here (the driver parses the rest), and never
// echoed: the URL may carry a password.
func postgresURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql")
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

// minDistinct is the fewest different characters a secret may have: a random key of the
// shortest length has a dozen (base64 or hex), a placeholder one or two.
const minDistinct = 6

// distinct counts the different characters of s.
func distinct(s string) int {
	seen := map[rune]bool{}
	for _, r := range s {
		seen[r] = true
	}
	return len(seen)
}
