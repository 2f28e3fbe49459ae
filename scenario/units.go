package scenario

import (
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// String formats d as a Go duration ("10ms").
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalText encodes d as a Go duration string ("10ms"), so JSON and YAML
// output stays readable and round-trips through UnmarshalText.
func (d Duration) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText decodes a Go duration string ("500ms", "1m30s") or a plain "0".
func (d *Duration) UnmarshalText(text []byte) error {
	v, p := parseDuration(string(text))
	if p != nil {
		return fmt.Errorf("%s (allowed: %s)", p.msg, p.allowed)
	}
	*d = v
	return nil
}

const durationAllowed = "Go duration such as 500ms, 10s, 1m30s"

func parseDuration(s string) (Duration, *problem) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, &problem{msg: fmt.Sprintf("invalid duration %q", s), allowed: durationAllowed}
	}
	return Duration(d), nil
}

// sizeUnits maps a lower-case unit suffix to its multiplier: SI units are
// powers of 1000 ("4KB" = 4000), IEC units powers of 1024 ("256KiB").
var sizeUnits = []struct {
	name string
	mult uint64
}{
	{"", 1}, {"b", 1},
	{"kb", 1e3}, {"mb", 1e6}, {"gb", 1e9}, {"tb", 1e12},
	{"kib", 1 << 10}, {"mib", 1 << 20}, {"gib", 1 << 30}, {"tib", 1 << 40},
}

const sizeAllowed = "bytes with optional unit B, KB, MB, GB, TB, KiB, MiB, GiB, TiB"

// String formats n with the largest IEC unit that divides it exactly, then
// SI, else bytes: 262144 → "256KiB", 4000 → "4KB", 64 → "64B".
func (n Size) String() string {
	if n != 0 {
		for _, u := range []struct {
			name string
			mult uint64
		}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}} {
			if uint64(n)%u.mult == 0 {
				return strconv.FormatUint(uint64(n)/u.mult, 10) + u.name
			}
		}
	}
	return strconv.FormatUint(uint64(n), 10) + "B"
}

// MarshalText encodes n as String does ("256KiB").
func (n Size) MarshalText() ([]byte, error) { return []byte(n.String()), nil }

// UnmarshalText decodes "64", "64B", "256KiB", "1MiB", "4KB" (= 4000).
func (n *Size) UnmarshalText(text []byte) error {
	v, p := parseSize(string(text))
	if p != nil {
		return fmt.Errorf("%s (allowed: %s)", p.msg, p.allowed)
	}
	*n = v
	return nil
}

func parseSize(s string) (Size, *problem) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if strings.HasPrefix(t, "-") {
		return 0, &problem{msg: fmt.Sprintf("negative size %q", s), allowed: sizeAllowed}
	}
	if i == 0 {
		return 0, &problem{msg: fmt.Sprintf("invalid size %q", s), allowed: sizeAllowed}
	}
	num, err := strconv.ParseUint(t[:i], 10, 64)
	if err != nil {
		return 0, &problem{msg: fmt.Sprintf("size %q too large", s), allowed: sizeAllowed}
	}
	unit := strings.ToLower(strings.TrimSpace(t[i:]))
	for _, u := range sizeUnits {
		if u.name == unit {
			hi, lo := bits.Mul64(num, u.mult)
			if hi != 0 {
				return 0, &problem{msg: fmt.Sprintf("size %q too large", s), allowed: sizeAllowed}
			}
			return Size(lo), nil
		}
	}
	return 0, &problem{msg: fmt.Sprintf("invalid size %q", s), allowed: sizeAllowed}
}

// Percent is a share in percent: 0.5 means 0.5 %. It decodes from "0.5"
// or "0.5%", and encodes to JSON as a plain number.
type Percent float64

// String formats p as "0.5%".
func (p Percent) String() string { return strconv.FormatFloat(float64(p), 'g', -1, 64) + "%" }

// parseText decodes "0.5" or "0.5%" (a finite number, in percent).
func (p *Percent) parseText(s string) *problem {
	t := strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(s), "%"))
	f, err := strconv.ParseFloat(t, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return &problem{msg: fmt.Sprintf("expected a percentage, got %q", s), allowed: "a number of percent, e.g. 0.5 or 0.5%"}
	}
	*p = Percent(f)
	return nil
}
