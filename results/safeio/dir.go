package safeio

import (
	"errors"
	"fmt"
	"github.com/rtload/rtload/internal/filekind"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
)

// ErrUnsafeDir is matched (errors.Is) by every refusal of CreateDir and
// OpenDir: a results directory rtload, running as root, must not write
// into.
var ErrUnsafeDir = errors.New("unsafe results directory")

// DirError is a refusal of a results directory: Path and the Reason, in
// words that say what to do instead.
type DirError struct {
	Path, Reason string
}

func (e *DirError) Error() string { return "results directory " + e.Path + ": " + e.Reason }

// Is matches ErrUnsafeDir.
func (e *DirError) Is(target error) bool { return target == ErrUnsafeDir }

// Dir is a results directory open for writing. Every file rtload writes
// into it goes through the directory's file descriptor (os.Root: openat(2)
// and renameat(2) relative to it) and is created with
// O_CREAT|O_EXCL|O_NOFOLLOW, mode 0666 less the umask: a name planted in
// the directory (a symlink to another file) makes the create fail and is
// never followed or written through. Whole files are replaced only by
// renaming a fresh temporary file over them (WriteFile), which replaces a
// planted link itself, never its target. The directory was checked when
// opened: owned by the effective user, and not writable by group or others
// unless sticky (CreateDir, OpenDir).
//
// A Dir is safe for concurrent use. It records the temporary files it has
// created and not yet renamed, so that RemoveTemps can delete them when
// the process must exit at once (a second Ctrl-C).
type Dir struct {
	path string
	root *os.Root

	mu    sync.Mutex
	temps map[string]bool
	lock  *os.File // LockFile, held from the claim to Close (lock.go)
	took  *takenOver
}

// CreateDir returns path as a results directory for a new run. The
// directories above path must pass CheckOutPath (no component another user
// owns or may write in). It creates
// path (and missing parents, 0777 less the umask, and for path itself
// never writable by group or others) when it does not exist (created
// true); an existing path must be an empty directory. Either way
// the directory must be owned by the effective user and not group- or
// world-writable unless it has the sticky bit. A symlink at path is
// refused whatever it points to (rtload runs as root and never follows a
// link it may not have made: give the directory itself), as is a path
// that is not a directory or whose parent cannot be made one. Refusals
// are *DirError (ErrUnsafeDir); a directory CreateDir created is removed
// again when it refuses it. The directory is then claimed for this run
// (LockFile, until Close): another run given the same directory, even at
// the same moment, is refused with a *DirError naming this one's pid.
func CreateDir(path string) (d *Dir, created bool, err error) {
	return createDir(path, false, nil)
}

// CreateNewDir is CreateDir for a path that must not exist yet: it makes
// path itself with mkdir(2), so that two runs choosing the same name
// never share a directory. When anything is at path already it fails
// with an error matching fs.ErrExist (and no other refusal); the caller
// picks another name.
func CreateNewDir(path string) (*Dir, error) {
	d, _, err := createDir(path, true, nil)
	return d, err
}

// CreateDirWith is CreateDir for a directory that may exist and hold
// files: existing judges an existing directory in place of CreateDir's
// "must be empty" (a sessions directory holds its index and sessions),
// after every other check and before the claim.
func CreateDirWith(path string, existing func(*Dir) error) (d *Dir, created bool, err error) {
	return createDir(path, false, existing)
}

// createDir is CreateDir; mustCreate refuses an existing path with
// fs.ErrExist; existing, when not nil, judges an existing directory
// instead of checkEmpty.
func createDir(path string, mustCreate bool, existing func(*Dir) error) (d *Dir, created bool, err error) {
	if err := checkLink(path); err != nil {
		return nil, false, err
	}
	if err := CheckOutPath(filepath.Dir(path)); err != nil { // the directories above it (outpath.go)
		return nil, false, err
	}
	fi, err := os.Lstat(path)
	switch {
	case err == nil && mustCreate:
		return nil, false, fmt.Errorf("results directory %s: %w", path, fs.ErrExist)
	case err == nil:
		if err := checkExisting(path, fi); err != nil {
			return nil, false, err
		}
	case errors.Is(err, fs.ErrNotExist):
		if err := os.MkdirAll(filepath.Dir(path), 0o777); err != nil {
			return nil, false, parentError(path, err)
		}
		err := os.Mkdir(path, 0o777)
		switch {
		case mustCreate && errors.Is(err, fs.ErrExist):
			return nil, false, fmt.Errorf("results directory %s: %w", path, fs.ErrExist)
		case errors.Is(err, fs.ErrExist):
			// Another run made it since the lstat: an existing directory
			// now, whose lock (claim) says whose it is.
			if fi, err = os.Lstat(path); err == nil {
				err = checkExisting(path, fi)
			}
			if err != nil {
				return nil, false, err
			}
		case err != nil:
			return nil, false, &DirError{path, "cannot be created: " + err.Error()}
		default:
			created = true
		}
	case errors.Is(err, syscall.ENOTDIR):
		return nil, false, parentError(path, err)
	default:
		return nil, false, &DirError{path, "cannot be read: " + err.Error()}
	}
	if created {
		// Honour the umask, but never leave a directory of ours open to
		// others' files (a umask of 002 or 0 would).
		if fi, err := os.Lstat(path); err == nil && fi.Mode().Perm()&0o022 != 0 {
			os.Chmod(path, fi.Mode().Perm()&^0o022)
		}
	}
	d, err = open(path)
	if err == nil {
		err = d.checkSame()
	}
	switch {
	case err == nil && !created && existing != nil:
		err = existing(d)
	case err == nil && !created:
		err = d.checkEmpty()
	}
	if err == nil || errors.Is(err, errKilledRun) {
		err = d.claim() // one run per directory, from here to Close; a killed run's taken over
	}
	if err == nil {
		d.moveKilledRun() // a taken-over run's files, out of the new run's way
	}
	if err != nil {
		if d != nil {
			d.Close()
		}
		if created {
			os.Remove(path) // only if empty
		}
		return nil, false, err
	}
	return d, created, nil
}

// checkExisting refuses an existing path (fi from lstat) that is not a
// directory, or is a symlink to anything.
func checkExisting(path string, fi fs.FileInfo) error {
	if fi.Mode()&fs.ModeSymlink != 0 {
		to, _ := os.Readlink(path)
		if _, err := os.Stat(path); err != nil {
			return &DirError{path, fmt.Sprintf("is a dangling symlink (to %s): rtload runs as root and never follows a link; give a new path, or an empty directory itself", to)}
		}
		return &DirError{path, fmt.Sprintf("is a symlink (to %s): refused because rtload runs as root and never follows a link; give the directory itself", to)}
	}
	if !fi.IsDir() {
		return &DirError{path, fmt.Sprintf("is %s, not a directory: give a new path or an empty directory", filekind.Of(fi.Mode()))}
	}
	return nil
}

// parentError says why path's parent could not be made: the first
// ancestor that is not a directory (a file, or a dangling symlink), else
// the error of mkdir itself.
func parentError(path string, mkErr error) error {
	var ancestors []string
	for p := filepath.Dir(path); ; p = filepath.Dir(p) {
		ancestors = append(ancestors, p)
		if p == filepath.Dir(p) || len(ancestors) > 256 {
			break
		}
	}
	for i := len(ancestors) - 1; i >= 0; i-- {
		p := ancestors[i]
		lfi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) {
			break // from here on mkdir would create them
		}
		if err != nil {
			continue
		}
		if lfi.Mode()&fs.ModeSymlink != 0 {
			if fi, err := os.Stat(p); err != nil {
				to, _ := os.Readlink(p)
				return &DirError{path, fmt.Sprintf("parent %s is a dangling symlink (to %s): cannot create the directory under it", p, to)}
			} else if !fi.IsDir() {
				return &DirError{path, fmt.Sprintf("parent %s is a symlink to %s, not a directory", p, filekind.Of(fi.Mode()))}
			}
			continue
		}
		if !lfi.IsDir() {
			return &DirError{path, fmt.Sprintf("parent %s is %s, not a directory", p, filekind.Of(lfi.Mode()))}
		}
	}
	return &DirError{path, "cannot create its parent: " + mkErr.Error()}
}

// OpenDir opens an existing results directory for writing (the engine's
// view of the directory CreateDir made), with CreateDir's checks except
// emptiness.
func OpenDir(path string) (*Dir, error) {
	if err := checkLink(path); err != nil {
		return nil, err
	}
	return open(path)
}

// checkLink refuses a symlink at path owned by another user.
func checkLink(path string) error {
	fi, err := os.Lstat(path)
	if err != nil || fi.Mode()&fs.ModeSymlink == 0 {
		return nil
	}
	if uid, ok := OwnerOf(fi); ok && uid != os.Geteuid() {
		return &DirError{path, fmt.Sprintf("is a symlink owned by uid %d, not by uid %d running rtload: give the directory itself", uid, os.Geteuid())}
	}
	return nil
}

// open opens path and checks what it opened (through the descriptor, so
// that a rename in between changes nothing).
func open(path string) (*Dir, error) {
	root, err := os.OpenRoot(path)
	if err != nil {
		return nil, fmt.Errorf("results directory: %w", err)
	}
	d := &Dir{path: path, root: root, temps: map[string]bool{}}
	fi, err := root.Stat(".")
	if err != nil {
		d.Close()
		return nil, fmt.Errorf("results directory %s: %w", path, err)
	}
	if uid, ok := OwnerOf(fi); ok && uid != os.Geteuid() {
		d.Close()
		return nil, &DirError{path, fmt.Sprintf("owned by uid %d, not by uid %d running rtload: choose a directory you own, or a new path for rtload to create", uid, os.Geteuid())}
	}
	if m := fi.Mode(); m.Perm()&0o022 != 0 && m&fs.ModeSticky == 0 {
		d.Close()
		return nil, &DirError{path, fmt.Sprintf("mode %04o is writable by group or others without the sticky bit: anyone could plant files in it; chmod go-w it or choose another", m.Perm())}
	}
	return d, nil
}

// checkSame refuses a path that is now a symlink or another directory
// than the one opened: a link swapped in after createDir's checks.
func (d *Dir) checkSame() error {
	fi, err := d.root.Stat(".")
	if err != nil {
		return fmt.Errorf("results directory %s: %w", d.path, err)
	}
	lfi, err := os.Lstat(d.path)
	if err != nil || lfi.Mode()&fs.ModeSymlink != 0 || !os.SameFile(fi, lfi) {
		return &DirError{d.path, "changed while it was opened (a symlink swapped in?): rtload never follows a link; give the directory itself"}
	}
	return nil
}

// checkEmpty refuses a directory holding anything.
func (d *Dir) checkEmpty() error {
	names, err := d.ReadNames(64)
	if len(names) == 64 && len(WithoutClaims(names)) == 0 {
		names, err = d.ReadNames(-1) // only claims in flight so far: look at everything
	}
	if err != nil {
		return err
	}
	if names = WithoutClaims(names); len(names) == 0 {
		return nil
	}
	if _, err := d.root.Lstat(LockFile); err == nil {
		if d.lockHeld() {
			return &DirError{d.path, d.LockHolder()} // another run's
		}
		return errKilledRun // claim takes it over
	}
	what := strings.Join(names[:min(len(names), 3)], ", ")
	if len(names) > 3 {
		what += ", …"
	}
	return &DirError{d.path, "is not empty (" + what + "): it may hold an earlier run's files; choose another --out or remove them"}
}

// Path is the directory's path as given.
func (d *Dir) Path() string { return d.path }

// Close closes the directory's descriptor; it is idempotent.
func (d *Dir) Close() error {
	if d == nil || d.root == nil {
		return nil
	}
	d.ReleaseLock()
	err := d.root.Close()
	d.root = nil
	return err
}

// Create creates name for writing: O_CREAT|O_EXCL|O_NOFOLLOW, mode 0666
// less the umask (Root.OpenFile always adds O_NOFOLLOW). An existing name, a planted symlink included, is an
// error wrapping fs.ErrExist. name is a file name, not a path.
func (d *Dir) Create(name string) (*os.File, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	f, err := d.root.OpenFile(name, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o666)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", filepath.Join(d.path, name), err)
	}
	return f, nil
}

// Open opens name in the directory for reading.
func (d *Dir) Open(name string) (*os.File, error) {
	if err := CheckName(name); err != nil {
		return nil, err
	}
	return d.root.OpenFile(name, os.O_RDONLY, 0)
}

// Remove removes name (a link itself, never its target); a missing name
// is no error.
func (d *Dir) Remove(name string) error {
	if err := CheckName(name); err != nil {
		return err
	}
	if err := d.root.Remove(name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("remove %s: %w", filepath.Join(d.path, name), err)
	}
	return nil
}

// Lstat returns name's lstat through the directory's descriptor (never
// following a link).
func (d *Dir) Lstat(name string) (fs.FileInfo, error) { return d.root.Lstat(name) }

// ReadDir lists the directory's entries by name.
func (d *Dir) ReadDir() ([]string, error) { return d.ReadNames(-1) }

// ReadNames lists at most n entries (n < 0: all).
func (d *Dir) ReadNames(n int) ([]string, error) {
	f, err := d.root.Open(".")
	if err != nil {
		return nil, fmt.Errorf("results directory %s: %w", d.path, err)
	}
	defer f.Close()
	names, err := f.Readdirnames(n)
	if err != nil && !(n > 0 && errors.Is(err, io.EOF)) {
		return nil, fmt.Errorf("results directory %s: %w", d.path, err)
	}
	return names, nil
}

// Chown gives the directory and everything in it to uid and gid:
// lchown(2) of each entry through the directory's descriptor (os.Root),
// so no link is followed and nothing outside the directory is touched;
// subdirectories are walked the same way, at most 8 deep. For a run whose
// results are handed to another user at its end (rtload as root in a
// container, writing into a volume that user owns). It goes on past an
// error and returns the first.
func (d *Dir) Chown(uid, gid int) error {
	var first error
	chownTree(d.root, d.path, uid, gid, 8, &first)
	return first
}

// chownTree lchowns root's entries and then root itself.
func chownTree(root *os.Root, path string, uid, gid, depth int, first *error) {
	fail := func(err error) {
		if *first == nil {
			*first = fmt.Errorf("chown %s: %w", path, err)
		}
	}
	f, err := root.Open(".")
	if err != nil {
		fail(err)
		return
	}
	entries, err := f.ReadDir(-1)
	f.Close()
	if err != nil {
		fail(err)
	}
	for _, e := range entries {
		if e.IsDir() && depth > 1 {
			if sub, err := root.OpenRoot(e.Name()); err == nil {
				chownTree(sub, filepath.Join(path, e.Name()), uid, gid, depth-1, first)
				sub.Close()
				continue
			}
		}
		if err := root.Lchown(e.Name(), uid, gid); err != nil {
			fail(err)
		}
	}
	if err := root.Lchown(".", uid, gid); err != nil {
		fail(err)
	}
}

// Sync fsyncs the directory, making creates, renames and removes durable.
func (d *Dir) Sync() error {
	f, err := d.root.Open(".")
	if err != nil {
		return fmt.Errorf("sync dir %s: %w", d.path, err)
	}
	defer f.Close()
	if err := f.Sync(); err != nil {
		return fmt.Errorf("sync dir %s: %w", d.path, err)
	}
	return nil
}

// CreateTemp creates a fresh temporary file for name, ".<name>.<n>.tmp",
// and records it until CommitTemp or DropTemp.
func (d *Dir) CreateTemp(name string) (*os.File, string, error) {
	for range 100 {
		tmp := "." + name + "." + strconv.FormatUint(rand.Uint64()%1e9, 10) + ".tmp"
		d.mu.Lock()
		d.temps[tmp] = true
		d.mu.Unlock()
		f, err := d.root.OpenFile(tmp, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o666)
		if err == nil {
			return f, tmp, nil
		}
		d.forget(tmp)
		if !errors.Is(err, fs.ErrExist) {
			return nil, "", fmt.Errorf("create temporary file for %s: %w", filepath.Join(d.path, name), err)
		}
	}
	return nil, "", fmt.Errorf("create temporary file for %s: 100 names taken", filepath.Join(d.path, name))
}

func (d *Dir) forget(tmp string) {
	d.mu.Lock()
	delete(d.temps, tmp)
	d.mu.Unlock()
}

// DropTemp closes and removes a temporary file after a failure.
func (d *Dir) DropTemp(f *os.File, tmp string) {
	f.Close()
	d.root.Remove(tmp)
	d.forget(tmp)
}

// CommitTemp renames tmp over name and fsyncs the directory.
func (d *Dir) CommitTemp(tmp, name string) error {
	if err := d.root.Rename(tmp, name); err != nil {
		d.root.Remove(tmp)
		d.forget(tmp)
		return fmt.Errorf("rename %s: %w", filepath.Join(d.path, name), err)
	}
	d.forget(tmp)
	return d.Sync()
}

// WriteFile replaces name with data atomically: a fresh temporary file in
// the directory, written, fsynced, renamed over name, the directory
// fsynced. A crash or a failed write (a full disk) leaves the old name
// untouched and no temporary file behind; only a process killed inside it
// can leave one, which RemoveTemps deletes. name is a file name.
func (d *Dir) WriteFile(name string, data []byte) error {
	if err := CheckName(name); err != nil {
		return err
	}
	f, tmp, err := d.CreateTemp(name)
	if err != nil {
		return err
	}
	_, err = f.Write(data)
	if err == nil {
		err = f.Sync()
	}
	if err == nil {
		err = f.Close()
	}
	if err != nil {
		d.DropTemp(f, tmp)
		return fmt.Errorf("replace %s: %w", filepath.Join(d.path, name), err)
	}
	return d.CommitTemp(tmp, name)
}

// RemoveTemps deletes every temporary file this Dir created and has not
// renamed or removed yet, and returns their names: for a process about to
// exit in the middle of writes.
func (d *Dir) RemoveTemps() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	var out []string
	for tmp := range d.temps {
		if d.root != nil {
			d.root.Remove(tmp)
		}
		out = append(out, tmp)
		delete(d.temps, tmp)
	}
	return out
}

// CheckName refuses anything but a plain file name.
func CheckName(name string) error {
	if name == "" || name == "." || name == ".." || strings.ContainsRune(name, '/') || strings.ContainsRune(name, 0) {
		return fmt.Errorf("%q is not a file name", name)
	}
	return nil
}
