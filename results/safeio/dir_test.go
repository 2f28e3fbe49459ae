package safeio_test

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results/safeio"
)

func TestCreateDirRefusals(t *testing.T) {
	testutil.Requires(t, testutil.Root)
	base := t.TempDir()
	mk := func(name string, mode os.FileMode, uid int) string {
		p := filepath.Join(base, name)
		if err := os.Mkdir(p, 0o700); err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(p, mode); err != nil {
			t.Fatal(err)
		}
		if err := os.Chown(p, uid, uid); err != nil {
			t.Fatal(err)
		}
		return p
	}
	nobodys := mk("nobodys", 0o755, 65534)
	open := mk("world-writable", 0o777, 0)
	sticky := mk("sticky", 0o777|os.ModeSticky, 0)
	used := mk("used", 0o755, 0)
	os.WriteFile(filepath.Join(used, "wakeups-00-recvfrom-r0-rt.csv"), []byte("x"), 0o644)
	link := filepath.Join(base, "link")
	os.Symlink(mk("target", 0o755, 0), link)
	os.Lchown(link, 65534, 65534)
	for _, tc := range []struct {
		name, path, wantErr string
	}{
		{"owned by nobody", nobodys, "owned by uid 65534, not by uid 0 running rtload"},
		{"world-writable", open, "mode 0777 is writable by group or others without the sticky bit"},
		{"earlier run's files", used, "is not empty (wakeups-00-recvfrom-r0-rt.csv): it may hold an earlier run's files"},
		{"another user's link", link, "is a symlink owned by uid 65534"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, _, err := safeio.CreateDir(tc.path)
			if err == nil {
				d.Close()
			}
			if !errors.Is(err, safeio.ErrUnsafeDir) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want ErrUnsafeDir and %q", err, tc.wantErr)
			}
		})
	}
	d, created, err := safeio.CreateDir(sticky)
	if err != nil || created {
		t.Fatalf("sticky world-writable dir of our own: %v created %v", err, created)
	}
	d.Close()
	// A new path is created with its parents; OpenDir takes it non-empty.
	fresh := filepath.Join(base, "new", "run")
	d, created, err = safeio.CreateDir(fresh)
	if err != nil || !created {
		t.Fatalf("new path: %v created %v", err, created)
	}
	d.WriteFile("x", []byte("1"))
	d.Close()
	if d, err := safeio.OpenDir(fresh); err != nil {
		t.Errorf("OpenDir of a used results dir: %v", err)
	} else {
		d.Close()
	}
}

func TestCreateDirNotADirectory(t *testing.T) {
	base := t.TempDir()
	file := filepath.Join(base, "afile")
	empty := filepath.Join(base, "emptydir")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(empty, 0o700); err != nil {
		t.Fatal(err)
	}
	link := func(name, to string) string {
		p := filepath.Join(base, name)
		if err := os.Symlink(to, p); err != nil {
			t.Fatal(err)
		}
		return p
	}
	fileLink, dirLink, dangling := link("filelink", "afile"), link("dirlink", "emptydir"), link("danglink", "nowhere")
	for _, tc := range []struct {
		name, path, want string
	}{
		{"regular file", file, file + ": is a regular file, not a directory"},
		{"device", "/dev/null", "/dev/null: is a character device, not a directory"},
		{"symlink to a file", fileLink, fileLink + ": is a symlink (to afile): refused because rtload runs as root and never follows a link"},
		{"symlink to an empty directory", dirLink, dirLink + ": is a symlink (to emptydir): refused because rtload runs as root and never follows a link"},
		{"dangling symlink", dangling, dangling + ": is a dangling symlink (to nowhere)"},
		{"under a dangling symlink", filepath.Join(dangling, "sub"), "parent " + dangling + " is a dangling symlink (to nowhere)"},
		{"under a file", filepath.Join(file, "sub"), "parent " + file + " is a regular file, not a directory"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d, _, err := safeio.CreateDir(tc.path)
			if err == nil {
				d.Close()
			}
			if !errors.Is(err, safeio.ErrUnsafeDir) || !strings.Contains(err.Error(), "results directory "+tc.path) || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want ErrUnsafeDir naming %s and %q", err, tc.path, tc.want)
			}
		})
	}
	if names, _ := os.ReadDir(empty); len(names) != 0 {
		t.Errorf("the link's target got %v", names)
	}
	if _, err := os.Lstat(filepath.Join(base, "nowhere")); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("the dangling link's target was created: %v", err)
	}
}

func TestCreateNewDir(t *testing.T) {
	base := t.TempDir()
	p := filepath.Join(base, "results", "run")
	d, err := safeio.CreateNewDir(p)
	if err != nil {
		t.Fatal(err)
	}
	d.Close()
	if _, err := safeio.CreateNewDir(p); !errors.Is(err, fs.ErrExist) {
		t.Errorf("existing empty directory: %v, want fs.ErrExist", err)
	}
	if _, _, err := safeio.CreateDir(p); err != nil {
		t.Errorf("CreateDir still takes the empty directory: %v", err)
	}
}
