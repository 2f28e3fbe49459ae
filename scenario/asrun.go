package scenario

import (
	"reflect"
	"slices"
	"strings"
)

// LoadAsRun decodes a scenario as a run recorded it, so that it can run
// again (`rtload check` re-runs a baseline's own scenario): data is the
// JSON of a Spec after Load (summary.json's "spec"; JSON is YAML, so it
// goes through Load's strict decoder and its limits). That JSON gives
// every field, the defaults included, so LoadAsRun treats a field whose
// value is the one the defaults derive from the other fields as left out:
// a variant that sets readers[0].policy: other then re-derives the
// priority 0 it had in the run, instead of keeping the 80 the JSON
// spelled out for the base. file names the source in errors ("DIR/
// summary.json (spec)"). Errors are Load's.
func LoadAsRun(file string, data []byte) (*Spec, error) {
	s, err := Load(file, data)
	if err != nil {
		return nil, err
	}
	for p, dflt := range s.derivedPaths() {
		delete(s.pos, p)
		if dflt {
			if s.defaulted == nil {
				s.defaulted = map[string]bool{}
			}
			s.defaulted[p] = true
		}
	}
	return s, nil
}

// derivedPaths finds the leaf fields of s whose value is what they have
// when left out: path → true when fillDefaults gave it (a default), false
// when it stays unset (an interval of 0 beside a non-zero duration). Each
// is tried on a copy: left out, defaults filled, value compared, put
// back. The cost is one fillDefaults per given leaf (a few hundred for the
// built-ins).
func (s *Spec) derivedPaths() map[string]bool {
	t := s.Clone()
	paths := make([]string, 0, len(t.pos))
	for p := range t.pos {
		if !strings.HasPrefix(p, "variants") {
			paths = append(paths, p)
		}
	}
	slices.Sort(paths)
	out := map[string]bool{}
	for _, p := range paths {
		v, _, e := t.field(p)
		if e != nil || !leaf(v.Type()) {
			continue
		}
		saved := reflect.New(v.Type()).Elem()
		saved.Set(v)
		at := t.pos[p]
		delete(t.pos, p)
		v.SetZero()
		clear(t.defaulted)
		t.fillDefaults()
		if reflect.DeepEqual(v.Interface(), saved.Interface()) {
			out[p] = t.defaulted[p]
		}
		v.Set(saved)
		t.pos[p] = at
	}
	return out
}

// leaf reports whether a field of type t is a value rather than a section:
// a scalar, a pointer to one, or a list of them.
func leaf(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.Struct, reflect.Map:
		return false
	case reflect.Slice, reflect.Pointer:
		return leaf(t.Elem())
	}
	return true
}
