package sandbox

// BuildEnv returns the whole environment of a sandboxed command: nothing of the
// server's own environment (no secrets, no proxies, no GIT_*/LD_* variables).
// home is the zone root (HOME, TMPDIR: tools that read rc files from HOME only see
// the zone's own, and curl/wget are forced to ignore theirs). LESSSECURE disables
// less's shell, pipe, editor and log-file commands.
func BuildEnv(home string) []string {
	return []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"LANG=C.UTF-8",
		"HOME=" + home,
		"TMPDIR=" + home,
		"LESSSECURE=1",
		"PAGER=cat",
		"TERM=dumb",
	}
}
