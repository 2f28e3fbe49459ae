package results

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/rtload/rtload/results/safeio"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"

	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/record"
)

// SummaryFile is the name of the summary inside a results directory.
const SummaryFile = "summary.json"

// SummaryVersion is the Summary format version this package writes.
// DecodeSummary reads it and versions 1 and 2. Version 3 added
// Trial.Process (rtload run --processes: a version 2 summary reads with
// every trial in process 0), typed Env and Spec (the same JSON as
// before), one list of marks per trial (Trial.Marks, read from version
// 2's five fields: legacy.go), Applied with the thread's name, and
// ClockInfo.CoreTSCRatio.
const SummaryVersion = 3

// Schema limits, checked by ReadSummary and DecodeSummary before anything
// uses the data: a summary past them is refused with an error naming the
// limit, so that no reader runs for minutes or exhausts memory on a
// hostile or corrupt file.
const (
	// MaxSummaryBytes is the largest summary.json read.
	MaxSummaryBytes = 256 << 20
	// MaxBuckets is the most buckets one linear histogram may hold (the
	// scenario's report layout: (overflow − origin) / bucket_width + 1).
	MaxBuckets = 1 << 16
	// MaxTrials and MaxReaders bound a summary's trials and a trial's
	// readers (and probes, traffic and noise entries).
	MaxTrials  = 1 << 16
	MaxReaders = 1 << 12
	// MaxWakeupLogFiles bounds the files one reader's wakeup log lists.
	MaxWakeupLogFiles = 1 << 16
	// MaxSummaryMemory bounds the memory a decoded summary may take, as
	// the pre-pass (safeio.Bounds) estimates it: generous for what rtload
	// writes (a summary's decoded size is about its size on disk), and far
	// below what a crafted file of empty objects would cost.
	MaxSummaryMemory = 256 << 20
	// MaxDirEntries bounds the entries of a results directory read: the
	// most wakeup-log chunks a summary may list, and room for the rest.
	MaxDirEntries = 4 * MaxWakeupLogFiles
)

// listLimits are the element limits of lists by JSON field name, for the
// pre-pass over summaries and JSONL lines (safeio.Bounds).
var listLimits = map[string]int{
	"trials":          MaxTrials,
	"profiled_trials": MaxTrials,
	"readers":         MaxReaders,
	"probes":          MaxReaders,
	"traffic":         MaxReaders,
	"noise":           MaxReaders,
	"counts":          MaxBuckets,
	"wakeup_log":      MaxWakeupLogFiles,
	"profiles":        MaxProfiles,
}

// checkShape runs the pre-pass over a summary's data for type t, before
// json.Unmarshal builds anything. A syntax error ends it with
// safeio.ErrSyntax, for Unmarshal to report with its own message.
func checkShape(data []byte, name string, t reflect.Type) error {
	b := safeio.Bounds{Lists: listLimits, Limit: MaxSummaryMemory, What: "any summary rtload writes"}
	return b.Check(data, name, 1, t, 0)
}

// WriteSummary writes s as indented JSON to summary.json atomically (see
// Dir.WriteFile): a crash or a full disk leaves the previous summary.json,
// never a torn one. The file says SummaryVersion whatever s.Version holds
// (s itself is not modified). One summary is written at a time, encoded
// into a buffer the Dir keeps (up to maxKeptSummary bytes), so that a
// soak's checkpoints every few seconds do not each allocate the whole
// text anew (issue 12: with GC off that is what grows the heap).
func (d *Dir) WriteSummary(s *Summary) error {
	if s == nil {
		return errors.New("write summary: nil Summary")
	}
	out := *s
	out.Version = SummaryVersion
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
		return fmt.Errorf("write summary %s: %w", filepath.Join(d.Path(), SummaryFile), err)
	}
	if err := d.WriteFile(SummaryFile, d.sumBuf.Bytes()); err != nil {
		return fmt.Errorf("write summary: %w", err)
	}
	return nil
}

// maxKeptSummary is the largest summary encoding buffer a Dir keeps
// between writes (bytes); a larger one is dropped after its write.
const maxKeptSummary = 4 << 20

// ReadSummary reads a Summary from path: a results directory (its
// summary.json is read) or the file itself, at most MaxSummaryBytes. The
// file is opened as Source.Open opens every results file: a symlink, a
// FIFO or a device is refused (ErrRefusedFile) before anything is read.
// See DecodeSummary for the format and errors.
func ReadSummary(path string) (*Summary, error) {
	s, _, err := ReadSummaryStat(path)
	return s, err
}

// ReadSummaryStat is ReadSummary, also saying where the summary came from.
func ReadSummaryStat(path string) (*Summary, safeio.FileStat, error) {
	var src *safeio.Source
	var f *os.File
	var fi fs.FileInfo
	var err error
	if safeio.IsDir(path) && filepath.Base(path) != SummaryFile {
		if src, err = safeio.OpenSource(path); err == nil {
			f, fi, err = src.Open(SummaryFile)
		}
		path = filepath.Join(path, SummaryFile)
	} else {
		src, f, fi, err = safeio.OpenInput(path)
	}
	if src != nil {
		defer src.Close()
	}
	if err != nil {
		if dir := filepath.Dir(path); errors.Is(err, fs.ErrNotExist) && IsSessions(dir) {
			err = fmt.Errorf("%w: %s is a sessions directory (run --append): name one of its sessions (%s) or compare it whole", err,
				termsafe.Escape(dir), termsafe.Escape(filepath.Join(dir, SessionName(1))))
		}
		return nil, safeio.FileStat{}, fmt.Errorf("read summary: %w", err)
	}
	defer f.Close()
	st := safeio.FileStat{Path: path, File: fi, Dir: src.Info()}
	if fi.Size() > MaxSummaryBytes {
		return nil, st, fmt.Errorf("%s: %d bytes, larger than the limit of %d MiB for a summary", termsafe.Escape(path), fi.Size(), MaxSummaryBytes>>20)
	}
	data, err := io.ReadAll(io.LimitReader(f, MaxSummaryBytes+1))
	if err != nil {
		return nil, st, fmt.Errorf("read summary: %w", err)
	}
	if len(data) > MaxSummaryBytes {
		return nil, st, fmt.Errorf("%s: larger than the limit of %d MiB for a summary", termsafe.Escape(path), MaxSummaryBytes>>20)
	}
	s, err := DecodeSummary(data, termsafe.Escape(path))
	return s, st, err
}

// DecodeSummary decodes summary.json bytes; name prefixes errors. Bad JSON
// gives an error naming name with line and column ("dir/summary.json:3:14:
// …"); a version other than 1, 2 or SummaryVersion, or a summary past the
// schema limits (MaxBuckets, MaxTrials, …, or a wakeup log named by a path
// rather than a file name) is an error.
//
// Older versions are read into today's types, and Version says which was
// read. Version 1: its per-call tick summaries, written under *_ns names,
// become TickStats, and each trial's list of wakeup logs is given to the
// readers it belongs to (all of them to a lone reader; with several, a
// log whose name WakeupLogBase gives for the reader). Version 2 and
// before: every trial is in process 0, and the trial marks of its five
// old fields become Trial.Marks. Plan is read from Spec for every version.
func DecodeSummary(data []byte, name string) (*Summary, error) {
	var head struct {
		Version int `json:"version"`
	}
	if err := json.Unmarshal(data, &head); err != nil {
		return nil, jsonError(data, name, err)
	}
	if head.Version < 1 || head.Version > SummaryVersion {
		return nil, fmt.Errorf("%s: summary version %d not supported (this rtload reads versions 1 to %d)", name, head.Version, SummaryVersion)
	}
	// Limits on lists and memory hold before Unmarshal builds anything.
	if err := checkShape(data, name, reflect.TypeFor[Summary]()); err != nil && !errors.Is(err, safeio.ErrSyntax) {
		return nil, err
	}
	var s Summary
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
	s.Plan = PlanOf(s.Spec)
	if err := s.check(); err != nil {
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
func assignV1Logs(t *Trial, logs []string) {
	if len(t.Readers) == 1 {
		t.Readers[0].WakeupLog = logs
		return
	}
	for _, f := range logs {
		base := wakeupLogBaseOf(f)
		for i := range t.Readers {
			r := &t.Readers[i]
			if base == WakeupLogBase(t.Index, t.Variant, t.Round, r.Name) {
				r.WakeupLog = append(r.WakeupLog, f)
				break
			}
		}
	}
}

// check enforces the schema limits.
func (s *Summary) check() error {
	if n := len(s.Trials) + len(s.ProfiledTrials); n > MaxTrials {
		return fmt.Errorf("%d trials, more than the limit of %d", n, MaxTrials)
	}
	if err := s.checkProfiles(); err != nil {
		return err
	}
	var hh safeio.HDRHeader
	defer hh.Close()
	trials := make([]*Trial, 0, len(s.Trials)+len(s.ProfiledTrials))
	for i := range s.Trials {
		trials = append(trials, &s.Trials[i])
	}
	for i := range s.ProfiledTrials {
		trials = append(trials, &s.ProfiledTrials[i])
	}
	logs := map[string]string{} // a wakeup-log file (without .gz) → who lists it
	for i, t := range trials {
		if n := max(len(t.Readers), len(t.Probes), len(t.Traffic), len(t.Noise)); n > MaxReaders {
			return fmt.Errorf("trial %d: %d entries, more than the limit of %d", i, n, MaxReaders)
		}
		for j := range t.Readers {
			if err := t.Readers[j].check(&hh); err != nil {
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

func (r *Reader) check(hh *safeio.HDRHeader) error {
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
	if len(r.WakeupLog) > MaxWakeupLogFiles {
		return fmt.Errorf("wakeup_log: %d files, more than the limit of %d", len(r.WakeupLog), MaxWakeupLogFiles)
	}
	for _, f := range r.WakeupLog {
		if err := safeio.CheckName(f); err != nil || strings.HasPrefix(f, ".") {
			return fmt.Errorf("wakeup_log: %q is not a file name in the results directory", f)
		}
	}
	return nil
}

// checkSnapshot refuses a linear histogram past MaxBuckets or whose
// layout does not hold together.
func checkSnapshot(s record.Snapshot) error {
	return CheckLayout(s.Width, s.Origin, s.Overflow, len(s.Counts))
}

// CheckLayout reports whether a linear histogram layout is one rtload can
// read back: at most MaxBuckets buckets, and (buckets > 0) a width > 0 and
// overflow = origin + (buckets − 1) × width, as record.NewLinear makes it.
// buckets < 0 asks only whether the layout NewLinear(width, origin,
// overflow) would make fits (the engine checks a scenario with it).
func CheckLayout(width, origin, overflow uint64, buckets int) error {
	if buckets < 0 {
		if width == 0 || overflow <= origin {
			return fmt.Errorf("histogram layout: bucket width %d, origin %d, overflow %d: need width > 0 and overflow > origin", width, origin, overflow)
		}
		n := (overflow - origin) / width // no overflow of uint64, unlike rounding up first
		if (overflow-origin)%width != 0 {
			n++
		}
		if n >= MaxBuckets { // n buckets above origin, one below it
			n += min(1, ^n)
			return fmt.Errorf("histogram layout: (overflow %d − origin %d) / bucket width %d gives %d buckets, more than the limit of %d", overflow, origin, width, n, MaxBuckets)
		}
		return nil
	}
	if buckets > MaxBuckets {
		return fmt.Errorf("histogram of %d buckets, more than the limit of %d", buckets, MaxBuckets)
	}
	if buckets == 0 {
		return nil
	}
	if width == 0 || overflow < origin || (overflow-origin)/width != uint64(buckets-1) || (overflow-origin)%width != 0 {
		return fmt.Errorf("histogram layout (width %d, origin %d, overflow %d) does not match its %d buckets", width, origin, overflow, buckets)
	}
	return nil
}
