package results

import "fmt"

// WakeupLogBase is the file name base of the per-wakeup log of reader
// reader in trial index (variant, round): "wakeups-<index>-<variant>-
// r<round>-<reader>", names made file-safe (every byte other than
// [A-Za-z0-9._-] becomes '_'). The engine names logs with it; summary.json
// then lists each reader's files (Reader.WakeupLog), which is how every
// reader of results finds them. The files themselves (chunks, their
// format, writing and reading them) are package results/wakelog's.
func WakeupLogBase(index int, variant string, round int, reader string) string {
	return fmt.Sprintf("wakeups-%02d-%s-r%d-%s", index, fileSafe(variant), round, fileSafe(reader))
}

// fileSafe maps s to a file-name-safe form.
func fileSafe(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.') {
			b[i] = '_'
		}
	}
	return string(b)
}
