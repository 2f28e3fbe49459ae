package scenario

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// specPaths lists every field of t a scenario can write, as Reference
// spells it: list items as [], sections by their fields.
func specPaths(t reflect.Type, prefix string) []string {
	var out []string
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if name == "" || name == "-" {
			continue
		}
		p, ft := prefix+name, f.Type
		switch {
		case ft.Kind() == reflect.Struct:
			out = append(out, specPaths(ft, p+".")...)
		case ft.Kind() == reflect.Slice && ft.Elem().Kind() == reflect.Struct:
			out = append(out, specPaths(ft.Elem(), p+"[].")...)
		default:
			out = append(out, p)
		}
	}
	return out
}

// TestReferenceCoversSpec: every field a scenario can write has a row in
// the scenario reference, and every row names a field (or the profile
// and seccomp sections, which a scalar may stand for).
func TestReferenceCoversSpec(t *testing.T) {
	var rows []string
	for _, f := range Reference() {
		if slices.Contains(rows, f.Path) {
			t.Errorf("row %s twice", f.Path)
		}
		rows = append(rows, f.Path)
	}
	fields := specPaths(reflect.TypeFor[Spec](), "")
	for _, p := range fields {
		if !slices.Contains(rows, p) {
			t.Errorf("field %s has no row in Reference (docs/scenario.md)", p)
		}
	}
	for _, r := range rows {
		if !slices.Contains(fields, r) && r != "profile" && r != "readers[].seccomp" {
			t.Errorf("Reference row %s names no field of Spec", r)
		}
	}
}

// TestBoundsUsed: every bound but the two spelled apart is a field.
func TestBoundsUsed(t *testing.T) {
	fields := specPaths(reflect.TypeFor[Spec](), "")
	for k := range bounds {
		if !slices.Contains(fields, k) && k != "probes[].file_blocks" && k != "probes[].messages_size" {
			t.Errorf("bound %s names no field", k)
		}
	}
}

// referenceSpec has an entry of every kind, so that every default of
// Reference is filled somewhere.
const referenceSpec = `
endpoints:
  - {name: u, count: 2}
  - {name: t, kind: tap, count: 2}
traffic:
  - {endpoint: u, interval: 20ms}
readers:
  - {name: r, endpoints: [u], overrun: catchup}
  - {name: r2, endpoints: [u], cpu: 1}
noise:
  - {kind: spin, threads: 1}
  - {kind: memory, threads: 1}
  - {kind: syscall, threads: 1}
  - {kind: messaging}
  - {kind: file_write, threads: 1}
  - {kind: udp, threads: 1}
probes:
  - {kind: tap_send, endpoint: t}
  - {kind: file_write}
  - {kind: messaging}
profile: {}
`

// TestReferenceDefaults: a default the reference gives as one value is
// the value Load fills in, for at least one entry of its list (the kinds
// decide which): the table and fillDefaults cannot drift apart.
func TestReferenceDefaults(t *testing.T) {
	s, err := Load("ref.yaml", []byte(referenceSpec))
	if err != nil {
		t.Fatal(err)
	}
	checked := 0
	for _, f := range Reference() {
		def, ok := strings.CutPrefix(f.Default, "`")
		if !ok || strings.Count(f.Default, "`") != 2 {
			continue
		}
		def, _, _ = strings.Cut(def, "`")
		if strings.Contains(def, "<") { // ep<i>, reader<i>: the index
			continue
		}
		n := 1
		list, _, isList := strings.Cut(f.Path, "[]")
		if isList {
			v, _, e := s.field(list)
			if e != nil {
				t.Fatalf("%s: %v", list, e)
			}
			n = v.Len()
		}
		var got []string
		match := false
		for i := range n {
			path := strings.Replace(f.Path, "[]", fmt.Sprintf("[%d]", i), 1)
			v, _, e := s.field(path)
			if e != nil {
				t.Fatalf("%s: %v", path, e)
			}
			want := reflect.New(v.Type()).Elem()
			if p := setValue(want, strings.Trim(def, "[]")); p != nil {
				t.Errorf("%s: default %q does not parse: %s", f.Path, def, p.msg)
				break
			}
			if reflect.DeepEqual(v.Interface(), want.Interface()) {
				match = true
				break
			}
			got = append(got, fmt.Sprint(v.Interface()))
		}
		if !match {
			t.Errorf("%s: Reference says default %s, Load filled %v", f.Path, f.Default, got)
		}
		checked++
	}
	t.Logf("%d defaults checked", checked)
	if checked < 40 {
		t.Errorf("checked %d defaults; the reference spec lost its entries?", checked)
	}
}
