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
