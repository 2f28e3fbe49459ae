package safeio

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/rtload/rtload/internal/filekind"
	"github.com/rtload/rtload/internal/termsafe"
)

// The reading side of the contract. rtload runs as root and reads results
// directories other people made (a colleague's, a CI artefact, a fleet
// host's), so every file it reads from one is opened the same way: by
// name, relative to the directory's descriptor (Source, os.Root), after an
// lstat that refuses anything but a regular file, with O_NONBLOCK so that
// a FIFO or device swapped in afterwards cannot block the open, and then
// checked again on the open descriptor (fstat: a regular file, the same
// one lstat saw). A symlink, FIFO, socket or device is refused before
// anything is read; the refusal names the file and quotes none of its
// content.

// ErrRefusedFile is matched (errors.Is) by every refusal of a file in
// results being read: a symlink, a FIFO, a device or anything else that
// is not a regular file.
var ErrRefusedFile = errors.New("refused results file")

// FileError is a refusal of a file being read from results: Path, and the
// Reason in words that say what is wrong. It never holds the file's
// content.
type FileError struct {
	Path, Reason string
}

func (e *FileError) Error() string { return termsafe.Escape(e.Path) + ": " + e.Reason }

// Is matches ErrRefusedFile.
func (e *FileError) Is(target error) bool { return target == ErrRefusedFile }

// Source is a results directory open for reading: every file is read
// through its descriptor (os.Root), by file name, never by a path that
// could leave it, and only when it is a regular file (see Open).
type Source struct {
	path string
	root *os.Root
	fi   fs.FileInfo // the directory, fstat'ed when opened
}

// OpenSource opens the results directory path for reading. path may be a
// symlink to a directory only when the link is owned by root or the
// invoking user (TrustedOwner): a link someone else planted is refused, as
// when writing. Errors: a path that is not a directory, a refused link
// (*FileError, ErrRefusedFile), and the open's own.
func OpenSource(path string) (*Source, error) {
	lfi, err := os.Lstat(path)
	if err != nil {
		return nil, err
	}
	if lfi.Mode()&fs.ModeSymlink != 0 {
		if uid, ok := OwnerOf(lfi); ok && !TrustedOwner(uid) {
			return nil, &FileError{path, fmt.Sprintf("is a symlink owned by uid %d, not by root or the invoking user: refused (rtload runs as root and never follows others' links); give the directory itself", uid)}
		}
	} else if !lfi.IsDir() {
		return nil, &FileError{path, "is " + filekind.Of(lfi.Mode()) + ", not a results directory"}
	}
	root, err := os.OpenRoot(path)
	if err != nil {
		return nil, err
	}
	fi, err := root.Stat(".")
	if err != nil {
		root.Close()
		return nil, err
	}
	return &Source{path: path, root: root, fi: fi}, nil
}

// Close closes the directory's descriptor; it is idempotent.
func (s *Source) Close() error {
	if s == nil || s.root == nil {
		return nil
	}
	err := s.root.Close()
	s.root = nil
	return err
}

// Info is the directory's own stat, taken through its descriptor.
func (s *Source) Info() fs.FileInfo { return s.fi }

// Join is the path of name for messages.
func (s *Source) Join(name string) string { return filepath.Join(s.path, name) }

// Open opens the regular file name of the directory for reading. name is
// a file name (no "/"). A name that is a symlink (to anything, inside the
// directory or not), a FIFO, a socket, a device or a directory is refused
// with *FileError (ErrRefusedFile) before it is opened; so is one swapped
// for another file between the check and the open three times running
// (the descriptor's fstat must show the same regular file lstat saw; once
// is a soak's checkpoint renamed over it). A missing name wraps
// fs.ErrNotExist.
// The returned FileInfo is the open descriptor's.
func (s *Source) Open(name string) (*os.File, fs.FileInfo, error) {
	if err := CheckName(name); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", termsafe.Escape(s.Join(name)), err)
	}
	// A soak's checkpoint renames a new summary.json over the old one: a
	// file replaced between the lstat and the open is looked at again, a
	// few times, before it is refused.
	for range 3 {
		f, fi, same, err := s.open(name)
		if err != nil || same {
			return f, fi, err
		}
	}
	return nil, nil, &FileError{s.Join(name), "changed while it was opened, three times (a symlink swapped in?): refused"}
}

// open is one try of Open; same is false (and the file closed) when the
// file opened is not the one lstat saw.
func (s *Source) open(name string) (f *os.File, fi fs.FileInfo, same bool, err error) {
	lfi, err := s.root.Lstat(name)
	if err != nil {
		return nil, nil, false, fmt.Errorf("%s: %w", termsafe.Escape(s.Join(name)), unwrapPath(err))
	}
	if err := refuseKind(s.Join(name), lfi.Mode()); err != nil {
		return nil, nil, false, err
	}
	// os.Root adds O_NOFOLLOW to the last component; O_NONBLOCK keeps a
	// FIFO swapped in since the lstat from blocking the open.
	f, err = s.root.OpenFile(name, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return nil, nil, false, fmt.Errorf("%s: %w", termsafe.Escape(s.Join(name)), unwrapPath(err))
	}
	fi, err = f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, false, fmt.Errorf("%s: %w", termsafe.Escape(s.Join(name)), err)
	}
	if err := refuseKind(s.Join(name), fi.Mode()); err != nil {
		f.Close()
		return nil, nil, false, err
	}
	if !os.SameFile(fi, lfi) {
		f.Close()
		return nil, nil, false, nil
	}
	return f, fi, true, nil
}

// refuseKind refuses a file mode other than a regular file.
func refuseKind(path string, m fs.FileMode) error {
	if m.IsRegular() {
		return nil
	}
	why := "rtload reads only regular files from results"
	switch {
	case m&fs.ModeSymlink != 0:
		why = "rtload runs as root and never follows a link in results it reads"
	case m&(fs.ModeNamedPipe|fs.ModeSocket|fs.ModeDevice|fs.ModeCharDevice) != 0:
		why = "reading it could block or have effects; rtload reads only regular files from results"
	}
	return &FileError{path, "is " + filekind.Of(m) + ": refused (" + why + ")"}
}

// unwrapPath drops os.Root's *PathError (whose path is the bare name) so
// that the caller names the file with its directory.
func unwrapPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}

// Lstat returns name's lstat (never following a link). Errors wrap
// fs.ErrNotExist for a missing name.
func (s *Source) Lstat(name string) (fs.FileInfo, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	fi, err := s.root.Lstat(name)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", termsafe.Escape(s.Join(name)), unwrapPath(err))
	}
	return fi, nil
}

// Names lists the directory's entries, at most max of them (more is an
// error: no results directory rtload writes holds that many).
func (s *Source) Names(max int) ([]string, error) {
	f, err := s.root.Open(".")
	if err != nil {
		return nil, fmt.Errorf("results directory %s: %w", termsafe.Escape(s.path), err)
	}
	defer f.Close()
	names, err := f.Readdirnames(max + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("results directory %s: %w", termsafe.Escape(s.path), err)
	}
	if len(names) > max {
		return nil, fmt.Errorf("results directory %s: more than %d entries, more than any run writes", termsafe.Escape(s.path), max)
	}
	return names, nil
}

// ReadFile reads the regular file name whole (see Open), at most max
// bytes: a larger file is an error naming the limit, read no further.
func (s *Source) ReadFile(name string, max int64, what string) ([]byte, error) {
	f, fi, err := s.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > max {
		return nil, fmt.Errorf("%s: %d bytes, larger than the limit of %s for %s", termsafe.Escape(s.Join(name)), fi.Size(), SizeName(max), what)
	}
	// Sized from the file, so that reading it costs its size, not the
	// doublings of a growing buffer.
	buf := bytes.NewBuffer(make([]byte, 0, min(fi.Size(), max)+bytes.MinRead))
	_, err = buf.ReadFrom(io.LimitReader(f, max+1))
	data := buf.Bytes()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", termsafe.Escape(s.Join(name)), err)
	}
	if int64(len(data)) > max {
		return nil, fmt.Errorf("%s: larger than the limit of %s for %s", termsafe.Escape(s.Join(name)), SizeName(max), what)
	}
	return data, nil
}

// SizeName prints a byte count in MiB or KiB.
func SizeName(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}

// OpenInput opens path for reading the way a Source opens its files: path
// names a file given on the command line (a summary.json, an .hlog, a
// cyclictest histogram). Its last component must be a regular file, not
// a link, a FIFO or a device (*FileError); the directories above it are
// the caller's own path. The returned Source is the file's directory; the
// caller closes both.
func OpenInput(path string) (*Source, *os.File, fs.FileInfo, error) {
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if name == "" || strings.HasSuffix(path, "/") {
		return nil, nil, nil, &FileError{path, "is a directory path, not a file"}
	}
	src, err := OpenSource(dir)
	if err != nil {
		return nil, nil, nil, err
	}
	f, fi, err := src.Open(name)
	if err != nil {
		src.Close()
		return nil, nil, nil, err
	}
	return src, f, fi, nil
}

// IsDir reports whether path is a directory (following a link at path
// only as OpenSource does) without opening anything else: how a reader
// tells a results directory from a file given in its place.
func IsDir(path string) bool {
	lfi, err := os.Lstat(path)
	if err != nil {
		return false
	}
	if lfi.IsDir() {
		return true
	}
	if lfi.Mode()&fs.ModeSymlink == 0 {
		return false
	}
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
