package sysinfo

import (
	"fmt"
	"github.com/rtload/rtload/internal/filekind"
	"io/fs"
	"os"
	"syscall"
)

// OwnEntry reads path with lstat(2), never following a link, and returns
// its FileInfo and "" when it is a regular file, or with dirOK a directory,
// owned by the effective user: something this user's rtload could have
// made. Otherwise whyNot says, for a person, what it is instead ("a
// symbolic link", "a directory", "a FIFO", "owned by uid 65534, not by
// this user (uid 0)"), or gives the lstat error.
func OwnEntry(path string, dirOK bool) (fi fs.FileInfo, whyNot string) {
	fi, err := os.Lstat(path)
	if err != nil {
		return nil, err.Error()
	}
	m := fi.Mode()
	if kind := filekind.Of(m); !m.IsRegular() && (!m.IsDir() || !dirOK) {
		return fi, kind
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return fi, "owner unknown (no stat_t)"
	}
	if euid := os.Geteuid(); int(st.Uid) != euid {
		return fi, fmt.Sprintf("owned by uid %d, not by this user (uid %d)", st.Uid, euid)
	}
	return fi, ""
}
