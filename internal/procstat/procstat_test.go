package procstat

import "testing"

func TestFields(t *testing.T) {
	// A command with a space and a ')' of its own: fields count from the last ')'.
	line := "1234 (a) b) S 1 1234 1234 0 -1 4194560 77 0 3 0 5 6\n"
	var f [10]string
	n, err := Fields(line, f[:], 10)
	if err != nil || n != 10 || f[0] != "S" || f[6] != "4194560" || f[7] != "77" || f[9] != "3" {
		t.Fatalf("Fields = %d, %v, %q", n, err, f)
	}
	if _, err := Fields("1234 (x) S 1\n", f[:], 7); err == nil {
		t.Error("2 fields: no error, want fewer than 7")
	}
	if _, err := Fields("no parenthesis", f[:], 1); err == nil {
		t.Error("no ')': no error")
	}
	if a := testing.AllocsPerRun(100, func() { Fields(line, f[:], 10) }); a != 0 {
		t.Errorf("%v allocations per call, want 0", a)
	}
}
