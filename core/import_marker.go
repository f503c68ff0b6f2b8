package core

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
)

// ImportSwapMarker is the file `fileshed admin import-original` keeps in the storage
// directory (relative to it) while it swaps the imported zones and state database in: from
// the first rename to the last, the storage is neither the old one nor the new one. The
// staging directory that holds it also holds what the swap moved aside, so both ways out
// stay possible: finishing the swap, or putting the old storage back.
const ImportSwapMarker = importStagingName + "/swapping"

// ErrImportInterrupted reports a storage directory an interrupted import left half
// replaced: no server and no admin command may use it until the import is finished or
// rolled back.
var ErrImportInterrupted = errors.New("an import-original was interrupted while it replaced this storage")

// ImportInterrupted refuses the storage directory base while ImportSwapMarker exists, with
// the two commands that end that state.
func ImportInterrupted(base string) error {
	_, err := os.Lstat(LayoutOf(base).ImportSwap())
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("storage_base_path: %s: %w", ImportSwapMarker, err)
	}
	cmd := "fileshed admin --storage-base-path " + base + " import-original"
	return fmt.Errorf("storage_base_path: %w (%s): run `%s --finish` to complete it, or `%s --rollback` to put back the storage it replaced",
		ErrImportInterrupted, base, cmd, cmd)
}
