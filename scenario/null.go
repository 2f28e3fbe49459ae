package scenario

import (
	"reflect"
	"strings"
)

// An explicit null (`priority: ~`, `priority: null`, `priority:`) on a
// scalar field is an error, not the field's default: a kernel engineer
// who writes `priority: ~` may mean "no priority" (SCHED_OTHER?) or "the
// kernel's", and a run at SCHED_FIFO 80 would be a silent guess. The
// key left out is the default; a null says nothing and is refused,
// naming the field, its default and its allowed values. A null keeps its
// meaning where a field's absence has one spelled the same way: an
// optional field held by pointer (`cpu: null`: not pinned), and a
// mapping, list or map (`noise:` with nothing under it: none).

// nullIsAbsent reports whether a null on a field of type t means what the
// key left out means (a pointer, a struct, a slice or a map), rather
// than a scalar's missing value (nullProblem).
func nullIsAbsent(t reflect.Type) bool {
	if t == durationType || t == sizeType {
		return false
	}
	switch t.Kind() {
	case reflect.Pointer, reflect.Struct, reflect.Slice, reflect.Map:
		return true
	}
	return false
}

// nullProblem is the problem of a null on the scalar field at path of type
// t: its default and allowed values from the reference (Reference), else
// what the field takes.
func nullProblem(path string, t reflect.Type) problem {
	msg := "null is not a value"
	allowed := typeDesc(t)
	if e, ok := reflect.New(t).Interface().(textEnum); ok {
		allowed = e.allowed()
	}
	if f, ok := referenceField(genericPath(path)); ok {
		if f.Default != "" {
			msg += ": omit the key for its default, " + plain(f.Default)
		}
		if f.Allowed != "" {
			allowed, _, _ = strings.Cut(plain(f.Allowed), "; ") // the values, not what they mean
		}
	}
	return problem{msg: msg, allowed: allowed}
}

// referenceField is the reference's row for generic path p.
func referenceField(p string) (Field, bool) {
	for _, f := range Reference() {
		if f.Path == p {
			return f, true
		}
	}
	return Field{}, false
}

// genericPath is path with every list index as [] ("readers[0].priority"
// → "readers[].priority"), as the reference spells it.
func genericPath(path string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(path, '[')
		if i < 0 {
			b.WriteString(path)
			return b.String()
		}
		j := strings.IndexByte(path[i:], ']')
		if j < 0 {
			b.WriteString(path)
			return b.String()
		}
		b.WriteString(path[:i] + "[]")
		path = path[i+j+1:]
	}
}

// plain is reference text s without its markdown code quotes.
func plain(s string) string { return strings.ReplaceAll(s, "`", "") }
