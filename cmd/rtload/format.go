package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/rtload/rtload/session"
)

// Every command takes --format: text (for a person, the default) or json
// (one document on stdout, compare.WriteJSON's layout), and compare a few
// more. A command that writes a file names it on stderr in every format,
// so that stdout holds only the document asked for.

// textJSON are the formats of every command but compare.
var textJSON = []string{"text", "json"}

// formatFlag adds --format to cmd, one of formats (the first the default),
// with what the json form is.
func formatFlag(cmd *cobra.Command, p *string, formats []string, jsonIs string) {
	usage := "output format: " + strings.Join(formats, ", ")
	if jsonIs != "" {
		usage += " (json: " + jsonIs + ")"
	}
	cmd.Flags().StringVar(p, "format", formats[0], usage)
}

// checkFormatIn refuses a --format not in formats, naming the flag.
func checkFormatIn(format string, formats []string) error {
	if !slices.Contains(formats, format) {
		return usageError{Err: fmt.Errorf("--format %q: allowed %s", format, strings.Join(formats, ", "))}
	}
	return nil
}

// checkFormat accepts --format text or json.
func checkFormat(format string) error { return checkFormatIn(format, textJSON) }

// Schemas of the JSON documents of the commands that had none before
// --format json (compare's schemas are compare.Schema*).
const (
	SchemaValidate = session.SchemaValidate
	SchemaList     = session.SchemaList
	SchemaCleanup  = session.SchemaCleanup
	SchemaPlot     = session.SchemaPlot
	// SchemaVersion of these documents: fields are only ever added.
	SchemaVersion = session.SchemaVersion
)
