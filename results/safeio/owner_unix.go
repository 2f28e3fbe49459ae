//go:build unix

package safeio

import (
	"io/fs"
	"syscall"
)

// OwnerOf returns the uid owning fi (stat(2) st_uid).
func OwnerOf(fi fs.FileInfo) (uid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
