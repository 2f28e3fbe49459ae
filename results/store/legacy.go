package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"

	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/safeio"
)

// Version 2 summaries (and version 3 ones written before the trial marks
// became one list) kept a trial's marks in five fields: the trial's
// invalid, process_marks and traffic_not_as_specified, a reader's
// starved, a traffic group's not_as_specified. legacyMarks reads them
// into results.Trial.Marks, in the one place that knows them.

// legacyKeys are the fields' JSON keys, as an encoder writes them.
var legacyKeys = [][]byte{[]byte(`"invalid":`), []byte(`"process_marks":`), []byte(`"traffic_not_as_specified":`),
	[]byte(`"starved":`), []byte(`"not_as_specified":`)}

// legacySummary holds the old fields, trial by trial.
type legacySummary struct {
	Trials         []legacyTrial `json:"trials"`
	ProfiledTrials []legacyTrial `json:"profiled_trials"`
}

type legacyTrial struct {
	Invalid               string   `json:"invalid"`
	ProcessMarks          []string `json:"process_marks"`
	TrafficNotAsSpecified string   `json:"traffic_not_as_specified"`
	Readers               []struct {
		Name    string `json:"name"`
		Starved string `json:"starved"`
	} `json:"readers"`
	Traffic []struct {
		Endpoint       string `json:"endpoint"`
		NotAsSpecified string `json:"not_as_specified"`
	} `json:"traffic"`
}

// legacyMarks gives the trials of s the marks data holds in the old
// fields, to each trial that has no Marks of its own. name prefixes
// errors.
func legacyMarks(s *results.Summary, data []byte, name string) error {
	found := false
	for _, k := range legacyKeys {
		found = found || bytes.Contains(data, k)
	}
	if !found {
		return nil
	}
	if err := checkShape(data, name, reflect.TypeFor[legacySummary]()); err != nil && !errors.Is(err, safeio.ErrSyntax) {
		return err
	}
	var old legacySummary
	if err := json.Unmarshal(data, &old); err != nil {
		return jsonError(data, name, err)
	}
	for _, l := range []struct {
		trials []results.Trial
		old    []legacyTrial
	}{{s.Trials, old.Trials}, {s.ProfiledTrials, old.ProfiledTrials}} {
		for i := range min(len(l.trials), len(l.old)) {
			if t := &l.trials[i]; len(t.Marks) == 0 {
				t.Marks = l.old[i].marks()
			}
		}
	}
	return nil
}

// marks are the old fields as marks: invalid, then rtload's own (those
// not already in invalid: its garbage collection was both), each
// starved reader, each traffic group not as specified (or the trial's
// line when no group says).
func (o legacyTrial) marks() []results.Mark {
	var out []results.Mark
	if o.Invalid != "" {
		out = append(out, results.Mark{Kind: results.MarkInvalid, Text: strings.TrimPrefix(o.Invalid, "invalid: ")})
	}
	for _, m := range o.ProcessMarks {
		if m != "" && !strings.Contains(o.Invalid, m) {
			out = append(out, results.Mark{Kind: results.MarkRtload, Text: m})
		}
	}
	for _, r := range o.Readers {
		if r.Starved != "" {
			out = append(out, results.Mark{Kind: results.MarkStarved, Reader: r.Name, Text: "reader " + r.Name + " " + r.Starved})
		}
	}
	groups := false
	for _, tr := range o.Traffic {
		if tr.NotAsSpecified != "" {
			groups = true
			out = append(out, results.Mark{Kind: results.MarkTraffic, Endpoint: tr.Endpoint, Text: tr.Endpoint + ": " + tr.NotAsSpecified})
		}
	}
	if !groups && o.TrafficNotAsSpecified != "" {
		out = append(out, results.Mark{Kind: results.MarkTraffic, Text: strings.TrimPrefix(o.TrafficNotAsSpecified, "traffic not as specified: ")})
	}
	return out
}
