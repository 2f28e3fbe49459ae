package engine

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/rt"
	"github.com/rtload/rtload/scenario"
	"github.com/rtload/rtload/sysinfo"
)

// trialsOf loads yaml and expands it.
func trialsOf(t *testing.T, yaml string) []scenario.Trial {
	t.Helper()
	s, err := scenario.Load("x.yaml", []byte(yaml))
	if err != nil {
		t.Fatal(err)
	}
	trials, err := s.Expand()
	if err != nil {
		t.Fatal(err)
	}
	return trials
}

// A reader at SCHED_FIFO 80, a sender that defaults to SCHED_FIFO 70
// (spin noise shares its CPUs) and a tap endpoint in a private namespace.
const preflightDoc = "endpoints: [{name: socks, count: 1}, {name: t, kind: tap, count: 1}]\n" +
	"traffic: [{endpoint: socks, interval: 20ms}]\nreaders: [{name: rt, endpoints: [socks]}]\nnoise: [{threads: 2}]\n"

// TestPreflightMessages checks the text of every missing privilege, on a
// host and in containers (fixtures of sysinfo.Container), and what
// --allow-degraded leaves.
func TestPreflightMessages(t *testing.T) {
	nobody := machine{memlock: 8 << 20, dmaExists: true}
	docker := nobody
	docker.container = sysinfo.Container{Runtime: "docker", Evidence: []string{"/.dockerenv exists"}}
	k8s := nobody
	k8s.container = sysinfo.Container{Runtime: "kubernetes", CgroupV2: true}
	v2 := docker
	v2.container.CgroupV2 = true
	budget := machine{nice: true, ipcLock: true, sysAdmin: true, netAdmin: true, memlock: unix.RLIM_INFINITY,
		container: sysinfo.Container{Runtime: "docker", Cgroup: "/docker/3f2a", RTRuntimeKnown: true}}
	hostBudget := budget
	hostBudget.container.Runtime = ""
	root := machine{nice: true, ipcLock: true, sysAdmin: true, netAdmin: true, memlock: unix.RLIM_INFINITY, dmaExists: true, dmaWritable: true}
	tests := []struct {
		name          string
		m             machine
		allowDegraded bool
		want, not     []string
	}{
		{"host, unprivileged", nobody, false, []string{
			"6 missing privileges:",
			"sched_setattr(SCHED_FIFO 80) for reader rt: needs CAP_SYS_NICE (or RLIMIT_RTPRIO ≥ priority) (run as root, or --allow-degraded to run at SCHED_OTHER and mark results degraded)",
			"sched_setattr(SCHED_FIFO 70) for sender for socks: needs CAP_SYS_NICE",
			"mlockall(MCL_CURRENT|MCL_FUTURE|MCL_ONFAULT): needs CAP_IPC_LOCK (or an unlimited RLIMIT_MEMLOCK) (run as root,",
			"open /dev/cpu_dma_latency: needs root (the file is 0600) (run as root,",
			"unshare(CLONE_NEWNET) for network.namespace: private: needs CAP_SYS_ADMIN",
			"TUNSETIFF for tap endpoints: needs CAP_NET_ADMIN"},
			[]string{"container"}},
		{"docker, unprivileged", docker, false, []string{
			"for reader rt: needs CAP_SYS_NICE (or RLIMIT_RTPRIO ≥ priority); in this container (docker): start it with --cap-add SYS_NICE, or --ulimit rtprio=99 (SCHED_FIFO/RR up to 99 without the capability) (or --allow-degraded to run at SCHED_OTHER",
			"mlockall(MCL_CURRENT|MCL_FUTURE|MCL_ONFAULT): needs CAP_IPC_LOCK (or an unlimited RLIMIT_MEMLOCK); in this container (docker): start it with --ulimit memlock=-1 (or --cap-add IPC_LOCK) (or --allow-degraded",
			"open /dev/cpu_dma_latency: needs root (the file is 0600); in this container (docker): start it with --device /dev/cpu_dma_latency, and rtload as root in it",
			"needs CAP_SYS_ADMIN (run as root; --allow-degraded cannot replace a private namespace); in this container (docker): start it with --cap-add SYS_ADMIN (or --privileged)",
			"needs CAP_NET_ADMIN (run as root; --allow-degraded cannot replace tap devices); in this container (docker): start it with --cap-add NET_ADMIN --device /dev/net/tun"},
			[]string{"(run as root, or --allow-degraded"}},
		{"docker, degraded: what cannot be replaced", docker, true, []string{
			"2 missing privileges:", "--cap-add SYS_ADMIN", "--cap-add NET_ADMIN --device /dev/net/tun"},
			[]string{"SYS_NICE", "memlock"}},
		{"kubernetes", k8s, false, []string{
			"in this Kubernetes pod: securityContext.capabilities.add: [SYS_NICE] (RLIMIT_RTPRIO comes from the container runtime's defaults, not the pod spec); cgroup v2 has no RT budget per cgroup: a kernel with CONFIG_RT_GROUP_SCHED=y allows SCHED_FIFO only in the root cgroup",
			"in this Kubernetes pod: securityContext.capabilities.add: [IPC_LOCK]",
			"in this Kubernetes pod: securityContext.privileged: true"}, nil},
		{"docker on cgroup v2", v2, false, []string{"--cap-add SYS_NICE", "cgroup v2 has no RT budget per cgroup"}, nil},
		{"cgroup v1 RT budget 0, capabilities present", budget, false, []string{
			"2 missing privileges:",
			"sched_setattr(SCHED_FIFO 80) for reader rt: needs an RT runtime budget in cgroup /docker/3f2a (its cpu.rt_runtime_us is 0: the kernel refuses SCHED_FIFO/RR there with EPERM, even to root); in this container (docker): start it with --cpu-rt-runtime=950000 (dockerd needs --cpu-rt-runtime too, and every parent cgroup a budget)",
			"for sender for socks: needs an RT runtime budget"}, nil},
		{"host cgroup without a budget", hostBudget, false, []string{
			"give it one (echo 950000 > /sys/fs/cgroup/cpu/docker/3f2a/cpu.rt_runtime_us, its parents first), or run rtload in the root cgroup"}, nil},
		{"RLIMIT_RTPRIO high enough", machine{rtprio: 99, ipcLock: true, sysAdmin: true, netAdmin: true, memlock: unix.RLIM_INFINITY}, false, nil, nil},
		{"root", root, false, nil, nil},
	}
	trials := trialsOf(t, preflightDoc)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := preflight(trials, tt.allowDegraded, tt.m)
			if len(tt.want) == 0 {
				if err != nil {
					t.Fatalf("preflight: %v", err)
				}
				return
			}
			if err == nil || !errors.Is(err, rt.ErrNoPrivilege) {
				t.Fatalf("preflight = %v, want a missing privilege", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("message lacks %q:\n%v", w, err)
				}
			}
			for _, n := range tt.not {
				if strings.Contains(err.Error(), n) {
					t.Errorf("message holds %q:\n%v", n, err)
				}
			}
		})
	}
}

// fixtureFacts is a machine: kernel 6.1 with init_on_alloc on by config,
// hardened usercopy built in, no tun, no PMU, two CPUs allowed.
func fixtureFacts() *sysinfo.Facts {
	return &sysinfo.Facts{
		Kernel:  "6.1.0-18-amd64",
		Cmdline: "BOOT_IMAGE=/vmlinuz root=/dev/sda1 quiet init_on_free=1 mitigations=off",
		KernelConfig: map[string]string{"CONFIG_HARDENED_USERCOPY": "y", "CONFIG_INIT_ON_ALLOC_DEFAULT_ON": "y",
			"CONFIG_INIT_ON_FREE_DEFAULT_ON": "n", "CONFIG_HZ": "250"},
		KernelConfigSource: "/boot/config-6.1.0-18-amd64",
		AllowedCPUs:        []int{0, 1},
		Counters:           []sysinfo.Counter{{Name: "perf cycles", Note: "perf_event_open: no such file or directory (ENOENT): not supported by this CPU/VM"}},
	}
}

// TestPreflightRequirements checks requirements against fixture facts:
// every unmet one listed, with what the machine has and how to meet it.
func TestPreflightRequirements(t *testing.T) {
	tests := []struct {
		name string
		req  string   // the requires: block, flow style
		want []string // the Requirement of each unmet one, in order
		text []string // substrings of the error
	}{
		{"all met", "{config: [CONFIG_HARDENED_USERCOPY=y, CONFIG_INIT_ON_FREE_DEFAULT_ON=n, CONFIG_DEBUG_NOPE=n, CONFIG_HZ=250], " +
			"cmdline: [init_on_alloc=1, init_on_free=on, hardened_usercopy=1, mitigations=off, quiet], kernel: '>= 5.10, < 6.2', cpus: 2}", nil, nil},
		{"a config option this kernel lacks", "{config: [CONFIG_INIT_ON_FREE_DEFAULT_ON=y, CONFIG_KASAN=y, CONFIG_HZ=1000]}",
			[]string{"CONFIG_INIT_ON_FREE_DEFAULT_ON=y", "CONFIG_KASAN=y", "CONFIG_HZ=1000"},
			[]string{"does not meet 3 requirements (--allow-degraded runs anyway and marks the results):",
				"CONFIG_INIT_ON_FREE_DEFAULT_ON=y: CONFIG_INIT_ON_FREE_DEFAULT_ON is not set in this kernel (/boot/config-6.1.0-18-amd64); to meet it: boot a kernel built with CONFIG_INIT_ON_FREE_DEFAULT_ON=y (scripts/config --enable INIT_ON_FREE_DEFAULT_ON, then make olddefconfig); if the behaviour is what matters, init_on_free=1 on the command line sets it at boot: require that instead",
				"CONFIG_KASAN=y: CONFIG_KASAN is absent from /boot/config-6.1.0-18-amd64 (no such option, or its dependencies are off): counts as not set",
				"CONFIG_HZ=1000: this kernel has CONFIG_HZ=250 (/boot/config-6.1.0-18-amd64); to meet it: boot a kernel built with CONFIG_HZ=1000 (scripts/config --set-val HZ \"1000\""}},
		// The seed 001 pair: init_on_alloc is on by its config default.
		{"init_on_alloc off wanted, on by default", "{cmdline: [init_on_alloc=0, init_on_free=0]}", []string{"init_on_alloc=0", "init_on_free=0"},
			[]string{"init_on_alloc=0: this boot has init_on_alloc on (not on the command line, so the default, CONFIG_INIT_ON_ALLOC_DEFAULT_ON (y): on); to meet it: boot with init_on_alloc=0 on the kernel command line (GRUB_CMDLINE_LINUX in /etc/default/grub",
				"init_on_free=0: this boot has init_on_free on (init_on_free=1 on the command line)"}},
		{"text parameters", "{cmdline: [mitigations=auto, nosmt, isolcpus=1]}", []string{"mitigations=auto", "nosmt", "isolcpus=1"},
			[]string{"mitigations=auto: this boot has mitigations=off (/proc/cmdline); to meet it: boot with mitigations=auto instead",
				"nosmt: nosmt is not on the command line (/proc/cmdline)"}},
		// A kernel from before CONFIG_HARDENED_USERCOPY_DEFAULT_ON: on.
		{"usercopy on by default", "{cmdline: [hardened_usercopy=off]}", []string{"hardened_usercopy=off"},
			[]string{"hardened_usercopy=off: this boot has hardened_usercopy on (not on the command line, so the default, CONFIG_HARDENED_USERCOPY_DEFAULT_ON (absent): on)"}},
		{"kernel too old", "{kernel: '>= 6.6'}", []string{"kernel >= 6.6"},
			[]string{"kernel >= 6.6: this kernel is 6.1.0-18-amd64; to meet it: boot a kernel >= 6.6"}},
		{"features and cpus", "{features: [tun, cycles, counters], cpus: 4}", []string{"feature tun", "feature cycles", "feature counters", "cpus 4"},
			[]string{"feature tun: /dev/net/tun is missing; to meet it: load the tun driver (CONFIG_TUN; modprobe tun); in a container: --device /dev/net/tun",
				"feature cycles: hardware counters do not work here: perf_event_open: no such file or directory (ENOENT): not supported by this CPU/VM; to meet it: a PMU",
				"user-space rdpmc",
				"cpus 4: this process may use 2 CPU(s) (0-1); to meet it: a machine with more CPUs"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, err := scenario.Load("x.yaml", []byte("requires: "+tt.req+"\nreaders: [{}]\n"))
			if err != nil {
				t.Fatal(err)
			}
			unmet := Requirements(s.Requires, fixtureFacts())
			var got []string
			for _, u := range unmet {
				got = append(got, u.Requirement)
				if u.Have == "" || u.Fix == "" {
					t.Errorf("%+v: no have or no fix", u)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Fatalf("unmet (-want +got):\n%s", diff)
			}
			if len(unmet) == 0 {
				return
			}
			err = &RequirementsError{Scenario: "x.yaml", Unmet: unmet}
			if !errors.Is(err, rt.ErrNotSupported) {
				t.Errorf("not ErrNotSupported (exit 3)")
			}
			for _, w := range tt.text {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error lacks %q:\n%v", w, err)
				}
			}
		})
	}
	// Usercopy checks that are not built in cannot be turned on.
	f := fixtureFacts()
	f.KernelConfig["CONFIG_HARDENED_USERCOPY"] = "n"
	s, _ := scenario.Load("x.yaml", []byte("requires: {cmdline: [hardened_usercopy=on]}\nreaders: [{}]\n"))
	if u := Requirements(s.Requires, f); len(u) != 1 || !strings.Contains(u[0].Fix, "boot a kernel built with CONFIG_HARDENED_USERCOPY=y") {
		t.Errorf("usercopy not built: %+v", u)
	}
	// An unreadable config: every config requirement unmet, saying why.
	f.KernelConfig, f.KernelConfigSource = nil, "not readable: /proc/config.gz: no such file or directory"
	s, _ = scenario.Load("x.yaml", []byte("requires: {config: [CONFIG_HZ=250], cmdline: [init_on_alloc=0]}\nreaders: [{}]\n"))
	if u := Requirements(s.Requires, f); len(u) != 2 || !strings.Contains(u[0].Have, "not readable") || !strings.Contains(u[1].Have, "cannot tell") {
		t.Errorf("config unreadable: %+v", u)
	}
}

// TestPreflightRequirementsThisMachine checks requirements against this
// machine's own facts: an option no kernel has is refused by name, and
// what this machine has is met.
func TestPreflightRequirementsThisMachine(t *testing.T) {
	f := sysinfo.Gather()
	const missing = "CONFIG_RTLOAD_NO_SUCH_OPTION"
	f.ReadKernelConfig([]string{missing})
	req := "requires:\n  config: [" + missing + "=y]\n  kernel: '>= 2.6'\n"
	if f.KernelConfig != nil {
		req += "  config: [" + missing + "=y, CONFIG_HZ=" + f.KernelConfig["CONFIG_HZ"] + "]\n"
		req = strings.Replace(req, "  config: ["+missing+"=y]\n", "", 1)
	}
	s, err := scenario.Load("x.yaml", []byte(req+"readers: [{}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	unmet := Requirements(s.Requires, &f)
	if len(unmet) != 1 || unmet[0].Requirement != missing+"=y" {
		t.Fatalf("unmet %+v, want only %s", unmet, missing)
	}
	t.Logf("%s", unmet[0])
	err = &RequirementsError{Scenario: "x.yaml", Unmet: unmet}
	if !strings.Contains(err.Error(), missing) {
		t.Errorf("error does not name %s: %v", missing, err)
	}
}
