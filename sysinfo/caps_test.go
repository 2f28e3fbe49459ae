package sysinfo

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestCapNamesRoundTrip(t *testing.T) {
	for bit, name := range capTable {
		got := CapNames(1 << bit)
		if diff := cmp.Diff([]string{name}, got); diff != "" {
			t.Errorf("CapNames(1<<%d) (-want +got):\n%s", bit, diff)
		}
	}
	for _, mask := range []uint64{0, 1<<41 - 1, (1<<41 - 1) &^ (1 << 24), 1 << 23, 1<<63 | 1<<41 | 1} {
		m, err := capMask(CapNames(mask))
		if err != nil || m != mask {
			t.Errorf("capMask(CapNames(%#x)) = %#x, %v", mask, m, err)
		}
	}
	if n := len(CapNames(1<<41 - 1)); n != 41 {
		t.Errorf("all 41 caps decode to %d names", n)
	}
}

func TestCapNamesKnown(t *testing.T) {
	tests := []struct {
		mask uint64
		want []string
	}{
		{0, nil},
		{1 << 0, []string{"CAP_CHOWN"}},
		{1<<12 | 1<<23, []string{"CAP_NET_ADMIN", "CAP_SYS_NICE"}},
		{1 << 38, []string{"CAP_PERFMON"}},
		{1 << 40, []string{"CAP_CHECKPOINT_RESTORE"}},
		{1 << 41, []string{"CAP_41"}}, // newer kernel than this table
	}
	for _, tt := range tests {
		if diff := cmp.Diff(tt.want, CapNames(tt.mask)); diff != "" {
			t.Errorf("CapNames(%#x) (-want +got):\n%s", tt.mask, diff)
		}
	}
}

func TestCapBit(t *testing.T) {
	tests := []struct {
		name   string
		want   int
		wantOK bool
	}{
		{"CAP_SYS_NICE", 23, true},
		{"cap_sys_nice", 23, true},
		{"sys_nice", 23, true},
		{"CAP_IPC_LOCK", 14, true},
		{"CAP_41", 41, true},
		{"CAP_041", 0, false},
		{"CAP_64", 0, false},
		{"CAP_NOPE", 0, false},
		{"", 0, false},
	}
	for _, tt := range tests {
		bit, ok := capBit(tt.name)
		if bit != tt.want || ok != tt.wantOK {
			t.Errorf("capBit(%q) = %d, %v; want %d, %v", tt.name, bit, ok, tt.want, tt.wantOK)
		}
	}
	if HasCap("CAP_NOPE") {
		t.Error("HasCap(unknown) = true")
	}
}
