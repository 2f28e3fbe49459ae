// Package filekind names a file's type for messages, one vocabulary for
// every refusal rtload prints ("is a symbolic link", "is a named pipe
// (FIFO)"): the scenario loader's, the results directory's and the
// leftover sweeper's.
package filekind

import "io/fs"

// Of names the type of mode m with its article: "a regular file", "a
// directory", "a symbolic link", "a named pipe (FIFO)", "a character
// device", "a block device", "a socket", or "a special file (mode …)".
func Of(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a named pipe (FIFO)"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m.IsRegular():
		return "a regular file"
	}
	return "a special file (mode " + m.String() + ")"
}
