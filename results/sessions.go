package results

import (
	"fmt"
	"time"
)

// A sessions directory is a baseline that grows: several sessions of one
// scenario, each a whole results directory of its own, with an index
// (issue 32). A session is one boot of a kernel, or one sitting of the
// same machine on another day; `rtload run --append BASE` adds one, and
// compare and check pool them with the session as the top level of the
// statistics (stats.Sessions):
//
//	BASE/
//	  sessions.json   the index (SessionIndex): each session's directory and boot
//	  s001/           a results directory as any run writes (summary.json, …)
//	  s002/
//	  .rtload.lock    held by the run appending a session, until it ends
//
// The index is small and rewritten whole (Dir.WriteFile) after each
// session; a session's directory exists before its entry does, so an
// append that was killed leaves a directory no index names, which
// readers ignore and the next append skips over. This file is the
// index's schema; its reader and writer (the claim, the index rewritten
// by renaming) are package results/store's (sessions.go), together.

// SessionsFile is the index of a sessions directory.
const SessionsFile = "sessions.json"

// SchemaSessions names the index's JSON; SessionsVersion is its version.
const (
	SchemaSessions  = "rtload-sessions"
	SessionsVersion = 1
)

// Bounds of a sessions directory read: its index's size and its
// sessions. A week of boots is tens of sessions.
const (
	MaxSessions          = 1000
	MaxSessionsFileBytes = 1 << 20
)

// SessionIndex is sessions.json.
type SessionIndex struct {
	Schema  string `json:"schema"`
	Version int    `json:"version"`
	// Scenario is the sessions' scenario name (every session's Summary.Scenario).
	Scenario string `json:"scenario"`
	// Sessions in the order they were appended.
	Sessions []SessionEntry `json:"sessions"`
}

// SessionEntry is one session: its directory under the sessions
// directory and the boot it ran in.
type SessionEntry struct {
	// Dir is the session's results directory, a name of the form s001.
	Dir  string      `json:"dir"`
	Boot SessionBoot `json:"boot"`
	// Start is when the session's run started.
	Start time.Time `json:"start"`
	// Processes and Trials are the run's; Stopped and Degraded its marks
	// (a reader of the index can say what it holds without opening them).
	Processes int  `json:"processes"`
	Trials    int  `json:"trials"`
	Stopped   bool `json:"stopped,omitempty"`
	Degraded  bool `json:"degraded,omitempty"`
}

// SessionBoot is the boot a session ran in: Env's kernel, command line,
// boot id and boot time.
type SessionBoot struct {
	Kernel  string    `json:"kernel"`
	Cmdline string    `json:"cmdline"`
	BootID  string    `json:"boot_id,omitempty"`
	Booted  time.Time `json:"booted,omitzero"`
}

// BootOf is the boot of a run's Env.
func BootOf(e Env) SessionBoot {
	return SessionBoot{Kernel: e.Kernel, Cmdline: e.Cmdline, BootID: e.BootID, Booted: e.Booted}
}

// Boots is how many distinct boots the index's sessions ran in (a
// session without a boot id counts as its own).
func (x *SessionIndex) Boots() int {
	seen := map[string]bool{}
	n := 0
	for _, s := range x.Sessions {
		if s.Boot.BootID == "" {
			n++
			continue
		}
		if !seen[s.Boot.BootID] {
			seen[s.Boot.BootID] = true
			n++
		}
	}
	return n
}

// SessionName is the directory name of the n-th session (1-based): s001.
func SessionName(n int) string { return fmt.Sprintf("s%03d", n) }
