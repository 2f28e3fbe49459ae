package profile

import (
	"fmt"
	"math"
	"strings"
)

// Text renders the attribution for `rtload explain` and `rtload
// compare`: the measured difference and any notes on it; the entry paths and the cost of
// their own code; the work only one side does, one line per seat
// ("+612 ns/call (95% 580 to 640) in ___sys_recvmsg →
// copy_msghdr_from_user (1203 vs 0 samples, 250 vs 0 self)"); the shared
// path's different cost, with its seats or why it has none (within
// sampling error, or spread over its functions); the cost of interrupts
// and preemption during the drain (load, not work); how much the seats
// explain or why the profile cannot; and the known hooks with their
// option's state.
func (at Attribution) Text() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s − %s: %s ns/call in the drain (%.0f vs %.0f ns/call measured; %d vs %d drain samples)\n",
		at.A, at.B, signed(at.Total), at.CallNsA, at.CallNsB, at.SamplesA, at.SamplesB)
	for _, n := range at.Notes {
		fmt.Fprintf(&b, "  note: %s\n", n)
	}
	at.entryText(&b)
	own, shared := at.seatsOf(SeatOwn), at.seatsOf(SeatShared)
	if len(own) > 0 || at.Own.Value != 0 {
		fmt.Fprintf(&b, "  work only one side does: %s ns/call (95%% %s to %s)%s\n",
			signed(at.Own.Value), num(at.Own.Lo), num(at.Own.Hi), at.verdict(at.Own, len(own)))
		seatLines(&b, own)
	}
	if at.Unexplained == "" || !strings.HasPrefix(at.Unexplained, "too few") {
		fmt.Fprintf(&b, "  shared path, different cost: %s ns/call (95%% %s to %s)%s\n",
			signed(at.Shared.Value), num(at.Shared.Lo), num(at.Shared.Hi), at.verdict(at.Shared, len(shared)))
		seatLines(&b, shared)
	}
	if at.InterruptedA+at.InterruptedB > 0 {
		iv := at.Interrupted
		fmt.Fprintf(&b, "  interrupts, softirqs and preemption during the drain: %s ns/call (95%% %s to %s; %d vs %d samples)",
			signed(iv.Value), num(iv.Lo), num(iv.Hi), at.InterruptedA, at.InterruptedB)
		if iv.Significant() {
			b.WriteString(": the machine's load, not either side's work\n")
		} else {
			b.WriteString(": within sampling error\n")
		}
	}
	if at.Unexplained != "" {
		fmt.Fprintf(&b, "  the profile cannot explain it: %s\n", at.Unexplained)
	} else {
		fmt.Fprintf(&b, "  these explain %.0f%% of the difference\n", 100*at.Explained)
	}
	for _, h := range at.Hooks {
		fmt.Fprintf(&b, "  %s (%s): %s ns/call (95%% %s to %s; %d vs %d samples); %s in %s's kernel",
			h.Option, h.What, signed(h.Diff.Value), num(h.Diff.Lo), num(h.Diff.Hi), h.SamplesA, h.SamplesB, h.StateA, at.A)
		if h.StateB != h.StateA {
			fmt.Fprintf(&b, ", %s in %s's", h.StateB, at.B)
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// entryText writes the entry paths, what pairs them and their own code.
func (at Attribution) entryText(b *strings.Builder) {
	e := at.Entry
	if len(e.PathsA) == 0 && len(e.PathsB) == 0 {
		return
	}
	via := e.Via
	more := ""
	if len(via) > 5 {
		via, more = via[:5], ", …"
	}
	fmt.Fprintf(b, "  entry paths (each variant's own road to the callees both reach: %s%s):\n", strings.Join(shortNames(via), ", "), more)
	for _, p := range []struct {
		name  string
		paths [][]string
	}{{at.A, e.PathsA}, {at.B, e.PathsB}} {
		var ps []string
		for _, path := range p.paths {
			ps = append(ps, strings.Join(shortNames(path), " → "))
		}
		fmt.Fprintf(b, "    %s: %s\n", p.name, strings.Join(ps, "; "))
	}
	fmt.Fprintf(b, "  the entry paths' own code: %s ns/call (95%% %s to %s; %d vs %d samples)%s",
		signed(e.Diff.Value), num(e.Diff.Lo), num(e.Diff.Hi), e.SamplesA, e.SamplesB, at.verdict(e.Diff, -1))
	for _, s := range []struct {
		name string
		fs   []FuncCount
	}{{at.A, e.SelfA}, {at.B, e.SelfB}} {
		var parts []string
		for _, f := range s.fs[:min(3, len(s.fs))] {
			parts = append(parts, fmt.Sprintf("%s %d", shortName(f.Func), f.Samples))
		}
		if len(parts) > 0 {
			fmt.Fprintf(b, "; %s: %s", s.name, strings.Join(parts, ", "))
		}
	}
	b.WriteByte('\n')
}

// verdict is what a part's total says when no seat explains it: "" when
// seats do (or seats is -1 and iv is significant), ": within sampling
// error" when iv includes 0, ": spread over its functions (…)" else.
func (at Attribution) verdict(iv Interval, seats int) string {
	switch {
	case !iv.Significant():
		return ": within sampling error"
	case seats != 0:
		return ""
	}
	return fmt.Sprintf(": spread over its functions (none differs beyond its sampling error by %s ns/call)", num(at.minShare*math.Abs(at.Total)))
}

func (at Attribution) seatsOf(k SeatKind) []Seat {
	var out []Seat
	for _, s := range at.Seats {
		if s.Kind == k {
			out = append(out, s)
		}
	}
	return out
}

func seatLines(b *strings.Builder, seats []Seat) {
	for _, s := range seats {
		path := s.Path
		if len(path) > 2 {
			path = path[len(path)-2:]
		}
		fmt.Fprintf(b, "    %s ns/call (95%% %s to %s) in %s (%d vs %d samples, %d vs %d self)",
			signed(s.Diff.Value), num(s.Diff.Lo), num(s.Diff.Hi), strings.Join(shortNames(path), " → "), s.SamplesA, s.SamplesB, s.SelfA, s.SelfB)
		if len(s.Callees) > 0 {
			var cs []string
			for _, c := range s.Callees {
				cs = append(cs, fmt.Sprintf("%s %s", shortName(c.Func), signed(c.Diff.Value)))
			}
			fmt.Fprintf(b, "; below it %s", strings.Join(cs, ", "))
		}
		for _, h := range s.Hooks {
			fmt.Fprintf(b, "; %s below it", h.Option)
		}
		b.WriteByte('\n')
	}
}

// shortName drops a Go function's import path up to its last '/'
// ("github.com/rtload/rtload/net/udp.(*RecvMsg).Recv" →
// "udp.(*RecvMsg).Recv"); kernel names have none.
func shortName(name string) string {
	if i := strings.LastIndexByte(name, '/'); i >= 0 {
		return name[i+1:]
	}
	return name
}

func shortNames(names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = shortName(n)
	}
	return out
}

// FormatDelta prints a signed difference the way Text does: one decimal
// below 10 in magnitude ("+3.4", "-0.8"), whole numbers above ("+418").
func FormatDelta(v float64) string { return signed(v) }

// FormatValue prints an unsigned value the same way ("9.8", "122").
func FormatValue(v float64) string { return num(v) }

func signed(v float64) string {
	if math.Abs(v) < 10 {
		return fmt.Sprintf("%+.1f", v)
	}
	return fmt.Sprintf("%+.0f", v)
}

func num(v float64) string {
	if math.Abs(v) < 10 {
		return fmt.Sprintf("%.1f", v)
	}
	return fmt.Sprintf("%.0f", v)
}
