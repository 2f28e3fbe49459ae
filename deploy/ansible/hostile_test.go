package ansible

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// This file builds the fleet test's unusual hosts: host1's own filesystem
// with a sudoer in it, and the hostile hosts of issue 23.

// sudoerFS is host1's filesystem: tmpfs over /var/lib, /var/tmp,
// /usr/local/bin and /home, and the machine's user database with sudoer
// added (uid free on the machine), bound over /etc/passwd, /etc/group and
// /etc/shadow, and a sudoers.d that lets sudoer become root without a
// password. The user exists only inside host1's mount namespace: nothing
// is added to the machine's own files.
func (f *fleet) sudoerFS(t *testing.T, name string) *ownFS {
	t.Helper()
	dir := filepath.Join(f.dir, name+"-fs")
	uid := freeUID(t)
	var binds [][2]string
	for _, db := range []struct{ file, line string }{
		{"passwd", fmt.Sprintf("%s:x:%d:%d:rtload fleet test:/home/%s:/bin/sh\n", sudoer, uid, uid, sudoer)},
		{"group", fmt.Sprintf("%s:x:%d:\n", sudoer, uid)},
		// "*": no password, but not locked ("!" is: sshd would refuse the key).
		{"shadow", fmt.Sprintf("%s:*:19000:0:99999:7:::\n", sudoer)},
	} {
		src := "/etc/" + db.file
		b, err := os.ReadFile(src)
		if err != nil {
			t.Fatal(err)
		}
		if len(b) > 0 && b[len(b)-1] != '\n' {
			b = append(b, '\n')
		}
		fi, err := os.Stat(src)
		if err != nil {
			t.Fatal(err)
		}
		copyPath := filepath.Join(dir, db.file)
		writeFile(t, copyPath, string(b)+db.line, fi.Mode().Perm())
		st := fi.Sys().(*syscall.Stat_t)
		if err := os.Chown(copyPath, int(st.Uid), int(st.Gid)); err != nil {
			t.Fatal(err)
		}
		binds = append(binds, [2]string{copyPath, src})
	}
	sudoers := filepath.Join(dir, "sudoers.d")
	writeFile(t, filepath.Join(sudoers, sudoer), fmt.Sprintf("Defaults:%s !use_pty\n%s ALL=(root) NOPASSWD: ALL\n", sudoer, sudoer), 0o440)
	binds = append(binds, [2]string{sudoers, "/etc/sudoers.d"})
	// The test's temp dir is root's alone (0700): sudoer's key is in its
	// home, which sshd reads as sudoer.
	pub, err := os.ReadFile(f.key + ".pub")
	if err != nil {
		t.Fatal(err)
	}
	home := "/home/" + sudoer
	return &ownFS{
		Tmpfs: []string{"/var/lib", "/var/tmp", "/usr/local/bin", "/home"},
		Binds: binds,
		Setup: fmt.Sprintf("mkdir -p -m 0700 %[1]s/.ssh\nprintf '%%s\\n' %[2]s >%[1]s/.ssh/authorized_keys\nchown -R %[3]d:%[3]d %[1]s\n",
			home, shellQuote(strings.TrimSpace(string(pub))), uid),
		SSHD: fmt.Sprintf("Match User %s\n\tAuthorizedKeysFile .ssh/authorized_keys\n", sudoer),
	}
}

// freeUID returns a uid in 64100–64199 that the machine's user database
// does not know.
func freeUID(t *testing.T) int {
	t.Helper()
	for uid := 64100; uid < 64200; uid++ {
		if _, err := user.LookupId(strconv.Itoa(uid)); err != nil {
			return uid
		}
	}
	t.Fatal("no free uid in 64100–64199")
	return 0
}

// unameFS is a host whose uname prints text whatever it is asked: a
// script bound over /usr/bin/uname in its mount namespace.
func (f *fleet) unameFS(t *testing.T, name, text string) *ownFS {
	t.Helper()
	fake := filepath.Join(f.dir, name+"-fs", "uname")
	writeFile(t, fake, "#!/bin/sh\necho "+shellQuote(text)+"\n", 0o755)
	return &ownFS{Binds: [][2]string{{fake, "/usr/bin/uname"}}}
}

// plantedDirFS is a host with a /var/tmp of its own (tmpfs, 1777) where
// another local user (uid evilDirUID) made /var/tmp/rtload first, mode
// 0777, holding links to victim named as Pack names its archives for
// every second from 5 s ago to 3 minutes ahead (the fleet run's stamp is
// one of them).
func plantedDirFS(victim string) *ownFS {
	var b strings.Builder
	b.WriteString("mkdir /var/tmp/rtload\ncd /var/tmp/rtload\n")
	now := time.Now().UTC()
	for s := -5; s < 180; s++ {
		stamp := now.Add(time.Duration(s) * time.Second).Format("20060102T150405Z")
		fmt.Fprintf(&b, "ln -s %s timer-only-%s.tar.gz\n", shellQuote(victim), stamp)
	}
	fmt.Fprintf(&b, "chown -hR %d:%d /var/tmp/rtload\nchmod 0777 /var/tmp/rtload\ncd /\n", evilDirUID, evilDirUID)
	return &ownFS{Tmpfs: []string{"/var/tmp"}, Setup: b.String()}
}

// evilRtload writes a compromised host's rtload: the real one, after
// which every wakeup log in --out becomes a link to the controller's
// secret, and a FIFO and a hard link join them.
func (f *fleet) evilRtload(t *testing.T) string {
	t.Helper()
	path := filepath.Join(f.dir, "evil-rtload")
	writeFile(t, path, `#!/bin/sh
`+shellQuote(f.bin)+` "$@"
rc=$?
out= prev=
for a in "$@"; do [ "$prev" = --out ] && out=$a; prev=$a; done
if [ -n "$out" ] && [ -f "$out/summary.json" ]; then
	for log in "$out"/wakeups-*.csv; do
		[ -f "$log" ] && rm -f "$log" && ln -s `+shellQuote(f.secret)+` "$log"
	done
	mkfifo "$out/wakeup.fifo"
	ln "$out/summary.json" "$out/summary-again.json"
fi
exit $rc
`, 0o755)
	return path
}

// foldedRtload writes a compromised host's rtload: the real one, after
// which summary.json's "readers" keys read "reader\u017f" (a long s),
// which encoding/json still decodes as "readers" (issue 34: the
// controller's compare refuses such a summary, and the host is marked).
func (f *fleet) foldedRtload(t *testing.T) string {
	t.Helper()
	path := filepath.Join(f.dir, "folded-rtload")
	writeFile(t, path, `#!/bin/sh
`+shellQuote(f.bin)+` "$@"
rc=$?
out= prev=
for a in "$@"; do [ "$prev" = --out ] && out=$a; prev=$a; done
if [ -n "$out" ] && [ -f "$out/summary.json" ]; then
	sed -i 's/"readers":/"reader\\u017f":/' "$out/summary.json"
fi
exit $rc
`, 0o755)
	return path
}

// releaseArchive writes a release tarball as a user would download one:
// archiveRoot/rtload (the test's binary) and archiveRoot/README.
func (f *fleet) releaseArchive(t *testing.T) string {
	t.Helper()
	bin, err := os.ReadFile(f.bin)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	tw := tar.NewWriter(zw)
	now := time.Now()
	for _, m := range []struct {
		name string
		mode int64
		data []byte
	}{
		{archiveRoot + "/", 0o755, nil},
		{archiveRoot + "/README", 0o644, []byte("rtload, a real-time load generator\n")},
		{archiveRoot + "/rtload", 0o755, bin},
	} {
		hdr := &tar.Header{Name: m.name, Mode: m.mode, Size: int64(len(m.data)), ModTime: now, Uid: 1000, Gid: 1000, Typeflag: tar.TypeReg}
		if strings.HasSuffix(m.name, "/") {
			hdr.Typeflag = tar.TypeDir
		}
		if err := tw.WriteHeader(hdr); err != nil {
			t.Fatal(err)
		}
		if _, err := tw.Write(m.data); err != nil {
			t.Fatal(err)
		}
	}
	if err := tw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(f.dir, "rtload-test-linux-amd64.tar.gz")
	writeFile(t, path, buf.String(), 0o644)
	return path
}
