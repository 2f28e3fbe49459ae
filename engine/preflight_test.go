package engine

import (
	"errors"
	"strings"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"
	"golang.org/x/sys/unix"

	"github.com/rtload/rtload/results"
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
	nobody := machine{memlock: 8 << 20, euid: 1000, dmaErr: unix.EACCES}
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
	root := machine{nice: true, ipcLock: true, sysAdmin: true, netAdmin: true, memlock: unix.RLIM_INFINITY}
	dmaCgroup := root
	dmaCgroup.dmaErr, dmaCgroup.container = unix.EPERM, sysinfo.Container{Runtime: "podman"}
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
			"unshare(CLONE_NEWNET) for network.namespace: private: needs CAP_SYS_ADMIN (--allow-degraded cannot replace a private namespace); run as root",
			"TUNSETIFF for tap endpoints: needs CAP_NET_ADMIN (--allow-degraded cannot replace tap devices); run as root"},
			[]string{"container"}},
		{"docker, unprivileged", docker, false, []string{
			"for reader rt: needs CAP_SYS_NICE (or RLIMIT_RTPRIO ≥ priority); in this container (docker): start it with --cap-add SYS_NICE, or --ulimit rtprio=99 (SCHED_FIFO/RR up to 99 without the capability) (or --allow-degraded to run at SCHED_OTHER",
			"mlockall(MCL_CURRENT|MCL_FUTURE|MCL_ONFAULT): needs CAP_IPC_LOCK (or an unlimited RLIMIT_MEMLOCK); in this container (docker): start it with --cap-add IPC_LOCK (or --ulimit memlock=-1, which the runtime can set only within its own hard limit or with CAP_SYS_RESOURCE) (or --allow-degraded",
			"open /dev/cpu_dma_latency: needs root (the file is 0600); in this container (docker): start it with --device /dev/cpu_dma_latency, and rtload as root in it",
			"needs CAP_SYS_ADMIN (--allow-degraded cannot replace a private namespace); in this container (docker): start it with --cap-add SYS_ADMIN (or --privileged)",
			"needs CAP_NET_ADMIN (--allow-degraded cannot replace tap devices); in this container (docker): start it with --cap-add NET_ADMIN --device /dev/net/tun"},
			[]string{"(run as root, or --allow-degraded"}},
		{"docker, degraded: what cannot be replaced", docker, true, []string{
			"2 missing privileges:", "--cap-add SYS_ADMIN", "--cap-add NET_ADMIN --device /dev/net/tun"},
			[]string{"SYS_NICE", "memlock"}},
		{"kubernetes", k8s, false, []string{
			"in this Kubernetes pod: securityContext.capabilities.add: [SYS_NICE] (RLIMIT_RTPRIO comes from the container runtime's defaults, not the pod spec); cgroup v2 has no RT budget per cgroup: a kernel with CONFIG_RT_GROUP_SCHED=y allows SCHED_FIFO only in the root cgroup",
			"in this Kubernetes pod: securityContext.capabilities.add: [IPC_LOCK]",
			"in this Kubernetes pod: securityContext.privileged: true"}, nil},
		{"docker on cgroup v2", v2, false, []string{"--cap-add SYS_NICE", "cgroup v2 has no RT budget per cgroup"}, nil},
		// One problem (the cgroup's), naming every thread it refuses.
		{"cgroup v1 RT budget 0, capabilities present", budget, false, []string{
			"missing privilege: sched_setattr(SCHED_FIFO/SCHED_RR) for reader rt, sender for socks: needs an RT runtime budget in cgroup /docker/3f2a (its cpu.rt_runtime_us is 0: the kernel refuses SCHED_FIFO/RR there with EPERM, even to root); in this container (docker): start it with --cpu-rt-runtime=950000 (dockerd needs --cpu-rt-runtime too)"}, nil},
		{"host cgroup without a budget", hostBudget, false, []string{
			"give it one (echo 950000 > /sys/fs/cgroup/cpu/docker/3f2a/cpu.rt_runtime_us, its parents first), or run rtload in the root cgroup"}, nil},
		{"device cgroup refuses /dev/cpu_dma_latency to root", dmaCgroup, false, []string{
			"open /dev/cpu_dma_latency: needs the device allowed (root was refused it: a device cgroup); in this container (podman): start it with --device /dev/cpu_dma_latency (or --allow-degraded"}, nil},
		{"RLIMIT_RTPRIO high enough", machine{rtprio: 99, ipcLock: true, sysAdmin: true, netAdmin: true, memlock: unix.RLIM_INFINITY}, false, nil, nil},
		{"root", root, false, nil, nil},
	}
	trials := trialsOf(t, preflightDoc)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkPreflight(t, trials, tt.allowDegraded, tt.m, tt.want, tt.not)
		})
	}
}

// checkPreflight runs preflight on m and checks that its error holds every
// want and no not (want nil: no error).
func checkPreflight(t *testing.T, trials []scenario.Trial, allowDegraded bool, m machine, want, not []string) {
	t.Helper()
	err := preflight(trials, allowDegraded, m)
	if len(want) == 0 {
		if err != nil {
			t.Fatalf("preflight: %v", err)
		}
		return
	}
	if err == nil || !errors.Is(err, rt.ErrNoPrivilege) {
		t.Fatalf("preflight = %v, want a missing privilege", err)
	}
	for _, w := range want {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("message lacks %q:\n%v", w, err)
		}
	}
	for _, n := range not {
		if strings.Contains(err.Error(), n) {
			t.Errorf("message holds %q:\n%v", n, err)
		}
	}
}

// podmanFiles is what rtload reads in a container podman 4.3 started on
// this project's machine (cgroupfs on cgroup v1, cpu and cpuacct mounted
// apart; runc): its cgroup, and mounts where the cpu hierarchy starts at
// the container's cgroup and /proc/sys is read-only (not --privileged).
func podmanFiles() fstest.MapFS {
	const cg = "/libpod_parent/libpod-5eb0"
	return fstest.MapFS{
		"run/.containerenv": {Data: []byte("")},
		"proc/self/cgroup":  {Data: []byte("2:cpuacct:" + cg + "\n1:cpu:" + cg + "\n0::" + cg + "\n")},
		"proc/self/mountinfo": {Data: []byte(
			"77 50 0:40 / / rw,nodev,relatime - overlay overlay rw,lowerdir=/var/lib/containers/storage/overlay/l/X\n" +
				"78 77 0:43 / /proc rw,nosuid,nodev,noexec,relatime - proc proc rw\n" +
				"88 80 0:47 / /sys/fs/cgroup rw,nosuid,nodev,noexec,relatime - tmpfs tmpfs rw,mode=755\n" +
				"89 88 0:29 " + cg + " /sys/fs/cgroup/cpu rw,nosuid,nodev,noexec,relatime - cgroup cgroup rw,cpu\n" +
				"90 88 0:30 " + cg + " /sys/fs/cgroup/cpuacct rw,nosuid,nodev,noexec,relatime - cgroup cgroup rw,cpuacct\n" +
				"60 78 0:43 /sys /proc/sys ro,nosuid,nodev,noexec,relatime - proc proc rw\n" +
				"98 77 254:0 /tmp/res /results rw,relatime - ext4 /dev/vda rw\n")},
		"sys/fs/cgroup/cpu/cpu.rt_runtime_us": {Data: []byte("0\n")},
	}
}

// TestPreflightContainer checks, over fake /proc and /sys/fs/cgroup trees,
// that every container problem rtload can see is found before the first
// trial, all at once, each with the setting that fixes it: the RT budget
// of the cgroup and of each parent (by the file to write), memlock,
// /dev/cpu_dma_latency, /dev/net/tun, the namespace's bind mount and
// /proc/sys.
func TestPreflightContainer(t *testing.T) {
	podman := func(f func(*machine, fstest.MapFS)) machine {
		fsys := podmanFiles()
		m := machine{memlock: 8 << 20, dmaErr: unix.ENOENT, tunErr: unix.ENOENT}
		if f != nil {
			f(&m, fsys)
		}
		files := machineFiles(fsys)
		m.mounts, m.apparmor, m.container = files.mounts, files.apparmor, files.container
		return m
	}
	allCaps := func(m *machine, _ fstest.MapFS) {
		m.nice, m.ipcLock, m.sysAdmin, m.netAdmin = true, true, true, true
	}
	const budgetParents = "the runtime can give it only what its parents have, and they are not visible from here: on the host, cat /sys/fs/cgroup/cpu/libpod_parent/cpu.rt_runtime_us; if one holds 0, echo 950000 > it first (parents first), else the runtime fails with \"write …/cpu.rt_runtime_us: invalid argument\""
	tests := []struct {
		name          string
		m             machine
		allowDegraded bool
		want, not     []string
	}{
		// Not one layer at a time: every flag a bare `podman run` lacks.
		{"podman, unprivileged: everything at once", podman(nil), false, []string{
			"9 missing privileges:",
			"sched_setattr(SCHED_FIFO 80) for reader rt: needs CAP_SYS_NICE (or RLIMIT_RTPRIO ≥ priority); in this container (podman): start it with --cap-add SYS_NICE",
			"sched_setattr(SCHED_FIFO 70) for sender for socks: needs CAP_SYS_NICE",
			"sched_setattr(SCHED_FIFO/SCHED_RR) for reader rt, sender for socks: needs an RT runtime budget in cgroup /libpod_parent/libpod-5eb0 (its cpu.rt_runtime_us is 0: the kernel refuses SCHED_FIFO/RR there with EPERM, even to root); in this container (podman): start it with --cpu-rt-runtime=950000; " + budgetParents,
			"mlockall(MCL_CURRENT|MCL_FUTURE|MCL_ONFAULT): needs CAP_IPC_LOCK (or an unlimited RLIMIT_MEMLOCK); in this container (podman): start it with --cap-add IPC_LOCK",
			"open /dev/cpu_dma_latency: needs the device /dev/cpu_dma_latency (it does not exist here); in this container (podman): start it with --device /dev/cpu_dma_latency, or set cpu_dma_latency: -1 (--set cpu_dma_latency=-1) to run without it (or --allow-degraded",
			"unshare(CLONE_NEWNET) for network.namespace: private: needs CAP_SYS_ADMIN (--allow-degraded cannot replace a private namespace); in this container (podman): start it with --cap-add SYS_ADMIN (or --privileged)",
			"TUNSETIFF for tap endpoints: needs CAP_NET_ADMIN",
			"open /dev/net/tun for tap endpoints: needs the device /dev/net/tun (it does not exist here; --allow-degraded cannot replace tap devices); in this container (podman): start it with --device /dev/net/tun",
			"write /proc/sys/net/ipv4/conf/<tap>/rp_filter for tap endpoints: needs a writable /proc/sys (/proc/sys is a read-only mount; --allow-degraded cannot replace tap devices); in this container (podman): start it with --security-opt unmask=/proc/sys (or --privileged)"},
			[]string{"run as root"}},
		{"podman, unprivileged, --allow-degraded: what cannot be replaced", podman(nil), true, []string{
			"4 missing privileges:", "--cap-add SYS_ADMIN", "--cap-add NET_ADMIN", "--device /dev/net/tun", "--security-opt unmask=/proc/sys"},
			[]string{"SYS_NICE", "IPC_LOCK", "cpu_dma_latency", "rt_runtime_us"}},
		// The capabilities named, the budget given: what is still missing
		// for a tap scenario without --privileged.
		{"podman with the capabilities: devices and /proc/sys", podman(func(m *machine, fsys fstest.MapFS) {
			allCaps(m, fsys)
			fsys["sys/fs/cgroup/cpu/cpu.rt_runtime_us"] = &fstest.MapFile{Data: []byte("950000\n")}
		}), false, []string{"3 missing privileges:", "--device /dev/cpu_dma_latency", "--device /dev/net/tun", "--security-opt unmask=/proc/sys"},
			[]string{"CAP_", "rt_runtime_us"}},
		{"podman --privileged with --cpu-rt-runtime", podman(func(m *machine, fsys fstest.MapFS) {
			allCaps(m, fsys)
			m.dmaErr, m.tunErr = nil, nil
			fsys["sys/fs/cgroup/cpu/cpu.rt_runtime_us"] = &fstest.MapFile{Data: []byte("950000\n")}
			fsys["proc/self/mountinfo"] = &fstest.MapFile{Data: []byte(strings.Replace(string(fsys["proc/self/mountinfo"].Data),
				"60 78 0:43 /sys /proc/sys ro,", "60 78 0:43 /sys /proc/sys rw,", 1))}
		}), false, nil, nil},
		// docker --read-only: / and so /run read-only, and docker's
		// AppArmor profile, which denies mount(2) even with CAP_SYS_ADMIN.
		{"docker --read-only under docker-default", podman(func(m *machine, fsys fstest.MapFS) {
			allCaps(m, fsys)
			m.dmaErr, m.tunErr = nil, nil
			delete(fsys, "run/.containerenv")
			fsys[".dockerenv"] = &fstest.MapFile{}
			fsys["proc/self/attr/current"] = &fstest.MapFile{Data: []byte("docker-default (enforce)\n")}
			fsys["sys/fs/cgroup/cpu/cpu.rt_runtime_us"] = &fstest.MapFile{Data: []byte("950000\n")}
			fsys["proc/self/mountinfo"] = &fstest.MapFile{Data: []byte(strings.Replace(string(fsys["proc/self/mountinfo"].Data),
				"77 50 0:40 / / rw,", "77 50 0:40 / / ro,", 1))}
		}), false, []string{
			"3 missing privileges:",
			"mount --bind /proc/thread-self/ns/net /run/netns/<name> for network.namespace: private: needs a writable /run/netns (it is on the read-only mount /); in this container (docker): start it with --tmpfs /run (a --read-only container's /run is read-only)",
			"mount --bind /proc/thread-self/ns/net /run/netns/<name> for network.namespace: private: needs mount(2), which this process's AppArmor profile docker-default denies; in this container (docker): start it with --security-opt apparmor=unconfined (or --privileged)",
			"in this container (docker): start it with --security-opt systempaths=unconfined (or --privileged)"}, nil},
		{"an unconfined or complain-mode profile denies nothing", podman(func(m *machine, fsys fstest.MapFS) {
			allCaps(m, fsys)
			m.dmaErr, m.tunErr = nil, nil
			fsys["proc/self/attr/apparmor/current"] = &fstest.MapFile{Data: []byte("containers-default-0.50.1 (complain)\n")}
			fsys["sys/fs/cgroup/cpu/cpu.rt_runtime_us"] = &fstest.MapFile{Data: []byte("950000\n")}
		}), false, []string{"missing privilege: write /proc/sys/net"}, []string{"AppArmor"}},
		// rtload on a host, in a nested cgroup whose parent has no
		// budget: the parent is named, with the files to write in order.
		{"host: a nested cgroup under a parent of 0", func() machine {
			m := machineFiles(fstest.MapFS{
				"proc/self/cgroup":                             {Data: []byte("1:cpu:/lab/run1\n")},
				"proc/self/mountinfo":                          {Data: []byte("30 25 0:29 / /sys/fs/cgroup/cpu rw,relatime shared:10 - cgroup cgroup rw,cpu\n")},
				"sys/fs/cgroup/cpu/cpu.rt_runtime_us":          {Data: []byte("950000\n")},
				"sys/fs/cgroup/cpu/lab/cpu.rt_runtime_us":      {Data: []byte("0\n")},
				"sys/fs/cgroup/cpu/lab/run1/cpu.rt_runtime_us": {Data: []byte("0\n")},
			})
			m.nice, m.ipcLock, m.sysAdmin, m.netAdmin, m.memlock = true, true, true, true, unix.RLIM_INFINITY
			return m
		}(), false, []string{
			"needs an RT runtime budget in cgroup /lab/run1 (its cpu.rt_runtime_us is 0: the kernel refuses SCHED_FIFO/RR there with EPERM, even to root); give it one, parents first: echo 950000 > /sys/fs/cgroup/cpu/lab/cpu.rt_runtime_us; echo 950000 > /sys/fs/cgroup/cpu/lab/run1/cpu.rt_runtime_us; or run rtload in the root cgroup"}, nil},
		// A container that sees its parents (the hierarchy mounted whole)
		// names the one at 0.
		{"podman seeing libpod_parent at 0", podman(func(m *machine, fsys fstest.MapFS) {
			allCaps(m, fsys)
			m.dmaErr, m.tunErr = nil, nil
			fsys["proc/self/mountinfo"] = &fstest.MapFile{Data: []byte("89 88 0:29 / /sys/fs/cgroup/cpu rw - cgroup cgroup rw,cpu\n")}
			delete(fsys, "sys/fs/cgroup/cpu/cpu.rt_runtime_us")
			fsys["sys/fs/cgroup/cpu/cpu.rt_runtime_us"] = &fstest.MapFile{Data: []byte("950000\n")}
			fsys["sys/fs/cgroup/cpu/libpod_parent/cpu.rt_runtime_us"] = &fstest.MapFile{Data: []byte("0\n")}
			fsys["sys/fs/cgroup/cpu/libpod_parent/libpod-5eb0/cpu.rt_runtime_us"] = &fstest.MapFile{Data: []byte("0\n")}
		}), false, []string{
			"in this container (podman): start it with --cpu-rt-runtime=950000; its parent /libpod_parent has 0 too, so first give the parents theirs: echo 950000 > /sys/fs/cgroup/cpu/libpod_parent/cpu.rt_runtime_us"}, nil},
	}
	trials := trialsOf(t, preflightDoc)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkPreflight(t, trials, tt.allowDegraded, tt.m, tt.want, tt.not)
		})
	}
}

// fixtureFacts is a machine: kernel 6.1 with init_on_alloc on by config,
// hardened usercopy built in, no tun, no PMU, two CPUs allowed.
func fixtureFacts() *sysinfo.Facts {
	return &sysinfo.Facts{Env: results.Env{
		Kernel:  "6.1.0-18-amd64",
		Cmdline: "BOOT_IMAGE=/vmlinuz root=/dev/sda1 quiet init_on_free=1 mitigations=off",
		KernelConfig: map[string]string{"CONFIG_HARDENED_USERCOPY": "y", "CONFIG_INIT_ON_ALLOC_DEFAULT_ON": "y",
			"CONFIG_INIT_ON_FREE_DEFAULT_ON": "n", "CONFIG_HZ": "250"},
		KernelConfigSource: "/boot/config-6.1.0-18-amd64",
		AllowedCPUs:        []int{0, 1},
		Counters:           []sysinfo.Counter{{Name: "perf cycles", Note: "perf_event_open: no such file or directory (ENOENT): not supported by this CPU/VM"}},
	}}
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
