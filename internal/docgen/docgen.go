// Package docgen writes rtload's generated references: the CLI reference
// (docs/cli/*.md and docs/man/*.1) from the cobra commands, through
// github.com/spf13/cobra/doc, and the scenario reference (docs/scenario.md)
// from scenario.Reference, the rows built from the same constants and
// tables the scenario's defaults and validator use. So `rtload CMD --help`,
// the man pages and the markdown say the same, and a changed default or
// range changes the docs.
//
// Generation is pure: every function returns the files' bytes, keyed by
// their path below docs/, with no date and nothing from the machine, so the
// checked-in files can be compared with a fresh generation (the tests
// TestDocsCLI in cmd/rtload and TestDocsScenario here fail when they
// differ, naming `make docs`). Write and Stale do the file work.
package docgen

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/cobra/doc"
)

// ManDate is the date every man page's header carries. It is fixed so that
// generation is deterministic (cobra's default is the day it ran); bump it
// with a release.
var ManDate = time.Date(2026, time.December, 1, 0, 0, 0, 0, time.UTC)

// The directories below docs/ that hold only generated files: Write
// removes a file there that is no longer generated, and Stale reports it.
const (
	CLIDir = "cli"
	ManDir = "man"
)

// prepare readies root for generation: cobra's default help and completion
// commands are added (they are added lazily on Execute otherwise), and
// every command's auto-generated tag (a date) is turned off.
func prepare(root *cobra.Command) {
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	root.InitDefaultVersionFlag()
	var visit func(*cobra.Command)
	visit = func(c *cobra.Command) {
		c.DisableAutoGenTag = true
		for _, s := range c.Commands() {
			visit(s)
		}
	}
	visit(root)
}

// A Long is plain text, which both generators read as markdown: there
// profile-<variant>.pb.gz would lose <variant> as an HTML tag. Markdown
// takes an entity; go-md2man passes entities through verbatim, so the
// man pages get each <…> as a code span instead.
var (
	mdEscape  = strings.NewReplacer("<", "&lt;", ">", "&gt;")
	angleRE   = regexp.MustCompile(`<[^<>\n]*>`)
	manEscape = func(s string) string { return angleRE.ReplaceAllString(s, "`$0`") }
)

// withLong runs f with every command's Long passed through esc, and puts
// the Longs back after.
func withLong(root *cobra.Command, esc func(string) string, f func() error) error {
	saved := map[*cobra.Command]string{}
	var visit func(*cobra.Command)
	visit = func(c *cobra.Command) {
		saved[c] = c.Long
		c.Long = esc(c.Long)
		for _, k := range c.Commands() {
			visit(k)
		}
	}
	visit(root)
	defer func() {
		for c, l := range saved {
			c.Long = l
		}
	}()
	return f()
}

// available lists root and every command below it that help shows (not
// hidden, not a help topic), in name order.
func available(root *cobra.Command) []*cobra.Command {
	var out []*cobra.Command
	var visit func(*cobra.Command)
	visit = func(c *cobra.Command) {
		if c != root && (!c.IsAvailableCommand() || c.IsAdditionalHelpTopicCommand()) {
			return
		}
		out = append(out, c)
		kids := slices.Clone(c.Commands())
		slices.SortFunc(kids, func(a, b *cobra.Command) int { return strings.Compare(a.Name(), b.Name()) })
		for _, k := range kids {
			visit(k)
		}
	}
	visit(root)
	return out
}

// baseName is a command's file name without extension: "rtload-run".
func baseName(c *cobra.Command) string { return strings.ReplaceAll(c.CommandPath(), " ", "-") }

// Markdown returns docs/cli/<command>.md for root and each command below
// it, plus docs/cli/README.md, an index. Links between pages use the same
// dashed names as the man pages.
func Markdown(root *cobra.Command) (map[string][]byte, error) {
	prepare(root)
	files := map[string][]byte{}
	link := func(s string) string { return strings.ReplaceAll(s, "_", "-") }
	var index bytes.Buffer
	index.WriteString(generatedMD("the cobra commands (cmd/rtload)") + "# rtload command reference\n\n" +
		"One page per command, generated from the commands themselves: each page is what `rtload CMD --help` prints.\n" +
		"The same pages as man pages are in [../man](../man) (`man ./docs/man/rtload-run.1`).\n\n")
	err := withLong(root, mdEscape.Replace, func() error {
		for _, c := range available(root) {
			var b bytes.Buffer
			b.WriteString(generatedMD("the cobra commands (cmd/rtload)"))
			if err := doc.GenMarkdownCustom(c, &b, link); err != nil {
				return fmt.Errorf("docgen: %s: %w", c.CommandPath(), err)
			}
			files[filepath.Join(CLIDir, baseName(c)+".md")] = b.Bytes()
			fmt.Fprintf(&index, "- [%s](%s.md): %s\n", c.CommandPath(), baseName(c), c.Short)
		}
		return nil
	})
	files[filepath.Join(CLIDir, "README.md")] = index.Bytes()
	return files, err
}

// Man returns docs/man/<command>.1 for root and each command below it.
func Man(root *cobra.Command) (map[string][]byte, error) {
	prepare(root)
	files := map[string][]byte{}
	err := withLong(root, manEscape, func() error {
		for _, c := range available(root) {
			date := ManDate
			h := &doc.GenManHeader{Title: strings.ToUpper(baseName(c)), Section: "1", Date: &date, Source: "rtload", Manual: "rtload manual"}
			var b bytes.Buffer
			if err := doc.GenMan(c, h, &b); err != nil {
				return fmt.Errorf("docgen: %s: %w", c.CommandPath(), err)
			}
			files[filepath.Join(ManDir, baseName(c)+".1")] = b.Bytes()
		}
		return nil
	})
	return files, err
}

// CLI is Markdown and Man together.
func CLI(root *cobra.Command) (map[string][]byte, error) {
	md, err := Markdown(root)
	if err != nil {
		return nil, err
	}
	man, err := Man(root)
	if err != nil {
		return nil, err
	}
	for k, v := range man {
		md[k] = v
	}
	return md, nil
}

// generatedMD is the first line of a generated markdown file.
func generatedMD(from string) string {
	return "<!-- Generated by `make docs` from " + from + ": do not edit; edit the source and run `make docs`. -->\n\n"
}

// Write writes files below docs (the docs/ directory) and removes any file
// in a generated directory it was given files for (cli/, man/) that is no
// longer generated.
func Write(docs string, files map[string][]byte) error {
	dirs := map[string]bool{}
	for p, b := range files {
		full := filepath.Join(docs, p)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(full, b, 0o644); err != nil {
			return err
		}
		if d := filepath.Dir(p); d == CLIDir || d == ManDir {
			dirs[d] = true
		}
	}
	for d := range dirs {
		ents, err := os.ReadDir(filepath.Join(docs, d))
		if err != nil {
			return err
		}
		for _, e := range ents {
			if _, ok := files[filepath.Join(d, e.Name())]; !ok {
				if err := os.Remove(filepath.Join(docs, d, e.Name())); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// Stale compares files with what is checked in below docs and returns one
// line per file that differs, is missing, or lies in a generated directory
// without being generated; none when the docs are current.
func Stale(docs string, files map[string][]byte) []string {
	var out []string
	dirs := map[string]bool{}
	for _, p := range slices.Sorted(mapsKeys(files)) {
		if d := filepath.Dir(p); d == CLIDir || d == ManDir {
			dirs[d] = true
		}
		got, err := os.ReadFile(filepath.Join(docs, p))
		switch {
		case err != nil:
			out = append(out, fmt.Sprintf("docs/%s: missing (%v)", p, err))
		case !bytes.Equal(got, files[p]):
			out = append(out, fmt.Sprintf("docs/%s: stale, %s", p, firstDiff(got, files[p])))
		}
	}
	for _, d := range slices.Sorted(mapsKeys(dirs)) {
		ents, _ := os.ReadDir(filepath.Join(docs, d))
		for _, e := range ents {
			if _, ok := files[filepath.Join(d, e.Name())]; !ok {
				out = append(out, fmt.Sprintf("docs/%s/%s: no longer generated", d, e.Name()))
			}
		}
	}
	return out
}

func mapsKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// firstDiff says where got and want first differ, by line.
func firstDiff(got, want []byte) string {
	g, w := strings.Split(string(got), "\n"), strings.Split(string(want), "\n")
	for i := range max(len(g), len(w)) {
		var a, b string
		if i < len(g) {
			a = g[i]
		}
		if i < len(w) {
			b = w[i]
		}
		if a != b {
			return fmt.Sprintf("line %d is %q, generated %q", i+1, clip(a), clip(b))
		}
	}
	return "line endings differ"
}

func clip(s string) string {
	if len(s) > 120 {
		return s[:120] + "…"
	}
	return s
}
