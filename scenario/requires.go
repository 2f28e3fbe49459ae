package scenario

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// Requires is what a machine must have for a scenario's results to mean
// what it says: "this run was on the hardened kernel" as a checked fact,
// not a label. Every list may be empty. The engine's Requirements
// (engine/preflight.go) checks it against sysinfo.Facts; this package only
// checks the spelling.
type Requires struct {
	// Config are kernel config options with their value,
	// "CONFIG_HARDENED_USERCOPY=y", "CONFIG_INIT_ON_ALLOC_DEFAULT_ON=n",
	// "CONFIG_HZ=1000", read from /proc/config.gz or
	// /boot/config-$(uname -r). "=n" is met by "# … is not set" and by an
	// option absent from the config (its dependencies are off).
	Config []ConfigOption `yaml:"config" json:"config,omitempty"`
	// Cmdline are kernel command-line parameters, "init_on_alloc=1",
	// "hardened_usercopy=off", or a bare flag ("nosmt"), read from
	// /proc/cmdline. For the boolean parameters whose default rtload
	// knows (init_on_alloc, init_on_free, hardened_usercopy,
	// randomize_kstack_offset) the value is compared as the kernel
	// parses it (kstrtobool: 1/y/on = 0/n/off negated), and a parameter
	// left off the command line has its kernel config default
	// (init_on_alloc absent = CONFIG_INIT_ON_ALLOC_DEFAULT_ON). Others
	// compare as text and must be on the command line. '-' and '_' are
	// the same in names, as in the kernel.
	Cmdline []CmdlineParam `yaml:"cmdline" json:"cmdline,omitempty"`
	// Kernel is a version range for uname -r, one or more comparisons
	// joined by commas: ">= 5.10", ">= 5.4, < 6.2". Operators >=, >, <=,
	// <, ==, !=; versions of one to three numbers ("6", "5.10", "5.4.0").
	// The release's leading numbers count: "6.1.0-18-amd64" is 6.1.0.
	Kernel VersionRange `yaml:"kernel" json:"kernel,omitempty"`
	// Features the run needs: tun (/dev/net/tun), cycles (the PMU's
	// cycle counter, for clock: cycles), counters (hardware counters,
	// PERF_TYPE_HARDWARE, for readers' counters). Each at most once.
	Features []Feature `yaml:"features" json:"features,omitempty"`
	// CPUs is the least number of CPUs this process may use (its
	// sched_getaffinity(2) mask, a container's cpuset); 0 = any.
	CPUs int `yaml:"cpus" json:"cpus,omitempty"`
}

// Empty reports whether r requires nothing.
func (r Requires) Empty() bool {
	return len(r.Config) == 0 && len(r.Cmdline) == 0 && r.Kernel == "" && len(r.Features) == 0 && r.CPUs == 0
}

// ConfigNames returns the CONFIG_ names r.Config requires, in order.
func (r Requires) ConfigNames() []string {
	var names []string
	for _, c := range r.Config {
		names = append(names, c.Name())
	}
	return names
}

// Feature is one machine feature a scenario may require: tun, cycles or
// counters.
type Feature = enum[featureKind]

// The features.
const FeatureTun, FeatureCycles, FeatureCounters Feature = 1, 2, 3

type featureKind struct{}

var featureTable = enumTable{"feature", []string{"", "tun", "cycles", "counters"}}

func (featureKind) table() *enumTable { return &featureTable }

// ConfigOption is one kernel config requirement, "CONFIG_NAME=value",
// stored as written (Name and Value split it).
type ConfigOption string

var configName = regexp.MustCompile(`^CONFIG_[A-Za-z0-9_]+$`)

const configAllowed = `CONFIG_NAME=value, e.g. CONFIG_HARDENED_USERCOPY=y, CONFIG_INIT_ON_ALLOC_DEFAULT_ON=n, CONFIG_HZ=1000`

// Name is the option's name ("CONFIG_HARDENED_USERCOPY").
func (c ConfigOption) Name() string { n, _, _ := strings.Cut(string(c), "="); return n }

// Value is the required value ("y", "m", "n", "1000", a string).
func (c ConfigOption) Value() string { _, v, _ := strings.Cut(string(c), "="); return v }

func (c *ConfigOption) parseText(s string) *problem {
	name, value, ok := strings.Cut(strings.TrimSpace(s), "=")
	name, value = strings.TrimSpace(name), strings.TrimSpace(value)
	if uq, err := strconv.Unquote(value); err == nil {
		value = uq
	}
	switch {
	case !ok || value == "":
		return &problem{msg: fmt.Sprintf("config requirement %q has no value", s), allowed: configAllowed}
	case !configName.MatchString(name):
		return &problem{msg: fmt.Sprintf("%q is not a kernel config option name", name), allowed: configAllowed}
	}
	*c = ConfigOption(name + "=" + value)
	return nil
}

// CmdlineParam is one kernel command-line requirement, "name=value" or a
// bare "name", stored with '-' in the name written as '_'.
type CmdlineParam string

var paramName = regexp.MustCompile(`^[A-Za-z0-9_.]+$`)

const paramAllowed = `name=value or a bare flag, e.g. init_on_alloc=1, hardened_usercopy=off, nosmt`

// Name is the parameter's name with '_' for '-' ("init_on_alloc").
func (p CmdlineParam) Name() string { n, _, _ := strings.Cut(string(p), "="); return n }

// Value is the required value; "" for a bare flag (HasValue false).
func (p CmdlineParam) Value() string { _, v, _ := strings.Cut(string(p), "="); return v }

// HasValue reports whether p is name=value rather than a bare flag.
func (p CmdlineParam) HasValue() bool { return strings.Contains(string(p), "=") }

func (p *CmdlineParam) parseText(s string) *problem {
	name, value, ok := strings.Cut(strings.TrimSpace(s), "=")
	name = strings.ReplaceAll(strings.TrimSpace(name), "-", "_")
	switch {
	case !paramName.MatchString(name):
		return &problem{msg: fmt.Sprintf("%q is not a kernel parameter name", name), allowed: paramAllowed}
	case ok && (value == "" || strings.ContainsAny(value, " \t\"")):
		return &problem{msg: fmt.Sprintf("parameter %s: value %q is empty or holds spaces or quotes", name, value), allowed: paramAllowed}
	}
	if ok {
		name += "=" + value
	}
	*p = CmdlineParam(name)
	return nil
}

// VersionRange is a kernel version requirement such as ">= 5.10" or
// ">= 5.4, < 6.2", stored in a canonical spelling (">= 5.10, < 6.2").
type VersionRange string

// Version is a kernel version's first three numbers (5.10 is {5, 10, 0}).
type Version [3]int

// String formats v as "5.10.0".
func (v Version) String() string { return fmt.Sprintf("%d.%d.%d", v[0], v[1], v[2]) }

// Compare returns -1, 0 or +1 as v is below, equal to or above w.
func (v Version) Compare(w Version) int { return slices.Compare(v[:], w[:]) }

const versionAllowed = `comparisons joined by commas: >= 5.10, or >= 5.4, < 6.2 (operators >= > <= < == !=)`

// versionOps in match order: two-character operators first.
var versionOps = []string{">=", "<=", "==", "!=", ">", "<"}

// comparison is one operator and version of a VersionRange.
type comparison struct {
	op, text string // text: the version as written
	v        Version
}

// parseRange splits a range into its comparisons.
func parseRange(s string) ([]comparison, *problem) {
	var out []comparison
	for part := range strings.SplitSeq(s, ",") {
		part = strings.TrimSpace(part)
		var c comparison
		for _, op := range versionOps {
			if rest, ok := strings.CutPrefix(part, op); ok {
				c.op, part = op, strings.TrimSpace(rest)
				break
			}
		}
		if c.op == "" {
			return nil, &problem{msg: fmt.Sprintf("kernel %q: %q has no comparison operator", s, part), allowed: versionAllowed}
		}
		v, n, ok := ParseVersion(part)
		if !ok || n != len(part) {
			return nil, &problem{msg: fmt.Sprintf("kernel %q: %q is not a version", s, part), allowed: versionAllowed}
		}
		c.v, c.text = v, part
		out = append(out, c)
	}
	return out, nil
}

func (r *VersionRange) parseText(s string) *problem {
	cs, p := parseRange(s)
	if p != nil {
		return p
	}
	var parts []string
	for _, c := range cs {
		parts = append(parts, c.op+" "+c.text)
	}
	*r = VersionRange(strings.Join(parts, ", "))
	return nil
}

// Allows reports whether kernel release rel (uname -r, "6.1.0-18-amd64")
// is in the range; an empty range allows every release. ok is false when
// rel does not start with a version.
func (r VersionRange) Allows(rel string) (allowed, ok bool) {
	if r == "" {
		return true, true
	}
	v, _, good := ParseVersion(rel)
	if !good {
		return false, false
	}
	cs, p := parseRange(string(r))
	if p != nil {
		return false, false
	}
	for _, c := range cs {
		cmp := v.Compare(c.v)
		if !map[string]bool{">=": cmp >= 0, ">": cmp > 0, "<=": cmp <= 0, "<": cmp < 0, "==": cmp == 0, "!=": cmp != 0}[c.op] {
			return false, true
		}
	}
	return true, true
}

// ParseVersion reads up to three dot-separated numbers at the start of s
// ("6.1.0-18-amd64" → 6.1.0; "5.10" → 5.10.0) and returns them with the
// number of bytes read; ok is false when s does not start with a number.
func ParseVersion(s string) (v Version, n int, ok bool) {
	digit := func(i int) bool { return i < len(s) && s[i] >= '0' && s[i] <= '9' }
	for i := range 3 {
		j := n
		for digit(j) {
			j++
		}
		if j == n || j-n > 9 {
			break
		}
		v[i], _ = strconv.Atoi(s[n:j])
		n, ok = j, true
		if i == 2 || j >= len(s) || s[j] != '.' || !digit(j+1) {
			break
		}
		n++ // the dot before the next number
	}
	return v, n, ok
}
