package sysinfo

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func readTestdata(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestParseCmdline(t *testing.T) {
	tests := []struct {
		name          string
		cmdline       string
		wantHardening map[string]string
		wantIsol      string
		wantNohz      string
	}{
		{
			// The brief's example: values kept raw, non-hardening params ignored.
			name:          "typical tuned box",
			cmdline:       "BOOT_IMAGE=/vmlinuz init_on_alloc=1 init_on_free=0 isolcpus=2-3 nohz_full=2-3 mitigations=off quiet",
			wantHardening: map[string]string{"init_on_alloc": "1", "init_on_free": "0", "mitigations": "off"},
			wantIsol:      "2-3",
			wantNohz:      "2-3",
		},
		{
			// A bare flag means "on"; '-' and '_' are the same in param names.
			name:          "bare flags and dashes",
			cmdline:       "nopti nosmt slub_debug spectre-v2=retpoline\n",
			wantHardening: map[string]string{"nopti": "on", "nosmt": "on", "slub_debug": "on", "spectre_v2": "retpoline"},
		},
		{
			// isolcpus keeps its flags; the last repeated key wins, as in the kernel.
			name:          "isolcpus flags and repeats",
			cmdline:       "isolcpus=domain,managed_irq,1-3 pti=on pti=off",
			wantHardening: map[string]string{"pti": "off"},
			wantIsol:      "domain,managed_irq,1-3",
		},
		{
			// Everything after "--" is init's, even if it looks like a kernel param.
			name:          "init args after --",
			cmdline:       "mitigations=auto console=ttyS0 -- nohz_full=1 mitigations=off",
			wantHardening: map[string]string{"mitigations": "auto"},
		},
		{
			// Quotes group spaces and are stripped from the value.
			name:          "quoted value",
			cmdline:       `dyndbg="file foo.c +p" slub_debug="FZ,kmalloc-64" isolcpus=3`,
			wantHardening: map[string]string{"slub_debug": "FZ,kmalloc-64"},
			wantIsol:      "3",
		},
		{
			name:          "empty",
			cmdline:       "",
			wantHardening: map[string]string{},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, isol, nohz := parseCmdline(tt.cmdline)
			if diff := cmp.Diff(tt.wantHardening, h); diff != "" {
				t.Errorf("hardening (-want +got):\n%s", diff)
			}
			if isol != tt.wantIsol || nohz != tt.wantNohz {
				t.Errorf("isolcpus, nohz_full = %q, %q; want %q, %q", isol, nohz, tt.wantIsol, tt.wantNohz)
			}
		})
	}
}

func TestSplitCmdline(t *testing.T) {
	tests := []struct {
		name, in string
		want     []string
	}{
		{"spaces and tabs", " a=1\tb  c=3 \n", []string{"a=1", "b", "c=3"}},
		{"quoted value", `a="x y" b`, []string{"a=x y", "b"}},
		{"quoted whole param", `"a=x y" b`, []string{"a=x y", "b"}},
		{"stop at --", "a -- b", []string{"a"}},
		{"-- inside a word is not a stop", "a--b --c", []string{"a--b", "--c"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, splitCmdline(tt.in)); diff != "" {
				t.Errorf("splitCmdline(%q) (-want +got):\n%s", tt.in, diff)
			}
		})
	}
}

func TestParseCPUInfo(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		wantModel string
		wantFlags []string // checked as a subset; nil means "no flags at all"
		wantCount int
	}{
		{
			// Captured from a Sapphire Rapids KVM guest: flags include the TSC set and hypervisor.
			name:      "x86 guest",
			in:        string(readTestdata(t, "cpuinfo-x86.txt")),
			wantModel: "Intel(R) Xeon(R) Processor",
			wantFlags: []string{"tsc", "rdtscp", "constant_tsc", "nonstop_tsc", "hypervisor"},
			wantCount: 2,
		},
		{
			// Graviton2-style: no model name, implementer/part decoded; flags from Features.
			name:      "arm64 server",
			in:        string(readTestdata(t, "cpuinfo-arm64.txt")),
			wantModel: "ARM Neoverse-N1 (implementer 0x41, part 0xd0c)",
			wantFlags: []string{"fp", "asimd", "evtstrm", "ssbs"},
			wantCount: 2,
		},
		{
			// Boards name themselves in Hardware/Model, which wins over the part number.
			name:      "arm board",
			in:        "processor\t: 0\nFeatures\t: half thumb\nCPU implementer\t: 0x41\nCPU part\t: 0xd08\n\nHardware\t: BCM2835\nModel\t: Raspberry Pi 4 Model B Rev 1.4\n",
			wantModel: "BCM2835",
			wantFlags: []string{"half", "thumb"},
			wantCount: 1,
		},
		{
			name:      "unknown arm part prints raw",
			in:        "processor\t: 0\nCPU implementer\t: 0x99\nCPU part\t: 0x001\n",
			wantModel: "implementer 0x99, part 0x001",
			wantCount: 1,
		},
		{
			name: "empty",
			in:   "",
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			model, _, flags := parseCPUInfo(strings.NewReader(tt.in))
			if model != tt.wantModel {
				t.Errorf("model = %q, want %q", model, tt.wantModel)
			}
			if tt.wantFlags == nil && len(flags) != 0 {
				t.Errorf("flags = %q, want none", flags)
			}
			for _, f := range tt.wantFlags {
				if !slices.Contains(flags, f) {
					t.Errorf("flags lack %q: %q", f, flags)
				}
			}
			if n := countProcessors([]byte(tt.in)); n != tt.wantCount {
				t.Errorf("countProcessors = %d, want %d", n, tt.wantCount)
			}
		})
	}
}

func TestParseCapEff(t *testing.T) {
	tests := []struct {
		name    string
		status  string
		want    uint64
		wantErr string
	}{
		// NET_ADMIN(12) IPC_LOCK(14) SYS_NICE(23) PERFMON(38): a typical setcap'd binary.
		{"status file", string(readTestdata(t, "status.txt")), 1<<12 | 1<<14 | 1<<23 | 1<<38, ""},
		{"root with everything", "CapEff:\t000001ffffffffff\n", 1<<41 - 1, ""},
		{"no line", "Name:\tx\n", 0, "no CapEff line"},
		{"garbage", "CapEff:\tzz\n", 0, "CapEff: strconv.ParseUint"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseCapEff(tt.status)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("parseCapEff = %#x, %v; want %#x", got, err, tt.want)
			}
		})
	}
}

func TestParseKernelConfig(t *testing.T) {
	want := map[string]string{
		"CONFIG_HARDENED_USERCOPY":        "y",
		"CONFIG_INIT_ON_ALLOC_DEFAULT_ON": "y",
		"CONFIG_INIT_ON_FREE_DEFAULT_ON":  "n",
		"CONFIG_NO_HZ_FULL":               "y",
		"CONFIG_HZ":                       "250",
		"CONFIG_SLAB_FREELIST_HARDENED":   "y",
		"CONFIG_PREEMPT_BUILD":            "y",
		"CONFIG_PREEMPT_NONE":             "n",
		"CONFIG_PREEMPT_VOLUNTARY":        "y",
		"CONFIG_PREEMPT":                  "n",
		"CONFIG_PREEMPT_COUNT":            "y",
		"CONFIG_PREEMPTION":               "y",
		"CONFIG_PREEMPT_DYNAMIC":          "y",
	}
	tests := []struct {
		name string
		file string
		keys []string
		want map[string]string
	}{
		{"plain", "kconfig.txt", kernelConfigKeys, want},
		// Same content gzipped, as /proc/config.gz serves it.
		{"gzipped", "kconfig.gz", kernelConfigKeys, want},
		// Exact keys do not match longer names (CONFIG_HZ vs CONFIG_HZ_250); strings lose quotes.
		{"exact and string", "kconfig.txt", []string{"CONFIG_HZ", "CONFIG_CC_VERSION_TEXT", "CONFIG_MISSING"},
			map[string]string{"CONFIG_HZ": "250", "CONFIG_CC_VERSION_TEXT": "gcc (Ubuntu 13.2.0-23ubuntu4) 13.2.0"}},
		{"no keys", "kconfig.txt", nil, map[string]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseKernelConfig(bytes.NewReader(readTestdata(t, tt.file)), tt.keys)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

func TestParseKernelConfigBadGzip(t *testing.T) {
	gz := readTestdata(t, "kconfig.gz")
	_, err := parseKernelConfig(bytes.NewReader(gz[:len(gz)/2]), kernelConfigKeys)
	if err == nil {
		t.Fatal("truncated gzip: no error")
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write([]byte("CONFIG_HZ=1000\n"))
	zw.Close()
	got, err := parseKernelConfig(&buf, []string{"CONFIG_HZ"})
	if err != nil || got["CONFIG_HZ"] != "1000" {
		t.Fatalf("fresh gzip: %v, %v", got, err)
	}
}

func TestParseCPUList(t *testing.T) {
	tests := []struct {
		in      string
		want    []int
		wantErr bool
	}{
		{"0", []int{0}, false},
		{"0-3\n", []int{0, 1, 2, 3}, false},
		{"0-1,4,6-7", []int{0, 1, 4, 6, 7}, false},
		{"3,1-2,2", []int{1, 2, 3}, false}, // unsorted, overlapping: sorted, unique
		{"", nil, false},
		{"3-1", nil, true},
		{"a", nil, true},
		{"0-99999999", nil, true}, // bounded, never a huge allocation
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseCPUList(tt.in)
			if (err != nil) != tt.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tt.wantErr)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
			if err == nil && len(got) > 0 {
				back, _ := parseCPUList(formatCPUList(got))
				if diff := cmp.Diff(got, back); diff != "" {
					t.Errorf("format round trip %q (-want +got):\n%s", formatCPUList(got), diff)
				}
			}
		})
	}
	if s := formatCPUList([]int{0, 1, 2, 5, 7, 8}); s != "0-2,5,7-8" {
		t.Errorf("formatCPUList = %q", s)
	}
}
