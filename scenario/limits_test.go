package scenario

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"
)

// loadFileWithin runs LoadFile(path) and fails the test if it has not
// returned within limit (a FIFO once blocked it forever). unblock, if not
// nil, is called on timeout to let the stuck call end.
func loadFileWithin(t *testing.T, path string, limit time.Duration, unblock func()) error {
	t.Helper()
	done := make(chan error, 1)
	go func() {
		_, err := LoadFile(path)
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(limit):
		if unblock != nil {
			unblock()
		}
		t.Fatalf("LoadFile(%s) still running after %v", path, limit)
		return nil
	}
}

// TestLoadFileNotRegular: a scenario is a regular file. A character
// device (/dev/zero was read for GBs), a FIFO (blocked forever) and a
// directory are refused at once, naming the file, its type and the limit.
func TestLoadFileNotRegular(t *testing.T) {
	dir := t.TempDir()
	fifo := filepath.Join(dir, "fifo.yaml")
	if err := syscall.Mkfifo(fifo, 0o600); err != nil {
		t.Fatal(err)
	}
	// On timeout, a writer opening the FIFO lets a blocked open return.
	unblockFIFO := func() {
		if f, err := os.OpenFile(fifo, os.O_WRONLY|syscall.O_NONBLOCK, 0); err == nil {
			f.Close()
		}
	}
	tests := []struct {
		name, path, kind string
		unblock          func()
	}{
		{"character device", "/dev/zero", "a character device", nil},
		{"fifo", fifo, "a named pipe (FIFO)", unblockFIFO},
		{"directory", dir, "a directory", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := os.Stat(tt.path); err != nil {
				t.Skip(err)
			}
			err := loadFileWithin(t, tt.path, 5*time.Second, tt.unblock)
			want := tt.path + ": not a regular file (" + tt.kind + ") (allowed: a regular file of at most 1MiB)"
			if err == nil || !strings.Contains(err.Error(), want) {
				t.Fatalf("LoadFile(%s) = %v, want %q", tt.path, err, want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Errorf("not ErrInvalid: %v", err)
			}
		})
	}
}

// TestLoadFileSize: at most MaxFileSize bytes; one more is refused before
// it is parsed, by LoadFile and by Load.
func TestLoadFileSize(t *testing.T) {
	dir := t.TempDir()
	comment := strings.Repeat("#", 99) + "\n" // 100 bytes, no tokens
	atLimit := strings.Repeat(comment, MaxFileSize/100) + strings.Repeat("#", MaxFileSize%100)
	over := atLimit + "#"
	for _, tt := range []struct {
		name, data, want string
	}{
		{"at the limit", atLimit, "empty document"},
		{"one byte over", over, "file too large (1048577 bytes) (allowed: a regular file of at most 1MiB)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(tt.name, " ", "-")+".yaml")
			if err := os.WriteFile(path, []byte(tt.data), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := LoadFile(path); err == nil || !strings.Contains(err.Error(), path+": "+tt.want) {
				t.Errorf("LoadFile = %v, want %q", err, tt.want)
			}
			if _, err := Load("x.yaml", []byte(tt.data)); err == nil || !strings.Contains(err.Error(), "x.yaml: "+tt.want) {
				t.Errorf("Load = %v, want %q", err, tt.want)
			}
		})
	}
	if _, err := LoadFile(filepath.Join(dir, "nope.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v, want ErrNotExist", err)
	}
}

// mustLoad loads data as x.yaml or fails the test.
func mustLoad(t *testing.T, data string) *Spec {
	t.Helper()
	s, err := Load("x.yaml", []byte(data))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var m0, m1 runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&m0)
	f()
	runtime.ReadMemStats(&m1)
	return m1.TotalAlloc - m0.TotalAlloc
}

// flowList is a scenario whose noise CPU list has n entries, in flow style
// (two bytes and two tokens per entry).
func flowList(n int) []byte {
	return []byte("readers: [{}]\nnoise: [{threads: 1, cpus: [" + strings.Repeat("0,", n-1) + "0]}]\n")
}

// TestLoadTokenBudget: a document with more than MaxTokens tokens is
// refused by the pre-pass, before the YAML library builds its tree (which
// took 1.24 GB for a 10 MB flow list): fast and with almost no memory.
func TestLoadTokenBudget(t *testing.T) {
	list := string(flowList(500_000)) // 1 MB: under the size limit, 1M tokens
	for name, over := range map[string]string{
		"flow list": list,
		// What a pre-pass that skipped comments or quoted text would miss.
		"after a '#' in quotes":           strings.Replace(list, "cpus: [", "cpus: [\"a #\", ", 1),
		"between quotes in plain scalars": "description: it 's\n" + list + "name: x '\n",
	} {
		var err error
		if n := allocated(func() { _, err = Load("x.yaml", []byte(over)) }); n > 1<<20 {
			t.Errorf("%s: refusing 1M tokens allocated %d bytes, want < 1MiB", name, n)
		}
		want := fmt.Sprintf("document too large: more than %d YAML tokens", MaxTokens)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Fatalf("%s: Load = %v, want %q", name, err, want)
		}
	}
	var err error
	// Just under the budget the tree is built, within a stated bound:
	// about 230 bytes per node.
	under := flowList(MaxTokens/2 - 20)
	if n := allocated(func() { _, err = Load("x.yaml", under) }); n > 64<<20 {
		t.Errorf("loading %d tokens allocated %d MiB, want < 64 MiB", MaxTokens, n>>20)
	}
	if err != nil {
		t.Fatalf("Load just under the budget: %v", err)
	}
}

// TestTokenCountNeverUnder checks the pre-pass against the parser: it
// counts at least half the nodes the parser builds (the tree has at most
// 2 × tokens + 1 nodes), also where a '#' or a quote could fool a pre-pass
// that skipped comments and quoted text.
func TestTokenCountNeverUnder(t *testing.T) {
	tests := []struct {
		name   string
		yaml   string
		tokens int // what the pre-pass counts
	}{
		{"block mapping", "a: 1\nb: [x, y]\n", 9},
		{"flow mapping with null values", "a: {x, y, z}\n", 8},
		{"empty values", "a:\nb:\n- \n-\n", 6},
		{"comments count", "# a, b\na: 1 # e\n", 9},
		{"'#' in a quoted scalar is no comment", "a: [\"x #\", 0, 0, 0, 0, 0, 0]\n", 17},
		{"a quote in a plain scalar opens nothing", "a: it 's\nb: [0, 0, 0, 0, 0, 0]\nc: x '\n", 22},
		{"aliases and anchors", "a: &x [1]\nb: *x\n", 9},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			root, err := parseOne("x.yaml", []byte(tt.yaml))
			if err != nil {
				t.Fatal(err)
			}
			nodes := countNodes(root) + 1 // + the document node
			if e := tooManyTokens("x.yaml", []byte(tt.yaml), (nodes-1)/2-1); e == nil {
				t.Errorf("%d nodes passed a budget of %d tokens: the pre-pass under-counts", nodes, (nodes-1)/2-1)
			}
			if tooManyTokens("x.yaml", []byte(tt.yaml), tt.tokens) != nil || tooManyTokens("x.yaml", []byte(tt.yaml), tt.tokens-1) == nil {
				t.Errorf("count is not %d", tt.tokens)
			}
		})
	}
}

// TestAliasBudget: aliases that expand past MaxNodes ("billion laughs"
// within the schema: noise entries × CPUs, 600 × 600 from 5 KB) stop the
// decoder with a message naming the alias, within a memory bound.
func TestAliasBudget(t *testing.T) {
	data := amplified(600, 600, 0, "0")
	var err error
	if n := allocated(func() { _, err = Load("x.yaml", data) }); n > 256<<20 {
		t.Errorf("Load of %d bytes allocated %d MiB, want < 256 MiB", len(data), n>>20)
	}
	want := fmt.Sprintf(": alias *n expands the document past %d nodes (allowed: at most %d nodes after aliases and merge keys are expanded)", MaxNodes, MaxNodes)
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Load = %v, want %q", err, want)
	}
	if !strings.HasPrefix(err.Error(), "scenario x.yaml: 1 problem\nx.yaml:") {
		t.Errorf("want one problem at the alias: %v", err)
	}
}

// amplified is a scenario of noise entries × cpus CPUs (one aliased list)
// and variants aliased copies of one variant.
func amplified(noise, cpus, variants int, cpu string) []byte {
	var b strings.Builder
	fmt.Fprintf(&b, "readers: [{}]\nnoise:\n  - &n {threads: 1, cpus: &c [%s%s]}\n", strings.Repeat(cpu+",", cpus-1), cpu)
	b.WriteString(strings.Repeat("  - *n\n", noise-1))
	if variants > 0 {
		b.WriteString("variants:\n  - &v {name: a, set: {duration: 1s}}\n")
		b.WriteString(strings.Repeat("  - *v\n", variants-1))
	}
	return []byte(b.String())
}

// TestVariantWorkBudget: 1000 aliased variants of a spec of about 490k
// entries once took validate past 120 s (each variant copies and checks
// the whole spec); here 1000 of 126k, under the node budget. The work
// is refused before any variant is applied.
func TestVariantWorkBudget(t *testing.T) {
	s := mustLoad(t, string(amplified(180, 700, 1000, "0")))
	var err error
	done := make(chan error, 1)
	go func() { done <- s.Validate(Host{NumCPU: 2}) }()
	select {
	case err = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("Validate still running after 30s")
	}
	want := "x.yaml:184:3: variants: 1000 variants of a spec of 126182 entries exceed the work budget (allowed: (variants + 1) × entries ≤ 1048576: at most 7 variants of this spec)"
	if err == nil || !strings.Contains(err.Error(), want) {
		t.Fatalf("Validate = %v, want %q", err, want)
	}
	if _, err := s.Expand(); err == nil || !strings.Contains(err.Error(), "exceed the work budget") {
		t.Errorf("Expand = %v, want the work budget", err)
	}
	// The trials' copies are bounded too: rounds × variants × entries.
	s = mustLoad(t, "rounds: 1000\nreaders: [{}]\nnoise: [{threads: 1, cpus: ["+strings.Repeat("0,", 9999)+"0]}]\nvariants: [{name: a}]\n")
	want = "x.yaml:1:9: rounds: 1000 trials (rounds × variants) of a spec of 10004 entries exceed the work budget (allowed: trials × entries ≤ 1048576: at most 104 trials of this spec)"
	if err := s.Validate(Host{NumCPU: 2}); err == nil || !strings.Contains(err.Error(), want) {
		t.Errorf("Validate = %v, want %q", err, want)
	}
}

// TestErrorFlood: a noise entry with 600 bad CPUs, aliased 200 times,
// once printed one line per copy (998,001 lines for a 12 KB file of 999 ×
// 999). A problem at one place of the source is listed once, and the
// printed list is cut after maxShown lines.
func TestErrorFlood(t *testing.T) {
	if testing.Short() { // internal/testutil.Long, by hand: this package's tests import the standard library only
		t.Skip("tier: long fast test (loads a flood of bad scenarios); -short leaves it out, make test runs it")
	}
	err := mustLoad(t, string(amplified(200, 600, 0, "7"))).Validate(Host{NumCPU: 2})
	var list ErrorList
	if !errors.As(err, &list) {
		t.Fatalf("Validate = %v", err)
	}
	// 600 CPU values in the source, each aliased 200 times: 600 problems.
	if len(list) != 600 || list[0].Error() != "x.yaml:3:31: noise[0].cpus[0]: CPU 7 out of range for this host (2 CPUs) (allowed: 0–1)" {
		t.Errorf("%d problems, want 600 from 3:31 on:\n%v", len(list), err)
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 1+maxShown+1 || lines[0] != "scenario x.yaml: 600 problems" || lines[len(lines)-1] != "… and 580 more" {
		t.Errorf("%d lines, first %q, last %q; want the title, %d problems, '… and 580 more'", len(lines), lines[0], lines[len(lines)-1], maxShown)
	}
}

func TestThousands(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 997990: "997,990", 998001: "998,001", 1234567: "1,234,567", -1234: "-1,234"} {
		if got := thousands(n); got != want {
			t.Errorf("thousands(%d) = %q, want %q", n, got, want)
		}
	}
}

// countNodes counts the nodes of the tree the parser built (an alias is
// one node).
func countNodes(n *yaml.Node) int {
	c := 1
	if n.Kind != yaml.AliasNode {
		for _, k := range n.Content {
			c += countNodes(k)
		}
	}
	return c
}
