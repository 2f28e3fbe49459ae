// Package termsafe makes text from results files safe to print on a
// terminal. rtload reads results other people wrote (a colleague's, a CI
// artefact, a fleet host's), and any string in them (a variant or reader
// name, a kernel version, a note, a file name, a kernel symbol from a
// profile) could carry escape sequences that set the terminal's title,
// clear the screen, move the cursor to erase or forge lines, or a newline
// that forges a line of rtload's own output. Escape is the one function
// that neutralises them; every text, markdown and CSV output runs the
// strings it takes from results through it (Copy does so for a whole
// value), and Writer applies it, keeping rtload's own line breaks, to
// everything a reading command prints.
//
// What is escaped, as Go escapes (\x1b, \n, \u202e), so that what was
// there stays visible: C0 controls (newline, tab and carriage return
// included), DEL, C1 controls (U+0080–U+009F), Unicode format characters
// (bidirectional overrides and isolates, zero-width characters, U+FEFF),
// line and paragraph separators, and bytes that are not UTF-8. Everything
// else, backslash included, is kept. Standard library only.
package termsafe

import (
	"io"
	"reflect"
	"strconv"
	"sync"
	"unicode"
	"unicode/utf8"
)

// Escape returns s with every character that could act on a terminal
// written as a Go escape (see the package doc); a string that needs none
// is returned as it is, without allocating.
func Escape(s string) string { return escape(s, false) }

// Lines is Escape keeping newlines and tabs: for text whose line breaks
// are rtload's own (an error message of several lines, a rendered table).
func Lines(s string) string { return escape(s, true) }

// unsafeRune reports whether r (decoded from valid UTF-8) must be escaped.
func unsafeRune(r rune) bool {
	if r < 0x20 || r == 0x7f {
		return true
	}
	if r < 0x80 {
		return false
	}
	return unicode.IsControl(r) || unicode.In(r, unicode.Cf, unicode.Zl, unicode.Zp)
}

func escape(s string, keepLines bool) string {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if (r == utf8.RuneError && n == 1) || unsafeRune(r) && !(keepLines && (r == '\n' || r == '\t')) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	b := make([]byte, 0, len(s)+16)
	b = append(b, s[:i]...)
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			b = append(b, `\x`...)
			b = append(b, hex[s[i]>>4], hex[s[i]&0xf])
		case keepLines && (r == '\n' || r == '\t'):
			b = append(b, byte(r))
		case r == '\n':
			b = append(b, `\n`...)
		case r == '\t':
			b = append(b, `\t`...)
		case r == '\r':
			b = append(b, `\r`...)
		case r < 0x80 && unsafeRune(r):
			b = append(b, `\x`...)
			b = append(b, hex[r>>4], hex[r&0xf])
		case unsafeRune(r):
			b = append(b, `\u`...)
			q := strconv.FormatInt(int64(r), 16)
			for k := len(q); k < 4; k++ {
				b = append(b, '0')
			}
			b = append(b, q...)
		default:
			b = append(b, s[i:i+n]...)
		}
		i += n
	}
	return string(b)
}

const hex = "0123456789abcdef"

// Writer returns a writer that passes everything written to w through
// Lines: rtload's own newlines and tabs stay, every other control
// character or escape sequence is printed as its escape. Each Write is
// escaped on its own (a character split across two writes is printed as
// its bytes' escapes); Write reports len(p) on success.
func Writer(w io.Writer) io.Writer { return writer{w} }

type writer struct{ w io.Writer }

func (w writer) Write(p []byte) (int, error) {
	s := Lines(string(p))
	if _, err := io.WriteString(w.w, s); err != nil {
		return 0, err
	}
	return len(p), nil
}

// Copy returns a deep copy of v in which every string reachable through
// exported fields, slices, arrays, maps, pointers and interfaces is
// Escape'd: what a text renderer is given in place of data read from
// results, so that no string in it reaches the terminal raw. Parts of v
// holding no such string (histogram counts, times) are shared, not
// copied; v itself is never modified.
func Copy[T any](v T) T {
	rv := reflect.ValueOf(&v).Elem()
	out := reflect.New(rv.Type()).Elem()
	out.Set(copyValue(rv))
	return out.Interface().(T)
}

func copyValue(v reflect.Value) reflect.Value {
	t := v.Type()
	if !hasString(t) {
		return v
	}
	switch t.Kind() {
	case reflect.String:
		n := reflect.New(t).Elem()
		n.SetString(Escape(v.String()))
		return n
	case reflect.Struct:
		n := reflect.New(t).Elem()
		n.Set(v)
		for i := range t.NumField() {
			if f := n.Field(i); f.CanSet() && hasString(t.Field(i).Type) {
				f.Set(copyValue(v.Field(i)))
			}
		}
		return n
	case reflect.Pointer:
		if v.IsNil() {
			return v
		}
		n := reflect.New(t.Elem())
		n.Elem().Set(copyValue(v.Elem()))
		return n
	case reflect.Slice:
		if v.IsNil() {
			return v
		}
		n := reflect.MakeSlice(t, v.Len(), v.Len())
		for i := range v.Len() {
			n.Index(i).Set(copyValue(v.Index(i)))
		}
		return n
	case reflect.Array:
		n := reflect.New(t).Elem()
		for i := range v.Len() {
			n.Index(i).Set(copyValue(v.Index(i)))
		}
		return n
	case reflect.Map:
		if v.IsNil() {
			return v
		}
		n := reflect.MakeMapWithSize(t, v.Len())
		it := v.MapRange()
		for it.Next() {
			n.SetMapIndex(copyValue(it.Key()), copyValue(it.Value()))
		}
		return n
	case reflect.Interface:
		if v.IsNil() {
			return v
		}
		n := reflect.New(t).Elem()
		n.Set(copyValue(v.Elem()))
		return n
	}
	return v
}

// stringTypes caches hasString by type.
var stringTypes sync.Map // reflect.Type → bool

// hasString reports whether a value of type t can hold a string Copy
// reaches (through exported fields only).
func hasString(t reflect.Type) bool {
	if b, ok := stringTypes.Load(t); ok {
		return b.(bool)
	}
	stringTypes.Store(t, true) // a recursive type: assume so while it is worked out
	b := computeHasString(t)
	stringTypes.Store(t, b)
	return b
}

func computeHasString(t reflect.Type) bool {
	switch t.Kind() {
	case reflect.String, reflect.Interface:
		return true
	case reflect.Pointer, reflect.Slice, reflect.Array:
		return hasString(t.Elem())
	case reflect.Map:
		return hasString(t.Key()) || hasString(t.Elem())
	case reflect.Struct:
		for i := range t.NumField() {
			if f := t.Field(i); f.IsExported() && hasString(f.Type) {
				return true
			}
		}
	}
	return false
}
