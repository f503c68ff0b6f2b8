package commands

import "github.com/fileshed/fileshed/core/sandbox"

// readers are the commands that only read files in every form the read-only policy
// accepts (core/sandbox refuses their writing options, e.g. sed -i, sort -o, tar -x,
// unzip without -l, in a read-only zone). In a writable zone they run with the zone
// mounted read-only under Landlock, which makes "changed nothing" a kernel guarantee:
// no repository lock, no commit and no usage walk. Not listed on purpose: sort (spills
// temporary files into the zone), sqlite3 (writes its database), curl and wget
// (download into the zone), and every command of the read-write set.
var readers = map[string]bool{
	"cat": true, "head": true, "tail": true, "tac": true, "nl": true, "less": true, "more": true, "wc": true,
	"stat": true, "file": true, "du": true, "ls": true, "find": true, "grep": true, "egrep": true, "fgrep": true,
	"rg": true, "awk": true, "sed": true, "uniq": true, "cut": true, "paste": true, "tr": true, "fold": true,
	"fmt": true, "column": true, "rev": true, "shuf": true, "expand": true, "unexpand": true, "pr": true,
	"join": true, "diff": true, "diff3": true, "cmp": true, "comm": true, "tar": true, "unzip": true,
	"zipinfo": true, "zcat": true, "bzcat": true, "xzcat": true, "md5sum": true, "sha1sum": true,
	"sha256sum": true, "sha512sum": true, "b2sum": true, "cksum": true, "base32": true, "base64": true,
	"basenc": true, "strings": true, "od": true, "hexdump": true, "xxd": true, "jq": true, "yq": true,
	"iconv": true, "xmllint": true, "bc": true, "expr": true, "factor": true, "numfmt": true,
	"basename": true, "dirname": true, "echo": true, "printf": true, "realpath": true, "pdfinfo": true,
	"pdftotext": true, // with an output file it fails the read-only policy: a writer then
	// git under exec is read-only by policy (log, show, diff, status...), with
	// GIT_OPTIONAL_LOCKS=0 so that status does not refresh the index.
	"git": true,
}

// readsOnly reports whether req (already accepted for a writable zone) is a reader
// whose arguments also pass the read-only policy.
func readsOnly(req sandbox.Request) bool {
	if !readers[req.Cmd] {
		return false
	}
	if req.Cmd == "git" {
		return true
	}
	req.Kind = sandbox.ReadOnly
	_, err := sandbox.Prepare(req)
	return err == nil
}
