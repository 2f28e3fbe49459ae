package profile

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"
)

// ErrKallsymsHidden means /proc/kallsyms listed every address as 0: the
// kernel hides them (kernel.kptr_restrict ≥ 1 without CAP_SYSLOG, or 2).
var ErrKallsymsHidden = errors.New("kallsyms: every address is 0 (kernel.kptr_restrict hides them; needs CAP_SYSLOG and kptr_restrict ≤ 1)")

// maxKallsymsBytes bounds what ParseKallsyms reads (a distribution kernel
// with modules lists about 10 MB).
const maxKallsymsBytes = 256 << 20

// maxSymbolSize is how far past the last listed symbol an address still
// resolves to it.
const maxSymbolSize = 1 << 20

// Kallsyms resolves kernel text addresses to function names. The zero
// value resolves nothing. It is immutable after ParseKallsyms and safe
// for concurrent use.
type Kallsyms struct {
	addrs []uint64 // ascending
	names []string // names[i] starts at addrs[i]; "name [module]" for modules
}

// LoadKallsyms parses /proc/kallsyms. Errors: the open error, a read error,
// or ErrKallsymsHidden.
func LoadKallsyms() (*Kallsyms, error) {
	f, err := os.Open("/proc/kallsyms") // procfs: the kernel's own file
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return ParseKallsyms(f)
}

// ParseKallsyms reads a /proc/kallsyms text ("ffffffff81000000 T _stext"
// lines, optionally followed by "[module]") and keeps the text symbols
// (types t, T, w, W), sorted by address. Where several names share an
// address, a global (T) beats a local (t) beats a weak one, then the
// first listed wins. Malformed lines are skipped. It reads at most
// 256 MiB. Errors: a read error, or ErrKallsymsHidden when no address is
// non-zero.
func ParseKallsyms(r io.Reader) (*Kallsyms, error) {
	type sym struct {
		addr uint64
		rank int
		name string
	}
	var syms []sym
	var lines, zero int
	sc := bufio.NewScanner(io.LimitReader(r, maxKallsymsBytes))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 3 || len(f[1]) != 1 {
			continue
		}
		rank := strings.IndexByte("TtWw", f[1][0])
		if rank < 0 {
			continue
		}
		addr, err := strconv.ParseUint(f[0], 16, 64)
		if err != nil {
			continue
		}
		lines++
		if addr == 0 {
			zero++
			continue
		}
		name := f[2]
		if len(f) > 3 {
			name += " " + f[3]
		}
		syms = append(syms, sym{addr, rank / 2, name})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("kallsyms: %w", err)
	}
	if lines > 0 && zero == lines {
		return nil, ErrKallsymsHidden
	}
	slices.SortStableFunc(syms, func(a, b sym) int {
		if a.addr != b.addr {
			if a.addr < b.addr {
				return -1
			}
			return 1
		}
		return a.rank - b.rank
	})
	k := &Kallsyms{}
	for i, s := range syms {
		if i > 0 && s.addr == syms[i-1].addr {
			continue // the first (best-ranked) name at this address wins
		}
		k.addrs = append(k.addrs, s.addr)
		k.names = append(k.names, s.name)
	}
	return k, nil
}

// Len is the number of distinct symbol addresses kept.
func (k *Kallsyms) Len() int { return len(k.addrs) }

// Lookup returns the function containing kernel address addr: the symbol
// with the greatest start ≤ addr (binary search), if addr is less than
// 1 MiB past it. ok is false below the first symbol or past that range.
func (k *Kallsyms) Lookup(addr uint64) (name string, ok bool) {
	i, found := slices.BinarySearch(k.addrs, addr)
	if !found {
		i--
	}
	if i < 0 || (i == len(k.addrs)-1 && addr-k.addrs[i] >= maxSymbolSize) {
		return "", false
	}
	return k.names[i], true
}
