package session

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/scenario"
)

// A received baseline is data, not orders. `rtload check BASE` runs the
// scenario BASE's summary.json recorded, as root; a baseline from
// elsewhere (a colleague's, a CI artefact, a fleet host's) could ask for
// file-write noise into a directory of its author's choosing, real-time
// threads at priority 99, or a run of hours. So before running it check
// prints what the scenario will do on this machine, and runs it only
//   - with --trust-baseline, or
//   - when the baseline is the invoking user's own (summary.json and its
//     directory owned by root or the invoking user, the directory not
//     writable by group or others) and stdin is a terminal, after the user
//     answers yes.
// Otherwise (another owner, or no terminal to ask on: a script, CI, git
// bisect run) it refuses, exit 2, having run nothing. Naming a scenario
// (rtload check BASE SCENARIO) runs that scenario instead, and needs none
// of this.

// errNotConfirmed is a refusal to run a baseline's scenario.
var errNotConfirmed = errors.New("the baseline's scenario was not run")

// consentBaseline prints to w what running the baseline's scenario
// (spec, expanded into trials) will do, and decides whether check may:
// nil to run it, else a usage error saying why not and what to do.
// foreign is results.SummaryStat.Foreign ("" for the user's own), tty
// whether in is a terminal to ask on, trust --trust-baseline.
func consentBaseline(w io.Writer, in io.Reader, base, foreign string, spec *scenario.Spec, trials []scenario.Trial, tty, trust bool) error {
	if foreign != "" {
		fmt.Fprintf(w, "rtload check: the baseline %s was not written by you (%s).\n", termsafe.Escape(base), foreign)
	}
	fmt.Fprintf(w, "rtload check: the baseline's scenario will run on this machine as uid %s:\n", uidName())
	io.WriteString(w, describeOrders(spec, trials))
	switch {
	case trust:
		fmt.Fprintln(w, "rtload check: running it (--trust-baseline)")
		return nil
	case foreign != "":
		return UsageError{fmt.Errorf("%w: its owner is not you; read what it runs above, then give --trust-baseline to run it, or name a scenario of your own (rtload check %s SCENARIO)", errNotConfirmed, termsafe.Escape(base))}
	case !tty:
		return UsageError{fmt.Errorf("%w: stdin is not a terminal to ask on; give --trust-baseline to run it without asking (scripts, CI, git bisect run), or name a scenario (rtload check %s SCENARIO)", errNotConfirmed, termsafe.Escape(base))}
	}
	fmt.Fprint(w, "Run it? [y/N] ")
	line, _ := bufio.NewReader(io.LimitReader(in, 256)).ReadString('\n')
	switch strings.ToLower(strings.TrimSpace(line)) {
	case "y", "yes":
		return nil
	}
	return UsageError{fmt.Errorf("%w: not confirmed", errNotConfirmed)}
}

// uidName is the effective uid, "0 (root)" for root.
func uidName() string {
	if uid := os.Geteuid(); uid != 0 {
		return strconv.Itoa(uid)
	}
	return "0 (root)"
}

// describeOrders lists what a run of spec's trials asks of the machine:
// trials and their length, and for each variant (its overrides applied)
// the real-time threads and their CPUs and priorities, the noise and
// probes with the directories they write in, the endpoints it creates and
// what else it changes (PM QoS, housekeeping confinement, profiling). Every
// string from the spec is escaped for the terminal.
func describeOrders(spec *scenario.Spec, trials []scenario.Trial) string {
	var b strings.Builder
	e := termsafe.Escape
	variants := map[string]bool{}
	for _, t := range trials {
		variants[t.Variant] = true
	}
	fmt.Fprintf(&b, "  scenario %s: %s (%s)", e(spec.Name), plural(len(trials), "trial"), plural(len(variants), "variant"))
	if spec.Duration == 0 {
		b.WriteString(", a soak: until stopped\n")
	} else {
		all := time.Duration(spec.Duration+spec.Warmup) * time.Duration(len(trials))
		fmt.Fprintf(&b, " of %v (+%v warm-up) each, %v in all\n", time.Duration(spec.Duration), time.Duration(spec.Warmup), all.Round(10*time.Millisecond))
	}
	seen := map[string]bool{}
	for _, t := range trials {
		if seen[t.Variant] {
			continue
		}
		seen[t.Variant] = true
		s := &t.Spec
		fmt.Fprintf(&b, "  variant %s:\n", e(t.Variant))
		for _, r := range s.Readers {
			fmt.Fprintf(&b, "    reader %s: %s on CPU %s, every %v\n", e(r.Name), sched(r.Policy.String(), r.Priority, 0), r.CPU, time.Duration(r.Period))
		}
		for i, n := range s.Noise {
			fmt.Fprintf(&b, "    noise[%d] %s: %s on CPUs %s, %s", i, n.Kind, plural(n.Threads, "thread"), cpus(n.CPUs), sched(n.Policy.String(), n.Priority, n.Nice))
			if n.Kind == scenario.NoiseFileWrite {
				fmt.Fprintf(&b, ", writes files in %s", dirName(n.Dir))
			}
			b.WriteString("\n")
		}
		for _, p := range s.Probes {
			fmt.Fprintf(&b, "    probe %s: %s, %s", e(p.Name), p.Kind, sched(p.Policy.String(), p.Priority, 0))
			if p.CPU != nil {
				fmt.Fprintf(&b, " on CPU %d", *p.CPU)
			}
			if p.Kind == scenario.ProbeFileWrite {
				fmt.Fprintf(&b, ", writes files in %s", dirName(p.Dir))
			}
			b.WriteString("\n")
		}
		for _, ep := range s.Endpoints {
			fmt.Fprintf(&b, "    endpoint %s: %s, %d sockets", e(ep.Name), ep.Kind, ep.Count)
			if ep.Devices > 0 {
				fmt.Fprintf(&b, ", %d tap devices in a network namespace of rtload's own", ep.Devices)
			}
			b.WriteString("\n")
		}
		for _, tr := range s.Traffic {
			fmt.Fprintf(&b, "    traffic to %s: %g msg/s of %s\n", e(tr.Endpoint), rate(tr), tr.Size)
		}
	}
	if spec.CPUDMALatency >= 0 {
		fmt.Fprintf(&b, "  holds cpu_dma_latency at %d µs during each trial\n", spec.CPUDMALatency)
	}
	if len(spec.HousekeepingCPUs) > 0 {
		fmt.Fprintf(&b, "  confines rtload's other threads to CPUs %s\n", cpus(spec.HousekeepingCPUs))
	}
	if spec.AllowRTNoise {
		b.WriteString("  allows real-time noise (allow_rt_noise)\n")
	}
	if spec.Profile.Enabled {
		fmt.Fprintf(&b, "  samples the readers with perf_event (%s)\n", e(fmt.Sprint(spec.Profile.Event)))
	}
	return b.String()
}

// sched names a policy as sched(7) does, with its priority (real-time)
// or nice value.
func sched(policy string, prio, nice int) string {
	switch policy {
	case "fifo", "rr":
		return fmt.Sprintf("SCHED_%s priority %d", strings.ToUpper(policy), prio)
	case "":
		return "SCHED_OTHER"
	}
	return fmt.Sprintf("SCHED_%s nice %d", strings.ToUpper(policy), nice)
}

// dirName is a file-write directory as the engine uses it.
func dirName(dir string) string {
	if dir == "" {
		return "a temporary directory (removed after)"
	}
	return termsafe.Escape(dir)
}

// cpus prints a CPU list, "any" when empty.
func cpus(c []int) string {
	if len(c) == 0 {
		return "any"
	}
	s := slices.Clone(c)
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = strconv.Itoa(v)
	}
	return strings.Join(parts, ",")
}

// rate is a traffic entry's messages per second.
func rate(t scenario.Traffic) float64 {
	if t.Rate > 0 {
		return t.Rate
	}
	if t.Interval > 0 {
		return float64(time.Second) / float64(t.Interval)
	}
	return 0
}

// plural is "1 trial", "3 trials".
func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return strconv.Itoa(n) + " " + what + "s"
}
