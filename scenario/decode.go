package scenario

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"
)

// Default values filled in by Load.
const (
	defaultDuration    = Duration(10 * time.Second)
	defaultPeriod      = Duration(10 * time.Millisecond)
	defaultPriority    = 80
	defaultBatch       = 8
	defaultSize        = Size(64)
	defaultBucketWidth = 128
	defaultOrigin      = 64
	defaultOverflow    = 8256
)

// maxNodes bounds the work of one decode, so alias chains ("billion laughs")
// cannot make Load run away.
const maxNodes = 1 << 20

// problem is a decode or validation failure before it is placed in a file.
type problem struct {
	msg, allowed string
}

// LoadFile reads the scenario at path and decodes it with Load, using path as
// the file name in errors.
func LoadFile(path string) (*Spec, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("scenario: %w", err)
	}
	return Load(path, data)
}

// Load decodes one YAML scenario document strictly and fills in defaults.
// file names the source in errors and gives the default Name (base name
// without extension). Unknown or duplicate keys, wrong types, empty input and
// multiple documents are errors; all decode problems are returned together as
// an ErrorList. Load does not validate values: call Validate for that.
func Load(file string, data []byte) (*Spec, error) {
	root, err := parseDocument(file, data)
	if err != nil {
		return nil, err
	}
	s := &Spec{File: file, pos: map[string]Pos{}}
	d := &decoder{file: file, pos: s.pos}
	d.decode(root, reflect.ValueOf(s).Elem(), "")
	if err := d.errs.err(); err != nil {
		return nil, err
	}
	s.fillDefaults()
	return s, nil
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
	file  string
	errs  ErrorList
	pos   map[string]Pos
	nodes int
}

func (d *decoder) fail(n *yaml.Node, path string, p problem) {
	d.errs = append(d.errs, &Error{File: d.file, Line: n.Line, Col: n.Column, Path: path, Msg: p.msg, Allowed: p.allowed})
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
// leaves v untouched and unrecorded, as if the key were absent.
func (d *decoder) decode(at *yaml.Node, v reflect.Value, path string) {
	d.nodes++
	if d.nodes > maxNodes {
		if d.nodes == maxNodes+1 {
			d.fail(at, path, problem{msg: "document too large (too many nodes after alias expansion)"})
		}
		return
	}
	n := resolve(at)
	if isNull(n) {
		return
	}
	d.pos[path] = Pos{at.Line, at.Column}
	t := v.Type()
	switch {
	case t == durationType || t == sizeType:
		d.scalar(at, n, v, path)
	case t.Kind() == reflect.Struct:
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
		d.fail(at, path, *p)
		return false
	}
	return true
}

func (d *decoder) mapping(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.fail(n, path, problem{msg: fmt.Sprintf("expected a mapping, got %s", kindName(n)), allowed: allowedKeys(v.Type())})
		return
	}
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := resolve(n.Content[i]), n.Content[i+1]
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
		f, ok := fieldIndex(v.Type(), key)
		if !ok {
			d.fail(n.Content[i], join(path, key), problem{msg: fmt.Sprintf("unknown field %q", key), allowed: allowedKeys(v.Type())})
			continue
		}
		d.decode(val, v.Field(f), join(path, key))
	}
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
	seen := map[string]int{}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k, val := resolve(n.Content[i]), resolve(n.Content[i+1])
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
				d.fail(n.Content[i+1], join(path, key), problem{msg: "expected a list of scalars"})
				continue
			}
			s = strings.Join(items, ",")
		default:
			d.fail(n.Content[i+1], join(path, key), problem{msg: fmt.Sprintf("expected a value, got %s", kindName(val))})
			continue
		}
		d.pos[join(path, key)] = Pos{n.Content[i+1].Line, n.Content[i+1].Column}
		m.SetMapIndex(reflect.ValueOf(key), reflect.ValueOf(s).Convert(v.Type().Elem()))
	}
	v.Set(m)
}

var (
	durationType = reflect.TypeFor[Duration]()
	sizeType     = reflect.TypeFor[Size]()
)

// parseScalar decodes text s into v, a scalar (string, int, uint, float,
// bool, Duration, Size). v is left unchanged on failure. It is the single
// scalar decoder shared by Load and Apply.
func parseScalar(v reflect.Value, s string) *problem {
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

// fillDefaults sets every documented default for fields the source left out
// (empty strings count as left out). It runs in Load only.
func (s *Spec) fillDefaults() {
	if s.Name == "" && s.File != "" {
		base := filepath.Base(s.File)
		s.Name = strings.TrimSuffix(base, filepath.Ext(base))
	}
	if !s.has("duration") {
		s.Duration = defaultDuration
	}
	if s.Clock == "" {
		s.Clock = "auto"
	}
	if s.has("duration") && s.Duration == 0 {
		// A soak run: intervals and a rotating wakeup log unless set.
		if !s.has("interval") {
			s.Interval = Duration(10 * time.Second)
		}
		if !s.has("log_chunk") {
			s.LogChunk = 16 << 20
		}
	}
	if s.has("repeat") && !s.has("rounds") {
		s.Rounds = s.Repeat
	}
	if !s.has("rounds") && !s.has("repeat") {
		s.Rounds = 1
	}
	for i := range s.Endpoints {
		e := &s.Endpoints[i]
		if e.Name == "" {
			e.Name = fmt.Sprintf("ep%d", i)
		}
		if e.Kind == "" {
			e.Kind = "udp"
		}
		if e.Address == "" && e.Kind == "udp" {
			e.Address = "127.0.0.1"
		}
		if e.Kind == "tap" {
			if e.Devices == 0 && !s.has(fmt.Sprintf("endpoints[%d].devices", i)) {
				e.Devices = 1
			}
			if e.MTU == 0 && !s.has(fmt.Sprintf("endpoints[%d].mtu", i)) {
				e.MTU = 1500
			}
			if e.Queues == 0 && !s.has(fmt.Sprintf("endpoints[%d].queues", i)) {
				e.Queues = 1
			}
		}
	}
	for i := range s.Traffic {
		t := &s.Traffic[i]
		if !s.has(fmt.Sprintf("traffic[%d].size", i)) {
			t.Size = defaultSize
		}
		if t.Spread == "" {
			t.Spread = "even"
		}
	}
	for i := range s.Readers {
		r := &s.Readers[i]
		p := fmt.Sprintf("readers[%d].", i)
		if r.Name == "" {
			r.Name = fmt.Sprintf("reader%d", i)
		}
		if r.Policy == "" {
			r.Policy = "fifo"
		}
		if !s.has(p + "priority") {
			s.defaultPriority(i)
		}
		if !s.has(p + "period") {
			r.Period = defaultPeriod
		}
		if r.Method == "" {
			r.Method = "recvfrom"
		}
		if !s.has(p + "batch") {
			r.Batch = defaultBatch
		}
		if r.Overrun == "" {
			r.Overrun = "skip"
		}
	}
	for i := range s.Noise {
		n := &s.Noise[i]
		p := fmt.Sprintf("noise[%d].", i)
		if n.Kind == "" {
			n.Kind = "spin"
		}
		if n.Policy == "" {
			n.Policy = "other"
		}
		// Kind parameters (size, rate, blocks, groups, fds, loops) stay 0
		// here, meaning "the kind's default" (applied by the noise package):
		// a variant may change the kind.
		_ = p
	}
	if s.Network.Namespace == "" {
		s.Network.Namespace = "host"
		for _, e := range s.Endpoints {
			if e.Kind == "tap" {
				s.Network.Namespace = "private"
			}
		}
	}
	for i := range s.Probes {
		pr := &s.Probes[i]
		p := fmt.Sprintf("probes[%d].", i)
		if pr.Name == "" {
			pr.Name = fmt.Sprintf("probe%d", i)
		}
		if pr.Kind == "" {
			pr.Kind = "tap_send"
		}
		switch pr.Kind {
		case "tap_send":
			if !s.has(p + "packets") {
				pr.Packets = 10000
			}
			if !s.has(p + "size") {
				pr.Size = []Size{64}
			}
		case "file_write":
			if !s.has(p + "block") {
				pr.Block = 256
			}
			if !s.has(p + "blocks") {
				pr.Blocks = 2000
			}
			if !s.has(p + "duration") {
				pr.Duration = Duration(10 * time.Second)
			}
		case "messaging":
			if !s.has(p + "groups") {
				pr.Groups = 10
			}
			if !s.has(p + "fds") {
				pr.FDs = 20
			}
			if !s.has(p + "loops") {
				pr.Loops = 100
			}
			if !s.has(p + "size") {
				pr.Size = []Size{100}
			}
			if pr.Transport == "" {
				pr.Transport = "socket"
			}
		}
		if pr.Policy == "" {
			pr.Policy = "other"
		}
	}
	if !s.has("report.bucket_width") {
		s.Report.BucketWidth = defaultBucketWidth
	}
	if !s.has("report.bucket_origin") {
		s.Report.BucketOrigin = defaultOrigin
	}
	if !s.has("report.overflow") {
		s.Report.Overflow = defaultOverflow
	}
}

// defaultPriority sets reader i's priority from its policy (80 for fifo/rr,
// 0 otherwise) and remembers that it was defaulted, so a later Apply of the
// policy recomputes it.
func (s *Spec) defaultPriority(i int) {
	r := &s.Readers[i]
	r.Priority = 0
	if r.Policy == "fifo" || r.Policy == "rr" {
		r.Priority = defaultPriority
	}
	if s.defaulted == nil {
		s.defaulted = map[string]bool{}
	}
	s.defaulted[fmt.Sprintf("readers[%d].priority", i)] = true
}
