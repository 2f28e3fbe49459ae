package store_test

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/rtload/rtload/internal/testutil"
	"github.com/rtload/rtload/results"
	"github.com/rtload/rtload/results/safeio"
	"github.com/rtload/rtload/results/store"
)

// appendSessions appends n sessions of the seed summary to a new
// sessions directory, as run --append does, and returns its path.
func appendSessions(t *testing.T, n int) string {
	t.Helper()
	base := filepath.Join(t.TempDir(), "base")
	for i := range n {
		s, err := store.OpenSessions(base)
		if err != nil {
			t.Fatal(err)
		}
		dir, err := s.Next()
		if err != nil {
			t.Fatal(err)
		}
		if want := filepath.Join(base, results.SessionName(i+1)); dir != want {
			t.Fatalf("next session %s, want %s", dir, want)
		}
		d, err := store.CreateNewDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		sum := testutil.SeedSummary()
		sum.Env.BootID = fmt.Sprintf("00000000-0000-0000-0000-%012d", i%2)
		d.Close()
		testutil.WriteSummary(t, dir, sum)
		if err := s.Add(dir, sum); err != nil {
			t.Fatal(err)
		}
		s.Close()
	}
	return base
}

// TestSessionsAppend: sessions appended one by one are read back in
// order, each a results directory, and the index counts their boots.
func TestSessionsAppend(t *testing.T) {
	base := appendSessions(t, 3)
	if !store.IsSessions(base) {
		t.Fatal("not recognised as a sessions directory")
	}
	x, dirs, err := store.ReadSessions(base)
	if err != nil {
		t.Fatal(err)
	}
	if len(dirs) != 3 || filepath.Base(dirs[2]) != "s003" || x.Boots() != 2 {
		t.Fatalf("dirs %v, boots %d", dirs, x.Boots())
	}
	for _, d := range dirs {
		if _, err := store.ReadSummary(d); err != nil {
			t.Error(err)
		}
	}
	if store.IsSessions(dirs[0]) {
		t.Error("a session's own results directory taken for a sessions directory")
	}
}

// TestSessionsLeftover: a session directory a killed append left (no
// index entry) is skipped by the next append and ignored by readers.
func TestSessionsLeftover(t *testing.T) {
	base := appendSessions(t, 1)
	if err := os.Mkdir(filepath.Join(base, "s002"), 0o700); err != nil {
		t.Fatal(err)
	}
	s, err := store.OpenSessions(base)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	next, err := s.Next()
	if err != nil || filepath.Base(next) != "s003" {
		t.Fatalf("next %s, %v: want s003", next, err)
	}
	if _, dirs, err := store.ReadSessions(base); err != nil || len(dirs) != 1 {
		t.Fatalf("dirs %v, %v", dirs, err)
	}
}

// TestSessionsLock: a second append to a baseline being appended to is
// refused, naming the first one's pid.
func TestSessionsLock(t *testing.T) {
	base := appendSessions(t, 1)
	s, err := store.OpenSessions(base)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	_, err = store.OpenSessions(base)
	if err == nil || !strings.Contains(err.Error(), fmt.Sprint(os.Getpid())) {
		t.Fatalf("second append: %v", err)
	}
}

// TestSessionsRefusals: what --append must not write into, and the
// hostile layouts a reader refuses: each error names the problem.
func TestSessionsRefusals(t *testing.T) {
	t.Run("a run's results directory", func(t *testing.T) {
		dir := t.TempDir()
		testutil.WriteSummary(t, dir, testutil.SeedSummary())
		_, err := store.OpenSessions(dir)
		if !errors.Is(err, store.ErrNotSessions) || !strings.Contains(err.Error(), "summary.json") {
			t.Fatalf("got %v", err)
		}
	})
	t.Run("a symlink as the base", func(t *testing.T) {
		base := appendSessions(t, 1)
		link := filepath.Join(t.TempDir(), "link")
		if err := os.Symlink(base, link); err != nil {
			t.Fatal(err)
		}
		if _, err := store.OpenSessions(link); !errors.Is(err, safeio.ErrUnsafeDir) {
			t.Fatalf("got %v", err)
		}
	})
	index := func(t *testing.T, base, body string) {
		t.Helper()
		os.Remove(filepath.Join(base, results.SessionsFile))
		if err := os.WriteFile(filepath.Join(base, results.SessionsFile), []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	head := `{"schema":"rtload-sessions","version":1,"scenario":"x","sessions":[`
	for _, c := range []struct {
		name, body, want string
		setup            func(t *testing.T, base string)
	}{
		{"a path out of the directory", head + `{"dir":"../../etc"}]}`, "not a session name", nil},
		{"a name given twice", head + `{"dir":"s001"},{"dir":"s001"}]}`, "given twice", nil},
		{"an unknown field", head + `{"dir":"s001","evil":1}]}`, "unknown field", nil},
		{"another schema", `{"schema":"x\u001b]0;t\u0007","version":1,"sessions":[]}`, `\x1b`, nil},
		{"a missing session", head + `{"dir":"s009"}]}`, "s009", nil},
		{"a session that is a symlink", head + `{"dir":"s001"},{"dir":"s002"}]}`, "symlink", func(t *testing.T, base string) {
			if err := os.Symlink("/etc", filepath.Join(base, "s002")); err != nil {
				t.Fatal(err)
			}
		}},
		{"a session that is a file", head + `{"dir":"s001"},{"dir":"s002"}]}`, "regular file", func(t *testing.T, base string) {
			if err := os.WriteFile(filepath.Join(base, "s002"), nil, 0o600); err != nil {
				t.Fatal(err)
			}
		}},
		{"too many sessions", head + strings.Repeat(`{"dir":"s001"},`, results.MaxSessions) + `{"dir":"s001"}]}`, "more than the limit", nil},
		{"a huge index", head + `{"dir":"s001"}]}` + strings.Repeat(" ", results.MaxSessionsFileBytes), "larger than the limit", nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			base := appendSessions(t, 1)
			if c.setup != nil {
				c.setup(t, base)
			}
			index(t, base, c.body)
			_, _, err := store.ReadSessions(base)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want %q", err, c.want)
			}
		})
	}
	t.Run("an index that is a FIFO", func(t *testing.T) {
		base := appendSessions(t, 1)
		os.Remove(filepath.Join(base, results.SessionsFile))
		if err := syscall.Mkfifo(filepath.Join(base, results.SessionsFile), 0o600); err != nil {
			t.Skip(err)
		}
		if _, _, err := store.ReadSessions(base); !errors.Is(err, safeio.ErrRefusedFile) {
			t.Fatalf("got %v", err)
		}
		if store.IsSessions(base) {
			t.Error("a FIFO index taken for a sessions directory")
		}
	})
}

// FuzzDecodeSessions: the index decoder never panics, and an index it
// accepts names only session directories, each once, within the bound.
func FuzzDecodeSessions(f *testing.F) {
	f.Add([]byte(`{"schema":"rtload-sessions","version":1,"scenario":"x","sessions":[{"dir":"s001","boot":{"kernel":"6.1","cmdline":"a=b","boot_id":"x"}}]}`))
	f.Add([]byte(`{"schema":"rtload-sessions","version":1,"sessions":[{"dir":"s0001"},{"dir":"s01"}]}`))
	f.Add([]byte(`{"schema":"rtload-sessions","version":1,"sessions":[{"dir":"s+01"}]} {}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		x, err := store.DecodeSessions(data, "sessions.json")
		if err != nil {
			return
		}
		if len(x.Sessions) > results.MaxSessions {
			t.Fatalf("%d sessions accepted", len(x.Sessions))
		}
		seen := map[string]bool{}
		for _, s := range x.Sessions {
			if seen[s.Dir] || strings.ContainsAny(s.Dir, "/.") || len(s.Dir) < 4 || s.Dir[0] != 's' {
				t.Fatalf("dir %q accepted", s.Dir)
			}
			seen[s.Dir] = true
		}
	})
}

// TestSessionsDiscard: a run --append refused before its first session
// (a requirement not met) left the sessions directory it had made, empty
// (a fresh user's rehearsal, issue 32). Discard removes what this open
// made and nothing else.
func TestSessionsDiscard(t *testing.T) {
	root := t.TempDir()
	fresh := filepath.Join(root, "fresh")
	s, err := store.OpenSessions(fresh)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Discard(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(fresh); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("%s left: %v", fresh, err)
	}
	// A directory the user made stays.
	mine := filepath.Join(root, "mine")
	if err := os.Mkdir(mine, 0o755); err != nil {
		t.Fatal(err)
	}
	if s, err = store.OpenSessions(mine); err != nil {
		t.Fatal(err)
	}
	if err := s.Discard(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Lstat(mine); err != nil {
		t.Errorf("%s removed: %v", mine, err)
	}
}
