package rt

import (
	"os"
	"strings"
	"syscall"
)

// ReexecQuiet restarts the process once, in place (execve(2) of
// os.Executable with os.Args), with GODEBUG=asyncpreemptoff=1 added to
// the environment (kept beside any other GODEBUG settings). Without it the
// runtime's sysmon sends SIGURG to a locked real-time thread that sleeps
// in a raw clock_nanosleep (it looks busy to the runtime): the signal
// interrupts the sleep and the recv calls, and the runtime would show in
// the histograms as if it were the kernel. It returns nil at once when
// the setting is already there or the environment variable skip is set;
// otherwise it returns only when the exec failed, with its error.
func ReexecQuiet(skip string) error {
	if os.Getenv(skip) != "" || strings.Contains(os.Getenv("GODEBUG"), "asyncpreemptoff=1") {
		return nil
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	env := os.Environ()
	gd := "GODEBUG=asyncpreemptoff=1"
	for i, e := range env {
		if v, ok := strings.CutPrefix(e, "GODEBUG="); ok {
			env[i] = gd + "," + v
			gd = ""
		}
	}
	if gd != "" {
		env = append(env, gd)
	}
	return syscall.Exec(exe, os.Args, env)
}
