//go:build !amd64

package seccomp

// The filters check x86_64's architecture and system call numbers: on any
// other architecture Program returns ErrNotSupported.
const (
	auditArch = 0
	sysClone3 = 0
)

var sysnum = map[string]uint32{}
