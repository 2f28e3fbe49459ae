package safeio

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/rtload/rtload/internal/filekind"
	"github.com/rtload/rtload/internal/termsafe"
)

// Output paths. rtload runs as root; a path it writes under must be one
// no other user can redirect: every existing component of it (the
// directories above a results directory or an image, and any symlink on
// the way) owned by root or the invoking user, and no directory among them
// writable by group or others unless it has the sticky bit. Otherwise
// another user could swap a component for a link to a directory of their
// choice between rtload's checks and its writes. Components that do not
// exist yet are made by rtload itself.

// TrustedOwner reports whether uid may own a component of an output path,
// a directory or link rtload follows when reading, or a baseline it
// runs: root, the effective or real uid of the process, or, for a process
// started through sudo(8) by root's real uid, SUDO_UID (the user who
// invoked sudo: their own home directory is theirs to write in).
func TrustedOwner(uid int) bool {
	if uid == 0 || uid == os.Geteuid() || uid == os.Getuid() {
		return true
	}
	if os.Getuid() == 0 {
		if s, ok := os.LookupEnv("SUDO_UID"); ok {
			if su, err := strconv.Atoi(s); err == nil && su == uid {
				return true
			}
		}
	}
	return false
}

// volumeOwners are the container volumes whose mount point another user
// may own (TrustVolumeOwner): dir → uid.
var volumeOwners sync.Map

// TrustVolumeOwner lets the directory dir, and only it, be owned by uid on
// an output path: the mount point of a volume that a user handed to a
// container (podman run -v ~/results:/results), where rtload runs as the
// container's root and the volume's owner is, seen from the host, the
// user who invoked it. Nothing below or above dir gains trust. The caller
// (cmd/rtload, after finding dir to be a volume's mount point in
// /proc/self/mountinfo) is the only one.
func TrustVolumeOwner(dir string, uid int) {
	volumeOwners.Store(filepath.Clean(dir), uid)
}

// trustedAt reports whether uid may own the directory dir: TrustedOwner,
// or the owner of a volume's mount point (TrustVolumeOwner).
func trustedAt(dir string, uid int) bool {
	if TrustedOwner(uid) {
		return true
	}
	v, ok := volumeOwners.Load(filepath.Clean(dir))
	return ok && v.(int) == uid
}

// maxLinks bounds the symlinks CheckOutPath follows (as the kernel's
// MAXSYMLINKS).
const maxLinks = 40

// CheckOutPath refuses an output path whose existing components another
// user could change (see above): a directory or symlink on the path owned
// by someone other than root or the invoking user (TrustedOwner), or a
// directory writable by group or others without the sticky bit. Symlinks
// on the path are followed (at most maxLinks) and their targets checked
// the same way. Components past the first missing one are not checked:
// rtload creates them. The last component itself is checked only when it
// is a directory (a results directory given with --out); a file there is
// the writer's to refuse or replace. Refusals are *DirError
// (ErrUnsafeDir) naming the component.
func CheckOutPath(path string) error {
	abs, err := filepath.Abs(path)
	if err != nil {
		return &DirError{path, "cannot be resolved: " + err.Error()}
	}
	links := 0
	return checkComponents(path, abs, &links)
}

// checkComponents checks every existing component of the absolute path
// abs, the root directory first; orig names the path in refusals.
func checkComponents(orig, abs string, links *int) error {
	parts := strings.Split(strings.Trim(filepath.Clean(abs), "/"), "/")
	cur := "/"
	if err := checkComponent(orig, cur); err != nil {
		return err
	}
	for i, p := range parts {
		if p == "" {
			continue
		}
		next := filepath.Join(cur, p)
		fi, err := os.Lstat(next)
		if errors.Is(err, fs.ErrNotExist) {
			return nil // rtload makes the rest
		}
		if err != nil {
			return &DirError{orig, fmt.Sprintf("component %s cannot be read: %v", next, err)}
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			if uid, ok := OwnerOf(fi); ok && !TrustedOwner(uid) {
				return &DirError{orig, fmt.Sprintf("component %s is a symlink owned by uid %d, not by root or the invoking user: another user could point it anywhere; give a path without it", next, uid)}
			}
			if *links++; *links > maxLinks {
				return &DirError{orig, fmt.Sprintf("more than %d symlinks on the path", maxLinks)}
			}
			to, err := os.Readlink(next)
			if err != nil {
				return &DirError{orig, fmt.Sprintf("component %s: %v", next, err)}
			}
			if !filepath.IsAbs(to) {
				to = filepath.Join(cur, to)
			}
			return checkComponents(orig, filepath.Join(append([]string{to}, parts[i+1:]...)...), links)
		}
		if !fi.IsDir() {
			return nil // not a directory: the caller's own refusal names it
		}
		if err := checkComponent(orig, next); err != nil {
			return err
		}
		cur = next
	}
	return nil
}

// checkComponent refuses the directory dir on orig's path when another
// user owns it or may write in it.
func checkComponent(orig, dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return &DirError{orig, fmt.Sprintf("component %s cannot be read: %v", dir, err)}
	}
	if uid, ok := OwnerOf(fi); ok && !trustedAt(dir, uid) {
		return &DirError{orig, fmt.Sprintf("component %s is owned by uid %d, not by root or the invoking user: rtload runs as root and does not write under another user's directory; choose a path of your own", dir, uid)}
	}
	if m := fi.Mode(); m.Perm()&0o002 != 0 && m&fs.ModeSticky == 0 {
		return &DirError{orig, fmt.Sprintf("component %s (mode %04o) is writable by others without the sticky bit: anyone could swap what lies under it; choose another path or chmod o-w it", dir, m.Perm())}
	}
	return nil
}

// OutputError is a refusal of a file a command would write outside a
// results directory (plot --out): Path, and the Reason. It matches
// ErrUnsafeDir, as every refusal of an output path does.
type OutputError struct {
	Path, Reason string
}

func (e *OutputError) Error() string { return "output file " + e.Path + ": " + e.Reason }

// Is matches ErrUnsafeDir.
func (e *OutputError) Is(target error) bool { return target == ErrUnsafeDir }

// WriteOutputFile writes data to the file path the way every file rtload
// writes is written (as Dir.WriteFile: a fresh temporary file created
// O_EXCL|O_NOFOLLOW in the file's directory, fsynced, renamed over path),
// after CheckOutPath. An existing path must be a regular file owned by root
// or the invoking user: a symlink (to anything), a FIFO, a device or
// another user's file is refused with *OutputError (ErrUnsafeDir), and the
// file a planted link points to is never written. Missing directories
// above path are not created. Used for every file a command writes outside
// a results directory (plot's image).
func WriteOutputFile(path string, data []byte) error {
	if err := CheckOutPath(path); err != nil {
		var de *DirError
		if errors.As(err, &de) {
			return &OutputError{path, de.Reason}
		}
		return err
	}
	dir, name := filepath.Split(path)
	if dir == "" {
		dir = "."
	}
	if err := CheckName(name); err != nil {
		return &OutputError{path, "is not a file path"}
	}
	root, err := os.OpenRoot(dir)
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	d := &Dir{path: dir, root: root, temps: map[string]bool{}}
	defer d.Close()
	if err := d.checkOutFile(name, path); err != nil {
		return err
	}
	if err := d.WriteFile(name, data); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

// checkOutFile refuses an existing name that is not a regular file of a
// trusted owner, and a directory (d, opened by path) that changed since
// CheckOutPath or that another user may write in.
func (d *Dir) checkOutFile(name, path string) error {
	fi, err := d.root.Stat(".")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	if uid, ok := OwnerOf(fi); ok && !TrustedOwner(uid) {
		return &OutputError{path, fmt.Sprintf("directory %s is owned by uid %d, not by root or the invoking user", d.path, uid)}
	}
	if m := fi.Mode(); m.Perm()&0o002 != 0 && m&fs.ModeSticky == 0 {
		return &OutputError{path, fmt.Sprintf("directory %s (mode %04o) is writable by others without the sticky bit", d.path, m.Perm())}
	}
	lfi, err := d.root.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil
	case err != nil:
		return fmt.Errorf("write %s: %w", path, err)
	case lfi.Mode()&fs.ModeSymlink != 0:
		to, _ := os.Readlink(path)
		return &OutputError{path, fmt.Sprintf("is a symlink (to %s): refused because rtload runs as root and never writes through a link; remove it or choose another name", to)}
	case !lfi.Mode().IsRegular():
		return &OutputError{path, "is " + filekind.Of(lfi.Mode()) + ", not a file rtload may replace"}
	}
	if uid, ok := OwnerOf(lfi); ok && !TrustedOwner(uid) {
		return &OutputError{path, fmt.Sprintf("exists, owned by uid %d, not by root or the invoking user: rtload does not replace another user's file", uid)}
	}
	return nil
}

// FileStat says where a file (a summary) was read from: Path (the file),
// File its fstat and Dir its directory's, both taken through the
// descriptors it was read with. check uses them to tell a baseline of the
// invoking user's from one received.
type FileStat struct {
	Path      string
	File, Dir fs.FileInfo
}

// Owners are the uids owning the file and its directory (ok
// false where the platform has none).
func (st FileStat) Owners() (file, dir int, ok bool) {
	f, ok1 := OwnerOf(st.File)
	d, ok2 := OwnerOf(st.Dir)
	return f, d, ok1 && ok2
}

// Foreign says why the file is not the invoking user's own, or "" when
// it is: the file or its directory owned by another user than root or the
// invoking user (TrustedOwner), or the directory writable by group or
// others without the sticky bit (anyone could have put the file there).
func (st FileStat) Foreign() string {
	f, d, ok := st.Owners()
	if !ok {
		return ""
	}
	switch {
	case !TrustedOwner(f):
		return fmt.Sprintf("%s is owned by uid %d", termsafe.Escape(st.Path), f)
	case !TrustedOwner(d):
		return fmt.Sprintf("its directory is owned by uid %d", d)
	}
	if m := st.Dir.Mode(); m.Perm()&0o022 != 0 && m&fs.ModeSticky == 0 {
		return fmt.Sprintf("its directory (mode %04o) is writable by group or others", m.Perm())
	}
	return ""
}
