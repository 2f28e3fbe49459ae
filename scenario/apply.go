package scenario

import (
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// Apply sets one field per "path=value" entry, as `rtload run --set` does:
// "duration=2s", "readers[0].method=recvmsg", "endpoints[0].count=100",
// "traffic[0].cpu=1" (empty or "null" unpins), and lists comma-separated,
// "readers[0].endpoints=ep0,ep1". Values go through the same decoders as
// Load. Every bad entry is reported in the returned ErrorList, with Line 0
// and Path "--set <path>"; the good entries are still applied. Apply does
// not validate values: call Validate afterwards.
func (s *Spec) Apply(sets []string) error {
	return s.apply(sets, func(path string) string { return "--set " + path }, true)
}

// Sets lists the entries Apply applied, "path=value", in the order given:
// what the command line changed, for a plan to show beside the
// scenario's description (which --set can make wrong: "reader on CPU 1"
// after --set readers[0].cpu=0).
func (s *Spec) Sets() []string { return slices.Clone(s.sets) }

// ApplyFlag sets the field at path to value for the command-line flag
// flag ("--duration"), as Apply does, and names flag wherever the value is
// blamed: its decode error here, and Validate's problems with it ("--duration:
// invalid duration "2"", not "--set duration"), since flag is what the user
// typed.
func (s *Spec) ApplyFlag(flag, path, value string) error {
	return s.apply([]string{path + "=" + value}, func(string) string { return flag }, false)
}

// apply is Apply with label naming, for each path, what set it; record
// keeps the entries for Sets.
func (s *Spec) apply(sets []string, label func(path string) string, record bool) error {
	var errs ErrorList
	for _, kv := range sets {
		path, value, ok := strings.Cut(kv, "=")
		path = strings.TrimSpace(path)
		if !ok {
			errs = append(errs, &Error{File: s.File, Path: "--set " + kv, Msg: "missing '='", Allowed: "path=value, e.g. readers[0].method=recvmsg"})
			continue
		}
		cur, e := s.set(path, value, Pos{})
		if e != nil {
			e.File = s.File
			e.Path = label(e.Path)
			errs = append(errs, e)
			continue
		}
		if s.cmdline == nil {
			s.cmdline = map[string]string{}
		}
		s.cmdline[cur] = label(cur)
		if record {
			s.sets = append(s.sets, cur+"="+value)
		}
	}
	s.rederive()
	return errs.err()
}

// segment is one step of a field path: a yaml key, or a list index.
type segment struct {
	key   string
	index int // -1 for a key
}

// parsePath splits "readers[0].endpoints[1]" into key and index segments.
func parsePath(path string) ([]segment, bool) {
	var segs []segment
	rest := path
	for {
		i := strings.IndexAny(rest, ".[")
		key := rest
		if i >= 0 {
			key = rest[:i]
		}
		if key == "" {
			return nil, false
		}
		segs = append(segs, segment{key: key, index: -1})
		if i < 0 {
			return segs, true
		}
		rest = rest[i:]
		for strings.HasPrefix(rest, "[") {
			j := strings.IndexByte(rest, ']')
			if j < 0 {
				return nil, false
			}
			n, err := strconv.Atoi(rest[1:j])
			if err != nil || n < 0 || strings.HasPrefix(rest[1:j], "+") {
				return nil, false
			}
			segs = append(segs, segment{index: n})
			rest = rest[j+1:]
		}
		if rest == "" {
			return segs, true
		}
		if rest[0] != '.' {
			return nil, false
		}
		rest = rest[1:]
	}
}

// field walks path ("readers[0].endpoints") from the spec's root and
// returns the field it names and its normalised path, or an *Error with
// Path relative to the spec and no file.
func (s *Spec) field(path string) (reflect.Value, string, *Error) {
	path = strings.TrimSpace(path)
	segs, ok := parsePath(path)
	if !ok {
		return reflect.Value{}, "", &Error{Path: path, Msg: "malformed path", Allowed: "key(.key|[index])*, e.g. readers[0].method"}
	}
	v := reflect.ValueOf(s).Elem()
	cur := ""
	for _, sg := range segs {
		if sg.index >= 0 {
			if v.Kind() != reflect.Slice {
				return reflect.Value{}, "", &Error{Path: cur, Msg: "not a list, cannot index"}
			}
			if sg.index >= v.Len() {
				allowed := "none: the list is empty"
				if v.Len() > 0 {
					allowed = fmt.Sprintf("0–%d", v.Len()-1)
				}
				return reflect.Value{}, "", &Error{Path: fmt.Sprintf("%s[%d]", cur, sg.index), Msg: fmt.Sprintf("index %d out of range", sg.index), Allowed: allowed}
			}
			v = v.Index(sg.index)
			cur = fmt.Sprintf("%s[%d]", cur, sg.index)
			continue
		}
		if v.Kind() != reflect.Struct {
			return reflect.Value{}, "", &Error{Path: cur, Msg: fmt.Sprintf("has no field %q", sg.key)}
		}
		f, ok := fieldIndex(v.Type(), sg.key)
		if !ok {
			return reflect.Value{}, "", &Error{Path: join(cur, sg.key), Msg: fmt.Sprintf("unknown field %q", sg.key), Allowed: allowedKeys(v.Type())}
		}
		v = v.Field(f)
		cur = join(cur, sg.key)
	}
	return v, cur, nil
}

// set decodes value into the field at path. It returns the normalised path
// it set, or an *Error with Path relative to the spec and no file. at is the
// source position to record for the new value (zero for --set). The
// caller re-derives the defaults (rederive) once all its values are set.
func (s *Spec) set(path, value string, at Pos) (string, *Error) {
	v, cur, e := s.field(path)
	if e != nil {
		return "", e
	}
	// A section a scalar may stand for takes the value in its field, as
	// in the file: readers[0].seccomp=allow-all, profile=true.
	if sh, ok := v.Interface().(shorthand); ok && v.Kind() == reflect.Struct {
		if v, cur, e = s.field(join(cur, sh.shorthandKey())); e != nil {
			return "", e
		}
	}
	if p := setValue(v, value); p != nil {
		return "", &Error{Path: cur, Msg: p.msg, Allowed: p.allowed}
	}
	// The value no longer comes from where Load saw it: drop what Load
	// knew of cur and anything below it.
	// Only a list has paths below it (set refuses sections); a scalar
	// spares a walk over every path of the spec.
	if v.Kind() == reflect.Slice {
		below := func(k string) bool { return strings.HasPrefix(k, cur+"[") }
		maps.DeleteFunc(s.pos, func(k string, _ Pos) bool { return below(k) })
		maps.DeleteFunc(s.defaulted, func(k string, _ bool) bool { return below(k) })
	}
	delete(s.pos, cur)
	delete(s.defaulted, cur)
	delete(s.invalid, cur)
	s.held = slices.DeleteFunc(slices.Clone(s.held), func(e *Error) bool { return under(e.Path, cur) })
	// A zero Pos (from --set) is recorded too: errors about cur then carry
	// no line instead of pointing at the enclosing section.
	if s.pos == nil {
		s.pos = map[string]Pos{}
	}
	s.pos[cur] = at
	return cur, nil
}

// setValue decodes the text of one --set value into v: scalars via
// parseScalar, lists comma-separated, pointers unset by "" or "null".
func setValue(v reflect.Value, value string) *problem {
	t := v.Type()
	switch {
	case t == durationType || t == sizeType:
	case t.Kind() == reflect.Struct:
		return &problem{msg: "is a section, set one of its fields", allowed: allowedKeys(t)}
	case t.Kind() == reflect.Map:
		return &problem{msg: "cannot be set with --set"}
	case t.Kind() == reflect.Slice:
		if t.Elem().Kind() == reflect.Struct {
			return &problem{msg: "is a list of sections, set a field of one entry", allowed: "e.g. " + "[0]." + strings.SplitN(allowedKeys(t.Elem()), ",", 2)[0]}
		}
		var items []string
		if strings.TrimSpace(value) != "" {
			items = strings.Split(value, ",")
		}
		s := reflect.MakeSlice(t, len(items), len(items))
		for i, it := range items {
			it = strings.TrimSpace(it)
			if p := parseScalar(s.Index(i), it); p != nil {
				p.msg = fmt.Sprintf("item %d: %s", i, p.msg)
				return p
			}
		}
		if len(items) == 0 {
			s = reflect.Zero(t)
		}
		v.Set(s)
		return nil
	case t.Kind() == reflect.Pointer:
		switch strings.TrimSpace(value) {
		case "", "null", "~":
			v.SetZero()
			return nil
		}
		p := reflect.New(t.Elem())
		if pr := parseScalar(p.Elem(), value); pr != nil {
			return pr
		}
		v.Set(p)
		return nil
	}
	return parseScalar(v, value)
}

// applyVariant applies the variant's overrides in sorted key order, recording
// each key's source position. Errors carry Path "variants[i]: <path>".
func (s *Spec) applyVariant(i int, v Variant, posOf func(string) Pos) ErrorList {
	var errs ErrorList
	prefix := fmt.Sprintf("variants[%d]", i)
	for _, k := range slices.Sorted(maps.Keys(v.Set)) {
		at := posOf(prefix + ".set." + k)
		if strings.HasPrefix(strings.TrimSpace(k), "variants") {
			errs = append(errs, &Error{Line: at.Line, Col: at.Col, Path: prefix + ": " + k, Msg: "a variant cannot set variants"})
			continue
		}
		if strings.HasPrefix(strings.TrimSpace(k), "requires") {
			errs = append(errs, &Error{Line: at.Line, Col: at.Col, Path: prefix + ": " + k, Msg: "a variant cannot set requires",
				Allowed: "requires in the scenario itself: a kernel setting needs another boot, so write one scenario per setting and compare their runs"})
			continue
		}
		if _, e := s.set(k, v.Set[k], at); e != nil {
			e.Line, e.Col = at.Line, at.Col
			e.Path = prefix + ": " + e.Path
			errs = append(errs, e)
		}
	}
	s.rederive()
	return errs
}
