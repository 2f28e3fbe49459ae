package interop

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	hdrhistogram "github.com/HdrHistogram/hdrhistogram-go"

	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/safeio"
)

// HlogFormatVersion is the "#[Histogram log format version …]" written by
// WriteHlog: the version of HdrHistogram's Java HistogramLogWriter whose
// line layout it follows.
const HlogFormatVersion = "1.3"

// hlogLegend is the column legend line of the Java HistogramLogWriter
// (format 1.1 on: the second column is a length, not an end timestamp).
const hlogLegend = `"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"`

// javaDate is java.util.Date.toString(), the human-readable part of the
// StartTime line (readers ignore it).
const javaDate = "Mon Jan 02 15:04:05 MST 2006"

// HlogInterval is one interval line of an HdrHistogram interval log
// (.hlog): "Tag=<Tag>,<StartSec>,<LengthSec>,<Interval_Max>,<histogram>".
type HlogInterval struct {
	// Tag labels the interval; empty writes no "Tag=" prefix. The format
	// forbids commas and white space in tags: WriteHlog replaces each
	// with '_'.
	Tag string
	// StartSec is the interval's start in seconds from the log's BaseTime
	// (the number as written in the line); LengthSec its length in seconds.
	StartSec, LengthSec float64
	// Hist is the interval's histogram, in the unit the log's comments
	// name (ns for wakeup latency, clock ticks for per-call cost).
	Hist *hdrhistogram.Histogram
	// MaxValueDivisor scales the Interval_Max column: Interval_Max =
	// Max / MaxValueDivisor (HdrHistogram's maxValueUnitRatio; Java and
	// hdrhistogram-go default to 1e6, ns → ms). Zero writes 1. Only that
	// column is scaled, never the histogram. ReadHlog infers it as the
	// power of ten nearest Hist.Max()/Interval_Max, or 0 when Interval_Max
	// is 0.
	MaxValueDivisor float64
	// Max is the interval's exact largest value, in the histogram's unit,
	// when known (rtload's recorders keep it): Interval_Max is written
	// from it. Zero writes the histogram's Max() (its top bucket's highest
	// value). ReadHlog sets it to Interval_Max × MaxValueDivisor, which
	// is exact for logs rtload wrote.
	Max int64
}

// HlogFile is a whole interval log: header lines and intervals.
type HlogFile struct {
	// Start is written as both "#[StartTime: …]" and "#[BaseTime: …]"
	// (seconds since the epoch, millisecond precision), so interval start
	// times are offsets from it. Zero writes neither line. ReadHlogFile
	// sets it from StartTime.
	Start time.Time
	// Comments are written first, one "#[<comment>]" line each, as
	// jHiccup writes "#[Logged with jHiccup version …]". Reading returns
	// every "#[…]" line other than StartTime, BaseTime and the format
	// version, without the brackets.
	Comments []string
	// Intervals in file order.
	Intervals []HlogInterval
}

// WriteHlog writes f as name in the results directory d in the layout of HdrHistogram's Java
// HistogramLogWriter (format 1.3), which HistogramLogAnalyzer, hdr-plot and
// HistogramLogProcessor read:
//
//	#[<comment>]                      one per f.Comments
//	#[Histogram log format version 1.3]
//	#[StartTime: 1772366400.000 (seconds since epoch), Sun Mar 01 12:00:00 UTC 2026]
//	#[BaseTime: 1772366400.000 (seconds since epoch)]
//	"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"
//	Tag=fifo/r0/reader0,0.000,2.000,51.199,HISTFAAAA…
//
// Numbers are printed "%.3f" as Java does; histograms are the V2
// compressed base64 encoding. The file is written atomically and
// link-safe (safeio.Dir.WriteFile). hdrhistogram-go's own
// HistogramLogWriter is not used: its HistogramLogOptions has no exported
// way to set the max-value divisor (always 1e6) and it writes StartTime in
// whole seconds.
func WriteHlog(d *safeio.Dir, name string, f *HlogFile) error {
	var b bytes.Buffer
	if err := EncodeHlog(&b, f); err != nil {
		return fmt.Errorf("write hlog %s: %w", filepath.Join(d.Path(), name), err)
	}
	if err := d.WriteFile(name, b.Bytes()); err != nil {
		return fmt.Errorf("write hlog: %w", err)
	}
	return nil
}

// EncodeHlog writes f to w in WriteHlog's layout.
func EncodeHlog(w *bytes.Buffer, f *HlogFile) error {
	if f == nil {
		return errors.New("nil HlogFile")
	}
	for _, c := range f.Comments {
		if strings.ContainsAny(c, "\r\n") {
			return fmt.Errorf("comment %q: line break", c)
		}
		fmt.Fprintf(w, "#[%s]\n", c)
	}
	fmt.Fprintf(w, "#[Histogram log format version %s]\n", HlogFormatVersion)
	if !f.Start.IsZero() {
		sec := float64(f.Start.UnixMilli()) / 1e3
		fmt.Fprintf(w, "#[StartTime: %.3f (seconds since epoch), %s]\n", sec, f.Start.UTC().Format(javaDate))
		fmt.Fprintf(w, "#[BaseTime: %.3f (seconds since epoch)]\n", sec)
	}
	w.WriteString(hlogLegend + "\n")
	for i, iv := range f.Intervals {
		if iv.Hist == nil {
			return fmt.Errorf("interval %d (tag %q): nil histogram", i, iv.Tag)
		}
		enc, err := iv.Hist.Encode(hdrhistogram.V2CompressedEncodingCookieBase)
		if err != nil {
			return fmt.Errorf("interval %d (tag %q): encode: %w", i, iv.Tag, err)
		}
		div := iv.MaxValueDivisor
		if div == 0 {
			div = 1
		}
		if tag := hlogTag(iv.Tag); tag != "" {
			fmt.Fprintf(w, "Tag=%s,", tag)
		}
		top := iv.Max
		if top == 0 {
			top = iv.Hist.Max()
		}
		fmt.Fprintf(w, "%.3f,%.3f,%.3f,%s\n", iv.StartSec, iv.LengthSec, float64(top)/div, enc)
	}
	return nil
}

// hlogTag replaces the characters an .hlog tag may not hold (comma, white
// space) with '_'.
func hlogTag(tag string) string {
	return strings.Map(func(r rune) rune {
		if r == ',' || r == ' ' || r == '\t' || r == '\r' || r == '\n' {
			return '_'
		}
		return r
	}, tag)
}

// ReadHlog reads the intervals of the HdrHistogram interval log at path;
// see ReadHlogFile.
func ReadHlog(path string) ([]HlogInterval, error) {
	f, err := ReadHlogFile(path)
	if err != nil {
		return nil, err
	}
	return f.Intervals, nil
}

// ReadHlogFile reads an HdrHistogram interval log written by WriteHlogFile,
// Java's HistogramLogWriter (formats 1.1 to 1.3: V2 compressed payloads,
// "Tag=" prefixes optional) or hdrhistogram-go. Legacy 1.01 logs, whose
// second column is an end timestamp, are read with that column as
// LengthSec unchanged. Errors name path and line. path's last component
// is opened as safeio.Source.Open opens every results file: a link, a
// FIFO or a device is refused before anything is read.
func ReadHlogFile(path string) (*HlogFile, error) {
	src, fd, _, err := safeio.OpenInput(path)
	if err != nil {
		return nil, fmt.Errorf("read hlog: %w", err)
	}
	defer src.Close()
	defer fd.Close()
	f, err := DecodeHlog(fd, path)
	if err != nil {
		return nil, err
	}
	return f, nil
}

// maxHlogLine is the longest .hlog line read: one histogram encoding of at
// most safeio.MaxHDRBytes and its numbers.
const maxHlogLine = safeio.MaxHDRBytes + 4096

// DecodeHlog parses an interval log from r (see ReadHlogFile); name
// prefixes errors. Lines are at most maxHlogLine bytes, histograms at most
// safeio.MaxHDRBytes encoded.
func DecodeHlog(r io.Reader, name string) (*HlogFile, error) {
	f := &HlogFile{}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), maxHlogLine)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimRight(sc.Text(), "\r")
		switch {
		case line == "", strings.HasPrefix(line, `"StartTimestamp"`):
			continue
		case strings.HasPrefix(line, "#"):
			if err := f.header(line); err != nil {
				return nil, fmt.Errorf("%s:%d: %w", name, n, err)
			}
			continue
		}
		iv, err := parseHlogInterval(line)
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", name, n, err)
		}
		f.Intervals = append(f.Intervals, iv)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return f, nil
}

// header interprets one '#' line.
func (f *HlogFile) header(line string) error {
	inner, ok := strings.CutPrefix(line, "#[")
	if !ok {
		return nil // free-form comment
	}
	inner = strings.TrimSuffix(inner, "]")
	switch {
	case strings.HasPrefix(inner, "StartTime: "):
		num, _, _ := strings.Cut(strings.TrimPrefix(inner, "StartTime: "), " ")
		sec, err := strconv.ParseFloat(num, 64)
		if err != nil {
			return fmt.Errorf("StartTime: %w", err)
		}
		f.Start = time.UnixMilli(int64(math.Round(sec * 1e3))).UTC()
	case strings.HasPrefix(inner, "BaseTime: "), strings.HasPrefix(inner, "Histogram log format version "):
	default:
		f.Comments = append(f.Comments, inner)
	}
	return nil
}

// parseHlogInterval parses "[Tag=<tag>,]<start>,<length>,<max>,<payload>".
func parseHlogInterval(line string) (HlogInterval, error) {
	var iv HlogInterval
	if rest, ok := strings.CutPrefix(line, "Tag="); ok {
		tag, rest, ok := strings.Cut(rest, ",")
		if !ok {
			return iv, errors.New("tag without an interval (Tag=<tag>,<start>,…)")
		}
		iv.Tag, line = tag, rest
	}
	fields := strings.SplitN(line, ",", 4)
	if len(fields) != 4 {
		return iv, fmt.Errorf("interval line has %d fields, want 4 (start,length,max,histogram)", len(fields))
	}
	var nums [3]float64
	for i, name := range []string{"start", "length", "max"} {
		v, err := strconv.ParseFloat(strings.TrimSpace(fields[i]), 64)
		if err != nil {
			return iv, fmt.Errorf("%s: %w", name, err)
		}
		nums[i] = v
	}
	h, err := results.DecodeHDR(strings.TrimSpace(fields[3]))
	if err != nil {
		return iv, fmt.Errorf("histogram: %w", err)
	}
	iv.StartSec, iv.LengthSec, iv.Hist = nums[0], nums[1], h
	if nums[2] > 0 && h.Max() > 0 {
		iv.MaxValueDivisor = math.Pow(10, math.Round(math.Log10(float64(h.Max())/nums[2])))
		if m := nums[2] * iv.MaxValueDivisor; m >= 0 && m < math.MaxInt64/2 {
			iv.Max = int64(math.Round(m))
		}
	}
	return iv, nil
}
