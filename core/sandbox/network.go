package sandbox

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"time"
)

type netLevel int

const (
	netDisabled netLevel = iota
	netSafe
	netAll
)

// netMode reads the network_mode valve; unknown values mean disabled (as the original).
func netMode(s string) netLevel {
	switch s {
	case "safe":
		return netSafe
	case "all":
		return netAll
	}
	return netDisabled
}

// curlOpts: -K/--config, --engine (loads a library), unix sockets (local daemons),
// --next (resets the forced --proto for the next URL) and --variable (reads files)
// are refused in every mode; the upload, method, redirect, proxy and resolution
// options only in "safe" mode (curlSafeForbidden). Values naming files are confined.
const curlOpts = "!-K !--config !--engine !--unix-socket !--abstract-unix-socket !-: !--next !--variable " +
	"-o= --output= --output-dir= -D= --dump-header= -c= --cookie-jar= --cacert= --capath= -E= --cert= --key= " +
	"--trace= --trace-ascii= --stderr= --libcurl= --etag-save= --etag-compare= --hsts= --alt-svc= --netrc-file= " +
	"--crlfile= -T= --upload-file= " +
	"-b: --cookie: -H: --header: -A: --user-agent: -e: --referer: -u: --user: -r: --range: -m: --max-time: " +
	"--connect-timeout: --retry: -C: --continue-at: -w: --write-out: -y: -Y: --limit-rate: --max-filesize: " +
	"-z: --time-cond: --url: -X: --request: -d: --data: --data-raw: --data-binary: --data-urlencode: --data-ascii: " +
	"-F: --form: --form-string: --json: --max-redirs: -x: --proxy: --preproxy: --connect-to: --resolve: " +
	"--interface: --dns-servers: --doh-url: --socks4: --socks4a: --socks5: --socks5-hostname: -U: --proxy-user: " +
	"-L --location --location-trusted -O --remote-name --remote-name-all -s --silent -G --get"

// curlSafeForbidden: in "safe" mode curl may only GET the URLs it was given, from
// public addresses: no upload or method change, no redirects (they could lead to a
// private address), no proxy and no user-chosen resolution.
var curlSafeForbidden = []string{"-X", "--request", "-d", "--data", "--data-raw", "--data-binary",
	"--data-urlencode", "--data-ascii", "-F", "--form", "--form-string", "--json", "-T", "--upload-file",
	"-L", "--location", "--location-trusted", "-x", "--proxy", "--preproxy", "--connect-to", "--resolve",
	"--interface", "--dns-servers", "--doh-url", "--socks4", "--socks4a", "--socks5", "--socks5-hostname", "-G", "--get"}

// checkCurl applies the mode rules, confines "@file" values, requires an output
// file, and builds the forced prefix: -q (ignore a .curlrc in the zone; must come
// first), --proto (no file://, no exotic protocols), --globoff, and in safe mode
// --resolve pins for every URL host so DNS cannot change between check and connect.
func checkCurl(_ *cmdRule, p *parsed, r Request) error {
	mode := netMode(r.Network)
	protos := "=http,https,ftp,ftps"
	if mode == netSafe {
		protos = "=http,https"
		for _, o := range p.opts {
			for _, f := range curlSafeForbidden {
				if o.name == f {
					return forbid(o.raw[0], fmt.Sprintf("Option '%s' is forbidden in GET-only mode", o.name),
						"This option can upload data or reach other hosts. Ask admin to set network_mode to 'all'")
				}
			}
		}
	}
	if err := confineAtValues(p, r); err != nil {
		return err
	}
	urls := slicesFilter(p.operands)
	for _, o := range p.opts {
		if o.name == "--url" {
			urls = append(urls, o.val)
		}
	}
	if len(urls) == 0 {
		return &Violation{Kind: ArgumentRequired, Arg: "curl", Reason: "curl needs a URL", Hint: `Use: curl -o "file" "https://..."`}
	}
	if !r.StdoutToFile && !p.has("-o", "--output", "-O", "--remote-name", "--remote-name-all") {
		return &Violation{Kind: ArgumentRequired, Arg: "curl", Reason: "curl requires -o to save to file",
			Hint: `Use: curl -L -o "filename" "url" to save directly to file. This prevents context pollution.`}
	}
	prefix := []string{"-q", "--proto", protos, "--proto-redir", protos, "--globoff"}
	if !p.has("-s", "--silent") {
		prefix = append(prefix, "-sS")
	}
	for _, u := range urls {
		pins, err := checkURL(u, mode)
		if err != nil {
			return err
		}
		prefix = append(prefix, pins...)
	}
	p.prefix = append(prefix, p.prefix...)
	return nil
}

func slicesFilter(ops []string) []string {
	var out []string
	for _, o := range ops {
		if o != "" {
			out = append(out, o)
		}
	}
	return out
}

// confineAtValues confines the files curl reads from "@file" / "name=@file" /
// "name=<file" values (data, form, header, write-out) and cookie files.
func confineAtValues(p *parsed, r Request) error {
	for _, o := range p.opts {
		v := o.val
		switch o.name {
		case "-d", "--data", "--data-binary", "--data-urlencode", "--data-ascii", "--json", "-H", "--header", "-w", "--write-out":
			if i := strings.IndexByte(v, '@'); i >= 0 && (i == 0 || o.name == "--data-urlencode") {
				if err := confine(r, v[i+1:]); err != nil {
					return err
				}
			}
		case "-F", "--form":
			if _, fv, ok := strings.Cut(v, "="); ok && (strings.HasPrefix(fv, "@") || strings.HasPrefix(fv, "<")) {
				file, _, _ := strings.Cut(fv[1:], ";")
				if err := confine(r, file); err != nil {
					return err
				}
			}
		case "-b", "--cookie":
			if !strings.ContainsRune(v, '=') {
				if err := confine(r, v); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// checkURL validates one URL; in safe mode it resolves the host, refuses any
// non-public address and returns "--resolve host:port:addr" pins.
func checkURL(raw string, mode netLevel) ([]string, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return nil, forbid(raw, fmt.Sprintf("Invalid URL '%s'", raw), "Give a full URL such as https://example.com/file")
	}
	scheme := strings.ToLower(u.Scheme)
	okScheme := scheme == "http" || scheme == "https" || (mode == netAll && (scheme == "ftp" || scheme == "ftps"))
	if !okScheme {
		return nil, forbid(raw, fmt.Sprintf("URL scheme '%s' is forbidden", u.Scheme), "Use an http(s) URL")
	}
	if mode != netSafe {
		return nil, nil
	}
	host := u.Hostname()
	port := u.Port()
	if port == "" {
		port = map[string]string{"http": "80", "https": "443"}[scheme]
	}
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		ips, err := net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		if err != nil || len(ips) == 0 {
			return nil, forbid(raw, fmt.Sprintf("Cannot resolve host '%s'", host), "Check the URL")
		}
		addrs = ips
	}
	var pins []string
	for _, a := range addrs {
		a = a.Unmap()
		if !publicAddr(a) {
			return nil, forbid(raw, fmt.Sprintf("Host '%s' is a private, loopback or link-local address: forbidden in 'safe' mode", host),
				"Only public addresses are reachable in safe mode. Ask admin to set network_mode to 'all'")
		}
		hostPart := a.String()
		if a.Is6() {
			hostPart = "[" + hostPart + "]"
		}
		pins = append(pins, "--resolve", host+":"+port+":"+hostPart)
	}
	if _, err := netip.ParseAddr(host); err == nil {
		return nil, nil // a literal needs no pin
	}
	return pins[:2], nil // curl uses the first pin per host:port
}

// nonPublic are the ranges "safe" mode never reaches, beyond what netip classifies.
var nonPublic = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"), netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"), netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"), netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"), netip.MustParsePrefix("2002::/16"),
}

// publicAddr reports whether a is a globally routable unicast address.
func publicAddr(a netip.Addr) bool {
	if !a.IsValid() || a.IsLoopback() || a.IsPrivate() || a.IsLinkLocalUnicast() || a.IsLinkLocalMulticast() ||
		a.IsMulticast() || a.IsUnspecified() || a.IsInterfaceLocalMulticast() || !a.IsGlobalUnicast() {
		return false
	}
	for _, p := range nonPublic {
		if p.Contains(a) {
			return false
		}
	}
	return true
}

// wgetOpts: wget runs only in "all" mode (it cannot pin DNS): -e/--execute and
// --config run wgetrc commands, --use-askpass runs a program; file values confined.
const wgetOpts = "!-e !--execute !--config !--use-askpass " +
	"-O= --output-document= -o= --output-file= -a= --append-output= -i= --input-file= -P= --directory-prefix= " +
	"--load-cookies= --save-cookies= --certificate= --private-key= --ca-certificate= --ca-directory= --crl-file= " +
	"--post-file= --body-file= --warc-file= --rejected-log= --hsts-file= " +
	"-B: --base: -U: --user-agent: --header: -t: --tries: -T: --timeout: -w: --wait: -Q: --quota: -l: --level: " +
	"--post-data: --body-data: --method: --user: --password: -q --quiet"

// checkWget allows wget in "all" mode only, requires -O (or stdout_file) and forces
// --no-config (a .wgetrc in the zone) and -q.
func checkWget(_ *cmdRule, p *parsed, r Request) error {
	if netMode(r.Network) != netAll {
		return &Violation{Kind: CommandForbidden, Arg: "wget", Reason: "Command 'wget' is disabled in 'safe' mode",
			Hint: `Use curl -o "file" "https://..." (safe mode pins DNS and refuses private addresses)`}
	}
	if !r.StdoutToFile && !p.has("-O", "--output-document") {
		return &Violation{Kind: ArgumentRequired, Arg: "wget", Reason: "wget requires -O to save to file",
			Hint: `Use: wget -O "filename" "url" to save directly to file.`}
	}
	for _, u := range p.operands {
		if _, err := checkURL(u, netAll); err != nil {
			return err
		}
	}
	p.prefix = append([]string{"--no-config"}, p.prefix...)
	if !p.has("-q", "--quiet") {
		p.prefix = append(p.prefix, "-q")
	}
	return nil
}
