package scenario

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
)

// Rounds is how many times the variant list runs: a count 1–MaxRounds,
// or RoundsAuto, written `rounds: auto`, for "until the 95% CI of the
// headline difference is as narrow as asked" (rtload run's --precision,
// --max-rounds and --max-time decide; compare/auto's Stop is the rule). It
// decodes from YAML and --set as a number or "auto", and encodes to JSON
// as a number, or "auto".
type Rounds int

// RoundsAuto is the value of `rounds: auto`.
const RoundsAuto Rounds = -1

// AutoRounds is how many rounds Expand gives a rounds: auto spec: the
// fewest an auto run makes (Welch's interval needs two per variant).
// The run itself expands more with ExpandRounds and stops early.
const AutoRounds = 2

const roundsAllowed = "1–1000, or auto"

// String returns "auto" or the number.
func (r Rounds) String() string {
	if r == RoundsAuto {
		return "auto"
	}
	return strconv.Itoa(int(r))
}

// MarshalText encodes r as String does.
func (r Rounds) MarshalText() ([]byte, error) { return []byte(r.String()), nil }

// MarshalJSON encodes a count as a JSON number (summary.json keeps its
// shape) and RoundsAuto as "auto".
func (r Rounds) MarshalJSON() ([]byte, error) {
	if r == RoundsAuto {
		return []byte(`"auto"`), nil
	}
	return strconv.AppendInt(nil, int64(r), 10), nil
}

// UnmarshalJSON accepts a number or the string "auto".
func (r *Rounds) UnmarshalJSON(b []byte) error {
	var s string
	if json.Unmarshal(b, &s) == nil {
		if p := r.parseText(s); p != nil {
			return fmt.Errorf("%s (allowed: %s)", p.msg, p.allowed)
		}
		return nil
	}
	var n int
	if err := json.Unmarshal(b, &n); err != nil {
		return fmt.Errorf("rounds: %w", err)
	}
	*r = Rounds(n)
	return nil
}

// parseText decodes "auto" or an integer; a count out of range decodes,
// and Validate reports it. r is left unchanged on failure.
func (r *Rounds) parseText(s string) *problem {
	t := strings.TrimSpace(s)
	if t == "auto" {
		*r = RoundsAuto
		return nil
	}
	n, err := strconv.ParseInt(t, 10, 32)
	if err != nil || n == int64(RoundsAuto) {
		return &problem{msg: fmt.Sprintf("expected an integer or auto, got %q", s), allowed: roundsAllowed}
	}
	*r = Rounds(n)
	return nil
}

// planned is the rounds Expand gives s.
func (r Rounds) planned() int {
	if r == RoundsAuto {
		return AutoRounds
	}
	return int(r)
}
