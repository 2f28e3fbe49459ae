package scenario_test

import (
	"fmt"

	"github.com/rtload/rtload/scenario"
)

func ExampleLoad() {
	data := []byte(`
endpoints:
  - name: socks
    count: 450
traffic:
  - endpoint: socks
    interval: 20ms
readers:
  - endpoints: [socks]
    cpu: 1
variants:
  - name: recvfrom
    set: {"readers[0].method": recvfrom}
  - name: recvmsg
    set: {"readers[0].method": recvmsg}
`)
	s, err := scenario.Load("demo.yaml", data)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Apply([]string{"duration=2s"}); err != nil {
		fmt.Println(err)
		return
	}
	if err := s.Validate(scenario.Host{NumCPU: 2}); err != nil {
		fmt.Println(err)
		return
	}
	trials, err := s.Expand()
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, t := range trials {
		r := t.Spec.Readers[0]
		fmt.Printf("%d %s: %s, %s %s/%d every %s on CPU %d\n", t.Index, t.Variant, t.Spec.Duration, r.Method, r.Policy, r.Priority, r.Period, r.CPU)
	}

	// A mistake is reported at its line, with the allowed values.
	s, _ = scenario.Load("demo.yaml", []byte("readers:\n  - priority: 120\n"))
	fmt.Println(s.Validate(scenario.Host{NumCPU: 2}))
	// Output:
	// 0 recvfrom: 2s, recvfrom fifo/80 every 10ms on CPU 1
	// 1 recvmsg: 2s, recvmsg fifo/80 every 10ms on CPU 1
	// scenario demo.yaml: 1 problem
	// demo.yaml:2:15: readers[0].priority: 120 out of range (allowed: 1–99)
}
