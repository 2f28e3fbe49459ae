package archtest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// jsonStruct is one struct type of the module that has JSON names.
type jsonStruct struct {
	where string   // "results/kernel.go: Housekeeping"
	names []string // its fields' JSON names, sorted
}

// moduleStructs parses every non-test Go file of the module (vendor and
// testdata aside) and returns its struct types with at least min fields
// that carry a json tag.
func moduleStructs(t *testing.T, min int) []jsonStruct {
	t.Helper()
	root := moduleRoot(t)
	var out []jsonStruct
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == "testdata" || d.Name() == "vendor" || strings.HasPrefix(d.Name(), ".")) && path != root {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		ast.Inspect(f, func(n ast.Node) bool {
			ts, ok := n.(*ast.TypeSpec)
			if !ok || ts.Assign.IsValid() {
				return true
			}
			st, ok := ts.Type.(*ast.StructType)
			if !ok {
				return true
			}
			var names []string
			for _, fld := range st.Fields.List {
				if fld.Tag == nil {
					continue
				}
				tag, err := strconv.Unquote(fld.Tag.Value)
				if err != nil {
					continue
				}
				name, _, _ := strings.Cut(reflect.StructTag(tag).Get("json"), ",")
				if name != "" && name != "-" {
					names = append(names, name)
				}
			}
			if len(names) >= min {
				slices.Sort(names)
				out = append(out, jsonStruct{where: rel + ": " + ts.Name.Name, names: names})
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestOneDefinitionPerReport: no two struct types of the module spell the
// same JSON record (the same set of at least three JSON names). A kernel
// report summary.json keeps (results.Housekeeping, results.KernelWatch,
// results.Env, …) is defined once, in results, and its producers (rt,
// sysinfo) fill that type, so that no copy drifts from it and no code
// copies one into the other field by field (issue 26).
func TestOneDefinitionPerReport(t *testing.T) {
	structs := moduleStructs(t, 3)
	if len(structs) < 20 {
		t.Fatalf("found %d JSON structs: the walk missed the module", len(structs))
	}
	seen := map[string]string{}
	for _, s := range structs {
		key := strings.Join(s.names, ",")
		if first, ok := seen[key]; ok {
			t.Errorf("%s and %s spell the same JSON record (%s): define it once, in results, and fill that type", first, s.where, key)
			continue
		}
		seen[key] = s.where
	}
}

// leafPkgs are the packages below the engine that take configuration:
// they know nothing of YAML, and take typed values, not the scenario's
// names of them.
var leafPkgs = []string{"rt", "net/udp", "net/tap", "net/netns", "noise", "workload", "probe", "pace", "record", "profile/sampler"}

// enumParams are the names of settings the scenario spells as enumerated
// words (policy: fifo, method: recvmsg, kind: spin, …).
var enumParams = []string{"kind", "method", "policy", "transport", "syscall", "clock", "spread", "overrun"}

// TestLeavesTakeTypedEnums: the leaves take no scenario enum as a string
// (engine/translate.go turns each into the leaf's own type, in one place):
// no exported function of a leaf has a string parameter named for one of
// enumParams, no exported struct field of that name is a string, and no
// leaf spells the scenario's policy names ("fifo", "rr", "other": rt
// speaks of SCHED_FIFO) in a string literal, as rt.ParsePolicy did.
func TestLeavesTakeTypedEnums(t *testing.T) {
	root := moduleRoot(t)
	fset := token.NewFileSet()
	for _, pkg := range leafPkgs {
		files, err := filepath.Glob(filepath.Join(root, pkg, "*.go"))
		if err != nil || len(files) == 0 {
			t.Fatalf("package %s: no Go files (%v)", pkg, err)
		}
		for _, path := range files {
			if strings.HasSuffix(path, "_test.go") {
				continue
			}
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				t.Fatal(err)
			}
			rel, _ := filepath.Rel(root, path)
			isString := func(e ast.Expr) bool { id, ok := e.(*ast.Ident); return ok && id.Name == "string" }
			ast.Inspect(f, func(n ast.Node) bool {
				switch x := n.(type) {
				case *ast.FuncDecl:
					if !x.Name.IsExported() {
						return true
					}
					for _, p := range x.Type.Params.List {
						for _, name := range p.Names {
							if isString(p.Type) && slices.Contains(enumParams, strings.ToLower(name.Name)) {
								t.Errorf("%s: %s takes %s as a string: take the leaf's own type (engine/translate.go translates)", rel, x.Name.Name, name.Name)
							}
						}
					}
				case *ast.TypeSpec:
					st, ok := x.Type.(*ast.StructType)
					if !ok || !x.Name.IsExported() || x.Assign.IsValid() {
						return true
					}
					for _, fld := range st.Fields.List {
						for _, name := range fld.Names {
							if name.IsExported() && isString(fld.Type) && slices.Contains(enumParams, strings.ToLower(name.Name)) {
								t.Errorf("%s: %s.%s is a string: make it the leaf's own type", rel, x.Name.Name, name.Name)
							}
						}
					}
				case *ast.BasicLit:
					if x.Kind == token.STRING {
						if v, err := strconv.Unquote(x.Value); err == nil && slices.Contains([]string{"fifo", "rr", "other"}, v) {
							t.Errorf("%s:%d: the scenario's policy name %q in a leaf", rel, fset.Position(x.Pos()).Line, v)
						}
					}
				}
				return true
			})
		}
	}
}

// TestOneThreadHandshake: rt.Start is the one place a started thread
// hands back what the kernel applied (and its setup's error): no other
// non-test file makes a channel of rt.Applied, as the engine's reader,
// sender and probes, noise and workload each once did.
func TestOneThreadHandshake(t *testing.T) {
	root := moduleRoot(t)
	err := filepath.WalkDir(root, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if n := d.Name(); n == "vendor" || n == "testdata" || strings.HasPrefix(n, ".") && path != root {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		for i, line := range strings.Split(string(src), "\n") {
			if strings.Contains(line, "chan rt.Applied") || rel != filepath.Join("rt", "thread.go") && strings.Contains(line, "chan Applied") {
				t.Errorf("%s:%d: a hand-made start handshake (%s): rt.Start returns the Applied, and runs setup on the thread", rel, i+1, strings.TrimSpace(line))
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
