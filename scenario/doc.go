// Package scenario turns a YAML scenario into a validated, pure-data Spec and
// expands it into the trials rtload runs.
//
// The pipeline is:
//
//	s, err := scenario.Load(name, data)        // strict decode, defaults, positions
//	err = s.Apply([]string{"duration=2s"})     // --set overrides, same decoders
//	err = s.Validate(scenario.Host{NumCPU: n}) // every problem, never mutates
//	trials, err := s.Expand()                  // rounds × variants, A B A B …
//
// Load decodes the document into a yaml.Node once and walks it with a small
// path-tracking decoder rather than yaml.Node.Decode, which ignores
// KnownFields: every mapping key is checked against the yaml tags of the
// target struct (an unknown key is an error listing the allowed keys),
// duplicate keys are rejected, and the line and column of every field is
// kept under its path ("readers[0].priority") so that Validate can point at
// the source. Defaults are filled by Load, never by Validate.
//
// Variant overrides use --set paths as keys. In YAML flow style a plain key
// may not contain '[', so `set: {readers[0].method: recvmsg}` is strictly a
// syntax error; Load accepts it anyway (indexed flow keys only, and only when
// the document does not parse as written). Quoting the key, or block style,
// is the portable form.
//
// Every problem is an *Error printed compiler-style,
//
//	configs/laight-450.yaml:23:15: readers[0].priority: 120 out of range (allowed: 1–99)
//
// and problems are collected in an ErrorList sorted by line. Both match
// ErrInvalid with errors.Is.
//
// The package is pure data: it imports only the standard library and
// go.yaml.in/yaml/v3, so validation runs and fuzzes anywhere.
package scenario
