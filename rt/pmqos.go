package rt

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
)

// HoldCPUDMALatency writes us (µs) to /dev/cpu_dma_latency and keeps the
// file open: the PM QoS request lasts while it is open, so no CPU enters
// an idle state whose exit latency exceeds us. cyclictest does the same by
// default (0 µs); without it an idle CPU's wakeup latency includes its
// C-state exit. Close the returned file to release the request. Fails with
// a *PrivilegeError when the file (mode 0600) cannot be opened for lack of
// root or is refused by a device cgroup, and when it does not exist (a
// container's /dev lacks it unless passed in): --allow-degraded runs
// without it.
func HoldCPUDMALatency(us int32) (*os.File, error) {
	f, err := os.OpenFile("/dev/cpu_dma_latency", os.O_WRONLY, 0)
	if err != nil {
		const degraded = "let CPUs enter deep idle states (wakeup latency then includes C-state exit)"
		switch {
		case errors.Is(err, os.ErrPermission):
			return nil, &PrivilegeError{Op: "open /dev/cpu_dma_latency", Cap: "root (the file is 0600)", Degraded: degraded, Err: err}
		case errors.Is(err, os.ErrNotExist):
			return nil, &PrivilegeError{Op: "open /dev/cpu_dma_latency", Cap: "the device (in a container: --device /dev/cpu_dma_latency; or cpu_dma_latency: -1)",
				Degraded: degraded, Err: err}
		}
		return nil, fmt.Errorf("cpu_dma_latency: %w", err)
	}
	var b [4]byte
	binary.NativeEndian.PutUint32(b[:], uint32(us))
	if _, err := f.Write(b[:]); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu_dma_latency: write %d µs: %w", us, err)
	}
	return f, nil
}
