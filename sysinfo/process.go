package sysinfo

import (
	"fmt"
	"os"
	"strconv"
	"strings"
)

// RSS returns this process's resident set size in bytes: the second field
// of /proc/self/statm (pages) times the page size. See proc_pid_statm(5).
func RSS() (int64, error) {
	b, err := os.ReadFile("/proc/self/statm")
	if err != nil {
		return 0, err
	}
	return parseStatmRSS(string(b), os.Getpagesize())
}

// parseStatmRSS reads the resident field of a /proc/<pid>/statm text, in
// bytes for pages of pageSize bytes.
func parseStatmRSS(statm string, pageSize int) (int64, error) {
	f := strings.Fields(statm)
	if len(f) < 2 {
		return 0, fmt.Errorf("statm %q: want at least 2 fields", statm)
	}
	pages, err := strconv.ParseInt(f[1], 10, 64)
	if err != nil {
		return 0, fmt.Errorf("statm resident: %w", err)
	}
	return pages * int64(pageSize), nil
}

// OpenFDs counts this process's open file descriptors: the entries of
// /proc/self/fd (the directory's own fd, open while it is read, included).
func OpenFDs() (int, error) {
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, err
	}
	return len(ents), nil
}
