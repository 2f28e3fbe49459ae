package sysinfo

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"unsafe"

	"golang.org/x/sys/unix"
)

// ProcReader reads what a running trial's writer samples every interval:
// this process's resident memory (/proc/self/statm, proc_pid_statm(5)),
// its open fds (the entries of /proc/self/fd) and one CPU's interrupt and
// softirq counts (/proc/interrupts, /proc/softirqs). It reads into buffers
// it keeps, so that a soak samples for hours without allocating: once its
// buffer has grown to the largest file, RSS and OpenFDs allocate nothing,
// and IRQCounts allocates only for a source it has not seen before (its
// key) or a map that must grow. Each read opens and closes its file
// (openat(2) on a path prepared once; no fd is held between reads). Errors
// are *fs.PathError. Not safe for concurrent use: one goroutine, the
// writer, owns it.
type ProcReader struct {
	buf      []byte            // contents of the last file read
	key      []byte            // IRQCounts key being built
	want     []byte            // "CPU<n>", the header field looked for
	keys     map[string]string // every IRQCounts key seen, so a known one allocates nothing
	pageSize int64
}

// NewProcReader returns a reader with a 16 KiB buffer (grown as needed).
func NewProcReader() *ProcReader {
	return &ProcReader{buf: make([]byte, 0, 16<<10), key: make([]byte, 0, 128), want: make([]byte, 0, 16),
		keys: map[string]string{}, pageSize: int64(os.Getpagesize())}
}

// NUL-terminated paths for openat(2), made once.
var (
	pathStatm      = []byte("/proc/self/statm\x00")
	pathFDDir      = []byte("/proc/self/fd\x00")
	pathInterrupts = []byte("/proc/interrupts\x00")
	pathSoftirqs   = []byte("/proc/softirqs\x00")
)

// openProc opens path (NUL-terminated) read-only with openat(2).
func openProc(path []byte, flags int) (int, error) {
	dirfd := unix.AT_FDCWD
	for {
		fd, _, errno := unix.Syscall6(unix.SYS_OPENAT, uintptr(dirfd), uintptr(unsafe.Pointer(&path[0])),
			uintptr(unix.O_RDONLY|unix.O_CLOEXEC|flags), 0, 0, 0)
		switch errno {
		case 0:
			return int(fd), nil
		case unix.EINTR:
			continue
		}
		return -1, pathError("open", path, errno)
	}
}

func pathError(op string, path []byte, err error) error {
	return &fs.PathError{Op: op, Path: string(path[:len(path)-1]), Err: err}
}

// readProc reads the whole of path into p.buf (grown when the file does
// not fit) and returns it.
func (p *ProcReader) readProc(path []byte) ([]byte, error) {
	fd, err := openProc(path, 0)
	if err != nil {
		return nil, err
	}
	defer unix.Close(fd)
	b := p.buf[:0]
	for {
		if len(b) == cap(b) {
			b = slices.Grow(b, cap(b))
		}
		n, err := unix.Read(fd, b[len(b):cap(b)])
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			p.buf = b[:0]
			return nil, pathError("read", path, err)
		}
		if n == 0 {
			p.buf = b[:0]
			return b, nil
		}
		b = b[:len(b)+n]
	}
}

// RSS is this process's resident set size in bytes: the second field of
// /proc/self/statm (pages) times the page size.
func (p *ProcReader) RSS() (int64, error) {
	b, err := p.readProc(pathStatm)
	if err != nil {
		return 0, err
	}
	return parseStatm(b, p.pageSize)
}

// parseStatm reads the resident field of a /proc/<pid>/statm text, in
// bytes for pages of pageSize bytes. It allocates only for an error.
func parseStatm(statm []byte, pageSize int64) (int64, error) {
	_, rest := nextField(statm)
	f, _ := nextField(rest)
	if f == nil {
		return 0, fmt.Errorf("statm %q: want at least 2 fields", statm)
	}
	pages, ok := parseDecimal(f)
	if !ok || pages > 1<<62/uint64(max(pageSize, 1)) {
		return 0, fmt.Errorf("statm resident %q: not a number of pages", f)
	}
	return int64(pages) * pageSize, nil
}

// OpenFDs counts this process's open file descriptors: the entries of
// /proc/self/fd (getdents64(2)), the directory's own fd, open while it is
// read, included.
func (p *ProcReader) OpenFDs() (int, error) {
	fd, err := openProc(pathFDDir, unix.O_DIRECTORY)
	if err != nil {
		return 0, err
	}
	defer unix.Close(fd)
	b := p.buf[:cap(p.buf)]
	count := 0
	for {
		n, err := unix.Getdents(fd, b)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return 0, pathError("getdents64", pathFDDir, err)
		}
		if n <= 0 {
			return count, nil
		}
		count += countDirents(b[:n])
	}
}

// countDirents counts the linux_dirent64 records in b other than "." and
// "..": d_ino (8 bytes), d_off (8), d_reclen (2), d_type (1), d_name
// (NUL-terminated).
func countDirents(b []byte) int {
	n := 0
	for len(b) >= 19 {
		reclen := int(binary.NativeEndian.Uint16(b[16:18]))
		if reclen < 19 || reclen > len(b) {
			break
		}
		name := b[19:reclen]
		if i := bytes.IndexByte(name, 0); i >= 0 {
			name = name[:i]
		}
		if !(len(name) == 1 && name[0] == '.') && !(len(name) == 2 && name[0] == '.' && name[1] == '.') {
			n++
		}
		b = b[reclen:]
	}
	return n
}

// TaskStats reads thread tid's TaskStats as ReadTaskStats does (status,
// stat, schedstat and, where present, sched of /proc/self/task/tid), each
// parsed in place in the reader's buffer: it allocates nothing once the
// buffer has grown to the largest file. On an error it reads once more
// through ReadTaskStats, whose error it returns.
func (p *ProcReader) TaskStats(tid int) (TaskStats, error) {
	var s TaskStats
	ok := p.taskFile(tid, "status", func(t string) (err error) {
		s.VoluntarySwitches, s.InvoluntarySwitches, err = parseTaskStatus(t)
		return err
	}) && p.taskFile(tid, "stat", func(t string) (err error) {
		s.MinorFaults, s.MajorFaults, err = parseTaskStatFaults(t)
		return err
	}) && p.taskFile(tid, "schedstat", func(t string) (err error) {
		s.RunNs, s.WaitNs, s.Timeslices, err = parseSchedstat(t)
		return err
	})
	if !ok {
		return ReadTaskStats(tid) // its error, with owned strings
	}
	p.taskFile(tid, "sched", func(t string) error {
		s.Migrations, s.HasMigrations = parseSchedMigrations(t)
		return nil
	})
	return s, nil
}

// taskFile reads /proc/self/task/<tid>/<name> (at most maxTaskFile bytes
// parsed) and calls parse on a view of it that must not outlive the call;
// it reports whether both succeeded.
func (p *ProcReader) taskFile(tid int, name string, parse func(string) error) bool {
	p.key = append(p.key[:0], "/proc/self/task/"...)
	p.key = appendDecimal(p.key, tid)
	p.key = append(append(append(p.key, '/'), name...), 0)
	b, err := p.readProc(p.key)
	if err != nil {
		return false
	}
	if len(b) > maxTaskFile {
		b = b[:maxTaskFile]
	}
	if len(b) == 0 {
		return parse("") == nil
	}
	return parse(unsafe.String(&b[0], len(b))) == nil
}

// IRQCounts sets m to cpu's column of /proc/interrupts and /proc/softirqs,
// keyed as ReadIRQCounts keys them. m's earlier values are replaced, its
// keys kept (a source gone since reads as 0), so two maps read in turn
// allocate nothing once they hold every source.
func (p *ProcReader) IRQCounts(cpu int, m IRQCounts) error {
	for k := range m {
		m[k] = 0
	}
	for _, f := range []struct {
		path   []byte
		prefix string
	}{{pathInterrupts, "irq:"}, {pathSoftirqs, "softirq:"}} {
		b, err := p.readProc(f.path)
		if err != nil {
			return err
		}
		p.want = append(p.want[:0], "CPU"...)
		p.want = appendDecimal(p.want, cpu)
		p.key = parseIRQColumn(b, p.want, f.prefix, p.key, func(key []byte, v uint64) {
			k, ok := p.keys[string(key)]
			if !ok {
				k = string(key)
				p.keys[k] = k
			}
			m[k] += v
		})
	}
	return nil
}

// parseIRQColumn calls add for every row of a /proc/interrupts or
// /proc/softirqs text that has a count in the header's column named col
// ("CPU1"): add's key is prefix + the row's name, plus " " and the row's
// last field (its device) for a numbered IRQ ("irq:26 ttyS0"); rows with
// fewer counts than the column (MIS, ERR) are skipped, and so is a count
// that is not a decimal number. key is scratch space for the key, returned
// grown. It allocates only to grow key.
func parseIRQColumn(text, col []byte, prefix string, key []byte, add func(key []byte, v uint64)) []byte {
	header, rows, _ := bytes.Cut(text, []byte{'\n'})
	idx := -1
	for i, rest := 0, header; ; i++ {
		var f []byte
		if f, rest = nextField(rest); f == nil {
			break
		}
		if bytes.Equal(f, col) {
			idx = i
			break
		}
	}
	if idx < 0 {
		return key
	}
	for len(rows) > 0 {
		var line []byte
		line, rows, _ = bytes.Cut(rows, []byte{'\n'})
		name, rest, ok := bytes.Cut(line, []byte{':'})
		if !ok {
			continue
		}
		name = bytes.TrimSpace(name)
		var count, last []byte
		nf := 0
		for {
			var f []byte
			if f, rest = nextField(rest); f == nil {
				break
			}
			if nf == idx {
				count = f
			}
			last = f
			nf++
		}
		if idx >= nf {
			continue
		}
		v, ok := parseDecimal(count)
		if !ok {
			continue
		}
		key = append(append(key[:0], prefix...), name...)
		if isInteger(name) && nf > idx+1 {
			key = append(append(key, ' '), last...)
		}
		add(key, v)
	}
	return key
}

// nextField splits off the first field of b separated by ASCII white
// space (as strings.Fields does for /proc's ASCII text); f is nil when b
// holds no more fields.
func nextField(b []byte) (f, rest []byte) {
	i := 0
	for i < len(b) && isSpace(b[i]) {
		i++
	}
	if i == len(b) {
		return nil, nil
	}
	j := i
	for j < len(b) && !isSpace(b[j]) {
		j++
	}
	return b[i:j], b[j:]
}

func isSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\v' || c == '\f' || c == '\r'
}

// parseDecimal parses an unsigned decimal number that fits in a uint64
// (strconv.ParseUint(s, 10, 64) without the allocation of its error).
func parseDecimal(b []byte) (uint64, bool) {
	if len(b) == 0 {
		return 0, false
	}
	var v uint64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (1<<64-1-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	return v, true
}

// isInteger reports whether name is what strconv.Atoi accepts: an
// optional sign and decimal digits, within an int.
func isInteger(name []byte) bool {
	if len(name) > 0 && (name[0] == '+' || name[0] == '-') {
		name = name[1:]
	}
	v, ok := parseDecimal(name)
	return ok && v <= 1<<63
}

// appendDecimal appends n ≥ 0 in decimal.
func appendDecimal(b []byte, n int) []byte {
	if n < 0 {
		return append(b, '-') // no CPU is negative: a header never matches
	}
	var d [20]byte
	i := len(d)
	for {
		i--
		d[i] = byte('0' + n%10)
		n /= 10
		if n == 0 {
			break
		}
	}
	return append(b, d[i:]...)
}
