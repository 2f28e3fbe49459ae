package store

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/rtload/rtload/internal/termsafe"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/safeio"
)

// A sessions directory's layout and its index's schema (sessions.json:
// results.SessionIndex) are the contract's (results/sessions.go); here
// are its reader (IsSessions, ReadSessions, DecodeSessions) and its
// writer (OpenSessions: the claim, the index rewritten by renaming),
// kept together so that they cannot drift apart.

// validSessionName reports whether name is sNNN…: "s" and 3 or 4 digits.
func validSessionName(name string) bool {
	if len(name) < 4 || len(name) > 5 || name[0] != 's' {
		return false
	}
	_, err := strconv.Atoi(name[1:])
	return err == nil && !strings.ContainsAny(name[1:], "+-")
}

// IsSessions reports whether path is a sessions directory: a directory
// (not a link another user owns: OpenSource) holding a regular
// sessions.json. It opens nothing but the directory and lstats the index.
func IsSessions(path string) bool {
	if !safeio.IsDir(path) {
		return false
	}
	src, err := safeio.OpenSource(path)
	if err != nil {
		return false
	}
	defer src.Close()
	fi, err := src.Lstat(results.SessionsFile)
	return err == nil && fi.Mode().IsRegular()
}

// ReadSessions reads the index of the sessions directory path and
// returns it with each session's results directory (path/sNNN), in
// order. The index is read as every results file is (Source.Open: a
// regular file, no link), at most results.MaxSessionsFileBytes, and must name at
// most results.MaxSessions sessions, each once, by a name of the form s001 that
// is a directory in path (never a link, a file or a name with a "/").
// Anything else is an error naming the problem; nothing in it is quoted
// raw.
func ReadSessions(path string) (*results.SessionIndex, []string, error) {
	src, err := safeio.OpenSource(path)
	if err != nil {
		return nil, nil, fmt.Errorf("sessions %s: %w", termsafe.Escape(path), err)
	}
	defer src.Close()
	data, err := src.ReadFile(results.SessionsFile, results.MaxSessionsFileBytes, "a sessions index")
	if err != nil {
		return nil, nil, err
	}
	x, err := DecodeSessions(data, termsafe.Escape(filepath.Join(path, results.SessionsFile)))
	if err != nil {
		return nil, nil, err
	}
	dirs := make([]string, len(x.Sessions))
	for i, s := range x.Sessions {
		fi, err := src.Lstat(s.Dir)
		if err != nil {
			return nil, nil, fmt.Errorf("sessions %s: session %d: %w", termsafe.Escape(path), i+1, err)
		}
		if !fi.IsDir() {
			return nil, nil, &safeio.FileError{Path: filepath.Join(path, s.Dir), Reason: "is a session's name in " + results.SessionsFile + " but " + kindOf(fi.Mode()) + ", not a directory: refused"}
		}
		dirs[i] = filepath.Join(path, s.Dir)
	}
	return x, dirs, nil
}

// kindOf names a file mode's kind for messages.
func kindOf(m fs.FileMode) string {
	if m&fs.ModeSymlink != 0 {
		return "a symlink"
	}
	if m.IsRegular() {
		return "a regular file"
	}
	return "a special file"
}

// DecodeSessions decodes sessions.json bytes (name prefixes errors): the
// schema and version must be this one's, every field known, at most
// results.MaxSessions sessions, each Dir a session name (s001) given once.
func DecodeSessions(data []byte, name string) (*results.SessionIndex, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var x results.SessionIndex
	if err := dec.Decode(&x); err != nil {
		return nil, jsonError(data, name, err)
	}
	if dec.More() {
		return nil, fmt.Errorf("%s: more than one JSON value", name)
	}
	switch {
	case x.Schema != results.SchemaSessions:
		return nil, fmt.Errorf("%s: schema %s, not %s", name, strconv.Quote(termsafe.Escape(x.Schema)), results.SchemaSessions)
	case x.Version != results.SessionsVersion:
		return nil, fmt.Errorf("%s: version %d; this rtload reads version %d", name, x.Version, results.SessionsVersion)
	case len(x.Sessions) > results.MaxSessions:
		return nil, fmt.Errorf("%s: %d sessions, more than the limit of %d", name, len(x.Sessions), results.MaxSessions)
	}
	seen := map[string]bool{}
	for i, s := range x.Sessions {
		if !validSessionName(s.Dir) {
			return nil, fmt.Errorf("%s: sessions[%d].dir %s: not a session name (s001 … s9999)", name, i, strconv.Quote(termsafe.Escape(s.Dir)))
		}
		if seen[s.Dir] {
			return nil, fmt.Errorf("%s: sessions[%d].dir %s given twice", name, i, s.Dir)
		}
		seen[s.Dir] = true
	}
	return &x, nil
}

// Sessions is a sessions directory open for appending one session (run
// --append): claimed (LockFile) from OpenSessions to Close, so two
// appends to one baseline never interleave.
type Sessions struct {
	dir *Dir
	// Index is the index as read when opened (empty for a new directory).
	Index results.SessionIndex
	// Dirs are the existing sessions' results directories, in order.
	Dirs []string
	// created: this open made the directory (Discard).
	created bool
}

// ErrNotSessions is matched by OpenSessions' refusal of a directory that
// holds other files and no index: a run's own results directory, say.
var ErrNotSessions = errors.New("not a sessions directory")

// OpenSessions opens path for appending a session: a new path (created,
// as CreateDir creates a results directory), an empty directory, or a
// sessions directory (with its index). The directory must pass
// CreateDir's checks (the user's own, not writable by others, never a
// link) and is claimed for this process. A directory holding anything but
// sessions is refused (ErrNotSessions, naming what is there).
func OpenSessions(path string) (*Sessions, error) {
	sd, created, err := safeio.CreateDirWith(path, sessionsOnly)
	if err != nil {
		return nil, err
	}
	d := &Dir{Dir: sd}
	s := &Sessions{dir: d, created: created, Index: results.SessionIndex{Schema: results.SchemaSessions, Version: results.SessionsVersion, Sessions: []results.SessionEntry{}}}
	if _, err := d.Lstat(results.SessionsFile); err == nil {
		x, dirs, err := ReadSessions(path)
		if err != nil {
			d.Close()
			return nil, err
		}
		s.Index, s.Dirs = *x, dirs
	}
	return s, nil
}

// Path is the sessions directory's path.
func (s *Sessions) Path() string { return s.dir.Path() }

// Next is the path of the next session's results directory (path/sNNN,
// not yet existing: a killed append's leftover directory is skipped), for
// CreateNewDir.
func (s *Sessions) Next() (string, error) {
	for n := len(s.Index.Sessions) + 1; n <= results.MaxSessions; n++ {
		name := results.SessionName(n)
		if _, err := s.dir.Lstat(name); errors.Is(err, fs.ErrNotExist) {
			return filepath.Join(s.dir.Path(), name), nil
		}
	}
	return "", fmt.Errorf("sessions %s: no free session name up to %d", s.dir.Path(), results.MaxSessions)
}

// Add appends the session whose results are in dir (a path Next gave),
// read from its summary, and rewrites the index atomically.
func (s *Sessions) Add(dir string, sum *results.Summary) error {
	name := filepath.Base(dir)
	if filepath.Dir(dir) != filepath.Clean(s.dir.Path()) || !validSessionName(name) {
		return fmt.Errorf("sessions %s: %s is not one of its session directories", s.dir.Path(), dir)
	}
	if s.Index.Scenario == "" {
		s.Index.Scenario = sum.Scenario
	}
	s.Index.Sessions = append(s.Index.Sessions, results.SessionEntry{Dir: name, Boot: results.BootOf(sum.Env), Start: sum.Start,
		Processes: max(len(sum.Processes), 1), Trials: len(sum.Trials), Stopped: sum.Stopped, Degraded: sum.Degraded})
	data, err := json.MarshalIndent(s.Index, "", "  ")
	if err != nil {
		return err
	}
	if err := s.dir.WriteFile(results.SessionsFile, append(data, '\n')); err != nil {
		return fmt.Errorf("sessions %s: %w", s.dir.Path(), err)
	}
	s.Dirs = append(s.Dirs, dir)
	return nil
}

// Close releases the claim; it is idempotent.
func (s *Sessions) Close() error { return s.dir.Close() }

// Discard closes s and, when this open made the directory and no session
// was added to it, removes it (rmdir: only when empty): a run refused
// before its first session (a requirement not met, say) leaves nothing
// behind. The directories above it that the open made stay.
func (s *Sessions) Discard() error {
	path := s.dir.Path()
	err := s.Close()
	if s.created && len(s.Index.Sessions) == 0 {
		if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			err = errors.Join(err, rerr)
		}
	}
	return err
}

// sessionsOnly refuses a directory holding anything but an index and
// session directories (and claims).
func sessionsOnly(d *safeio.Dir) error {
	names, err := d.ReadNames(results.MaxSessions + 16)
	if err != nil {
		return err
	}
	var other []string
	for _, n := range safeio.WithoutClaims(names) {
		if n != results.SessionsFile && !validSessionName(n) && !strings.HasPrefix(n, "."+results.SessionsFile+".") {
			other = append(other, n)
		}
	}
	if len(other) == 0 {
		return nil
	}
	if _, err := d.Lstat(safeio.LockFile); err == nil {
		return &safeio.DirError{Path: d.Path(), Reason: d.LockHolder()}
	}
	what := strings.Join(other[:min(len(other), 3)], ", ")
	if len(other) > 3 {
		what += ", …"
	}
	return fmt.Errorf("%w: %w", &safeio.DirError{Path: d.Path(), Reason: "holds " + what + " and no " + results.SessionsFile + ": not a sessions directory (give a new path for --append, which makes one)"}, ErrNotSessions)
}

// RemoveSessionDir removes a session's directory that its run left empty
// (it refused to start): never one holding files.
func (s *Sessions) RemoveSessionDir(dir string) {
	if filepath.Dir(dir) == filepath.Clean(s.dir.Path()) && validSessionName(filepath.Base(dir)) {
		s.dir.Remove(filepath.Base(dir)) // rmdir: only if empty
	}
}
