package profile_test

import (
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/rtload/rtload/profile"
	"github.com/rtload/rtload/sysinfo"
)

// TestHookStateOnThisKernel reads this machine's facts as a run embeds
// them: every option Hook.State reads must be among sysinfo's kernel
// config keys, so a readable config never leaves a hook unknown.
func TestHookStateOnThisKernel(t *testing.T) {
	f := sysinfo.Gather()
	if f.KernelConfig == nil {
		t.Skipf("kernel config: %s", f.KernelConfigSource)
	}
	raw := rawConfig(t, f.KernelConfigSource)
	for _, key := range profile.HookConfigKeys() {
		// An option the config does not mention at all (KASAN on an
		// architecture without it) is absent, and then off.
		if _, ok := f.KernelConfig[key]; !ok && (strings.Contains(raw, key+"=") || strings.Contains(raw, key+" is not set")) {
			t.Errorf("%s is in %s but not in sysinfo's kernel config keys", key, f.KernelConfigSource)
		}
	}
	for _, h := range profile.Hooks() {
		st := h.State(f.KernelConfig, f.Hardening)
		if !st.Known {
			t.Errorf("%s: %s with the config readable at %s", h.Option, st, f.KernelConfigSource)
		}
		t.Logf("%s: %s", h.Option, st)
	}
}

// rawConfig is the kernel config text at path, gunzipped when it is.
func rawConfig(t *testing.T, path string) string {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if zr, err := gzip.NewReader(bytes.NewReader(b)); err == nil {
		if b, err = io.ReadAll(io.LimitReader(zr, 64<<20)); err != nil {
			t.Fatal(err)
		}
	}
	return string(b)
}
