package sandbox

import (
	"fmt"
	"strings"
	"sync"

	"github.com/fileshed/fileshed/core/sandbox/launch"
)

// Probe is what Detect found about the kernel layer.
type Probe struct {
	LandlockABI int    // 0 when unavailable
	Available   bool   // Landlock can be applied
	Reason      string // why not, or what is covered
}

var (
	probeOnce sync.Once
	probe     Probe
)

// Detect reports the Landlock ABI of this kernel (cached after the first call).
func Detect() Probe {
	probeOnce.Do(func() {
		abi, err := launch.ABI()
		switch {
		case err != nil:
			probe = Probe{Reason: "Landlock is not available: " + err.Error()}
		case abi < 1:
			probe = Probe{Reason: "Landlock is not enabled in this kernel"}
		default:
			probe = Probe{LandlockABI: abi, Available: true, Reason: coverage(abi)}
		}
	})
	return probe
}

// coverage says in one line what the kernel layer enforces at this ABI.
func coverage(abi int) string {
	parts := []string{"filesystem (read-only system, read-write zone, execute command only)"}
	if abi < 3 {
		parts = append(parts, "no truncate control (ABI<3)")
	}
	if abi >= 4 {
		parts = append(parts, "TCP bind/connect")
	}
	if abi >= 6 {
		parts = append(parts, "signals and abstract UNIX sockets scoped")
	}
	if abi >= 9 {
		parts = append(parts, "pathname UNIX sockets")
	}
	if abi >= 10 {
		parts = append(parts, "UDP")
	}
	return fmt.Sprintf("Landlock ABI %d: %s", abi, strings.Join(parts, ", "))
}
