package commands

import "github.com/fileshed/fileshed/core"

// A stdout_file/stderr_file is written by the kernel (core.StartCommandOutput, declared in
// the command transaction's operands); this family maps its outcome to the answer.

// finishSink completes a stdout_file/stderr_file (param) and returns its name and size for
// the answer ("" and nil when it was not written).
func (s *Tools) finishSink(k *core.CommandOutput, z *core.Zone, name, param string, limit int64) (string, *int64, error) {
	n, over, werr := k.Finish()
	switch {
	case over && limit >= int64(s.Config().MaxFileSizeMB)<<20:
		return "", nil, core.Errf(core.FileTooLarge, "%s would be larger than max_file_size_mb (%d MB): not written", param, s.Config().MaxFileSizeMB).
			With("path", name).With("limit", limit)
	case over:
		return "", nil, core.Errf(core.QuotaExceeded, "%s would exceed the remaining quota (%s): not written", param, core.HumanMB(limit)).
			With("path", name).With("remaining", limit).
			WithHint("Free space with shed_delete (see shed_info(action='stats')), or limit the output (e.g. head -c)")
	case werr != nil:
		return "", nil, core.PathError(werr, z, name)
	}
	return name, &n, nil
}
