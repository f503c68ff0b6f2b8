package sandbox

// HomeDir is HOME and every XDG base directory of a command: a path that does not
// exist, outside every zone, that the command can neither read nor create (Landlock
// grants nothing on it; without Landlock "/" is not writable by the server's user,
// and no operand may be absolute). So no tool reads a dotfile from the zone or
// elsewhere: jq's ~/.jq, ~/.sqliterc, ~/.inputrc, ~/.curlrc, ~/.wgetrc, ~/.magic,
// git's global and XDG configuration, less's history and lesskey, Python's user
// site-packages (~/.local/lib/python3*/site-packages/*.pth, which yq would load).
// Its name reveals no host path.
const HomeDir = "/nonexistent"

// BuildEnv returns the whole environment of a sandboxed command: nothing of the
// server's own environment (no secrets, no proxies, no GIT_*/LD_* variables).
// tmp is TMPDIR (the zone root ".": sort and split keep their temporary files in
// the zone, within its quota); HOME and the XDG directories are HomeDir.
// LESSSECURE disables less's shell, pipe, editor and log-file commands; the
// PYTHON* variables keep Python tools (yq) from loading user site-packages, code
// next to the working directory or writing bytecode.
func BuildEnv(tmp string) []string {
	return []string{
		"PATH=/usr/local/bin:/usr/bin:/bin",
		"LANG=C.UTF-8",
		"HOME=" + HomeDir,
		"XDG_CONFIG_HOME=" + HomeDir,
		"XDG_DATA_HOME=" + HomeDir,
		"XDG_CACHE_HOME=" + HomeDir,
		"XDG_STATE_HOME=" + HomeDir,
		"XDG_RUNTIME_DIR=" + HomeDir,
		"XDG_CONFIG_DIRS=" + HomeDir,
		"XDG_DATA_DIRS=/usr/share",
		"TMPDIR=" + tmp,
		"LESSSECURE=1",
		"LESSHISTFILE=-",
		"PAGER=cat",
		"TERM=dumb",
		"PYTHONNOUSERSITE=1",
		"PYTHONSAFEPATH=1",
		"PYTHONDONTWRITEBYTECODE=1",
	}
}
