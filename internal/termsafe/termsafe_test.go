package termsafe

import (
	"bytes"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestEscape(t *testing.T) {
	for _, tc := range []struct {
		name, in, want, lines string
	}{
		{"plain text is kept", "laight-450 rt/recvmsg µs ≥ 3", "laight-450 rt/recvmsg µs ≥ 3", "laight-450 rt/recvmsg µs ≥ 3"},
		{"backslash is kept", `C:\x`, `C:\x`, `C:\x`},
		{"title sequence", "\x1b]0;owned\x07", `\x1b]0;owned\x07`, `\x1b]0;owned\x07`},
		{"clear screen", "\x1b[2J\x1b[H", `\x1b[2J\x1b[H`, `\x1b[2J\x1b[H`},
		{"carriage return erases a line", "ok\rFORGED", `ok\rFORGED`, `ok\rFORGED`},
		{"newline forges a line", "a\nFORGED", `a\nFORGED`, "a\nFORGED"},
		{"tab", "a\tb", `a\tb`, "a\tb"},
		{"backspace and DEL", "ab\b\x7f", `ab\x08\x7f`, `ab\x08\x7f`},
		{"C1 CSI", "x\u009b2J", `x\u009b2J`, `x\u009b2J`},
		{"bidi override", "abc\u202egpj.exe", `abc\u202egpj.exe`, `abc\u202egpj.exe`},
		{"zero width and BOM", "a\u200bb\ufeff", `a\u200bb\ufeff`, `a\u200bb\ufeff`},
		{"line separator", "a\u2028b", `a\u2028b`, `a\u2028b`},
		{"invalid UTF-8", "a\xff\xc3", `a\xff\xc3`, `a\xff\xc3`},
		{"NUL", "a\x00b", `a\x00b`, `a\x00b`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Escape(tc.in); got != tc.want {
				t.Errorf("Escape(%q) = %q, want %q", tc.in, got, tc.want)
			}
			if got := Lines(tc.in); got != tc.lines {
				t.Errorf("Lines(%q) = %q, want %q", tc.in, got, tc.lines)
			}
		})
	}
	if a := testing.AllocsPerRun(100, func() { Escape("nothing to escape here, µs") }); a != 0 {
		t.Errorf("Escape of a safe string allocates %v times", a)
	}
}

// safe reports the first rune of s a terminal could act on (keeping
// newlines and tabs when lines), or -1.
func safe(s string, lines bool) rune {
	for i, r := range s {
		if r == utf8.RuneError {
			if _, n := utf8.DecodeRuneInString(s[i:]); n == 1 {
				return r
			}
		}
		if lines && (r == '\n' || r == '\t') {
			continue
		}
		if unsafeRune(r) {
			return r
		}
	}
	return -1
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "plain", "\x1b[31mred", "a\nb", "\xff", "\u202e", "\u009b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		e := Escape(s)
		if r := safe(e, false); r != -1 {
			t.Fatalf("Escape(%q) = %q keeps %U", s, e, r)
		}
		if Escape(e) != e {
			t.Fatalf("Escape not idempotent on %q", s)
		}
		l := Lines(s)
		if r := safe(l, true); r != -1 {
			t.Fatalf("Lines(%q) = %q keeps %U", s, l, r)
		}
		if strings.Count(l, "\n") != strings.Count(s, "\n") {
			t.Fatalf("Lines(%q) changed the line breaks: %q", s, l)
		}
	})
}

type inner struct {
	Name  string
	Notes []string
	N     int
}

type outer struct {
	Label   string
	Inner   inner
	Ptr     *inner
	Items   []inner
	ByName  map[string]string
	Any     any
	Counts  []uint64
	private string
}

func TestCopy(t *testing.T) {
	in := &outer{
		Label:   "a\x1b[2J",
		Inner:   inner{Name: "b\nFORGED", Notes: []string{"ok", "\r"}, N: 3},
		Ptr:     &inner{Name: "\u202e"},
		Items:   []inner{{Name: "\x07"}},
		ByName:  map[string]string{"k\x1b": "v\x1b"},
		Any:     map[string]any{"kernel": "6.1\x1b]0;t\x07", "n": 1.5, "list": []any{"\n"}},
		Counts:  []uint64{1, 2},
		private: "\x1b",
	}
	got := Copy(in)
	want := &outer{
		Label:   `a\x1b[2J`,
		Inner:   inner{Name: `b\nFORGED`, Notes: []string{"ok", `\r`}, N: 3},
		Ptr:     &inner{Name: `\u202e`},
		Items:   []inner{{Name: `\x07`}},
		ByName:  map[string]string{`k\x1b`: `v\x1b`},
		Any:     map[string]any{"kernel": `6.1\x1b]0;t\x07`, "n": 1.5, "list": []any{`\n`}},
		Counts:  []uint64{1, 2},
		private: "\x1b", // unexported: copied as is (renderers print exported data)
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(outer{})); diff != "" {
		t.Errorf("Copy (-want +got):\n%s", diff)
	}
	if in.Label != "a\x1b[2J" || in.Inner.Notes[1] != "\r" || in.Ptr.Name != "\u202e" || in.ByName["k\x1b"] != "v\x1b" {
		t.Errorf("Copy modified its argument: %+v", in)
	}
	if &got.Counts[0] != &in.Counts[0] {
		t.Error("Copy copied a slice that holds no strings")
	}
	var nilPtr *outer
	if Copy(nilPtr) != nil {
		t.Error("Copy(nil) != nil")
	}
}

func TestWriter(t *testing.T) {
	var b bytes.Buffer
	n, err := Writer(&b).Write([]byte("table\n\trow \x1b[2Jx\rFORGED\n"))
	if err != nil || n != len("table\n\trow \x1b[2Jx\rFORGED\n") {
		t.Fatalf("Write = %d, %v", n, err)
	}
	if got, want := b.String(), "table\n\trow \\x1b[2Jx\\rFORGED\n"; got != want {
		t.Errorf("wrote %q, want %q", got, want)
	}
}
