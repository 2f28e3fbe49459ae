package scenario

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// problem is a decode or validation failure before it is placed in a file.
// soft marks an enum value spelled wrong: Load keeps it for Validate, which
// lists it with every other problem, where Apply refuses it at once.
type problem struct {
	msg, allowed string
	soft         bool
}

// LoadFile reads the scenario at path and decodes it with Load, using path as
// the file name in errors. path must be a regular file of at most
// MaxFileSize bytes: anything else (a directory, a FIFO, /dev/zero, a
// larger file) is an ErrorList naming the file and the limit, returned
// without blocking or reading more than the limit. A missing file's error
// wraps fs.ErrNotExist.
func LoadFile(path string) (*Spec, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return Load(path, data)
}

// Load decodes one YAML scenario document strictly and fills in defaults.
// file names the source in errors and gives the default Name (base name
// without extension). Unknown or duplicate keys, wrong types, empty input and
// multiple documents are errors; all decode problems are returned together as
// an ErrorList. YAML anchors, aliases and merge keys (<<: *base) are
// expanded. The input is bounded before it is parsed: at most MaxFileSize
// bytes and MaxTokens tokens, then MaxNodes nodes once aliases are
// expanded. Load does not validate values: call Validate for that (an
// enum value spelled wrong, such as policy: fiffo, is one of its problems).
func Load(file string, data []byte) (*Spec, error) {
	s, d, err := load(file, data)
	if err != nil {
		return nil, err
	}
	if err := d.errs.list.err(); err != nil {
		return nil, err
	}
	return s, nil
}

// LoadLenient is Load for a command that validates next (rtload run and
// validate): a field that does not decode is not fatal. Its problem is
// held in the Spec, and Validate lists it with every other problem, so a
// file with 8 mistakes shows all 8 at once, not the decode ones first and
// the rest only after they are fixed. The fields that did not decode keep
// their zero or default value; Validate says nothing of them beyond the
// held problem. What stops a decoder from going on (a syntax error, the
// size and node limits, an empty document) is an error here as in Load.
// A Spec from LoadLenient is for Validate: never run one Validate refused.
func LoadLenient(file string, data []byte) (*Spec, error) {
	s, d, err := load(file, data)
	if err != nil {
		return nil, err
	}
	if d.over {
		return nil, d.errs.list.err()
	}
	s.held = d.errs.list
	return s, nil
}

// LoadFileLenient is LoadFile with LoadLenient's decoding.
func LoadFileLenient(path string) (*Spec, error) {
	data, err := readFile(path)
	if err != nil {
		return nil, err
	}
	return LoadLenient(path, data)
}

// load parses and decodes data, defaults filled, and returns the decoder
// with its problems; err is what stops decoding altogether.
func load(file string, data []byte) (*Spec, *decoder, error) {
	if len(data) > MaxFileSize {
		return nil, nil, tooLarge(file, strconv.Itoa(len(data))+" bytes")
	}
	if e := tooManyTokens(file, data, MaxTokens); e != nil {
		return nil, nil, ErrorList{e}
	}
	root, err := parseDocument(file, data)
	if err != nil {
		return nil, nil, err
	}
	s := &Spec{File: file, pos: map[string]Pos{}}
	d := &decoder{file: file, pos: s.pos}
	d.decode(root, reflect.ValueOf(s).Elem(), "")
	s.invalid = d.invalid
	s.fillDefaults()
	return s, d, nil
}

var yamlLine = regexp.MustCompile(`line (\d+)`)

// parseDocument parses data into the content node of its only document.
func parseDocument(file string, data []byte) (root *yaml.Node, err error) {
	defer func() {
		// The parser is third-party code fed untrusted input: turn a
		// panic into an error rather than crashing `rtload validate`.
		if r := recover(); r != nil {
			root, err = nil, ErrorList{{File: file, Msg: fmt.Sprintf("yaml: %v", r)}}
		}
	}()
	root, err = parseOne(file, data)
	if err != nil {
		// Plain flow-mapping keys cannot hold '[' in YAML, so the natural
		// variant form `set: {readers[0].method: recvmsg}` is a syntax
		// error. Retry with the brackets of such keys swapped for
		// look-alike runes (same column count), which the decoder swaps
		// back; keep the original error if that fails too.
		if fixed, n := flowKeyFix(data); n > 0 {
			if r, err2 := parseOne(file, fixed); err2 == nil {
				return r, nil
			}
		}
	}
	return root, err
}

// Look-alike runes standing for '[' and ']' in flow-mapping keys.
const (
	flowOpen  = "⟦" // ⟦
	flowClose = "⟧" // ⟧
)

// flowKey matches a plain flow-mapping key holding an index, such as
// "{readers[0].method:" or ", noise[0].threads:".
var flowKey = regexp.MustCompile(`([{,][ \t]*)([A-Za-z_][A-Za-z0-9_.]*\[[0-9]+\][A-Za-z0-9_.\[\]]*)([ \t]*:[ \t])`)

// flowKeyFix rewrites the brackets of indexed flow-mapping keys to
// flowOpen/flowClose and returns the new text and the number of keys changed.
func flowKeyFix(data []byte) ([]byte, int) {
	n := 0
	out := flowKey.ReplaceAllFunc(data, func(m []byte) []byte {
		n++
		sub := flowKey.FindSubmatch(m)
		key := strings.NewReplacer("[", flowOpen, "]", flowClose).Replace(string(sub[2]))
		return append(append(append([]byte{}, sub[1]...), key...), sub[3]...)
	})
	return out, n
}

// unfixKey undoes flowKeyFix on one mapping key.
func unfixKey(key string) string {
	if !strings.Contains(key, flowOpen) && !strings.Contains(key, flowClose) {
		return key
	}
	return strings.NewReplacer(flowOpen, "[", flowClose, "]").Replace(key)
}

// parseOne parses data, which must hold exactly one non-empty document.
func parseOne(file string, data []byte) (*yaml.Node, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err == io.EOF {
		return nil, ErrorList{{File: file, Msg: "empty document", Allowed: "a mapping of scenario fields"}}
	} else if err != nil {
		return nil, ErrorList{syntaxError(file, err)}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); err == nil {
		return nil, ErrorList{{File: file, Line: extra.Line, Col: extra.Column, Msg: "multiple documents in one scenario file", Allowed: "one document"}}
	} else if err != io.EOF {
		return nil, ErrorList{syntaxError(file, err)}
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		return nil, ErrorList{{File: file, Line: doc.Line, Col: doc.Column, Msg: "empty document", Allowed: "a mapping of scenario fields"}}
	}
	return doc.Content[0], nil
}

// syntaxError wraps a yaml parser error with the file name, keeping the
// library's wording and lifting its "line N" into Line.
func syntaxError(file string, err error) *Error {
	e := &Error{File: file, Msg: err.Error()}
	if m := yamlLine.FindStringSubmatch(e.Msg); m != nil {
		e.Line, _ = strconv.Atoi(m[1])
	}
	return e
}

// decoder walks a yaml.Node tree into a value by reflection, checking keys
// against yaml tags and recording the position of every field path.
type decoder struct {
	file    string
	errs    collector
	pos     map[string]Pos
	invalid map[string]*Error // soft problems (enum values), by path
	nodes   int               // decoded so far, aliases expanded
	alias   *yaml.Node        // the outermost alias being expanded, or nil
	over    bool              // MaxNodes passed (reported once)
}

// spend counts one node against MaxNodes and reports false once the budget
// is spent, naming the alias being expanded when there is one.
func (d *decoder) spend(at *yaml.Node, path string) bool {
	d.nodes++
	if d.nodes <= MaxNodes {
		return true
	}
	if !d.over {
		d.over = true
		allowed := fmt.Sprintf("at most %d nodes after aliases and merge keys are expanded", MaxNodes)
		if a := d.alias; a != nil {
			d.errs.add(&Error{File: d.file, Line: a.Line, Col: a.Column, Path: path,
				Msg: fmt.Sprintf("alias *%s expands the document past %d nodes", a.Value, MaxNodes), Allowed: allowed})
		} else {
			d.fail(at, path, problem{msg: fmt.Sprintf("document too large: more than %d nodes", MaxNodes), allowed: allowed})
		}
	}
	return false
}

func (d *decoder) fail(n *yaml.Node, path string, p problem) {
	d.errs.add(&Error{File: d.file, Line: n.Line, Col: n.Column, Path: path, Msg: p.msg, Allowed: p.allowed})
}

func isNull(n *yaml.Node) bool {
	return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null"
}

// resolve follows aliases to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a sequence"
	case yaml.ScalarNode:
		return fmt.Sprintf("%q", n.Value)
	}
	return "an alias"
}

// decode stores node n into v, whose field path is path. A null value
// on a pointer, struct, slice or map leaves v untouched and unrecorded,
// as if the key were absent; on a scalar it is an error (null.go).
func (d *decoder) decode(at *yaml.Node, v reflect.Value, path string) {
	if !d.spend(at, path) {
		return
	}
	if at.Kind == yaml.AliasNode && d.alias == nil {
		d.alias = at
		defer func() { d.alias = nil }()
	}
	n := resolve(at)
	if isNull(n) {
		if !nullIsAbsent(v.Type()) {
			d.pos[path] = Pos{at.Line, at.Column}
			d.fail(at, path, nullProblem(path, v.Type()))
		}
		return
	}
	d.pos[path] = Pos{at.Line, at.Column}
	t := v.Type()
	switch {
	case t == durationType || t == sizeType:
		d.scalar(at, n, v, path)
	case t.Kind() == reflect.Struct:
		if sh, ok := v.Interface().(shorthand); ok && n.Kind == yaml.ScalarNode {
			f, _ := fieldIndex(t, sh.shorthandKey())
			d.decode(at, v.Field(f), join(path, sh.shorthandKey()))
			return
		}
		d.mapping(n, v, path)
	case t.Kind() == reflect.Map:
		d.stringMap(n, v, path)
	case t.Kind() == reflect.Slice:
		d.sequence(n, v, path)
	case t.Kind() == reflect.Pointer:
		p := reflect.New(t.Elem())
		if d.scalar(at, n, p.Elem(), path) {
			v.Set(p)
		}
	default:
		d.scalar(at, n, v, path)
	}
}

func (d *decoder) scalar(at, n *yaml.Node, v reflect.Value, path string) bool {
	if n.Kind != yaml.ScalarNode {
		d.fail(at, path, problem{msg: fmt.Sprintf("expected %s, got %s", typeDesc(v.Type()), kindName(n))})
		return false
	}
	if p := parseScalar(v, n.Value); p != nil {
		if p.soft {
			if d.invalid == nil {
				d.invalid = map[string]*Error{}
			}
			d.invalid[path] = &Error{File: d.file, Line: at.Line, Col: at.Column, Path: path, Msg: p.msg, Allowed: p.allowed}
		} else {
			d.fail(at, path, *p)
		}
		return false
	}
	return true
}

func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, problem{msg: fmt.Sprintf("expected a mapping, got %s", kindName(n)), allowed: allowedKeys(v.Type())})
		return
	}
	for _, kv := range d.pairs(n, path) {
		f, ok := fieldIndex(v.Type(), kv.key)
		if !ok {
			d.fail(kv.at, join(path, kv.key), problem{msg: fmt.Sprintf("unknown field %q", kv.key), allowed: allowedKeys(v.Type())})
			continue
		}
		if kv.via != nil && d.alias == nil {
			d.alias = kv.via
			d.decode(kv.val, v.Field(f), join(path, kv.key))
			d.alias = nil
			continue
		}
		d.decode(kv.val, v.Field(f), join(path, kv.key))
	}
}

// pair is one key and value of a mapping; via is the merge key's alias
// when the pair came from a merged mapping.
type pair struct {
	key     string
	at, val *yaml.Node // the key node, the value node
	via     *yaml.Node
}

// maxMergeDepth bounds merges of mappings that merge again.
const maxMergeDepth = 16

// pairs returns the keys of mapping n with YAML merge keys expanded
// (`<<: *base` or `<<: [*a, *b]`, the YAML merge type): n's own keys first,
// then each merged mapping's keys that are not there yet, earlier merges
// first, so an own key overrides a merged one. A key that is not a string,
// a duplicate own key and a malformed merge are reported to d.
func (d *decoder) pairs(n *yaml.Node, path string) []pair { return d.mergePairs(n, path, 0) }

// mergePairs is pairs for a mapping merged depth levels down.
func (d *decoder) mergePairs(n *yaml.Node, path string, depth int) []pair {
	var out []pair
	var merges []*yaml.Node
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		if k.Kind == yaml.ScalarNode && k.ShortTag() == "!!merge" {
			merges = append(merges, n.Content[i+1])
			continue
		}
		if k.Kind != yaml.ScalarNode {
			d.fail(n.Content[i], path, problem{msg: fmt.Sprintf("mapping key must be a string, got %s", kindName(k))})
			continue
		}
		key := unfixKey(k.Value)
		if line, dup := seen[key]; dup {
			d.fail(n.Content[i], join(path, key), problem{msg: fmt.Sprintf("duplicate key %q (first on line %d)", key, line)})
			continue
		}
		seen[key] = n.Content[i].Line
		out = append(out, pair{key: key, at: n.Content[i], val: n.Content[i+1]})
	}
	for _, m := range merges {
		items := []*yaml.Node{m}
		if src := resolve(m); src.Kind == yaml.SequenceNode {
			items = src.Content
		}
		for _, it := range items {
			if !d.merge(it, path, depth, seen, &out) {
				return out
			}
		}
	}
	return out
}

// merge appends to out the pairs of the mapping that it (a mapping or an
// alias of one) holds and seen lacks. It returns false when decoding must
// stop: the node budget is spent (each merged mapping counts, so a mapping
// that merges itself several times cannot fan out unbounded) or merges
// nest deeper than maxMergeDepth.
func (d *decoder) merge(it *yaml.Node, path string, depth int, seen map[string]int, out *[]pair) bool {
	m := resolve(it)
	if m.Kind != yaml.MappingNode {
		d.fail(it, join(path, "<<"), problem{msg: fmt.Sprintf("merge key: expected a mapping or a sequence of mappings, got %s", kindName(m)),
			allowed: "<<: *anchor, or <<: [*a, *b], naming mappings"})
		return true
	}
	if it.Kind == yaml.AliasNode && d.alias == nil {
		d.alias = it
		defer func() { d.alias = nil }()
	}
	if !d.spend(it, path) {
		return false
	}
	if depth >= maxMergeDepth {
		d.fail(it, join(path, "<<"), problem{msg: fmt.Sprintf("merge keys nested more than %d deep", maxMergeDepth)})
		return false
	}
	for _, kv := range d.mergePairs(m, path, depth+1) {
		if _, have := seen[kv.key]; have {
			continue
		}
		seen[kv.key] = 0
		if kv.via == nil && it.Kind == yaml.AliasNode {
			kv.via = it
		}
		*out = append(*out, kv)
	}
	return !d.over
}

func (d *decoder) sequence(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind == yaml.ScalarNode && v.Type().Elem() == sizeType {
		// A single size may be written without brackets: size: 64.
		s := reflect.MakeSlice(v.Type(), 1, 1)
		d.decode(n, s.Index(0), path+"[0]")
		v.Set(s)
		return
	}
	if n.Kind != yaml.SequenceNode {
		d.fail(n, path, problem{msg: fmt.Sprintf("expected %s, got %s", typeDesc(v.Type()), kindName(n))})
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		d.decode(item, s.Index(i), fmt.Sprintf("%s[%d]", path, i))
	}
	v.Set(s)
}

// stringMap decodes a mapping of string keys to scalar values (variant
// sets). A sequence of scalars becomes a comma-separated value, the --set
// list syntax.
func (d *decoder) stringMap(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, problem{msg: fmt.Sprintf("expected a mapping, got %s", kindName(n))})
		return
	}
	m := reflect.MakeMapWithSize(v.Type(), len(n.Content)/2)
	for _, kv := range d.pairs(n, path) {
		if !d.spend(kv.val, path) {
			break
		}
		key, val := kv.key, resolve(kv.val)
		var s string
		switch {
		case isNull(val):
		case val.Kind == yaml.ScalarNode:
			s = val.Value
		case val.Kind == yaml.SequenceNode:
			items := make([]string, 0, len(val.Content))
			ok := true
			for _, it := range val.Content {
				it = resolve(it)
				if it.Kind != yaml.ScalarNode {
					ok = false
					break
				}
				items = append(items, it.Value)
			}
			if !ok {
				d.fail(kv.val, join(path, key), problem{msg: "expected a list of scalars"})
				continue
			}
			s = strings.Join(items, ",")
		default:
			d.fail(kv.val, join(path, key), problem{msg: fmt.Sprintf("expected a value, got %s", kindName(val))})
			continue
		}
		d.pos[join(path, key)] = Pos{kv.val.Line, kv.val.Column}
		m.SetMapIndex(reflect.ValueOf(key), reflect.ValueOf(s).Convert(v.Type().Elem()))
	}
	v.Set(m)
}

// shorthand is a section that a scalar may stand for: the scalar is the
// value of the field whose yaml key shorthandKey names (`profile: true` is
// `profile: {enabled: true}`).
type shorthand interface{ shorthandKey() string }

var (
	durationType = reflect.TypeFor[Duration]()
	sizeType     = reflect.TypeFor[Size]()
	textEnumType = reflect.TypeFor[textEnum]()
	cpuType      = reflect.TypeFor[CPU]()
	roundsType   = reflect.TypeFor[Rounds]()
	interleaveT  = reflect.TypeFor[Interleave]()
)

// textScalar is a scalar type with its own text decoder (the enums, CPU,
// the requires entries): parseScalar calls it before any other rule. It
// leaves the value unchanged on failure.
type textScalar interface{ parseText(string) *problem }

// parseScalar decodes text s into v, a scalar (string, int, uint, float,
// bool, Duration, Size). v is left unchanged on failure. It is the single
// scalar decoder shared by Load and Apply.
func parseScalar(v reflect.Value, s string) *problem {
	if v.CanAddr() {
		if e, ok := v.Addr().Interface().(textScalar); ok {
			return e.parseText(strings.TrimSpace(s))
		}
	}
	switch v.Type() {
	case durationType:
		d, p := parseDuration(s)
		if p != nil {
			return p
		}
		v.SetInt(int64(d))
		return nil
	case sizeType:
		n, p := parseSize(s)
		if p != nil {
			return p
		}
		v.SetUint(uint64(n))
		return nil
	}
	t := strings.TrimSpace(s)
	switch v.Kind() {
	case reflect.String:
		v.SetString(s)
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(t, 10, 64)
		if err != nil || v.OverflowInt(n) {
			return &problem{msg: fmt.Sprintf("expected an integer, got %q", s)}
		}
		v.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(t, 10, 64)
		if err != nil || v.OverflowUint(n) {
			return &problem{msg: fmt.Sprintf("expected a non-negative integer, got %q", s)}
		}
		v.SetUint(n)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(t, 64)
		if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
			return &problem{msg: fmt.Sprintf("expected a finite number, got %q", s)}
		}
		v.SetFloat(f)
	case reflect.Bool:
		b, err := strconv.ParseBool(t)
		if err != nil {
			return &problem{msg: fmt.Sprintf("expected a boolean, got %q", s), allowed: "true, false"}
		}
		v.SetBool(b)
	default:
		return &problem{msg: fmt.Sprintf("cannot decode %s from a scalar", v.Type())}
	}
	return nil
}

func typeDesc(t reflect.Type) string {
	switch t {
	case durationType:
		return "a duration"
	case sizeType:
		return "a size"
	case cpuType:
		return "a CPU number or auto"
	case roundsType:
		return "a count or auto"
	case interleaveT:
		return "a block length, off or auto"
	}
	if t.Implements(textEnumType) || reflect.PointerTo(t).Implements(textEnumType) {
		return "a string"
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "an integer"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a non-negative integer"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Bool:
		return "a boolean"
	case reflect.Pointer:
		return typeDesc(t.Elem())
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Struct {
			return "a sequence of mappings"
		}
		return "a sequence of " + strings.TrimPrefix(strings.TrimPrefix(typeDesc(t.Elem()), "an "), "a ") + "s"
	}
	return "a mapping"
}

// yamlKey is the yaml tag name of field f, "" when it is not decoded.
func yamlKey(f reflect.StructField) string {
	if !f.IsExported() {
		return ""
	}
	name, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
	if name == "-" {
		return ""
	}
	if name == "" {
		name = strings.ToLower(f.Name)
	}
	return name
}

// fieldIndex finds the struct field whose yaml key is key.
func fieldIndex(t reflect.Type, key string) (int, bool) {
	for i := range t.NumField() {
		if k := yamlKey(t.Field(i)); k != "" && k == key {
			return i, true
		}
	}
	return 0, false
}

// allowedKeys lists the yaml keys of struct type t in declaration order.
func allowedKeys(t reflect.Type) string {
	var keys []string
	for i := range t.NumField() {
		if k := yamlKey(t.Field(i)); k != "" {
			keys = append(keys, k)
		}
	}
	return strings.Join(keys, ", ")
}

func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// has reports whether path was given in the source (or by a variant).
func (s *Spec) has(path string) bool {
	_, ok := s.pos[path]
	return ok
}
