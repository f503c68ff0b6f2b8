package sandbox

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/fileshed/fileshed/internal/testtool"
)

func TestPolicyTablesParse(t *testing.T) {
	t.Parallel()
	for name, c := range commands() {
		if _, _, err := parseOpts(c.opts); err != nil {
			t.Errorf("%s: %v", name, err)
		}
		for _, w := range strings.Fields(c.writes) {
			if _, ok := c.table[w]; !ok {
				t.Errorf("%s: writes option %s is not in its table", name, w)
			}
		}
	}
}

// TestPrepare is the policy table: every hostile case of the issue that the policy
// layer refuses, next to the ordinary commands it must keep accepting.
func TestPrepare(t *testing.T) {
	t.Parallel()
	d := zone(t)
	write(t, filepath.Join(d, "sub", "b.txt"), "b\n")
	other := t.TempDir() // another user's zone
	write(t, filepath.Join(other, "secret.txt"), "secret\n")
	if err := os.Symlink(other, filepath.Join(d, "other")); err != nil {
		t.Fatal(err)
	}
	const ok ViolationKind = 0
	rw, ro := ReadWrite, ReadOnly
	cases := []struct {
		name string
		kind ZoneKind
		net  string
		cmd  string
		args []string
		want ViolationKind
	}{
		// whitelists
		{"cat", ro, "", "cat", []string{"a.txt"}, ok},
		{"BashForbidden", rw, "", "bash", []string{"-c", "id"}, CommandForbidden},
		{"AbsoluteBinaryForbidden", rw, "", "/bin/sh", nil, CommandForbidden},
		{"RmInUploadsForbidden", ro, "", "rm", []string{"a.txt"}, CommandForbidden},
		{"DcRemoved", rw, "", "dc", []string{"-e", "!id"}, CommandForbidden},
		{"XargsForbidden", rw, "", "xargs", []string{"sh"}, CommandForbidden},
		// operands and option values that name files
		{"CatAbsolute", rw, "", "cat", []string{"/etc/passwd"}, PathEscape},
		{"CatDotDot", rw, "", "cat", []string{"../../etc/passwd"}, PathEscape},
		{"CatSymlinkToOtherUser", rw, "", "cat", []string{"other/secret.txt"}, PathEscape},
		// One string: what the zone check sees is what the program opens.
		{"CatInnerDotDot", rw, "", "cat", []string{"sub/../a.txt"}, InvalidPath},
		{"CatBackslashTraversal", rw, "", "cat", []string{`a\b\c\d\e/../../../../a.txt`}, InvalidPath},
		{"CatBackslashName", rw, "", "cat", []string{`a\b`}, InvalidPath},
		{"StatNFDName", rw, "", "stat", []string{"e\u0301/x"}, InvalidPath},
		{"LsLongNFD", rw, "", "ls", []string{"-l", "caf\u0065\u0301"}, InvalidPath},
		{"DuBackslash", rw, "", "du", []string{`a\b\c/../../a.txt`}, InvalidPath},
		{"ReadlinkBackslash", rw, "", "readlink", []string{`a\b\c/../../x`}, InvalidPath},
		{"TouchDateBackslash", rw, "", "touch", []string{"-d", "2020-01-01", `a\b\c/../../a.txt`}, InvalidPath},
		{"TarFileBackslash", rw, "", "tar", []string{"-xf", `a\b.tar`}, InvalidPath},
		{"CatNFCOK", rw, "", "cat", []string{"caf\u00e9.txt"}, ok},
		{"AwkInclude", rw, "", "awk", []string{"@include \"/etc/passwd\"\nBEGIN{print 1}"}, ArgumentForbidden},
		{"AwkIncludeSource", rw, "", "awk", []string{"-e", "@include \"/etc/passwd\"", "a.txt"}, ArgumentForbidden},
		{"AwkLoad", rw, "", "awk", []string{"@load \"filefuncs\"; BEGIN{}"}, ArgumentForbidden},
		{"AwkProgramOK", rw, "", "awk", []string{"{print $1}", "a.txt"}, ok},
		{"GrepBackslashRegexOK", rw, "", "grep", []string{`a\.b\\c`, "a.txt"}, ok},
		{"GrepBackslashRegexOptionOK", rw, "", "grep", []string{"-e", `\bhello\b`, "a.txt"}, ok},
		{"SedBackslashScriptOK", rw, "", "sed", []string{`s/\(h\)/\1/`, "a.txt"}, ok},
		{"UniqOutputEscape", rw, "", "uniq", []string{"a.txt", "../../x"}, PathEscape},
		{"UniqOutputInUploads", ro, "", "uniq", []string{"a.txt", "b.txt"}, ArgumentForbidden},
		{"GrepFileAttached", rw, "", "grep", []string{"-f/etc/passwd", "a.txt"}, PathEscape},
		{"GrepFileSeparate", rw, "", "grep", []string{"-f", "/etc/passwd", "a.txt"}, PathEscape},
		{"GrepFileLong", rw, "", "grep", []string{"--file=/etc/passwd", "a.txt"}, PathEscape},
		{"GrepFileAbbrev", rw, "", "grep", []string{"--fi=/etc/passwd", "a.txt"}, PathEscape},
		{"GrepPatternIsNotAPath", ro, "", "grep", []string{"-i", "/etc/passwd|storage", "a.txt"}, ok},
		{"GrepDashPattern", ro, "", "grep", []string{"-e", "-x", "a.txt"}, ok},
		{"GrepDereferenceRecursive", rw, "", "grep", []string{"-R", "x", "."}, ArgumentForbidden},
		{"DiffFromFile", rw, "", "diff", []string{"--from-file=/etc/passwd", "a.txt"}, PathEscape},
		{"WcFiles0From", rw, "", "wc", []string{"--files0-from=/etc/passwd"}, PathEscape},
		{"UnknownLongOptionPathValue", rw, "", "wc", []string{"--whatever=/etc/passwd", "a.txt"}, PathEscape},
		{"UnknownShortOptionPathValue", rw, "", "cat", []string{"-Z/etc/passwd", "a.txt"}, ArgumentForbidden},
		{"StringsResponseFile", rw, "", "strings", []string{"@/etc/passwd"}, PathEscape},
		// awk / sed
		{"AwkPipeAllowedByPolicy", rw, "", "awk", []string{`BEGIN{print "id" | "sh"}`}, ok},
		{"AwkW", rw, "", "awk", []string{"-W", "exec=x", "a.txt"}, ArgumentForbidden},
		{"AwkLoad", rw, "", "awk", []string{"-lfilefuncs", "{print}", "a.txt"}, ArgumentForbidden},
		{"AwkProgFileEscape", rw, "", "awk", []string{"-f", "../x.awk", "a.txt"}, PathEscape},
		{"AwkDumpVariables", rw, "", "awk", []string{"--dump-variables=/tmp/x", "{print}", "a.txt"}, ArgumentForbidden},
		{"SedInPlaceSuffixEscape", rw, "", "sed", []string{"-i../../x", "s/a/b/", "a.txt"}, PathEscape},
		{"SedInPlaceSuffixDir", rw, "", "sed", []string{"--in-place=bak/*", "s/a/b/", "a.txt"}, ArgumentForbidden},
		{"SedInPlaceOK", rw, "", "sed", []string{"-i.bak", "s/a/b/", "a.txt"}, ok},
		{"SedInPlaceInUploads", ro, "", "sed", []string{"-i", "s/a/b/", "a.txt"}, ArgumentForbidden},
		{"SedScriptLooksLikePath", ro, "", "sed", []string{"s/../../", "a.txt"}, ok},
		// tar
		{"TarToCommand", rw, "", "tar", []string{"-xf", "a.tar", "--to-command=sh -c id"}, ArgumentForbidden},
		{"TarCheckpointAction", rw, "", "tar", []string{"-cf", "x.tar", "--checkpoint=1", "--checkpoint-action=exec=id", "a.txt"}, ArgumentForbidden},
		{"TarCheckpointActionAbbrev", rw, "", "tar", []string{"-cf", "x.tar", "--checkpoint=1", "--checkpoint-ac=exec=id", "a.txt"}, ArgumentForbidden},
		{"TarCompressProgramSeparate", rw, "", "tar", []string{"-I", "sh", "-cf", "x.tar", "a.txt"}, ArgumentForbidden},
		{"TarCompressProgramAttached", rw, "", "tar", []string{"-Igzip", "-cf", "x.tar", "a.txt"}, ArgumentForbidden},
		{"TarCompressProgramInCluster", rw, "", "tar", []string{"-cIsh", "-f", "x.tar", "a.txt"}, ArgumentForbidden},
		{"TarCompressProgramAbbrev", rw, "", "tar", []string{"--use-comp=sh", "-cf", "x.tar", "a.txt"}, ArgumentForbidden},
		{"TarOldStyleCompressProgram", rw, "", "tar", []string{"cIf", "sh", "x.tar", "a.txt"}, ArgumentForbidden},
		{"TarAbsoluteNames", rw, "", "tar", []string{"-xPf", "a.tar"}, ArgumentForbidden},
		{"TarInfoScript", rw, "", "tar", []string{"-F", "x.sh", "-cf", "x.tar", "a.txt"}, ArgumentForbidden},
		{"TarRshCommand", rw, "", "tar", []string{"--rsh-command=/bin/sh", "-cf", "h:x.tar", "a.txt"}, ArgumentForbidden},
		{"TarDirectoryEscape", rw, "", "tar", []string{"-xf", "a.tar", "-C", "/tmp"}, PathEscape},
		{"TarDirectoryAttachedEscape", rw, "", "tar", []string{"-xf", "a.tar", "-C/tmp"}, PathEscape},
		{"TarFileEscape", rw, "", "tar", []string{"-tf", "/etc/x.tar"}, PathEscape},
		{"TarTransform", rw, "", "tar", []string{"-xf", "a.tar", "--transform=s,^,../,"}, ArgumentForbidden},
		{"TarOldStyleOK", rw, "", "tar", []string{"czf", "x.tgz", "a.txt"}, ok},
		{"TarListInUploadsOK", ro, "", "tar", []string{"-tf", "a.txt"}, ok},
		{"TarExtractInUploads", ro, "", "tar", []string{"-xf", "a.txt"}, ArgumentForbidden},
		// find
		{"FindExec", rw, "", "find", []string{".", "-exec", "sh", "-c", "id", ";"}, ArgumentForbidden},
		{"FindExecdir", rw, "", "find", []string{".", "-execdir", "id", ";"}, ArgumentForbidden},
		{"FindOk", rw, "", "find", []string{".", "-ok", "id", ";"}, ArgumentForbidden},
		{"FindOkdir", rw, "", "find", []string{".", "-okdir", "id", ";"}, ArgumentForbidden},
		{"FindFprintEscape", rw, "", "find", []string{".", "-fprint", "/tmp/x"}, PathEscape},
		{"FindFprintInUploads", ro, "", "find", []string{".", "-fprint", "x"}, ArgumentForbidden},
		{"FindDeleteInUploads", ro, "", "find", []string{".", "-name", "*.txt", "-delete"}, ArgumentForbidden},
		{"FindDeleteFollowingLinks", rw, "", "find", []string{"-L", ".", "-delete"}, ArgumentForbidden},
		{"FindStartEscape", rw, "", "find", []string{"/etc", "-name", "passwd"}, PathEscape},
		{"FindNewerEscape", rw, "", "find", []string{".", "-newer", "/etc/passwd"}, PathEscape},
		{"FindOK", ro, "", "find", []string{".", "-name", "*.txt", "-printf", "%p\\n"}, ok},
		// sort, split, zip
		{"SortOutputAbsolute", rw, "", "sort", []string{"-o", "/x", "a.txt"}, PathEscape},
		{"SortOutputAttached", rw, "", "sort", []string{"-o/x", "a.txt"}, PathEscape},
		{"SortOutputAbbrev", rw, "", "sort", []string{"--out=/x", "a.txt"}, PathEscape},
		{"SortCompressProgram", rw, "", "sort", []string{"--compress-program=sh", "a.txt"}, ArgumentForbidden},
		{"SortCompressProgramAbbrev", rw, "", "sort", []string{"--compress-prog", "sh", "a.txt"}, ArgumentForbidden},
		{"SortOutputInUploads", ro, "", "sort", []string{"-o", "b.txt", "a.txt"}, ArgumentForbidden},
		{"SplitFilter", rw, "", "split", []string{"-n", "1", "--filter=sh -c id", "a.txt"}, ArgumentForbidden},
		{"SplitFilterAbbrev", rw, "", "split", []string{"--fil=sh", "a.txt"}, ArgumentForbidden},
		{"SplitPrefixEscape", rw, "", "split", []string{"a.txt", "../x"}, PathEscape},
		{"ZipTT", rw, "", "zip", []string{"-TT", "sh -c id", "x.zip", "a.txt"}, ArgumentForbidden},
		{"ZipTInCluster", rw, "", "zip", []string{"-rT", "x.zip", "a.txt"}, ArgumentForbidden},
		{"ZipUnzipCommand", rw, "", "zip", []string{"--unzip-command=sh", "x.zip", "a.txt"}, ArgumentForbidden},
		{"ZipOK", rw, "", "zip", []string{"-r", "x.zip", "sub"}, ok},
		{"UnzipAllowDotDot", rw, "", "unzip", []string{"-:", "x.zip"}, ArgumentForbidden},
		{"UnzipExdirEscape", rw, "", "unzip", []string{"x.zip", "-d", "/tmp"}, PathEscape},
		{"UnzipExtractInUploads", ro, "", "unzip", []string{"x.zip"}, ArgumentForbidden},
		{"UnzipListInUploads", ro, "", "unzip", []string{"-l", "x.zip"}, ok},
		{"CpSuffixEscape", rw, "", "cp", []string{"-b", "--suffix=/../../x", "a.txt", "b.txt"}, ArgumentForbidden},
		{"CpTargetDirEscape", rw, "", "cp", []string{"-t", "/tmp", "a.txt"}, PathEscape},
		{"InstallSetuid", rw, "", "install", []string{"-m", "4755", "a.txt", "b"}, ArgumentForbidden},
		{"InstallStrip", rw, "", "install", []string{"-s", "a.txt", "b"}, ArgumentForbidden},
		{"SqliteURI", rw, "", "sqlite3", []string{"file:/etc/x.db?mode=ro", "select 1"}, ArgumentForbidden},
		{"SqliteInitEscape", rw, "", "sqlite3", []string{"-init", "/etc/x", "a.db"}, PathEscape},
		{"SqliteOK", ro, "", "sqlite3", []string{"-csv", "a.db", "select 1"}, ok},
		{"LessPlusCommand", ro, "", "less", []string{"+!sh", "a.txt"}, ArgumentForbidden},
		{"LessLogFile", ro, "", "less", []string{"-o/tmp/x", "a.txt"}, ArgumentForbidden},
		{"RealpathRelativeBase", ro, "", "realpath", []string{"--relative-base=/", "a.txt"}, ArgumentForbidden},
		{"DateSet", rw, "", "date", []string{"-s", "2020-01-01"}, ArgumentForbidden},
		{"NoOperandCat", ro, "", "cat", nil, ArgumentRequired},
		{"DashOperandNeedsDashDashTool", ro, "", "jq", []string{".", "--", "-x.json"}, ArgumentForbidden},
		// git
		{"GitFsmonitor", rw, "", "git", []string{"-c", "core.fsmonitor=touch pwned", "status"}, ArgumentForbidden},
		{"GitC", rw, "", "git", []string{"-C", "/", "log"}, ArgumentForbidden},
		{"GitDir", rw, "", "git", []string{"--git-dir=/etc", "log"}, ArgumentForbidden},
		{"GitExecPath", rw, "", "git", []string{"--exec-path=.", "log"}, ArgumentForbidden},
		{"GitGrepO", rw, "", "git", []string{"grep", "-O", "x"}, ArgumentForbidden},
		{"GitGrepOpenFilesInPager", rw, "", "git", []string{"grep", "--open-files-in-pager=sh", "x"}, ArgumentForbidden},
		{"GitLogOutputEscape", rw, "", "git", []string{"log", "--output=../x"}, PathEscape},
		{"GitDiffNoIndex", rw, "", "git", []string{"diff", "--no-index", "/etc/passwd", "a.txt"}, ArgumentForbidden},
		{"GitDiffExtDiff", rw, "", "git", []string{"diff", "--ext-diff"}, ArgumentForbidden},
		{"GitShowToplevel", rw, "", "git", []string{"rev-parse", "--show-toplevel"}, ArgumentForbidden},
		{"GitPush", rw, "all", "git", []string{"push"}, CommandForbidden},
		{"GitCommit", rw, "", "git", []string{"commit", "-m", "x"}, CommandForbidden},
		{"GitConfig", rw, "", "git", []string{"config", "core.fsmonitor", "x"}, CommandForbidden},
		{"GitNoSubcommand", rw, "", "git", nil, ArgumentForbidden},
		{"GitInUploads", ro, "", "git", []string{"log"}, CommandForbidden},
		{"GitLogFormatWithPipe", rw, "", "git", []string{"log", "--format=%an | %s", "-n", "3"}, ok},
		{"GitLogRange", rw, "", "git", []string{"log", "HEAD~1..HEAD", "--", "a.txt"}, ok},
		// network
		{"CurlDisabled", rw, "disabled", "curl", []string{"-o", "x", "https://example.com/"}, CommandForbidden},
		{"CurlFileScheme", rw, "all", "curl", []string{"-o", "x", "file:///etc/passwd"}, ArgumentForbidden},
		{"CurlFileSchemeSafe", rw, "safe", "curl", []string{"-o", "x", "file:///etc/passwd"}, ArgumentForbidden},
		{"CurlOutputEscape", rw, "all", "curl", []string{"-o", "/tmp/x", "https://example.com/"}, PathEscape},
		{"CurlOutputAttachedEscape", rw, "all", "curl", []string{"-o/tmp/x", "https://example.com/"}, PathEscape},
		{"CurlMetadataSafe", rw, "safe", "curl", []string{"-o", "x", "http://169.254.169.254/latest/meta-data/"}, ArgumentForbidden},
		{"CurlLoopbackSafe", rw, "safe", "curl", []string{"-o", "x", "http://127.0.0.1:8080/"}, ArgumentForbidden},
		{"CurlLocalhostNameSafe", rw, "safe", "curl", []string{"-o", "x", "http://localhost/"}, ArgumentForbidden},
		{"CurlIPv6LoopbackSafe", rw, "safe", "curl", []string{"-o", "x", "http://[::1]/"}, ArgumentForbidden},
		{"CurlMappedIPv6Safe", rw, "safe", "curl", []string{"-o", "x", "http://[::ffff:10.0.0.1]/"}, ArgumentForbidden},
		{"CurlPrivateSafe", rw, "safe", "curl", []string{"-o", "x", "http://10.1.2.3/"}, ArgumentForbidden},
		{"CurlDecimalIPSafe", rw, "safe", "curl", []string{"-o", "x", "http://2852039166/"}, ArgumentForbidden},
		{"CurlPostSafe", rw, "safe", "curl", []string{"-X", "POST", "-o", "x", "http://1.1.1.1/"}, ArgumentForbidden},
		{"CurlClusterPostSafe", rw, "safe", "curl", []string{"-sXPOST", "-o", "x", "http://1.1.1.1/"}, ArgumentForbidden},
		{"CurlDataFileSafe", rw, "safe", "curl", []string{"-sd@a.txt", "-o", "x", "http://1.1.1.1/"}, ArgumentForbidden},
		{"CurlRedirectSafe", rw, "safe", "curl", []string{"-L", "-o", "x", "http://1.1.1.1/"}, ArgumentForbidden},
		{"CurlDataFileEscapeAll", rw, "all", "curl", []string{"-d", "@/etc/passwd", "-o", "x", "http://1.1.1.1/"}, PathEscape},
		{"CurlFormFileEscapeAll", rw, "all", "curl", []string{"-F", "f=@/etc/passwd;type=text/plain", "-o", "x", "http://1.1.1.1/"}, PathEscape},
		{"CurlConfig", rw, "all", "curl", []string{"-K", "cfg", "http://1.1.1.1/"}, ArgumentForbidden},
		{"CurlUnixSocket", rw, "all", "curl", []string{"--unix-socket", "/var/run/docker.sock", "-o", "x", "http://x/"}, ArgumentForbidden},
		{"CurlNext", rw, "all", "curl", []string{"-o", "x", "http://1.1.1.1/", "--next", "file:///etc/passwd"}, ArgumentForbidden},
		{"CurlNeedsOutput", rw, "safe", "curl", []string{"http://1.1.1.1/"}, ArgumentRequired},
		{"CurlSafeOK", rw, "safe", "curl", []string{"-o", "x", "http://1.1.1.1/"}, ok},
		{"WgetSafe", rw, "safe", "wget", []string{"-O", "x", "http://1.1.1.1/"}, CommandForbidden},
		{"WgetExecute", rw, "all", "wget", []string{"-e", "use_askpass=sh", "-O", "x", "http://1.1.1.1/"}, ArgumentForbidden},
		{"WgetOutputEscape", rw, "all", "wget", []string{"-O", "/tmp/x", "http://1.1.1.1/"}, PathEscape},
		{"WgetOK", rw, "all", "wget", []string{"-O", "x", "http://1.1.1.1/"}, ok},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Prepare(Request{Cmd: tc.cmd, Args: tc.args, Kind: tc.kind, Network: tc.net, Confine: confineIn(d)})
			var v *Violation
			if tc.want == ok {
				if err != nil {
					if errors.As(err, &v) && v.Kind == CommandNotFound {
						testtool.Require(t, tc.cmd) // skips naming the package
						t.Skip(err)
					}
					t.Fatalf("refused: %v", err)
				}
				if !strings.HasPrefix(c.Argv[0], "/") {
					t.Fatalf("argv[0] not absolute: %q", c.Argv)
				}
				return
			}
			if !errors.As(err, &v) {
				t.Fatalf("accepted %q (want violation %d)", c.Argv, tc.want)
			}
			if v.Kind != tc.want {
				t.Fatalf("violation kind %d, want %d: %v", v.Kind, tc.want, v)
			}
			if strings.Contains(v.Reason, d) || strings.Contains(v.Hint, d) {
				t.Fatalf("host path in message: %v", v)
			}
		})
	}
}

func TestPrepareForcesSafeFlags(t *testing.T) {
	t.Parallel()
	d := zone(t)
	cases := []struct {
		name string
		kind ZoneKind
		net  string
		cmd  string
		args []string
		want []string // must appear in argv, in this order
	}{
		{"SedSandbox", ReadWrite, "", "sed", []string{"s/a/b/", "a.txt"}, []string{"--sandbox", "--", "s/a/b/", "a.txt"}},
		{"AwkRunsGawkSandbox", ReadWrite, "", "awk", []string{"{print}", "a.txt"}, []string{"--sandbox", "--", "{print}"}},
		{"TarNoSameOwner", ReadWrite, "", "tar", []string{"xf", "a.tar"}, []string{"--no-same-owner", "--no-same-permissions", "--force-local", "-x", "-f", "a.tar"}},
		{"SqliteSafeReadonlyInUploads", ReadOnly, "", "sqlite3", []string{"a.db", "select 1"}, []string{"-safe", "-readonly", "a.db"}},
		{"CurlIgnoresCurlrcFirst", ReadWrite, "all", "curl", []string{"-o", "x", "http://1.1.1.1/"}, []string{"-q", "--proto", "=http,https,ftp,ftps", "--globoff"}},
		{"GitHardened", ReadWrite, "", "git", []string{"log", "-n", "1"}, []string{"core.fsmonitor=false", "core.hooksPath=/dev/null", "protocol.allow=never", "log", "--no-ext-diff"}},
		{"DashDashBeforeOperands", ReadWrite, "", "ls", []string{"sub", "-l"}, []string{"-l", "--", "sub"}},
		{"RealpathRelative", ReadOnly, "", "realpath", []string{"a.txt"}, []string{"--relative-to=."}},
		{"ZipStoresLinks", ReadWrite, "", "zip", []string{"x.zip", "a.txt"}, []string{"-y"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := Prepare(Request{Cmd: tc.cmd, Args: tc.args, Kind: tc.kind, Network: tc.net, Confine: confineIn(d)})
			if err != nil {
				t.Fatal(err)
			}
			i := 0
			for _, a := range c.Argv[1:] {
				if i < len(tc.want) && a == tc.want[i] {
					i++
				}
			}
			if i != len(tc.want) {
				t.Fatalf("argv %q lacks %q in order", c.Argv, tc.want)
			}
		})
	}
}

func TestAllowedAndAvailable(t *testing.T) {
	t.Parallel()
	ro, rw := Allowed(ReadOnly), Allowed(ReadWrite)
	for _, c := range []string{"cat", "awk", "sed", "tar", "jq", "sqlite3", "curl"} {
		if !slices.Contains(ro, c) {
			t.Errorf("%s missing from read-only set", c)
		}
	}
	for _, c := range []string{"rm", "git", "cp", "zip"} {
		if slices.Contains(ro, c) || !slices.Contains(rw, c) {
			t.Errorf("%s must be read-write only", c)
		}
	}
	av, miss := Available()
	if len(av)+len(miss) != len(rw) || !slices.Contains(av, "cat") {
		t.Fatalf("available %d + missing %d != %d", len(av), len(miss), len(rw))
	}
}
