package profile

import (
	"debug/elf"
	"errors"
	"os"
	"slices"
	"strings"
	"testing"
)

func loadKallsymsFixture(t *testing.T, name string) *Kallsyms {
	t.Helper()
	f, err := os.Open("testdata/" + name)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	k, err := ParseKallsyms(f)
	if err != nil {
		t.Fatal(err)
	}
	return k
}

func TestKallsymsLookup(t *testing.T) {
	k := loadKallsymsFixture(t, "kallsyms-small.txt")
	if k.Len() != 7 { // data symbol, bad line and duplicate addresses dropped
		t.Fatalf("Len = %d, want 7", k.Len())
	}
	tests := []struct {
		name   string
		addr   uint64
		want   string
		wantOK bool
	}{
		{"below the first symbol", 0xffffffff80ffffff, "", false},
		{"first address: T beats t", 0xffffffff81000000, "_stext", true},
		{"inside a function", 0xffffffff81e7f3f0, "copy_msghdr_from_user", true},
		{"one before the next symbol", 0xffffffff81e7f5ef, "copy_msghdr_from_user", true},
		{"alias at the same address: t beats W", 0xffffffff81e7f5f0, "___sys_recvmsg", true},
		{"data symbols are not kept", 0xffffffff82000010, "__sys_recvfrom", true},
		{"suffix kept", 0xffffffff82100040, "finish_task_switch.isra.0", true},
		{"module symbol", 0xffffffffc0001010, "udp_tunnel_sock_release [udp_tunnel]", true},
		{"more than 1 MiB past the last symbol", 0xffffffffc0001000 + 1<<20, "", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := k.Lookup(tt.addr)
			if got != tt.want || ok != tt.wantOK {
				t.Errorf("Lookup(%#x) = %q, %v; want %q, %v", tt.addr, got, ok, tt.want, tt.wantOK)
			}
		})
	}
	var zero Kallsyms
	if _, ok := zero.Lookup(0xffffffff81000000); ok {
		t.Error("zero Kallsyms resolved an address")
	}
}

func TestKallsymsHidden(t *testing.T) {
	_, err := ParseKallsyms(strings.NewReader("0000000000000000 T _stext\n0000000000000000 t foo\n"))
	if !errors.Is(err, ErrKallsymsHidden) {
		t.Fatalf("err = %v, want ErrKallsymsHidden", err)
	}
}

// TestSymboliseRecordedFixture resolves the real ring fixture's kernel
// addresses with the kallsyms lines recorded with it.
func TestSymboliseRecordedFixture(t *testing.T) {
	f := readRingFixture(t, "ring-recvmsg.bin")
	k := loadKallsymsFixture(t, "kallsyms-recvmsg.txt")
	var b Batch
	if _, err := Decode(f.data, f.head, f.tail, f.sampleType, &b); err != nil {
		t.Fatal(err)
	}
	var bl Builder
	bl.Add(&b)
	p := bl.Build(Symbols{Kernel: k}, DefaultPhaseRule())
	var kernel, unknown int
	seen := map[string]bool{}
	for _, s := range p.Stacks {
		for _, fr := range s.Frames {
			if !fr.Kernel {
				continue
			}
			kernel++
			if fr.Func == Unknown {
				unknown++
			}
			seen[BaseName(fr.Func)] = true
		}
	}
	if kernel == 0 || unknown != 0 {
		t.Fatalf("%d kernel frames, %d unresolved", kernel, unknown)
	}
	for _, want := range []string{"entry_SYSCALL_64_after_hwframe", "do_syscall_64", "__sys_recvmsg"} {
		if !seen[want] {
			names := make([]string, 0, len(seen))
			for n := range seen {
				names = append(names, n)
			}
			slices.Sort(names)
			t.Errorf("no frame %s among %v", want, names)
		}
	}
	if ph := p.PhaseSamples(); ph[PhaseDrain] == 0 {
		t.Errorf("phases %v: no drain samples in a recvmsg loop", ph)
	}
	if len(p.Threads) != 1 || uint64(p.Threads[0].TID) != f.tid || p.Threads[0].Samples != uint64(len(b.Samples)) {
		t.Errorf("threads %v, want %d with %d samples", p.Threads, f.tid, len(b.Samples))
	}
}

func TestELFSymbolsOfTestBinary(t *testing.T) {
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	if f, err := elf.Open(exe); err != nil {
		t.Fatal(err)
	} else if _, err := f.Symbols(); err != nil {
		f.Close()
		t.Skipf("test binary has no .symtab (go test links it without one unless -c): %v", err)
	} else {
		f.Close()
	}
	e, err := LoadELFSymbols(exe, 0)
	if err != nil {
		t.Fatal(err)
	}
	pc := funcPC(TestELFSymbolsOfTestBinary)
	got, ok := e.Lookup(pc)
	self, _ := SelfSymbols{}.Lookup(pc)
	if !ok || got != self || !strings.HasSuffix(got, "TestELFSymbolsOfTestBinary") {
		t.Fatalf("ELF Lookup(%#x) = %q, %v; runtime says %q", pc, got, ok, self)
	}
	if _, ok := e.Lookup(8); ok {
		t.Error("address 8 resolved")
	}
}
