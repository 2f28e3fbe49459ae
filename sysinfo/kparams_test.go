package sysinfo

import (
	"strings"
	"testing"
	"testing/fstest"

	"github.com/rtload/rtload/results"
)

func TestParseBool(t *testing.T) {
	for s, want := range map[string]bool{"1": true, "y": true, "Y": true, "yes": true, "on": true, "ON": true,
		"0": false, "n": false, "N": false, "off": false, "of": false} {
		if v, ok := ParseBool(s); !ok || v != want {
			t.Errorf("ParseBool(%q) = %v, %v; want %v", s, v, ok, want)
		}
	}
	for _, s := range []string{"", "o", "true", "2", "maybe", "enable"} {
		if _, ok := ParseBool(s); ok {
			t.Errorf("ParseBool(%q) accepted", s)
		}
	}
}

// TestKernelParam works out each boolean parameter's state from the
// command line and the kernel config, as the kernel does.
func TestKernelParam(t *testing.T) {
	hardened := map[string]string{"CONFIG_HARDENED_USERCOPY": "y"}
	tests := []struct {
		name, cmdline, param string
		config               map[string]string
		known, on            bool
		why                  string // substring
	}{
		{"given on", "quiet init_on_alloc=1", "init_on_alloc", map[string]string{}, true, true, "init_on_alloc=1 on the command line"},
		{"given off", "init_on_alloc=off", "init_on_alloc", map[string]string{"CONFIG_INIT_ON_ALLOC_DEFAULT_ON": "y"}, true, false, "init_on_alloc=off on the command line"},
		{"dash spelling", "init-on-free=y", "init_on_free", map[string]string{}, true, true, "init_on_free=y on the command line"},
		{"last one counts", "init_on_alloc=1 init_on_alloc=0", "init_on_alloc", map[string]string{}, true, false, "init_on_alloc=0"},
		{"after -- is init's", "quiet -- init_on_alloc=1", "init_on_alloc", map[string]string{}, true, false, "not on the command line"},
		{"absent: config default y", "quiet", "init_on_alloc", map[string]string{"CONFIG_INIT_ON_ALLOC_DEFAULT_ON": "y"}, true, true,
			"not on the command line, so the default, CONFIG_INIT_ON_ALLOC_DEFAULT_ON (y): on"},
		{"absent: config default not set", "quiet", "init_on_free", map[string]string{"CONFIG_INIT_ON_FREE_DEFAULT_ON": "n"}, true, false,
			"CONFIG_INIT_ON_FREE_DEFAULT_ON (not set): off"},
		{"absent: an older kernel", "", "init_on_alloc", map[string]string{}, true, false, "CONFIG_INIT_ON_ALLOC_DEFAULT_ON (absent): off"},
		{"a value the kernel refuses", "init_on_alloc=maybe", "init_on_alloc", map[string]string{"CONFIG_INIT_ON_ALLOC_DEFAULT_ON": "y"}, true, true,
			"init_on_alloc=maybe is no value the kernel accepts (kstrtobool), so the default"},
		{"page poisoning wins", "init_on_free=1 page_poison=1", "init_on_free", map[string]string{"CONFIG_PAGE_POISONING": "y"}, true, false,
			"but page_poison=1 takes precedence: off"},
		{"page_poison without the option", "init_on_free=1 page_poison=1", "init_on_free", map[string]string{}, true, true, "init_on_free=1"},
		{"usercopy not built", "hardened_usercopy=on", "hardened_usercopy", map[string]string{"CONFIG_HARDENED_USERCOPY": "n"}, true, false,
			"off: CONFIG_HARDENED_USERCOPY is not set in this kernel, so hardened_usercopy has no effect"},
		{"usercopy before its default option", "", "hardened_usercopy", hardened, true, true, "CONFIG_HARDENED_USERCOPY_DEFAULT_ON (absent): on"},
		{"usercopy default off", "", "hardened_usercopy", map[string]string{"CONFIG_HARDENED_USERCOPY": "y", "CONFIG_HARDENED_USERCOPY_DEFAULT_ON": "n"}, true, false, "(not set): off"},
		{"usercopy turned off", "hardened_usercopy=off", "hardened_usercopy", hardened, true, false, "hardened_usercopy=off on the command line"},
		{"config unreadable", "", "init_on_alloc", nil, false, false, "cannot tell init_on_alloc's state"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := &Facts{Env: results.Env{Cmdline: tt.cmdline, KernelConfig: tt.config, KernelConfigSource: "not readable: fixture"}}
			p := f.KernelParam(tt.param)
			if !p.Bool || p.Known != tt.known || p.On != tt.on || !strings.Contains(p.Why, tt.why) {
				t.Errorf("%+v\nwant known %v on %v, why containing %q", p, tt.known, tt.on, tt.why)
			}
		})
	}
	if p := (&Facts{Env: results.Env{KernelConfig: map[string]string{}}}).KernelParam("hardened_usercopy"); p.Missing != "CONFIG_HARDENED_USERCOPY" || p.On {
		t.Errorf("usercopy without its option: %+v", p)
	}
	if DefaultParam("CONFIG_INIT_ON_FREE_DEFAULT_ON") != "init_on_free" || DefaultParam("CONFIG_HZ") != "" {
		t.Errorf("DefaultParam")
	}
	// A parameter without a known default is text: given or not.
	f := &Facts{Env: results.Env{Cmdline: "nosmt mitigations=auto,nosmt"}}
	if p := f.KernelParam("mitigations"); p.Bool || !p.Given || p.Raw != "auto,nosmt" {
		t.Errorf("mitigations: %+v", p)
	}
	if p := f.KernelParam("nosmt"); !p.Given || p.Raw != "" {
		t.Errorf("nosmt: %+v", p)
	}
	if p := f.KernelParam("pti"); p.Given || p.Why != "not on the command line" {
		t.Errorf("pti: %+v", p)
	}
}

// TestReadKernelConfigNames adds options Gather's list lacks.
func TestReadKernelConfigNames(t *testing.T) {
	root := fstest.MapFS{"boot/config-6.8.0-test": {Data: []byte("CONFIG_HZ=250\nCONFIG_FOO=m\n# CONFIG_BAR is not set\n")}}
	f := &Facts{Env: results.Env{Kernel: "6.8.0-test", KernelConfig: map[string]string{"CONFIG_HZ": "250"}}}
	f.readKernelConfigFS(root, []string{"CONFIG_FOO", "CONFIG_BAR", "CONFIG_NOPE"})
	if got := f.KernelConfig; got["CONFIG_FOO"] != "m" || got["CONFIG_BAR"] != "n" || got["CONFIG_HZ"] != "250" || len(got) != 3 {
		t.Errorf("KernelConfig = %v", got)
	}
	if f.KernelConfigSource != "/boot/config-6.8.0-test" {
		t.Errorf("source %q", f.KernelConfigSource)
	}
	g := &Facts{Env: results.Env{Kernel: "6.8.0-test", KernelConfigSource: "not readable: x"}}
	g.readKernelConfigFS(fstest.MapFS{}, []string{"CONFIG_FOO"})
	if g.KernelConfig != nil || g.KernelConfigSource != "not readable: x" {
		t.Errorf("unreadable config changed the facts: %+v", g)
	}
}
