package sysinfo

import (
	"fmt"
	"os"
	"strings"
)

// capTable names capability bits 0…40 as in include/uapi/linux/capability.h
// (CAP_LAST_CAP = CAP_CHECKPOINT_RESTORE since Linux 5.9).
var capTable = [...]string{
	"CAP_CHOWN", "CAP_DAC_OVERRIDE", "CAP_DAC_READ_SEARCH", "CAP_FOWNER",
	"CAP_FSETID", "CAP_KILL", "CAP_SETGID", "CAP_SETUID",
	"CAP_SETPCAP", "CAP_LINUX_IMMUTABLE", "CAP_NET_BIND_SERVICE", "CAP_NET_BROADCAST",
	"CAP_NET_ADMIN", "CAP_NET_RAW", "CAP_IPC_LOCK", "CAP_IPC_OWNER",
	"CAP_SYS_MODULE", "CAP_SYS_RAWIO", "CAP_SYS_CHROOT", "CAP_SYS_PTRACE",
	"CAP_SYS_PACCT", "CAP_SYS_ADMIN", "CAP_SYS_BOOT", "CAP_SYS_NICE",
	"CAP_SYS_RESOURCE", "CAP_SYS_TIME", "CAP_SYS_TTY_CONFIG", "CAP_MKNOD",
	"CAP_LEASE", "CAP_AUDIT_WRITE", "CAP_AUDIT_CONTROL", "CAP_SETFCAP",
	"CAP_MAC_OVERRIDE", "CAP_MAC_ADMIN", "CAP_SYSLOG", "CAP_WAKE_ALARM",
	"CAP_BLOCK_SUSPEND", "CAP_AUDIT_READ", "CAP_PERFMON", "CAP_BPF",
	"CAP_CHECKPOINT_RESTORE",
}

// CapNames decodes a capability bitmask (CapEff, CapPrm, … of
// /proc/<pid>/status) into names in bit order, e.g. 1<<23 → ["CAP_SYS_NICE"].
// Bits above CAP_CHECKPOINT_RESTORE (40), from a newer kernel, are named
// "CAP_<bit>". A zero mask gives nil.
func CapNames(mask uint64) []string {
	var names []string
	for bit := range 64 {
		if mask&(1<<bit) == 0 {
			continue
		}
		if bit < len(capTable) {
			names = append(names, capTable[bit])
		} else {
			names = append(names, fmt.Sprintf("CAP_%d", bit))
		}
	}
	return names
}

// capBit returns the bit of a capability name. It accepts "CAP_SYS_NICE",
// "cap_sys_nice" and "sys_nice", and the "CAP_<bit>" form CapNames emits.
func capBit(name string) (int, bool) {
	n := strings.ToUpper(name)
	if !strings.HasPrefix(n, "CAP_") {
		n = "CAP_" + n
	}
	for bit, c := range capTable {
		if c == n {
			return bit, true
		}
	}
	var bit int
	if _, err := fmt.Sscanf(n, "CAP_%d", &bit); err == nil && bit >= 0 && bit < 64 && n == fmt.Sprintf("CAP_%d", bit) {
		return bit, true
	}
	return 0, false
}

// capMask is the inverse of CapNames; unknown names are an error.
func capMask(names []string) (uint64, error) {
	var m uint64
	for _, n := range names {
		bit, ok := capBit(n)
		if !ok {
			return 0, fmt.Errorf("unknown capability %s", n)
		}
		m |= 1 << bit
	}
	return m, nil
}

// readCapEff reads the effective capability mask of this process from
// /proc/self/status (the thread-group leader's set; rtload never changes
// capabilities per thread).
func readCapEff() (uint64, error) {
	b, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0, err
	}
	return parseCapEff(string(b))
}

// HasCap reports whether this process has the named capability in its
// effective set (CapEff of /proc/self/status), read at each call. name is
// "CAP_SYS_NICE", "cap_sys_nice" or "sys_nice". An unknown name, or an
// unreadable status file, gives false.
func HasCap(name string) bool {
	bit, ok := capBit(name)
	if !ok {
		return false
	}
	m, err := readCapEff()
	return err == nil && m&(1<<bit) != 0
}
