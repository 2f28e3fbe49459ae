package sysinfo

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rtload/rtload/internal/cpulist"
)

// hardeningParams are the kernel command-line parameters that change the
// cost of allocation, syscalls or context switches and so belong next to
// any latency number. Names use '_' ; the kernel treats '-' the same
// (parameq in kernel/params.c), and parseCmdline normalizes to '_'.
var hardeningParams = []string{
	"init_on_alloc", "init_on_free", "page_poison", "slub_debug", "slab_nomerge",
	"page_alloc.shuffle", "hardened_usercopy", "randomize_kstack_offset",
	"mitigations", "pti", "nopti", "kpti", "nosmt",
	"spectre_v1", "nospectre_v1", "spectre_v2", "nospectre_v2", "spectre_v2_user",
	"spectre_bhi", "spec_store_bypass_disable", "nospec_store_bypass_disable", "ssbd",
	"l1tf", "mds", "tsx", "tsx_async_abort", "retbleed", "srbds", "mmio_stale_data",
	"gather_data_sampling", "reg_file_data_sampling", "spec_rstack_overflow",
	"lockdown", "vsyscall", "rodata", "nokaslr",
}

// splitCmdline splits a kernel command line into parameters the way the
// kernel's next_arg (lib/cmdline.c) does: spaces separate, double quotes
// group, and the first bare "--" ends the kernel's part (the rest is for
// init). Quotes around a whole parameter or around a value are removed.
func splitCmdline(s string) []string {
	var (
		params []string
		cur    strings.Builder
		quoted bool
		inTok  bool
	)
	flush := func() bool {
		if !inTok {
			return false
		}
		tok := cur.String()
		cur.Reset()
		inTok = false
		if tok == "--" {
			return true
		}
		params = append(params, unquoteParam(tok))
		return false
	}
	for _, r := range s {
		switch {
		case r == '"':
			quoted = !quoted
			cur.WriteRune(r)
			inTok = true
		case !quoted && (r == ' ' || r == '\t' || r == '\n'):
			if flush() {
				return params
			}
		default:
			cur.WriteRune(r)
			inTok = true
		}
	}
	flush()
	return params
}

// unquoteParam strips the quotes next_arg strips: `"k=v w"` and `k="v w"`.
func unquoteParam(tok string) string {
	if strings.HasPrefix(tok, `"`) {
		tok = strings.TrimSuffix(tok[1:], `"`)
	}
	if k, v, ok := strings.Cut(tok, "="); ok && strings.HasPrefix(v, `"`) {
		tok = k + "=" + strings.TrimSuffix(v[1:], `"`)
	}
	return tok
}

// parseCmdline reads a /proc/cmdline string. hardening holds each
// hardeningParams key present (value "" becomes "on"; a repeated key keeps
// the last value, as the kernel does); isolcpus and nohz are the raw values
// of isolcpus= and nohz_full=, "" when absent. Parameters after "--" belong
// to init and are ignored.
func parseCmdline(s string) (hardening map[string]string, isolcpus, nohz string) {
	hardening = map[string]string{}
	for _, p := range splitCmdline(s) {
		k, v, _ := strings.Cut(p, "=")
		k = strings.ReplaceAll(k, "-", "_")
		switch {
		case k == "isolcpus":
			isolcpus = v
		case k == "nohz_full":
			nohz = v
		case slices.Contains(hardeningParams, k):
			if v == "" {
				v = "on"
			}
			hardening[k] = v
		}
	}
	return hardening, isolcpus, nohz
}

// parseCPUInfo reads /proc/cpuinfo. model is "model name" (x86), else
// "Hardware" or "Model" (arm boards), else the "CPU implementer"/"CPU part"
// pair decoded by armCPUName (arm64 servers). flags is the "flags" (x86) or
// "Features" (arm) line of the first processor, in kernel order.
func parseCPUInfo(r io.Reader) (model, microcode string, flags []string) {
	fields := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20) // x86 flags lines exceed 4 KiB
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if _, seen := fields[k]; !seen { // first processor wins
			fields[k] = v
		}
	}
	switch {
	case fields["model name"] != "":
		model = fields["model name"]
	case fields["Hardware"] != "":
		model = fields["Hardware"]
	case fields["Model"] != "":
		model = fields["Model"]
	case fields["CPU part"] != "":
		model = armCPUName(fields["CPU implementer"], fields["CPU part"])
	}
	fl := fields["flags"]
	if fl == "" {
		fl = fields["Features"]
	}
	return model, fields["microcode"], strings.Fields(fl)
}

// countProcessors counts "processor" entries in /proc/cpuinfo; a fallback
// for the online CPU count when /sys is not mounted.
func countProcessors(cpuinfo []byte) int {
	n := 0
	for line := range bytes.Lines(cpuinfo) {
		if k, _, ok := bytes.Cut(line, []byte(":")); ok && string(bytes.TrimSpace(k)) == "processor" {
			n++
		}
	}
	return n
}

// armImplementers and armParts name the common arm64 server and board cores
// from MIDR_EL1 (arch/arm64/include/asm/cputype.h). Unknown pairs print raw.
var (
	armImplementers = map[string]string{
		"0x41": "ARM", "0x42": "Broadcom", "0x43": "Cavium", "0x46": "Fujitsu",
		"0x48": "HiSilicon", "0x4e": "NVIDIA", "0x50": "APM", "0x51": "Qualcomm",
		"0x61": "Apple", "0xc0": "Ampere",
	}
	armParts = map[string]string{
		"0x41/0xd03": "Cortex-A53", "0x41/0xd04": "Cortex-A35", "0x41/0xd05": "Cortex-A55",
		"0x41/0xd07": "Cortex-A57", "0x41/0xd08": "Cortex-A72", "0x41/0xd09": "Cortex-A73",
		"0x41/0xd0a": "Cortex-A75", "0x41/0xd0b": "Cortex-A76", "0x41/0xd0c": "Neoverse-N1",
		"0x41/0xd0d": "Cortex-A77", "0x41/0xd40": "Neoverse-V1", "0x41/0xd41": "Cortex-A78",
		"0x41/0xd44": "Cortex-X1", "0x41/0xd46": "Cortex-A510", "0x41/0xd47": "Cortex-A710",
		"0x41/0xd48": "Cortex-X2", "0x41/0xd49": "Neoverse-N2", "0x41/0xd4f": "Neoverse-V2",
		"0x41/0xd8e": "Neoverse-N3", "0x41/0xd84": "Neoverse-V3",
		"0x48/0xd01": "TaiShan-v110",
	}
)

// armCPUName renders an arm "CPU implementer"/"CPU part" pair, e.g.
// "ARM Neoverse-N1 (implementer 0x41, part 0xd0c)".
func armCPUName(impl, part string) string {
	impl, part = strings.ToLower(impl), strings.ToLower(part)
	raw := fmt.Sprintf("implementer %s, part %s", impl, part)
	name := armParts[impl+"/"+part]
	vendor := armImplementers[impl]
	switch {
	case name != "":
		return fmt.Sprintf("%s %s (%s)", vendor, name, raw)
	case vendor != "":
		return fmt.Sprintf("%s (%s)", vendor, raw)
	default:
		return raw
	}
}

// parseCapEff returns the CapEff mask from /proc/<pid>/status text.
func parseCapEff(status string) (uint64, error) {
	for line := range strings.Lines(status) {
		if v, ok := strings.CutPrefix(line, "CapEff:"); ok {
			m, err := strconv.ParseUint(strings.TrimSpace(v), 16, 64)
			if err != nil {
				return 0, fmt.Errorf("CapEff: %w", err)
			}
			return m, nil
		}
	}
	return 0, errors.New("no CapEff line")
}

// parseKernelConfig reads a kernel .config, plain or gzipped (detected by
// the gzip magic, as /proc/config.gz is), and returns the value of each
// option named in keys: "y", "m", a number, or a string without its quotes;
// "# CONFIG_X is not set" gives "n". A key ending in '*' matches every
// option with that prefix (CONFIG_PREEMPT* gives CONFIG_PREEMPT,
// CONFIG_PREEMPT_RT, …). Options absent from the file are absent from the
// map. The error is a gzip or read error; the map is non-nil without one.
func parseKernelConfig(r io.Reader, keys []string) (map[string]string, error) {
	br := bufio.NewReader(r)
	if magic, _ := br.Peek(2); len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b {
		zr, err := gzip.NewReader(br)
		if err != nil {
			return nil, fmt.Errorf("gzip: %w", err)
		}
		defer zr.Close()
		br = bufio.NewReader(zr)
	}
	want := func(name string) bool {
		for _, k := range keys {
			if p, ok := strings.CutSuffix(k, "*"); (ok && strings.HasPrefix(name, p)) || k == name {
				return true
			}
		}
		return false
	}
	out := map[string]string{}
	sc := bufio.NewScanner(br)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if rest, ok := strings.CutPrefix(line, "# "); ok {
			if name, ok := strings.CutSuffix(rest, " is not set"); ok && want(name) {
				out[name] = "n"
			}
			continue
		}
		name, v, ok := strings.Cut(line, "=")
		if !ok || !strings.HasPrefix(name, "CONFIG_") || !want(name) {
			continue
		}
		if uq, err := strconv.Unquote(v); err == nil {
			v = uq
		}
		out[name] = v
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return out, nil
}

// parseCPUList parses a kernel CPU list (internal/cpulist.Parse).
func parseCPUList(s string) ([]int, error) { return cpulist.Parse(s) }

// formatCPUList is the inverse of parseCPUList (internal/cpulist.Format).
func formatCPUList(cpus []int) string { return cpulist.Format(cpus) }

// bootID keeps s when it is a boot_id as the kernel prints it (a UUID:
// 36 characters of hex digits and dashes), else "".
func bootID(s string) string {
	if len(s) != 36 {
		return ""
	}
	for i, c := range s {
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return ""
			}
		case !(c >= '0' && c <= '9' || c >= 'a' && c <= 'f'):
			return ""
		}
	}
	return s
}

// parseBtime reads the boot time from /proc/stat's "btime SECONDS" line
// (proc(5)); the zero time when absent.
func parseBtime(stat []byte) time.Time {
	for _, line := range strings.Split(string(stat), "\n") {
		if v, ok := strings.CutPrefix(line, "btime "); ok {
			if s, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64); err == nil && s > 0 {
				return time.Unix(s, 0).UTC()
			}
		}
	}
	return time.Time{}
}
