package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/rtload/rtload/results"
)

const procInterrupts = `           CPU0       CPU1       
 24:          1          0  IO-APIC   5-edge      ACPI:Ged
 26:          0         17  IO-APIC   4-edge      ttyS0
NMI:          0          3   Non-maskable interrupts
LOC:      81234      90210   Local timer interrupts
MIS:          0
`

const procSoftirqs = `                    CPU0       CPU1       
          HI:          0          0
       TIMER:      63983      82139
      NET_RX:    9735083    8301602
`

func TestParseProcIRQs(t *testing.T) {
	m := cpuIRQs{}
	parseProcIRQs(procInterrupts, 1, "irq:", m)
	parseProcIRQs(procSoftirqs, 1, "softirq:", m)
	want := cpuIRQs{"irq:24 ACPI:Ged": 0, "irq:26 ttyS0": 17, "irq:NMI": 3, "irq:LOC": 90210,
		"softirq:HI": 0, "softirq:TIMER": 82139, "softirq:NET_RX": 8301602}
	if diff := cmp.Diff(want, m); diff != "" {
		t.Errorf("CPU1 (-want +got):\n%s", diff)
	}
	// CPU0 has the short MIS row too; a CPU that is not there reads nothing.
	m0 := cpuIRQs{}
	parseProcIRQs(procInterrupts, 0, "irq:", m0)
	if m0["irq:MIS"] != 0 || m0["irq:LOC"] != 81234 || len(m0) != 5 {
		t.Errorf("CPU0 = %v", m0)
	}
	none := cpuIRQs{}
	parseProcIRQs(procInterrupts, 7, "irq:", none)
	if len(none) != 0 {
		t.Errorf("CPU7 = %v; want nothing", none)
	}
	prev := cpuIRQs{"irq:LOC": 90000, "softirq:TIMER": 82000, "softirq:NET_RX": 8301602, "irq:26 ttyS0": 17}
	d, irqs, soft := m.delta(prev)
	if wantD := []results.Counter{{Name: "irq:LOC", Value: 210}, {Name: "softirq:TIMER", Value: 139}, {Name: "irq:NMI", Value: 3}}; !cmp.Equal(d, wantD) || irqs != 213 || soft != 139 {
		t.Errorf("delta = %v, %d irqs, %d softirqs; want %v, 213, 139", d, irqs, soft, wantD)
	}
}

func TestReadCPUIRQs(t *testing.T) {
	m, err := readCPUIRQs(0)
	if err != nil {
		t.Skip(err)
	}
	if m["irq:LOC"] == 0 && m["softirq:TIMER"] == 0 {
		t.Errorf("CPU0 has neither local timer interrupts nor timer softirqs: %v", m)
	}
}
