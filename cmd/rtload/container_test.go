package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
)

// TestVolumeNote: in a container, the results directory's host path comes
// from the volume mounted over it; results in the container's own
// filesystem are warned about; nothing is said outside a container.
// TestResultsOwner: results go to the owner of the nearest existing
// parent only for root in a container, and only when that is not root.
// TestRefusedAtOnce: an unmet requirement and a missing privilege are
// refused together, in one message (exit 3), not one layer at a time,
// before the results directory is made.
func TestRefusedAtOnce(t *testing.T) {
	testutil.Requires(t, testutil.Root) // to run rtload as nobody
	missing := writeScenario(t, "missing.yaml", "requires:\n  config: [CONFIG_RTLOAD_NO_SUCH_OPTION=y]\nreaders: [{}]\n")
	out := filepath.Join(t.TempDir(), "out")
	for _, d := range []string{filepath.Dir(missing), filepath.Dir(filepath.Dir(missing))} {
		os.Chmod(d, 0o755) // nobody reads the scenario
	}
	r := rtload(t, &syscall.Credential{Uid: 65534, Gid: 65534}, "run", missing, "--duration", "300ms", "--out", out, "-q")
	for _, want := range []string{"does not meet 1 requirement", "CONFIG_RTLOAD_NO_SUCH_OPTION=y: ", "needs CAP_SYS_NICE"} {
		if !strings.Contains(r.stderr, want) {
			t.Errorf("refusal lacks %q", want)
		}
	}
	if r.code != ExitPrivilege || t.Failed() {
		t.Errorf("exit %d, want %d:\n%s", r.code, ExitPrivilege, r.stderr)
	}
	if _, err := os.Lstat(out); err == nil {
		t.Errorf("a refused run made %s", out)
	}
}

// TestTrustVolume: in a container, a results directory under a volume's
// mount point that another user owns passes the --out ownership check;
// the same user's directory that is not a mount point stays refused.
