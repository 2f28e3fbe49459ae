package docgen

import (
	_ "embed"
	"strings"
	"text/template"

	"github.com/rtload/rtload/scenario"
)

// scenarioTemplate is docs/scenario.md's prose around the table; the
// table is {{.Table}}.
//
//go:embed scenario.md.tmpl
var scenarioTemplate string

// ScenarioPath is the scenario reference's path below docs/.
const ScenarioPath = "scenario.md"

// Scenario returns docs/scenario.md: the prose of scenario.md.tmpl and the
// table of scenario.Reference, one row per field.
func Scenario() ([]byte, error) {
	var t strings.Builder
	t.WriteString("| field | unit / type | default | allowed |\n|---|---|---|---|\n")
	for _, f := range scenario.Reference() {
		t.WriteString("| `" + f.Path + "` | " + cell(f.Unit) + " | " + cell(f.Default) + " | " + cell(f.Allowed) + " |\n")
	}
	tmpl, err := template.New("scenario").Parse(scenarioTemplate)
	if err != nil {
		return nil, err
	}
	var b strings.Builder
	b.WriteString(generatedMD("scenario.Reference (scenario/reference.go) and internal/docgen/scenario.md.tmpl"))
	if err := tmpl.Execute(&b, struct{ Table string }{t.String()}); err != nil {
		return nil, err
	}
	return []byte(b.String()), nil
}

// cell escapes s for a markdown table cell: a | would end the cell, even
// inside a code span.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }
