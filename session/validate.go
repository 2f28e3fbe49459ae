package session

import (
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/rtload/rtload/engine"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/sysinfo"
)

// ValidateDoc is rtload validate's result (--format json: schema
// rtload-validate).
type ValidateDoc struct {
	Schema      string `json:"schema"`
	Version     int    `json:"version"`
	File        string `json:"file"`
	OK          bool   `json:"ok"`
	Description string `json:"description,omitempty"`
	// Problems are the scenario's problems, sorted by line: decode and
	// value problems in one list.
	Problems []*scenario.Error `json:"problems"`
	// Unmet are the requirements this machine does not meet (exit 3
	// without --allow-degraded).
	Unmet []string `json:"unmet_requirements,omitempty"`
	// Machine says what fitting the scenario to this machine chose: each
	// cpu: auto reader's CPU, the requirements met or given up.
	Machine []string `json:"machine,omitempty"`
	Notes   []string `json:"notes,omitempty"`
	// Error is any other refusal (a file that cannot be read).
	Error    string `json:"error,omitempty"`
	ExitCode int    `json:"exit_code"`
}

// Validate checks the scenario arg with sets applied, as run would, and
// says what it found; err is what validate exits with (the command
// sets doc.ExitCode from it).
func Validate(arg string, sets []string, allowDegraded bool) (*ValidateDoc, error) {
	doc := &ValidateDoc{Schema: SchemaValidate, Version: SchemaVersion, File: arg, Problems: []*scenario.Error{}}
	fail := func(err error) (*ValidateDoc, error) {
		var el scenario.ErrorList
		var re *engine.RequirementsError
		switch {
		case errors.As(err, &el):
			doc.Problems = el
		case errors.As(err, &re):
			for _, u := range re.Unmet {
				doc.Unmet = append(doc.Unmet, u.String())
			}
		default:
			doc.Error = err.Error()
		}
		return doc, err
	}
	spec, err := LoadSpec(arg, sets)
	if err != nil {
		return fail(err)
	}
	doc.File, doc.Description = spec.File, spec.Description
	trials, err := spec.Expand()
	if err != nil {
		return fail(err)
	}
	facts := sysinfo.Gather()
	var machine strings.Builder
	unmet, err := FitMachine(&machine, spec, trials, &facts, allowDegraded)
	if err != nil {
		return fail(err)
	}
	doc.OK, doc.Unmet = true, unmet
	doc.Machine = strings.Split(strings.TrimSuffix(machine.String(), "\n"), "\n")
	if machine.Len() == 0 {
		doc.Machine = nil
	}
	if _, note := spec.InterleaveBlock(); note != "" { // interleave: auto fell back
		doc.Notes = append(doc.Notes, note)
	}
	return doc, nil
}

// Text prints what validate found on a scenario it accepts: the machine
// lines, the scenario ok with its description, and the notes.
func (d *ValidateDoc) Text(out io.Writer) error {
	var b strings.Builder
	for _, l := range d.Machine {
		fmt.Fprintln(&b, l)
	}
	if d.Description != "" {
		fmt.Fprintf(&b, "%s: ok (%s)\n", d.File, d.Description)
	} else {
		fmt.Fprintf(&b, "%s: ok\n", d.File)
	}
	for _, n := range d.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	_, err := io.WriteString(out, b.String())
	return err
}
