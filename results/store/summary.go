package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/record"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/safeio"
)

// listLimits are the element limits of lists by JSON field name, for the
// pre-pass over summaries and JSONL lines (safeio.Bounds).
var listLimits = map[string]int{
	"trials":          results.MaxTrials,
	"profiled_trials": results.MaxTrials,
	"readers":         results.MaxReaders,
	"probes":          results.MaxReaders,
	"traffic":         results.MaxReaders,
	"noise":           results.MaxReaders,
	"counts":          results.MaxBuckets,
	"wakeup_log":      results.MaxWakeupLogFiles,
	"profiles":        results.MaxProfiles,
}

// checkShape runs the pre-pass over a summary's data for type t, before
// json.Unmarshal builds anything. A syntax error ends it with
// safeio.ErrSyntax, for Unmarshal to report with its own message.
func checkShape(data []byte, name string, t reflect.Type) error {
	b := safeio.Bounds{Lists: listLimits, Limit: results.MaxSummaryMemory, What: "any summary rtload writes"}
	return b.Check(data, name, 1, t, 0)
}

// WriteSummary writes s as indented JSON to summary.json atomically (see
// Dir.WriteFile): a crash or a full disk leaves the previous summary.json,
// never a torn one. The file says results.SummaryVersion whatever
// s.Version holds (s itself is not modified). One summary is written at a
// time, encoded into a buffer the Dir keeps (up to maxKeptSummary bytes),
// so that a soak's checkpoints every few seconds do not each allocate the
// whole text anew (issue 12: with GC off that is what grows the heap).
func (d *Dir) WriteSummary(s *results.Summary) error {
	if s == nil {
		return errors.New("write summary: nil Summary")
	}
	out := *s
	out.Version = results.SummaryVersion
	// Unit is for readers of the JSON; TickUnit is the name.
	out.Clock.Unit = out.Clock.TickUnit()
	if len(out.Processes) > 0 {
		out.Processes = slices.Clone(out.Processes)
		for i := range out.Processes {
			out.Processes[i].Clock.Unit = out.Processes[i].Clock.TickUnit()
		}
	}
	d.sumMu.Lock()
	defer d.sumMu.Unlock()
	if d.sumEnc == nil {
		d.sumEnc = json.NewEncoder(&d.sumBuf)
		d.sumEnc.SetIndent("", "  ")
	}
	d.sumBuf.Reset()
	defer func() {
		if d.sumBuf.Cap() > maxKeptSummary {
			d.sumBuf, d.sumEnc = bytes.Buffer{}, nil
		}
	}()
	// Encode ends the text with a newline, as the file always has.
	if err := d.sumEnc.Encode(&out); err != nil {
		return fmt.Errorf("write summary %s: %w", filepath.Join(d.Path(), results.SummaryFile), err)
	}
	if err := d.WriteFile(results.SummaryFile, d.sumBuf.Bytes()); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// maxKeptSummary is the largest summary encoding buffer a Dir keeps
// between writes (bytes); a larger one is dropped after its write.
const maxKeptSummary = 4 << 20

// ReadSummary reads a Summary from path: a results directory (its
// summary.json is read) or the file itself, at most results.MaxSummaryBytes. The
// file is opened as Source.Open opens every results file: a symlink, a
// FIFO or a device is refused (ErrRefusedFile) before anything is read.
// See DecodeSummary for the format and errors.
func ReadSummary(path string) (*results.Summary, error) {
	s, _, err := ReadSummaryStat(path)
	return s, err
}

// ReadSummaryStat is ReadSummary, also saying where the summary came from.
func ReadSummaryStat(path string) (*results.Summary, safeio.FileStat, error) {
	var src *safeio.Source
	var f *os.File
	var fi fs.FileInfo
	var err error
	if safeio.IsDir(path) && filepath.Base(path) != results.SummaryFile {
		if src, err = safeio.OpenSource(path); err == nil {
			f, fi, err = src.Open(results.SummaryFile)
		}
		path = filepath.Join(path, results.SummaryFile)
	} else {
		src, f, fi, err = safeio.OpenInput(path)
	}
	if src != nil {
		defer src.Close()
	}
	if err != nil {
		if dir := filepath.Dir(path); errors.Is(err, fs.ErrNotExist) && IsSessions(dir) {
			err = fmt.Errorf("%w: %s is a sessions directory (run --append): name one of its sessions (%s) or compare it whole", err,
				termsafe.Escape(dir), termsafe.Escape(filepath.Join(dir, results.SessionName(1))))
		}
		return nil, safeio.FileStat{}, fmt.Errorf("read summary: %w", err)
	}
	defer f.Close()
	st := safeio.FileStat{Path: path, File: fi, Dir: src.Info()}
	if fi.Size() > results.MaxSummaryBytes {
		return nil, st, fmt.Errorf("%s: %d bytes, larger than the limit of %d MiB for a summary", termsafe.Escape(path), fi.Size(), results.MaxSummaryBytes>>20)
	}
	data, err := io.ReadAll(io.LimitReader(f, results.MaxSummaryBytes+1))
	if err != nil {
		return nil, st, fmt.Errorf("read summary: %w", err)
	}
	if len(data) > results.MaxSummaryBytes {
		return nil, st, fmt.Errorf("%s: larger than the limit of %d MiB for a summary", termsafe.Escape(path), results.MaxSummaryBytes>>20)
	}
	s, err := DecodeSummary(data, termsafe.Escape(path))
	return s, st, err
}

// DecodeSummary decodes summary.json bytes; name prefixes errors. Bad JSON
// gives an error naming name with line and column ("dir/summary.json:3:14:
// …"); a version other than 1, 2 or results.SummaryVersion, or a summary
// past the schema limits (results.MaxBuckets, results.MaxTrials, …, or a
// wakeup log named by a path rather than a file name) is an error.
//
// Older versions are read into today's types, and Version says which was
// read. Version 1: its per-call tick summaries, written under *_ns names,
// become TickStats, and each trial's list of wakeup logs is given to the
// readers it belongs to (all of them to a lone reader; with several, a log
// whose name results.WakeupLogBase gives for the reader). Version 2 and
// before: every trial is in process 0, and the trial marks of its five old
// fields become results.Trial.Marks. Plan is read from Spec for every
// version.
func DecodeSummary(data []byte, name string) (*results.Summary, error) {
	var head struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, jsonError(data, name, err)
	}
	if head.Version < 1 || head.Version > results.SummaryVersion {
		return nil, fmt.Errorf("%s: summary version %d not supported (this rtload reads versions 1 to %d)", name, head.Version, results.SummaryVersion)
	}
	// Limits on lists and memory hold before Unmarshal builds anything.
	if err := checkShape(data, name, reflect.TypeFor[results.Summary]()); err != nil && !errors.Is(err, safeio.ErrSyntax) {
		return nil, err
	}
	var s results.Summary
	if err := json.Unmarshal(data, &s); err != nil {
		return nil, jsonError(data, name, err)
	}
	if head.Version == 1 {
		var v1 struct {
			Trials []struct {
				WakeupLog []string `json:"wakeup_log"`
			} `json:"trials"`
		}
		if err := json.Unmarshal(data, &v1); err != nil {
			return nil, jsonError(data, name, err)
		}
		for i := range min(len(v1.Trials), len(s.Trials)) {
			assignV1Logs(&s.Trials[i], v1.Trials[i].WakeupLog)
		}
	}
	if err := legacyMarks(&s, data, name); err != nil {
		return nil, err
	}
	s.Plan = results.PlanOf(s.Spec)
	if err := check(&s); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return &s, nil
}

// jsonError names the position of a decoding error.
func jsonError(data []byte, name string, err error) error {
	var off int64 = -1
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		off = se.Offset
	case errors.As(err, &te):
		off = te.Offset
	}
	if off >= 0 {
		line, col := safeio.Position(data, off)
		return fmt.Errorf("%s:%d:%d: %w", name, line, col, err)
	}
	return fmt.Errorf("%s: %w", name, err)
}

// assignV1Logs gives a version 1 trial's wakeup logs to its readers.
func assignV1Logs(t *results.Trial, logs []string) {
	if len(t.Readers) == 1 {
		t.Readers[0].WakeupLog = logs
		return
	}
	for _, f := range logs {
		base := wakeupLogBaseOf(f)
		for i := range t.Readers {
			r := &t.Readers[i]
			if base == results.WakeupLogBase(t.Index, t.Variant, t.Round, r.Name) {
				r.WakeupLog = append(r.WakeupLog, f)
				break
			}
		}
	}
}

// check enforces the schema limits.
func check(s *results.Summary) error {
	if n := len(s.Trials) + len(s.ProfiledTrials); n > results.MaxTrials {
		return fmt.Errorf("%d trials, more than the limit of %d", n, results.MaxTrials)
	}
	if err := checkProfiles(s); err != nil {
		return err
	}
	var hh safeio.HDRHeader
	defer hh.Close()
	trials := make([]*results.Trial, 0, len(s.Trials)+len(s.ProfiledTrials))
	for i := range s.Trials {
		trials = append(trials, &s.Trials[i])
	}
	for i := range s.ProfiledTrials {
		trials = append(trials, &s.ProfiledTrials[i])
	}
	logs := map[string]string{} // a wakeup-log file (without .gz) → who lists it
	for i, t := range trials {
		if n := max(len(t.Readers), len(t.Probes), len(t.Traffic), len(t.Noise)); n > results.MaxReaders {
			return fmt.Errorf("trial %d: %d entries, more than the limit of %d", i, n, results.MaxReaders)
		}
		for j := range t.Readers {
			if err := checkReader(&t.Readers[j], &hh); err != nil {
				return fmt.Errorf("trial %d reader %d: %w", i, j, err)
			}
			// Each reader logs to its own files, each chunk once: a file
			// listed twice would be read twice (issue 34: one 2.4 MB chunk
			// listed 5 times by each of 2 readers was 32.8 M rows).
			who := fmt.Sprintf("trial %d reader %d", i, j)
			for _, f := range t.Readers[j].WakeupLog {
				k := strings.TrimSuffix(f, ".gz")
				if prev, ok := logs[k]; ok {
					return fmt.Errorf("%s: wakeup_log: %q is listed already (by %s): refused (each chunk of a reader's log is listed once, by its reader)", who, termsafe.Escape(f), prev)
				}
				logs[k] = who
			}
		}
		for j, tr := range t.Traffic {
			if err := hh.Check(tr.SendLag.HDR); err != nil {
				return fmt.Errorf("trial %d traffic %d: send_lag: %w", i, j, err)
			}
		}
		for j, p := range t.Probes {
			hists := []record.Snapshot{}
			for _, sz := range p.Sizes {
				hists = append(hists, sz.Hist)
			}
			if p.FileWrite != nil {
				hists = append(hists, p.FileWrite.Hist)
			}
			for _, h := range hists {
				if err := checkSnapshot(h); err != nil {
					return fmt.Errorf("trial %d probe %d: %w", i, j, err)
				}
			}
			encs := []string{}
			for _, sz := range p.Sizes {
				encs = append(encs, sz.PerWrite.HDR)
			}
			if p.FileWrite != nil {
				encs = append(encs, p.FileWrite.PerWrite.HDR)
			}
			for _, enc := range encs {
				if err := hh.Check(enc); err != nil {
					return fmt.Errorf("trial %d probe %d: per_write: %w", i, j, err)
				}
			}
		}
	}
	return nil
}

// checkReader enforces the schema limits of one reader.
func checkReader(r *results.Reader, hh *safeio.HDRHeader) error {
	hists := map[string]record.Snapshot{"per_call.all": r.PerCall.All, "per_call.data": r.PerCall.Data, "per_call.eagain": r.PerCall.EAGAIN}
	if c := r.PerCallClass; c != nil {
		hists["per_call_class.warm_eagain"], hists["per_call_class.cold_eagain"] = c.Warm, c.Cold
		hists["per_call_class.first"], hists["per_call_class.rest"] = c.First, c.Rest
	}
	for name, h := range hists {
		if err := checkSnapshot(h); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	encs := map[string]string{"per_call_ticks": r.PerCallTicks.HDR, "wakeup_latency": r.WakeupLatency.HDR,
		"drain": r.Drain.HDR, "one_way_delay": r.OneWayDelay.HDR}
	if c := r.Controls; c != nil {
		encs["controls.null_syscall"], encs["controls.user_loop"] = c.NullSyscall.HDR, c.UserLoop.HDR
	}
	for name, enc := range encs {
		if len(enc) > safeio.MaxHDRBytes {
			return fmt.Errorf("%s: hdr encoding of %d bytes, more than the limit of %d", name, len(enc), safeio.MaxHDRBytes)
		}
		if err := hh.Check(enc); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	if len(r.WakeupLog) > results.MaxWakeupLogFiles {
		return fmt.Errorf("wakeup_log: %d files, more than the limit of %d", len(r.WakeupLog), results.MaxWakeupLogFiles)
	}
	for _, f := range r.WakeupLog {
		if err := safeio.CheckName(f); err != nil || strings.HasPrefix(f, ".") {
			return fmt.Errorf("wakeup_log: %q is not a file name in the results directory", f)
		}
	}
	return nil
}

// checkSnapshot refuses a linear histogram past results.MaxBuckets or whose
// layout does not hold together.
func checkSnapshot(s record.Snapshot) error {
	return results.CheckLayout(s.Width, s.Origin, s.Overflow, len(s.Counts))
}

// checkProfiles enforces the schema limits of the profile fields.
func checkProfiles(s *results.Summary) error {
	if len(s.Profiles) > results.MaxProfiles {
		return fmt.Errorf("%d profiles, more than the limit of %d", len(s.Profiles), results.MaxProfiles)
	}
	for _, p := range s.Profiles {
		for _, f := range []string{p.Pprof, p.Folded} {
			if f == "" {
				continue
			}
			if err := safeio.CheckName(f); err != nil || strings.HasPrefix(f, ".") {
				return fmt.Errorf("profile of %s: %q is not a file name in the results directory", p.Variant, f)
			}
		}
		if len(p.Trials) > results.MaxTrials {
			return fmt.Errorf("profile of %s: %d trials, more than the limit of %d", p.Variant, len(p.Trials), results.MaxTrials)
		}
	}
	return nil
}

// wakeupLogBaseOf is the base of a log file name: "<base>.csv",
// "<base>.<n>.csv" and "<base>.<n>.csv.gz" give <base>.
func wakeupLogBaseOf(name string) string {
	name = strings.TrimSuffix(strings.TrimSuffix(name, ".gz"), ".csv")
	if i := strings.LastIndexByte(name, '.'); i >= 0 {
		digits := name[i+1:]
		if digits != "" && strings.Trim(digits, "0123456789") == "" {
			return name[:i]
		}
	}
	return name
}
