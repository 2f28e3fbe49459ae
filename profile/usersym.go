package profile

import (
	"debug/elf"
	"fmt"
	"runtime"
	"slices"
)

// Resolver names the function containing an address; ok is false when it
// does not know. *Kallsyms, SelfSymbols and *ELFSymbols implement it.
type Resolver interface {
	Lookup(addr uint64) (name string, ok bool)
}

var (
	_ Resolver = (*Kallsyms)(nil)
	_ Resolver = SelfSymbols{}
	_ Resolver = (*ELFSymbols)(nil)
)

// SelfSymbols resolves addresses in this process's own Go code with
// runtime.FuncForPC: the profiled reader threads are this process's, so
// no file needs reading. An inlined call resolves to the innermost
// function. Addresses outside Go text (the vDSO, C code) do not resolve.
type SelfSymbols struct{}

// Lookup returns the Go function at pc.
func (SelfSymbols) Lookup(pc uint64) (string, bool) {
	f := runtime.FuncForPC(uintptr(pc))
	if f == nil {
		return "", false
	}
	return f.Name(), true
}

// ELFSymbols resolves addresses of another executable from its ELF
// symbol table (.symtab, else .dynsym): function symbols, sorted by
// address, each covering [value, value+size). It does not read DWARF or
// Go's pclntab, so a stripped binary resolves nothing.
type ELFSymbols struct {
	starts, ends []uint64
	names        []string
}

// LoadELFSymbols reads the function symbols of the ELF file at path. bias
// is added to every symbol value: 0 for a non-PIE executable (ET_EXEC),
// the load address of its first mapping for a PIE (from
// /proc/<pid>/maps). Errors: the open or parse error, or "no function
// symbols".
func LoadELFSymbols(path string, bias uint64) (*ELFSymbols, error) {
	f, err := elf.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	syms, err := f.Symbols()
	if err != nil || len(syms) == 0 {
		syms, err = f.DynamicSymbols()
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	type fn struct {
		start, end uint64
		name       string
	}
	var fns []fn
	for _, s := range syms {
		if elf.ST_TYPE(s.Info) == elf.STT_FUNC && s.Value != 0 {
			fns = append(fns, fn{s.Value + bias, s.Value + bias + max(s.Size, 1), s.Name})
		}
	}
	if len(fns) == 0 {
		return nil, fmt.Errorf("%s: no function symbols", path)
	}
	slices.SortFunc(fns, func(a, b fn) int {
		switch {
		case a.start < b.start:
			return -1
		case a.start > b.start:
			return 1
		}
		return 0
	})
	e := &ELFSymbols{}
	for _, x := range fns {
		e.starts, e.ends, e.names = append(e.starts, x.start), append(e.ends, x.end), append(e.names, x.name)
	}
	return e, nil
}

// Lookup returns the function symbol whose range holds addr.
func (e *ELFSymbols) Lookup(addr uint64) (string, bool) {
	i, found := slices.BinarySearch(e.starts, addr)
	if !found {
		i--
	}
	if i < 0 || addr >= e.ends[i] {
		return "", false
	}
	return e.names[i], true
}
