package docgen

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/session"
	"github.com/rtload/rtload/verdict"
)

// TestDocsJSONFields fails when a field of a JSON document that report,
// compare or check print (--format json) is not named in docs/results.md
// (as `field`): a field added to compare's `left_out` or `interleaved`, or
// to check's `prior_dropped`, without a word for the reader of the JSON.
// summary.json's own fields (the report's `summary`) are the contract's,
// documented in the same file's summary section, and not walked here.
func TestDocsJSONFields(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(docsDir, "results.md"))
	if err != nil {
		t.Fatal(err)
	}
	for schema, typ := range map[string]reflect.Type{
		"rtload-report":  reflect.TypeFor[session.RunDoc](),
		"rtload-compare": reflect.TypeFor[verdict.Compared](),
		"rtload-check":   reflect.TypeFor[verdict.Report](),
	} {
		fields := map[string]string{}
		jsonFields(typ, schema, map[reflect.Type]bool{}, fields)
		var missing []string
		for name, path := range fields {
			if !strings.Contains(string(doc), "`"+name+"`") {
				missing = append(missing, path)
			}
		}
		sort.Strings(missing)
		for _, m := range missing {
			t.Errorf("%s: JSON field %s is not documented in docs/results.md", schema, m)
		}
	}
}

// jsonFields adds to out each JSON field name reachable from t (through
// pointers, slices, maps and embedded structs), keyed by name, with the
// first path that reaches it ("rtload-compare.left_out.disturbed"). A
// results.Summary is not entered.
func jsonFields(t reflect.Type, path string, seen map[reflect.Type]bool, out map[string]string) {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Map || t.Kind() == reflect.Array {
		t = t.Elem()
	}
	if t.Kind() != reflect.Struct || seen[t] || t == reflect.TypeFor[results.Summary]() {
		return
	}
	seen[t] = true
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case !f.IsExported() || name == "-":
			continue
		case f.Anonymous && name == "":
			jsonFields(f.Type, path, seen, out)
			continue
		case name == "":
			name = f.Name
		}
		if _, ok := out[name]; !ok {
			out[name] = path + "." + name
		}
		jsonFields(f.Type, path+"."+name, seen, out)
	}
}
