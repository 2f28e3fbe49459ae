package archtest

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os/exec"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// pkg is the part of `go list -json` output the rules look at.
type pkg struct {
	ImportPath   string
	Name         string
	Standard     bool
	Module       *struct{ Path string }
	Imports      []string // non-test imports
	Deps         []string // every package it depends on, however indirectly (non-test)
	TestImports  []string
	XTestImports []string
}

const unixPkg = "golang.org/x/sys/unix"

// goList runs the go command in the module root and returns its output.
func goList(t *testing.T, args ...string) []byte {
	t.Helper()
	goBin, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("go command not in PATH: %v", err)
	}
	gomod, err := exec.Command(goBin, "env", "GOMOD").Output()
	if err != nil {
		t.Fatalf("go env GOMOD: %v", err)
	}
	root := filepath.Dir(strings.TrimSpace(string(gomod)))
	if root == "." || strings.TrimSpace(string(gomod)) == "/dev/null" {
		t.Skip("not inside a module")
	}
	cmd := exec.Command(goBin, append([]string{"list"}, args...)...)
	cmd.Dir = root
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %s: %v\n%s", strings.Join(args, " "), err, stderr.String())
	}
	return out
}

// loaded is load's one answer for every test of the package: three `go
// list` runs each cost seconds.
var loaded struct {
	sync.Mutex
	done    bool
	mod     map[string]pkg
	modPath string
	std     map[string]bool
}

// load returns the module's packages (by path relative to the module
// root, "." for the root), the module path, and the standard library's
// import paths. The maps are shared: callers only read them.
func load(t *testing.T) (mod map[string]pkg, modPath string, std map[string]bool) {
	t.Helper()
	loaded.Lock()
	defer loaded.Unlock()
	if !loaded.done {
		loaded.mod, loaded.modPath, loaded.std = loadOnce(t)
		loaded.done = true
	}
	return loaded.mod, loaded.modPath, loaded.std
}

func loadOnce(t *testing.T) (mod map[string]pkg, modPath string, std map[string]bool) {
	t.Helper()
	std = map[string]bool{}
	for _, p := range strings.Fields(string(goList(t, "std"))) {
		std[p] = true
	}
	modPath = strings.TrimSpace(string(goList(t, "-m")))
	mod = map[string]pkg{}
	dec := json.NewDecoder(bytes.NewReader(goList(t, "-deps", "-json", "./...")))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			t.Fatalf("go list -json: %v", err)
		}
		if p.Standard || p.Module == nil || p.Module.Path != modPath {
			continue
		}
		rel := strings.TrimPrefix(strings.TrimPrefix(p.ImportPath, modPath), "/")
		if rel == "" {
			rel = "."
		}
		mod[rel] = p
	}
	if len(mod) == 0 {
		t.Fatal("go list found no packages of the module")
	}
	return mod, modPath, std
}

func TestPackageNames(t *testing.T) {
	mod, _, std := load(t)
	// Every name a stdlib package goes by: top-level paths ("net") and the
	// last element of every public path ("http", "json").
	stdNames := map[string]string{}
	for p := range std {
		if strings.Contains(p, "internal") || strings.HasPrefix(p, "vendor/") {
			continue
		}
		for _, name := range []string{path.Base(p), strings.SplitN(p, "/", 2)[0]} {
			switch _, seen := stdNames[name]; {
			case std[name]:
				stdNames[name] = name // the package whose path is the name
			case !seen:
				stdNames[name] = p
			}
		}
	}
	for rel, p := range mod {
		if sp, ok := stdNames[p.Name]; ok {
			t.Errorf("package %s is named %q like the standard library's %s", rel, p.Name, sp)
		}
		if p.Name != "main" && p.Name != path.Base(p.ImportPath) {
			t.Errorf("package %s is named %q, not after its folder %q", rel, p.Name, path.Base(p.ImportPath))
		}
	}
	if p, ok := mod["net"]; ok {
		t.Errorf("net/ holds Go files (package %s): it must hold only subpackages", p.Name)
	}
}

func TestImportBoundaries(t *testing.T) {
	mod, modPath, std := load(t)
	unixAllowed := []string{"rt", "rt/seccomp", "net/udp", "net/tap", "net/netns", "probe", "workload", "noise", "profile/sampler", "sysinfo", "engine", "session", "internal/testutil"}
	for rel, p := range mod {
		if slices.Contains(p.Imports, unixPkg) && !slices.Contains(unixAllowed, rel) {
			t.Errorf("%s imports %s (allowed only in %s)", rel, unixPkg, strings.Join(unixAllowed, ", "))
		}
		// compare/internal/comparetest: the fixtures compare's subpackages'
		// tests share (a sessions directory takes a *testing.T); only
		// tests import it, and Go's internal rule keeps it in compare/.
		if slices.Contains(p.Imports, "testing") && rel != "internal/testutil" && rel != "compare/internal/comparetest" {
			t.Errorf("%s imports testing from non-test code", rel)
		}
		for _, imps := range [][]string{p.Imports, p.TestImports, p.XTestImports} {
			if slices.Contains(imps, modPath+"/cmd/rtload") {
				t.Errorf("%s imports cmd/rtload: nothing may", rel)
			}
		}
	}

	// Packages whose non-test imports are limited to the standard library
	// plus a short list (STYLE.md "Package layout").
	for _, rule := range []struct {
		pkg   string
		allow []string
	}{
		{"scenario", []string{"go.yaml.in/yaml/v3", modPath + "/internal/filekind"}}, // pure data: validation runs and fuzzes anywhere (filekind: a pure leaf naming file types)
		{"pace", nil},
		{"configs", nil},
		// The one statistics package: pure, stdlib + gonum's distributions.
		{"stats", []string{"gonum.org/v1/gonum/stat/distuv"}},
		{"record", []string{"github.com/HdrHistogram/hdrhistogram-go"}},
		// Pure: explain and compare attribute from written profiles through it.
		{"profile", []string{"github.com/google/pprof/profile"}},
		// Only the measured loop: its hot path may call nothing else.
		{"probe", []string{modPath + "/rt", modPath + "/record", modPath + "/net/udp", modPath + "/net/tap", unixPkg}},
		// The kernel-facing ground floor: its reports are the results
		// contract's types (results.Applied, Thread, Housekeeping,
		// ClockInfo, KernelWatch, Env), filled here, never copied.
		{"rt", []string{unixPkg, modPath + "/results", modPath + "/internal/cpulist", modPath + "/internal/procstat"}},
		// Seccomp filters: pure programs (x/net/bpf's assembler) and their
		// installation on the calling thread.
		{"rt/seccomp", []string{unixPkg, "golang.org/x/net/bpf", modPath + "/results"}},
		{"sysinfo", []string{unixPkg, modPath + "/results", modPath + "/internal/cpulist", modPath + "/internal/filekind", modPath + "/internal/procstat"}},
	} {
		p, ok := mod[rule.pkg]
		if !ok {
			t.Errorf("package %s missing from go list", rule.pkg)
			continue
		}
		for _, imp := range p.Imports {
			if !std[imp] && !slices.Contains(rule.allow, imp) {
				t.Errorf("%s imports %s (allowed: stdlib%s)", rule.pkg, imp, strings.Join(append([]string{""}, rule.allow...), ", "))
			}
		}
	}
}

// TestForbiddenImports checks imports that the layout forbids outright
// (STYLE.md "Package layout"), among the module's non-test imports.
func TestForbiddenImports(t *testing.T) {
	mod, modPath, _ := load(t)
	for _, rule := range []struct {
		pkg, forbidden, why string
	}{
		{"noise", "probe", "noise runs background load through workload, never the measured loop"},
		{"workload", "probe", "workload is ordinary work; probe is only the real-time loop"},
	} {
		p, ok := mod[rule.pkg]
		if !ok {
			t.Errorf("package %s missing from go list", rule.pkg)
			continue
		}
		if slices.Contains(p.Imports, modPath+"/"+rule.forbidden) {
			t.Errorf("%s imports %s: %s", rule.pkg, rule.forbidden, rule.why)
		}
	}
	// The session library is the CLI's floor below: its phases take typed
	// options, never cobra's flags (the generated references read the
	// commands, so docgen may).
	for rel, p := range mod {
		if slices.Contains(p.Imports, "github.com/spf13/cobra") && rel != "cmd/rtload" && rel != "internal/docgen" {
			t.Errorf("%s imports cobra: only cmd/rtload (and internal/docgen, which documents its commands) may", rel)
		}
	}
}
