package sandbox

import "sync"

// This file is the command policy, as data: which commands run in which zones, which
// of their options are refused, which option values and operands name files (and are
// confined to the zone), which safe flags are forced, and which helper programs the
// kernel layer lets them execute. The engine that applies it is prepare.go; the
// special shapes (find, tar, zip, git, curl, wget) are in find.go, tar.go, git.go and
// network.go. Every rule here is a first line only: the Landlock launcher is the
// backstop when a rule is wrong or missing.
//
// Removed from the original's whitelists because we cannot make them safe by argv
// policy (their languages or configs execute programs or open arbitrary files):
//   dc (its "!" command runs a shell), 7z/7za (untested switch syntax -o{dir}, -spf,
//   @lists; not installed here), ffmpeg/ffprobe (lavfi movie= and concat lists open any
//   file; protocols), magick/convert/identify (delegates run shell commands; msl:,
//   text:@file), exiftool and rename (Perl expressions), pandoc (--filter, Lua),
//   colordiff (Perl; its rc file picks the diff program), uuencode/uudecode (uudecode
//   writes to the name inside the data), df (reads /proc mounts: host layout), locate
//   (system-wide file database), pwd (prints the host path; the zone root is ".").
// wget is only allowed with network_mode "all": it cannot pin DNS, so "safe" mode
// uses curl (see network.go).

// commands maps a command name to its rule. rw marks commands that only exist in
// read-write zones (the original's WHITELIST_READWRITE minus WHITELIST_READONLY).
// It is built, option tables parsed, on first use rather than at package init: a
// binary that only links this package (or re-executes itself as the launcher) does
// not pay for it.
var commands = sync.OnceValue(func() map[string]*cmdRule { return parsePolicy(policy()) })

// policy is the table as written.
func policy() map[string]*cmdRule {
	return map[string]*cmdRule{
		// ---- viewing --------------------------------------------------------------
		"cat":  {dashDash: true, needsOp: true, opts: "-A -b -e -E -n -s -t -T -u -v"},
		"head": {dashDash: true, needsOp: true, opts: "-n: --lines: -c: --bytes: -q -v -z"},
		"tail": {dashDash: true, needsOp: true, opts: "-n: --lines: -c: --bytes: -s: --sleep-interval: --pid: --max-unchanged-stats: -f -F"},
		"tac":  {dashDash: true, needsOp: true, opts: "-s: --separator: -b -r"},
		"nl":   {dashDash: true, needsOp: true, opts: "-b: -d: -f: -h: -i: -l: -n: -s: -v: -w:"},
		// LESSSECURE=1 (env.go) disables less's shell, pipe, editor and log commands.
		"less": {dashDash: true, needsOp: true, check: noPlusCommands,
			opts: "!-o !-O !--log-file !--LOG-FILE !-k !--lesskey-file !--lesskey-src -b: -h: -j: -p: --pattern: -P: -t: --tag: -T= --tag-file= -x: -y: -z:"},
		"more": {dashDash: true, needsOp: true, check: noPlusCommands, opts: "-n: --lines:"},
		"wc":   {dashDash: true, needsOp: true, opts: "--files0-from="},
		"stat": {dashDash: true, needsOp: true, opts: "-c: --format: --printf: -L -f -t"},
		"file": {dashDash: true, needsOp: true,
			opts: "-m= --magic-file= -f= --files-from= -F: --separator: -P: --parameter: -e: --exclude: --exclude-quiet: !-C !--compile"},
		// -L/--dereference would follow links that tar or unzip extracted.
		"du": {dashDash: true, opts: "--files0-from= -X= --exclude-from= --exclude: -d: --max-depth: -B: --block-size: -t: --threshold: --time-style: !-L !--dereference"},
		"ls": {dashDash: true,
			opts: "-I: --ignore: --hide: -w: --width: -T: --tabsize: --format: --sort: --time: --time-style: --block-size: --quoting-style: --indicator-style:"},

		// ---- searching ------------------------------------------------------------
		"find": {operands: words, keepOrder: true, check: checkFind},
		// -R follows every symlink below the operands.
		"grep":  {dashDash: true, operands: script, opts: grepOpts},
		"egrep": {dashDash: true, operands: script, opts: grepOpts, helpers: []string{"grep"}},
		"fgrep": {dashDash: true, operands: script, opts: grepOpts, helpers: []string{"grep"}},
		"rg": {dashDash: true, operands: script,
			opts: "!--pre !--pre-glob !-z !--search-zip !-L !--follow *-e: *--regexp: *-f= *--file= --ignore-file= -g: --glob: --iglob: -t: --type: -T: --type-not: --type-add: -m: --max-count: -A: -B: -C: -j: --threads: -M: --max-columns: --max-filesize: --max-depth: -d: -r: --replace: --path-separator: --engine: --sort: --sortr: --color: --colors: -E: --encoding:"},
		// gawk --sandbox disables system(), pipes, redirections and extensions (not
		// @include: checkAwk); -W would
		// smuggle long options (exec=, dump-variables=) past this table.
		"awk": {bin: "gawk", force: []string{"--sandbox"}, dashDash: true, operands: script, check: checkAwk,
			missing: "awk needs gawk (its --sandbox mode): apt-get install gawk",
			opts:    "*-f= *--file= *-e: *--source: -v: --assign: -F: --field-separator: !-W !-E !--exec !-l !--load !-i !--include !-d !--dump-variables !-D !--debug !-o !--pretty-print !-p !--profile !-L !--lint"},
		// sed --sandbox rejects the e, r and w commands (and s///e, s///w).
		"sed": {force: []string{"--sandbox"}, dashDash: true, operands: script, check: checkSed, writes: "-i --in-place",
			opts: "*-e: *--expression: *-f= *--file= -l: --line-length: -i?= --in-place?= -E -r -n -s -u -z --posix --debug !--follow-symlinks"},

		// ---- text processing ------------------------------------------------------
		"sort": {dashDash: true, writes: "-o --output",
			opts: "-o= --output= -T= --temporary-directory= --files0-from= --random-source= -k: --key: -t: --field-separator: -S: --buffer-size: --parallel: --batch-size: !--compress-program"},
		"uniq":     {dashDash: true, check: checkUniq, opts: "-f: --skip-fields: -s: --skip-chars: -w: --check-chars:"},
		"cut":      {dashDash: true, opts: "-b: --bytes: -c: --characters: -d: --delimiter: -f: --fields: --output-delimiter:"},
		"paste":    {dashDash: true, opts: "-d: --delimiters:"},
		"tr":       {dashDash: true, operands: words},
		"fold":     {dashDash: true, opts: "-w: --width:"},
		"fmt":      {dashDash: true, opts: "-w: --width: -g: --goal: -p: --prefix:"},
		"column":   {dashDash: true, opts: "-s: --separator: -o: --output-separator: -c: --output-width: -N: --table-columns: -l: -R: -H: -E: -W: -r: -d"},
		"rev":      {dashDash: true},
		"shuf":     {dashDash: true, writes: "-o --output", opts: "-o= --output= --random-source= -n: --head-count: -i: --input-range:"},
		"expand":   {dashDash: true, opts: "-t: --tabs:"},
		"unexpand": {dashDash: true, opts: "-t: --tabs:"},
		"pr":       {dashDash: true, opts: "-h: --header: -l: --length: -w: --width: -W: --page-width: -o: --indent: -N: --first-line-number: -D: --date-format:"},
		"join":     {dashDash: true, opts: "-t: -1: -2: -j: -e: -o: -a: -v:"},
		"diff": {dashDash: true,
			opts: "--from-file= --to-file= -X= --exclude-from= -x: --exclude: -I: --ignore-matching-lines: -L: --label: -C: -U: -F: --show-function-line: -D: --ifdef: --horizon-lines: --tabsize: -W: --width: -S: --starting-file: --line-format: --old-line-format: --new-line-format: --unchanged-line-format: --old-group-format: --new-group-format: --changed-group-format: --unchanged-group-format: --palette:"},
		"diff3": {dashDash: true, opts: "!--diff-program -L: --label:"},
		"cmp":   {dashDash: true, opts: "-i: --ignore-initial: -n: --bytes:"},
		"comm":  {dashDash: true, opts: "--output-delimiter:"},

		// ---- documents (poppler: single-dash long options; "-" as output is stdout) --
		"pdftotext": {longSingle: true, dashDash: true, needsOp: true, check: checkSecondOperandWrites,
			opts: "--f: --l: --r: --x: --y: --W: --H: --fixed: --enc: --eol: --opw: --upw: --layout --raw --nopgbrk --q --nodiag --cropbox --htmlmeta --bbox --bbox-layout --tsv"},
		"pdfinfo": {longSingle: true, dashDash: true, needsOp: true,
			opts: "--f: --l: --enc: --opw: --upw: --meta --js --struct --struct-text --box --rawdates --dests --url --isodates --custom"},

		// ---- archives -------------------------------------------------------------
		"tar":     {preparse: tarOldStyle, writes: "-x --extract --get -c --create -r --append -u --update -A --catenate --concatenate --delete", keepOrder: true, opts: tarOpts, helpers: compressors},
		"unzip":   {check: checkUnzip, opts: "-d= -P: !-: !-^"},
		"zipinfo": {},
		"zcat":    {dashDash: true, needsOp: true, helpers: []string{"gzip"}},
		"bzcat":   {dashDash: true, needsOp: true},
		"xzcat":   {dashDash: true, needsOp: true},

		// ---- checksums and encodings ---------------------------------------------
		"md5sum":    {dashDash: true},
		"sha1sum":   {dashDash: true},
		"sha256sum": {dashDash: true},
		"sha512sum": {dashDash: true},
		"b2sum":     {dashDash: true, opts: "-l: --length:"},
		"cksum":     {dashDash: true, opts: "-a: --algorithm: -l: --length:"},
		"base32":    {dashDash: true, opts: "-w: --wrap:"},
		"base64":    {dashDash: true, opts: "-w: --wrap:"},
		"basenc":    {dashDash: true, opts: "-w: --wrap:"},
		// binutils strings reads more options from "@FILE" operands.
		"strings": {dashDash: true, check: checkResponseFiles, opts: "-n: --bytes: -t: --radix: -e: --encoding: -s: --output-separator: -T: --target:"},
		"od":      {dashDash: true, opts: "-A: --address-radix: -j: --skip-bytes: -N: --read-bytes: -S: -t: --format:"},
		"hexdump": {opts: "-e: -f= -n: -s:"},
		"xxd":     {check: checkSecondOperandWrites, opts: "-c: -g: -l: -o: -s: -n:"},
		"jq": {operands: script,
			opts: "*-f= *--from-file= -L= --arg:: --argjson:: --slurpfile:= --rawfile:= --indent: --seq --tab --args --jsonargs"},
		"yq": {operands: script, helpers: []string{"jq"}, writes: "-i --in-place",
			opts: "*-f= *--from-file= -L= --arg:: --argjson:: --slurpfile:= --rawfile:= --indent: --width: -w: --xml-root: --xml-item-depth: --xml-force-list: --xml-dtd -i --in-place"},
		"iconv": {dashDash: true, writes: "-o --output", opts: "-f: --from-code: -t: --to-code: -o= --output="},
		"xmllint": {force: []string{"--nonet"}, writes: "--output -o",
			opts: "--output= -o= --encode: --maxmem: --pattern: --xpath: !--noent !--loaddtd !--dtdattr !--valid !--postvalid !--xinclude !--catalogs !--path !--load-trace !--dtdvalid !--dtdvalidfpi !--relaxng !--schema !--schematron !--shell"},
		// sqlite3 -safe refuses .shell, .system, .output/.once to files, ATTACH,
		// load_extension and every other way out of the named database.
		"sqlite3": {longSingle: true, operands: firstPath, check: checkSqlite, force: []string{"-safe"},
			opts: "--cmd: --init= --separator: --newline: --nullvalue: --mmap: --vfs: --maxsize: !--unsafe-testing"},

		// ---- numbers and strings (no file access) --------------------------------
		"bc":       {dashDash: true},
		"expr":     {operands: words, keepOrder: true},
		"factor":   {operands: words, keepOrder: true},
		"numfmt":   {operands: words, dashDash: true, opts: "--format: --from: --to: --field: -d: --delimiter: --padding: --round: --suffix: --from-unit: --to-unit: --invalid: --grouping"},
		"basename": {operands: words, dashDash: true, opts: "-s: --suffix:"},
		"dirname":  {operands: words, dashDash: true},
		"echo":     {operands: words, keepOrder: true},
		"printf":   {operands: words, keepOrder: true},
		// realpath prints absolute host paths unless relative output is forced.
		"realpath": {dashDash: true, force: []string{"--relative-to=."}, opts: "--relative-to= !--relative-base"},

		// ---- read-write zones only ------------------------------------------------
		"which":   {rw: true, operands: words},
		"whereis": {rw: true, operands: words, opts: "!-B !-M !-S"},
		"split": {rw: true, dashDash: true, check: checkSuffixes("--additional-suffix"),
			opts: "!--filter -a: --suffix-length: --additional-suffix: -b: --bytes: -C: --line-bytes: -l: --lines: -n: --number: -t: --separator:"},
		"csplit": {rw: true, dashDash: true, operands: firstPath, check: checkSuffixes("-b", "--suffix-format"),
			opts: "-f= --prefix= -b: --suffix-format: -n: --digits:"},
		"sdiff": {rw: true, dashDash: true, opts: "!--diff-program -o= --output= -w: --width: -I: --ignore-matching-lines: --tabsize:"},
		// patch -g/--get runs RCS/SCCS programs, -e/--ed runs ed.
		"patch": {rw: true, dashDash: true, check: checkSuffixes("-z", "--suffix"),
			opts: "-i= --input= -o= --output= -d= --directory= -r= --reject-file= -B= --prefix= -Y= --basename-prefix= -z: --suffix: -p: --strip: -D: --ifdef: -F: --fuzz: -V: --version-control: --quoting-style: --read-only: !-g !--get !-e !--ed"},
		// zip -T/-TT run an unzip command line through a shell; zip follows symlinks unless -y.
		"zip": {rw: true, force: []string{"-y"}, check: checkZip,
			opts: "!--unzip-command !--test -O= --output-file= -b= --temp-path= --logfile-path= -n: --suffixes: -t: --from-date: -Z: --compression-method: -P: --password: -s: --split-size:"},
		"gzip":    {rw: true, dashDash: true, check: checkSuffixes("-S", "--suffix"), opts: "-S: --suffix:"},
		"gunzip":  {rw: true, dashDash: true, check: checkSuffixes("-S", "--suffix"), opts: "-S: --suffix:", helpers: []string{"gzip"}},
		"bzip2":   {rw: true, dashDash: true},
		"bunzip2": {rw: true, dashDash: true},
		"xz":      {rw: true, dashDash: true, check: checkSuffixes("-S", "--suffix"), opts: xzOpts},
		"unxz":    {rw: true, dashDash: true, check: checkSuffixes("-S", "--suffix"), opts: xzOpts},
		"lz4":     {rw: true, dashDash: true, opts: "-D= -B:"},
		"zstd": {rw: true, dashDash: true,
			opts: "-o= -D= --patch-from= --output-dir-flat= --output-dir-mirror= --filelist= -T: --threads: -B: --memory: -M: --format:"},
		"sum":      {rw: true, dashDash: true},
		"touch":    {rw: true, dashDash: true, opts: "-r= --reference= -d: --date: -t:"},
		"mkdir":    {rw: true, dashDash: true, opts: "-m: --mode:"},
		"rm":       {rw: true, dashDash: true, needsOp: true},
		"rmdir":    {rw: true, dashDash: true, needsOp: true},
		"mv":       {rw: true, dashDash: true, check: checkSuffixes("-S", "--suffix"), opts: "-t= --target-directory= -S: --suffix:"},
		"cp":       {rw: true, dashDash: true, check: checkSuffixes("-S", "--suffix"), opts: "-t= --target-directory= -S: --suffix: !-L !--dereference"},
		"install":  {rw: true, dashDash: true, check: checkInstall, opts: "-m: --mode: -t= --target-directory= -S: --suffix: !-o !--owner !-g !--group !-s !--strip !--strip-program"},
		"mktemp":   {rw: true, dashDash: true, opts: "-p= --tmpdir?= --suffix:"},
		"truncate": {rw: true, dashDash: true, needsOp: true, opts: "-r= --reference= -s: --size:"},
		"shred":    {rw: true, dashDash: true, needsOp: true, opts: "--random-source= -n: --iterations: -s: --size:"},
		"seq":      {rw: true, operands: words, keepOrder: true, opts: "-f: --format: -s: --separator:"},
		// date -s would set the clock (capabilities are dropped anyway).
		"date":     {rw: true, operands: words, opts: "-d: --date: -f= --file= -r= --reference= !-s !--set"},
		"cal":      {rw: true, operands: words},
		"readlink": {rw: true, dashDash: true, opts: "!-f !--canonicalize !-e !--canonicalize-existing !-m !--canonicalize-missing"},
		"pathchk":  {rw: true, operands: words, dashDash: true},
		"uname":    {rw: true, operands: words},
		"nproc":    {rw: true, operands: words},
		"sleep":    {rw: true, operands: words, dashDash: true},
		"yes":      {rw: true, operands: words, keepOrder: true},
		"tee":      {rw: true, dashDash: true},
		"gettext":  {rw: true, operands: words, opts: "-d: --domain:"},
		"tsort":    {rw: true, dashDash: true},
		"true":     {rw: true, operands: words, keepOrder: true},
		"false":    {rw: true, operands: words, keepOrder: true},
		"dos2unix": {rw: true, opts: "-c: --convmode:"},
		"unix2dos": {rw: true, opts: "-c: --convmode:"},
		"recode":   {rw: true, operands: script},
		"git":      {rw: true, preparse: gitPreparse, check: checkGit, keepOrder: true, opts: gitOpts},

		// ---- network (both zones, governed by network_mode) -----------------------
		"curl": {net: true, operands: words, check: checkCurl, keepOrder: true, opts: curlOpts},
		"wget": {net: true, operands: words, check: checkWget, keepOrder: true, opts: wgetOpts},
	}
}

const grepOpts = "*-e: *--regexp: *-f= *--file= --exclude-from= -m: --max-count: -A: -B: -C: --context: --after-context: --before-context: --label: --include: --exclude: --exclude-dir: -d: --directories: -D: --devices: --binary-files: --group-separator: !-R !--dereference-recursive"

const xzOpts = "--files?= --files0?= -F: --format: -C: --check: -T: --threads: -M: --memlimit: --memlimit-compress: --memlimit-decompress: --filters: --block-size: -S: --suffix:"

// compressors are the programs tar runs for -z, -j, -J, --zstd, --lzip, -a... (through
// "/bin/sh -c" with a command line tar builds itself; -I/--use-compress-program is refused).
var compressors = []string{"sh", "gzip", "bzip2", "xz", "lzip", "lzma", "lzop", "zstd", "lz4"}
