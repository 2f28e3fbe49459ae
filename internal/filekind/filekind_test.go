package filekind

import (
	"io/fs"
	"testing"
)

func TestOf(t *testing.T) {
	for _, tc := range []struct {
		m    fs.FileMode
		want string
	}{
		{0o644, "a regular file"},
		{fs.ModeDir | 0o755, "a directory"},
		{fs.ModeSymlink | 0o777, "a symbolic link"},
		{fs.ModeNamedPipe | 0o600, "a named pipe (FIFO)"},
		{fs.ModeDevice | fs.ModeCharDevice | 0o666, "a character device"},
		{fs.ModeDevice | 0o660, "a block device"},
		{fs.ModeSocket | 0o755, "a socket"},
		{fs.ModeIrregular, "a special file (mode ?---------)"},
	} {
		if got := Of(tc.m); got != tc.want {
			t.Errorf("Of(%v) = %q, want %q", tc.m, got, tc.want)
		}
	}
}
