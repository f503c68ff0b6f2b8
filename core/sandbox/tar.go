package sandbox

import "strings"

// tarOpts: values that name files are confined; options that run programs
// (--to-command, --checkpoint-action, -I, -F, --rsh-command...), write outside
// (-P, --transform can rewrite member names to "../"), follow links out
// (-h, --keep-directory-symlink) or restore owners and set-id bits as root
// (-p, --same-owner) are refused. The mode flags are listed so that a read-only
// zone can refuse the writing ones.
const tarOpts = "-f= --file= -C= --directory= -T= --files-from= -X= --exclude-from= -g= --listed-incremental= " +
	"--index-file= --volno-file= --one-top-level?= " +
	"-K: --starting-file: -N: --newer: --after-date: --newer-mtime: --exclude: --exclude-tag: --exclude-tag-all: " +
	"--exclude-tag-under: -b: --blocking-factor: -H: --format: --owner: --group: --mode: --mtime: -L: --tape-length: " +
	"-V: --label: --strip-components: --suffix: --sort: --record-size: --level: --hole-detection: --occurrence: " +
	"-x --extract --get -c --create -r --append -u --update -A --catenate --concatenate --delete -t --list -d --diff --compare " +
	"!--to-command !--checkpoint-action !-I !--use-compress-program !-F !--info-script !--new-volume-script " +
	"!--rsh-command !--rmt-command !-P !--absolute-names !--transform !--xform !-h !--dereference !-p " +
	"!--preserve-permissions !--same-permissions !--same-owner !--preserve !--keep-directory-symlink"

// tarForced: never restore owners or set-id bits (the server may run as root), and
// never read "host:file" archive names as remote (rsh) archives.
var tarForced = []string{"--no-same-owner", "--no-same-permissions", "--force-local"}

// tarOldStyle rewrites the traditional first argument ("xzf a.tgz", letters without
// a dash whose values follow in order) into dashed options, so the same option table
// applies ("tar cIf sh x" becomes "-c -I sh -f x" and is refused).
func tarOldStyle(c *cmdRule, args []string, _ Request) ([]string, []string, error) {
	if len(args) == 0 || args[0] == "" || strings.HasPrefix(args[0], "-") {
		return tarForced, args, nil
	}
	out := []string{}
	k := 1
	for _, l := range args[0] {
		name := "-" + string(l)
		out = append(out, name)
		if o, ok := c.table[name]; ok && (o.kind == value || o.kind == pathValue) && k < len(args) {
			out = append(out, args[k])
			k++
		}
	}
	return tarForced, append(out, args[k:]...), nil
}
