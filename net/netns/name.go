package netns

import (
	"crypto/rand"
	"encoding/hex"
	"strconv"
	"strings"
)

// Prefix starts the name of every namespace rtload creates.
const Prefix = "rtl"

// runIDLen is the length of every run id: NewRunID's 8 hex digits.
const runIDLen = 8

// Name returns "rtl<pid>-<runID>", e.g. "rtl4242-0badc0de". The owner pid
// is part of the name so Sweep can tell the namespaces of dead runs.
func Name(pid int, runID string) string {
	return Prefix + strconv.Itoa(pid) + "-" + runID
}

// ParseName returns the pid and run id of a name made by Name with a run
// id from NewRunID. ok is false for anything else: the pid must be a
// positive decimal without a leading zero or sign, and the run id exactly
// 8 lowercase hex digits, so every accepted name has exactly one spelling
// and names such as "cni-1234", "rtl12", "rtl-1-x", "rtltest-foreign" or
// "rtl8192-wifi" are never taken for rtload's.
func ParseName(name string) (pid int, runID string, ok bool) {
	rest, ok := strings.CutPrefix(name, Prefix)
	if !ok {
		return 0, "", false
	}
	digits, runID, ok := strings.Cut(rest, "-")
	if !ok || !validPID(digits) || !validRunID(runID) {
		return 0, "", false
	}
	pid, err := strconv.Atoi(digits)
	if err != nil || pid <= 0 || pid > 1<<31-1 {
		return 0, "", false
	}
	return pid, runID, true
}

// NewRunID returns a short unique run id: runIDLen (8) lowercase hex
// characters from crypto/rand.
func NewRunID() string {
	var b [4]byte
	rand.Read(b[:]) // never returns an error (crypto/rand, Go ≥ 1.24)
	return hex.EncodeToString(b[:])
}

// validPID reports whether s is a decimal without sign or leading zero.
func validPID(s string) bool {
	if s == "" || s[0] == '0' || len(s) > 10 {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// validRunID reports whether s has NewRunID's form: runIDLen lowercase hex
// digits.
func validRunID(s string) bool {
	if len(s) != runIDLen {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
