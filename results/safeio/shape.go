package safeio

import (
	"bytes"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/rtload/rtload/internal/termsafe"
)

// The size-checked pre-pass of summary.json. json.Unmarshal builds
// everything before a limit can be checked, and a few bytes of JSON can
// cost a thousand bytes of memory: "{}," is a whole Trial (328 bytes) in
// a trials list, a whole Reader (1192) in a readers list. So before
// Unmarshal runs, Bounds.Check walks the document's tokens (json.Decoder
// Token, holding nothing) alongside the Go type they decode into, and
//   - refuses a list past its limit (Bounds.Lists; results sets MaxTrials trials, MaxReaders
//     readers, probes, traffic or noise entries, MaxBuckets counts,
//     MaxWakeupLogFiles log files, MaxProfiles profiles) at the element
//     that passes it;
//   - adds up the memory decoding will take (each element's Go size,
//     strings' bytes, maps' entries, `any` values as maps and slices) and
//     refuses the document once that passes Bounds.Limit (results'
//     MaxSummaryMemory);
//   - refuses a member key that is not a field's name but that
//     encoding/json would still decode into that field (it matches keys
//     case-insensitively, with Unicode simple folding: "reader\u017f", with
//     a long s, is "readers" to it, and a Kelvin sign is a K).
// Every refusal comes before anything is allocated for the document, and
// names the position (file:line:col) and the list or key.
//
// Why refuse the folded key rather than follow it as encoding/json does:
// the walk is only safe if it sends every key to the field the decoder
// sends it to, and the decoder's folding is not ours to copy (encoding/json
// v1 folds Unicode simply; its v2 under GOEXPERIMENT=jsonv2 can also drop
// '_' and '-'). rtload writes every key exactly, so a key that only folds
// to a field has no writer but a hand or an attacker. The pass folds at
// least as widely as either decoder (fieldFold) and takes only exact
// names, so no key can reach a field the walk did not charge, whichever
// folding the decoder uses.

// Go's sizes of what json.Unmarshal makes for an `any`.
const (
	anyMapBytes   = 48 // map header
	anyEntryBytes = 64 // a map entry: key header, value interface, slot slack
	anySliceBytes = 24
	anyElemBytes  = 16
)

// Bounds are what a document, or a series of documents (a JSONL file's
// lines), may cost decoded: Lists, the element limits of lists by JSON
// field name; Limit, the memory all of them may take decoded, in bytes,
// and What, what that limit is more than ("any summary rtload writes");
// Used, what Check has charged so far.
type Bounds struct {
	Lists       map[string]int
	Used, Limit int64
	What        string
}

// Check runs the pre-pass over data (line number line of file name, 1 for
// a whole document) for type t, charging b with record bytes for the
// record itself and what data decodes to, and refuses data that passes
// b's Limit (naming name:line:col) or a list's limit. A syntax error ends
// it with ErrSyntax, for json.Unmarshal to report with its own message.
func (b *Bounds) Check(data []byte, name string, line int, t reflect.Type, record int64) error {
	c := &shape{data: data, name: name, line0: line - 1, mem: b.Used, limit: b.Limit, what: b.What, lists: b.Lists}
	err := c.charge(record)
	if err == nil {
		err = c.value(t, "")
	}
	b.Used = c.mem
	return err
}

// shape is the pre-pass: a small scanner of JSON that keeps nothing but
// where it is (it is several times faster than json.Decoder.Token, which
// boxes every token).
type shape struct {
	data  []byte
	off   int
	name  string
	line0 int // lines before data in name
	mem   int64
	limit int64  // of mem
	what  string // what more than limit is more than
	lists map[string]int
	depth int
	path  []pathElem // where the walk is, for messages
}

// pathElem is one step of a field path: a member key, or an index (key "").
type pathElem struct {
	key string
	idx int
}

// where is the current field path: "trials[3].readers[0].per_call.all.counts".
func (c *shape) where() string {
	var b strings.Builder
	for _, e := range c.path {
		if e.key == "" {
			fmt.Fprintf(&b, "[%d]", e.idx)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(termsafe.Escape(e.key))
	}
	if b.Len() == 0 {
		return "summary"
	}
	return b.String()
}

var (
	unmarshalerType     = reflect.TypeFor[json.Unmarshaler]()
	textUnmarshalerType = reflect.TypeFor[encoding.TextUnmarshaler]()
)

// custom reports whether values of t decode through their own method.
func custom(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return t.Kind() != reflect.Interface && (p.Implements(unmarshalerType) || p.Implements(textUnmarshalerType))
}

// errorf is a refusal at the scanner's position.
func (c *shape) errorf(format string, args ...any) error {
	line, col := Position(c.data, int64(c.off)+1)
	return fmt.Errorf("%s:%d:%d: %s", c.name, c.line0+line, col, fmt.Sprintf(format, args...))
}

// charge adds n bytes of memory and refuses past the limit.
func (c *shape) charge(n int64) error {
	c.mem += n
	if c.mem > c.limit {
		return c.errorf("%s: decoding would take more than %d MiB of memory, more than %s: refused", c.where(), c.limit>>20, c.what)
	}
	return nil
}

// ErrSyntax ends the pass at a syntax error, for Unmarshal to report.
var ErrSyntax = errors.New("syntax")

// maxDepth is encoding/json's own nesting limit.
const maxDepth = 10000

func (c *shape) space() {
	for c.off < len(c.data) {
		switch c.data[c.off] {
		case ' ', '\t', '\n', '\r':
			c.off++
		default:
			return
		}
	}
}

// peek returns the next non-space byte (0 at the end).
func (c *shape) peek() byte {
	c.space()
	if c.off >= len(c.data) {
		return 0
	}
	return c.data[c.off]
}

// value walks one JSON value decoding into t (nil: a field Unmarshal
// ignores, walked without charge). field is the JSON name of the list
// or member it sits in, for the list limits.
func (c *shape) value(t reflect.Type, field string) error {
	start := c.off
	b := c.peek()
	if t != nil && custom(t) {
		// Decoded by the type's own method: charge what it is given.
		if err := c.value(nil, field); err != nil {
			return err
		}
		return c.charge(int64(c.off - start))
	}
	if b == 'n' {
		return c.literal("null")
	}
	if t != nil && t.Kind() == reflect.Pointer {
		if err := c.charge(int64(t.Elem().Size())); err != nil {
			return err
		}
		return c.value(t.Elem(), field)
	}
	switch b {
	case '{':
		return c.nested(func() error { return c.object(t, field) })
	case '[':
		return c.nested(func() error { return c.array(t, field) })
	case '"':
		n, err := c.str()
		if err != nil {
			return err
		}
		if t != nil {
			switch t.Kind() {
			case reflect.String, reflect.Slice:
				return c.charge(int64(n))
			case reflect.Interface:
				return c.charge(int64(n) + anyElemBytes)
			}
		}
		return nil
	case 't':
		return c.literal("true")
	case 'f':
		return c.literal("false")
	}
	if b == '-' || b >= '0' && b <= '9' {
		for c.off < len(c.data) && strings.IndexByte("+-.eE0123456789", c.data[c.off]) >= 0 {
			c.off++
		}
		if t != nil && t.Kind() == reflect.Interface {
			return c.charge(anyElemBytes)
		}
		return nil
	}
	return ErrSyntax
}

// nested runs f one level deeper, refusing encoding/json's depth limit.
func (c *shape) nested(f func() error) error {
	if c.depth++; c.depth > maxDepth {
		return ErrSyntax
	}
	err := f()
	c.depth--
	return err
}

func (c *shape) literal(lit string) error {
	if !bytes.HasPrefix(c.data[c.off:], []byte(lit)) {
		return ErrSyntax
	}
	c.off += len(lit)
	return nil
}

// str scans a string (at its opening quote) and returns its length in
// bytes as written (escapes make it at most that long decoded).
func (c *shape) str() (int, error) {
	c.off++ // '"'
	start := c.off
	for c.off < len(c.data) {
		switch c.data[c.off] {
		case '"':
			n := c.off - start
			c.off++
			return n, nil
		case '\\':
			c.off += 2
		default:
			c.off++
		}
	}
	return 0, ErrSyntax
}

// key scans a member name and returns it decoded.
func (c *shape) key() (string, error) {
	if c.peek() != '"' {
		return "", ErrSyntax
	}
	start := c.off
	n, err := c.str()
	if err != nil {
		return "", err
	}
	raw := c.data[start+1 : start+1+n]
	if bytes.IndexByte(raw, '\\') < 0 {
		return string(raw), nil
	}
	var k string
	if json.Unmarshal(c.data[start:c.off], &k) != nil {
		return "", ErrSyntax
	}
	return k, nil
}

// object walks an object (at its '{') decoding into t.
func (c *shape) object(t reflect.Type, field string) error {
	c.off++
	var fields *fieldIndex
	kind := reflect.Invalid
	if t != nil {
		kind = t.Kind()
	}
	switch kind {
	case reflect.Struct:
		fields = structFields(t)
	case reflect.Map:
		if err := c.charge(anyMapBytes); err != nil {
			return err
		}
	case reflect.Interface:
		if err := c.charge(anyMapBytes + anyElemBytes); err != nil {
			return err
		}
	}
	if c.peek() == '}' {
		c.off++
		return nil
	}
	for {
		keyAt := c.off
		key, err := c.key()
		if err != nil {
			return err
		}
		if c.peek() != ':' {
			return ErrSyntax
		}
		c.off++
		var ft reflect.Type
		name := field
		switch kind {
		case reflect.Struct:
			if ft = fields.exact[key]; ft == nil {
				if want, ok := fields.folded[fieldFold(key)]; ok {
					c.off = keyAt
					return c.errorf("%s: key \"%s\" is not \"%s\", but encoding/json would decode it into that field: refused (rtload writes its keys exactly)",
						c.where(), termsafe.Escape(key), want)
				}
			}
			name = key
		case reflect.Map:
			ft = t.Elem()
			if err := c.charge(int64(t.Key().Size()+t.Elem().Size()) + 16 + int64(len(key))); err != nil {
				return err
			}
		case reflect.Interface:
			ft = t
			if err := c.charge(anyEntryBytes + int64(len(key))); err != nil {
				return err
			}
		}
		c.path = append(c.path, pathElem{key: key})
		if err := c.value(ft, name); err != nil {
			return err
		}
		c.path = c.path[:len(c.path)-1]
		switch c.peek() {
		case ',':
			c.off++
		case '}':
			c.off++
			return nil
		default:
			return ErrSyntax
		}
	}
}

// array walks an array (at its '[') decoding into t.
func (c *shape) array(t reflect.Type, field string) error {
	c.off++
	var et reflect.Type
	var size int64
	if t != nil {
		switch t.Kind() {
		case reflect.Slice, reflect.Array:
			et = t.Elem()
			if t.Kind() == reflect.Slice {
				size = int64(et.Size())
			}
		case reflect.Interface:
			et, size = t, anyElemBytes
			if err := c.charge(anySliceBytes + anyElemBytes); err != nil {
				return err
			}
		}
	}
	limit, limited := c.lists[field]
	limited = limited && t != nil && t.Kind() == reflect.Slice
	if c.peek() == ']' {
		c.off++
		return nil
	}
	for n := 0; ; n++ {
		if limited && n >= limit {
			return c.errorf("%s: more than %d entries, more than the limit of %d: refused", c.where(), limit, limit)
		}
		c.path = append(c.path, pathElem{idx: n})
		if err := c.charge(size); err != nil {
			return err
		}
		if err := c.value(et, field); err != nil {
			return err
		}
		c.path = c.path[:len(c.path)-1]
		switch c.peek() {
		case ',':
			c.off++
		case ']':
			c.off++
			return nil
		default:
			return ErrSyntax
		}
	}
}

// fieldCache caches structFields by type.
var fieldCache sync.Map // reflect.Type → *fieldIndex

// fieldIndex is a struct type's JSON fields: exact maps each field's JSON
// name to its type, folded maps each name's fieldFold to the name.
type fieldIndex struct {
	exact  map[string]reflect.Type
	folded map[string]string
}

// structFields indexes the JSON fields of t, embedded structs' fields
// included. As in encoding/json, a field at a shallower depth of
// embedding hides one of the same name deeper down; at one depth, the
// first field of a name is kept (encoding/json would drop an ambiguous
// name and decode nothing; walking it as one of the types only charges
// more).
func structFields(t reflect.Type) *fieldIndex {
	if m, ok := fieldCache.Load(t); ok {
		return m.(*fieldIndex)
	}
	fi := &fieldIndex{exact: map[string]reflect.Type{}, folded: map[string]string{}}
	level := []reflect.Type{t}
	for depth := 0; len(level) > 0 && depth < 8; depth++ {
		var next []reflect.Type
		for _, st := range level {
			next = append(next, addFields(fi, st)...)
		}
		level = next
	}
	fieldCache.Store(t, fi)
	return fi
}

// addFields adds st's own fields to fi, where no shallower field has the
// name, and returns its embedded structs, for the next depth.
func addFields(fi *fieldIndex, st reflect.Type) (embedded []reflect.Type) {
	for i := range st.NumField() {
		f := st.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				embedded = append(embedded, ft)
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if _, ok := fi.exact[name]; !ok {
			fi.exact[name] = f.Type
		}
		if k := fieldFold(name); fi.folded[k] == "" {
			fi.folded[k] = name
		}
	}
	return embedded
}

// fieldFold folds a member key at least as widely as any encoding/json
// matches it to a field: ASCII letters to upper case, every other rune to
// the smallest rune of its Unicode simple-fold orbit (so 'ſ' is 'S', the
// Kelvin sign 'K', as in encoding/json's foldName), and '_' and '-'
// dropped (as json v2's case-insensitive match does). Two keys the
// decoder matches have one fieldFold.
func fieldFold(key string) string {
	b := make([]byte, 0, len(key))
	for _, r := range key {
		switch {
		case r == '_' || r == '-':
			continue
		case r < utf8.RuneSelf:
			if 'a' <= r && r <= 'z' {
				r -= 'a' - 'A'
			}
		default:
			r = foldRune(r)
		}
		b = utf8.AppendRune(b, r)
	}
	return string(b)
}

// foldRune is the smallest rune of r's Unicode simple-fold orbit.
func foldRune(r rune) rune {
	low := r
	for f := unicode.SimpleFold(r); f != r; f = unicode.SimpleFold(f) {
		low = min(low, f)
	}
	return low
}

// Position turns encoding/json's error offset (bytes read up to and
// including the offending one) into a 1-based line and column.
func Position(data []byte, off int64) (line, col int) {
	if len(data) == 0 {
		return 1, 1
	}
	off = min(max(off, 1), int64(len(data)))
	before := data[:off-1]
	line = 1 + bytes.Count(before, []byte{'\n'})
	col = len(before) - bytes.LastIndexByte(before, '\n')
	return line, col
}
