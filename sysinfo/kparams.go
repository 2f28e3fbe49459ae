package sysinfo

import (
	"io/fs"
	"maps"
	"os"
	"strings"
)

// Param is one kernel command-line parameter as this boot has it, with
// its effective state when it is a boolean parameter whose default rtload
// knows (see boolParams).
type Param struct {
	// Name is the parameter's name, '-' written '_' ("init_on_alloc").
	Name string `json:"name"`
	// Given is true when /proc/cmdline holds it; Raw is its value there
	// ("" for a bare flag). A repeated parameter counts by its last
	// occurrence, as the kernel's parser leaves it.
	Given bool   `json:"given"`
	Raw   string `json:"raw,omitempty"`
	// Bool is true for the boolean parameters of boolParams. Known then
	// says whether On, the state the kernel runs with, could be worked
	// out (it needs the kernel config).
	Bool  bool `json:"bool"`
	Known bool `json:"known"`
	On    bool `json:"on"`
	// Why says where the state comes from, for a person:
	// "init_on_alloc=1 on the command line", "not on the command line, so
	// CONFIG_INIT_ON_ALLOC_DEFAULT_ON (not set): off".
	Why string `json:"why"`
	// Missing names the config option without which the feature is off
	// whatever the command line says ("CONFIG_HARDENED_USERCOPY"), "" when
	// none is missing.
	Missing string `json:"missing,omitempty"`
}

// boolParam is what rtload knows of one boolean kernel parameter.
type boolParam struct {
	// needs is the option without which the parameter does nothing and
	// the feature is off ("" = none).
	needs string
	// dflt is the option giving the default when the parameter is not
	// on the command line; the default is on when it is y.
	dflt string
	// absentOn is the default when dflt is absent from a readable config
	// (a kernel from before the option: hardened_usercopy was on).
	absentOn bool
	// poison: page_poison=1 on a CONFIG_PAGE_POISONING kernel turns the
	// feature off (mm_core_init: "mem auto-init: CONFIG_PAGE_POISONING is
	// on, will take precedence over init_on_alloc and init_on_free").
	poison bool
}

// boolParams are the boolean parameters whose default rtload knows. Each
// is parsed by the kernel with kstrtobool (lib/kstrtox.c); a value it
// refuses leaves the default.
var boolParams = map[string]boolParam{
	// mm/mm_init.c (mm/page_alloc.c before 6.4), since 5.3.
	"init_on_alloc": {dflt: "CONFIG_INIT_ON_ALLOC_DEFAULT_ON", poison: true},
	"init_on_free":  {dflt: "CONFIG_INIT_ON_FREE_DEFAULT_ON", poison: true},
	// mm/usercopy.c, since 4.16; the default option is newer (6.x),
	// before it the checks were on by default.
	"hardened_usercopy": {needs: "CONFIG_HARDENED_USERCOPY", dflt: "CONFIG_HARDENED_USERCOPY_DEFAULT_ON", absentOn: true},
	// init/main.c, since 5.13.
	"randomize_kstack_offset": {needs: "CONFIG_RANDOMIZE_KSTACK_OFFSET", dflt: "CONFIG_RANDOMIZE_KSTACK_OFFSET_DEFAULT"},
}

// DefaultParam returns the boolean parameter whose default the config
// option gives ("CONFIG_INIT_ON_ALLOC_DEFAULT_ON" → "init_on_alloc"), or
// "" when rtload knows none.
func DefaultParam(option string) string {
	for name, bp := range boolParams {
		if bp.dflt == option {
			return name
		}
	}
	return ""
}

// ParseBool reads a value as the kernel's kstrtobool does: 1, y, Y and on
// are true; 0, n, N and off false (only the first one or two characters
// count, so "yes" is true and "of" false). ok is false for anything else,
// which the kernel refuses, leaving the parameter's default.
func ParseBool(s string) (v, ok bool) {
	if s == "" {
		return false, false
	}
	switch s[0] {
	case 'y', 'Y', '1':
		return true, true
	case 'n', 'N', '0':
		return false, true
	case 'o', 'O':
		if len(s) > 1 {
			switch s[1] {
			case 'n', 'N':
				return true, true
			case 'f', 'F':
				return false, true
			}
		}
	}
	return false, false
}

// cmdlineParam returns the last value of parameter name ('-' and '_'
// alike) on command line cmdline, and whether it is there.
func cmdlineParam(cmdline, name string) (raw string, given bool) {
	name = strings.ReplaceAll(name, "-", "_")
	for _, p := range splitCmdline(cmdline) {
		k, v, _ := strings.Cut(p, "=")
		if strings.ReplaceAll(k, "-", "_") == name {
			raw, given = v, true
		}
	}
	return raw, given
}

// KernelParam returns parameter name as this boot has it: from f.Cmdline,
// and for the boolean parameters rtload knows, the state the kernel runs
// with, worked out from f.KernelConfig when the command line leaves it
// out (init_on_alloc absent = CONFIG_INIT_ON_ALLOC_DEFAULT_ON). It reads
// only f: tests give fixtures.
func (f *Facts) KernelParam(name string) Param {
	name = strings.ReplaceAll(name, "-", "_")
	p := Param{Name: name}
	p.Raw, p.Given = cmdlineParam(f.Cmdline, name)
	bp, ok := boolParams[name]
	if !ok {
		p.Why = "not on the command line"
		if p.Given {
			p.Why = "on the command line: " + paramText(name, p.Raw, true)
		}
		return p
	}
	p.Bool = true
	cfg := f.KernelConfig
	if cfg == nil {
		p.Why = "kernel config " + f.KernelConfigSource + ": cannot tell " + name + "'s state"
		return p
	}
	if bp.needs != "" && cfg[bp.needs] != "y" {
		p.Known, p.Missing = true, bp.needs
		p.Why = "off: " + bp.needs + " is " + configText(cfg, bp.needs) + " in this kernel, so " + name + " has no effect"
		return p
	}
	v, valid := ParseBool(p.Raw)
	switch {
	case p.Given && valid:
		p.On, p.Why = v, paramText(name, p.Raw, true)+" on the command line"
	default:
		d, have := cfg[bp.dflt]
		p.On = d == "y" || (!have && bp.absentOn)
		p.Why = "not on the command line, so the default, " + bp.dflt + " (" + configText(cfg, bp.dflt) + "): " + onOff(p.On)
		if p.Given {
			p.Why = paramText(name, p.Raw, true) + " is no value the kernel accepts (kstrtobool), so the default, " +
				bp.dflt + " (" + configText(cfg, bp.dflt) + "): " + onOff(p.On)
		}
	}
	if pp, _ := cmdlineParam(f.Cmdline, "page_poison"); bp.poison && p.On && cfg["CONFIG_PAGE_POISONING"] == "y" {
		if on, _ := ParseBool(pp); on {
			p.On, p.Why = false, p.Why+", but page_poison="+pp+" takes precedence: off"
		}
	}
	p.Known = true
	return p
}

// paramText is "name=value", or "name" for a bare flag.
func paramText(name, value string, given bool) string {
	if !given || value == "" {
		return name
	}
	return name + "=" + value
}

// configText is an option's state for a person: "y", "not set", "absent".
func configText(cfg map[string]string, name string) string {
	switch v, ok := cfg[name]; {
	case !ok:
		return "absent"
	case v == "n":
		return "not set"
	default:
		return v
	}
}

func onOff(b bool) string {
	if b {
		return "on"
	}
	return "off"
}

// ReadKernelConfig adds the options named in names (exact CONFIG_ names)
// to f.KernelConfig, read from the same place Gather read it
// (/proc/config.gz, else /boot/config-<release>): Gather keeps only the
// options of kernelConfigKeys, and a scenario's requirements may name
// others. An option the config lacks stays absent from the map (for a
// requirement: not set). Nothing happens when the config is not readable
// (KernelConfigSource says why).
func (f *Facts) ReadKernelConfig(names []string) {
	f.readKernelConfigFS(os.DirFS("/"), names)
}

func (f *Facts) readKernelConfigFS(fsys fs.FS, names []string) {
	if len(names) == 0 {
		return
	}
	m, src := readKernelConfig(fsys, f.Kernel, names)
	if m == nil {
		return
	}
	if f.KernelConfig == nil {
		f.KernelConfig = map[string]string{}
	}
	maps.Copy(f.KernelConfig, m)
	f.KernelConfigSource = src
}
