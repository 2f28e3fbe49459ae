// Package scenario turns a YAML scenario into a validated, pure-data Spec and
// expands it into the trials rtload runs.
//
// The pipeline is:
//
//	s, err := scenario.Load(name, data)        // strict decode, defaults, positions
//	err = s.Apply([]string{"duration=2s"})     // --set overrides, same decoders
//	err = s.Validate(scenario.Host{NumCPU: n}) // every problem, never mutates
//	trials, err := s.Expand()                  // rounds × variants, A B B A A B …
//	choices, err := s.ResolveCPUs(allowed)     // cpu: auto → a CPU (and each trial's)
//
// Load decodes the document into a yaml.Node once and walks it with a small
// path-tracking decoder rather than yaml.Node.Decode, which ignores
// KnownFields: every mapping key is checked against the yaml tags of the
// target struct (an unknown key is an error listing the allowed keys),
// duplicate keys are rejected, and the line and column of every field is
// kept under its path ("readers[0].priority") so that Validate can point at
// the source. YAML anchors, aliases and merge keys (<<: *base) are
// expanded. Defaults live in defaults.go: Load fills them, Apply and every
// variant re-derive the ones that follow another field (a priority its
// policy, interval its duration, a noise's parameters its kind), and
// Validate never changes the spec.
//
// Host carries what Validate needs of the machine: the number of CPUs and
// the CPUs this process may use (sched_getaffinity(2), a container's
// cpuset). A fixed CPU outside the allowed set is refused with the set
// named; `cpu: auto` is resolved by ChooseCPUs, a pure function of the
// allowed set and the readers, once before the run (ResolveCPUs), and the
// choice is recorded in the reader (AutoCPU).
//
// Requires names the kernel config options, command-line parameters,
// kernel version and features a scenario needs; this package checks their
// spelling, and the engine checks them against the machine (exit 3 when
// unmet, or results marked with --allow-degraded).
//
// Enumerated fields are typed (Policy, Method, Overrun, EndpointKind,
// NoiseKind, ProbeKind, Spread, Clock, Namespace, Syscall, Transport,
// Feature): the
// text is decoded once into a constant the engine switches on, and
// marshals back to the same text. A value spelled wrong is one of
// Validate's problems, listed with the others.
//
// Input is bounded before it costs anything: LoadFile reads only a regular
// file of at most MaxFileSize bytes; Load counts YAML tokens before the
// parser builds its tree (MaxTokens), stops alias and merge-key expansion
// at MaxNodes, and Validate and Expand refuse variants or trials that
// would copy more than MaxWork entries. Names that become file names
// (name, readers[].name, variants[].name) are checked.
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
// and problems are collected in an ErrorList sorted by line, each once (a
// problem repeated by aliases or variants is one problem), printed up to 20
// and then counted. Both match ErrInvalid with errors.Is.
//
// The package is pure data: it imports only the standard library and
// go.yaml.in/yaml/v3, so validation runs and fuzzes anywhere.
package scenario
