package valves

import (
	"net"
	"strings"
)

// Warnings lists what in a configuration that Validate accepted is probably a mistake:
// each variable of environ (os.Environ's "NAME=value" form) that starts with FILESHED_ but
// names no setting, with the closest setting's variable (a typo is otherwise ignored
// without a word), and public_url left empty while the server listens on every interface
// (links would then point at localhost), and cors.allowed_origins "*" (every web page may
// drive the tools). Values are never shown.
func (c *Config) Warnings(environ []string) []string {
	var out []string
	for _, kv := range environ {
		name, _, _ := strings.Cut(kv, "=")
		if !strings.HasPrefix(name, envPrefix) || known[name] {
			continue
		}
		if near := closest(name); near != "" {
			out = append(out, name+" is not a setting (did you mean "+near+"?); it is ignored")
		} else {
			out = append(out, name+" is not a setting; fileshed valves lists them; it is ignored")
		}
	}
	if host, _, err := net.SplitHostPort(c.Listen); err == nil && c.PublicURLBase == "" && unspecified(host) {
		out = append(out, "public_url is not set and fileshed listens on "+c.Listen+": download links will point at "+
			c.PublicURL()+", which only a browser on this machine opens; set public_url ("+byName["public_url"].where()+
			") to the address users' browsers reach, e.g. https://files.example.com")
	}
	if c.AnyOrigin() {
		w := `cors.allowed_origins is "*": every web page a user opens may call the tools from the user's browser and read the answers`
		if c.Auth.Mode == "none" {
			w += " (auth.mode none: with no credential at all, any page can read, change and delete the files)"
		}
		out = append(out, w+"; name the origins instead ("+byName["cors.allowed_origins"].where()+"), e.g. Open WebUI's https://chat.example.com")
	}
	return out
}

// unspecified reports whether host means every interface ("", 0.0.0.0, ::).
func unspecified(host string) bool {
	ip := net.ParseIP(host)
	return host == "" || ip != nil && ip.IsUnspecified()
}

// known holds every variable Load reads: each valve's, each secret's _FILE, FILESHED_CONFIG.
var known = func() map[string]bool {
	m := map[string]bool{configEnv: true}
	for _, v := range all {
		m[v.env()] = true
		if v.secret {
			m[v.env()+"_FILE"] = true
		}
	}
	return m
}()

// closest is the known variable nearest to name (edit distance, ignoring "_", which is
// the usual slip), or "" when none is within half of name's length.
func closest(name string) string {
	norm := func(s string) string { return strings.ReplaceAll(strings.TrimPrefix(s, envPrefix), "_", "") }
	n := norm(name)
	best, bestD := "", len(n)/2+1
	for k := range known {
		if d := distance(n, norm(k)); d < bestD || d == bestD && best != "" && k < best {
			best, bestD = k, d
		}
	}
	return best
}

// distance is the Levenshtein distance between a and b (bytes: variable names are ASCII).
func distance(a, b string) int {
	prev, cur := make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
