//go:build unix

package results

import (
	"io/fs"
	"syscall"
)

// ownerOf returns the uid owning fi (stat(2) st_uid).
func ownerOf(fi fs.FileInfo) (uid int, ok bool) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return 0, false
	}
	return int(st.Uid), true
}
